// SPDX-License-Identifier: MIT
/*
 * nv.bpf.c: TCP-NV (New Vegas) as Linux runs it (net/ipv4/tcp_nv.c), as a BPF
 * struct_ops tcp_congestion_ops: the twin of tcplab's native `nv`
 * (crates/cc/src/nv.rs), so that a kernel without the module runs it.
 *
 * Model (Brakmo, "TCP-NV: An Update to TCP-Vegas", 2010, and the kernel's own
 * header): on each ACK the delivery rate, ack_sample.in_flight (bytes delivered
 * during the sampled segment's RTT, as tcp_clean_rtx_queue computes it) over the
 * half-smoothed RTT, and the round's largest. Once per RTT that rate times min_rtt
 * is the window with no queue; max_win = it + nv_pad. Above max_win (with 60
 * samples, 30 in slow start, over at least 2 RTTs) cwnd drops by 30 % of the
 * excess (at least 2) and ssthresh becomes max_win; nv_pad_buffer = 2 below it
 * (with 20 samples) growth is allowed again; in between it holds. Growth is
 * Reno's, slower after an RTO until enough uncongested rounds pass. Losses cut
 * cwnd to 80 %. min_rtt is renewed every nv_reset_period s, randomised to
 * [3/4, 5/4) of it.
 *
 * Follows tcpnv_reset, tcpnv_init, tcpnv_cong_avoid, tcpnv_recalc_ssthresh,
 * tcpnv_state and tcpnv_acked; undo_cwnd is tcp_reno_undo_cwnd (a kfunc), as in
 * tcp_nv.c since 5.x. In the simulator ack_sample.in_flight is the kernel's value
 * (crates/sim/src/tcp/input.rs), so this program and the port compute one run
 * (crates/controllers/tests/bpf_flows.rs).
 *
 * Parameters: the module parameters nv_pad, nv_reset_period and nv_min_cwnd, as
 * const volatile globals (a flow's params set them before load); the file's
 * other tunables, plain statics in tcp_nv.c, are defines here.
 *
 * Deviations:
 * - get_random_u8() is the top byte of bpf_get_prandom_u32() (the simulator seeds
 *   it per flow as the port's `seed`, whose draw is the same top byte).
 * - The reset period nv_reset_period * (384 + rand) * HZ is computed in 64 bits,
 *   as the port does (the kernel's int product wraps only for periods over about
 *   3300 s at HZ 1000).
 * - nv_min_rtt_reset_jiffies is a u32 compared with tcp_jiffies32 (the kernel
 *   keeps an unsigned long of jiffies; the same time_after_eq test, in 32 bits).
 * - No BPF_SOCK_OPS_BASE_RTT: nv_base_rtt and nv_lower_bound_rtt are 0 as in the
 *   kernel without a sock_ops program, so nv_get_bounded_rtt (then the identity)
 *   is left out; nv_catchup is never set in tcp_nv.c, so its branch is too.
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

/* module parameters (tcp_nv.c defaults) */
const volatile __u32 nv_pad = 10;
const volatile __u32 nv_reset_period = 5; /* in seconds */
const volatile __u32 nv_min_cwnd = 2;

/* tcp_nv.c's static tunables */
#define nv_pad_buffer 2
#define nv_cong_dec_mult (30 * 128 / 100) /* = 30% */
#define nv_ssthresh_factor 8 /* = 1 */
#define nv_rtt_factor 128 /* = 1/2*old + 1/2*new */
#define nv_loss_dec_factor 819 /* => 80% */
#define nv_cwnd_growth_rate_neg 8
#define nv_cwnd_growth_rate_pos 0 /* 0 => fixed like Reno */
#define nv_dec_eval_min_calls 60
#define nv_inc_eval_min_calls 20
#define nv_ssthresh_eval_min_calls 30
#define nv_stop_rtt_cnt 10
#define nv_rtt_min_cnt 2

#define NV_INIT_RTT 0xffffffffU
#define NV_MIN_CWND 4
#define NV_MIN_CWND_GROW 2
#define NV_TSO_CWND_BOUND 80

struct tcpnv {
	__u32 nv_min_rtt_reset_jiffies; /* when to switch to nv_min_rtt_new */
	__s8 cwnd_growth_factor; /* Current cwnd growth factor, < 0 => less than 1 packet/RTT */
	__u8 nv_allow_cwnd_growth; /* whether cwnd can grow */
	__u8 nv_reset; /* whether to reset values */
	__u8 nv_eval_call_cnt; /* call count since last eval */
	__u8 nv_min_cwnd; /* nv won't make a ca decision if cwnd is smaller than this */
	__u8 nv_rtt_cnt; /* RTTs without making ca decision */
	__u32 nv_last_rtt; /* last rtt */
	__u32 nv_min_rtt; /* active min rtt. Used to determine slope */
	__u32 nv_min_rtt_new; /* min rtt for future use */
	__u32 nv_rtt_max_rate; /* max rate seen during current RTT */
	__u32 nv_rtt_start_seq; /* current RTT ends when packet arrives acking beyond it */
	__u32 nv_last_snd_una; /* Previous value of tp->snd_una */
	__u32 nv_no_cong_cnt; /* Consecutive no congestion decisions */
};

static __always_inline void tcpnv_reset(struct tcpnv *ca, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);

	ca->nv_reset = 0;
	ca->nv_no_cong_cnt = 0;
	ca->nv_rtt_cnt = 0;
	ca->nv_last_rtt = 0;
	ca->nv_rtt_max_rate = 0;
	ca->nv_rtt_start_seq = tp->snd_una;
	ca->nv_eval_call_cnt = 0;
	ca->nv_last_snd_una = tp->snd_una;
}

SEC("struct_ops")
void BPF_PROG(tcpnv_init, struct sock *sk)
{
	struct tcpnv *ca = inet_csk_ca(sk);

	tcpnv_reset(ca, sk);
	ca->nv_allow_cwnd_growth = 1;
	ca->nv_min_rtt_reset_jiffies = tcp_jiffies32 + 2 * HZ;
	ca->nv_min_rtt = NV_INIT_RTT;
	ca->nv_min_rtt_new = NV_INIT_RTT;
	ca->nv_min_cwnd = NV_MIN_CWND;
	ca->cwnd_growth_factor = 0;
}

SEC("struct_ops")
void BPF_PROG(tcpnv_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct tcpnv *ca = inet_csk_ca(sk);
	__u32 cnt;

	if (!tcp_is_cwnd_limited(sk))
		return;

	/* Only grow cwnd if NV has not detected congestion */
	if (!ca->nv_allow_cwnd_growth)
		return;

	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}

	if (ca->cwnd_growth_factor < 0) {
		cnt = tp->snd_cwnd << -ca->cwnd_growth_factor;
		tcp_cong_avoid_ai(tp, cnt, acked);
	} else {
		cnt = tp->snd_cwnd >> ca->cwnd_growth_factor;
		tcp_cong_avoid_ai(tp, cnt > 4U ? cnt : 4U, acked);
	}
}

SEC("struct_ops")
__u32 BPF_PROG(tcpnv_recalc_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	__u32 s = (tp->snd_cwnd * nv_loss_dec_factor) >> 10;

	return s > 2U ? s : 2U;
}

SEC("struct_ops")
__u32 BPF_PROG(tcpnv_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC("struct_ops")
void BPF_PROG(tcpnv_state, struct sock *sk, __u8 new_state)
{
	struct tcpnv *ca = inet_csk_ca(sk);

	if (new_state == TCP_CA_Open && ca->nv_reset) {
		tcpnv_reset(ca, sk);
	} else if (new_state == TCP_CA_Loss || new_state == TCP_CA_CWR ||
		   new_state == TCP_CA_Recovery) {
		ca->nv_reset = 1;
		ca->nv_allow_cwnd_growth = 0;
		if (new_state == TCP_CA_Loss) {
			/* Reset cwnd growth factor to Reno value */
			if (ca->cwnd_growth_factor > 0)
				ca->cwnd_growth_factor = 0;
			/* Decrease growth rate if allowed */
			if (nv_cwnd_growth_rate_neg > 0 && ca->cwnd_growth_factor > -8)
				ca->cwnd_growth_factor--;
		}
	}
}

/* The once-per-RTT part of tcpnv_acked (from `if (before(nv_rtt_start_seq, snd_una))`). */
static __always_inline void tcpnv_round(struct sock *sk, struct tcpnv *ca, __u32 bytes_acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 max_win, cwnd_by_slope;

	ca->nv_rtt_start_seq = tp->snd_nxt;
	if (ca->nv_rtt_cnt < 0xff)
		/* Increase counter for RTTs without CA decision */
		ca->nv_rtt_cnt++;

	/* If this function is only called once within an RTT the cwnd is probably
	 * too small (tso, lro or interrupt coalescence): increase nv_min_cwnd. */
	if (ca->nv_eval_call_cnt == 1 &&
	    bytes_acked >= (ca->nv_min_cwnd - 1) * tp->mss_cache &&
	    ca->nv_min_cwnd < (NV_TSO_CWND_BOUND + 1)) {
		__u32 grown = ca->nv_min_cwnd + NV_MIN_CWND_GROW;

		ca->nv_min_cwnd = grown < NV_TSO_CWND_BOUND + 1 ? grown : NV_TSO_CWND_BOUND + 1;
		ca->nv_rtt_start_seq = tp->snd_nxt + ca->nv_min_cwnd * tp->mss_cache;
		ca->nv_eval_call_cnt = 0;
		ca->nv_allow_cwnd_growth = 1;
		return;
	}

	/* Find the ideal cwnd for current rate from slope
	 * slope = 80000.0 * mss / nv_min_rtt
	 * cwnd_by_slope = nv_rtt_max_rate / slope
	 */
	cwnd_by_slope = (__u32)(((__u64)ca->nv_rtt_max_rate * ca->nv_min_rtt) /
				(__u64)(80000 * tp->mss_cache));
	max_win = cwnd_by_slope + nv_pad;

	if (tp->snd_cwnd > max_win) {
		/* there is congestion, check that it is ok to make a CA decision */
		if (ca->nv_rtt_cnt < nv_rtt_min_cnt) {
			return;
		} else if (tp->snd_ssthresh == TCP_INFINITE_SSTHRESH) {
			if (ca->nv_eval_call_cnt < nv_ssthresh_eval_min_calls)
				return;
			/* otherwise we will decrease cwnd */
		} else if (ca->nv_eval_call_cnt < nv_dec_eval_min_calls) {
			if (ca->nv_allow_cwnd_growth && ca->nv_rtt_cnt > nv_stop_rtt_cnt)
				ca->nv_allow_cwnd_growth = 0;
			return;
		}

		/* We have enough data to determine we are congested */
		ca->nv_allow_cwnd_growth = 0;
		tp->snd_ssthresh = (nv_ssthresh_factor * max_win) >> 3;
		if (tp->snd_cwnd - max_win > 2) {
			/* gap > 2, we do exponential cwnd decrease */
			__u32 dec = ((tp->snd_cwnd - max_win) * nv_cong_dec_mult) >> 7;

			tp->snd_cwnd -= dec > 2U ? dec : 2U;
		} else if (nv_cong_dec_mult > 0) {
			tp->snd_cwnd = max_win;
		}
		if (ca->cwnd_growth_factor > 0)
			ca->cwnd_growth_factor = 0;
		ca->nv_no_cong_cnt = 0;
	} else if (tp->snd_cwnd <= max_win - nv_pad_buffer) {
		/* There is no congestion, grow cwnd if allowed*/
		if (ca->nv_eval_call_cnt < nv_inc_eval_min_calls)
			return;

		ca->nv_allow_cwnd_growth = 1;
		ca->nv_no_cong_cnt++;
		if (ca->cwnd_growth_factor < 0 && nv_cwnd_growth_rate_neg > 0 &&
		    ca->nv_no_cong_cnt > nv_cwnd_growth_rate_neg) {
			ca->cwnd_growth_factor++;
			ca->nv_no_cong_cnt = 0;
		} else if (ca->cwnd_growth_factor >= 0 && nv_cwnd_growth_rate_pos > 0 &&
			   ca->nv_no_cong_cnt > nv_cwnd_growth_rate_pos) {
			ca->cwnd_growth_factor++;
			ca->nv_no_cong_cnt = 0;
		}
	} else {
		/* cwnd is in-between, so do nothing */
		return;
	}

	/* update state */
	ca->nv_eval_call_cnt = 0;
	ca->nv_rtt_cnt = 0;
	ca->nv_rtt_max_rate = 0;

	/* Don't want to make cwnd < nv_min_cwnd (it wasn't before, if it is now is
	 * because nv decreased it). */
	if (tp->snd_cwnd < nv_min_cwnd)
		tp->snd_cwnd = nv_min_cwnd;
}

/* Do congestion avoidance calculations for TCP-NV */
SEC("struct_ops")
void BPF_PROG(tcpnv_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct tcpnv *ca = inet_csk_ca(sk);
	__u32 now = tcp_jiffies32;
	__u8 ca_state = tcplab_ca_state(sk);
	__u64 rate64;
	__u32 rate, avg_rtt, bytes_acked;

	/* Some calls are for duplicates without timetamps */
	if (sample->rtt_us < 0)
		return;

	/* If not in TCP_CA_Open or TCP_CA_Disorder states, skip. */
	if (ca_state != TCP_CA_Open && ca_state != TCP_CA_Disorder)
		return;

	bytes_acked = tp->snd_una - ca->nv_last_snd_una;
	ca->nv_last_snd_una = tp->snd_una;

	if (sample->in_flight == 0)
		return;

	/* Calculate moving average of RTT */
	if (ca->nv_last_rtt > 0) {
		avg_rtt = (((__u64)sample->rtt_us) * nv_rtt_factor +
			   ((__u64)ca->nv_last_rtt) * (256 - nv_rtt_factor)) >> 8;
	} else {
		avg_rtt = sample->rtt_us;
		ca->nv_min_rtt = avg_rtt << 1;
	}
	ca->nv_last_rtt = avg_rtt;

	/* rate in 100's bits per second */
	rate64 = ((__u64)sample->in_flight) * 80000;
	rate64 /= avg_rtt ? avg_rtt : 1;
	rate = (__u32)rate64;

	/* Remember the maximum rate seen during this RTT */
	if (ca->nv_rtt_max_rate < rate)
		ca->nv_rtt_max_rate = rate;

	/* We have valid information, increment counter */
	if (ca->nv_eval_call_cnt < 255)
		ca->nv_eval_call_cnt++;

	/* update min rtt if necessary */
	if (avg_rtt < ca->nv_min_rtt)
		ca->nv_min_rtt = avg_rtt;

	/* update future min_rtt if necessary */
	if (avg_rtt < ca->nv_min_rtt_new)
		ca->nv_min_rtt_new = avg_rtt;

	/* nv_min_rtt is renewed every nv_reset_period seconds, the period chosen
	 * randomly from [nv_reset_period*3/4, nv_reset_period*5/4). */
	if ((__s32)(now - ca->nv_min_rtt_reset_jiffies) >= 0) {
		__u32 rand = bpf_get_prandom_u32() >> 24; /* get_random_u8() */

		ca->nv_min_rtt = ca->nv_min_rtt_new;
		ca->nv_min_rtt_new = NV_INIT_RTT;
		ca->nv_min_rtt_reset_jiffies =
			now + (__u32)(((__u64)nv_reset_period * (384 + rand) * HZ) >> 9);
		/* Every so often we decrease ca->nv_min_cwnd in case previous value is
		 * no longer accurate. */
		ca->nv_min_cwnd = ca->nv_min_cwnd / 2 > NV_MIN_CWND ? ca->nv_min_cwnd / 2 :
								      NV_MIN_CWND;
	}

	/* Once per RTT check if we need to do congestion avoidance */
	if (before(ca->nv_rtt_start_seq, tp->snd_una))
		tcpnv_round(sk, ca, bytes_acked);
}

SEC(".struct_ops")
struct tcp_congestion_ops nv = {
	.init = (void *)tcpnv_init,
	.ssthresh = (void *)tcpnv_recalc_ssthresh,
	.cong_avoid = (void *)tcpnv_cong_avoid,
	.set_state = (void *)tcpnv_state,
	.undo_cwnd = (void *)tcpnv_undo_cwnd,
	.pkts_acked = (void *)tcpnv_acked,
	.name = "bpf_nv",
};
