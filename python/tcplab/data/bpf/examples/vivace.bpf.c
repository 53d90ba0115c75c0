// SPDX-License-Identifier: MIT
/*
 * vivace.bpf.c: PCC Vivace (Dong et al., "PCC Vivace: Online-Learning Congestion
 * Control", NSDI 2018) as a BPF struct_ops tcp_congestion_ops: the twin of
 * tcplab's native `vivace` (crates/cc/src/vivace.rs), so that a kernel (which has
 * no Vivace) runs it through Linux's TCP. Written in integer and fixed-point
 * arithmetic (BPF has no floating point), so it is not the port bit for bit.
 *
 * Model. Vivace is rate-based and learns online: it sends at a rate for a monitor
 * interval (MI), observes what that rate earned, u(x) = x^0.9 - 900 x dRTT/dT -
 * 11.35 x L (x the MI's sending rate in 10^6 bit/s, dRTT/dT the RTT's slope over
 * the MI, L its loss rate), and moves the rate by gradient ascent on u. Start-up
 * doubles the rate every MI while u grows and halves it back when u falls.
 * Probing sends two pairs of MIs at r(1 + 0.05) and r(1 - 0.05) and decides only if
 * both pairs agree which is better. Moving then steps the rate by theta * gamma
 * (gamma the utility gradient), theta amplified by ((tau + 1) / 2)^1.2 (tau the
 * steps in one direction, integer halving) and bounded by omega * r, omega = 0.05 +
 * 0.05 k (the dynamic change boundary); when u stops rising the rate steps back
 * once and probing starts again. Rate and cwnd (2 x rate x srtt) are written on
 * every ACK; sending is paced (sk_pacing_rate with SK_PACING_NEEDED).
 *
 * Sources: the paper's utility (u = x^t - b x dRTT/dT - c x L with t = 0.9, b =
 * 900, c = 11.35) and its rate control (probing, the confidence amplifier, the
 * dynamic change boundary), as the native port implements them from
 * PCCproject/PCC-Uspace (pcc_vivace_sender.cpp, pcc_sender.cpp,
 * pcc_utility_manager.cpp); the port's opening comment lists which reference
 * functions it follows. As the port, this file cites no section numbers: the
 * paper's text was not at hand to check them, and every constant is the
 * reference code's, named beside it. This program follows the port function for function:
 * rtt_gradient, utility, maybe_start_mi, stats, account, new_round,
 * on_utility_available, enter_probing_from_start, can_make_decision,
 * set_rate_change_direction, enter_decision_made, enter_probing_from_decision,
 * compute_rate_change, write, and the hooks init, cong_control, cwnd_event,
 * ssthresh, undo_cwnd. Every constant is the port's, with its source beside it.
 * The port's own Deviations from the reference (MIs delimited by sequence numbers,
 * the RTT slope regressed on each sample's send time, the general tolerance rule
 * only, fixed probing order, cwnd 2 x rate x srtt, ...) are this program's too.
 *
 * Fixed point. Rates are integer bit/s (u64), utilities Q16.16 (s64), the RTT slope
 * Q32 (u64). x^0.9 and ((tau + 1) / 2)^1.2 are pow_q16: 2^(e log2 x), with log2 by
 * repeated squaring of the mantissa (one bit per squaring, 30 bits, Q31 mantissa)
 * and 2^f as the product of 2^(2^-i) over the set bits i = 1..30 of f (Q31
 * constants, round(2^(2^-i) 2^31), computed for this file). Error: log2 is within
 * 2^-28 of the true value (30 truncated bits and the squarings' truncation), 2^f
 * within a relative 2^-26 (30 truncated products and rounded constants), so the
 * result is within a relative 1e-7 of x^e before it is rounded to Q16 (+-2^-17):
 * |pow_q16(x) - x^e 2^16| <= 1 + 1e-7 x^e 2^16. The selftest build
 * (-DVIVACE_SELFTEST, crates/bpf/tests/vivace.rs) checks hand-computed values
 * through the simulator's VM: 10^0.9, 20^0.9, 0.5^0.9, 1000^0.9, 1^1.2, 2^1.2,
 * 3^1.2, the port's own slope and utility examples. (A model of these integer
 * steps over 200 000 inputs up to 2^40 found log2 within 2.1e-9 and the powers
 * within half the bound.)
 * The regression's sums are exact integers (u64, their n-weighted products in
 * 128 bits, emulated), so the slope is exact but for the Q16 variances' and Q32
 * quotient's truncation (relative ~1e-9 on the test paths).
 *
 * Deviations from the native port:
 * - Fixed point, as above: rates truncate to whole bit/s where the port keeps f64
 *   (r(1 +- 0.05) is r 21 / 20 and r 19 / 20, the boundary r (1 + k) / 20), the
 *   MI's length to whole us, its measured duration to ns; a rate change is
 *   d_util 2^40 / d_rate (theta_0 = 1 per 2^20 bit/s, per 2^20 bit/s) from Q16
 *   utilities. Two MIs whose utilities are within a few 2^-16 of each other may
 *   compare otherwise than the port's (a near-tie), and the runs part from there.
 * - State: the queue of open MIs, the regression sums of the MI at the front and
 *   the rate controller are in socket-local storage (BPF_MAP_TYPE_SK_STORAGE,
 *   816 bytes; icsk_ca_priv's 104 bytes cannot hold them), created in init. The
 *   port's queue is unbounded; here it is a ring of MI_SLOTS = 16. Each MI lasts
 *   >= 1.5 srtt and closes about an RTT after it ends, so a few are open at once
 *   (max_open, the high-water mark, read 2-6 in simulated runs of 1-2 flows at
 *   2-100 Mbit/s, 40-200 ms, 0-1 % loss); with 16 open the last one would keep
 *   sending at its rate past its deadline until one closed. A socket whose
 *   storage cannot be had (the kernel out of memory) is left as the kernel set it
 *   up: cwnd and pacing untouched.
 * - The port keeps every (send time, RTT) sample of the front MI and regresses
 *   them at its end; here their sums (n, sum x, sum y, sum x^2, sum xy, sum y^2)
 *   are kept instead, x counted from 2^20 us before the MI's first sample and
 *   clamped to [0, 2^23) us, y to 2^23 us, at most 65535 samples per MI (at 20
 *   Mbit/s an MI has a few hundred), so that every sum fits 64 bits. The
 *   residual error is var(y) - cov(x, y) g, which is the port's sum of squared
 *   residuals over n, computed from the sums.
 * - The rate is capped at 2^40 bit/s (1.1 Tbit/s; the port's f64 is not), so
 *   that rate x srtt and the rate change fit 64 bits.
 * - Times are tp->tcp_mstamp (us, u64); sequence numbers are the kernel's u32
 *   bytes (compared with before(), wrapping), so an MI's packets are its bytes /
 *   mss, and L is lost x mss / sent bytes (the port counts segments).
 * - Writes snd_cwnd, sk_pacing_rate and sk_pacing_status only: all three are in
 *   bpf_tcp_ca_btf_struct_access's list (net/ipv4/bpf_tcp_ca.c). The reference's
 *   per-packet send hook (OnPacketSent) has no struct_ops counterpart, which is
 *   why the port, and so this twin, delimit MIs by snd_nxt on ACKs.
 * - Signed divisions are unsigned ones on the magnitude (clang's BPF target before
 *   cpu v4 has no signed division), truncating toward zero.
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

#define BPF_MAP_TYPE_SK_STORAGE 24
#define BPF_F_NO_PREALLOC 1
#define BPF_SK_STORAGE_GET_F_CREATE 1

/* The utility (pcc_utility_manager.cpp, the paper's t, b, c): x^0.9 is pow_q16(x,
 * 9, 10); kLatencyCoefficient 900; kVivaceLossCoefficient 11.35 = 1135 / 100. */
#define RATE_EXP_NUM 9
#define RATE_EXP_DEN 10
#define LATENCY_COEFFICIENT 900
#define LOSS_COEFFICIENT_100 1135
/* kMegabit = 2^20 bits (pcc_vivace_sender.cpp): a rate change is d_util 2^20 2^20 /
 * d_rate bit/s (kUtilityGradientToRateChangeFactor 1); with Q16 utilities the
 * shift is 40 - 16. */
#define MEGABIT_SHIFT2_Q16 24
/* kRateChangeAmplifyExponent 1.2 = 6 / 5. */
#define AMPLIFY_EXP_NUM 6
#define AMPLIFY_EXP_DEN 5
/* kProbingStepSize 0.05: r 21 / 20 and r 19 / 20. */
#define PROBING_UP_NUM 21
#define PROBING_DOWN_NUM 19
#define PROBING_DEN 20
/* kNumIntervalGroupsInProbing 2 (pcc_sender.cpp). */
#define PROBING_PAIRS 2
/* kInitialMaxStepSize 0.05, kIncrementalStepSize 0.05: bound r (1 + k) / 20. */
#define CHANGE_BOUND_DEN 20
/* kMinRateChange, kMinSendingRate: 500 kbit/s each. */
#define MIN_RATE_CHANGE_BPS 500000ULL
#define MIN_RATE_BPS 500000ULL
/* ComputeMonitorDuration: max(1.5 srtt, kMinimumPacketsPerInterval 10 packets). */
#define MI_MIN_PACKETS 10ULL
/* FLAGS_max_rtt_fluctuation_tolerance_ratio_in_starting 0.3: srtt > 1.3 x. */
#define STARTING_RTT_NUM 13
#define STARTING_RTT_DEN 10
/* QUIC's kInitialRttMs 100, us; the initial window, 10 segments per RTT. */
#define INITIAL_RTT_US 100000ULL
#define INITIAL_WINDOW 10ULL
/* cwnd = 2 x rate x srtt (the port's CWND_GAIN, BBR's cwnd_gain); at least 4. */
#define CWND_GAIN 2ULL
#define MIN_CWND 4
/* This program's: see Deviations. */
#define MAX_RATE_BPS (1ULL << 40)
#define MI_SLOTS 16
#define MI_MASK (MI_SLOTS - 1)
#define X_OFFSET_US (1ULL << 20)
#define SAMPLE_MAX (1ULL << 23)
#define MAX_SAMPLES 65535

#define MODE_STARTING 0
#define MODE_PROBING 1
#define MODE_DECISION_MADE 2
#define DIR_INCREASE 0
#define DIR_DECREASE 1

#define U64_MAX_ (~0ULL)

struct vivace_mi {
	__u64 rate; /* bit/s */
	__u64 start_us;
	__u64 end_us; /* the send phase's deadline; when it ended once it has */
	__u32 seq_start;
	__u32 seq_end; /* snd_nxt when the send phase ended (once ended) */
	__u32 rtt_on_start_us;
	__u8 useful;
	__u8 ended;
};

/* UtilityInfo: an MI's rate (bit/s) and the utility it earned (Q16). */
struct vivace_utility {
	__u64 rate;
	__s64 utility;
};

struct vivace {
	struct vivace_mi mi[MI_SLOTS];
	struct vivace_utility results[2 * PROBING_PAIRS];
	struct vivace_utility latest;
	/* The front MI's fates: packets newly lost and the RTT regression's sums. */
	__u64 lost;
	__u64 x_base;
	__u64 sx, sy, sxx, sxy, syy;
	__u32 n;
	__u64 rate; /* sending_rate_, the central rate, bit/s */
	__s64 last_utility;
	__u32 rounds;
	__u32 allowance;
	__u8 head;
	__u8 count;
	__u8 mode;
	__u8 direction;
	__u8 useful_started;
	__u8 nresults;
	__u8 max_open; /* the most MIs open at once (a diagnostic: bpf_maps.json) */
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct vivace);
} vivace_state SEC(".maps");

/* ---- 128-bit helpers (BPF has no 128-bit multiply) ---- */

/* (hi, lo) = a * b. */
static __always_inline void mul128(__u64 a, __u64 b, __u64 *hi, __u64 *lo)
{
	__u64 a0 = a & 0xffffffffULL, a1 = a >> 32;
	__u64 b0 = b & 0xffffffffULL, b1 = b >> 32;
	__u64 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	__u64 mid = (p00 >> 32) + (p01 & 0xffffffffULL) + (p10 & 0xffffffffULL);

	*lo = (mid << 32) | (p00 & 0xffffffffULL);
	*hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* The number of leading zero bits of x > 0. */
static __always_inline __u32 nlz64(__u64 x)
{
	__u32 n = 0;

	if (!(x >> 32)) {
		x <<= 32;
		n += 32;
	}
	if (!(x >> 48)) {
		x <<= 16;
		n += 16;
	}
	if (!(x >> 56)) {
		x <<= 8;
		n += 8;
	}
	if (!(x >> 60)) {
		x <<= 4;
		n += 4;
	}
	if (!(x >> 62)) {
		x <<= 2;
		n += 2;
	}
	if (!(x >> 63))
		n += 1;
	return n;
}

/* floor((hi 2^64 + lo) / d): U64_MAX when the quotient does not fit 64 bits, 0
 * for d = 0. Schoolbook division in two 32-bit digits on the normalised divisor
 * (Knuth, TAOCP vol. 2, 4.3.1, algorithm D for a two-digit quotient; each digit's
 * estimate is at most 2 too large, corrected twice at most). A global function:
 * the verifier checks it once, not at every call. */
__noinline __u64 div128(__u64 hi, __u64 lo, __u64 d)
{
	const __u64 b = 1ULL << 32;
	__u64 dn1, dn0, n32, n10, n1, n0, q1, q0, rhat, n21;
	__u32 s;

	if (!d)
		return 0;
	if (hi >= d)
		return U64_MAX_;
	s = nlz64(d);
	d <<= s;
	dn1 = d >> 32;
	dn0 = d & 0xffffffffULL;
	n32 = s ? (hi << s) | (lo >> (64 - s)) : hi;
	n10 = lo << s;
	n1 = n10 >> 32;
	n0 = n10 & 0xffffffffULL;
	q1 = n32 / dn1;
	rhat = n32 - q1 * dn1;
	if (q1 >= b || q1 * dn0 > ((rhat << 32) | n1)) {
		q1--;
		rhat += dn1;
		if (rhat < b && (q1 >= b || q1 * dn0 > ((rhat << 32) | n1))) {
			q1--;
			rhat += dn1;
		}
	}
	n21 = ((n32 << 32) | n1) - q1 * d;
	q0 = n21 / dn1;
	rhat = n21 - q0 * dn1;
	if (q0 >= b || q0 * dn0 > ((rhat << 32) | n0)) {
		q0--;
		rhat += dn1;
		if (rhat < b && (q0 >= b || q0 * dn0 > ((rhat << 32) | n0))) {
			q0--;
			rhat += dn1;
		}
	}
	return (q1 << 32) + q0;
}

/* (a * b) >> 32, saturating. */
static __always_inline __u64 mul_shr32(__u64 a, __u64 b)
{
	__u64 hi, lo;

	mul128(a, b, &hi, &lo);
	if (hi >> 32)
		return U64_MAX_;
	return (hi << 32) | (lo >> 32);
}

/* a * b / d, saturating (d > 0). */
static __always_inline __u64 mul_div(__u64 a, __u64 b, __u64 d)
{
	__u64 hi, lo;

	mul128(a, b, &hi, &lo);
	return div128(hi, lo, d);
}

/* (ah, al) < (bh, bl). */
static __always_inline bool lt128(__u64 ah, __u64 al, __u64 bh, __u64 bl)
{
	return ah < bh || (ah == bh && al < bl);
}

/* (ah, al) - (bh, bl), for (ah, al) >= (bh, bl). */
static __always_inline void sub128(__u64 *ah, __u64 *al, __u64 bh, __u64 bl)
{
	__u64 borrow = *al < bl;

	*al -= bl;
	*ah -= bh + borrow;
}

/* ---- log2, exp2, pow in fixed point ---- */

/* The index of x's highest set bit (x > 0). */
static __always_inline __u32 msb64(__u64 x)
{
	__u32 p = 0;

	if (x >> 32) {
		x >>= 32;
		p += 32;
	}
	if (x >> 16) {
		x >>= 16;
		p += 16;
	}
	if (x >> 8) {
		x >>= 8;
		p += 8;
	}
	if (x >> 4) {
		x >>= 4;
		p += 4;
	}
	if (x >> 2) {
		x >>= 2;
		p += 2;
	}
	if (x >> 1)
		p += 1;
	return p;
}

/* log2(x) in Q30 for an integer x > 0: the integer part is x's top bit; each
 * squaring of the mantissa m in [1, 2) (Q31) gives the next fraction bit (m^2 >=
 * 2: the bit is 1 and m^2 is halved). */
static __always_inline __s64 log2_q30(__u64 x)
{
	__u32 p = msb64(x);
	__u64 m = p >= 31 ? x >> (p - 31) : x << (31 - p);
	__u64 frac = 0, bit;
	int i;

	/* Branch-free, so that the verifier walks one path, not 2^30. */
	for (i = 0; i < 30; i++) {
		m = (m * m) >> 31;
		bit = m >> 32;
		m >>= bit;
		frac = (frac << 1) | bit;
	}
	return ((__s64)p << 30) + (__s64)frac;
}

/* round(2^(2^-i) 2^31), i = 1..30. */
#define EXP2_STEP(i, c)                                                              \
	do {                                                                         \
		__u64 bit_ = (f >> (30 - (i))) & 1;                                  \
		r = (r * ((1ULL << 31) + bit_ * ((c) - (1ULL << 31)))) >> 31;        \
	} while (0)

/* 2^(y / 2^30) in Q16, rounded to nearest, saturating: 2^k 2^f with k = floor,
 * 2^f the product of 2^(2^-i) over f's set bits (multiplying by 1 for a clear
 * bit: no branch). */
static __always_inline __u64 exp2_q16(__s64 y)
{
	__s64 k;
	__u64 f, r = 1ULL << 31;
	int shift;

	if (y >= 0)
		k = y >> 30;
	else
		k = -(__s64)(((__u64)(-y) + (1ULL << 30) - 1) >> 30);
	f = (__u64)(y - k * (1LL << 30));
	EXP2_STEP(1, 3037000500ULL);
	EXP2_STEP(2, 2553802834ULL);
	EXP2_STEP(3, 2341847524ULL);
	EXP2_STEP(4, 2242560872ULL);
	EXP2_STEP(5, 2194507417ULL);
	EXP2_STEP(6, 2170868212ULL);
	EXP2_STEP(7, 2159144272ULL);
	EXP2_STEP(8, 2153306067ULL);
	EXP2_STEP(9, 2150392887ULL);
	EXP2_STEP(10, 2148937775ULL);
	EXP2_STEP(11, 2148210589ULL);
	EXP2_STEP(12, 2147847087ULL);
	EXP2_STEP(13, 2147665360ULL);
	EXP2_STEP(14, 2147574502ULL);
	EXP2_STEP(15, 2147529075ULL);
	EXP2_STEP(16, 2147506361ULL);
	EXP2_STEP(17, 2147495005ULL);
	EXP2_STEP(18, 2147489326ULL);
	EXP2_STEP(19, 2147486487ULL);
	EXP2_STEP(20, 2147485068ULL);
	EXP2_STEP(21, 2147484358ULL);
	EXP2_STEP(22, 2147484003ULL);
	EXP2_STEP(23, 2147483825ULL);
	EXP2_STEP(24, 2147483737ULL);
	EXP2_STEP(25, 2147483692ULL);
	EXP2_STEP(26, 2147483670ULL);
	EXP2_STEP(27, 2147483659ULL);
	EXP2_STEP(28, 2147483654ULL);
	EXP2_STEP(29, 2147483651ULL);
	EXP2_STEP(30, 2147483649ULL);
	/* r = 2^f in Q31; the result is r 2^(k + 16 - 31). */
	if (k > 47)
		return U64_MAX_;
	if (k < -48)
		return 0;
	shift = (int)k - 15;
	if (shift >= 0)
		return r << shift;
	shift = -shift;
	return (r + (1ULL << (shift - 1))) >> shift;
}

/* x^(num / den) for x in Q16, in Q16 (0 for x = 0). Global: checked once. */
__noinline __u64 pow_q16(__u64 x, __u64 num, __u64 den)
{
	__s64 l;
	__u64 mag;

	if (!x)
		return 0;
	l = log2_q30(x) - ((__s64)16 << 30);
	if (l >= 0)
		return exp2_q16((__s64)((__u64)l * num / den));
	mag = (__u64)(-l) * num / den;
	return exp2_q16(-(__s64)mag);
}

/* ---- the model ---- */

static __always_inline struct vivace *state(struct sock *sk, __u64 flags)
{
	return bpf_sk_storage_get(&vivace_state, sk, 0, flags);
}

static __always_inline void reset_front_fates(struct vivace *v)
{
	v->lost = 0;
	v->x_base = 0;
	v->sx = v->sy = v->sxx = v->sxy = v->syy = 0;
	v->n = 0;
}

/* One (send time, RTT) sample of the front MI, us. */
static __always_inline void add_sample(struct vivace *v, __u64 send_us, __u64 rtt_us)
{
	__u64 x, y = rtt_us < SAMPLE_MAX ? rtt_us : SAMPLE_MAX - 1;

	if (v->n >= MAX_SAMPLES)
		return;
	if (!v->n)
		v->x_base = send_us - X_OFFSET_US; /* wraps for early times; x does not */
	x = send_us - v->x_base;
	if (x >> 63)
		x = 0;
	else if (x >= SAMPLE_MAX)
		x = SAMPLE_MAX - 1;
	v->n++;
	v->sx += x;
	v->sy += y;
	v->sxx += x * x;
	v->sxy += x * y;
	v->syy += y * y;
}

/* The port's rtt_gradient in Q32: the least-squares slope of RTT on send time,
 * kept only when positive and above the fit's relative RMS error (the residuals'
 * RMS over the mean RTT), else 0. With A = n Sxx - Sx^2, B = n Sxy - Sx Sy, C = n
 * Syy - Sy^2 (exact, 128 bits): var x = A / n^2, cov = B / n^2, var y = C / n^2
 * (Q16), slope g = cov / var x, mean squared residual var y - cov g; kept when
 * that is below (g mean y)^2. */
static __always_inline __u64 rtt_gradient_q32(struct vivace *v)
{
	__u64 n = v->n, ah, al, bh, bl, ch, cl, qh, ql, nn;
	__u64 var_x, cov, var_y, g, cg, mse, ym, gy, h, l;

	if (n < 2)
		return 0;
	nn = n * n;
	mul128(n, v->sxx, &ah, &al);
	mul128(v->sx, v->sx, &qh, &ql);
	if (!lt128(qh, ql, ah, al))
		return 0; /* A = 0: every sample sent at one time */
	sub128(&ah, &al, qh, ql);
	mul128(n, v->sxy, &bh, &bl);
	mul128(v->sx, v->sy, &qh, &ql);
	if (!lt128(qh, ql, bh, bl))
		return 0; /* B <= 0: a flat or falling RTT counts as 0 */
	sub128(&bh, &bl, qh, ql);
	mul128(n, v->syy, &ch, &cl);
	mul128(v->sy, v->sy, &qh, &ql);
	if (lt128(ch, cl, qh, ql))
		ch = cl = 0;
	else
		sub128(&ch, &cl, qh, ql);
	/* A, B, C < 2^78: shifted left 16 they fit 128 bits. */
	var_x = div128((ah << 16) | (al >> 48), al << 16, nn);
	cov = div128((bh << 16) | (bl >> 48), bl << 16, nn);
	var_y = div128((ch << 16) | (cl >> 48), cl << 16, nn);
	if (!var_x)
		return 0;
	g = div128(cov >> 32, cov << 32, var_x);
	cg = mul_shr32(cov, g);
	mse = var_y > cg ? var_y - cg : 0;
	ym = (v->sy << 16) / n;
	gy = mul_shr32(g, ym);
	/* mse (Q16) < gy^2 (Q32): compare mse << 16 with gy * gy. */
	mul128(gy, gy, &h, &l);
	if (lt128(mse >> 48, mse << 16, h, l))
		return g;
	return 0;
}

/* The port's utility: x^0.9 - 900 x g - 11.35 x L (Q16), x = rate_q16 (10^6
 * bit/s, Q16), g the slope (Q32), L = lost_bytes / sent_bytes (at most 1). */
static __always_inline __s64 utility_q16(__u64 rate_q16, __u64 g_q32, __u64 lost_bytes,
					 __u64 sent_bytes)
{
	__u64 pow = pow_q16(rate_q16, RATE_EXP_NUM, RATE_EXP_DEN);
	__u64 lat, loss = 0;

	/* 900 g before the shift, so that its truncation is one Q16 ulp, not 900; a
	 * slope above 2^21 (us per us) is 2^21 here. */
	if (g_q32 > (1ULL << 53))
		g_q32 = 1ULL << 53;
	lat = mul_shr32(g_q32 * LATENCY_COEFFICIENT, rate_q16);
	if (lat > (1ULL << 61))
		lat = 1ULL << 61;
	if (lost_bytes > sent_bytes)
		lost_bytes = sent_bytes;
	if (lost_bytes && sent_bytes)
		loss = mul_div(rate_q16, lost_bytes * LOSS_COEFFICIENT_100, sent_bytes * 100);
	if (loss > (1ULL << 61))
		loss = 1ULL << 61;
	if (pow > (1ULL << 61))
		pow = 1ULL << 61;
	return (__s64)pow - (__s64)lat - (__s64)loss;
}

static __always_inline struct vivace_mi *front(struct vivace *v)
{
	return &v->mi[v->head & MI_MASK];
}

static __always_inline struct vivace_mi *back(struct vivace *v)
{
	return &v->mi[(v->head + v->count - 1) & MI_MASK];
}

/* Useful MIs a round of the current mode needs. */
static __always_inline __u32 useful_needed(struct vivace *v)
{
	return v->mode == MODE_PROBING ? 2 * PROBING_PAIRS : 1;
}

/* The k-th useful MI's rate: the central rate, or in probing r(1 + eps),
 * r(1 - eps), r(1 - eps), r(1 + eps). */
static __always_inline __u64 useful_rate(struct vivace *v, __u32 k)
{
	if (v->mode != MODE_PROBING)
		return v->rate;
	if (k == 0 || k == 3)
		return v->rate * PROBING_UP_NUM / PROBING_DEN;
	return v->rate * PROBING_DOWN_NUM / PROBING_DEN;
}

/* ComputeMonitorDuration: max(1.5 srtt, 10 packets at rate), us, rounded up. */
static __always_inline __u64 mi_duration_us(__u64 rate, __u32 srtt, __u32 mss)
{
	__u64 by_rtt = (3ULL * srtt + 1) / 2;
	__u64 bits = MI_MIN_PACKETS * mss * 8 * USEC_PER_SEC;
	__u64 by_packets;

	if (!rate)
		rate = 1;
	by_packets = (bits + rate - 1) / rate;
	return by_rtt > by_packets ? by_rtt : by_packets;
}

/* A new round: the useful MIs still open no longer count. */
static __always_inline void new_round(struct vivace *v)
{
	int i;

	for (i = 0; i < MI_SLOTS; i++)
		v->mi[i].useful = 0;
	v->nresults = 0;
	v->useful_started = 0;
}

/* Ends the current send phase if its time is up and starts the next MI. */
static __always_inline void maybe_start_mi(struct vivace *v, __u64 now, __u32 snd_nxt,
					   __u32 srtt, __u32 mss)
{
	struct vivace_mi *mi;
	__u64 rate;
	bool useful;

	if (v->count) {
		mi = back(v);
		if (!mi->ended) {
			if (now < mi->end_us)
				return;
			mi->seq_end = snd_nxt;
			mi->end_us = now;
			mi->ended = 1;
		}
	}
	if (v->count >= MI_SLOTS)
		return; /* see Deviations: the ring is full */
	useful = v->useful_started < useful_needed(v);
	rate = useful ? useful_rate(v, v->useful_started) : v->rate;
	if (useful)
		v->useful_started++;
	mi = &v->mi[(v->head + v->count) & MI_MASK];
	v->count++;
	if (v->count > v->max_open)
		v->max_open = v->count;
	mi->rate = rate;
	mi->useful = useful;
	mi->start_us = now;
	mi->seq_start = snd_nxt;
	mi->seq_end = 0;
	mi->ended = 0;
	mi->rtt_on_start_us = srtt;
	mi->end_us = now + mi_duration_us(rate, srtt, mss);
}

static __always_inline bool pair_says_increase(struct vivace_utility *a, struct vivace_utility *b)
{
	if (a->utility > b->utility)
		return a->rate > b->rate;
	return a->rate < b->rate;
}

static __always_inline __u32 pairs_saying_increase(struct vivace *v)
{
	return (__u32)pair_says_increase(&v->results[0], &v->results[1]) +
	       (__u32)pair_says_increase(&v->results[2], &v->results[3]);
}

static __always_inline __u64 abs_diff_u64(__u64 a, __u64 b)
{
	return a > b ? a - b : b - a;
}

static __always_inline __u64 abs_diff_s64(__s64 a, __s64 b)
{
	return a > b ? (__u64)(a - b) : (__u64)(b - a);
}

/* ComputeRateChange, bit/s: gradient x theta_0, amplified by the rounds in one
 * direction, bounded by the dynamic change boundary, at least 500 kbit/s. */
static __always_inline __u64 compute_rate_change(struct vivace *v)
{
	struct vivace_utility *u = v->results;
	__u64 d_rate, change = 0, bound, amp;
	int i;

	if (v->mode == MODE_PROBING) {
		__u64 d_util_sum = 0;
		bool inc = v->direction == DIR_INCREASE;

		d_rate = abs_diff_u64(u[0].rate, u[1].rate);
		for (i = 0; i < PROBING_PAIRS; i++) {
			if (pair_says_increase(&u[2 * i], &u[2 * i + 1]) != inc)
				continue;
			d_util_sum += abs_diff_s64(u[2 * i].utility, u[2 * i + 1].utility);
		}
		/* d_util = sum / PROBING_PAIRS (2): one more bit of shift. */
		if (d_rate)
			change = mul_div(d_util_sum, 1ULL << (MEGABIT_SHIFT2_Q16 - 1), d_rate);
	} else {
		d_rate = abs_diff_u64(u[0].rate, v->latest.rate);
		if (d_rate)
			change = mul_div(abs_diff_s64(u[0].utility, v->latest.utility),
					 1ULL << MEGABIT_SHIFT2_Q16, d_rate);
	}
	if (v->mode == MODE_DECISION_MADE) {
		/* pow((rounds + 1) / 2, 1.2), the integer halving rounding up. */
		amp = pow_q16((__u64)((v->rounds + 1) / 2) << 16, AMPLIFY_EXP_NUM,
			      AMPLIFY_EXP_DEN);
		change = mul_div(change, amp, 1ULL << 16);
	} else {
		v->allowance = 0;
	}
	bound = v->rate * (1 + (__u64)v->allowance) / CHANGE_BOUND_DEN;
	if (change > bound) {
		change = bound;
		v->allowance++;
	} else if (v->allowance > 0) {
		v->allowance--;
	}
	return change > MIN_RATE_CHANGE_BPS ? change : MIN_RATE_CHANGE_BPS;
}

static __always_inline void cap_rate(struct vivace *v)
{
	if (v->rate > MAX_RATE_BPS)
		v->rate = MAX_RATE_BPS;
}

/* PccSender::EnterProbing from start-up: probe around half the rate. */
static __always_inline void enter_probing_from_start(struct vivace *v)
{
	v->rate /= 2;
	v->mode = MODE_PROBING;
}

/* SetRateChangeDirection, remembering the better MI of an agreeing pair. */
static __always_inline void set_rate_change_direction(struct vivace *v)
{
	__u32 inc = pairs_saying_increase(v);
	int i;

	v->direction = inc > PROBING_PAIRS - inc ? DIR_INCREASE : DIR_DECREASE;
	for (i = 0; i < PROBING_PAIRS; i++) {
		struct vivace_utility *a = &v->results[2 * i], *b = &v->results[2 * i + 1];

		if (pair_says_increase(a, b) == (v->direction == DIR_INCREASE))
			v->latest = a->utility > b->utility ? *a : *b;
	}
}

/* EnterDecisionMade. */
static __always_inline void enter_decision_made(struct vivace *v)
{
	__u64 change;

	if (v->mode == MODE_PROBING)
		v->rate = v->rate *
			  (v->direction == DIR_INCREASE ? PROBING_UP_NUM : PROBING_DOWN_NUM) /
			  PROBING_DEN;
	v->rounds = v->mode == MODE_PROBING ? 1 : v->rounds + 1;
	change = compute_rate_change(v);
	if (v->direction == DIR_INCREASE)
		v->rate += change;
	else
		v->rate = v->rate > change ? v->rate - change : 0;
	cap_rate(v);
	if (v->rate < MIN_RATE_BPS) {
		v->rate = MIN_RATE_BPS;
		v->mode = MODE_PROBING;
		v->rounds = 1;
		v->allowance = 0;
	} else {
		v->mode = MODE_DECISION_MADE;
	}
}

/* PccVivaceSender::EnterProbing: the last step did not pay; step back once. */
static __always_inline void enter_probing_from_decision(struct vivace *v)
{
	__u64 change;

	v->rounds = 1;
	change = compute_rate_change(v);
	if (v->direction == DIR_INCREASE)
		v->rate = v->rate > change ? v->rate - change : 0;
	else
		v->rate += change;
	cap_rate(v);
	if (v->rate < MIN_RATE_BPS) {
		v->rate = MIN_RATE_BPS;
		v->allowance = 0;
	}
	v->mode = MODE_PROBING;
}

/* PccVivaceSender::OnUtilityAvailable, on this round's results. */
static __always_inline void on_utility_available(struct vivace *v)
{
	struct vivace_utility *u = v->results;

	if (v->mode == MODE_STARTING) {
		if (u[0].utility > v->latest.utility) {
			v->rate *= 2;
			cap_rate(v);
			v->latest = u[0];
			v->rounds++;
		} else {
			enter_probing_from_start(v);
		}
	} else if (v->mode == MODE_PROBING) {
		__u32 inc = pairs_saying_increase(v);

		/* CanMakeDecision: more than half the pairs say increase, or none. */
		if (inc > PROBING_PAIRS / 2 || inc == 0) {
			set_rate_change_direction(v);
			enter_decision_made(v);
		}
		if (v->rate <= MIN_RATE_BPS) {
			v->rate = MIN_RATE_BPS;
			v->allowance = 0;
			v->rounds = 1;
			v->mode = MODE_STARTING;
		}
	} else {
		struct vivace_utility x = u[0], l = v->latest;
		bool up = x.utility > l.utility, down = x.utility < l.utility, keep;

		if (v->direction == DIR_INCREASE)
			keep = (up && x.rate > l.rate) || (down && x.rate < l.rate);
		else
			keep = (up && x.rate < l.rate) || (down && x.rate > l.rate);
		if (keep) {
			enter_decision_made(v);
			v->latest = x;
		} else {
			enter_probing_from_decision(v);
		}
	}
	new_round(v);
}

/* An ACK's fates and RTT go to the MI at the front; MIs snd_una has passed are
 * finished, and a finished useful MI's utility goes to the rate controller. */
static __always_inline void account(struct vivace *v, struct tcp_sock *tp,
				    const struct rate_sample *rs, __u64 now)
{
	__u32 snd_una = tp->snd_una, mss = tp->mss_cache;
	long rtt = rs->rtt_us;
	int losses = rs->losses;
	int i;

	if (v->count) {
		if (losses > 0)
			v->lost += (__u32)losses;
		if (rtt > 0)
			add_sample(v, now - (__u64)rtt, (__u64)rtt);
	}
	for (i = 0; i < MI_SLOTS; i++) {
		struct vivace_mi *mi;
		__u64 sent, dur_ns, rate_q16, g;
		__s64 u;
		__u8 k;

		if (!v->count)
			break;
		mi = front(v);
		if (!mi->ended || before(snd_una, mi->seq_end))
			break;
		v->head = (v->head + 1) & MI_MASK;
		v->count--;
		if (!mi->useful) {
			reset_front_fates(v);
			continue;
		}
		sent = mi->seq_end - mi->seq_start;
		if (!sent) {
			/* Nothing sent in it (application-limited): start the round over. */
			reset_front_fates(v);
			new_round(v);
			continue;
		}
		/* ComputeSimpleMetrics: the send phase plus one packet's transfer time. */
		dur_ns = (mi->end_us - mi->start_us) * 1000 +
			 (__u64)mss * 8 * 1000000000ULL / (mi->rate ? mi->rate : 1);
		rate_q16 = mul_div(sent, 8000ULL << 16, dur_ns ? dur_ns : 1);
		g = rtt_gradient_q32(v);
		u = utility_q16(rate_q16, g, v->lost * mss, sent);
		reset_front_fates(v);
		v->last_utility = u;
		k = v->nresults & (2 * PROBING_PAIRS - 1);
		v->results[k].rate = mi->rate;
		v->results[k].utility = u;
		v->nresults = k + 1;
		if (v->nresults >= useful_needed(v))
			on_utility_available(v);
	}
}

/* Pacing at the current MI's rate; cwnd CWND_GAIN x rate x srtt. */
static __always_inline void write(struct sock *sk, struct vivace *v)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u64 rate = v->count ? back(v)->rate : v->rate;
	__u64 pacing = (rate + 4) / 8, max = sk->sk_max_pacing_rate;
	__u64 rtt = tp->srtt_us >> 3, mss = tp->mss_cache, den, cwnd, hi, lo;
	__u32 clamp = tp->snd_cwnd_clamp;

	if (max < 1)
		max = 1;
	if (pacing < 1)
		pacing = 1;
	if (pacing > max)
		pacing = max;
	sk->sk_pacing_rate = pacing;
	if (!rtt)
		rtt = INITIAL_RTT_US;
	/* ceil(CWND_GAIN (rate / 8) rtt / 10^6 / mss), the product in 128 bits */
	den = 8 * USEC_PER_SEC * (mss ? mss : 1);
	mul128(CWND_GAIN * rate, rtt, &hi, &lo);
	lo += den - 1;
	hi += lo < den - 1;
	cwnd = div128(hi, lo, den);
	if (clamp < MIN_CWND)
		clamp = MIN_CWND;
	if (cwnd < MIN_CWND)
		cwnd = MIN_CWND;
	if (cwnd > clamp)
		cwnd = clamp;
	tp->snd_cwnd = (__u32)cwnd;
}

#ifdef VIVACE_SELFTEST
/* The fixed-point helpers on hand-computed inputs, read back by
 * crates/bpf/tests/vivace.rs from .bss. */
__u64 vivace_selftest[16];

static __always_inline void selftest(struct vivace *v)
{
	vivace_selftest[0] = pow_q16(10ULL << 16, RATE_EXP_NUM, RATE_EXP_DEN);
	vivace_selftest[1] = pow_q16(20ULL << 16, RATE_EXP_NUM, RATE_EXP_DEN);
	vivace_selftest[2] = pow_q16(1ULL << 15, RATE_EXP_NUM, RATE_EXP_DEN);
	vivace_selftest[3] = pow_q16(1ULL << 16, AMPLIFY_EXP_NUM, AMPLIFY_EXP_DEN);
	vivace_selftest[4] = pow_q16(2ULL << 16, AMPLIFY_EXP_NUM, AMPLIFY_EXP_DEN);
	vivace_selftest[5] = pow_q16(3ULL << 16, AMPLIFY_EXP_NUM, AMPLIFY_EXP_DEN);
	vivace_selftest[6] = pow_q16(1000ULL << 16, RATE_EXP_NUM, RATE_EXP_DEN);
	/* The port's slope examples: rising 0.1, zig-zag 0.02, flat 0, falling 0. */
	reset_front_fates(v);
	add_sample(v, 0, 40000);
	add_sample(v, 10000, 41000);
	add_sample(v, 20000, 42000);
	vivace_selftest[7] = rtt_gradient_q32(v);
	reset_front_fates(v);
	add_sample(v, 0, 40000);
	add_sample(v, 10000, 41000);
	add_sample(v, 20000, 40000);
	add_sample(v, 30000, 41000);
	vivace_selftest[8] = rtt_gradient_q32(v);
	reset_front_fates(v);
	add_sample(v, 0, 40000);
	add_sample(v, 10000, 42000);
	add_sample(v, 20000, 40000);
	vivace_selftest[9] = rtt_gradient_q32(v);
	reset_front_fates(v);
	add_sample(v, 0, 42000);
	add_sample(v, 10000, 41000);
	vivace_selftest[10] = rtt_gradient_q32(v);
	reset_front_fates(v);
	/* The port's utility examples: 10 Mbit/s, 1 % loss; slope 0.01, no loss. */
	vivace_selftest[11] = (__u64)utility_q16(10ULL << 16, 0, 1, 100);
	vivace_selftest[12] = (__u64)utility_q16(10ULL << 16, 42949673ULL, 0, 100);
}
#endif

SEC("struct_ops")
void BPF_PROG(vivace_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct vivace *v = state(sk, BPF_SK_STORAGE_GET_F_CREATE);
	__u64 rtt = tp->srtt_us >> 3;
	int i;

	if (!v)
		return; /* see Deviations: left as the kernel set it up */
#ifdef VIVACE_SELFTEST
	selftest(v);
#endif
	/* A socket that ran this program before keeps its storage: clear it. */
	for (i = 0; i < MI_SLOTS; i++) {
		v->mi[i].rate = 0;
		v->mi[i].useful = 0;
		v->mi[i].ended = 0;
	}
	for (i = 0; i < 2 * PROBING_PAIRS; i++) {
		v->results[i].rate = 0;
		v->results[i].utility = 0;
	}
	reset_front_fates(v);
	v->latest.rate = 0;
	v->latest.utility = 0;
	v->last_utility = 0;
	v->rounds = 1;
	v->allowance = 0;
	v->head = 0;
	v->count = 0;
	v->mode = MODE_STARTING;
	v->direction = DIR_INCREASE;
	v->useful_started = 0;
	v->nresults = 0;
	v->max_open = 0;
	if (!rtt)
		rtt = INITIAL_RTT_US;
	v->rate = INITIAL_WINDOW * tp->mss_cache * 8 * USEC_PER_SEC / rtt;
	/* SK_PACING_NEEDED, as BBR (tcp_bbr.c's cmpxchg, a plain store from NONE). */
	if (sk->sk_pacing_status == SK_PACING_NONE)
		sk->sk_pacing_status = SK_PACING_NEEDED;
	write(sk, v);
}

SEC("struct_ops")
void BPF_PROG(vivace_cong_control, struct sock *sk, __u32 ack, int flag,
	      const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct vivace *v = state(sk, 0);
	__u32 srtt = tp->srtt_us >> 3;
	__u64 now = tp->tcp_mstamp;

	if (!v)
		return;
	/* No MI before the first RTT sample (pcc_sender.cpp: a latest RTT is needed). */
	if (srtt) {
		account(v, tp, rs, now);
		/* OnCongestionEvent: start-up leaves at once on 30 % RTT inflation. */
		if (v->mode == MODE_STARTING && v->count) {
			struct vivace_mi *mi = back(v);

			if (mi->rtt_on_start_us &&
			    (__u64)srtt * STARTING_RTT_DEN >
				    (__u64)mi->rtt_on_start_us * STARTING_RTT_NUM) {
				enter_probing_from_start(v);
				new_round(v);
			}
		}
		maybe_start_mi(v, now, tp->snd_nxt, srtt, tp->mss_cache);
	}
	write(sk, v);
}

/* An RTO: the reference has none (QUIC); the rate is kept, cwnd rewritten. */
SEC("struct_ops")
void BPF_PROG(vivace_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct vivace *v;

	if (ev != CA_EVENT_LOSS)
		return;
	v = state(sk, 0);
	if (v)
		write(sk, v);
}

/* Not used to set cwnd (Vivace owns it): the kernel's value is kept. */
SEC("struct_ops")
__u32 BPF_PROG(vivace_ssthresh, struct sock *sk)
{
	return tcp_sk(sk)->snd_ssthresh;
}

SEC("struct_ops")
__u32 BPF_PROG(vivace_undo_cwnd, struct sock *sk)
{
	return tcp_sk(sk)->snd_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops vivace = {
	.init = (void *)vivace_init,
	.ssthresh = (void *)vivace_ssthresh,
	.cong_control = (void *)vivace_cong_control,
	.cwnd_event = (void *)vivace_cwnd_event,
	.undo_cwnd = (void *)vivace_undo_cwnd,
	.name = "bpf_vivace",
};
