// SPDX-License-Identifier: MIT
/*
 * yeah.bpf.c: YeAH-TCP as Linux runs it (net/ipv4/tcp_yeah.c), as a BPF struct_ops
 * tcp_congestion_ops: the twin of tcplab's native `yeah` (crates/cc/src/yeah.rs),
 * so that a kernel without the module runs it.
 *
 * Model (Baiocchi, Castellani and Vacirca, PFLDnet 2007, Sec. 2): two modes chosen
 * once per RTT from Vegas's measurements. The queue the flow builds is
 * Q = cwnd (RTT - baseRTT) / RTT segments. While Q <= alpha = 80 and the queueing
 * delay is at most baseRTT / phy (phy = 8) the flow is in Fast mode and grows as
 * Scalable TCP; otherwise in Slow mode it grows as Reno and, if Q > alpha, gives
 * the excess back at once (precautionary decongestion), not below reno_count, its
 * estimate of a competing Reno flow's window. On loss, while Slow mode has lasted
 * under rho = 16 rounds, the cut is the measured queue (between cwnd / 8 and
 * cwnd / 2); after that it is Reno's half.
 *
 * Follows tcp_yeah_init, tcp_yeah_cong_avoid, tcp_yeah_ssthresh; set_state,
 * cwnd_event and pkts_acked are Vegas's (tcp_vegas_state, tcp_vegas_cwnd_event,
 * tcp_vegas_pkts_acked: struct yeah begins with a struct vegas, as the kernel's);
 * undo_cwnd is tcp_reno_undo_cwnd (a kfunc).
 *
 * Deviations: tcp_yeah_init's clamp of snd_cwnd_clamp to 0xffffffff / 128 is left
 * out (a BPF program may not write snd_cwnd_clamp; no window below 33.5 M segments
 * reaches it), so runs are the native's.
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

#define TCP_YEAH_ALPHA 80 /* number of packets queued at the bottleneck */
#define TCP_YEAH_GAMMA 1 /* fraction of queue to be removed per rtt */
#define TCP_YEAH_DELTA 3 /* log minimum fraction of cwnd to be removed on loss */
#define TCP_YEAH_EPSILON 1 /* log maximum fraction to be removed on early decongestion */
#define TCP_YEAH_PHY 8 /* maximum delta from base */
#define TCP_YEAH_RHO 16 /* minimum number of consecutive rtt to consider competition on loss */
#define TCP_YEAH_ZETA 50 /* minimum number of state switches to reset reno_count */
#define TCP_SCALABLE_AI_CNT 100U
#define RTT_NONE 0x7fffffffU

/* struct vegas of tcp_vegas.h, which struct yeah begins with. */
struct vegas {
	__u32 beg_snd_nxt;
	__u32 beg_snd_una;
	__u32 beg_snd_cwnd;
	__u8 doing_vegas_now;
	__u16 cnt_rtt;
	__u32 min_rtt;
	__u32 base_rtt;
};

struct yeah {
	struct vegas vegas; /* must be first */
	/* YeAH variables */
	__u32 lastQ;
	__u32 doing_reno_now;
	__u32 reno_count;
	__u32 fast_count;
};

static __always_inline void vegas_enable(struct sock *sk)
{
	struct vegas *vegas = inet_csk_ca(sk);

	vegas->doing_vegas_now = 1;
	vegas->beg_snd_nxt = tcp_sk(sk)->snd_nxt;
	vegas->cnt_rtt = 0;
	vegas->min_rtt = RTT_NONE;
}

static __always_inline void vegas_init(struct sock *sk)
{
	struct vegas *vegas = inet_csk_ca(sk);

	vegas->base_rtt = RTT_NONE;
	vegas_enable(sk);
}

SEC("struct_ops")
void BPF_PROG(yeah_init, struct sock *sk)
{
	struct yeah *yeah = inet_csk_ca(sk);

	vegas_init(sk);
	yeah->doing_reno_now = 0;
	yeah->lastQ = 0;
	yeah->reno_count = 2;
	yeah->fast_count = 0;
}

/* tcp_vegas_pkts_acked */
SEC("struct_ops")
void BPF_PROG(yeah_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct vegas *vegas = inet_csk_ca(sk);
	__u32 vrtt;

	if (sample->rtt_us < 0)
		return;
	vrtt = (__u32)sample->rtt_us + 1;
	if (vrtt < vegas->base_rtt)
		vegas->base_rtt = vrtt;
	if (vrtt < vegas->min_rtt)
		vegas->min_rtt = vrtt;
	vegas->cnt_rtt++;
}

/* tcp_vegas_state */
SEC("struct_ops")
void BPF_PROG(yeah_state, struct sock *sk, __u8 ca_state)
{
	struct vegas *vegas = inet_csk_ca(sk);

	if (ca_state == TCP_CA_Open)
		vegas_enable(sk);
	else
		vegas->doing_vegas_now = 0;
}

/* tcp_vegas_cwnd_event */
SEC("struct_ops")
void BPF_PROG(yeah_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_CWND_RESTART || event == CA_EVENT_TX_START)
		vegas_init(sk);
}

SEC("struct_ops")
void BPF_PROG(yeah_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct yeah *yeah = inet_csk_ca(sk);

	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp))
		acked = tcp_slow_start(tp, acked);
	if (acked) {
		if (!yeah->doing_reno_now) {
			/* Scalable */
			__u32 w = tp->snd_cwnd < TCP_SCALABLE_AI_CNT ? tp->snd_cwnd : TCP_SCALABLE_AI_CNT;

			tcp_cong_avoid_ai(tp, w, acked);
		} else {
			/* Reno */
			tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
		}
	}
	/* The key players are v_vegas.beg_snd_una and v_beg_snd_nxt. */
	if (after(ack, yeah->vegas.beg_snd_nxt)) {
		/* We do the Vegas calculations only if we got enough RTT samples that we
		 * can be sure of not being fooled by delayed ACKs: three. */
		if (yeah->vegas.cnt_rtt > 2) {
			__u32 rtt = yeah->vegas.min_rtt, base = yeah->vegas.base_rtt;
			__u32 queue = (__u64)tp->snd_cwnd * (rtt - base) / rtt;

			if (queue > TCP_YEAH_ALPHA || rtt - base > base / TCP_YEAH_PHY) {
				if (queue > TCP_YEAH_ALPHA && tp->snd_cwnd > yeah->reno_count) {
					__u32 reduction = queue / TCP_YEAH_GAMMA;
					__u32 half = tp->snd_cwnd >> TCP_YEAH_EPSILON;

					if (reduction > half)
						reduction = half;
					tp->snd_cwnd -= reduction;
					if (tp->snd_cwnd < yeah->reno_count)
						tp->snd_cwnd = yeah->reno_count;
					tp->snd_ssthresh = tp->snd_cwnd;
				}
				if (yeah->reno_count <= 2) {
					__u32 r = tp->snd_cwnd >> 1;

					yeah->reno_count = r > 2 ? r : 2;
				} else {
					yeah->reno_count++;
				}
				yeah->doing_reno_now = yeah->doing_reno_now + 1 < 0xffffffU ?
							       yeah->doing_reno_now + 1 : 0xffffffU;
			} else {
				yeah->fast_count++;
				if (yeah->fast_count > TCP_YEAH_ZETA) {
					yeah->reno_count = 2;
					yeah->fast_count = 0;
				}
				yeah->doing_reno_now = 0;
			}
			yeah->lastQ = queue;
		}
		/* Save the extent of the current window so we can use this at the end
		 * of the next RTT. */
		yeah->vegas.beg_snd_una = yeah->vegas.beg_snd_nxt;
		yeah->vegas.beg_snd_nxt = tp->snd_nxt;
		yeah->vegas.beg_snd_cwnd = tp->snd_cwnd;
		/* Wipe the slate clean for the next RTT. */
		yeah->vegas.cnt_rtt = 0;
		yeah->vegas.min_rtt = RTT_NONE;
	}
}

SEC("struct_ops")
__u32 BPF_PROG(yeah_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct yeah *yeah = inet_csk_ca(sk);
	__u32 cwnd = tp->snd_cwnd, half = cwnd >> 1, reduction;
	__s32 s;

	if (half < 2)
		half = 2;
	if (yeah->doing_reno_now < TCP_YEAH_RHO) {
		reduction = yeah->lastQ < half ? yeah->lastQ : half;
		if (reduction < (cwnd >> TCP_YEAH_DELTA))
			reduction = cwnd >> TCP_YEAH_DELTA;
	} else {
		reduction = half;
	}
	yeah->fast_count = 0;
	yeah->reno_count = yeah->reno_count >> 1 > 2 ? yeah->reno_count >> 1 : 2;
	s = (__s32)cwnd - (__s32)reduction;
	return s > 2 ? (__u32)s : 2;
}

SEC("struct_ops")
__u32 BPF_PROG(yeah_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops yeah = {
	.init = (void *)yeah_init,
	.ssthresh = (void *)yeah_ssthresh,
	.cong_avoid = (void *)yeah_cong_avoid,
	.set_state = (void *)yeah_state,
	.cwnd_event = (void *)yeah_cwnd_event,
	.pkts_acked = (void *)yeah_pkts_acked,
	.undo_cwnd = (void *)yeah_undo_cwnd,
	.name = "bpf_yeah",
};
