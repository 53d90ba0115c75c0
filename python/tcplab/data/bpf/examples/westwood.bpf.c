// SPDX-License-Identifier: MIT
/*
 * westwood.bpf.c: TCP Westwood+ as Linux runs it (net/ipv4/tcp_westwood.c), as a
 * BPF struct_ops tcp_congestion_ops: the twin of tcplab's native `westwood`
 * (crates/cc/src/westwood.rs), so that a kernel without the module runs it.
 *
 * Model (Mascolo et al., MobiCom 2001, Sec. 2-3; Westwood+ as in Grieco and
 * Mascolo, SIGCOMM CCR 34(2), 2004): the sender estimates its bandwidth from the
 * rate of returning ACKs, once per RTT (at least 50 ms): the bytes acknowledged in
 * that window over its length, smoothed twice by a 7/8 low-pass filter. After a
 * loss the window is what that bandwidth needs on an empty path, bw_est x RTTmin
 * / MSS: on an RTO at once (ssthresh), after fast recovery when it completes
 * (cwnd = ssthresh). Duplicate ACKs count one MSS each and a cumulative ACK after
 * them only what they did not count. Growth is Reno's.
 *
 * Follows tcp_westwood_init, westwood_do_filter, westwood_filter,
 * tcp_westwood_pkts_acked, westwood_update_window, update_rtt_min,
 * westwood_fast_bw, westwood_acked_count, tcp_westwood_bw_rttmin,
 * tcp_westwood_ack, tcp_westwood_event; ssthresh, cong_avoid and undo_cwnd are
 * tcp_reno_ssthresh, tcp_reno_cong_avoid and tcp_reno_undo_cwnd (kfuncs).
 *
 * Deviations: none. (The kernel's u32 product bw_est x rtt_min is kept, wrapping,
 * as in the native port.)
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

/* TCP_WESTWOOD_RTT_MIN (HZ / 20, 50 ms) and TCP_WESTWOOD_INIT_RTT (20 s). */
#define TCP_WESTWOOD_RTT_MIN (HZ / 20)
#define TCP_WESTWOOD_INIT_RTT (20 * HZ)

struct westwood {
	__u32 bw_ns_est; /* first bandwidth estimation..not too smoothed 8) */
	__u32 bw_est; /* bandwidth estimate */
	__u32 rtt_win_sx; /* here starts a new evaluation... */
	__u32 bk;
	__u32 snd_una; /* used for evaluating the number of acked bytes */
	__u32 cumul_ack;
	__u32 accounted;
	__u32 rtt;
	__u32 rtt_min; /* minimum observed RTT */
	__u8 first_ack; /* flag which infers that this is the first ack */
	__u8 reset_rtt_min; /* Reset RTT min to next RTT sample */
};

static __always_inline __u32 westwood_do_filter(__u32 a, __u32 b)
{
	/* this is the low-pass filter, 7/8 */
	return ((7 * a) + b) >> 3;
}

static __always_inline void westwood_filter(struct westwood *w, __u32 delta)
{
	/* If the filter is empty fill it with the first sample of bandwidth */
	if (w->bw_ns_est == 0 && w->bw_est == 0) {
		w->bw_ns_est = w->bk / delta;
		w->bw_est = w->bw_ns_est;
	} else {
		w->bw_ns_est = westwood_do_filter(w->bw_ns_est, w->bk / delta);
		w->bw_est = westwood_do_filter(w->bw_est, w->bw_ns_est);
	}
}

static __always_inline void westwood_update_window(struct sock *sk)
{
	struct westwood *w = inet_csk_ca(sk);
	__u32 now = tcp_jiffies32;
	__u32 delta = now - w->rtt_win_sx;
	__u32 span;

	/* Initialize w->snd_una with the first acked sequence number in order to
	 * fix mismatch between tp->snd_una and w->snd_una for the first bandwidth
	 * sample. */
	if (w->first_ack) {
		w->snd_una = tcp_sk(sk)->snd_una;
		w->first_ack = 0;
	}
	/* See if an RTT-window has passed. Be careful since if RTT is less than
	 * 50ms we don't filter but we continue 'building the sample'. */
	span = w->rtt > TCP_WESTWOOD_RTT_MIN ? w->rtt : TCP_WESTWOOD_RTT_MIN;
	if (w->rtt && delta > span) {
		westwood_filter(w, delta);
		w->bk = 0;
		w->rtt_win_sx = now;
	}
}

static __always_inline void update_rtt_min(struct westwood *w)
{
	if (w->reset_rtt_min) {
		w->rtt_min = w->rtt;
		w->reset_rtt_min = 0;
	} else if (w->rtt < w->rtt_min) {
		w->rtt_min = w->rtt;
	}
}

static __always_inline __u32 westwood_bw_rttmin(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	const struct westwood *w = inet_csk_ca(sk);
	__u32 c = w->bw_est * w->rtt_min / tp->mss_cache;

	return c > 2 ? c : 2;
}

SEC("struct_ops")
void BPF_PROG(westwood_init, struct sock *sk)
{
	struct westwood *w = inet_csk_ca(sk);

	w->bk = 0;
	w->bw_ns_est = 0;
	w->bw_est = 0;
	w->accounted = 0;
	w->cumul_ack = 0;
	w->reset_rtt_min = 1;
	w->rtt_min = w->rtt = TCP_WESTWOOD_INIT_RTT;
	w->rtt_win_sx = tcp_jiffies32;
	w->snd_una = tcp_sk(sk)->snd_una;
	w->first_ack = 1;
}

SEC("struct_ops")
void BPF_PROG(westwood_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct westwood *w = inet_csk_ca(sk);

	if (sample->rtt_us > 0)
		w->rtt = usecs_to_jiffies(sample->rtt_us);
}

SEC("struct_ops")
void BPF_PROG(westwood_ack, struct sock *sk, __u32 ack_flags)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct westwood *w = inet_csk_ca(sk);

	if (ack_flags & CA_ACK_SLOWPATH) {
		/* westwood_acked_count: duplicate ACKs count one MSS each, the
		 * cumulative ACK after them what they did not count. */
		__u32 mss = tp->mss_cache;

		westwood_update_window(sk);
		w->cumul_ack = tp->snd_una - w->snd_una;
		/* If cumul_ack is 0 this is a dupack since it's not moving
		 * tp->snd_una. */
		if (!w->cumul_ack) {
			w->accounted += mss;
			w->cumul_ack = mss;
		}
		if (w->cumul_ack > mss) {
			/* Partial or delayed ack */
			if (w->accounted >= w->cumul_ack) {
				w->accounted -= w->cumul_ack;
				w->cumul_ack = mss;
			} else {
				w->cumul_ack -= w->accounted;
				w->accounted = 0;
			}
		}
		w->snd_una = tp->snd_una;
		w->bk += w->cumul_ack;
		update_rtt_min(w);
		return;
	}
	/* westwood_fast_bw: the fast path, in-order data. */
	westwood_update_window(sk);
	w->bk += tp->snd_una - w->snd_una;
	w->snd_una = tp->snd_una;
	update_rtt_min(w);
}

SEC("struct_ops")
void BPF_PROG(westwood_event, struct sock *sk, enum tcp_ca_event event)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct westwood *w = inet_csk_ca(sk);

	switch (event) {
	case CA_EVENT_COMPLETE_CWR:
		tp->snd_ssthresh = westwood_bw_rttmin(sk);
		tp->snd_cwnd = tp->snd_ssthresh;
		break;
	case CA_EVENT_LOSS:
		tp->snd_ssthresh = westwood_bw_rttmin(sk);
		/* Update RTT_min when next ack arrives */
		w->reset_rtt_min = 1;
		break;
	default:
		/* don't care */
		break;
	}
}

SEC("struct_ops")
__u32 BPF_PROG(westwood_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(westwood_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(westwood_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops westwood = {
	.init = (void *)westwood_init,
	.ssthresh = (void *)westwood_ssthresh,
	.cong_avoid = (void *)westwood_cong_avoid,
	.cwnd_event = (void *)westwood_event,
	.in_ack_event = (void *)westwood_ack,
	.pkts_acked = (void *)westwood_pkts_acked,
	.undo_cwnd = (void *)westwood_undo_cwnd,
	.name = "bpf_westwood",
};
