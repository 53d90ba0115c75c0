// SPDX-License-Identifier: MIT
/*
 * faults.bpf.c: small programs that each break one rule, selected with -DCASE_...;
 * with no CASE a well-formed program whose ssthresh returns its parameter `knob`
 * (or 7 when `use_knob` is false). Built by tests/faults.rs. The snd_una write of
 * CASE_READONLY is on line 60 (tests/faults.rs checks that the error names it).
 */
#include "tcplab_cc.h"

#if defined(CASE_MIT_LICENSE)
char _license[] SEC("license") = "MIT";
#elif !defined(CASE_NO_LICENSE)
char _license[] SEC("license") = "GPL";
#endif

const volatile __u32 knob = 3;
const volatile bool use_knob = true;
const volatile __s8 offset = -1;
const volatile __u32 table[2] = { 1, 2 };

#ifdef CASE_UNMODELLED
/* A flavour of tcp_sock with a field the simulator does not model. */
struct tcp_sock___extra {
	__u32 rcv_wnd;
} __attribute__((preserve_access_index));
#endif

#ifdef CASE_KFUNC
extern __u32 tcp_no_such_kfunc(struct sock *sk) __ksym;
#endif

#ifdef CASE_BIG_STACK
/* 320 bytes of stack in a subprogram: fine alone, too much under 256 more. */
static __noinline __u64 deep(__u32 i)
{
	volatile __u64 a[40];

	a[i % 40] = i;
	return a[1];
}
#endif

SEC("struct_ops")
__u32 BPF_PROG(faults_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
#ifdef CASE_UNMODELLED
	return ((struct tcp_sock___extra *)sk)->rcv_wnd;
#elif defined(CASE_KFUNC)
	return tcp_no_such_kfunc(sk);
#elif defined(CASE_OOB)
	volatile __u64 *priv = inet_csk_ca(sk);
	return priv[200];
#elif defined(CASE_LOOP)
	volatile __u32 spins = 0; /* counted to a bound the verifier cannot know: refused */
	for (__u32 i = 0; i < tp->snd_cwnd * 1000; i++)
		spins++;
	return spins;
#elif defined(CASE_READONLY)
	tp->snd_una = 5;
	return 2;
#elif defined(CASE_SPIN)
	volatile __u32 spins = 0;
	for (;;)
		spins++;
	return spins;
#elif defined(CASE_BIG_STACK)
	volatile __u64 outer[32]; /* 256 bytes, plus deep's 320 */
	outer[tp->snd_cwnd % 32] = deep(tp->snd_cwnd);
	return outer[2];
#else
	return use_knob ? knob + offset + 1 + table[0] - 1 : 7;
#endif
}

SEC("struct_ops")
void BPF_PROG(faults_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(faults_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

#ifndef CASE_NO_OPS
SEC(".struct_ops")
struct tcp_congestion_ops faults = {
	.ssthresh = (void *)faults_ssthresh,
	.cong_avoid = (void *)faults_cong_avoid,
	.undo_cwnd = (void *)faults_undo_cwnd,
	.name = "bpf_faults",
};
#endif
