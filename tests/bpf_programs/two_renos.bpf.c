// SPDX-License-Identifier: MIT
/*
 * two_renos.bpf.c: a test program written the way the kernel's BPF selftests write
 * congestion controls (vmlinux.h from the kernel's BTF, libbpf's headers, the
 * CONFIG_HZ kconfig extern, kfuncs, a global shared by every socket, and several
 * struct_ops in one object, one of them registered through a BPF link), for
 * tests/backends/test_kernel_bpf.py (tcplab-bpfload registers the one asked for) and
 * tests/specs/test_bpf_ops_choice.py (flows[i].bpf.ops chooses one).
 *
 * Model: NewReno through the kernel's own kfuncs; "two_renos_slow" grows cwnd at most
 * once per jiffy-second tick of a global clock the two share. Not an algorithm to use.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

extern unsigned long CONFIG_HZ __kconfig;

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

/* .bss: one instance for the loaded program, shared by every socket using it. */
__u64 sockets_started = 0;
__u64 last_growth_jiffies = 0;

SEC("struct_ops")
void BPF_PROG(tr_init, struct sock *sk)
{
	__sync_fetch_and_add(&sockets_started, 1);
}

SEC("struct_ops")
void BPF_PROG(tr_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
void BPF_PROG(tr_slow_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	__u64 now = bpf_jiffies64();

	if (now - last_growth_jiffies < CONFIG_HZ)
		return;
	last_growth_jiffies = now;
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(tr_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(tr_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops two_renos = {
	.init = (void *)tr_init,
	.cong_avoid = (void *)tr_cong_avoid,
	.ssthresh = (void *)tr_ssthresh,
	.undo_cwnd = (void *)tr_undo_cwnd,
	.name = "two_renos",
};

SEC(".struct_ops.link")
struct tcp_congestion_ops two_renos_slow = {
	.init = (void *)tr_init,
	.cong_avoid = (void *)tr_slow_cong_avoid,
	.ssthresh = (void *)tr_ssthresh,
	.undo_cwnd = (void *)tr_undo_cwnd,
	.name = "two_renos_slow",
};
