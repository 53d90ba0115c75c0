// SPDX-License-Identifier: MIT
/*
 * cdg.bpf.c: CAIA Delay-Gradient as Linux runs it (net/ipv4/tcp_cdg.c), as a BPF
 * struct_ops tcp_congestion_ops: the twin of tcplab's native `cdg`
 * (crates/cc/src/cdg.rs), so that a kernel without the module runs it.
 *
 * Model (Hayes and Armitage, "Revisiting TCP congestion control using delay
 * gradients", IFIP Networking 2011, Sec. 3-4): once per RTT the round's smallest
 * and largest RTT and their change from the previous round (the gradients g_min,
 * g_max), summed over a window of `window` = 8 rounds. A positive gradient (a
 * queue growing) backs off with probability 1 - e^(-g * backoff_factor / 10^6): a
 * CWR reduction to cwnd * backoff_beta / 1024 (0.7071). Otherwise growth is
 * Reno's. A shadow window remembers what delay backoffs gave up, so a loss halves
 * max(shadow, cwnd); after `use_ineff` = 5 backoffs in a row that did not lower
 * the delay CDG stops backing off. Slow start ends by HyStart's ACK-train and
 * delay tests; RTT samples of delayed ACKs are filtered (Hayes' heuristic).
 *
 * Follows nexp_u32, tcp_cdg_hystart_update, tcp_cdg_grad, tcp_cdg_backoff,
 * tcp_cdg_cong_avoid, tcp_cdg_acked, tcp_cdg_ssthresh, tcp_cdg_undo_cwnd,
 * tcp_cdg_cwnd_event and tcp_cdg_init; growth is tcp_reno_cong_avoid (a kfunc).
 *
 * Parameters: the module parameters window, backoff_beta, backoff_factor,
 * hystart_detect, use_ineff, use_shadow and use_tolerance, as const volatile
 * globals with tcp_cdg.c's defaults (a flow's params set them before load).
 *
 * Randomness: prandom_u32()/get_random_u32() is bpf_get_prandom_u32(), drawn where
 * the kernel draws (only for a positive gradient). The simulator serves it from
 * the flow's seeded stream, the one the native port's `seed` seeds, so in the
 * simulator the twin and the port draw the same numbers and give one run
 * (crates/controllers/tests/bpf_flows.rs); on a kernel it is the kernel's own.
 *
 * Deviations (the native port's, so that the two give one run):
 * - The backoff's tcp_enter_cwr is not a kfunc a BPF congestion control may call.
 *   The twin does what CWR amounts to, as the port does: ssthresh =
 *   tcp_cdg_ssthresh (remembering cwnd for undo), cwnd = ssthresh at once (the
 *   kernel's PRR reaches it over the next RTT), then no growth and no gradient
 *   round until an ACK passes the snd_nxt of the backoff, when the
 *   CA_EVENT_COMPLETE_CWR bookkeeping runs; ssthresh is not recomputed inside that
 *   reduction. The socket never enters the CWR state, so no CWR flag is sent.
 * - The gradient ring (the kernel's kcalloc'd `gradients`) is a socket-local
 *   storage (BPF_MAP_TYPE_SK_STORAGE) of 256 entries, the largest window the
 *   module accepts; the ring itself is the kernel's. As in the kernel, a socket
 *   whose storage cannot be had runs with window 1 and extrapolates by `window`
 *   (the port always has its ring and does not port that fallback; in the
 *   simulator the storage is always created).
 * - The ACK-train clock is bpf_ktime_get_ns() / 1000 (CLOCK_MONOTONIC, us; the
 *   kernel reads local_clock()); only differences of it are used. In the
 *   simulator it is the port's now_us.
 * - A window that is not a power of two <= 256 is not refused (the module refuses
 *   it at load; a BPF program cannot refuse its globals): the ring index is masked
 *   to 256 entries, so such a window is merely wrong, never out of bounds.
 * - Signed divisions are written as unsigned ones on the magnitude (clang's BPF
 *   target before cpu v4 has no signed division); both truncate toward zero, as C
 *   and the port do.
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

#define BPF_MAP_TYPE_SK_STORAGE 24
#define BPF_F_NO_PREALLOC 1
#define BPF_SK_STORAGE_GET_F_CREATE 1

#define HYSTART_ACK_TRAIN 1
#define HYSTART_DELAY 2
/* The module refuses window > 256 (tcp_cdg_register): the ring's size here. */
#define CDG_MAX_WINDOW 256

/* module parameters (tcp_cdg.c defaults) */
const volatile int window = 8;
const volatile __u32 backoff_beta = 724; /* 0.7071 * 1024, sqrt 0.5 */
const volatile __u32 backoff_factor = 42;
const volatile __u32 hystart_detect = 3;
const volatile __u32 use_ineff = 5;
const volatile int use_shadow = 1;
const volatile int use_tolerance = 0;

enum cdg_state {
	CDG_UNKNOWN = 0,
	CDG_NONFULL = 1,
	CDG_FULL = 2,
	CDG_BACKOFF = 3,
};

struct cdg_minmax {
	__s32 min;
	__s32 max;
};

struct cdg_ring {
	struct cdg_minmax g[CDG_MAX_WINDOW];
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cdg_ring);
} cdg_gradients SEC(".maps");

/* struct cdg, without the gradients pointer (the ring is in cdg_gradients) and
 * with the emulated CWR's end (see Deviations). */
struct cdg {
	struct cdg_minmax rtt;
	struct cdg_minmax rtt_prev;
	struct cdg_minmax gsum;
	__u8 gfilled;
	__u8 tail;
	__u8 state;
	__u8 delack;
	__u32 rtt_seq;
	__u32 undo_cwnd;
	__u32 shadow_wnd;
	__u16 backoff_cnt;
	__u16 sample_cnt;
	__s32 delay_min;
	__u32 last_ack;
	__u32 round_start;
	__u32 cwr_high_seq; /* snd_nxt at the backoff, while in_cwr */
	__u8 in_cwr;
};

static __always_inline bool mm_empty(const struct cdg_minmax *m)
{
	return m->min == 0 && m->max == 0;
}

static __always_inline __s32 min_not_zero(__s32 a, __s32 b)
{
	if (a == 0)
		return b;
	if (b == 0)
		return a;
	return a < b ? a : b;
}

/* x / d truncated toward zero, d > 0 (C's and Rust's signed division). */
static __always_inline __s32 sdiv(__s32 x, __u32 d)
{
	if (x >= 0)
		return (__s32)((__u32)x / d);
	return -(__s32)((0U - (__u32)x) / d);
}

/* DIV_ROUND_CLOSEST(x, d) for a signed x and a positive d. */
static __always_inline __s32 div_round_closest(__s32 x, __u32 d)
{
	if (x > 0)
		return sdiv((__s32)((__u32)x + d / 2), d);
	return sdiv((__s32)((__u32)x - d / 2), d);
}

/* nexp_u32: e^(-ux / 10^6) * U32_MAX. The kernel multiplies by v[i] + 1 for each
 * set bit i - 1 of ux >> 8 and by v[0] + 1 = 2^16 (the identity) for the others;
 * the 16 bits are unrolled here, the unset ones skipped. */
static __always_inline __u32 nexp_u32(__u32 ux)
{
	/* exp(-x) * 65536 - 1 for x = 0, 0.000256, 0.000512, ... (tcp_cdg.c) */
	const __u16 v[] = {
		65535,
		65518, 65501, 65468, 65401, 65267, 65001, 64470, 63422,
		61378, 57484, 50423, 38795, 22965, 8047, 987, 14,
	};
	__u32 msb = ux >> 8;
	__u32 res;
	int i;

	/* Cut off when ux >= 2^24 (actual result is <= 222/U32_MAX). */
	if (msb > 0xffff)
		return 0;
	/* The first eight bits linearly. */
	res = 0xffffffffU - (ux & 0xff) * (0xffffffffU / 1000000);
#pragma unroll
	for (i = 1; i <= 16; i++) {
		if ((msb >> (i - 1)) & 1)
			res = ((__u64)res * ((__u32)v[i] + 1)) >> 16;
	}
	return res;
}

static __always_inline struct cdg_ring *ring(struct sock *sk, __u64 flags)
{
	if (window <= 1)
		return 0;
	return bpf_sk_storage_get(&cdg_gradients, sk, 0, flags);
}

static __always_inline void ring_clear(struct cdg_ring *r)
{
	int i;

	for (i = 0; i < CDG_MAX_WINDOW; i++) {
		if (i >= window)
			break;
		r->g[i].min = 0;
		r->g[i].max = 0;
	}
}

static __always_inline void cdg_reset(struct cdg *ca)
{
	ca->rtt.min = ca->rtt.max = 0;
	ca->rtt_prev.min = ca->rtt_prev.max = 0;
	ca->gsum.min = ca->gsum.max = 0;
	ca->gfilled = 0;
	ca->tail = 0;
	ca->state = CDG_UNKNOWN;
	ca->delack = 0;
	ca->rtt_seq = 0;
	ca->undo_cwnd = 0;
	ca->shadow_wnd = 0;
	ca->backoff_cnt = 0;
	ca->sample_cnt = 0;
	ca->delay_min = 0;
	ca->last_ack = 0;
	ca->round_start = 0;
	ca->cwr_high_seq = 0;
	ca->in_cwr = 0;
}

static __always_inline void tcp_cdg_hystart_update(struct sock *sk)
{
	struct cdg *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	ca->delay_min = min_not_zero(ca->delay_min, ca->rtt.min);
	if (ca->delay_min == 0)
		return;

	if (hystart_detect & HYSTART_ACK_TRAIN) {
		__u32 now_us = (__u32)(bpf_ktime_get_ns() / 1000);

		if (ca->last_ack == 0 || !tcp_is_cwnd_limited(sk)) {
			ca->last_ack = now_us;
			ca->round_start = now_us;
		} else if (before(now_us, ca->last_ack + 3000)) {
			/* ACKs closer than 3 ms form a train; it ends slow start once
			 * it spans half the minimum delay (at least 125 us). */
			__u32 base_owd = (__u32)ca->delay_min / 2U;

			if (base_owd < 125U)
				base_owd = 125U;
			ca->last_ack = now_us;
			if (after(now_us, ca->round_start + base_owd)) {
				tp->snd_ssthresh = tp->snd_cwnd;
				return;
			}
		}
	}

	if (hystart_detect & HYSTART_DELAY) {
		if (ca->sample_cnt < 8) {
			ca->sample_cnt++;
		} else {
			__u32 d = (__u32)ca->delay_min;
			__u32 t = d + d / 8U;
			__s32 thresh = (__s32)(t > 125U ? t : 125U);

			if (ca->rtt.min > thresh)
				tp->snd_ssthresh = tp->snd_cwnd;
		}
	}
}

static __always_inline __s32 tcp_cdg_grad(struct sock *sk, struct cdg *ca)
{
	struct cdg_ring *r = ring(sk, 0);
	__s32 gmin = (__s32)((__u32)ca->rtt.min - (__u32)ca->rtt_prev.min);
	__s32 gmax = (__s32)((__u32)ca->rtt.max - (__u32)ca->rtt_prev.max);
	__s32 grad;

	if (r) {
		__u8 t = ca->tail;

		ca->gsum.min = (__s32)((__u32)ca->gsum.min + (__u32)gmin - (__u32)r->g[t].min);
		ca->gsum.max = (__s32)((__u32)ca->gsum.max + (__u32)gmax - (__u32)r->g[t].max);
		r->g[t].min = gmin;
		r->g[t].max = gmax;
		ca->tail = (t + 1) & (window - 1);
		gmin = ca->gsum.min;
		gmax = ca->gsum.max;
	}

	/* The sums stand for (rtt_latest - rtt_oldest); no division by window. */
	grad = gmin > 0 ? gmin : gmax;

	/* Extrapolate missing values in the gradient window. */
	if (!ca->gfilled) {
		if (!r && window > 1)
			grad = (__s32)((__u32)grad * (__u32)window); /* no ring */
		else if (ca->tail == 0)
			ca->gfilled = 1;
		else
			grad = sdiv((__s32)((__u32)grad * (__u32)window), ca->tail);
	}

	/* A drop of the delay: the last backoff was effectual. */
	if (gmin <= -32 || gmax <= -32)
		ca->backoff_cnt = 0;

	if (use_tolerance) {
		/* Reduce small variations to zero. */
		gmin = div_round_closest(gmin, 64);
		gmax = div_round_closest(gmax, 64);

		if (gmin > 0 && gmax <= 0)
			ca->state = CDG_FULL;
		else if ((gmin > 0 && gmax > 0) || gmax < 0)
			ca->state = CDG_NONFULL;
	}
	return grad;
}

/* tcp_cdg_ssthresh's body; inside the emulated CWR the kernel would not call it. */
static __always_inline __u32 tcp_cdg_ssthresh(struct sock *sk)
{
	struct cdg *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 cwnd = tp->snd_cwnd;
	__u32 s;

	if (ca->in_cwr)
		return tp->snd_ssthresh;

	ca->undo_cwnd = cwnd;

	if (ca->state == CDG_BACKOFF) {
		__u32 beta = backoff_beta < 1024U ? backoff_beta : 1024U;

		s = (cwnd * beta) >> 10;
		return s > 2U ? s : 2U;
	}

	if (ca->state == CDG_NONFULL && use_tolerance)
		return cwnd;

	s = ca->shadow_wnd >> 1;
	ca->shadow_wnd = s < cwnd ? s : cwnd;
	if (use_shadow) {
		s = ca->shadow_wnd > (cwnd >> 1) ? ca->shadow_wnd : (cwnd >> 1);
		return s > 2U ? s : 2U;
	}
	s = cwnd >> 1;
	return s > 2U ? s : 2U;
}

/* What tcp_enter_cwr amounts to (see Deviations). */
static __always_inline void cdg_enter_cwr(struct sock *sk)
{
	struct cdg *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 ssthresh = tcp_cdg_ssthresh(sk);

	tp->snd_ssthresh = ssthresh;
	tp->snd_cwnd_cnt = 0;
	if (tp->snd_cwnd > ssthresh)
		tp->snd_cwnd = ssthresh;
	ca->cwr_high_seq = tp->snd_nxt;
	ca->in_cwr = 1;
}

/* The CA_EVENT_COMPLETE_CWR bookkeeping: a fresh round after the reduction. */
static __always_inline void cdg_complete_cwr(struct sock *sk)
{
	struct cdg *ca = inet_csk_ca(sk);

	ca->state = CDG_UNKNOWN;
	ca->rtt_seq = tcp_sk(sk)->snd_nxt;
	ca->rtt_prev = ca->rtt;
	ca->rtt.min = ca->rtt.max = 0;
	ca->in_cwr = 0;
}

static __always_inline bool tcp_cdg_backoff(struct sock *sk, __u32 grad)
{
	struct cdg *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (bpf_get_prandom_u32() <= nexp_u32(grad * backoff_factor))
		return false;

	if (use_ineff) {
		ca->backoff_cnt++;
		if (ca->backoff_cnt > use_ineff)
			return false;
	}

	if (tp->snd_cwnd > ca->shadow_wnd)
		ca->shadow_wnd = tp->snd_cwnd;
	ca->state = CDG_BACKOFF;
	cdg_enter_cwr(sk);
	return true;
}

SEC("struct_ops")
void BPF_PROG(cdg_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct cdg *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 prior_snd_cwnd;
	__u32 incr;

	/* The emulated CWR: the kernel calls no cong_avoid until it ends. */
	if (ca->in_cwr) {
		if (!after(ack, ca->cwr_high_seq))
			return;
		cdg_complete_cwr(sk);
	}

	if (tcp_in_slow_start(tp) && hystart_detect)
		tcp_cdg_hystart_update(sk);

	if (after(ack, ca->rtt_seq) && !mm_empty(&ca->rtt)) {
		__s32 grad = 0;

		if (!mm_empty(&ca->rtt_prev))
			grad = tcp_cdg_grad(sk, ca);
		ca->rtt_seq = tp->snd_nxt;
		ca->rtt_prev = ca->rtt;
		ca->rtt.min = ca->rtt.max = 0;
		ca->last_ack = 0;
		ca->sample_cnt = 0;

		if (grad > 0 && tcp_cdg_backoff(sk, (__u32)grad))
			return;
	}

	if (!tcp_is_cwnd_limited(sk)) {
		if (tp->snd_cwnd < ca->shadow_wnd)
			ca->shadow_wnd = tp->snd_cwnd;
		return;
	}

	prior_snd_cwnd = tp->snd_cwnd;
	tcp_reno_cong_avoid(sk, ack, acked);

	incr = tp->snd_cwnd - prior_snd_cwnd;
	if (ca->shadow_wnd + incr > ca->shadow_wnd)
		ca->shadow_wnd = ca->shadow_wnd + incr;
}

SEC("struct_ops")
void BPF_PROG(cdg_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct cdg *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	__s32 rtt_us = sample->rtt_us;

	if (rtt_us <= 0)
		return;

	/* A heuristic for filtering delayed ACKs (Hayes, CAIA TR 100219A, 2010). */
	if (tp->sacked_out == 0) {
		if (sample->pkts_acked == 1 && ca->delack) {
			/* A delayed ACK is only used for the minimum if it is provably
			 * lower than an existing non-zero minimum. */
			if (rtt_us < ca->rtt.min)
				ca->rtt.min = rtt_us;
			ca->delack--;
			return;
		} else if (sample->pkts_acked > 1 && ca->delack < 5) {
			ca->delack++;
		}
	}

	ca->rtt.min = min_not_zero(ca->rtt.min, rtt_us);
	if (rtt_us > ca->rtt.max)
		ca->rtt.max = rtt_us;
}

SEC("struct_ops")
__u32 BPF_PROG(cdg_ssthresh, struct sock *sk)
{
	return tcp_cdg_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(cdg_undo_cwnd, struct sock *sk)
{
	struct cdg *ca = inet_csk_ca(sk);
	__u32 cwnd = tcp_sk(sk)->snd_cwnd;

	return cwnd > ca->undo_cwnd ? cwnd : ca->undo_cwnd;
}

SEC("struct_ops")
void BPF_PROG(cdg_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct cdg *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct cdg_ring *r;

	switch (ev) {
	case CA_EVENT_CWND_RESTART:
		r = ring(sk, 0);
		if (r)
			ring_clear(r);
		cdg_reset(ca);
		ca->rtt_seq = tp->snd_nxt;
		ca->shadow_wnd = tp->snd_cwnd;
		break;
	case CA_EVENT_COMPLETE_CWR:
		cdg_complete_cwr(sk);
		break;
	default:
		break;
	}
}

SEC("struct_ops")
void BPF_PROG(cdg_init, struct sock *sk)
{
	struct cdg *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	struct cdg_ring *r;

	cdg_reset(ca);
	/* The kernel's kcalloc: a zeroed ring (a socket that ran CDG before keeps
	 * its storage, so clear it). */
	r = ring(sk, BPF_SK_STORAGE_GET_F_CREATE);
	if (r)
		ring_clear(r);
	ca->rtt_seq = tp->snd_nxt;
	ca->shadow_wnd = tp->snd_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops cdg = {
	.init = (void *)cdg_init,
	.ssthresh = (void *)cdg_ssthresh,
	.cong_avoid = (void *)cdg_cong_avoid,
	.cwnd_event = (void *)cdg_cwnd_event,
	.pkts_acked = (void *)cdg_acked,
	.undo_cwnd = (void *)cdg_undo_cwnd,
	.name = "bpf_cdg",
};
