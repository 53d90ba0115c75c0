// SPDX-License-Identifier: MIT
/*
 * ledbat.bpf.c: LEDBAT, Low Extra Delay Background Transport (RFC 6817), as a
 * BPF struct_ops tcp_congestion_ops: the twin of tcplab's native `ledbat`
 * (crates/cc/src/ledbat.rs), so that a kernel (which has no LEDBAT module) runs
 * it through Linux's TCP. Written in integer and fixed-point arithmetic (BPF has
 * no floating point), so it is not the port bit for bit: the simulator holds the
 * two to stated tolerances instead (crates/controllers/tests/bpf_flows.rs).
 *
 * Model (RFC 6817 Sec. 2.4, the sender's pseudo-code of Sec. 2.4.2; ns-3's
 * TcpLedbat, src/internet/model/tcp-ledbat.cc, as the second reference): a
 * less-than-best-effort sender that keeps the queueing delay it adds near TARGET
 * = 100 ms. Every ACK brings a delay sample; the smallest sample of each minute
 * is kept for the last BASE_HISTORY = 10 minutes (the base delay), the last
 * CURRENT_FILTER = 4 samples are kept and their minimum is the current delay.
 * queuing_delay = current - base; off_target = (TARGET - queuing_delay) / TARGET;
 * per ACK cwnd += GAIN * off_target * acked / cwnd (segments), capped at
 * flightsize + ALLOWED_INCREASE and never below MIN_CWND = 2. A loss halves cwnd
 * (tcp_reno_ssthresh, reached through the kernel's PRR). Slow start is ns-3's:
 * the kernel's slow start until the first congestion-avoidance step, not again
 * until cwnd falls to one segment (after an RTO).
 *
 * Follows the port's functions one for one: update_base_delay,
 * update_current_delay, ledbat_step (RFC 6817's on-acknowledgement rule),
 * pkts_acked, cong_avoid, ssthresh; undo_cwnd is tcp_reno_undo_cwnd (a kfunc,
 * the port's default), growth before any delay sample tcp_cong_avoid_ai and slow
 * start tcp_slow_start (kfuncs).
 *
 * Parameters: target_ms and slow_start, as const volatile globals with the
 * port's defaults (a flow's params set them before load). GAIN is fixed at 1
 * (RFC 6817 Sec. 2.5.1: "1 or less"; ns-3's default): the port's float `gain`
 * has no integer form here.
 *
 * Deviations from the native port (which itself takes the delay from the RTT,
 * not RFC 6817's one-way delay from TCP timestamps; see its Deviations):
 * - One-way delay: a struct_ops congestion control could read the peer's
 *   timestamps (tcp_sock rx_opt.rcv_tsval/rcv_tsecr are readable), but they are
 *   in the peer's clock, and the simulator's socket image carries no rx_opt; as
 *   the port (and lp.bpf.c), the sample is the ACK's RTT in ms, truncated.
 * - cwnd's fraction of a segment is a 16-bit binary fraction (cwnd in Q16.16)
 *   where the port carries an f64 fraction, and the step
 *   off_target * acked / cwnd is one integer division truncated toward zero
 *   (on the magnitude: clang's BPF target before cpu v4 has no signed
 *   division). Each ACK's step can differ from the port's by up to 2^-16 of a
 *   segment, so the two drift apart by a few ACKs over a run: the same
 *   statistics, not the same run.
 * - flightsize: the port reads ack_sample's prior_in_flight, tcplab's field;
 *   the kernel's struct ack_sample has no such field (pkts_acked, rtt_us and
 *   in_flight, which is data delivered over the sampled RTT, not what was in
 *   flight). The twin rebuilds it as tcp_packets_in_flight() after the ACK plus
 *   the packets this ACK delivered (tp->delivered less its value at the previous
 *   ACK): exactly prior_in_flight unless this ACK also marked packets lost or
 *   its retransmissions changed retrans_out (during recovery).
 * - The base-delay minute is tp->tcp_mstamp / 60 s: the simulated clock in the
 *   simulator (as the port), the time since boot on a kernel, so the first
 *   minute's bucket closes at an arbitrary point of a kernel run (harmless: the
 *   old bucket's minimum is kept for ten minutes).
 * - Writes only snd_cwnd (and reads ssthresh through the kfuncs): both are in
 *   bpf_tcp_ca_btf_struct_access's list (net/ipv4/bpf_tcp_ca.c).
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

/* RFC 6817 Sec. 2.5.1: BASE_HISTORY "SHOULD be 10" (minutes); ns-3 BaseHistoryLen 10. */
#define BASE_HISTORY 10
/* ns-3's NoiseFilterLen 4 (the RFC leaves it to the implementation). */
#define CURRENT_FILTER 4
/* RFC 6817 Sec. 2.5.1: ALLOWED_INCREASE "SHOULD be 1" (segments). */
#define ALLOWED_INCREASE 1
/* RFC 6817 Sec. 2.4.2 / 2.5.1: MIN_CWND 2 (segments); ns-3 MinCwnd 2. */
#define MIN_CWND 2
/* RFC 6817 Sec. 2.4.2 round_to_minute: one base-delay bucket, in us. */
#define MINUTE_US 60000000ULL
/* The kernel's timestamp clock (TCP_TS_HZ): delay samples in whole ms. */
#define TCP_TS_HZ 1000
/* cwnd in Q16.16: FRAC_ONE is one segment. */
#define FRAC_BITS 16
#define FRAC_ONE (1ULL << FRAC_BITS)
#define NO_DELAY 0xffffffffU

/* parameters (the port's defaults: RFC 6817 Sec. 2.5.1 TARGET 100 ms; ns-3 SSParam yes) */
const volatile __u32 target_ms = 100;
const volatile __u32 slow_start = 1;

struct ledbat {
	__u32 base_delays[BASE_HISTORY]; /* ms, [0, base_n) in age order */
	__u32 current_delays[CURRENT_FILTER]; /* ms, [0, current_n) in age order */
	__u32 base_n;
	__u32 current_n;
	__u32 last_rollover_min; /* valid when have_rollover */
	__u32 have_rollover;
	__u32 can_ss; /* ns-3's LEDBAT_CAN_SS */
	__u32 flightsize; /* packets in flight before this ACK */
	__u32 cwnd_frac; /* Q16 fraction of a segment beyond snd_cwnd */
	__u32 last_delivered; /* tp->delivered at the previous ACK */
};

static __always_inline void ledbat_reset(struct ledbat *ca, struct tcp_sock *tp)
{
	int i;

#pragma unroll
	for (i = 0; i < BASE_HISTORY; i++)
		ca->base_delays[i] = NO_DELAY;
#pragma unroll
	for (i = 0; i < CURRENT_FILTER; i++)
		ca->current_delays[i] = NO_DELAY;
	ca->base_n = 0;
	ca->current_n = 0;
	ca->last_rollover_min = 0;
	ca->have_rollover = 0;
	ca->can_ss = 1;
	ca->flightsize = 0;
	ca->cwnd_frac = 0;
	ca->last_delivered = tp->delivered;
}

SEC("struct_ops")
void BPF_PROG(ledbat_init, struct sock *sk)
{
	ledbat_reset(inet_csk_ca(sk), tcp_sk(sk));
}

/* RFC 6817 update_base_delay: a new minute opens a bucket (the oldest dropped
 * beyond BASE_HISTORY); within the minute the last bucket keeps its minimum. */
static __always_inline void update_base_delay(struct ledbat *ca, __u32 delay, __u32 minute)
{
	__u32 n = ca->base_n;
	int i;

	if (!ca->have_rollover || ca->last_rollover_min != minute) {
		ca->have_rollover = 1;
		ca->last_rollover_min = minute;
		if (n == BASE_HISTORY) {
#pragma unroll
			for (i = 0; i < BASE_HISTORY - 1; i++)
				ca->base_delays[i] = ca->base_delays[i + 1];
			ca->base_delays[BASE_HISTORY - 1] = delay;
			return;
		}
#pragma unroll
		for (i = 0; i < BASE_HISTORY; i++)
			if (i == n)
				ca->base_delays[i] = delay;
		ca->base_n = n + 1;
		return;
	}
#pragma unroll
	for (i = 0; i < BASE_HISTORY; i++)
		if (i + 1 == n && delay < ca->base_delays[i])
			ca->base_delays[i] = delay;
}

/* RFC 6817 update_current_delay: keep the last CURRENT_FILTER samples. */
static __always_inline void update_current_delay(struct ledbat *ca, __u32 delay)
{
	__u32 n = ca->current_n;
	int i;

	if (n == CURRENT_FILTER) {
#pragma unroll
		for (i = 0; i < CURRENT_FILTER - 1; i++)
			ca->current_delays[i] = ca->current_delays[i + 1];
		ca->current_delays[CURRENT_FILTER - 1] = delay;
		return;
	}
#pragma unroll
	for (i = 0; i < CURRENT_FILTER; i++)
		if (i == n)
			ca->current_delays[i] = delay;
	ca->current_n = n + 1;
}

/* MIN(base_delays) and FILTER(current_delays) (their minimum, ns-3's MinCircBuf);
 * unused slots hold NO_DELAY, so NO_DELAY means "no sample yet". */
static __always_inline __u32 min_of_base(struct ledbat *ca)
{
	__u32 m = NO_DELAY;
	int i;

#pragma unroll
	for (i = 0; i < BASE_HISTORY; i++)
		if (ca->base_delays[i] < m)
			m = ca->base_delays[i];
	return m;
}

static __always_inline __u32 min_of_current(struct ledbat *ca)
{
	__u32 m = NO_DELAY;
	int i;

#pragma unroll
	for (i = 0; i < CURRENT_FILTER; i++)
		if (ca->current_delays[i] < m)
			m = ca->current_delays[i];
	return m;
}

/* RFC 6817's on-acknowledgement rule for `acked` segments, GAIN 1:
 * cwnd += (TARGET - queuing_delay) / TARGET * acked / cwnd, in Q16. */
static __always_inline void ledbat_step(struct ledbat *ca, struct tcp_sock *tp,
					__u32 base, __u32 current, __u32 acked)
{
	__u64 target = target_ms ? target_ms : 1;
	__u64 cwnd = ((__u64)tp->snd_cwnd << FRAC_BITS) + ca->cwnd_frac;
	__u64 next, cap, num, step;
	bool shrink;

	/* off_target's numerator TARGET - (current - base), and its sign. */
	if (current > base) {
		__u64 q = current - base;

		shrink = q > target;
		num = shrink ? q - target : target - q;
	} else {
		shrink = false;
		num = target + (base - current);
	}
	/* Bound the product below 2^63 (a queueing delay of minutes, or an ACK of
	 * millions of segments, saturates the step: the caps below decide). */
	num *= acked;
	if (num > (1ULL << 30))
		num = 1ULL << 30;
	if (cwnd == 0)
		cwnd = 1;
	step = (num << (2 * FRAC_BITS)) / (target * cwnd);

	if (shrink)
		next = step >= cwnd ? 0 : cwnd - step;
	else
		next = cwnd + step;
	/* max_allowed_cwnd = flightsize + ALLOWED_INCREASE * MSS. */
	cap = (__u64)(ca->flightsize + ALLOWED_INCREASE) << FRAC_BITS;
	if (next > cap)
		next = cap;
	if (next < ((__u64)MIN_CWND << FRAC_BITS))
		next = (__u64)MIN_CWND << FRAC_BITS;
	cap = (__u64)tp->snd_cwnd_clamp << FRAC_BITS;
	if (next > cap)
		next = cap;
	tp->snd_cwnd = (__u32)(next >> FRAC_BITS);
	ca->cwnd_frac = (__u32)(next & (FRAC_ONE - 1));
}

/* On data loss: cwnd = max(cwnd / 2, MIN_CWND) (reached through PRR). */
SEC("struct_ops")
__u32 BPF_PROG(ledbat_ssthresh, struct sock *sk)
{
	struct ledbat *ca = inet_csk_ca(sk);
	__u32 ss = tcp_reno_ssthresh(sk);

	ca->cwnd_frac = 0;
	return ss > MIN_CWND ? ss : MIN_CWND;
}

/* ns-3 PktsAcked: every ACK with a delay sample updates both filters. */
SEC("struct_ops")
void BPF_PROG(ledbat_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ledbat *ca = inet_csk_ca(sk);
	__u32 delivered = tp->delivered;
	__s32 rtt_us = sample->rtt_us;

	/* prior_in_flight: what is in flight now plus what this ACK delivered. */
	ca->flightsize = tcp_packets_in_flight(tp) + (delivered - ca->last_delivered);
	ca->last_delivered = delivered;
	if (rtt_us >= 0) {
		__u32 delay = (__u32)rtt_us / (USEC_PER_SEC / TCP_TS_HZ);

		update_base_delay(ca, delay, (__u32)(tp->tcp_mstamp / MINUTE_US));
		update_current_delay(ca, delay);
	}
}

/* ns-3 IncreaseWindow: slow start while allowed, then RFC 6817's rule. */
SEC("struct_ops")
void BPF_PROG(ledbat_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct ledbat *ca = inet_csk_ca(sk);
	__u32 base, current;

	if (tp->snd_cwnd <= 1)
		ca->can_ss = 1; /* after an RTO, as ns-3 (cwnd <= one segment) */
	if (slow_start && ca->can_ss && tcp_in_slow_start(tp)) {
		/* The kernel's slow start (capped at ssthresh); what is left of the
		 * ACK goes to the LEDBAT rule. */
		acked = tcp_slow_start(tp, acked);
		ca->cwnd_frac = 0;
		if (!acked)
			return;
	}
	ca->can_ss = 0;
	base = min_of_base(ca);
	current = min_of_current(ca);
	if (base == NO_DELAY || current == NO_DELAY) {
		/* No delay sample yet: NewReno's congestion avoidance (ns-3). */
		tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
		return;
	}
	ledbat_step(ca, tp, base, current, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(ledbat_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops ledbat = {
	.init = (void *)ledbat_init,
	.ssthresh = (void *)ledbat_ssthresh,
	.cong_avoid = (void *)ledbat_cong_avoid,
	.pkts_acked = (void *)ledbat_pkts_acked,
	.undo_cwnd = (void *)ledbat_undo_cwnd,
	.name = "bpf_ledbat",
};
