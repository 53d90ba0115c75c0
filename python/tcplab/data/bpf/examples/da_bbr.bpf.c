// SPDX-License-Identifier: MIT
/*
 * da_bbr.bpf.c: DA-BBR, Delay-Aware BBR (Kim and Cho, IEEE Access 8, 2020), as a BPF
 * struct_ops tcp_congestion_ops: bbr.bpf.c (tcp_bbr.c) with PROBE_BW's cwnd gain
 * scaled by a regulating factor gamma <= 1 that shrinks with the flow's RTT.
 *
 * Model. BBR's cap of cwnd_gain x BDP lets each flow keep (cwnd_gain - 1) x bw x RTprop
 * queued, a share proportional to its RTT, so a long-RTT flow wins. DA-BBR scales the
 * queue part of the cap: cwnd_gain x gamma = 1 + (cwnd_gain - 1) x min(1, rtt_ref /
 * RTprop), so every flow with RTprop >= rtt_ref queues about (cwnd_gain - 1) x bw x
 * rtt_ref: the same queueing time whatever its RTT.
 *
 * Follows: crates/cc/src/variants/da_bbr.rs (our Rust port, `da-bbr`), function for
 * function: da_bbr_cwnd_gain, applied in bbr_update_gains' PROBE_BW case; everything else
 * is bbr.bpf.c, included below.
 *
 * Parameters: bbr.bpf.c's, and rtt_ref_us (the Rust port's rtt_ref_ms x 1000; 1000).
 *
 * Deviations: those of bbr.bpf.c; and those of the Rust port, whose definition of gamma
 * is ours (the paper could not be read; crates/cc/src/variants/da_bbr.rs says what was
 * chosen and why). No `info` export (da_gamma): BPF congestion controls have no
 * get_info in struct_ops.
 */

#include "tcplab_cc.h"

#define BBR_NAME "bpf_da_bbr"

struct bbr;
static __always_inline __u16 da_bbr_cwnd_gain(struct bbr *bbr, __u32 gain);
#define BBR_PROBE_BW_CWND_GAIN(bbr, gain) da_bbr_cwnd_gain(bbr, gain)

#include "bbr.bpf.c"

/* The reference RTT of gamma (us). */
const volatile __u32 rtt_ref_us = 1000;

/* BBR_UNIT + (gain - BBR_UNIT) x min(1, rtt_ref / min_rtt), as da_bbr_cwnd_gain. */
static __always_inline __u16 da_bbr_cwnd_gain(struct bbr *bbr, __u32 gain)
{
	__u32 min_rtt = bbr->min_rtt_us;

	if (gain <= BBR_UNIT || min_rtt == 0 || min_rtt == ~0U || min_rtt <= rtt_ref_us)
		return gain;
	return BBR_UNIT + (__u32)((__u64)(gain - BBR_UNIT) * rtt_ref_us / min_rtt);
}
