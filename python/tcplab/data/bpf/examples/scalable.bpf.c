// SPDX-License-Identifier: MIT
/*
 * scalable.bpf.c: Scalable TCP as Linux runs it (net/ipv4/tcp_scalable.c), as a
 * BPF struct_ops tcp_congestion_ops: the twin of tcplab's native `scalable`
 * (crates/cc/src/scalable.rs), so that a kernel without the module runs it.
 *
 * Model (Kelly, SIGCOMM CCR 33(2), 2003, Sec. 2): multiplicative increase and
 * decrease. In congestion avoidance cwnd grows by one segment per 100 acked
 * (a = 0.01, written as tcp_cong_avoid_ai(tp, min(cwnd, 100), acked): Reno below
 * 100 segments); a loss sets ssthresh to cwnd - cwnd / 8 (b = 1/8), at least 2.
 *
 * Follows tcp_scalable_cong_avoid and tcp_scalable_ssthresh; undo_cwnd is
 * tcp_reno_undo_cwnd (a kfunc).
 *
 * Deviations: none.
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

/* TCP_SCALABLE_AI_CNT and TCP_SCALABLE_MD_SCALE (tcp_scalable.c). */
#define TCP_SCALABLE_AI_CNT 100U
#define TCP_SCALABLE_MD_SCALE 3

SEC("struct_ops")
void BPF_PROG(scalable_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 w;

	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	w = tp->snd_cwnd < TCP_SCALABLE_AI_CNT ? tp->snd_cwnd : TCP_SCALABLE_AI_CNT;
	tcp_cong_avoid_ai(tp, w, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(scalable_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	__u32 s = tp->snd_cwnd - (tp->snd_cwnd >> TCP_SCALABLE_MD_SCALE);

	return s > 2 ? s : 2;
}

SEC("struct_ops")
__u32 BPF_PROG(scalable_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops scalable = {
	.ssthresh = (void *)scalable_ssthresh,
	.cong_avoid = (void *)scalable_cong_avoid,
	.undo_cwnd = (void *)scalable_undo_cwnd,
	.name = "bpf_scalable",
};
