// SPDX-License-Identifier: MIT
/*
 * spinning_reno.bpf.c: a test program that fails at run time in the simulator and
 * nowhere before (tests/runs/test_bpf_fault.py): its cong_avoid spins bpf_loop for
 * 2**23 empty iterations, which the kernel's verifier accepts (bpf_loop's limit is
 * 1 << 23) and which exhausts the simulator's instruction budget per callback
 * (crates/bpf ops.rs DEFAULT_BUDGET, 10**6) at the first ACK. NewReno otherwise,
 * through the kernel's kfuncs. Not an algorithm to use.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

static long spin(__u64 index, void *ctx)
{
	return 0;
}

SEC("struct_ops")
void BPF_PROG(spin_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	bpf_loop(1 << 23, spin, NULL, 0);
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(spin_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(spin_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops spinning = {
	.ssthresh = (void *)spin_ssthresh,
	.cong_avoid = (void *)spin_cong_avoid,
	.undo_cwnd = (void *)spin_undo_cwnd,
	.name = "spinning",
};
