// SPDX-License-Identifier: MIT
/*
 * illinois.bpf.c: TCP Illinois as Linux runs it (net/ipv4/tcp_illinois.c), as a
 * BPF struct_ops tcp_congestion_ops: the twin of tcplab's native `illinois`
 * (crates/cc/src/illinois.rs), so that a kernel without the module runs it.
 *
 * Model (Liu, Basar and Srikant, Performance Evaluation 65(6-7), 2008, Sec. 3):
 * loss-based AIMD whose increase alpha and decrease beta follow the queueing
 * delay. Once per RTT, from the round's average delay da and the largest delay
 * seen dm (both over the base RTT): alpha is 10 segments per RTT while da is
 * below dm / 100 (held theta rounds after it was above), falling as
 * dm / (dm + da (alpha_max - alpha_min) / alpha_min) beyond; beta is 1/8 below
 * dm / 10, 1/2 above 8 dm / 10, linear between. Below win_thresh segments it is
 * Reno (alpha 1, beta 1/2).
 *
 * Follows rtt_reset, tcp_illinois_init, tcp_illinois_acked, max_delay,
 * avg_delay, alpha, beta, update_params, tcp_illinois_state,
 * tcp_illinois_cong_avoid, tcp_illinois_ssthresh; undo_cwnd is
 * tcp_reno_undo_cwnd (a kfunc).
 *
 * Parameters: the module parameters win_thresh and theta, as const volatile
 * globals.
 *
 * Deviations: cnt_rtt is a u32, as in the native port (the kernel's u16 wraps
 * after 65535 samples in one round).
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

#define ALPHA_SHIFT 7
#define ALPHA_SCALE (1U << ALPHA_SHIFT)
#define ALPHA_MIN ((3 * ALPHA_SCALE) / 10) /* ~0.3 */
#define ALPHA_MAX (10 * ALPHA_SCALE) /* 10.0 */
#define ALPHA_BASE ALPHA_SCALE /* 1.0 */
#define RTT_MAX (0xffffffffU / ALPHA_MAX) /* 3.3 secs */
#define BETA_SHIFT 6
#define BETA_SCALE (1U << BETA_SHIFT)
#define BETA_MIN (BETA_SCALE / 8) /* 0.125 */
#define BETA_MAX (BETA_SCALE / 2) /* 0.5 */
#define BETA_BASE BETA_MAX

const volatile __u32 win_thresh = 15;
const volatile __u32 theta = 5;

struct illinois {
	__u64 sum_rtt; /* sum of rtt's measured within last rtt */
	__u32 cnt_rtt; /* # of rtts measured within last rtt */
	__u32 base_rtt; /* min of all rtt in usec */
	__u32 max_rtt; /* max of all rtt in usec */
	__u32 end_seq; /* right edge of current RTT */
	__u32 alpha; /* Additive increase */
	__u32 beta; /* Muliplicative decrease */
	__u16 acked; /* # packets acked by current ACK */
	__u8 rtt_above; /* average rtt has gone above threshold */
	__u8 rtt_low; /* # of rtts measurements below threshold */
};

static __always_inline void rtt_reset(struct sock *sk)
{
	struct illinois *ca = inet_csk_ca(sk);

	ca->end_seq = tcp_sk(sk)->snd_nxt;
	ca->cnt_rtt = 0;
	ca->sum_rtt = 0;
	/* TODO: age max_rtt? (as the kernel's comment says) */
}

static __always_inline __u32 calc_alpha(struct illinois *ca, __u32 da, __u32 dm)
{
	__u32 d1 = dm / 100; /* Low threshold */

	if (da <= d1) {
		/* If never got out of low delay zone, then use max */
		if (!ca->rtt_above)
			return ALPHA_MAX;
		/* Wait for 5 good RTT's before allowing alpha to go alpha max. This
		 * prevents one good RTT from causing sudden window increase. */
		if (++ca->rtt_low < theta)
			return ca->alpha;
		ca->rtt_low = 0;
		ca->rtt_above = 0;
		return ALPHA_MAX;
	}
	ca->rtt_above = 1;
	/* Based on: (dm - d1) amin amax / (amin (dm - d1) + (amax - amin) (da - d1))
	 * with alpha = amax at da = d1 and amin at da = dm. */
	dm -= d1;
	da -= d1;
	return (dm * ALPHA_MAX) / (dm + (da * (ALPHA_MAX - ALPHA_MIN)) / ALPHA_MIN);
}

static __always_inline __u32 calc_beta(__u32 da, __u32 dm)
{
	__u32 d2, d3;

	d2 = dm / 10;
	if (da <= d2)
		return BETA_MIN;
	d3 = (8 * dm) / 10;
	if (da >= d3 || d3 <= d2)
		return BETA_MAX;
	/* Based on: beta = bmin + (bmax - bmin) (da - d2) / (d3 - d2) */
	return (BETA_MIN * d3 - BETA_MAX * d2 + (BETA_MAX - BETA_MIN) * da) / (d3 - d2);
}

/* Update alpha and beta values once per RTT. */
static __always_inline void update_params(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct illinois *ca = inet_csk_ca(sk);

	if (tp->snd_cwnd < win_thresh) {
		ca->alpha = ALPHA_BASE;
		ca->beta = BETA_BASE;
	} else if (ca->cnt_rtt > 0) {
		__u32 dm = ca->max_rtt - ca->base_rtt;
		__u32 da = (__u32)(ca->sum_rtt / ca->cnt_rtt) - ca->base_rtt;

		ca->alpha = calc_alpha(ca, da, dm);
		ca->beta = calc_beta(da, dm);
	}
	rtt_reset(sk);
}

SEC("struct_ops")
void BPF_PROG(illinois_init, struct sock *sk)
{
	struct illinois *ca = inet_csk_ca(sk);

	ca->alpha = ALPHA_MAX;
	ca->beta = BETA_BASE;
	ca->base_rtt = 0x7fffffff;
	ca->max_rtt = 0;
	ca->acked = 0;
	ca->rtt_low = 0;
	ca->rtt_above = 0;
	rtt_reset(sk);
}

/* Measure RTT for each ack. */
SEC("struct_ops")
void BPF_PROG(illinois_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct illinois *ca = inet_csk_ca(sk);
	__s32 rtt_us = sample->rtt_us;
	__u32 rtt;

	ca->acked = sample->pkts_acked > 0xffff ? 0xffff : sample->pkts_acked;
	/* dup ack, no rtt sample */
	if (rtt_us < 0)
		return;
	/* ignore bogus values, this prevents wraparound in alpha math */
	rtt = (__u32)rtt_us > RTT_MAX ? RTT_MAX : (__u32)rtt_us;
	/* keep track of minimum RTT seen so far */
	if (ca->base_rtt > rtt)
		ca->base_rtt = rtt;
	/* and max */
	if (ca->max_rtt < rtt)
		ca->max_rtt = rtt;
	++ca->cnt_rtt;
	ca->sum_rtt += rtt;
}

/* Reset state on entering loss. */
SEC("struct_ops")
void BPF_PROG(illinois_state, struct sock *sk, __u8 new_state)
{
	struct illinois *ca = inet_csk_ca(sk);

	if (new_state == TCP_CA_Loss) {
		ca->alpha = ALPHA_BASE;
		ca->beta = BETA_BASE;
		ca->rtt_low = 0;
		ca->rtt_above = 0;
		rtt_reset(sk);
	}
}

/* Increase window in response to successful acknowledgment. */
SEC("struct_ops")
void BPF_PROG(illinois_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct illinois *ca = inet_csk_ca(sk);

	if (after(ack, ca->end_seq))
		update_params(sk);
	/* RFC2861 only increase cwnd if fully utilized */
	if (!tcp_is_cwnd_limited(sk))
		return;
	/* In slow start */
	if (tcp_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
	} else {
		__u32 delta;

		/* snd_cwnd_cnt is # of packets since last cwnd increment */
		tp->snd_cwnd_cnt += ca->acked;
		ca->acked = 1;
		/* This is close approximation of: tp->snd_cwnd += alpha/tp->snd_cwnd */
		delta = ((__u64)tp->snd_cwnd_cnt * ca->alpha) >> ALPHA_SHIFT;
		if (delta >= tp->snd_cwnd) {
			__u32 c = tp->snd_cwnd + delta / tp->snd_cwnd;

			tp->snd_cwnd = c < tp->snd_cwnd_clamp ? c : tp->snd_cwnd_clamp;
			tp->snd_cwnd_cnt = 0;
		}
	}
}

SEC("struct_ops")
__u32 BPF_PROG(illinois_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct illinois *ca = inet_csk_ca(sk);
	__u32 cut = ((__u64)tp->snd_cwnd * ca->beta) >> BETA_SHIFT;
	__u32 s = tp->snd_cwnd - cut;

	/* Multiplicative decrease */
	return s > 2 ? s : 2;
}

SEC("struct_ops")
__u32 BPF_PROG(illinois_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops illinois = {
	.init = (void *)illinois_init,
	.ssthresh = (void *)illinois_ssthresh,
	.cong_avoid = (void *)illinois_cong_avoid,
	.set_state = (void *)illinois_state,
	.pkts_acked = (void *)illinois_acked,
	.undo_cwnd = (void *)illinois_undo_cwnd,
	.name = "bpf_illinois",
};
