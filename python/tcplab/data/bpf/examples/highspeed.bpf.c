// SPDX-License-Identifier: MIT
/*
 * highspeed.bpf.c: HighSpeed TCP as Linux runs it (net/ipv4/tcp_highspeed.c), as a
 * BPF struct_ops tcp_congestion_ops: the twin of tcplab's native `highspeed`
 * (crates/cc/src/highspeed.rs), so that a kernel without the module runs it.
 *
 * Model (RFC 3649, Sec. 5 and Appendix B): AIMD whose increase a(w) and decrease
 * b(w) grow and shrink with the window above 38 segments, from RFC 3649's table
 * (hstcp_aimd_vals: the window at which each row ends, and b(w) x 256). In
 * congestion avoidance snd_cwnd_cnt gains a(w) = ai + 1 per ACK and cwnd one
 * segment per cwnd of it; ssthresh is cwnd - cwnd x b(w), at least 2.
 *
 * Follows hstcp_init, hstcp_cong_avoid, hstcp_ssthresh; undo_cwnd is tcp_reno_undo_cwnd (a kfunc).
 *
 * Deviations: hstcp_init's clamp of snd_cwnd_clamp to 0xffffffff / 128 is left
 * out: a BPF program may not write snd_cwnd_clamp (bpf_tcp_ca_btf_struct_access),
 * and no window below 33.5 M segments reaches it, so runs are the native's.
 * The row is found by a scan from the table's start, not the kernel's walk from
 * the previous row: the same row (the table increases), in a loop the verifier
 * bounds.
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

struct hstcp_aimd_val {
	__u32 cwnd;
	__u32 md;
};

/* hstcp_aimd_vals (tcp_highspeed.c): RFC 3649 Appendix B, b(w) in 1/256. */
#define HSTCP_AIMD_MAX 72
static const struct hstcp_aimd_val hstcp_aimd_vals[HSTCP_AIMD_MAX] = {
	{ 38, 128 }, /* 0.50 */
	{ 118, 112 }, /* 0.44 */
	{ 221, 104 }, /* 0.41 */
	{ 347, 98 }, /* 0.38 */
	{ 495, 93 }, /* 0.37 */
	{ 663, 89 }, /* 0.35 */
	{ 851, 86 }, /* 0.34 */
	{ 1058, 83 }, /* 0.33 */
	{ 1284, 81 }, /* 0.32 */
	{ 1529, 78 }, /* 0.31 */
	{ 1793, 76 }, /* 0.30 */
	{ 2076, 74 }, /* 0.29 */
	{ 2378, 72 }, /* 0.28 */
	{ 2699, 71 }, /* 0.28 */
	{ 3039, 69 }, /* 0.27 */
	{ 3399, 68 }, /* 0.27 */
	{ 3778, 66 }, /* 0.26 */
	{ 4177, 65 }, /* 0.26 */
	{ 4596, 64 }, /* 0.25 */
	{ 5036, 62 }, /* 0.25 */
	{ 5497, 61 }, /* 0.24 */
	{ 5979, 60 }, /* 0.24 */
	{ 6483, 59 }, /* 0.23 */
	{ 7009, 58 }, /* 0.23 */
	{ 7558, 57 }, /* 0.22 */
	{ 8130, 56 }, /* 0.22 */
	{ 8726, 55 }, /* 0.22 */
	{ 9346, 54 }, /* 0.21 */
	{ 9991, 53 }, /* 0.21 */
	{ 10661, 52 }, /* 0.21 */
	{ 11358, 52 }, /* 0.20 */
	{ 12082, 51 }, /* 0.20 */
	{ 12834, 50 }, /* 0.20 */
	{ 13614, 49 }, /* 0.19 */
	{ 14424, 48 }, /* 0.19 */
	{ 15265, 48 }, /* 0.19 */
	{ 16137, 47 }, /* 0.19 */
	{ 17042, 46 }, /* 0.18 */
	{ 17981, 45 }, /* 0.18 */
	{ 18955, 45 }, /* 0.18 */
	{ 19965, 44 }, /* 0.17 */
	{ 21013, 43 }, /* 0.17 */
	{ 22101, 43 }, /* 0.17 */
	{ 23230, 42 }, /* 0.17 */
	{ 24402, 41 }, /* 0.16 */
	{ 25618, 41 }, /* 0.16 */
	{ 26881, 40 }, /* 0.16 */
	{ 28193, 39 }, /* 0.16 */
	{ 29557, 39 }, /* 0.15 */
	{ 30975, 38 }, /* 0.15 */
	{ 32450, 38 }, /* 0.15 */
	{ 33986, 37 }, /* 0.15 */
	{ 35586, 36 }, /* 0.14 */
	{ 37253, 36 }, /* 0.14 */
	{ 38992, 35 }, /* 0.14 */
	{ 40808, 35 }, /* 0.14 */
	{ 42707, 34 }, /* 0.13 */
	{ 44694, 33 }, /* 0.13 */
	{ 46776, 33 }, /* 0.13 */
	{ 48961, 32 }, /* 0.13 */
	{ 51258, 32 }, /* 0.13 */
	{ 53677, 31 }, /* 0.12 */
	{ 56230, 30 }, /* 0.12 */
	{ 58932, 30 }, /* 0.12 */
	{ 61799, 29 }, /* 0.12 */
	{ 64851, 28 }, /* 0.11 */
	{ 68113, 28 }, /* 0.11 */
	{ 71617, 27 }, /* 0.11 */
	{ 75401, 26 }, /* 0.10 */
	{ 79517, 26 }, /* 0.10 */
	{ 84035, 25 }, /* 0.10 */
	{ 89053, 24 }, /* 0.10 */
};

struct hstcp {
	__u32 ai;
};

SEC("struct_ops")
void BPF_PROG(hstcp_init, struct sock *sk)
{
	struct hstcp *ca = inet_csk_ca(sk);

	ca->ai = 0;
}

SEC("struct_ops")
void BPF_PROG(hstcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct hstcp *ca = inet_csk_ca(sk);
	__u32 cwnd, ai;
	int i;

	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
		return;
	}
	/* The AIMD row: the first whose window covers cwnd, the last beyond the
	 * table. The kernel walks up or down from the previous row; the table
	 * increases, so both find this row, and a bounded scan is what the
	 * verifier accepts. */
	cwnd = tp->snd_cwnd;
	for (i = 0; i < HSTCP_AIMD_MAX - 1; i++) {
		if (cwnd <= hstcp_aimd_vals[i].cwnd)
			break;
	}
	ai = i;
	ca->ai = ai;
	if (tp->snd_cwnd < tp->snd_cwnd_clamp) {
		/* cwnd += a(w) / cwnd per ACK */
		tp->snd_cwnd_cnt += ai + 1;
		if (tp->snd_cwnd_cnt >= tp->snd_cwnd) {
			tp->snd_cwnd_cnt -= tp->snd_cwnd;
			tp->snd_cwnd++;
		}
	}
}

SEC("struct_ops")
__u32 BPF_PROG(hstcp_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct hstcp *ca = inet_csk_ca(sk);
	__u32 ai = ca->ai < HSTCP_AIMD_MAX ? ca->ai : HSTCP_AIMD_MAX - 1;
	__u32 s = tp->snd_cwnd - ((tp->snd_cwnd * hstcp_aimd_vals[ai].md) >> 8);

	/* Do multiplicative decrease */
	return s > 2 ? s : 2;
}

SEC("struct_ops")
__u32 BPF_PROG(hstcp_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops highspeed = {
	.init = (void *)hstcp_init,
	.ssthresh = (void *)hstcp_ssthresh,
	.cong_avoid = (void *)hstcp_cong_avoid,
	.undo_cwnd = (void *)hstcp_undo_cwnd,
	.name = "bpf_highspeed",
};
