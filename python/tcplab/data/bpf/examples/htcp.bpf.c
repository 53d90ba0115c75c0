// SPDX-License-Identifier: MIT
/*
 * htcp.bpf.c: H-TCP as Linux runs it (net/ipv4/tcp_htcp.c), as a BPF struct_ops
 * tcp_congestion_ops: the twin of tcplab's native `htcp` (crates/cc/src/htcp.rs),
 * so that a kernel without the module runs it.
 *
 * Model (Leith and Shorten, PFLDnet 2004, Sec. 3-4): AIMD whose increase grows
 * with the time delta since the last congestion event: Reno's alpha = 1 for the
 * first second, then alpha(delta) = 1 + 10 (delta - 1) + ((delta - 1) / 2)^2
 * segments per RTT (Eq. 3), scaled by minRTT / 100 ms (clamped to [0.5, 10]).
 * The decrease is beta = minRTT / maxRTT in [0.5, 0.8], or 0.5 when the
 * throughput before a loss moved by more than 20 % since the last one; the
 * increase is 2 (1 - beta) alpha(delta). Fixed point: alpha and beta in 1/128,
 * times in jiffies.
 *
 * Follows htcp_cong_time, htcp_ccount, htcp_reset, htcp_cwnd_undo, measure_rtt,
 * measure_achieved_throughput, htcp_beta_update, htcp_alpha_update,
 * htcp_param_update, htcp_recalc_ssthresh, htcp_cong_avoid, htcp_init,
 * htcp_state.
 *
 * Parameters: the module parameters use_rtt_scaling and use_bandwidth_switch, as
 * const volatile globals.
 *
 * Deviations, both the native port's: "no undo pending" is a flag of its own
 * (the kernel marks it with undo_last_cong = 0, a jiffies value that a
 * simulated flow started at t = 0 does read); cur_Bi = packetcount x HZ / dt is
 * computed in 64 bits (the kernel's u32 product wraps above ~4.3 M packets per
 * measurement at HZ = 1000).
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

#define ALPHA_BASE (1 << 7) /* 1.0 with shift << 7 */
#define BETA_MIN (1 << 6) /* 0.5 with shift << 7 */
#define BETA_MAX 102 /* 0.8 with shift << 7 */

const volatile int use_rtt_scaling = 1;
const volatile int use_bandwidth_switch = 1;

struct htcp {
	__u32 alpha; /* Fixed point arith, << 7 */
	__u8 beta; /* Fixed point arith, << 7 */
	__u8 modeswitch; /* Delay modeswitch until we had at least one congestion event */
	__u8 undo_pending; /* undo_last_cong is set (see Deviations) */
	__u16 pkts_acked;
	__u32 packetcount;
	__u32 minRTT;
	__u32 maxRTT;
	__u32 last_cong; /* Time since last congestion event end */
	__u32 undo_last_cong;
	__u32 undo_maxRTT;
	__u32 undo_old_maxB;
	/* Bandwidth estimation */
	__u32 minB;
	__u32 maxB;
	__u32 old_maxB;
	__u32 Bi;
	__u32 lasttime;
};

static __always_inline bool between(__u32 seq1, __u32 seq2, __u32 seq3)
{
	return seq3 - seq2 >= seq1 - seq2;
}

static __always_inline __u32 htcp_cong_time(const struct htcp *ca)
{
	return tcp_jiffies32 - ca->last_cong;
}

static __always_inline __u32 htcp_ccount(const struct htcp *ca)
{
	return htcp_cong_time(ca) / ca->minRTT;
}

static __always_inline void htcp_reset(struct htcp *ca)
{
	ca->undo_last_cong = ca->last_cong;
	ca->undo_pending = 1;
	ca->undo_maxRTT = ca->maxRTT;
	ca->undo_old_maxB = ca->old_maxB;
	ca->last_cong = tcp_jiffies32;
}

SEC("struct_ops")
__u32 BPF_PROG(htcp_cwnd_undo, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct htcp *ca = inet_csk_ca(sk);

	if (ca->undo_pending) {
		ca->last_cong = ca->undo_last_cong;
		ca->maxRTT = ca->undo_maxRTT;
		ca->old_maxB = ca->undo_old_maxB;
		ca->undo_pending = 0;
	}
	return tp->snd_cwnd > tp->prior_cwnd ? tp->snd_cwnd : tp->prior_cwnd;
}

static __always_inline void measure_rtt(struct sock *sk, __u32 srtt)
{
	struct htcp *ca = inet_csk_ca(sk);

	/* keep track of minimum RTT seen so far, minRTT is zero at first */
	if (ca->minRTT > srtt || !ca->minRTT)
		ca->minRTT = srtt;
	/* max RTT */
	if (tcplab_ca_state(sk) == TCP_CA_Open) {
		if (ca->maxRTT < ca->minRTT)
			ca->maxRTT = ca->minRTT;
		if (ca->maxRTT < srtt && srtt <= ca->maxRTT + msecs_to_jiffies(20))
			ca->maxRTT = srtt;
	}
}

static __always_inline void measure_achieved_throughput(struct sock *sk,
							const struct ack_sample *sample)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct htcp *ca = inet_csk_ca(sk);
	__u8 state = tcplab_ca_state(sk);
	__u32 now = tcp_jiffies32;
	__u32 alpha_segments;

	if (state == TCP_CA_Open)
		ca->pkts_acked = sample->pkts_acked;
	if (sample->rtt_us > 0)
		measure_rtt(sk, usecs_to_jiffies(sample->rtt_us));
	if (!use_bandwidth_switch)
		return;
	/* achieved throughput calculations */
	if (!(state == TCP_CA_Open || state == TCP_CA_Disorder)) {
		ca->packetcount = 0;
		ca->lasttime = now;
		return;
	}
	ca->packetcount += sample->pkts_acked;
	alpha_segments = ca->alpha >> 7 ? ca->alpha >> 7 : 1;
	if (ca->packetcount >= tp->snd_cwnd - alpha_segments && now - ca->lasttime >= ca->minRTT &&
	    ca->minRTT > 0) {
		__u32 cur_Bi = (__u64)ca->packetcount * HZ / (now - ca->lasttime);

		if (htcp_ccount(ca) <= 3) {
			/* just after backoff */
			ca->minB = ca->maxB = ca->Bi = cur_Bi;
		} else {
			ca->Bi = (3 * ca->Bi + cur_Bi) / 4;
			if (ca->Bi > ca->maxB)
				ca->maxB = ca->Bi;
			if (ca->minB > ca->maxB)
				ca->minB = ca->maxB;
		}
		ca->packetcount = 0;
		ca->lasttime = now;
	}
}

static __always_inline void htcp_beta_update(struct htcp *ca, __u32 minRTT, __u32 maxRTT)
{
	if (use_bandwidth_switch) {
		__u32 maxB = ca->maxB;
		__u32 old_maxB = ca->old_maxB;

		ca->old_maxB = ca->maxB;
		if (!between(5 * maxB, 4 * old_maxB, 6 * old_maxB)) {
			ca->beta = BETA_MIN;
			ca->modeswitch = 0;
			return;
		}
	}
	if (ca->modeswitch && minRTT > msecs_to_jiffies(10) && maxRTT) {
		__u8 beta = (__u8)((minRTT << 7) / maxRTT);

		ca->beta = beta < BETA_MIN ? BETA_MIN : beta > BETA_MAX ? BETA_MAX : beta;
	} else {
		ca->beta = BETA_MIN;
		ca->modeswitch = 1;
	}
}

static __always_inline void htcp_alpha_update(struct htcp *ca)
{
	__u32 minRTT = ca->minRTT;
	__u32 factor = 1;
	__u32 diff = htcp_cong_time(ca);

	if (diff > HZ) {
		diff -= HZ;
		factor = 1 + (10 * diff + ((diff / 2) * (diff / 2) / HZ)) / HZ;
	}
	if (use_rtt_scaling && minRTT) {
		__u32 scale = (HZ << 3) / (10 * minRTT);

		/* clamping ratio to interval [0.5,10]<<3 */
		scale = scale < (1 << 2) ? (1 << 2) : scale > (10 << 3) ? (10 << 3) : scale;
		factor = (factor << 3) / scale;
		if (!factor)
			factor = 1;
	}
	ca->alpha = 2 * factor * ((1 << 7) - ca->beta);
	if (!ca->alpha)
		ca->alpha = ALPHA_BASE;
}

/* After we have the rtt data to calculate beta, we'd still prefer to wait one rtt
 * before we adjust our beta to ensure we are working from a consistent data.
 * This function should be called when we hit a congestion event since only at
 * that point do we really have a real sense of maxRTT (the queues en route were
 * getting just too full now). */
static __always_inline void htcp_param_update(struct htcp *ca)
{
	__u32 minRTT = ca->minRTT;
	__u32 maxRTT = ca->maxRTT;

	htcp_beta_update(ca, minRTT, maxRTT);
	htcp_alpha_update(ca);
	/* add slowly fading memory for maxRTT to accommodate routing changes */
	if (minRTT > 0 && maxRTT > minRTT)
		ca->maxRTT = minRTT + ((maxRTT - minRTT) * 95) / 100;
}

SEC("struct_ops")
__u32 BPF_PROG(htcp_recalc_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct htcp *ca = inet_csk_ca(sk);
	__u32 s;

	htcp_param_update(ca);
	s = (tp->snd_cwnd * ca->beta) >> 7;
	return s > 2 ? s : 2;
}

SEC("struct_ops")
void BPF_PROG(htcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct htcp *ca = inet_csk_ca(sk);

	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
	} else {
		/* In dangerous area, increase slowly. In theory this is
		 * tp->snd_cwnd += alpha / tp->snd_cwnd */
		if ((tp->snd_cwnd_cnt * ca->alpha) >> 7 >= tp->snd_cwnd) {
			if (tp->snd_cwnd < tp->snd_cwnd_clamp)
				tp->snd_cwnd++;
			tp->snd_cwnd_cnt = 0;
			htcp_alpha_update(ca);
		} else {
			tp->snd_cwnd_cnt += ca->pkts_acked;
		}
		ca->pkts_acked = 1;
	}
}

SEC("struct_ops")
void BPF_PROG(htcp_init, struct sock *sk)
{
	struct htcp *ca = inet_csk_ca(sk);

	ca->alpha = ALPHA_BASE;
	ca->beta = BETA_MIN;
	ca->modeswitch = 0;
	ca->undo_pending = 0;
	ca->pkts_acked = 1;
	ca->packetcount = 0;
	ca->minRTT = 0;
	ca->maxRTT = 0;
	ca->undo_last_cong = 0;
	ca->undo_maxRTT = 0;
	ca->undo_old_maxB = 0;
	ca->minB = 0;
	ca->maxB = 0;
	ca->old_maxB = 0;
	ca->Bi = 0;
	ca->lasttime = 0;
	ca->last_cong = tcp_jiffies32;
}

SEC("struct_ops")
void BPF_PROG(htcp_state, struct sock *sk, __u8 new_state)
{
	struct htcp *ca = inet_csk_ca(sk);

	switch (new_state) {
	case TCP_CA_Open:
		if (ca->undo_pending) {
			ca->last_cong = tcp_jiffies32;
			ca->undo_pending = 0;
		}
		break;
	case TCP_CA_CWR:
	case TCP_CA_Recovery:
	case TCP_CA_Loss:
		htcp_reset(ca);
		break;
	}
}

SEC("struct_ops")
void BPF_PROG(htcp_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	measure_achieved_throughput(sk, sample);
}

SEC(".struct_ops")
struct tcp_congestion_ops htcp = {
	.init = (void *)htcp_init,
	.ssthresh = (void *)htcp_recalc_ssthresh,
	.cong_avoid = (void *)htcp_cong_avoid,
	.set_state = (void *)htcp_state,
	.undo_cwnd = (void *)htcp_cwnd_undo,
	.pkts_acked = (void *)htcp_pkts_acked,
	.name = "bpf_htcp",
};
