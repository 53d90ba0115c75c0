// SPDX-License-Identifier: MIT
/*
 * vegas.bpf.c: TCP Vegas as Linux runs it (net/ipv4/tcp_vegas.c), as a BPF
 * struct_ops tcp_congestion_ops: the twin of tcplab's native `vegas`
 * (crates/cc/src/vegas.rs), so that a kernel without the module runs it.
 *
 * Model (Brakmo and Peterson, IEEE JSAC 13(8), 1995, Sec. 3.2): once per RTT,
 * compare the window with what the smallest RTT of that round says the path
 * holds. diff = cwnd x (rtt - baseRTT) / baseRTT is the number of segments the
 * flow keeps queued; below alpha cwnd grows by one, above beta it shrinks by one.
 * In slow start, diff above gamma ends slow start with cwnd cut to the target
 * (cwnd x baseRTT / rtt, plus one). Rounds with fewer than three RTT samples,
 * and any state but Open, fall back to Reno.
 *
 * Follows tcp_vegas_init, vegas_enable/vegas_disable, tcp_vegas_pkts_acked,
 * tcp_vegas_state, tcp_vegas_cwnd_event, tcp_vegas_cong_avoid (with
 * tcp_vegas_ssthresh and tcp_current_ssthresh); ssthresh and undo_cwnd are
 * tcp_reno_ssthresh and tcp_reno_undo_cwnd (kfuncs); Reno's fallback is
 * tcp_reno_cong_avoid (a kfunc).
 *
 * Parameters: the module parameters alpha, beta and gamma, as const volatile
 * globals (a flow's params set them before load).
 *
 * Deviations: diff and the target window are computed in 64 bits, as the native
 * port does (the kernel's u32 product wraps only past 2^32 segment-us).
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

const volatile __u32 alpha = 2;
const volatile __u32 beta = 4;
const volatile __u32 gamma = 1;

#define RTT_NONE 0x7fffffffU
#define TCPF_CA_CWR (1 << TCP_CA_CWR)
#define TCPF_CA_Recovery (1 << TCP_CA_Recovery)

struct vegas {
	__u32 beg_snd_nxt; /* right edge during last RTT */
	__u32 beg_snd_una; /* left edge during last RTT */
	__u32 beg_snd_cwnd; /* saves the size of the cwnd */
	__u8 doing_vegas_now; /* if true, do vegas for this RTT */
	__u16 cnt_rtt; /* # of RTTs measured within last RTT */
	__u32 min_rtt; /* min of RTTs measured within last RTT (in usec) */
	__u32 base_rtt; /* the min of all Vegas RTT measurements seen (in usec) */
};

static __always_inline void vegas_enable(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct vegas *vegas = inet_csk_ca(sk);

	/* Begin taking Vegas samples next time we send something. */
	vegas->doing_vegas_now = 1;
	/* Set the beginning of the next send window. */
	vegas->beg_snd_nxt = tp->snd_nxt;
	vegas->cnt_rtt = 0;
	vegas->min_rtt = RTT_NONE;
}

static __always_inline void vegas_init(struct sock *sk)
{
	struct vegas *vegas = inet_csk_ca(sk);

	vegas->base_rtt = RTT_NONE;
	vegas_enable(sk);
}

static __always_inline bool tcp_in_cwnd_reduction(const struct sock *sk)
{
	return (TCPF_CA_CWR | TCPF_CA_Recovery) & (1 << tcplab_ca_state(sk));
}

static __always_inline __u32 tcp_current_ssthresh(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	__u32 three_quarters = (tp->snd_cwnd >> 1) + (tp->snd_cwnd >> 2);

	if (tcp_in_cwnd_reduction(sk))
		return tp->snd_ssthresh;
	return tp->snd_ssthresh > three_quarters ? tp->snd_ssthresh : three_quarters;
}

static __always_inline __u32 tcp_vegas_ssthresh(const struct tcp_sock *tp)
{
	return tp->snd_ssthresh < tp->snd_cwnd ? tp->snd_ssthresh : tp->snd_cwnd;
}

SEC("struct_ops")
void BPF_PROG(vegas_init_cb, struct sock *sk)
{
	vegas_init(sk);
}

SEC("struct_ops")
void BPF_PROG(vegas_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct vegas *vegas = inet_csk_ca(sk);
	__s32 rtt_us = sample->rtt_us;
	__u32 vrtt;

	if (rtt_us < 0)
		return;
	/* Never allow zero rtt or baseRTT */
	vrtt = (__u32)rtt_us + 1;
	/* Filter to find propagation delay: */
	if (vrtt < vegas->base_rtt)
		vegas->base_rtt = vrtt;
	/* Find the min RTT during the last RTT to find the current prop. delay +
	 * queuing delay: */
	if (vrtt < vegas->min_rtt)
		vegas->min_rtt = vrtt;
	vegas->cnt_rtt++;
}

SEC("struct_ops")
void BPF_PROG(vegas_state, struct sock *sk, __u8 ca_state)
{
	struct vegas *vegas = inet_csk_ca(sk);

	if (ca_state == TCP_CA_Open)
		vegas_enable(sk);
	else
		vegas->doing_vegas_now = 0;
}

SEC("struct_ops")
void BPF_PROG(vegas_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_CWND_RESTART || event == CA_EVENT_TX_START)
		vegas_init(sk);
}

SEC("struct_ops")
void BPF_PROG(vegas_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct vegas *vegas = inet_csk_ca(sk);

	if (!vegas->doing_vegas_now) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (after(ack, vegas->beg_snd_nxt)) {
		/* Do the Vegas once-per-RTT cwnd adjustment. Save the extent of the
		 * current window so we can use this at the end of the next RTT. */
		vegas->beg_snd_nxt = tp->snd_nxt;
		/* We do the Vegas calculations only if we got enough RTT samples that
		 * we can be sure of not being fooled by delayed ACKs: three. */
		if (vegas->cnt_rtt <= 2) {
			tcp_reno_cong_avoid(sk, ack, acked);
		} else {
			__u64 rtt = vegas->min_rtt, base = vegas->base_rtt;
			__u64 cwnd = tp->snd_cwnd;
			__u64 target_cwnd = cwnd * base / rtt;
			__u64 d = cwnd * (rtt - base) / base;
			__u32 diff = d > 0xffffffffULL ? 0xffffffffU : (__u32)d;

			if (diff > gamma && tcp_in_slow_start(tp)) {
				/* Going too fast: slow down to the target rate and leave
				 * slow start. */
				__u32 t = (__u32)target_cwnd + 1;

				if (t < tp->snd_cwnd)
					tp->snd_cwnd = t;
				tp->snd_ssthresh = tcp_vegas_ssthresh(tp);
			} else if (tcp_in_slow_start(tp)) {
				tcp_slow_start(tp, acked);
			} else {
				if (diff > beta) {
					/* Too fast: decrease cwnd by one. */
					tp->snd_cwnd--;
					tp->snd_ssthresh = tcp_vegas_ssthresh(tp);
				} else if (diff < alpha) {
					/* Too slow: increase cwnd by one. */
					tp->snd_cwnd++;
				}
			}
			if (tp->snd_cwnd < 2)
				tp->snd_cwnd = 2;
			else if (tp->snd_cwnd > tp->snd_cwnd_clamp)
				tp->snd_cwnd = tp->snd_cwnd_clamp;
			tp->snd_ssthresh = tcp_current_ssthresh(sk);
		}
		/* Wipe the slate clean for the next RTT. */
		vegas->cnt_rtt = 0;
		vegas->min_rtt = RTT_NONE;
	} else if (tcp_in_slow_start(tp)) {
		/* Use normal slow start */
		tcp_slow_start(tp, acked);
	}
}

SEC("struct_ops")
__u32 BPF_PROG(vegas_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(vegas_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops vegas = {
	.init = (void *)vegas_init_cb,
	.ssthresh = (void *)vegas_ssthresh,
	.cong_avoid = (void *)vegas_cong_avoid,
	.set_state = (void *)vegas_state,
	.cwnd_event = (void *)vegas_cwnd_event,
	.pkts_acked = (void *)vegas_pkts_acked,
	.undo_cwnd = (void *)vegas_undo_cwnd,
	.name = "bpf_vegas",
};
