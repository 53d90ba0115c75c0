// SPDX-License-Identifier: MIT
/*
 * bic.bpf.c: BIC-TCP as Linux runs it (net/ipv4/tcp_bic.c), as a BPF struct_ops
 * tcp_congestion_ops: the twin of tcplab's native `bic` (crates/cc/src/bic.rs), so
 * that a kernel without the module runs it.
 *
 * Model (Xu, Harfoush and Rhee, IEEE INFOCOM 2004, Sec. 3): after a loss the
 * window that failed (Wmax, last_max_cwnd) and the reduced one bound a binary
 * search: each RTT cwnd moves a quarter of the way to Wmax (BICTCP_B = 4), at
 * most max_increment segments, and 4 / smooth_part segments per RTT within one
 * segment of it; above Wmax "max probing" starts slow and speeds up. Each step is
 * cnt, the ACKs per one-segment increase (tcp_cong_avoid_ai), scaled by the
 * measured packets-per-ACK ratio. On loss ssthresh = cwnd x beta (819/1024) above
 * low_window, Reno's half below; with fast convergence a window that failed below
 * the previous Wmax lowers Wmax to cwnd (1 + beta) / 2.
 *
 * Follows bictcp_reset, bictcp_init, bictcp_update, bictcp_cong_avoid,
 * bictcp_recalc_ssthresh, bictcp_state, bictcp_acked; undo_cwnd is
 * tcp_reno_undo_cwnd (a kfunc).
 *
 * Parameters: the module parameters fast_convergence, max_increment, low_window,
 * beta, initial_ssthresh and smooth_part, as const volatile globals.
 *
 * Deviations: epoch_start is not kept (the kernel writes it and never reads
 * it), as in the native port.
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

#define BICTCP_BETA_SCALE 1024 /* Scale factor beta calculation */
#define BICTCP_B 4 /* In binary search, go to point (max+min)/N */
#define ACK_RATIO_SHIFT 4

const volatile int fast_convergence = 1;
const volatile __u32 max_increment = 16;
const volatile __u32 low_window = 14;
const volatile __u32 beta = 819; /* = 819/1024 (BICTCP_BETA_SCALE) */
const volatile __u32 initial_ssthresh = 0;
const volatile __u32 smooth_part = 20;

/* BIC TCP Parameters */
struct bictcp {
	__u32 cnt; /* increase cwnd by 1 after ACKs */
	__u32 last_max_cwnd; /* last maximum snd_cwnd */
	__u32 last_cwnd; /* the last snd_cwnd */
	__u32 last_time; /* time when updated last_cwnd */
	__u32 delayed_ack; /* estimate the ratio of Packets/ACKs << 4 */
};

static __always_inline void bictcp_reset(struct bictcp *ca)
{
	ca->cnt = 0;
	ca->last_max_cwnd = 0;
	ca->last_cwnd = 0;
	ca->last_time = 0;
	ca->delayed_ack = 2 << ACK_RATIO_SHIFT;
}

/* Compute congestion window to use. */
static __always_inline void bictcp_update(struct bictcp *ca, __u32 cwnd)
{
	__u32 now = tcp_jiffies32;

	if (ca->last_cwnd == cwnd && now - ca->last_time <= HZ / 32)
		return;
	ca->last_cwnd = cwnd;
	ca->last_time = now;
	/* start off normal */
	if (cwnd <= low_window) {
		ca->cnt = cwnd;
		return;
	}
	/* binary increase */
	if (cwnd < ca->last_max_cwnd) {
		__u32 dist = (ca->last_max_cwnd - cwnd) / BICTCP_B;

		if (dist > max_increment)
			/* linear increase */
			ca->cnt = cwnd / max_increment;
		else if (dist <= 1U)
			/* binary search increase */
			ca->cnt = (cwnd * smooth_part) / BICTCP_B;
		else
			/* binary search increase */
			ca->cnt = cwnd / dist;
	} else {
		/* slow start AMD linear increase */
		if (cwnd < ca->last_max_cwnd + BICTCP_B)
			/* slow start */
			ca->cnt = (cwnd * smooth_part) / BICTCP_B;
		else if (cwnd < ca->last_max_cwnd + max_increment * (BICTCP_B - 1))
			/* slow start */
			ca->cnt = (cwnd * (BICTCP_B - 1)) / (cwnd - ca->last_max_cwnd);
		else
			/* linear increase */
			ca->cnt = cwnd / max_increment;
	}
	/* if in slow start or link utilization is very low */
	if (ca->last_max_cwnd == 0) {
		if (ca->cnt > 20) /* increase cwnd 5% per RTT */
			ca->cnt = 20;
	}
	ca->cnt = (ca->cnt << ACK_RATIO_SHIFT) / ca->delayed_ack;
	if (ca->cnt == 0) /* cannot be zero */
		ca->cnt = 1;
}

SEC("struct_ops")
void BPF_PROG(bictcp_init, struct sock *sk)
{
	struct bictcp *ca = inet_csk_ca(sk);

	bictcp_reset(ca);
	if (initial_ssthresh)
		tcp_sk(sk)->snd_ssthresh = initial_ssthresh;
}

SEC("struct_ops")
void BPF_PROG(bictcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
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
	bictcp_update(ca, tp->snd_cwnd);
	tcp_cong_avoid_ai(tp, ca->cnt, acked);
}

/* behave like Reno until low_window is reached, then increase congestion window
 * slowly */
SEC("struct_ops")
__u32 BPF_PROG(bictcp_recalc_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct bictcp *ca = inet_csk_ca(sk);
	__u32 cwnd = tp->snd_cwnd, s;

	/* Wmax and fast convergence */
	if (cwnd < ca->last_max_cwnd && fast_convergence)
		ca->last_max_cwnd = (cwnd * (BICTCP_BETA_SCALE + beta)) / (2 * BICTCP_BETA_SCALE);
	else
		ca->last_max_cwnd = cwnd;
	if (cwnd <= low_window)
		s = cwnd >> 1;
	else
		s = (cwnd * beta) / BICTCP_BETA_SCALE;
	return s > 2 ? s : 2;
}

SEC("struct_ops")
void BPF_PROG(bictcp_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Loss)
		bictcp_reset(inet_csk_ca(sk));
}

/* Track delayed acknowledgment ratio using sliding window ratio = (15*ratio +
 * sample) / 16 */
SEC("struct_ops")
void BPF_PROG(bictcp_acked, struct sock *sk, const struct ack_sample *sample)
{
	if (tcplab_ca_state(sk) == TCP_CA_Open) {
		struct bictcp *ca = inet_csk_ca(sk);

		ca->delayed_ack += sample->pkts_acked - (ca->delayed_ack >> ACK_RATIO_SHIFT);
	}
}

SEC("struct_ops")
__u32 BPF_PROG(bictcp_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops bic = {
	.init = (void *)bictcp_init,
	.ssthresh = (void *)bictcp_recalc_ssthresh,
	.cong_avoid = (void *)bictcp_cong_avoid,
	.set_state = (void *)bictcp_state,
	.pkts_acked = (void *)bictcp_acked,
	.undo_cwnd = (void *)bictcp_undo_cwnd,
	.name = "bpf_bic",
};
