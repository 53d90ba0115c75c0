// SPDX-License-Identifier: MIT
/*
 * policy_rate.bpf.c: the kernel half of a trained policy (cc = "policy:FILE") on the
 * kernel backend, a BPF struct_ops tcp_congestion_ops whose pacing rate and cwnd a
 * user-space agent writes (python/tcplab/backends/kernel/policy_agent.py), as Orca's
 * kernel module takes its cwnd from Orca's agent.
 *
 * Model: the simulator's `external` algorithm (crates/cc/src/external.rs) and its
 * stepping engine's writes (crates/sim/src/world/stepping.rs), in a real kernel.
 * - The algorithm owns cwnd and pacing (cong_control) and changes neither on its own:
 *   each socket keeps what the agent last wrote. The agent writes a control entry
 *   (map policy_ctl, keyed by the flow's destination port: {pacing rate in bytes/s,
 *   cwnd in segments, a generation number; its percentage fields, Orca's, stay 0 here
 *   and are not read}); the next ACK (cong_control) or the
 *   connection's start (init) applies a generation it has not applied yet:
 *   sk_pacing_rate = min(rate, sk_max_pacing_rate), SK_PACING_NEEDED when the rate is
 *   above 0 (else SK_PACING_NONE), snd_cwnd = min(cwnd, snd_cwnd_clamp) and its stamp,
 *   as Stepper::set_pacing_rate / set_cwnd do.
 * - It measures what Aurora's observation and reward read (crates/controllers/src/
 *   policy/aurora.rs, AuroraObservation::push, aurora_reward), in map policy_meas under the
 *   same key, on every ACK: the socket's cumulative counters tp->bytes_sent (the
 *   simulator's sent_bytes: payload, retransmissions included), tp->delivered and
 *   tp->mss_cache (acked_bytes = delivered x MSS), tp->lost, tp->total_retrans, srtt
 *   (tp->srtt_us >> 3); and the RTT samples of tcp_ack_update_rtt, rs->rtt_us when it is
 *   >= 0 (the simulator's RttSamples take the same ca_rtt_us, crates/sim/src/tcp/
 *   input.rs), as a running sum, count and minimum. The agent differences two reads,
 *   as Stepper::take_interval differences two states.
 * - Loss response is the stack's for a cong_control algorithm, as for `external`:
 *   ssthresh is tcp_reno_ssthresh, undo is tcp_reno_undo_cwnd (kfuncs), PRR does not
 *   run, an RTO sets cwnd to packets in flight + 1 until the agent's next write.
 *
 * Follows: net/ipv4/tcp_input.c (tcp_ack_update_rtt: rs->rtt_us; tcp_cong_control),
 * net/ipv4/tcp_output.c (bytes_sent), include/linux/tcp.h (the counters' meaning),
 * Linux 6.18.
 *
 * Deviations (from the simulator's agent, which writes between two events):
 * - A write takes effect at the socket's next ACK (or its start), not at the instant
 *   the agent writes; between two ACKs of a sending flow that is well under an RTT.
 * - The counters are those of the last ACK, so sends after it fall into the next
 *   interval (the simulator reads them at the interval's end); intervals telescope.
 * - The RTT minimum is the connection's, not the interval's: Aurora's observation
 *   only keeps the minimum over all intervals, which is the same number.
 * - The agent reads an entry while this program may be updating it (no lock): a read
 *   may see one sample's sum without its count (one sample in hundreds).
 * - Entries are made for every socket running the program, the receiver's too (keyed
 *   by the sender's ephemeral port: never one a flow uses); nothing is written to them.
 */
#include "tcplab_cc.h"
#include <bpf/bpf_endian.h>

char _license[] SEC("license") = "GPL";

#include "policy_maps.h"

/* Apply the agent's write if it is one not applied yet. */
static __always_inline void apply(struct sock *sk, struct policy_meas *m, __u32 key)
{
	struct policy_ctl *c = bpf_map_lookup_elem(&policy_ctl, &key);
	__u64 rate;

	if (!c || c->gen == m->applied)
		return;
	m->applied = c->gen;
	rate = c->rate_bytes;
	if (rate > sk->sk_max_pacing_rate)
		rate = sk->sk_max_pacing_rate;
	sk->sk_pacing_rate = rate;
	sk->sk_pacing_status = rate > 0 ? SK_PACING_NEEDED : SK_PACING_NONE;
	write_cwnd(tcp_sk(sk), c->cwnd);
}

SEC("struct_ops")
void BPF_PROG(policy_init, struct sock *sk)
{
	__u32 key = flow_key(sk);
	struct policy_meas *m = meas_init(key);

	if (!m)
		return;
	apply(sk, m, key);
	record(sk, m);
}

SEC("struct_ops")
void BPF_PROG(policy_cong_control, struct sock *sk, __u32 ack, int flag,
	      const struct rate_sample *rs)
{
	__u32 key = flow_key(sk);
	struct policy_meas *m = bpf_map_lookup_elem(&policy_meas, &key);
	long rtt_us = rs->rtt_us;

	if (!m)
		return;
	rtt_sample(m, rtt_us);
	apply(sk, m, key);
	record(sk, m);
}

SEC("struct_ops")
__u32 BPF_PROG(policy_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(policy_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops policy_rate = {
	.init = (void *)policy_init,
	.cong_control = (void *)policy_cong_control,
	.ssthresh = (void *)policy_ssthresh,
	.undo_cwnd = (void *)policy_undo_cwnd,
	.name = "policy_rate",
};
