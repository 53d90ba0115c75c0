// SPDX-License-Identifier: MIT
/*
 * policy_maps.h: the maps a trained policy's kernel program shares with the user-space
 * agent (python/tcplab/backends/kernel/policy_agent.py, policy_maps.py), included by
 * policy_rate.bpf.c (Aurora's `external` flow) and policy_cubic.bpf.c (Orca's CUBIC):
 * the agent's writes (policy_ctl) and the socket's measurements (policy_meas), keyed by
 * the flow's destination port, and the code that fills an entry. See policy_rate.bpf.c
 * for what is measured and why.
 */
#ifndef TCPLAB_POLICY_MAPS_H
#define TCPLAB_POLICY_MAPS_H

/* Fields of 6.18's structs that tcplab_cc.h leaves out (the simulator does not model
 * them; this program runs only in a kernel). CO-RE matches a struct named
 * "name___flavour" against the kernel's "name" and finds skc_dport inside its
 * anonymous union. */
struct sock_common___policy {
	__be16 skc_dport;
} __attribute__((preserve_access_index));

struct tcp_sock___policy {
	__u64 bytes_sent;
	__u32 total_retrans;
} __attribute__((preserve_access_index));

#define POLICY_MAX_FLOWS 1024
/* include/uapi/linux/bpf.h (tcplab_cc.h does not include it). */
#define BPF_MAP_TYPE_HASH 1
#define BPF_ANY 0

/* Written by the agent, read here. */
struct policy_ctl {
	__u64 rate_bytes; /* pacing rate, bytes per second; 0 = unpaced */
	__u32 cwnd; /* segments, >= 1 */
	__u32 gen; /* changed by each write */
	/* 0: the window is cwnd. Otherwise (Orca) the window is percent x the socket's
	 * window when the write lands / 100, at least min_cwnd (policy_cubic.bpf.c). */
	__u32 percent;
	__u32 min_cwnd;
};

/* Written here, read by the agent (policy_agent.MEAS_FORMAT). */
struct policy_meas {
	__u64 bytes_sent;
	__u64 rtt_sum_us;
	__u64 rtt_count;
	__u64 pacing_rate; /* sk_pacing_rate now, bytes per second */
	__u32 rtt_min_us; /* ~0 before the first sample */
	__u32 delivered;
	__u32 lost;
	__u32 total_retrans;
	__u32 srtt_us;
	__u32 mss;
	__u32 cwnd;
	__u32 applied; /* generation of the last control applied */
	__u32 ssthresh; /* tp->snd_ssthresh */
	__u32 inflight; /* tcp_packets_in_flight */
	__u32 min_rtt_us; /* tcp_min_rtt: the socket's windowed minimum, ~0 before a sample */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, POLICY_MAX_FLOWS);
	__type(key, __u32);
	__type(value, struct policy_ctl);
} policy_ctl SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, POLICY_MAX_FLOWS);
	__type(key, __u32);
	__type(value, struct policy_meas);
} policy_meas SEC(".maps");

static __always_inline __u32 flow_key(const struct sock *sk)
{
	const struct sock_common___policy *skc = (const void *)&sk->__sk_common;

	return bpf_ntohs(skc->skc_dport);
}

static __always_inline void record(struct sock *sk, struct policy_meas *m)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	const struct tcp_sock___policy *more = (const void *)tp;

	m->bytes_sent = more->bytes_sent;
	m->total_retrans = more->total_retrans;
	m->delivered = tp->delivered;
	m->lost = tp->lost;
	m->srtt_us = tp->srtt_us >> 3;
	m->mss = tp->mss_cache;
	m->cwnd = tp->snd_cwnd;
	m->pacing_rate = sk->sk_pacing_rate;
	m->ssthresh = tp->snd_ssthresh;
	m->inflight = tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
	m->min_rtt_us = tp->rtt_min.s[0].v;
}

/* The agent's window, as Stepper::set_cwnd writes it: at least 1, at most the socket's
 * clamp, stamped. */
static __always_inline void write_cwnd(struct tcp_sock *tp, __u32 cwnd)
{
	if (cwnd < 1)
		cwnd = 1;
	if (cwnd > tp->snd_cwnd_clamp)
		cwnd = tp->snd_cwnd_clamp;
	tp->snd_cwnd = cwnd;
	tp->snd_cwnd_stamp = tcp_jiffies32;
}

/* A fresh entry for a connection's start (init): counters 0, no RTT sample yet. */
static __always_inline struct policy_meas *meas_init(__u32 key)
{
	struct policy_meas fresh = { .rtt_min_us = ~0U, .min_rtt_us = ~0U };

	bpf_map_update_elem(&policy_meas, &key, &fresh, BPF_ANY);
	return bpf_map_lookup_elem(&policy_meas, &key);
}

/* One RTT sample of tcp_ack_update_rtt (rs->rtt_us, or an ack_sample's rtt_us: the
 * same ca_rtt_us), < 0 when the ACK gave none. */
static __always_inline void rtt_sample(struct policy_meas *m, long rtt_us)
{
	if (rtt_us < 0)
		return;
	m->rtt_sum_us += rtt_us;
	m->rtt_count += 1;
	if ((__u64)rtt_us < m->rtt_min_us)
		m->rtt_min_us = rtt_us;
}

#endif
