// SPDX-License-Identifier: GPL-2.0
/*
 * loop.bpf.c: the bpf_loop helper (kernel/bpf/bpf_iter.c), each callback's result
 * written into cwnd or ssthresh so tests/bpf_loop.rs can check it by hand:
 *   cong_avoid    n = bpf_loop(acked, add_index, {limit = ssthresh}); add_index adds
 *                 each index below the limit and stops (returns 1) at the limit;
 *                 cwnd = n, ssthresh = the sum;
 *   in_ack_event  bpf_loop(2, twice, {limit = 100}): each outer iteration runs
 *                 bpf_loop(3, add_index) itself; cwnd = 1000 * n + the sum;
 *   ssthresh      bpf_loop with flags 1 (-EINVAL);
 *   undo_cwnd     bpf_loop with nr_loops 1 << 23 + 1 (-E2BIG).
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

struct sum_ctx {
	__u32 limit;
	__u64 sum;
};

static int add_index(__u32 index, void *data)
{
	struct sum_ctx *c = data;

	if (index >= c->limit)
		return 1;
	c->sum += index;
	return 0;
}

static int twice(__u32 index, void *data)
{
	bpf_loop(3, add_index, data, 0);
	return 0;
}

SEC("struct_ops")
void BPF_PROG(loop_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct sum_ctx c = { .limit = tp->snd_ssthresh, .sum = 0 };
	long n = bpf_loop(acked, add_index, &c, 0);

	tp->snd_cwnd = n;
	tp->snd_ssthresh = c.sum;
}

SEC("struct_ops")
void BPF_PROG(loop_in_ack_event, struct sock *sk, __u32 flags)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct sum_ctx c = { .limit = 100, .sum = 0 };
	long n = bpf_loop(2, twice, &c, 0);

	tp->snd_cwnd = 1000 * n + c.sum;
}

SEC("struct_ops")
__u32 BPF_PROG(loop_ssthresh, struct sock *sk)
{
	struct sum_ctx c = { .limit = 100, .sum = 0 };

	return bpf_loop(1, add_index, &c, 1);
}

SEC("struct_ops")
__u32 BPF_PROG(loop_undo_cwnd, struct sock *sk)
{
	struct sum_ctx c = { .limit = 100, .sum = 0 };

	return bpf_loop((1 << 23) + 1, add_index, &c, 0);
}

SEC(".struct_ops")
struct tcp_congestion_ops loop = {
	.cong_avoid = (void *)loop_cong_avoid,
	.in_ack_event = (void *)loop_in_ack_event,
	.ssthresh = (void *)loop_ssthresh,
	.undo_cwnd = (void *)loop_undo_cwnd,
	.name = "loop",
};
