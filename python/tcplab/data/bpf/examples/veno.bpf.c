// SPDX-License-Identifier: MIT
/*
 * veno.bpf.c: TCP Veno as Linux runs it (net/ipv4/tcp_veno.c), as a BPF
 * struct_ops tcp_congestion_ops: the twin of tcplab's native `veno`
 * (crates/cc/src/veno.rs), so that a kernel without the module runs it.
 *
 * Model (Fu and Liew, IEEE JSAC 21(2), 2003, Sec. II-III): Vegas's backlog
 * estimate N = cwnd (RTT - BaseRTT) / RTT (kept doubled, V_PARAM_SHIFT 1) tells
 * congestion losses from random ones. Below beta = 3 segments a loss is taken as
 * random and cuts cwnd by 1/5, and growth is Reno's; at or above it a loss
 * halves cwnd and congestion avoidance grows one segment every other RTT. RTT is
 * the smallest sample since the last cong_avoid (the kernel resets it on every
 * ACK), and after the first three samples every ACK decides.
 *
 * Follows veno_enable, veno_disable, tcp_veno_init, tcp_veno_pkts_acked,
 * tcp_veno_state, tcp_veno_cwnd_event, tcp_veno_cong_avoid, tcp_veno_ssthresh;
 * undo_cwnd is tcp_reno_undo_cwnd and the fallback tcp_reno_cong_avoid (kfuncs).
 *
 * Deviations: cntrtt is a u32, as in the native port (the kernel's u16 wraps
 * after 65535 samples, when for one sample Veno acts as Reno again).
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

#define V_PARAM_SHIFT 1
/* beta = 3 segments, in N's units (tcp_veno.c). */
#define VENO_BETA (3 << V_PARAM_SHIFT)
#define RTT_NONE 0x7fffffffU

struct veno {
	__u8 doing_veno_now; /* if true, do veno for this rtt */
	__u8 inc; /* decide whether to increase cwnd */
	__u32 cntrtt; /* # of rtts measured within last rtt */
	__u32 minrtt; /* min of rtts measured within last rtt (in usec) */
	__u32 basertt; /* the min of all Veno rtt measurements seen (in usec) */
	__u32 diff; /* calculate the diff rate */
};

static __always_inline void veno_enable(struct veno *veno)
{
	/* turn on Veno */
	veno->doing_veno_now = 1;
	veno->minrtt = RTT_NONE;
}

static __always_inline void veno_init(struct veno *veno)
{
	veno->basertt = RTT_NONE;
	veno->inc = 1;
	veno_enable(veno);
}

SEC("struct_ops")
void BPF_PROG(veno_init_cb, struct sock *sk)
{
	struct veno *veno = inet_csk_ca(sk);

	veno->cntrtt = 0;
	veno->diff = 0;
	veno_init(veno);
}

SEC("struct_ops")
void BPF_PROG(veno_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct veno *veno = inet_csk_ca(sk);
	__u32 vrtt;

	if (sample->rtt_us < 0)
		return;
	/* Never allow zero rtt or baseRTT */
	vrtt = (__u32)sample->rtt_us + 1;
	/* Filter to find propagation delay: */
	if (vrtt < veno->basertt)
		veno->basertt = vrtt;
	/* Find the min rtt during the last rtt to find the current prop. delay +
	 * queuing delay: */
	if (vrtt < veno->minrtt)
		veno->minrtt = vrtt;
	veno->cntrtt++;
}

SEC("struct_ops")
void BPF_PROG(veno_state, struct sock *sk, __u8 ca_state)
{
	struct veno *veno = inet_csk_ca(sk);

	if (ca_state == TCP_CA_Open)
		veno_enable(veno);
	else
		veno->doing_veno_now = 0;
}

SEC("struct_ops")
void BPF_PROG(veno_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_CWND_RESTART || event == CA_EVENT_TX_START)
		veno_init(inet_csk_ca(sk));
}

SEC("struct_ops")
void BPF_PROG(veno_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct veno *veno = inet_csk_ca(sk);

	if (!veno->doing_veno_now) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	/* limited by applications */
	if (!tcp_is_cwnd_limited(sk))
		return;
	/* We do the Veno calculations only if we got enough rtt samples */
	if (veno->cntrtt <= 2) {
		/* We don't have enough rtt samples to do the Veno calculation, so
		 * we'll behave like Reno. */
		tcp_reno_cong_avoid(sk, ack, acked);
	} else {
		__u64 target_cwnd = ((__u64)tp->snd_cwnd * veno->basertt) << V_PARAM_SHIFT;

		target_cwnd /= veno->minrtt;
		veno->diff = (tp->snd_cwnd << V_PARAM_SHIFT) - (__u32)target_cwnd;
		if (tcp_in_slow_start(tp)) {
			/* Slow start. */
			acked = tcp_slow_start(tp, acked);
			if (!acked)
				goto done;
		}
		/* Congestion avoidance. */
		if (veno->diff < VENO_BETA) {
			/* In the "non-congestive state", increase cwnd every rtt. */
			tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
		} else {
			/* In the "congestive state", increase cwnd every other rtt. */
			if (tp->snd_cwnd_cnt >= tp->snd_cwnd) {
				if (veno->inc && tp->snd_cwnd < tp->snd_cwnd_clamp) {
					tp->snd_cwnd++;
					veno->inc = 0;
				} else {
					veno->inc = 1;
				}
				tp->snd_cwnd_cnt = 0;
			} else {
				tp->snd_cwnd_cnt += acked;
			}
		}
done:
		if (tp->snd_cwnd < 2)
			tp->snd_cwnd = 2;
		else if (tp->snd_cwnd > tp->snd_cwnd_clamp)
			tp->snd_cwnd = tp->snd_cwnd_clamp;
	}
	/* Wipe the slate clean for the next rtt. */
	veno->minrtt = RTT_NONE;
}

/* Veno MD phase */
SEC("struct_ops")
__u32 BPF_PROG(veno_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct veno *veno = inet_csk_ca(sk);
	__u32 s;

	if (veno->diff < VENO_BETA)
		/* in "non-congestive state", cut cwnd by 1/5 */
		s = tp->snd_cwnd * 4 / 5;
	else
		/* in "congestive state", cut cwnd by 1/2 */
		s = tp->snd_cwnd >> 1;
	return s > 2 ? s : 2;
}

SEC("struct_ops")
__u32 BPF_PROG(veno_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops veno = {
	.init = (void *)veno_init_cb,
	.ssthresh = (void *)veno_ssthresh,
	.cong_avoid = (void *)veno_cong_avoid,
	.set_state = (void *)veno_state,
	.cwnd_event = (void *)veno_cwnd_event,
	.pkts_acked = (void *)veno_pkts_acked,
	.undo_cwnd = (void *)veno_undo_cwnd,
	.name = "bpf_veno",
};
