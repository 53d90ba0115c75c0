// SPDX-License-Identifier: GPL-2.0
/*
 * two_ops.bpf.c: two tcp_congestion_ops in one object, one in .struct_ops and one in
 * .struct_ops.link (libbpf >= 1.2 registers the latter with a link). Their ssthresh
 * returns 1 and 2; both share undo_cwnd and cong_avoid.
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

SEC("struct_ops")
__u32 BPF_PROG(one_ssthresh, struct sock *sk)
{
	return 1;
}

SEC("struct_ops")
__u32 BPF_PROG(two_ssthresh, struct sock *sk)
{
	return 2;
}

SEC("struct_ops")
void BPF_PROG(both_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(both_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops first = {
	.ssthresh = (void *)one_ssthresh,
	.cong_avoid = (void *)both_cong_avoid,
	.undo_cwnd = (void *)both_undo_cwnd,
	.name = "two_a",
};

SEC(".struct_ops.link")
struct tcp_congestion_ops second = {
	.ssthresh = (void *)two_ssthresh,
	.cong_avoid = (void *)both_cong_avoid,
	.undo_cwnd = (void *)both_undo_cwnd,
	.name = "two_b",
};
