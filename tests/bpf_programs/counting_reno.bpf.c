// SPDX-License-Identifier: MIT
/*
 * counting_reno.bpf.c: a test program that keeps counts where a researcher would look
 * for them after a run (tests/runs/test_bpf_maps.py, tests/backends/test_kernel_bpf_maps.py):
 * a global in .bss (sockets started), an ARRAY map of three counters (slot 0: losses,
 * ssthresh calls; slot 1: state changes to Recovery; slot 2: the last ssthresh
 * returned) and a HASH of one entry keyed 7. Written as the kernel's selftests write
 * programs (vmlinux.h, libbpf's headers, BTF-defined maps, kfuncs). Model: NewReno
 * through the kernel's kfuncs. Not an algorithm to use.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} marks SEC(".maps");

__u64 sockets_started = 0;

static void bump(__u32 slot, __u64 by)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &slot);

	if (v)
		__sync_fetch_and_add(v, by);
}

SEC("struct_ops")
void BPF_PROG(cnt_init, struct sock *sk)
{
	__u32 key = 7;
	__u64 one = 1;

	__sync_fetch_and_add(&sockets_started, 1);
	bpf_map_update_elem(&marks, &key, &one, BPF_ANY);
}

SEC("struct_ops")
void BPF_PROG(cnt_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(cnt_ssthresh, struct sock *sk)
{
	__u32 slot = 2;
	__u32 s = tcp_reno_ssthresh(sk);
	__u64 v = s;

	bump(0, 1);
	bpf_map_update_elem(&counts, &slot, &v, BPF_ANY);
	return s;
}

SEC("struct_ops")
void BPF_PROG(cnt_set_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Recovery)
		bump(1, 1);
}

SEC("struct_ops")
__u32 BPF_PROG(cnt_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops counting_reno = {
	.init = (void *)cnt_init,
	.cong_avoid = (void *)cnt_cong_avoid,
	.ssthresh = (void *)cnt_ssthresh,
	.set_state = (void *)cnt_set_state,
	.undo_cwnd = (void *)cnt_undo_cwnd,
	.name = "counting_reno",
};
