// SPDX-License-Identifier: MIT
/*
 * copa.bpf.c: Copa's default mode (Arun and Balakrishnan, "Copa: Practical
 * Delay-Based Congestion Control for the Internet", NSDI 2018, Sec. 2-3; mvfst's
 * quic/congestion_control/Copa.cpp as the implementation reference), as a BPF
 * struct_ops tcp_congestion_ops: the twin of tcplab's native `copa`
 * (crates/cc/src/copa.rs), so that a kernel (which has no Copa) runs it through
 * Linux's TCP. Written in integer and fixed-point arithmetic (BPF has no floating
 * point), so it is not the port bit for bit.
 *
 * Model (Sec. 2): the target rate lambda_t = 1 / (delta * d_q) packets per second,
 * d_q = RTTstanding - RTTmin (RTTmin the smallest RTT of the last 10 s,
 * RTTstanding the smallest of the last srtt / 2). On every ACK the current rate
 * cwnd / RTTstanding is compared with the target: below it cwnd grows by
 * v / (delta * cwnd) per acked packet, above it shrinks by as much. The velocity
 * v doubles every RTT once the direction held three RTTs, and is 1 again when it
 * changes. Slow start doubles cwnd once per srtt until the rate first exceeds the
 * target. Packets are paced at 2 cwnd / RTTstanding (sk_pacing_rate, with
 * SK_PACING_NEEDED: the kernel's internal pacing, or fq's).
 *
 * Follows the port's functions one for one: check_and_update_direction
 * (mvfst checkAndUpdateDirection), change_direction (changeDirection), on_ack
 * (onPacketAcked), set_pacing_rate, step, write_cwnd, and its hooks init,
 * cong_control (Copa owns cwnd and pacing, as BBR does), cwnd_event (an RTO:
 * cwnd 2), ssthresh and undo_cwnd (the kernel's values kept). The windowed minima
 * are lib/win_minmax.c's minmax_running_min (as the port's crate::minmax).
 *
 * Parameters: delta_1024, delta in 1024ths (512: the paper's default 0.5), as a
 * const volatile global (a flow's params set it before load); the port's float
 * `delta` has no integer form.
 *
 * Deviations from the native port:
 * - cwnd is Q16.16 segments (u64) where the port keeps an f64; each step
 *   acked * v / (delta * cwnd) is one integer division, truncated. The test
 *   "is the current rate at most the target", delta * d_q * cwnd <= RTTstanding,
 *   is exact on the Q16 cwnd (an integer comparison, not a float one).
 * - v is a u32 capped at 2^20 (the port's f64 doubles without bound; 2^20 would
 *   take 20 RTTs of doubling in one direction, and cwnd's floor and clamp bind
 *   long before).
 * - The pacing rate 2 cwnd mss / RTTstanding is computed on cwnd in Q10 (the Q16
 *   value shifted, so the product fits 64 bits) and rounded to the nearest byte
 *   per second; the port rounds the f64.
 * - Times are tp->tcp_mstamp (us) in u32 (win_minmax's clock, wrapping; the port
 *   keeps u64 for its srtt tests, which a 71-minute run would not reach).
 * - Writes snd_cwnd, sk_pacing_rate and sk_pacing_status only: all three are in
 *   bpf_tcp_ca_btf_struct_access's list (net/ipv4/bpf_tcp_ca.c).
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

/* Sec. 2.1: RTTmin over "a longer period (10 seconds)"; mvfst kMinRTTWindowLength. */
#define RTT_MIN_WINDOW_US 10000000U
/* Sec. 2.2: double v "only after the direction has remained the same for three RTTs". */
#define VELOCITY_RTTS 3
/* mvfst minCwndInMss default 2 (segments). */
#define MIN_CWND 2
/* Sec. 2.1: "pace packets at 2 * cwnd / RTTstanding". */
#define PACING_GAIN 2
#define VELOCITY_MAX (1U << 20)
#define FRAC_BITS 16
#define DIR_NONE 0
#define DIR_UP 1
#define DIR_DOWN 2

/* delta in 1024ths: Sec. 2.1, delta = 0.5 by default. */
const volatile __u32 delta_1024 = 512;

/* lib/win_minmax.c's filter: best, second and third best of the window. Its own
 * struct, not tcplab_cc.h's minmax_sample, which carries CO-RE relocations (the
 * kernel's tcp_sock field type); this one is the program's private memory. */
struct copa_minmax_sample {
	__u32 t;
	__u32 v;
};

struct copa_minmax {
	struct copa_minmax_sample s[3];
};

struct copa {
	struct copa_minmax rtt_min;
	struct copa_minmax rtt_standing;
	__u64 cwnd; /* Q16 segments */
	__u64 last_recorded_cwnd; /* Q16 */
	__u32 last_double_us;
	__u32 last_record_us;
	__u32 velocity;
	__u32 same_direction;
	__u8 direction;
	__u8 slow_start;
	__u8 have_double;
	__u8 have_record;
	__u8 have_min;
	__u8 have_standing;
};

static __always_inline void minmax_reset(struct copa_minmax *m, __u32 t, __u32 meas)
{
	m->s[0].t = m->s[1].t = m->s[2].t = t;
	m->s[0].v = m->s[1].v = m->s[2].v = meas;
}

/* lib/win_minmax.c minmax_subwin_update. */
static __always_inline __u32 minmax_subwin_update(struct copa_minmax *m, __u32 win, __u32 t,
						  __u32 v)
{
	__u32 dt = t - m->s[0].t;

	if (dt > win) {
		m->s[0] = m->s[1];
		m->s[1] = m->s[2];
		m->s[2].t = t;
		m->s[2].v = v;
		if (t - m->s[0].t > win) {
			m->s[0] = m->s[1];
			m->s[1] = m->s[2];
		}
	} else if (m->s[1].t == m->s[0].t && dt > win / 4) {
		m->s[2].t = m->s[1].t = t;
		m->s[2].v = m->s[1].v = v;
	} else if (m->s[2].t == m->s[1].t && dt > win / 2) {
		m->s[2].t = t;
		m->s[2].v = v;
	}
	return m->s[0].v;
}

/* lib/win_minmax.c minmax_running_min; the first sample starts the filter. */
static __always_inline __u32 running_min(struct copa_minmax *m, __u8 *have, __u32 win, __u32 t,
					 __u32 meas)
{
	if (!*have || meas <= m->s[0].v || t - m->s[2].t > win) {
		*have = 1;
		minmax_reset(m, t, meas);
		return meas;
	}
	if (meas <= m->s[1].v) {
		m->s[2].t = m->s[1].t = t;
		m->s[2].v = m->s[1].v = meas;
	} else if (meas <= m->s[2].v) {
		m->s[2].t = t;
		m->s[2].v = meas;
	}
	return minmax_subwin_update(m, win, t, meas);
}

/* mvfst checkAndUpdateDirection: once per srtt, up if cwnd grew since the last
 * check, else down; v doubles once the direction held VELOCITY_RTTS times. */
static __always_inline void check_and_update_direction(struct copa *ca, __u32 now, __u32 srtt)
{
	__u8 dir;

	if (!ca->have_record) {
		ca->have_record = 1;
		ca->last_record_us = now;
		ca->last_recorded_cwnd = ca->cwnd;
		return;
	}
	if (now - ca->last_record_us < srtt)
		return;
	dir = ca->cwnd > ca->last_recorded_cwnd ? DIR_UP : DIR_DOWN;
	if (dir != ca->direction) {
		ca->velocity = 1;
		ca->same_direction = 0;
	} else {
		ca->same_direction++;
		if (ca->same_direction >= VELOCITY_RTTS && ca->velocity < VELOCITY_MAX)
			ca->velocity *= 2;
	}
	ca->direction = dir;
	ca->last_record_us = now;
	ca->last_recorded_cwnd = ca->cwnd;
}

/* mvfst changeDirection: the rule moved against the direction v was built for. */
static __always_inline void change_direction(struct copa *ca, __u8 dir, __u32 now)
{
	if (ca->direction == dir)
		return;
	ca->direction = dir;
	ca->velocity = 1;
	ca->same_direction = 0;
	ca->have_record = 1;
	ca->last_record_us = now;
	ca->last_recorded_cwnd = ca->cwnd;
}

/* v / (delta * cwnd) per acked packet (Sec. 2.1, step 3), in Q16:
 * acked * v * 1024 / (delta_1024 * cwnd) segments = acked * v << 42 / (delta_1024
 * * cwnd_q16). */
static __always_inline __u64 copa_step(struct copa *ca, __u32 acked)
{
	__u64 num = (__u64)acked * ca->velocity;
	__u64 den = (__u64)(delta_1024 ? delta_1024 : 1) * (ca->cwnd ? ca->cwnd : 1);

	if (num < (1ULL << 21))
		return (num << 42) / den;
	return ((num << 21) / den) << 21;
}

/* One ACK of `acked` packets with RTT sample `rtt` at `now`, srtt `srtt` (us).
 * Returns RTTstanding (us) when the rule ran, 0 otherwise. */
static __always_inline __u32 on_ack(struct copa *ca, __u32 now, __u32 rtt, __u32 srtt,
				    __u32 acked)
{
	__u32 min = running_min(&ca->rtt_min, &ca->have_min, RTT_MIN_WINDOW_US, now, rtt);
	__u32 standing = running_min(&ca->rtt_standing, &ca->have_standing, srtt / 2, now, rtt);
	__u64 lhs, step, floor = (__u64)MIN_CWND << FRAC_BITS;
	__u32 dq;
	bool increase;

	if (standing < min || standing == 0)
		return 0; /* mvfst: "delay negative" / no standing RTT */
	dq = standing - min;
	/* lambda <= lambda_t <=> delta * dq * cwnd <= standing, with delta =
	 * delta_1024 / 1024 and cwnd Q16: delta_1024 * dq * cwnd_q16 <= standing
	 * << 26, i.e. cwnd_q16 <= floor((standing << 26) / (delta_1024 * dq)). */
	lhs = (__u64)(delta_1024 ? delta_1024 : 1) * dq;
	increase = dq == 0 || ca->cwnd <= ((__u64)standing << 26) / lhs;
	if (!(increase && ca->slow_start))
		check_and_update_direction(ca, now, srtt);
	if (increase) {
		if (ca->slow_start) {
			if (!ca->have_double) {
				ca->have_double = 1;
				ca->last_double_us = now;
			} else if (now - ca->last_double_us > srtt) {
				ca->cwnd *= 2;
				ca->last_double_us = now;
			}
		} else {
			if (ca->direction != DIR_UP && ca->velocity > 1)
				change_direction(ca, DIR_UP, now);
			ca->cwnd += copa_step(ca, acked);
		}
	} else {
		if (ca->direction != DIR_DOWN && ca->velocity > 1)
			change_direction(ca, DIR_DOWN, now);
		step = copa_step(ca, acked);
		ca->cwnd = ca->cwnd > floor + step ? ca->cwnd - step : floor;
		ca->slow_start = 0;
	}
	return standing;
}

/* 2 * cwnd * mss / rtt in bytes per second, at least 1, capped by
 * sk_max_pacing_rate; cwnd taken in Q10 so the product fits 64 bits. */
static __always_inline void set_pacing_rate(struct sock *sk, struct copa *ca, __u32 rtt_us)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u64 bytes_q10 = (ca->cwnd >> (FRAC_BITS - 10)) * tp->mss_cache;
	__u64 max = sk->sk_max_pacing_rate;
	__u64 rate;

	if (!rtt_us)
		rtt_us = 1;
	rate = ((bytes_q10 * PACING_GAIN * USEC_PER_SEC) / rtt_us + (1 << 9)) >> 10;
	if (max < 1)
		max = 1;
	if (rate < 1)
		rate = 1;
	if (rate > max)
		rate = max;
	sk->sk_pacing_rate = rate;
}

static __always_inline void write_cwnd(struct tcp_sock *tp, struct copa *ca)
{
	__u64 cwnd = ca->cwnd >> FRAC_BITS;

	if (cwnd < MIN_CWND)
		cwnd = MIN_CWND;
	if (cwnd > tp->snd_cwnd_clamp)
		cwnd = tp->snd_cwnd_clamp;
	tp->snd_cwnd = (__u32)cwnd;
}

SEC("struct_ops")
void BPF_PROG(copa_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct copa *ca = inet_csk_ca(sk);
	__u32 srtt = tp->srtt_us >> 3;

	ca->have_min = 0;
	ca->have_standing = 0;
	ca->cwnd = (__u64)tp->snd_cwnd << FRAC_BITS;
	ca->last_recorded_cwnd = 0;
	ca->last_double_us = 0;
	ca->last_record_us = 0;
	ca->velocity = 1;
	ca->same_direction = 0;
	ca->direction = DIR_NONE;
	ca->slow_start = 1;
	ca->have_double = 0;
	ca->have_record = 0;
	/* SK_PACING_NEEDED, as BBR (tcp_bbr.c's cmpxchg, a plain store from NONE). */
	if (sk->sk_pacing_status == SK_PACING_NONE)
		sk->sk_pacing_status = SK_PACING_NEEDED;
	/* srtt from the handshake, else BBR's nominal 1 ms (USEC_PER_MSEC). */
	set_pacing_rate(sk, ca, srtt ? srtt : USEC_PER_MSEC);
}

SEC("struct_ops")
void BPF_PROG(copa_cong_control, struct sock *sk, __u32 ack, int flag,
	      const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct copa *ca = inet_csk_ca(sk);
	long rtt_l = rs->rtt_us;

	if (rtt_l >= 0 && rs->acked_sacked > 0) {
		__u32 rtt = rtt_l > 0xffffffffL ? 0xffffffffU : (__u32)rtt_l;
		__u32 srtt = tp->srtt_us >> 3;
		__u32 standing;

		if (!srtt)
			srtt = rtt;
		standing = on_ack(ca, (__u32)tp->tcp_mstamp, rtt, srtt, rs->acked_sacked);
		if (standing)
			set_pacing_rate(sk, ca, standing);
	}
	write_cwnd(tp, ca);
}

/* An RTO: mvfst's persistent-congestion response, cwnd to its minimum. */
SEC("struct_ops")
void BPF_PROG(copa_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct copa *ca = inet_csk_ca(sk);

	if (ev == CA_EVENT_LOSS) {
		ca->cwnd = (__u64)MIN_CWND << FRAC_BITS;
		write_cwnd(tcp_sk(sk), ca);
	}
}

/* Not used to set cwnd (Copa owns it): the kernel's value is kept. */
SEC("struct_ops")
__u32 BPF_PROG(copa_ssthresh, struct sock *sk)
{
	return tcp_sk(sk)->snd_ssthresh;
}

SEC("struct_ops")
__u32 BPF_PROG(copa_undo_cwnd, struct sock *sk)
{
	return tcp_sk(sk)->snd_cwnd;
}

SEC(".struct_ops")
struct tcp_congestion_ops copa = {
	.init = (void *)copa_init,
	.ssthresh = (void *)copa_ssthresh,
	.cong_control = (void *)copa_cong_control,
	.cwnd_event = (void *)copa_cwnd_event,
	.undo_cwnd = (void *)copa_undo_cwnd,
	.name = "bpf_copa",
};
