// SPDX-License-Identifier: MIT
/*
 * hybla.bpf.c: TCP Hybla as Linux runs it (net/ipv4/tcp_hybla.c), as a BPF
 * struct_ops tcp_congestion_ops: the twin of tcplab's native `hybla`
 * (crates/cc/src/hybla.rs), so that a kernel without the module runs it.
 *
 * Model (Caini and Firrincieli, IJSCN 22(5), 2004, Sec. 3): Reno's increase
 * scaled by rho = RTT / RTT0 (RTT0 = 25 ms, rho >= 1), so a long-RTT flow grows in
 * time as one of RTT0 would: per ACK, slow start adds 2^rho - 1 segments and
 * congestion avoidance rho^2 / cwnd. rho is taken from the smoothed RTT whenever it
 * falls to a new minimum, kept with 3 fraction bits (rho_3ls); 2^rho is 2^int(rho)
 * times a table of 2^(k/8) << 7; fractions of a segment are carried in 1/128
 * (snd_cwnd_cents). Outside the Open state it is Reno.
 *
 * Follows hybla_recalc_param, hybla_init, hybla_state, hybla_fraction and
 * hybla_cong_avoid; ssthresh and undo_cwnd are tcp_reno_ssthresh and
 * tcp_reno_undo_cwnd (kfuncs), Reno's growth tcp_reno_cong_avoid (a kfunc).
 *
 * srtt: this program reads tp->srtt_us as the kernel keeps it (us << 3) and
 * divides it by rtt0 * USEC_PER_MSEC, as tcp_hybla.c does; minrtt_us holds the same
 * shifted value. The native port computes (srtt << 3) / (rtt0 * 1000) from the
 * simulator's plain-us srtt, which the simulator's socket image also writes as
 * srtt << 3: in the simulator both read the same number, so the two runs are one
 * (crates/controllers/tests/bpf_flows.rs); on a kernel the twin also sees srtt's
 * 3 fraction bits, which the port cannot (under 1 us of srtt).
 *
 * Deviations:
 * - hybla_init's tp->snd_cwnd_clamp = 65535 is a write a struct_ops program may
 *   not make (bpf_tcp_ca_btf_struct_access); the clamp is applied instead where
 *   hybla_cong_avoid applies it, min(cwnd, snd_cwnd_clamp, 65535). Only a cwnd
 *   above 65535 segments, grown by the sender's other paths, could differ.
 * - As the native port (the simulator has no handshake), init with no srtt yet
 *   leaves cwnd at the initial window and rho unmeasured; the first cong_avoid
 *   measures it (the kernel's own rho == 0 and new-minimum paths).
 * - The carry of snd_cwnd_cents is an if, not a while: cents < 128 before and the
 *   odd part added is < 128, so the loop body runs at most once.
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

/* module parameter rtt0 (ms): the reference RTT, default 25. */
const volatile __u32 rtt0 = 25;

/* hybla_init: tp->snd_cwnd_clamp = 65535. */
#define HYBLA_CWND_CLAMP 65535U

struct hybla {
	bool hybla_en;
	__u32 snd_cwnd_cents; /* Keeps increment values when it is <1, <<7 */
	__u32 rho; /* Rho parameter, integer part  */
	__u32 rho2; /* Rho * Rho, integer part */
	__u32 rho_3ls; /* Rho parameter, <<3 */
	__u32 rho2_7ls; /* Rho^2, <<7	*/
	__u32 minrtt_us; /* Minimum smoothed round trip time value seen (<< 3) */
};

/* hybla_fraction: 2^(odds/8) << 7 for odds = 0..7. */
static __always_inline __u32 hybla_fraction(__u32 odds)
{
	switch (odds) {
	case 0: return 128;
	case 1: return 139;
	case 2: return 152;
	case 3: return 165;
	case 4: return 181;
	case 5: return 197;
	case 6: return 215;
	case 7: return 234;
	default: return 128;
	}
}

/* hybla_recalc_param: rho from the smoothed RTT (us << 3), at least 1 (8 << 3). */
static __always_inline void hybla_recalc_param(struct sock *sk)
{
	struct hybla *ca = inet_csk_ca(sk);
	__u32 r = tcp_sk(sk)->srtt_us / (rtt0 * USEC_PER_MSEC);

	ca->rho_3ls = r > 8U ? r : 8U;
	ca->rho = ca->rho_3ls >> 3;
	ca->rho2_7ls = (ca->rho_3ls * ca->rho_3ls) << 1;
	ca->rho2 = ca->rho2_7ls >> 7;
}

SEC("struct_ops")
void BPF_PROG(hybla_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct hybla *ca = inet_csk_ca(sk);

	ca->rho = 0;
	ca->rho2 = 0;
	ca->rho_3ls = 0;
	ca->rho2_7ls = 0;
	ca->snd_cwnd_cents = 0;
	ca->hybla_en = true;
	ca->minrtt_us = 0xffffffffU;
	if (tp->srtt_us == 0)
		return;
	/* 1st Rho measurement based on initial srtt */
	hybla_recalc_param(sk);
	/* set minimum rtt as this is the 1st ever seen */
	ca->minrtt_us = tp->srtt_us;
	tp->snd_cwnd = ca->rho;
}

SEC("struct_ops")
void BPF_PROG(hybla_state, struct sock *sk, __u8 ca_state)
{
	struct hybla *ca = inet_csk_ca(sk);

	ca->hybla_en = (ca_state == TCP_CA_Open);
}

SEC("struct_ops")
void BPF_PROG(hybla_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct hybla *ca = inet_csk_ca(sk);
	__u32 increment, odd, rho_fractions, clamp;
	int is_slowstart = 0;

	/* Recalculate rho only if this srtt is the lowest */
	if (tp->srtt_us < ca->minrtt_us) {
		hybla_recalc_param(sk);
		ca->minrtt_us = tp->srtt_us;
	}

	if (!tcp_is_cwnd_limited(sk))
		return;

	if (!ca->hybla_en) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}

	if (ca->rho == 0)
		hybla_recalc_param(sk);

	rho_fractions = ca->rho_3ls - (ca->rho << 3);

	if (tcp_in_slow_start(tp)) {
		/* slow start: 2^rho - 1 segments (<< 7) */
		is_slowstart = 1;
		increment = ((1U << (ca->rho < 16U ? ca->rho : 16U)) *
			     hybla_fraction(rho_fractions)) - 128;
	} else {
		/* congestion avoidance: rho^2 / cwnd segments (<< 7) */
		increment = ca->rho2_7ls / tp->snd_cwnd;
		if (increment < 128)
			tp->snd_cwnd_cnt++;
	}

	odd = increment % 128;
	tp->snd_cwnd += increment >> 7;
	ca->snd_cwnd_cents += odd;

	/* check when fractions goes >=128 and increase cwnd by 1. */
	if (ca->snd_cwnd_cents >= 128) {
		tp->snd_cwnd++;
		ca->snd_cwnd_cents -= 128;
		tp->snd_cwnd_cnt = 0;
	}
	/* check when cwnd has not been incremented for a while */
	if (increment == 0 && odd == 0 && tp->snd_cwnd_cnt >= tp->snd_cwnd) {
		tp->snd_cwnd++;
		tp->snd_cwnd_cnt = 0;
	}
	/* clamp down slowstart cwnd to ssthresh value. */
	if (is_slowstart && tp->snd_cwnd > tp->snd_ssthresh)
		tp->snd_cwnd = tp->snd_ssthresh;

	clamp = tp->snd_cwnd_clamp < HYBLA_CWND_CLAMP ? tp->snd_cwnd_clamp : HYBLA_CWND_CLAMP;
	if (tp->snd_cwnd > clamp)
		tp->snd_cwnd = clamp;
}

SEC("struct_ops")
__u32 BPF_PROG(hybla_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(hybla_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops hybla = {
	.init = (void *)hybla_init,
	.ssthresh = (void *)hybla_ssthresh,
	.cong_avoid = (void *)hybla_cong_avoid,
	.set_state = (void *)hybla_state,
	.undo_cwnd = (void *)hybla_undo_cwnd,
	.name = "bpf_hybla",
};
