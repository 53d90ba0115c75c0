// SPDX-License-Identifier: MIT
/*
 * chatty_reno.bpf.c: a test program that prints with bpf_printk, as one debugs a
 * congestion control on Linux (the lines go to the kernel's trace_pipe): one line when
 * a socket starts and one at every loss, with its cwnd, for
 * tests/storage/test_bpf_printk.py. Model: NewReno through the kernel's kfuncs. Not an
 * algorithm to use.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

SEC("struct_ops")
void BPF_PROG(cr_init, struct sock *sk)
{
	const struct tcp_sock *tp = (const struct tcp_sock *)sk;

	bpf_printk("init cwnd %u", tp->snd_cwnd);
}

SEC("struct_ops")
void BPF_PROG(cr_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(cr_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = (const struct tcp_sock *)sk;

	bpf_printk("loss at cwnd %u\n", tp->snd_cwnd);
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(cr_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops chatty_reno = {
	.init = (void *)cr_init,
	.cong_avoid = (void *)cr_cong_avoid,
	.ssthresh = (void *)cr_ssthresh,
	.undo_cwnd = (void *)cr_undo_cwnd,
	.name = "chatty_reno",
};
