//! Kernel-history profiles: which release of net/ipv4/tcp_bbr.c a flow runs.
//!
//! Model. The BBR papers measured Linux 4.9 (TUM), 4.14 (CWS) and 4.17 (ACD's
//! testbed); mainline tcp_bbr.c has changed since. A profile is the release whose
//! behaviour the flow follows; each behavioural change after v4.9 is one predicate
//! below, named by its upstream commit (title, and id where we could confirm it) and
//! the first release that contains it. The rest of the `bbr` modules ask these
//! predicates at the one place the change touches, so `6.18` (every predicate true) is
//! exactly the code as it was before profiles existed. A profile stands for mainline
//! x.y.0 (4.9: tcp_bbr.c as first merged), not a stable x.y.z: no tcp_bbr.c backport to
//! 4.9.y / 4.14.y before the papers' measurements could be confirmed (docs/BBR_KERNELS.md,
//! "Stable releases"). The last three predicates are the stack's (tcp_rate.c, loss
//! detection), asked by the simulator's sender.
//!
//! Sources: the commits named below (torvalds/linux, `git log v4.9..v6.18 --
//! net/ipv4/tcp_bbr.c`), dated by their net/net-next merge; the v4.18 and v5.4 small-BDP
//! commits by their netdev postings and the "Fixes:" tag of 6b3656a60f20.
//!
//! Deviations (changes in that history the profiles do not follow; see docs/BBR_KERNELS.md):
//! - "tcp_bbr: fix pacing_gain to always be unity when using lt_bw" (v4.16): before
//!   it, a flow on the long-term (policer) estimate that left PROBE_RTT kept the random
//!   gain of its new cycle phase and froze the cycle. All profiles use the fixed rule
//!   (policers only; no paper entry has one).
//! - "tcp_bbr: better deal with suboptimal GSO (II)" (v4.17): the 4.9/4.14 form of the
//!   minimum TSO segments could not be confirmed from a source here, so all profiles
//!   use today's `bbr_min_tso_segs` (it only matters below ~24 Mbit/s).
//! - the ssthresh BBR reports on entering DRAIN (today's kernel, for observability) is
//!   set in every profile; BBR never reads it.
//! - The pacing rate is initialised from the first RTT sample in every profile
//!   ("tcp_bbr: init pacing rate on first RTT sample", v4.13). With the simulator's
//!   handshake (the default) `bbr_init` already sees the SYN-ACK's `srtt`, as on a v4.9
//!   host, and both forms start from it; only `tcp.handshake = false` (no RTT at init)
//!   relies on the first-sample initialisation.
//! - "centralize code to set gains" (v4.20) and the helpers of the v4.19 PROBE_RTT
//!   series are refactors; only their behaviour changes are profiled.

/// A profiled release of tcp_bbr.c, oldest first (so `>=` means "contains the change").
use crate::registry::ParamChoice;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum KernelRelease {
    /// Linux 4.9 (Dec 2016): tcp_bbr.c as first merged (0f8782ea1497, v4.9).
    V4_9,
    /// Linux 4.14 (Nov 2017).
    V4_14,
    /// Linux 4.17 (Jun 2018).
    V4_17,
    /// Linux 6.18: mainline as this crate ports it.
    #[default]
    V6_18,
}

impl KernelRelease {
    /// Every profile, oldest first.
    pub const ALL: [KernelRelease; 4] = [
        KernelRelease::V4_9,
        KernelRelease::V4_14,
        KernelRelease::V4_17,
        KernelRelease::V6_18,
    ];

    /// The `kernel` parameter's choices (`ParamKind::Choice`): each release's label
    /// and code. The one list of profiled releases; the front end reads it from the
    /// registry.
    pub const CHOICES: [ParamChoice; 4] = [
        KernelRelease::ALL[0].choice(),
        KernelRelease::ALL[1].choice(),
        KernelRelease::ALL[2].choice(),
        KernelRelease::ALL[3].choice(),
    ];

    const fn choice(self) -> ParamChoice {
        ParamChoice {
            label: self.label(),
            value: self.code() as f64,
        }
    }

    /// The release as the spec writes it (`[tcp] kernel = "4.9"`).
    pub const fn label(self) -> &'static str {
        match self {
            KernelRelease::V4_9 => "4.9",
            KernelRelease::V4_14 => "4.14",
            KernelRelease::V4_17 => "4.17",
            KernelRelease::V6_18 => "6.18",
        }
    }

    /// The number the `kernel` algorithm parameter takes: major * 100 + minor
    /// (409, 414, 417, 618). Parameters are numbers; this keeps the ordering.
    pub const fn code(self) -> u32 {
        match self {
            KernelRelease::V4_9 => 409,
            KernelRelease::V4_14 => 414,
            KernelRelease::V4_17 => 417,
            KernelRelease::V6_18 => 618,
        }
    }

    /// The profile of a `kernel` parameter value; `None` for a release not profiled.
    pub fn from_code(code: f64) -> Option<KernelRelease> {
        KernelRelease::ALL
            .into_iter()
            .find(|k| f64::from(k.code()) == code)
    }

    /// v4.13, "tcp_bbr: cut pacing rate only if filled pipe" (net 2017-07): lower the
    /// pacing rate only once the pipe is full. Before: whenever not in STARTUP (so a
    /// PROBE_RTT visit before the pipe filled could lower it).
    pub fn cuts_pacing_only_if_full(self) -> bool {
        self >= KernelRelease::V4_14
    }

    /// v4.15, "tcp_bbr: reset full pipe detection on loss recovery undo" and "tcp_bbr:
    /// reset long-term bandwidth sampling on loss recovery undo" (net 2017-12-08, with
    /// "record 'full bw reached' decision in new full_bw_reached bit"): `bbr_undo_cwnd`
    /// restarts full-pipe detection and the long-term sampler. Before: it only returned
    /// cwnd (and `full_bw_reached` was `full_bw_cnt >= 3`, the same bit while nothing
    /// reset the count).
    pub fn undo_resets_estimators(self) -> bool {
        self >= KernelRelease::V4_17
    }

    /// v4.16, "tcp: avoid min RTT bloat by skipping RTT from delayed-ACK in BBR"
    /// (net-next 2018-01-19): a possibly delayed ACK cannot refresh an expired min_rtt.
    /// (The simulator never marks an ACK delayed, see crates/sim tcp/rate.rs.)
    pub fn skips_delayed_ack_rtt(self) -> bool {
        self >= KernelRelease::V4_17
    }

    /// v4.18, "tcp_bbr: fix bw probing to raise in-flight data for very small BDPs"
    /// (383d470936c0) added +2 packets to the quantization budget in PROBE_BW when
    /// gain > 1 (i.e. always, cwnd_gain being 2); v5.4, "tcp_bbr: fix quantization code
    /// to not raise cwnd if not probing bandwidth" (6b3656a60f20) limited it to the
    /// 1.25 phase. No profiled release has the v4.18-v5.3 form.
    pub fn probe_quanta(self) -> bool {
        self >= KernelRelease::V6_18
    }

    /// v4.19, "tcp_bbr: apply PROBE_RTT cwnd cap even if acked==0" (net 2018-08-22),
    /// "tcp_bbr: add bbr_check_probe_rtt_done() helper" (cwnd restored to prior_cwnd
    /// the moment PROBE_RTT ends) and "tcp_bbr: in restart from idle, see if we should
    /// exit PROBE_RTT". Before: `bbr_set_cwnd` returned early when nothing was acked,
    /// the restore waited for the next ACK's `bbr_set_cwnd` (flag `restore_cwnd`), and
    /// an idle restart never ended PROBE_RTT.
    pub fn probe_rtt_v419(self) -> bool {
        self >= KernelRelease::V6_18
    }

    /// v4.19, "tcp_bbr: fix to zero idle_restart only upon S/ACKed data" (net
    /// 2018-09): before it every ACK ended the idle restart.
    pub fn idle_restart_ends_on_data(self) -> bool {
        self >= KernelRelease::V6_18
    }

    /// v4.20, "tcp_bbr: adjust TCP BBR for departure time pacing" (net-next
    /// 2018-10-17): pace `bbr_pacing_margin_percent` = 1 % below the estimate, and
    /// count inflight at the earliest departure time (`bbr_packets_in_net_at_edt`) in
    /// the DRAIN and gain-cycle checks. Before: no margin (the rate on the MTU, which
    /// fq spent on wire-sized packets: one packet per bw interval) and plain inflight.
    pub fn departure_time_pacing(self) -> bool {
        self >= KernelRelease::V6_18
    }

    /// v5.1, "tcp_bbr: adapt cwnd based on ack aggregation estimation" (78dc70ebaa38):
    /// the `extra_acked` allowance in the target cwnd.
    pub fn extra_acked(self) -> bool {
        self >= KernelRelease::V6_18
    }

    /// v5.10, "tcp: only postpone PROBE_RTT if RTT is < current min_rtt estimate"
    /// (1b9e2a8c99a5): a sample equal to min_rtt no longer refreshes its stamp (4.9 to
    /// 5.9: `<=`).
    pub fn min_rtt_strictly_lower(self) -> bool {
        self >= KernelRelease::V6_18
    }

    /// v5.14, "tcp_bbr: fix u32 wrap bug in round logic if bbr_init() called after 2B
    /// packets" (6de035fec045): the first round ends at `tp->delivered` at init, not 0.
    pub fn first_round_at_delivered(self) -> bool {
        self >= KernelRelease::V6_18
    }

    // What the profiles change outside tcp_bbr.c: the parts of the TCP stack BBR reads
    // (net/ipv4/tcp_rate.c, loss detection in tcp_input.c / tcp_recovery.c). The
    // simulator's sender asks these (crates/sim tcp/rate.rs, rack.rs, recovery.rs).

    /// v4.10, "tcp: enable RACK loss detection to trigger recovery" and "tcp: add
    /// reordering timer in RACK loss detection" (Yuchung Cheng, net-next 2017-01-12):
    /// RACK marks losses in every state, waits rack.rtt + reo_wnd per segment and arms
    /// the reordering timer. Before (v4.4 to v4.9): RACK only once in Recovery or Loss
    /// (the dupthresh rules start recovery), a segment lost once a segment sent more
    /// than reo_wnd after it was delivered, no timer.
    pub fn rack_timer(self) -> bool {
        self >= KernelRelease::V4_14
    }

    /// v4.18, "tcp: disable RFC6675 loss detection" (b38a51fec1c1, Yuchung Cheng,
    /// net-next 2018-05-17) with "tcp: remove FACK" (the same series): with RACK on,
    /// RACK alone detects losses (`tcp_rack_reo_wnd` is 0 once sacked_out reaches the
    /// reordering degree, standing for the duplicate-ACK threshold). Before: the
    /// duplicate-ACK threshold (FACK's `fackets_out`, or `sacked_out + 1` once
    /// reordering disabled FACK) also starts recovery, and `tcp_update_scoreboard`
    /// marks the head of the queue lost beside RACK.
    pub fn rack_only(self) -> bool {
        self >= KernelRelease::V6_18
    }

    /// v5.18, "tcp: ensure to use the most recently sent skb when filling the rate
    /// sample" (b253a0680cea, Pengcheng Yang, 2022-04): of the segments one ACK
    /// delivers, the rate sample takes the one sent last (`tcp_skb_sent_after`: send
    /// time, then end_seq). Before (v4.9 to v5.17): the first one whose
    /// `tx.delivered` is higher than the sample's so far, so of segments sent between
    /// the same two ACKs (equal `tx.delivered`) the first (s)acked one.
    pub fn rate_sample_by_send_time(self) -> bool {
        self >= KernelRelease::V6_18
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_unknown_releases_are_refused() {
        for k in KernelRelease::ALL {
            assert_eq!(KernelRelease::from_code(f64::from(k.code())), Some(k));
        }
        assert_eq!(KernelRelease::from_code(500.0), None);
        assert_eq!(KernelRelease::from_code(409.5), None);
        assert_eq!(KernelRelease::default(), KernelRelease::V6_18);
    }

    #[test]
    fn the_newest_profile_has_every_change_and_4_9_none() {
        let all = |k: KernelRelease| {
            [
                k.cuts_pacing_only_if_full(),
                k.undo_resets_estimators(),
                k.skips_delayed_ack_rtt(),
                k.probe_quanta(),
                k.probe_rtt_v419(),
                k.idle_restart_ends_on_data(),
                k.departure_time_pacing(),
                k.extra_acked(),
                k.min_rtt_strictly_lower(),
                k.first_round_at_delivered(),
                k.rack_timer(),
                k.rack_only(),
                k.rate_sample_by_send_time(),
            ]
        };
        assert!(all(KernelRelease::V6_18).iter().all(|&b| b));
        assert!(all(KernelRelease::V4_9).iter().all(|&b| !b));
        // 4.14 adds the v4.13 pacing change and v4.10's RACK timer; 4.17 the v4.15/v4.16
        // ones too.
        assert_eq!(all(KernelRelease::V4_14).iter().filter(|&&b| b).count(), 2);
        assert_eq!(all(KernelRelease::V4_17).iter().filter(|&&b| b).count(), 4);
    }
}
