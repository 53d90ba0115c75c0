// SPDX-License-Identifier: MIT
/*
 * policy_cubic.bpf.c: the kernel half of an Orca policy (cc = "policy:FILE" with
 * "preset": "orca") on the kernel backend: the kernel's own CUBIC, whose window a
 * user-space agent (python/tcplab/backends/kernel/policy_agent.py) overrides, as Orca's
 * kernel patch lets its agent set tp->snd_cwnd (TCP_CWND) under tcp_cubic.
 *
 * Model: every callback is tcp_cubic.c's, called through the kfuncs the kernel exports
 * from it (cubictcp_init, cubictcp_cong_avoid, cubictcp_recalc_ssthresh, cubictcp_state,
 * cubictcp_cwnd_event, cubictcp_acked; the same set tcp_cubic.c registers for struct_ops
 * programs), so CUBIC's state lives in this socket's icsk_ca_priv as under tcp_cubic.
 * Around it, the agent's maps (policy_maps.h, shared with policy_rate.bpf.c):
 * - pkts_acked, on every ACK that acknowledges data, before cong_avoid: the RTT sample
 *   (the ack_sample's rtt_us, tcp_ack_update_rtt's ca_rtt_us, as policy_rate.bpf.c
 *   takes rs->rtt_us), then cubictcp_acked (HyStart), then the agent's write if it is a
 *   generation not applied yet: snd_cwnd = Orca's percentage of snd_cwnd as it is at
 *   this ACK (at least Orca's floor, at most snd_cwnd_clamp) and its stamp; the
 *   pacing rate is never written (Orca writes only the window; the stack paces as it
 *   does for tcp_cubic). Then the socket's counters into policy_meas.
 * - cong_avoid after it: CUBIC grows the window from what was written, as the
 *   simulator's CUBIC continues from a stepping write.
 * - init records a fresh entry; nothing is written before the agent's first step (CUBIC
 *   starts as it does).
 *
 * Follows: net/ipv4/tcp_cubic.c (the kfuncs), net/ipv4/tcp_input.c (tcp_clean_rtx_queue
 * calls pkts_acked before tcp_cong_control; tcp_ack_update_rtt), Linux 6.18.
 *
 * Deviations (from the simulator's agent, which writes between two events):
 * - A write takes effect at the socket's next ACK acknowledging data (pkts_acked), not
 *   at the instant the agent writes (Orca's own TCP_CWND setsockopt writes at once; a
 *   BPF program cannot reach a socket between two of its callbacks). So a write is a
 *   percentage, applied to the window at that ACK, not a window computed from the one
 *   the agent read: between the read and that ACK the window moves (CUBIC's growth, a
 *   loss's reduction), and a window written as is put the read one back (with the agent
 *   held 15 ms and 30 ms between read and write, a do-nothing policy's mean window was
 *   0.96x and 1.04x kernel CUBIC's; docs/FIDELITY-policy.md).
 * - When reports come faster than ACKs, a report reads the window its predecessor's
 *   write has not yet changed and its write replaces that one, where the simulator's
 *   writes act at once, one after another (42-52 % of the reports at 8-12 segments per
 *   60 ms). Compounding the pending writes instead was measured and not kept: the
 *   policy chose its second action on a window the first had not changed, and applying
 *   both doubled the reaction (retransmissions alone 82.5 against 7.75 replacing and the
 *   simulator's 7; docs/FIDELITY-policy.md).
 * - The counters are those of the last such ACK (intervals telescope), as in
 *   policy_rate.bpf.c.
 */
#include "tcplab_cc.h"
#include <bpf/bpf_endian.h>

char _license[] SEC("license") = "GPL";

#include "policy_maps.h"

extern void cubictcp_init(struct sock *sk) __ksym;
extern __u32 cubictcp_recalc_ssthresh(struct sock *sk) __ksym;
extern void cubictcp_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern void cubictcp_state(struct sock *sk, __u8 new_state) __ksym;
extern void cubictcp_cwnd_event(struct sock *sk, enum tcp_ca_event event) __ksym;
extern void cubictcp_acked(struct sock *sk, const struct ack_sample *sample) __ksym;

/* Apply the agent's write if it is one not applied yet: Orca's percentage of the window
 * the socket has now (map_action's int(100 x 4^a) x cwnd / 100, at least the floor), or
 * a window as is when the write carries no percentage. */
static __always_inline void apply_cwnd(struct sock *sk, struct policy_meas *m, __u32 key)
{
	struct policy_ctl *c = bpf_map_lookup_elem(&policy_ctl, &key);
	struct tcp_sock *tp = tcp_sk(sk);
	__u64 cwnd;

	if (!c || c->gen == m->applied)
		return;
	cwnd = c->cwnd;
	if (c->percent) {
		cwnd = (__u64)c->percent * tp->snd_cwnd / 100;
		if (cwnd < c->min_cwnd)
			cwnd = c->min_cwnd;
		if (cwnd > 0xffffffffULL)
			cwnd = 0xffffffffULL;
	}
	m->applied = c->gen;
	write_cwnd(tp, (__u32)cwnd);
}

SEC("struct_ops")
void BPF_PROG(pc_init, struct sock *sk)
{
	__u32 key = flow_key(sk);
	struct policy_meas *m;

	cubictcp_init(sk);
	m = meas_init(key);
	if (m)
		record(sk, m);
}

SEC("struct_ops")
void BPF_PROG(pc_acked, struct sock *sk, const struct ack_sample *sample)
{
	__u32 key = flow_key(sk);
	struct policy_meas *m = bpf_map_lookup_elem(&policy_meas, &key);

	cubictcp_acked(sk, sample);
	if (!m)
		return;
	rtt_sample(m, sample->rtt_us);
	apply_cwnd(sk, m, key);
	record(sk, m);
}

SEC("struct_ops")
void BPF_PROG(pc_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	cubictcp_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(pc_ssthresh, struct sock *sk)
{
	return cubictcp_recalc_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(pc_state, struct sock *sk, __u8 new_state)
{
	cubictcp_state(sk, new_state);
}

SEC("struct_ops")
void BPF_PROG(pc_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	cubictcp_cwnd_event(sk, event);
}

SEC("struct_ops")
__u32 BPF_PROG(pc_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops policy_cubic = {
	.init = (void *)pc_init,
	.pkts_acked = (void *)pc_acked,
	.cong_avoid = (void *)pc_cong_avoid,
	.ssthresh = (void *)pc_ssthresh,
	.set_state = (void *)pc_state,
	.cwnd_event = (void *)pc_cwnd_event,
	.undo_cwnd = (void *)pc_undo_cwnd,
	.name = "policy_cubic",
};
