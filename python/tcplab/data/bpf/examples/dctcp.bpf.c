// SPDX-License-Identifier: MIT
/*
 * dctcp.bpf.c: Data Center TCP as Linux 6.18 runs it (net/ipv4/tcp_dctcp.c,
 * tcp_dctcp.h; Alizadeh et al., SIGCOMM 2010; RFC 8257), as a BPF struct_ops
 * tcp_congestion_ops.
 *
 * Model. The sender keeps alpha, an EWMA (gain 1/2^shift_g) of the fraction of
 * delivered segments whose ACKs echoed CE, updated once per window of data (when
 * snd_una passes the snd_nxt recorded at the previous update), in 1/1024 and starting
 * "full" (alpha_on_init = 1024). An ECN echo's reduction asks ssthresh, answered with
 * cwnd (1 - alpha / 2); growth is Reno's; a loss halves instead; undo restores
 * max(cwnd, cwnd before the last cut). The receiving host's instance echoes each
 * segment's CE state exactly: when the state flips while a delayed ACK is pending,
 * that ACK goes out first with the old state, and the new state is ACKed at once.
 * TCP_CONG_NEEDS_ECN makes the connection negotiate ECN.
 *
 * Follows: dctcp_reset, dctcp_init, dctcp_ssthresh, dctcp_update_alpha (in_ack_event),
 * dctcp_react_to_loss, dctcp_state, dctcp_ece_ack_cwr, dctcp_ece_ack_update,
 * dctcp_cwnd_event, dctcp_cwnd_undo; cong_avoid is the kfunc tcp_reno_cong_avoid.
 *
 * Parameters: shift_g (dctcp_shift_g, 4) and alpha_on_init (dctcp_alpha_on_init, 1024).
 *
 * Deviations:
 * - Without ECN the kernel switches the socket to dctcp_reno (icsk_ca_ops); a BPF
 *   program cannot, so a flag in the private state makes every callback behave as
 *   dctcp_reno's (Reno's ssthresh and undo, no CE handling). INET_ECN_dontxmit is not
 *   available to BPF either (the simulator does not mark a non-ECN flow's packets ECT).
 * - No PLB (tcp_plb_*), as in the simulator's native dctcp.
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

#define DCTCP_MAX_ALPHA 1024U

const volatile __u32 shift_g = 4;
const volatile __u32 alpha_on_init = DCTCP_MAX_ALPHA;

struct dctcp {
	__u32 old_delivered;
	__u32 old_delivered_ce;
	__u32 prior_rcv_nxt;
	__u32 dctcp_alpha;
	__u32 next_seq;
	__u32 ce_state;
	__u32 loss_cwnd;
	__u32 reno_fallback; /* no ECN: behave as dctcp_reno */
};

static __always_inline void dctcp_reset(const struct tcp_sock *tp, struct dctcp *ca)
{
	ca->next_seq = tp->snd_nxt;
	ca->old_delivered = tp->delivered;
	ca->old_delivered_ce = tp->delivered_ce;
}

SEC("struct_ops")
void BPF_PROG(dctcp_init, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct dctcp *ca = inet_csk_ca(sk);

	if (!(tp->ecn_flags & TCP_ECN_OK)) {
		ca->reno_fallback = 1;
		return;
	}
	ca->reno_fallback = 0;
	ca->prior_rcv_nxt = tp->rcv_nxt;
	ca->dctcp_alpha = alpha_on_init < DCTCP_MAX_ALPHA ? alpha_on_init : DCTCP_MAX_ALPHA;
	ca->loss_cwnd = 0;
	ca->ce_state = 0;
	dctcp_reset(tp, ca);
}

SEC("struct_ops")
__u32 BPF_PROG(dctcp_ssthresh, struct sock *sk)
{
	struct dctcp *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);
	__u32 cwnd = tp->snd_cwnd, ss;

	if (ca->reno_fallback)
		return tcp_reno_ssthresh(sk);
	ca->loss_cwnd = cwnd;
	/* cwnd (1 - alpha / 2), alpha in 1/1024 */
	ss = cwnd - (__u32)(((__u64)cwnd * ca->dctcp_alpha) >> 11);
	return ss > 2 ? ss : 2;
}

SEC("struct_ops")
void BPF_PROG(dctcp_update_alpha, struct sock *sk, __u32 flags)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct dctcp *ca = inet_csk_ca(sk);

	if (ca->reno_fallback)
		return;
	/* One observation window ends when snd_una passes next_seq. */
	if (!before(tp->snd_una, ca->next_seq)) {
		__u32 delivered = tp->delivered - ca->old_delivered;
		__u32 delivered_ce = tp->delivered_ce - ca->old_delivered_ce;
		__u32 alpha = ca->dctcp_alpha;
		__u32 dec = alpha >> shift_g;

		/* alpha = (1 - g) alpha; min_not_zero: a small alpha decays to 0. */
		alpha -= dec ? (dec < alpha ? dec : alpha) : alpha;
		if (delivered_ce) {
			/* + g F, F = delivered_ce / delivered, in 1/1024. */
			delivered_ce <<= (10 - shift_g);
			delivered_ce /= delivered > 1 ? delivered : 1;
			alpha += delivered_ce;
			if (alpha > DCTCP_MAX_ALPHA)
				alpha = DCTCP_MAX_ALPHA;
		}
		ca->dctcp_alpha = alpha;
		dctcp_reset(tp, ca);
	}
}

static __always_inline void dctcp_react_to_loss(struct sock *sk)
{
	struct dctcp *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 half = tp->snd_cwnd >> 1;

	ca->loss_cwnd = tp->snd_cwnd;
	tp->snd_ssthresh = half > 2 ? half : 2;
}

SEC("struct_ops")
void BPF_PROG(dctcp_state, struct sock *sk, __u8 new_state)
{
	struct dctcp *ca = inet_csk_ca(sk);

	if (!ca->reno_fallback && new_state == TCP_CA_Recovery &&
	    new_state != tcplab_ca_state(sk))
		dctcp_react_to_loss(sk);
}

/* ACKs carry ECE while TCP_ECN_DEMAND_CWR is set. */
static __always_inline void dctcp_ece_ack_cwr(struct sock *sk, __u32 ce_state)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (ce_state == 1)
		tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
}

static __always_inline void dctcp_ece_ack_update(struct sock *sk, enum tcp_ca_event evt)
{
	struct dctcp *ca = inet_csk_ca(sk);
	__u32 new_ce_state = evt == CA_EVENT_ECN_IS_CE;

	if (ca->ce_state != new_ce_state) {
		/* A delayed ACK for the data before this segment goes first, with the old
		 * state; then this segment is ACKed at once with the new one. */
		if (inet_csk(sk)->icsk_ack.pending & 2 /* ICSK_ACK_TIMER */) {
			dctcp_ece_ack_cwr(sk, ca->ce_state);
			bpf_tcp_send_ack(sk, ca->prior_rcv_nxt);
		}
		inet_csk(sk)->icsk_ack.pending |= ICSK_ACK_NOW;
	}
	ca->prior_rcv_nxt = tcp_sk(sk)->rcv_nxt;
	ca->ce_state = new_ce_state;
	dctcp_ece_ack_cwr(sk, new_ce_state);
}

SEC("struct_ops")
void BPF_PROG(dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct dctcp *ca = inet_csk_ca(sk);

	if (ca->reno_fallback)
		return;
	switch (ev) {
	case CA_EVENT_ECN_IS_CE:
	case CA_EVENT_ECN_NO_CE:
		dctcp_ece_ack_update(sk, ev);
		break;
	case CA_EVENT_LOSS:
		dctcp_react_to_loss(sk);
		break;
	default:
		break;
	}
}

SEC("struct_ops")
__u32 BPF_PROG(dctcp_cwnd_undo, struct sock *sk)
{
	const struct dctcp *ca = inet_csk_ca(sk);
	const struct tcp_sock *tp = tcp_sk(sk);

	if (ca->reno_fallback)
		return tcp_reno_undo_cwnd(sk);
	return tp->snd_cwnd > ca->loss_cwnd ? tp->snd_cwnd : ca->loss_cwnd;
}

SEC("struct_ops")
void BPF_PROG(dctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC(".struct_ops")
struct tcp_congestion_ops dctcp = {
	.init = (void *)dctcp_init,
	.in_ack_event = (void *)dctcp_update_alpha,
	.cwnd_event = (void *)dctcp_cwnd_event,
	.ssthresh = (void *)dctcp_ssthresh,
	.cong_avoid = (void *)dctcp_cong_avoid,
	.undo_cwnd = (void *)dctcp_cwnd_undo,
	.set_state = (void *)dctcp_state,
	.flags = TCP_CONG_NEEDS_ECN,
	.name = "bpf_dctcp",
};
