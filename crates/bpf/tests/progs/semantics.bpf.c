// SPDX-License-Identifier: GPL-2.0
/*
 * semantics.bpf.c: what a program shares with the other sockets running it and what it
 * reads of the kernel it is loaded into. Every callback writes what it saw into cwnd
 * or ssthresh, so tests/semantics.rs can check it by hand:
 *   init          counts the sockets initialised (a .bss global) and keeps the lowest
 *                 cwnd any socket started with (a .data global, ~0U initially);
 *   ssthresh      returns the socket count;
 *   undo_cwnd     returns CONFIG_HZ;
 *   cong_avoid    cwnd = the minor of LINUX_KERNEL_VERSION, + 1000 if the weak
 *                 CONFIG_TCPLAB_NOT_SET were set; ssthresh = the lowest cwnd seen;
 *   in_ack_event  cwnd = tp->lsndtime (tcp_jiffies32), ssthresh = bpf_jiffies64();
 *   cong_control  cwnd = its flag argument, unless tcp_may_raise_cwnd-style test
 *                 (FLAG_DATA_ACKED and not FLAG_ECE) holds: then cwnd + 1;
 *   release       counts releases (a .bss global) and writes it to ssthresh.
 * With -DCASE_MISSING it also reads a non-weak option the simulated kernel lacks.
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

extern unsigned long CONFIG_HZ __kconfig;
extern unsigned int LINUX_KERNEL_VERSION __kconfig;
extern bool CONFIG_TCPLAB_NOT_SET __kconfig __weak;
#ifdef CASE_MISSING
extern unsigned int CONFIG_TCPLAB_MISSING __kconfig;
#endif

#define FLAG_DATA_ACKED 0x04
#define FLAG_ECE 0x40

__u64 sockets;
__u64 releases;
__u32 lowest_cwnd = ~0U;

SEC("struct_ops")
void BPF_PROG(sem_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);

	sockets++;
	if (tp->snd_cwnd < lowest_cwnd)
		lowest_cwnd = tp->snd_cwnd;
}

SEC("struct_ops")
__u32 BPF_PROG(sem_ssthresh, struct sock *sk)
{
#ifdef CASE_MISSING
	return sockets + CONFIG_TCPLAB_MISSING;
#else
	return sockets;
#endif
}

SEC("struct_ops")
__u32 BPF_PROG(sem_undo_cwnd, struct sock *sk)
{
	return CONFIG_HZ;
}

SEC("struct_ops")
void BPF_PROG(sem_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	tp->snd_cwnd = (LINUX_KERNEL_VERSION >> 8) & 0xff;
	if (CONFIG_TCPLAB_NOT_SET)
		tp->snd_cwnd += 1000;
	tp->snd_ssthresh = lowest_cwnd;
}

SEC("struct_ops")
void BPF_PROG(sem_in_ack_event, struct sock *sk, __u32 flags)
{
	struct tcp_sock *tp = tcp_sk(sk);

	tp->snd_cwnd = tp->lsndtime;
	tp->snd_ssthresh = bpf_jiffies64();
}

SEC("struct_ops")
void BPF_PROG(sem_cong_control, struct sock *sk, __u32 ack, int flag,
	      const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if ((flag & FLAG_DATA_ACKED) && !(flag & FLAG_ECE))
		tp->snd_cwnd = tp->snd_cwnd + 1;
	else
		tp->snd_cwnd = flag;
}

SEC("struct_ops")
void BPF_PROG(sem_release, struct sock *sk)
{
	releases++;
	tcp_sk(sk)->snd_ssthresh = releases;
}

SEC(".struct_ops")
struct tcp_congestion_ops semantics = {
	.init = (void *)sem_init,
	.ssthresh = (void *)sem_ssthresh,
	.undo_cwnd = (void *)sem_undo_cwnd,
	.cong_avoid = (void *)sem_cong_avoid,
	.in_ack_event = (void *)sem_in_ack_event,
	.cong_control = (void *)sem_cong_control,
	.release = (void *)sem_release,
	.name = "semantics",
};
