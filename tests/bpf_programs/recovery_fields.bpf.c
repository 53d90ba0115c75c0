// SPDX-License-Identifier: MIT
/*
 * recovery_fields.bpf.c: a test program that reads the tcp_sock fields of loss
 * recovery that cong_control-style programs use for their own cwnd reduction (PRR,
 * RFC 6937): high_seq, prr_delivered, prr_out and reordering, written the way the
 * kernel's selftests write congestion controls (vmlinux.h, libbpf's headers, kfuncs).
 * For tests/runs/test_bpf_tcp_fields.py, which reads what it prints.
 *
 * Model: NewReno through the kernel's kfuncs. It prints
 *   - at init: tp->reordering (net.ipv4.tcp_reordering, 3 on a fresh socket);
 *   - on entering Recovery (set_state): whether high_seq == snd_nxt, and prr_delivered
 *     and prr_out, which tcp_init_cwnd_reduction has just set (to snd_nxt, 0 and 0)
 *     before tcp_enter_recovery calls set_state;
 *   - at each ACK in Recovery the largest prr_out seen so far, when it grows: PRR counts
 *     the segments sent during the reduction.
 * Not an algorithm to use.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

#define TCP_CA_RECOVERY 3

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

__u32 prr_out_seen = 0;

SEC("struct_ops")
void BPF_PROG(rf_init, struct sock *sk)
{
	const struct tcp_sock *tp = (const struct tcp_sock *)sk;

	bpf_printk("init reordering %u", tp->reordering);
}

SEC("struct_ops")
void BPF_PROG(rf_set_state, struct sock *sk, __u8 new_state)
{
	const struct tcp_sock *tp = (const struct tcp_sock *)sk;

	if (new_state != TCP_CA_RECOVERY)
		return;
	bpf_printk("recovery high_seq_is_snd_nxt %d prr_delivered %u prr_out %u",
		   tp->high_seq == tp->snd_nxt, tp->prr_delivered, tp->prr_out);
}

SEC("struct_ops")
void BPF_PROG(rf_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	const struct tcp_sock *tp = (const struct tcp_sock *)sk;
	const struct inet_connection_sock *icsk = (const struct inet_connection_sock *)sk;

	if (icsk->icsk_ca_state == TCP_CA_RECOVERY && tp->prr_out > prr_out_seen) {
		prr_out_seen = tp->prr_out;
		bpf_printk("prr_out %u", tp->prr_out);
	}
}

SEC("struct_ops")
void BPF_PROG(rf_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(rf_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(rf_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops recovery_fields = {
	.init = (void *)rf_init,
	.set_state = (void *)rf_set_state,
	.pkts_acked = (void *)rf_pkts_acked,
	.cong_avoid = (void *)rf_cong_avoid,
	.ssthresh = (void *)rf_ssthresh,
	.undo_cwnd = (void *)rf_undo_cwnd,
	.name = "recovery_fields",
};
