// SPDX-License-Identifier: MIT
/*
 * cubic.bpf.c: CUBIC with HyStart, as Linux 6.18 runs it (net/ipv4/tcp_cubic.c), as a
 * BPF struct_ops tcp_congestion_ops.
 *
 * Model. After a loss at window W_max, cwnd follows a cubic in the time t since the
 * loss, W(t) = C (t - K)^3 + W_max with K = cbrt(W_max (1 - beta) / C): concave up to
 * the old maximum, flat around it, convex beyond. Fixed point as the kernel: time in
 * 1/1024 s, C = bic_scale * 10 / 1024 per s^3, the target taken one delay_min ahead,
 * and cwnd grows one segment per `cnt` acked segments (at most one per two). Fast
 * convergence lowers W_max to cwnd (1 + beta) / 2 on a loss below the previous W_max.
 * In the TCP-friendly region cwnd grows at least as fast as AIMD with the same beta
 * would. On loss ssthresh = cwnd * beta / 1024. HyStart ends slow start early when ACK
 * trains stretch past delay_min / 2 or the RTT of a round's first samples rises by
 * delay_min / 8 (clamped to 4..16 ms); rounds start from the first ACK and only the
 * detection waits for cwnd >= hystart_low_window (the 6.14 round-start fix).
 *
 * Follows: bictcp_reset, bictcp_hystart_reset, cubictcp_init, cubictcp_cwnd_event,
 * cubic_root, bictcp_update, cubictcp_cong_avoid, cubictcp_recalc_ssthresh,
 * cubictcp_state, hystart_ack_delay, hystart_update, cubictcp_acked; undo_cwnd is the
 * kfunc tcp_reno_undo_cwnd, slow start and additive increase the kfuncs
 * tcp_slow_start and tcp_cong_avoid_ai.
 *
 * Parameters: the module parameters of tcp_cubic.c, as const volatile globals (set
 * per run, or with a libbpf skeleton before load), plus gso_max_size.
 *
 * Deviations:
 * - The TCP-friendliness loop `while (ack_cnt > delta)` is one division (the verifier
 *   wants bounded loops); the same result, and skipped when delta is 0 where the
 *   kernel would spin.
 * - hystart_ack_delay reads the parameter gso_max_size instead of sk_gso_max_size:
 *   0 (the simulator has no GSO, and Linux computes 0 without it); set 65536 for a
 *   kernel with GSO.
 * - beta_scale, cube_rtt_scale and cube_factor are derived from the parameters in each
 *   callback instead of once at module load (cubictcp_register); same values.
 * - cubic_root masks its table index with 63 (always true) so the verifier sees the
 *   bound.
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

#define BICTCP_BETA_SCALE 1024
#define BICTCP_HZ 10
#define HYSTART_ACK_TRAIN 0x1
#define HYSTART_DELAY 0x2
#define HYSTART_MIN_SAMPLES 8
#define HYSTART_DELAY_MIN 4000U
#define HYSTART_DELAY_MAX 16000U

const volatile int fast_convergence = 1;
const volatile __u32 beta = 717; /* 1/1024; unsigned, as BPF has no signed division */
const volatile int initial_ssthresh = 0;
const volatile __u32 bic_scale = 41;
const volatile int tcp_friendliness = 1;
const volatile bool hystart = true;
const volatile int hystart_detect = HYSTART_ACK_TRAIN | HYSTART_DELAY;
const volatile int hystart_low_window = 16;
const volatile int hystart_ack_delta_us = 2000;
const volatile __u32 gso_max_size = 0;

/* struct bictcp, in icsk_ca_priv. */
struct bictcp {
	__u32 cnt; /* increase cwnd by 1 after this many ACKed segments */
	__u32 last_max_cwnd; /* W_max */
	__u32 last_cwnd; /* cwnd when cnt was last computed */
	__u32 last_time; /* jiffies when cnt was last computed */
	__u32 bic_origin_point; /* plateau of the current cubic */
	__u32 bic_K; /* time from epoch start to the plateau, 1/1024 s */
	__u32 delay_min; /* us */
	__u32 epoch_start; /* jiffies; 0 = no epoch */
	__u32 ack_cnt; /* ACKed segments for the Reno estimate */
	__u32 tcp_cwnd; /* the Reno estimate */
	__u16 unused;
	__u8 sample_cnt; /* HyStart delay samples this round */
	__u8 found; /* HyStart has ended slow start */
	__u32 round_start; /* us */
	__u32 end_seq; /* snd_nxt at the round's start (bytes) */
	__u32 last_ack; /* us */
	__u32 curr_rtt; /* minimum RTT of this round's first samples, us */
};

/* cubictcp_register's derived constants. */
static __always_inline __u32 beta_scale(void)
{
	return 8 * (BICTCP_BETA_SCALE + beta) / 3 / (BICTCP_BETA_SCALE - beta);
}

static __always_inline __u32 cube_rtt_scale(void)
{
	return bic_scale * 10;
}

static __always_inline __u64 cube_factor(void)
{
	return (1ULL << (10 + 3 * BICTCP_HZ)) / (__u64)cube_rtt_scale();
}

static __always_inline __u32 bictcp_clock_us(const struct sock *sk)
{
	return tcp_sk(sk)->tcp_mstamp;
}

static __always_inline void bictcp_reset(struct bictcp *ca)
{
	/* Everything before `unused`; HyStart's round fields stay. */
	ca->cnt = 0;
	ca->last_max_cwnd = 0;
	ca->last_cwnd = 0;
	ca->last_time = 0;
	ca->bic_origin_point = 0;
	ca->bic_K = 0;
	ca->delay_min = 0;
	ca->epoch_start = 0;
	ca->ack_cnt = 0;
	ca->tcp_cwnd = 0;
	ca->found = 0;
}

static __always_inline void bictcp_hystart_reset(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = inet_csk_ca(sk);

	ca->round_start = ca->last_ack = bictcp_clock_us(sk);
	ca->end_seq = tp->snd_nxt;
	ca->curr_rtt = ~0U;
	ca->sample_cnt = 0;
}

SEC("struct_ops")
void BPF_PROG(cubic_init, struct sock *sk)
{
	struct bictcp *ca = inet_csk_ca(sk);

	bictcp_reset(ca);
	if (hystart)
		bictcp_hystart_reset(sk);
	if (!hystart && initial_ssthresh)
		tcp_sk(sk)->snd_ssthresh = initial_ssthresh;
}

SEC("struct_ops")
void BPF_PROG(cubic_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_TX_START) {
		struct bictcp *ca = inet_csk_ca(sk);
		__u32 now = tcp_jiffies32;
		__s32 delta = now - tcp_sk(sk)->lsndtime;

		/* Resume on the same point of the curve after idle: shift the epoch by the
		 * idle time, never into the future. */
		if (ca->epoch_start && delta > 0) {
			ca->epoch_start += delta;
			if (after(ca->epoch_start, now))
				ca->epoch_start = now;
		}
	}
}

/* Cube roots of the 6-bit prefixes, scaled: v[x] = cbrt(x << 18) - 1 (tcp_cubic.c). */
static const __u8 cbrt_prefix[64] = {
	0,   54,  54,  54,  118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156,
	157, 161, 164, 168, 170, 173, 176, 179, 181, 185, 187, 190, 192, 194, 197, 199,
	200, 202, 204, 206, 209, 211, 213, 215, 217, 219, 221, 222, 224, 225, 227, 229,
	231, 232, 234, 236, 237, 239, 240, 242, 244, 245, 246, 248, 250, 251, 252, 254,
};

/* fls64: 1-based index of the highest set bit, by halving. */
static __always_inline __u32 fls64(__u64 x)
{
	__u32 n = 64;

	if (!x)
		return 0;
	if (!(x & 0xffffffff00000000ULL)) {
		n -= 32;
		x <<= 32;
	}
	if (!(x & 0xffff000000000000ULL)) {
		n -= 16;
		x <<= 16;
	}
	if (!(x & 0xff00000000000000ULL)) {
		n -= 8;
		x <<= 8;
	}
	if (!(x & 0xf000000000000000ULL)) {
		n -= 4;
		x <<= 4;
	}
	if (!(x & 0xc000000000000000ULL)) {
		n -= 2;
		x <<= 2;
	}
	if (!(x & 0x8000000000000000ULL))
		n -= 1;
	return n;
}

/* cubic_root: table estimate on the top 6 bits, then one Newton-Raphson step. */
static __always_inline __u32 cubic_root(__u64 a)
{
	__u32 x, b, shift;

	if (a < 64)
		return ((__u32)cbrt_prefix[a & 63] + 35) >> 6;
	b = fls64(a);
	b = ((b * 84) >> 8) - 1;
	shift = (a >> (b * 3)) & 63;
	x = ((__u32)(((__u32)cbrt_prefix[shift] + 10) << b)) >> 6;
	/* x' = (2x + a / x^2) / 3, with x(x-1) for x^2 and / 3 as * 341 / 1024. */
	x = 2 * x + (__u32)(a / ((__u64)x * (__u64)(x - 1)));
	return (x * 341) >> 10;
}

static __always_inline void bictcp_update(struct bictcp *ca, __u32 cwnd, __u32 acked)
{
	__u32 delta, bic_target, max_cnt, now = tcp_jiffies32;
	__u64 offs, t;

	ca->ack_cnt += acked;

	if (ca->last_cwnd == cwnd && (__s32)(now - ca->last_time) <= HZ / 32)
		return;

	/* cnt is recomputed at most once per jiffy; a reduction zeroes epoch_start, which
	 * forces it. */
	if (!(ca->epoch_start && now == ca->last_time)) {
		ca->last_cwnd = cwnd;
		ca->last_time = now;

		if (ca->epoch_start == 0) {
			ca->epoch_start = now;
			ca->ack_cnt = acked;
			ca->tcp_cwnd = cwnd;
			if (ca->last_max_cwnd <= cwnd) {
				ca->bic_K = 0;
				ca->bic_origin_point = cwnd;
			} else {
				ca->bic_K = cubic_root(cube_factor() * (ca->last_max_cwnd - cwnd));
				ca->bic_origin_point = ca->last_max_cwnd;
			}
		}

		/* t since the epoch plus one delay_min (usecs_to_jiffies rounds up), in
		 * 1/1024 s. */
		t = (__s32)(now - ca->epoch_start);
		t += usecs_to_jiffies(ca->delay_min);
		t <<= BICTCP_HZ;
		t /= HZ;

		offs = t < ca->bic_K ? ca->bic_K - t : t - ca->bic_K;
		/* C (t - K)^3 */
		delta = (cube_rtt_scale() * offs * offs * offs) >> (10 + 3 * BICTCP_HZ);
		if (t < ca->bic_K)
			bic_target = ca->bic_origin_point - delta;
		else
			bic_target = ca->bic_origin_point + delta;

		if (bic_target > cwnd)
			ca->cnt = cwnd / (bic_target - cwnd);
		else
			ca->cnt = 100 * cwnd; /* a very small increment */

		/* Without a known maximum, at least 5 % per RTT. */
		if (ca->last_max_cwnd == 0 && ca->cnt > 20)
			ca->cnt = 20;
	}

	if (tcp_friendliness) {
		/* The Reno estimate gains one segment per cwnd * beta_scale / 8 acked. */
		delta = (cwnd * beta_scale()) >> 3;
		if (delta && ca->ack_cnt > delta) {
			__u32 n = (ca->ack_cnt - 1) / delta;

			ca->ack_cnt -= n * delta;
			ca->tcp_cwnd += n;
		}
		if (ca->tcp_cwnd > cwnd) {
			max_cnt = cwnd / (ca->tcp_cwnd - cwnd);
			if (ca->cnt > max_cnt)
				ca->cnt = max_cnt;
		}
	}

	/* At most one segment per two acked: 1.5x per RTT. */
	if (ca->cnt < 2)
		ca->cnt = 2;
}

SEC("struct_ops")
void BPF_PROG(cubic_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = inet_csk_ca(sk);

	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	bictcp_update(ca, tp->snd_cwnd, acked);
	tcp_cong_avoid_ai(tp, ca->cnt, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(cubic_recalc_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = inet_csk_ca(sk);
	__u32 cwnd = tp->snd_cwnd, ss;

	ca->epoch_start = 0; /* end of epoch */
	if (cwnd < ca->last_max_cwnd && fast_convergence)
		ca->last_max_cwnd = (cwnd * (BICTCP_BETA_SCALE + beta)) / (2 * BICTCP_BETA_SCALE);
	else
		ca->last_max_cwnd = cwnd;
	ss = (cwnd * beta) / BICTCP_BETA_SCALE;
	return ss > 2 ? ss : 2;
}

SEC("struct_ops")
void BPF_PROG(cubic_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Loss) {
		bictcp_reset(inet_csk_ca(sk));
		bictcp_hystart_reset(sk);
	}
}

static __always_inline __u32 hystart_ack_delay(const struct sock *sk)
{
	unsigned long rate = sk->sk_pacing_rate;
	__u64 d;

	if (!rate)
		return 0;
	d = (__u64)gso_max_size * 4 * USEC_PER_SEC / rate;
	return d < USEC_PER_MSEC ? d : USEC_PER_MSEC;
}

static __always_inline __u32 hystart_delay_thresh(__u32 x)
{
	return x < HYSTART_DELAY_MIN ? HYSTART_DELAY_MIN : x > HYSTART_DELAY_MAX ? HYSTART_DELAY_MAX : x;
}

static __always_inline void hystart_update(struct sock *sk, __u32 delay)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = inet_csk_ca(sk);
	__u32 threshold;

	/* A new round starts once the previous one's data is acked, whatever cwnd. */
	if (after(tp->snd_una, ca->end_seq))
		bictcp_hystart_reset(sk);

	/* Detection itself waits for a large enough window. */
	if (tp->snd_cwnd < hystart_low_window)
		return;

	if (hystart_detect & HYSTART_ACK_TRAIN) {
		__u32 now = bictcp_clock_us(sk);

		/* ACKs closer than hystart_ack_delta_us continue the train. */
		if ((__s32)(now - ca->last_ack) <= hystart_ack_delta_us) {
			ca->last_ack = now;
			threshold = ca->delay_min + hystart_ack_delay(sk);
			/* Unpaced, the train ends slow start past delay_min / 2; paced
			 * sending may have spread it up to a whole RTT. */
			if (sk->sk_pacing_status == SK_PACING_NONE)
				threshold >>= 1;
			if ((__s32)(now - ca->round_start) > threshold) {
				ca->found = 1;
				tp->snd_ssthresh = tp->snd_cwnd;
			}
		}
	}

	if (hystart_detect & HYSTART_DELAY) {
		/* The minimum RTT of the round's first HYSTART_MIN_SAMPLES ACKs. */
		if (ca->curr_rtt > delay)
			ca->curr_rtt = delay;
		if (ca->sample_cnt < HYSTART_MIN_SAMPLES) {
			ca->sample_cnt++;
		} else if (ca->curr_rtt > ca->delay_min + hystart_delay_thresh(ca->delay_min >> 3)) {
			ca->found = 1;
			tp->snd_ssthresh = tp->snd_cwnd;
		}
	}
}

SEC("struct_ops")
void BPF_PROG(cubic_acked, struct sock *sk, const struct ack_sample *sample)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = inet_csk_ca(sk);
	__u32 delay;

	/* Calls for duplicate ACKs carry no RTT. */
	if (sample->rtt_us < 0)
		return;
	/* Discard delay samples right after fast recovery. */
	if (ca->epoch_start && (__s32)(tcp_jiffies32 - ca->epoch_start) < HZ)
		return;
	delay = sample->rtt_us;
	if (delay == 0)
		delay = 1;
	if (ca->delay_min == 0 || ca->delay_min > delay)
		ca->delay_min = delay;
	if (!ca->found && tcp_in_slow_start(tp) && hystart)
		hystart_update(sk, delay);
}

SEC("struct_ops")
__u32 BPF_PROG(cubic_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops cubic = {
	.init = (void *)cubic_init,
	.ssthresh = (void *)cubic_recalc_ssthresh,
	.cong_avoid = (void *)cubic_cong_avoid,
	.set_state = (void *)cubic_state,
	.undo_cwnd = (void *)cubic_undo_cwnd,
	.cwnd_event = (void *)cubic_cwnd_event,
	.pkts_acked = (void *)cubic_acked,
	.name = "bpf_cubic",
};
