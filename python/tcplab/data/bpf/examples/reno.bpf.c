// SPDX-License-Identifier: MIT
/*
 * reno.bpf.c: NewReno as a BPF struct_ops tcp_congestion_ops.
 *
 * Model: slow start adds one segment per acked segment until ssthresh, then
 * congestion avoidance adds one segment per cwnd of acked segments. On loss
 * ssthresh is half of cwnd (at least 2); the sender's recovery (PRR) brings cwnd
 * down to it. Undo restores max(cwnd, prior_cwnd).
 *
 * Follows net/ipv4/tcp_cong.c: tcp_reno_cong_avoid, tcp_reno_ssthresh,
 * tcp_reno_undo_cwnd, written out here in C (not called as kfuncs) so that the
 * program exercises field reads and writes, not just the kernel's own code;
 * tcp_slow_start and tcp_cong_avoid_ai are called as kfuncs.
 *
 * Deviations: none.
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

SEC("struct_ops")
void BPF_PROG(reno_init, struct sock *sk)
{
}

SEC("struct_ops")
__u32 BPF_PROG(reno_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	__u32 half = tp->snd_cwnd >> 1;

	return half > 2 ? half : 2;
}

SEC("struct_ops")
void BPF_PROG(reno_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(reno_undo_cwnd, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return tp->snd_cwnd > tp->prior_cwnd ? tp->snd_cwnd : tp->prior_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops reno = {
	.init = (void *)reno_init,
	.ssthresh = (void *)reno_ssthresh,
	.cong_avoid = (void *)reno_cong_avoid,
	.undo_cwnd = (void *)reno_undo_cwnd,
	.name = "bpf_reno",
};
