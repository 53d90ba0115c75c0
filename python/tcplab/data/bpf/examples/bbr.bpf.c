// SPDX-License-Identifier: MIT
/*
 * bbr.bpf.c: BBR v1 as Linux 6.18 runs it (net/ipv4/tcp_bbr.c), as a BPF struct_ops
 * tcp_congestion_ops.
 *
 * Model. BBR models the path from the ACK stream and sends at the rate it delivers
 * instead of reacting to loss. On every ACK (cong_control) it updates a windowed max
 * of delivery-rate samples over 10 packet-timed rounds (BtlBw) and a windowed min RTT
 * over 10 s (RTprop), then paces at pacing_gain * BtlBw (less a 1 % margin) with
 * cwnd = cwnd_gain * BtlBw * RTprop + ACK-aggregation allowance + quantization budget.
 * The gains come from a state machine: STARTUP (2/ln 2) until BtlBw stops growing by
 * 25 % for 3 rounds; DRAIN (its inverse) until inflight is one BDP; PROBE_BW cycling
 * 1.25, 0.75, 1 x 6 (one phase per RTprop, random start); PROBE_RTT (cwnd 4 for 200 ms
 * and a round) when RTprop is 10 s old. Recovery conserves packets for a round and
 * restores the prior cwnd after. A long-term estimator detects token-bucket policers
 * and then paces at the policed rate for 48 rounds.
 *
 * Follows: lib/win_minmax.c (minmax_running_max), and of tcp_bbr.c bbr_max_bw, bbr_bw,
 * bbr_extra_acked, bbr_rate_bytes_per_sec, bbr_bw_to_pacing_rate,
 * bbr_init_pacing_rate_from_rtt, bbr_set_pacing_rate, bbr_min_tso_segs,
 * bbr_tso_segs_goal, bbr_save_cwnd, bbr_cwnd_event, bbr_bdp, bbr_quantization_budget,
 * bbr_inflight, bbr_packets_in_net_at_edt, bbr_ack_aggregation_cwnd,
 * bbr_set_cwnd_to_recover_or_restore, bbr_set_cwnd, bbr_is_next_cycle_phase,
 * bbr_advance_cycle_phase, bbr_update_cycle_phase, bbr_reset_startup_mode,
 * bbr_reset_probe_bw_mode, bbr_reset_mode, bbr_reset_lt_bw_sampling(_interval),
 * bbr_lt_bw_interval_done, bbr_lt_bw_sampling, bbr_update_bw,
 * bbr_update_ack_aggregation, bbr_check_full_bw_reached, bbr_check_drain,
 * bbr_check_probe_rtt_done, bbr_update_min_rtt, bbr_update_gains, bbr_update_model,
 * bbr_main, bbr_init, bbr_sndbuf_expand, bbr_undo_cwnd, bbr_ssthresh, bbr_set_state;
 * mainline since 5.14 (min_rtt refreshed only by a strictly lower sample, the first
 * round starting at tp->delivered).
 *
 * Parameters: the gains and windows (high_gain, drain_gain, cwnd_gain, bw_rtts,
 * min_rtt_win_sec, probe_rtt_mode_ms) as const volatile globals, kernel defaults.
 *
 * Deviations:
 * - get_random_u32_below(bbr_cycle_rand) is bpf_get_prandom_u32's multiply-high, without
 *   the kernel's rejection of a biased sliver (below 2^-29 for 7).
 * - bbr_set_state's on-stack `struct rate_sample { .losses = 1 }` is passed as its two
 *   fields (losses, is_app_limited): a CO-RE struct on the BPF stack would be laid out
 *   by this header but read at the target's offsets.
 * - The policer check's min-rate term keeps the kernel's u64 arithmetic; the private
 *   state uses one bitfield word for the flags (the kernel's three), same widths.
 * - cmpxchg on sk_pacing_status is a plain store when it is SK_PACING_NONE.
 */
#include "tcplab_cc.h"

char _license[] SEC("license") = "GPL";

#define BW_SCALE 24
#define BW_UNIT (1 << BW_SCALE)
#define BBR_SCALE 8
#define BBR_UNIT (1 << BBR_SCALE)
#define CYCLE_LEN 8
#define GSO_MAX_SIZE 65536
#define MAX_TCP_HEADER 320 /* L1_CACHE_ALIGN(128 + MAX_HEADER) on x86-64 */
#define TCP_INIT_CWND 10

enum bbr_mode { BBR_STARTUP, BBR_DRAIN, BBR_PROBE_BW, BBR_PROBE_RTT };

/* Hooks for a research variant that includes this file (da_bbr.bpf.c): its name and
 * PROBE_BW's cwnd gain; plain BBR keeps the kernel's. */
#ifndef BBR_NAME
#define BBR_NAME "bpf_bbr"
#endif
#ifndef BBR_PROBE_BW_CWND_GAIN
#define BBR_PROBE_BW_CWND_GAIN(bbr, gain) (gain)
#endif

const volatile __u32 high_gain = BBR_UNIT * 2885 / 1000 + 1;
const volatile __u32 drain_gain = BBR_UNIT * 1000 / 2885;
const volatile __u32 cwnd_gain = BBR_UNIT * 2;
const volatile __u32 bw_rtts = CYCLE_LEN + 2;
const volatile __u32 min_rtt_win_sec = 10;
const volatile __u32 probe_rtt_mode_ms = 200;

static const __u32 bbr_min_tso_rate = 1200000;
static const __u32 bbr_pacing_margin_percent = 1;
static const __u32 bbr_cycle_rand = 7;
static const __u32 bbr_cwnd_min_target = 4;
static const __u32 bbr_full_bw_thresh = BBR_UNIT * 5 / 4;
static const __u32 bbr_full_bw_cnt = 3;
static const __u32 bbr_lt_intvl_min_rtts = 4;
static const __u32 bbr_lt_loss_thresh = 50;
static const __u32 bbr_lt_bw_ratio = BBR_UNIT / 8;
static const __u32 bbr_lt_bw_diff = 4000 / 8;
static const __u32 bbr_lt_bw_max_rtts = 48;
static const __u32 bbr_extra_acked_gain = BBR_UNIT;
static const __u32 bbr_extra_acked_win_rtts = 5;
static const __u32 bbr_ack_epoch_acked_reset_thresh = 1U << 20;
static const __u32 bbr_extra_acked_max_us = 100 * 1000;

/* The windowed max of lib/win_minmax.c: best, second and third best of the window. */
struct bbr_minmax_sample {
	__u32 t;
	__u32 v;
};

struct bbr_minmax {
	struct bbr_minmax_sample s[3];
};

/* struct bbr, in icsk_ca_priv (104 bytes, as the kernel's). */
struct bbr {
	__u32 min_rtt_us;
	__u32 min_rtt_stamp; /* jiffies */
	__u32 probe_rtt_done_stamp; /* jiffies */
	struct bbr_minmax bw; /* max delivery rate, pkts/us << BW_SCALE */
	__u32 rtt_cnt; /* packet-timed rounds */
	__u32 next_rtt_delivered;
	__u64 cycle_mstamp; /* start of this gain-cycle phase, us */
	__u32 lt_bw;
	__u32 lt_last_delivered;
	__u32 lt_last_stamp; /* ms */
	__u32 lt_last_lost;
	__u32 prior_cwnd;
	__u32 full_bw;
	__u64 ack_epoch_mstamp;
	__u16 extra_acked[2];
	__u32 ack_epoch_acked;
	__u16 pacing_gain;
	__u16 cwnd_gain;
	__u32 mode : 3, prev_ca_state : 3, packet_conservation : 1, round_start : 1,
		idle_restart : 1, probe_rtt_round_done : 1, lt_is_sampling : 1, lt_rtt_cnt : 7,
		lt_use_bw : 1, full_bw_reached : 1, full_bw_cnt : 2, cycle_idx : 3,
		has_seen_rtt : 1, extra_acked_win_rtts : 5, extra_acked_win_idx : 1;
};

static __always_inline void minmax_reset(struct bbr_minmax *m, __u32 t, __u32 meas)
{
	m->s[0].t = m->s[1].t = m->s[2].t = t;
	m->s[0].v = m->s[1].v = m->s[2].v = meas;
}

/* Age out the best when the window has passed, or promote sub-window picks. */
static __always_inline void minmax_subwin_update(struct bbr_minmax *m, __u32 win, __u32 t,
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
}

static __always_inline void minmax_running_max(struct bbr_minmax *m, __u32 win, __u32 t,
					       __u32 meas)
{
	if (meas >= m->s[0].v || t - m->s[2].t > win) {
		minmax_reset(m, t, meas);
		return;
	}
	if (meas >= m->s[1].v) {
		m->s[2].t = m->s[1].t = t;
		m->s[2].v = m->s[1].v = meas;
	} else if (meas >= m->s[2].v) {
		m->s[2].t = t;
		m->s[2].v = meas;
	}
	minmax_subwin_update(m, win, t, meas);
}

static __always_inline struct bbr *bbr_of(const struct sock *sk)
{
	return inet_csk_ca(sk);
}

static __always_inline __u32 bbr_max_bw(const struct sock *sk)
{
	return bbr_of(sk)->bw.s[0].v;
}

static __always_inline __u32 bbr_bw(const struct sock *sk)
{
	struct bbr *bbr = bbr_of(sk);

	return bbr->lt_use_bw ? bbr->lt_bw : bbr_max_bw(sk);
}

static __always_inline __u16 bbr_extra_acked(const struct sock *sk)
{
	struct bbr *bbr = bbr_of(sk);

	return bbr->extra_acked[0] > bbr->extra_acked[1] ? bbr->extra_acked[0] : bbr->extra_acked[1];
}

/* bytes/s from pkts/us << BW_SCALE and a gain, ordered to stay within u64. */
static __always_inline __u64 bbr_rate_bytes_per_sec(struct sock *sk, __u64 rate, __u32 gain)
{
	rate *= tcp_sk(sk)->mss_cache;
	rate *= gain;
	rate >>= BBR_SCALE;
	rate *= USEC_PER_SEC / 100 * (100 - bbr_pacing_margin_percent);
	return rate >> BW_SCALE;
}

static __always_inline __u64 bbr_bw_to_pacing_rate(struct sock *sk, __u32 bw, __u32 gain)
{
	__u64 rate = bbr_rate_bytes_per_sec(sk, bw, gain);
	__u64 max = sk->sk_max_pacing_rate;

	return rate < max ? rate : max;
}

/* high_gain * init_cwnd / RTT, before a bandwidth sample exists. */
static __always_inline void bbr_init_pacing_rate_from_rtt(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_of(sk);
	__u64 bw;
	__u32 rtt_us;

	if (tp->srtt_us) {
		rtt_us = tp->srtt_us >> 3;
		if (rtt_us < 1)
			rtt_us = 1;
		bbr->has_seen_rtt = 1;
	} else {
		rtt_us = USEC_PER_MSEC; /* nominal default */
	}
	bw = (__u64)tp->snd_cwnd * BW_UNIT;
	bw /= rtt_us;
	sk->sk_pacing_rate = bbr_bw_to_pacing_rate(sk, bw, high_gain);
}

static __always_inline void bbr_set_pacing_rate(struct sock *sk, __u32 bw, __u32 gain)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_of(sk);
	__u64 rate = bbr_bw_to_pacing_rate(sk, bw, gain);

	if (!bbr->has_seen_rtt && tp->srtt_us)
		bbr_init_pacing_rate_from_rtt(sk);
	/* Only lower the rate once the pipe is known to be full. */
	if (bbr->full_bw_reached || rate > sk->sk_pacing_rate)
		sk->sk_pacing_rate = rate;
}

static __always_inline __u32 bbr_min_tso_segs_of(struct sock *sk)
{
	return sk->sk_pacing_rate < (bbr_min_tso_rate >> 3) ? 1 : 2;
}

SEC("struct_ops")
__u32 BPF_PROG(bbr_min_tso_segs, struct sock *sk)
{
	return bbr_min_tso_segs_of(sk);
}

/* tcp_tso_autosize without the driver's sk_gso_max_size: ~1 ms of data. */
static __always_inline __u32 bbr_tso_segs_goal(struct sock *sk)
{
	__u64 bytes = sk->sk_pacing_rate >> sk->sk_pacing_shift;
	__u32 segs, min_segs = bbr_min_tso_segs_of(sk);

	if (bytes > GSO_MAX_SIZE - 1 - MAX_TCP_HEADER)
		bytes = GSO_MAX_SIZE - 1 - MAX_TCP_HEADER;
	segs = (__u32)bytes / tcp_sk(sk)->mss_cache;
	if (segs < min_segs)
		segs = min_segs;
	return segs < 0x7F ? segs : 0x7F;
}

/* The last good cwnd, restored after recovery or PROBE_RTT. */
static __always_inline void bbr_save_cwnd(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_of(sk);

	if (bbr->prev_ca_state < TCP_CA_Recovery && bbr->mode != BBR_PROBE_RTT)
		bbr->prior_cwnd = tp->snd_cwnd;
	else if (tp->snd_cwnd > bbr->prior_cwnd)
		bbr->prior_cwnd = tp->snd_cwnd;
}

/* bdp = ceil(bw * min_rtt * gain); TCP_INIT_CWND before any RTT sample. */
static __always_inline __u32 bbr_bdp(struct sock *sk, __u32 bw, __u32 gain)
{
	struct bbr *bbr = bbr_of(sk);
	__u64 w;

	if (bbr->min_rtt_us == ~0U)
		return TCP_INIT_CWND;
	w = (__u64)bw * bbr->min_rtt_us;
	return (((w * gain) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT;
}

/* Room for the end hosts' TSO/GRO skbs, an even cwnd, +2 in the 1.25 phase. */
static __always_inline __u32 bbr_quantization_budget(struct sock *sk, __u32 cwnd)
{
	struct bbr *bbr = bbr_of(sk);

	cwnd += 3 * bbr_tso_segs_goal(sk);
	cwnd = (cwnd + 1) & ~1U;
	if (bbr->mode == BBR_PROBE_BW && bbr->cycle_idx == 0)
		cwnd += 2;
	return cwnd;
}

static __always_inline __u32 bbr_inflight(struct sock *sk, __u32 bw, __u32 gain)
{
	return bbr_quantization_budget(sk, bbr_bdp(sk, bw, gain));
}

/* Inflight at the earliest departure time of the next skb: less what the path
 * delivers until then, plus that skb when increasing. */
static __always_inline __u32 bbr_packets_in_net_at_edt(struct sock *sk, __u32 inflight_now)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_of(sk);
	__u64 now_ns = tp->tcp_clock_cache, edt_ns = tp->tcp_wstamp_ns, interval_us;
	__u32 interval_delivered, inflight_at_edt = inflight_now;

	if (edt_ns < now_ns)
		edt_ns = now_ns;
	interval_us = (edt_ns - now_ns) / 1000;
	interval_delivered = ((__u64)bbr_bw(sk) * interval_us) >> BW_SCALE;
	if (bbr->pacing_gain > BBR_UNIT)
		inflight_at_edt += bbr_tso_segs_goal(sk);
	if (interval_delivered >= inflight_at_edt)
		return 0;
	return inflight_at_edt - interval_delivered;
}

static __always_inline __u32 bbr_ack_aggregation_cwnd(struct sock *sk)
{
	__u32 max_aggr_cwnd, aggr_cwnd = 0;

	if (bbr_extra_acked_gain && bbr_of(sk)->full_bw_reached) {
		max_aggr_cwnd = ((__u64)bbr_bw(sk) * bbr_extra_acked_max_us) / BW_UNIT;
		aggr_cwnd = (bbr_extra_acked_gain * bbr_extra_acked(sk)) >> BBR_SCALE;
		if (aggr_cwnd > max_aggr_cwnd)
			aggr_cwnd = max_aggr_cwnd;
	}
	return aggr_cwnd;
}

/* Packet conservation in the first round of recovery; restore after it. */
static __always_inline bool bbr_set_cwnd_to_recover_or_restore(struct sock *sk, int losses,
							       __u32 acked, __u32 *new_cwnd)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_of(sk);
	__u8 prev_state = bbr->prev_ca_state, state = tcplab_ca_state(sk);
	__u32 cwnd = tp->snd_cwnd;

	if (losses > 0) {
		__s32 c = (__s32)(cwnd - losses);

		cwnd = c > 1 ? c : 1;
	}
	if (state == TCP_CA_Recovery && prev_state != TCP_CA_Recovery) {
		bbr->packet_conservation = 1;
		bbr->next_rtt_delivered = tp->delivered; /* start a round now */
		cwnd = tcp_packets_in_flight(tp) + acked;
	} else if (prev_state >= TCP_CA_Recovery && state < TCP_CA_Recovery) {
		if (bbr->prior_cwnd > cwnd)
			cwnd = bbr->prior_cwnd;
		bbr->packet_conservation = 0;
	}
	bbr->prev_ca_state = state;

	if (bbr->packet_conservation) {
		__u32 floor = tcp_packets_in_flight(tp) + acked;

		*new_cwnd = cwnd > floor ? cwnd : floor;
		return true;
	}
	*new_cwnd = cwnd;
	return false;
}

static __always_inline void bbr_set_cwnd(struct sock *sk, int losses, __u32 acked, __u32 bw,
					 __u32 gain)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_of(sk);
	__u32 cwnd = tp->snd_cwnd, target_cwnd;

	if (!acked)
		goto done; /* nothing fully acked: just apply the caps */
	if (bbr_set_cwnd_to_recover_or_restore(sk, losses, acked, &cwnd))
		goto done;

	target_cwnd = bbr_bdp(sk, bw, gain);
	target_cwnd += bbr_ack_aggregation_cwnd(sk);
	target_cwnd = bbr_quantization_budget(sk, target_cwnd);

	/* Slow start toward the target; cut only once the pipe was filled. */
	if (bbr->full_bw_reached) {
		cwnd += acked;
		if (cwnd > target_cwnd)
			cwnd = target_cwnd;
	} else if (cwnd < target_cwnd || tp->delivered < TCP_INIT_CWND) {
		cwnd += acked;
	}
	if (cwnd < bbr_cwnd_min_target)
		cwnd = bbr_cwnd_min_target;
done:
	tp->snd_cwnd = cwnd < tp->snd_cwnd_clamp ? cwnd : tp->snd_cwnd_clamp;
	if (bbr->mode == BBR_PROBE_RTT && tp->snd_cwnd > bbr_cwnd_min_target)
		tp->snd_cwnd = bbr_cwnd_min_target;
}

static __always_inline __u64 tcp_stamp_us_delta(__u64 t1, __u64 t0)
{
	__s64 d = t1 - t0;

	return d > 0 ? d : 0;
}

static __always_inline __u32 bbr_pacing_gain_at(__u32 idx)
{
	if (idx == 0)
		return BBR_UNIT * 5 / 4; /* probe for more bandwidth */
	if (idx == 1)
		return BBR_UNIT * 3 / 4; /* drain the queue it made */
	return BBR_UNIT; /* cruise */
}

static __always_inline bool bbr_is_next_cycle_phase(struct sock *sk, __u32 prior_in_flight,
						    int losses)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_of(sk);
	bool is_full_length =
		tcp_stamp_us_delta(tp->delivered_mstamp, bbr->cycle_mstamp) > bbr->min_rtt_us;
	__u32 inflight, bw;

	if (bbr->pacing_gain == BBR_UNIT)
		return is_full_length;
	inflight = bbr_packets_in_net_at_edt(sk, prior_in_flight);
	bw = bbr_max_bw(sk);
	if (bbr->pacing_gain > BBR_UNIT)
		return is_full_length &&
		       (losses || inflight >= bbr_inflight(sk, bw, bbr->pacing_gain));
	return is_full_length || inflight <= bbr_inflight(sk, bw, BBR_UNIT);
}

static __always_inline void bbr_advance_cycle_phase(struct sock *sk)
{
	struct bbr *bbr = bbr_of(sk);

	bbr->cycle_idx = (bbr->cycle_idx + 1) & (CYCLE_LEN - 1);
	bbr->cycle_mstamp = tcp_sk(sk)->delivered_mstamp;
}

static __always_inline void bbr_reset_probe_bw_mode(struct sock *sk)
{
	struct bbr *bbr = bbr_of(sk);
	/* get_random_u32_below(bbr_cycle_rand): multiply-high of a random u32 */
	__u32 r = ((__u64)bpf_get_prandom_u32() * bbr_cycle_rand) >> 32;

	bbr->mode = BBR_PROBE_BW;
	bbr->cycle_idx = CYCLE_LEN - 1 - r;
	bbr_advance_cycle_phase(sk); /* flip to the next phase */
}

static __always_inline void bbr_reset_mode(struct sock *sk)
{
	if (!bbr_of(sk)->full_bw_reached)
		bbr_of(sk)->mode = BBR_STARTUP;
	else
		bbr_reset_probe_bw_mode(sk);
}

static __always_inline void bbr_reset_lt_bw_sampling_interval(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_of(sk);

	bbr->lt_last_stamp = tp->delivered_mstamp / USEC_PER_MSEC;
	bbr->lt_last_delivered = tp->delivered;
	bbr->lt_last_lost = tp->lost;
	bbr->lt_rtt_cnt = 0;
}

static __always_inline void bbr_reset_lt_bw_sampling(struct sock *sk)
{
	struct bbr *bbr = bbr_of(sk);

	bbr->lt_bw = 0;
	bbr->lt_use_bw = 0;
	bbr->lt_is_sampling = 0;
	bbr_reset_lt_bw_sampling_interval(sk);
}

/* Two intervals of consistent throughput with high loss: a policer. */
static __always_inline void bbr_lt_bw_interval_done(struct sock *sk, __u32 bw)
{
	struct bbr *bbr = bbr_of(sk);
	__u32 diff;

	if (bbr->lt_bw) {
		diff = bw > bbr->lt_bw ? bw - bbr->lt_bw : bbr->lt_bw - bw;
		if ((diff * BBR_UNIT <= bbr_lt_bw_ratio * bbr->lt_bw) ||
		    (bbr_rate_bytes_per_sec(sk, diff, BBR_UNIT) <= bbr_lt_bw_diff)) {
			bbr->lt_bw = (bw + bbr->lt_bw) >> 1; /* average of 2 intervals */
			bbr->lt_use_bw = 1;
			bbr->pacing_gain = BBR_UNIT;
			bbr->lt_rtt_cnt = 0;
			return;
		}
	}
	bbr->lt_bw = bw;
	bbr_reset_lt_bw_sampling_interval(sk);
}

static __noinline void bbr_lt_bw_sampling(struct sock *sk, int losses, bool is_app_limited)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_of(sk);
	__u32 lost, delivered, t;
	__u64 bw;

	if (bbr->lt_use_bw) {
		if (bbr->mode == BBR_PROBE_BW && bbr->round_start &&
		    ++bbr->lt_rtt_cnt >= bbr_lt_bw_max_rtts) {
			bbr_reset_lt_bw_sampling(sk); /* stop using lt_bw */
			bbr_reset_probe_bw_mode(sk); /* restart gain cycling */
		}
		return;
	}
	/* Start at the first loss, when a policer has used up its tokens. */
	if (!bbr->lt_is_sampling) {
		if (!losses)
			return;
		bbr_reset_lt_bw_sampling_interval(sk);
		bbr->lt_is_sampling = 1;
	}
	if (is_app_limited) {
		bbr_reset_lt_bw_sampling(sk);
		return;
	}
	if (bbr->round_start)
		bbr->lt_rtt_cnt++;
	if (bbr->lt_rtt_cnt < bbr_lt_intvl_min_rtts)
		return;
	if (bbr->lt_rtt_cnt > 4 * bbr_lt_intvl_min_rtts) {
		bbr_reset_lt_bw_sampling(sk);
		return;
	}
	if (!losses)
		return;
	lost = tp->lost - bbr->lt_last_lost;
	delivered = tp->delivered - bbr->lt_last_delivered;
	if (!delivered || (lost << BBR_SCALE) < bbr_lt_loss_thresh * delivered)
		return;
	t = (__u32)(tp->delivered_mstamp / USEC_PER_MSEC) - bbr->lt_last_stamp;
	if ((__s32)t < 1)
		return; /* less than a ms: wait */
	if (t >= ~0U / USEC_PER_MSEC) {
		bbr_reset_lt_bw_sampling(sk);
		return;
	}
	t *= USEC_PER_MSEC;
	bw = (__u64)delivered * BW_UNIT;
	bw /= t;
	bbr_lt_bw_interval_done(sk, bw);
}

static __always_inline void bbr_update_bw(struct sock *sk, const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_of(sk);
	__u64 bw;

	bbr->round_start = 0;
	if (rs->delivered < 0 || rs->interval_us <= 0)
		return; /* not a valid observation */
	if (!before(rs->prior_delivered, bbr->next_rtt_delivered)) {
		bbr->next_rtt_delivered = tp->delivered;
		bbr->rtt_cnt++;
		bbr->round_start = 1;
		bbr->packet_conservation = 0;
	}
	bbr_lt_bw_sampling(sk, rs->losses, rs->is_app_limited);

	bw = (__u64)rs->delivered * BW_UNIT;
	bw /= (__u64)rs->interval_us;
	/* App-limited samples only count when they raise the estimate. */
	if (!rs->is_app_limited || bw >= bbr_max_bw(sk))
		minmax_running_max(&bbr->bw, bw_rtts, bbr->rtt_cnt, bw);
}

/* extra_acked[extra_acked_win_idx] = v, with constant indexes: the kernel verifier
 * refuses a variable offset into the socket. */
static __always_inline void extra_acked_set(struct bbr *bbr, __u16 v)
{
	if (bbr->extra_acked_win_idx)
		bbr->extra_acked[1] = v;
	else
		bbr->extra_acked[0] = v;
}

static __always_inline void bbr_update_ack_aggregation(struct sock *sk,
						       const struct rate_sample *rs)
{
	struct bbr *bbr = bbr_of(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 epoch_us, expected_acked, extra_acked, acked_sacked = rs->acked_sacked;

	if (!bbr_extra_acked_gain || acked_sacked <= 0 || rs->delivered < 0 ||
	    rs->interval_us <= 0)
		return;
	if (bbr->round_start) {
		__u32 w = bbr->extra_acked_win_rtts + 1;

		bbr->extra_acked_win_rtts = w < 0x1F ? w : 0x1F;
		if (bbr->extra_acked_win_rtts >= bbr_extra_acked_win_rtts) {
			bbr->extra_acked_win_rtts = 0;
			bbr->extra_acked_win_idx = bbr->extra_acked_win_idx ? 0 : 1;
			extra_acked_set(bbr, 0);
		}
	}
	/* Packets the estimated bw would have delivered over the epoch. */
	epoch_us = tcp_stamp_us_delta(tp->delivered_mstamp, bbr->ack_epoch_mstamp);
	expected_acked = ((__u64)bbr_bw(sk) * epoch_us) / BW_UNIT;
	if (bbr->ack_epoch_acked <= expected_acked ||
	    (bbr->ack_epoch_acked + acked_sacked >= bbr_ack_epoch_acked_reset_thresh)) {
		bbr->ack_epoch_acked = 0;
		bbr->ack_epoch_mstamp = tp->delivered_mstamp;
		expected_acked = 0;
	}
	bbr->ack_epoch_acked += acked_sacked;
	if (bbr->ack_epoch_acked > 0xFFFFF)
		bbr->ack_epoch_acked = 0xFFFFF;
	extra_acked = bbr->ack_epoch_acked - expected_acked;
	if (extra_acked > tp->snd_cwnd)
		extra_acked = tp->snd_cwnd;
	if (extra_acked > (bbr->extra_acked_win_idx ? bbr->extra_acked[1] : bbr->extra_acked[0]))
		extra_acked_set(bbr, extra_acked);
}

/* STARTUP filled the pipe once bw grew less than 25 % for 3 non-app-limited rounds. */
static __always_inline void bbr_check_full_bw_reached(struct sock *sk, bool is_app_limited)
{
	struct bbr *bbr = bbr_of(sk);
	__u32 bw_thresh;

	if (bbr->full_bw_reached || !bbr->round_start || is_app_limited)
		return;
	bw_thresh = ((__u64)bbr->full_bw * bbr_full_bw_thresh) >> BBR_SCALE;
	if (bbr_max_bw(sk) >= bw_thresh) {
		bbr->full_bw = bbr_max_bw(sk);
		bbr->full_bw_cnt = 0;
		return;
	}
	++bbr->full_bw_cnt;
	bbr->full_bw_reached = bbr->full_bw_cnt >= bbr_full_bw_cnt;
}

static __always_inline void bbr_check_drain(struct sock *sk)
{
	struct bbr *bbr = bbr_of(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	if (bbr->mode == BBR_STARTUP && bbr->full_bw_reached) {
		bbr->mode = BBR_DRAIN;
		tp->snd_ssthresh = bbr_inflight(sk, bbr_max_bw(sk), BBR_UNIT);
	}
	if (bbr->mode == BBR_DRAIN &&
	    bbr_packets_in_net_at_edt(sk, tcp_packets_in_flight(tp)) <=
		    bbr_inflight(sk, bbr_max_bw(sk), BBR_UNIT))
		bbr_reset_probe_bw_mode(sk); /* queue drained */
}

static __noinline void bbr_check_probe_rtt_done(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_of(sk);
	__u32 now = tcp_jiffies32;

	if (!(bbr->probe_rtt_done_stamp && after(now, bbr->probe_rtt_done_stamp)))
		return;
	bbr->min_rtt_stamp = now; /* wait a while until the next PROBE_RTT */
	if (bbr->prior_cwnd > tp->snd_cwnd)
		tp->snd_cwnd = bbr->prior_cwnd;
	bbr_reset_mode(sk);
}

static __always_inline void bbr_update_min_rtt(struct sock *sk, const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_of(sk);
	__u32 now = tcp_jiffies32;
	long rtt_us = rs->rtt_us;
	bool filter_expired = after(now, bbr->min_rtt_stamp + min_rtt_win_sec * HZ);

	/* Strictly lower (5.10), or any non-delayed sample once the window expired. */
	if (rtt_us >= 0 && ((__u64)rtt_us < bbr->min_rtt_us ||
			    (filter_expired && !rs->is_ack_delayed))) {
		bbr->min_rtt_us = (__u64)rtt_us > 0xffffffffULL ? ~0U : rtt_us;
		bbr->min_rtt_stamp = now;
	}
	if (probe_rtt_mode_ms > 0 && filter_expired && !bbr->idle_restart &&
	    bbr->mode != BBR_PROBE_RTT) {
		bbr->mode = BBR_PROBE_RTT; /* dip, drain the queue */
		bbr_save_cwnd(sk);
		bbr->probe_rtt_done_stamp = 0;
	}
	if (bbr->mode == BBR_PROBE_RTT) {
		__u32 mark = tp->delivered + tcp_packets_in_flight(tp);

		/* Ignore low-rate samples during this mode. */
		tp->app_limited = mark ? mark : 1;
		if (!bbr->probe_rtt_done_stamp &&
		    tcp_packets_in_flight(tp) <= bbr_cwnd_min_target) {
			bbr->probe_rtt_done_stamp = now + msecs_to_jiffies(probe_rtt_mode_ms);
			bbr->probe_rtt_round_done = 0;
			bbr->next_rtt_delivered = tp->delivered;
		} else if (bbr->probe_rtt_done_stamp) {
			if (bbr->round_start)
				bbr->probe_rtt_round_done = 1;
			if (bbr->probe_rtt_round_done)
				bbr_check_probe_rtt_done(sk);
		}
	}
	if (rs->delivered > 0)
		bbr->idle_restart = 0;
}

static __always_inline void bbr_update_gains(struct sock *sk)
{
	struct bbr *bbr = bbr_of(sk);

	switch (bbr->mode) {
	case BBR_STARTUP:
		bbr->pacing_gain = high_gain;
		bbr->cwnd_gain = high_gain;
		break;
	case BBR_DRAIN:
		bbr->pacing_gain = drain_gain;
		bbr->cwnd_gain = high_gain;
		break;
	case BBR_PROBE_BW:
		bbr->pacing_gain = bbr->lt_use_bw ? BBR_UNIT : bbr_pacing_gain_at(bbr->cycle_idx);
		bbr->cwnd_gain = BBR_PROBE_BW_CWND_GAIN(bbr, cwnd_gain);
		break;
	default: /* BBR_PROBE_RTT */
		bbr->pacing_gain = BBR_UNIT;
		bbr->cwnd_gain = BBR_UNIT;
		break;
	}
}

SEC("struct_ops")
void BPF_PROG(bbr_main, struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs)
{
	struct bbr *bbr = bbr_of(sk);
	int losses = rs->losses;
	bool app_limited = rs->is_app_limited;
	__u32 bw;

	/* bbr_update_model */
	bbr_update_bw(sk, rs);
	bbr_update_ack_aggregation(sk, rs);
	if (bbr->mode == BBR_PROBE_BW &&
	    bbr_is_next_cycle_phase(sk, rs->prior_in_flight, losses))
		bbr_advance_cycle_phase(sk);
	bbr_check_full_bw_reached(sk, app_limited);
	bbr_check_drain(sk);
	bbr_update_min_rtt(sk, rs);
	bbr_update_gains(sk);

	bw = bbr_bw(sk);
	bbr_set_pacing_rate(sk, bw, bbr->pacing_gain);
	bbr_set_cwnd(sk, losses, rs->acked_sacked, bw, bbr->cwnd_gain);
}

SEC("struct_ops")
void BPF_PROG(bbr_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_of(sk);

	bbr->prior_cwnd = 0;
	tp->snd_ssthresh = TCP_INFINITE_SSTHRESH;
	bbr->rtt_cnt = 0;
	bbr->next_rtt_delivered = tp->delivered;
	bbr->prev_ca_state = TCP_CA_Open;
	bbr->packet_conservation = 0;
	bbr->probe_rtt_done_stamp = 0;
	bbr->probe_rtt_round_done = 0;
	bbr->min_rtt_us = tcp_min_rtt(tp);
	bbr->min_rtt_stamp = tcp_jiffies32;
	minmax_reset(&bbr->bw, bbr->rtt_cnt, 0);
	bbr->has_seen_rtt = 0;
	bbr_init_pacing_rate_from_rtt(sk);
	bbr->round_start = 0;
	bbr->idle_restart = 0;
	bbr->full_bw_reached = 0;
	bbr->full_bw = 0;
	bbr->full_bw_cnt = 0;
	bbr->cycle_mstamp = 0;
	bbr->cycle_idx = 0;
	bbr->pacing_gain = 0;
	bbr->cwnd_gain = 0;
	bbr_reset_lt_bw_sampling(sk);
	bbr->mode = BBR_STARTUP;
	bbr->ack_epoch_mstamp = tp->tcp_mstamp;
	bbr->ack_epoch_acked = 0;
	bbr->extra_acked_win_rtts = 0;
	bbr->extra_acked_win_idx = 0;
	bbr->extra_acked[0] = 0;
	bbr->extra_acked[1] = 0;
	if (sk->sk_pacing_status == SK_PACING_NONE)
		sk->sk_pacing_status = SK_PACING_NEEDED;
}

SEC("struct_ops")
__u32 BPF_PROG(bbr_sndbuf_expand, struct sock *sk)
{
	return 3; /* BBR may slow-start even during recovery */
}

SEC("struct_ops")
__u32 BPF_PROG(bbr_undo_cwnd, struct sock *sk)
{
	struct bbr *bbr = bbr_of(sk);

	bbr->full_bw = 0; /* spurious slow-down: restart full-pipe detection */
	bbr->full_bw_cnt = 0;
	bbr_reset_lt_bw_sampling(sk);
	return tcp_sk(sk)->snd_cwnd;
}

SEC("struct_ops")
__u32 BPF_PROG(bbr_ssthresh, struct sock *sk)
{
	bbr_save_cwnd(sk);
	return tcp_sk(sk)->snd_ssthresh;
}

SEC("struct_ops")
void BPF_PROG(bbr_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = bbr_of(sk);

	if (event == CA_EVENT_TX_START && tp->app_limited) {
		bbr->idle_restart = 1;
		bbr->ack_epoch_mstamp = tp->tcp_mstamp;
		bbr->ack_epoch_acked = 0;
		/* Restarting app-limited: pace at the estimated bw, no faster. */
		if (bbr->mode == BBR_PROBE_BW)
			bbr_set_pacing_rate(sk, bbr_bw(sk), BBR_UNIT);
		else if (bbr->mode == BBR_PROBE_RTT)
			bbr_check_probe_rtt_done(sk);
	}
}

SEC("struct_ops")
void BPF_PROG(bbr_set_state, struct sock *sk, __u8 new_state)
{
	struct bbr *bbr = bbr_of(sk);

	if (new_state == TCP_CA_Loss) {
		bbr->prev_ca_state = TCP_CA_Loss;
		bbr->full_bw = 0;
		bbr->round_start = 1; /* treat the RTO like the end of a round */
		bbr_lt_bw_sampling(sk, 1, false);
	}
}

SEC(".struct_ops")
struct tcp_congestion_ops bbr = {
	.init = (void *)bbr_init,
	.cong_control = (void *)bbr_main,
	.sndbuf_expand = (void *)bbr_sndbuf_expand,
	.undo_cwnd = (void *)bbr_undo_cwnd,
	.cwnd_event = (void *)bbr_cwnd_event,
	.ssthresh = (void *)bbr_ssthresh,
	.min_tso_segs = (void *)bbr_min_tso_segs,
	.set_state = (void *)bbr_set_state,
	.name = BBR_NAME,
};
