// SPDX-License-Identifier: MIT
/*
 * lp.bpf.c: TCP-LP (Low Priority) as Linux runs it (net/ipv4/tcp_lp.c), as a
 * BPF struct_ops tcp_congestion_ops: the twin of tcplab's native `lp`
 * (crates/cc/src/lp.rs), so that a kernel without the module runs it.
 *
 * Model (Kuzmanovic and Knightly, INFOCOM 2003, Sec. III): a background flow
 * that infers "early congestion" when the smoothed one-way delay exceeds its
 * minimum by more than 15 % of the observed range (d_min + 0.15 (d_max -
 * d_min)). The first indication halves cwnd and starts an inference time of
 * three RTTs; a second one inside it drops cwnd to 1. Within the inference time
 * cwnd does not grow; otherwise growth and loss handling are Reno's.
 *
 * Follows tcp_lp_init, tcp_lp_cong_avoid, tcp_lp_owd_calculator,
 * tcp_lp_rtt_sample and tcp_lp_pkts_acked; ssthresh and undo_cwnd are
 * tcp_reno_ssthresh and tcp_reno_undo_cwnd (kfuncs), growth
 * tcp_reno_cong_avoid (a kfunc).
 *
 * Deviations (the native port's, so that the two give one run):
 * - The delay sample is the ACK's RTT in the kernel's timestamp unit (ms,
 *   TCP_TS_HZ 1000, truncated), not TSval - TSecr: the simulator carries no TCP
 *   timestamps (its socket image has no rx_opt), so a twin that read
 *   rx_opt.rcv_tsval/rcv_tsecr, as it could on a kernel, could not give the port's
 *   run in the simulator. The remote-HZ
 *   estimator (tcp_lp_remote_hz_estimator) is therefore not ported, and the
 *   inference time is 3 x that RTT (the kernel's 3 x (now - TSecr)), updated on
 *   ACKs with an RTT sample. On a kernel the twin thus behaves as the port, not
 *   as tcp_lp.ko, which without timestamps never gets a valid delay.
 * - `last_drop` "never" is a flag (have_drop), not the kernel's 0.
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

/* TCP_TS_HZ (include/net/tcp.h): the timestamp clock, 1000 Hz; LP_RESOL. */
#define TCP_TS_HZ 1000
/* tcp_lp_pkts_acked: the threshold is min + 15 % of the range (gamma = 0.15). */
#define LP_THRESHOLD_PERCENT 15
/* tcp_lp_pkts_acked: lp->inference = 3 * delta. */
#define LP_INFERENCE_RTTS 3

/* enum tcp_lp_state */
#define LP_VALID_RHZ (1 << 0)
#define LP_VALID_OWD (1 << 1)
#define LP_WITHIN_THR (1 << 3)
#define LP_WITHIN_INF (1 << 4)

struct lp {
	__u32 flag;
	__u32 sowd; /* smoothed delay << 3 (ms) */
	__u32 owd_min;
	__u32 owd_max;
	__u32 owd_max_rsv;
	__u32 last_drop; /* ms, valid when have_drop */
	__u32 inference; /* ms */
	__u32 have_drop;
};

SEC("struct_ops")
void BPF_PROG(lp_init, struct sock *sk)
{
	struct lp *lp = inet_csk_ca(sk);

	lp->flag = 0;
	lp->sowd = 0;
	lp->owd_min = 0xffffffff;
	lp->owd_max = 0;
	lp->owd_max_rsv = 0;
	lp->last_drop = 0;
	lp->inference = 0;
	lp->have_drop = 0;
}

SEC("struct_ops")
void BPF_PROG(lp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct lp *lp = inet_csk_ca(sk);

	if (!(lp->flag & LP_WITHIN_INF))
		tcp_reno_cong_avoid(sk, ack, acked);
}

/* tcp_lp_rtt_sample, with tcp_lp_owd_calculator's validity test (mowd > 0). */
static __always_inline void lp_rtt_sample(struct lp *lp, __u32 mowd)
{
	lp->flag &= ~LP_VALID_OWD;
	if (mowd == 0)
		return;
	lp->flag |= LP_VALID_OWD;

	if (mowd < lp->owd_min)
		lp->owd_min = mowd;
	/* Forget the largest maximum: keep the one below it. */
	if (mowd > lp->owd_max) {
		if (mowd > lp->owd_max_rsv) {
			if (lp->owd_max_rsv == 0)
				lp->owd_max = mowd;
			else
				lp->owd_max = lp->owd_max_rsv;
			lp->owd_max_rsv = mowd;
		} else {
			lp->owd_max = mowd;
		}
	}
	/* sowd = 7/8 sowd + 1/8 sample; the first sample taken as is. */
	if (lp->sowd != 0)
		lp->sowd += mowd - (lp->sowd >> 3);
	else
		lp->sowd = mowd << 3;
}

SEC("struct_ops")
void BPF_PROG(lp_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct lp *lp = inet_csk_ca(sk);
	__u32 now = (__u32)(tp->tcp_mstamp / (USEC_PER_SEC / TCP_TS_HZ));
	__s32 rtt_us = sample->rtt_us;
	__u32 threshold;

	if (rtt_us > 0) {
		__u32 rtt_ts = (__u32)((__u64)rtt_us / (USEC_PER_SEC / TCP_TS_HZ));

		lp_rtt_sample(lp, rtt_ts);
		/* now - TSecr: the RTT. */
		if ((__s32)rtt_ts > 0)
			lp->inference = LP_INFERENCE_RTTS * rtt_ts;
	}

	/* test if within inference */
	if (lp->have_drop && now - lp->last_drop < lp->inference)
		lp->flag |= LP_WITHIN_INF;
	else
		lp->flag &= ~LP_WITHIN_INF;

	/* test if within threshold */
	threshold = lp->owd_min + LP_THRESHOLD_PERCENT * (lp->owd_max - lp->owd_min) / 100;
	if ((lp->sowd >> 3) < threshold)
		lp->flag |= LP_WITHIN_THR;
	else
		lp->flag &= ~LP_WITHIN_THR;

	if (lp->flag & LP_WITHIN_THR)
		return;

	/* Early congestion: restart the range from the smoothed delay. */
	lp->owd_min = lp->sowd >> 3;
	lp->owd_max = lp->sowd >> 2;
	lp->owd_max_rsv = lp->sowd >> 2;

	if (lp->flag & LP_WITHIN_INF)
		/* Again within the inference time: the congestion persists. */
		tp->snd_cwnd = 1U;
	else
		/* happened after inference: cut cwnd in half */
		tp->snd_cwnd = (tp->snd_cwnd >> 1U) > 1U ? tp->snd_cwnd >> 1U : 1U;

	lp->last_drop = now;
	lp->have_drop = 1;
}

SEC("struct_ops")
__u32 BPF_PROG(lp_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(lp_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops lp = {
	.init = (void *)lp_init,
	.ssthresh = (void *)lp_ssthresh,
	.cong_avoid = (void *)lp_cong_avoid,
	.pkts_acked = (void *)lp_pkts_acked,
	.undo_cwnd = (void *)lp_undo_cwnd,
	.name = "bpf_lp",
};
