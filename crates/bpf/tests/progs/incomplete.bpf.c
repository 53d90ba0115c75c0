// SPDX-License-Identifier: MIT
/*
 * incomplete.bpf.c: a tcp_congestion_ops without ssthresh (which
 * tcp_validate_congestion_control refuses when the kernel registers it), in the
 * shapes of the kernel's selftests bpf_tcp_nogpl.c (CASE_NO_LICENSE: no license as
 * well) and bpf_dctcp_release.c (CASE_RELEASE_SETSOCKOPT: bpf_setsockopt in release as
 * well). The kernel refuses these at program load for the license or the helper before
 * it ever checks the struct's members, and the simulator must name the same reason:
 * tests/load_order.rs.
 */
#include "tcplab_cc.h"

#ifndef CASE_NO_LICENSE
char _license[] SEC("license") = "GPL";
#endif

SEC("struct_ops")
void BPF_PROG(incomplete_init, struct sock *sk)
{
}

#ifdef CASE_RELEASE_SETSOCKOPT
const char fallback[] = "cubic";

SEC("struct_ops")
void BPF_PROG(incomplete_release, struct sock *sk)
{
	bpf_setsockopt(sk, 6 /* SOL_TCP */, 13 /* TCP_CONGESTION */, (void *)fallback,
		       sizeof(fallback));
}
#endif

SEC("struct_ops")
void BPF_PROG(incomplete_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
}

SEC("struct_ops")
__u32 BPF_PROG(incomplete_undo_cwnd, struct sock *sk)
{
	return tcp_sk(sk)->snd_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops incomplete = {
	.init = (void *)incomplete_init,
#ifdef CASE_RELEASE_SETSOCKOPT
	.release = (void *)incomplete_release,
#endif
	.cong_avoid = (void *)incomplete_cong_avoid,
	.undo_cwnd = (void *)incomplete_undo_cwnd,
	.name = "incomplete",
};
