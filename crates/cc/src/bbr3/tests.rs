//! Hook-level tests of BBRv3: the flow is driven through `cong_control`,
//! `skb_marked_lost` and the other hooks with hand-built `RateSample`s and `CcView`s,
//! and the expectations are computed by hand in the comments from the v3 tcp_bbr.c
//! formulas (never by calling the function under test).
//!
//! Common model unless a test says otherwise: MSS 1448 bytes, min_rtt 40 ms, a
//! bottleneck delivering 20 packets per 40 ms round, the ACK-aggregation term off
//! (`extra_acked` = false) so targets are plain BDP multiples:
//!   bw = 20 * 2^24 / 40000 = 8388.6 -> 8388 (packets/us << 24)
//!   bdp(gain 1)   = ceil(8388 * 40000 / 2^24)                 = ceil(19.9985) = 20
//!   bdp(gain 2)   = ceil((8388 * 40000 * 512 >> 8) / 2^24)    = ceil(39.997)  = 40
//!   bdp(gain 0.5) = ceil((8388 * 40000 * 128 >> 8) / 2^24)    = ceil(9.9993)  = 10
//! Pacing rate at gain 1 = 8388 * 1448 * 990000 >> 24 = 716 708 bytes/s, so
//! `bbr_tso_segs_goal` = max(716708 >> 10 = 699 bytes / 1448, 2) = 2 (min_rtt 40 ms
//! >> 9 = 78 >= 32: no RTT allowance) and the quantization budget is max(cwnd, 6, 4),
//! + 2 in PROBE_UP.

use super::ops::Bbr3Ops;
use super::*;
use crate::ops::{CaEvent, CaState, CcView, CongestionOps, LostSkb, RateSample};

const MSS: u32 = 1448;
const MIN_RTT_US: u32 = 40_000;
const BW_20: u32 = 8388;
const T0: u64 = 1_000_000; // 1 s

struct Flow {
    cc: Bbr3Ops,
    tp: CcView,
}

fn cfg() -> Bbr3Config {
    Bbr3Config {
        extra_acked_gain: 0,
        seed: 7,
        ..Bbr3Config::default()
    }
}

impl Flow {
    fn new() -> Self {
        let mut tp = CcView::new(MSS, 0);
        let mut cc = Bbr3Ops::new(cfg());
        cc.init(&mut tp);
        Flow { cc, tp }
    }

    /// Past STARTUP with the common model: max bw 8388 (in bw_hi[0]), min_rtt 40 ms
    /// taken at t = 0, cwnd 40, 1000 packets delivered, now = 1 s; no round or loss
    /// round ends unless an ACK asks for it.
    fn in_probe_bw(phase: Phase) -> Self {
        let mut f = Flow::new();
        let b = &mut f.cc.bbr;
        b.mode = Mode::ProbeBw;
        b.cycle_idx = phase;
        b.full_bw_reached = true;
        b.bw_hi = [BW_20, 0];
        b.min_rtt_us = MIN_RTT_US;
        b.probe_rtt_min_us = MIN_RTT_US;
        b.has_seen_rtt = true;
        b.cycle_mstamp = T0;
        b.probe_wait_us = 2_500_000;
        b.rounds_since_probe = 0;
        b.next_rtt_delivered = 1000;
        b.loss_round_delivered = 1000;
        model::bbr_update_gains(b);
        f.tp.now_us = T0;
        f.tp.snd_cwnd = 40;
        f.tp.srtt_us = MIN_RTT_US;
        f.tp.min_rtt_us = MIN_RTT_US;
        f.tp.pacing_rate = 716_708;
        f.tp.delivered = 1000;
        f.tp.delivered_mstamp_us = T0;
        f.tp.packets_out = 40;
        f
    }

    fn bbr(&self) -> &Bbr3 {
        &self.cc.bbr
    }

    /// One ACK at `at_us` newly acking `acked` packets; `rs` gives the sample fields
    /// (its `prior_delivered` decides whether a round ends: pass `round_end` true to
    /// make it `tp.delivered` before this ACK, which is >= next_rtt_delivered).
    fn ack(&mut self, at_us: u64, acked: u32, round_end: bool, rs: RateSample) {
        let tp = &mut self.tp;
        let prior_delivered = if round_end { tp.delivered } else { 0 };
        tp.now_us = at_us;
        tp.delivered += u64::from(acked);
        tp.delivered_mstamp_us = at_us;
        let rs = RateSample {
            prior_delivered,
            acked_sacked: acked,
            ..rs
        };
        self.cc.cong_control(&mut self.tp, &rs);
    }
}

/// A valid sample: `delivered` packets over 40 ms, RTT 40 ms, 40 packets in flight
/// before the ACK. The tests use 19 packets: ceil(19 * 2^24 / 40000) = 7970 < 8388,
/// so the sample does not raise max_bw (20 would: ceil(8388.6) = 8389).
fn sample(delivered: i64) -> RateSample {
    RateSample {
        delivered,
        interval_us: 40_000,
        rtt_us: i64::from(MIN_RTT_US),
        prior_in_flight: 40,
        ..RateSample::default()
    }
}

#[test]
fn pacing_gains_and_kernel_constants() {
    // bbr_pacing_gain[]: UP 5/4, DOWN 91/100 (232.96 -> 232), CRUISE 1, REFILL 1.
    assert_eq!(probe_bw::BBR_PACING_GAIN, [320, 232, 256, 256]);
    // tso goal and quantization budget of the common model (module doc).
    let f = Flow::in_probe_bw(Phase::Cruise);
    assert_eq!(pacing::bbr_tso_segs_goal(f.bbr(), &f.tp), 2);
    assert_eq!(cwnd::bbr_inflight(f.bbr(), &f.tp, BW_20, BBR_UNIT), 20);
    // At min_rtt 1 ms the RTT allowance adds 65536 >> (1000 >> 9 = 1) = 32768 bytes:
    // (699 + 32768) / 1448 = 23 segments.
    let mut g = Flow::in_probe_bw(Phase::Cruise);
    g.cc.bbr.min_rtt_us = 1000;
    assert_eq!(pacing::bbr_tso_segs_goal(g.bbr(), &g.tp), 23);
}

/// bbr_adapt_upper_bounds -> bbr_handle_inflight_too_high on an ACK in PROBE_UP whose
/// sample lost more than loss_thresh of its flight:
/// inflight_hi = max(tx_in_flight, target_inflight * (256 - 76) >> 8), then PROBE_DOWN.
#[test]
fn loss_above_loss_thresh_in_probe_up_sets_inflight_hi_and_starts_probe_down() {
    // (a) tx_in_flight 30, lost 2 > 30 * 5 >> 8 = 0. target_inflight in UP =
    // min(bdp 20 + 2, cwnd 40) = 22; 22 * 180 >> 8 = 15. inflight_hi = max(30, 15) = 30.
    let mut f = Flow::in_probe_bw(Phase::Up);
    f.cc.bbr.bw_probe_samples = true;
    f.cc.bbr.ack_phase = AckPhase::ProbeFeedback;
    f.ack(
        T0 + 1000,
        1,
        false,
        RateSample {
            tx_in_flight: 30,
            lost: 2,
            ..sample(19)
        },
    );
    let b = f.bbr();
    assert_eq!(b.inflight_hi, 30);
    assert!(b.prev_probe_too_high && !b.bw_probe_samples);
    assert_eq!(
        (b.mode, b.cycle_idx, b.ack_phase),
        (Mode::ProbeBw, Phase::Down, AckPhase::ProbeStopping)
    );
    // DOWN gains 232 / 512; cwnd: target 40 (2 x BDP), cwnd 40 + 1 -> 40, then capped
    // at inflight_hi 30 (bbr_bound_cwnd_for_inflight_model, not CRUISE).
    assert_eq!((b.pacing_gain, b.cwnd_gain), (232, 512));
    assert_eq!(f.tp.snd_cwnd, 30);
    // The probe wait just drawn is in [2 s, 3 s).
    assert!(
        (2_000_000..3_000_000).contains(&b.probe_wait_us),
        "{}",
        b.probe_wait_us
    );

    // (b) tx_in_flight 10, lost 1 > 10 * 5 >> 8 = 0: the beta floor wins, 15.
    let mut f = Flow::in_probe_bw(Phase::Up);
    f.cc.bbr.bw_probe_samples = true;
    f.ack(
        T0 + 1000,
        1,
        false,
        RateSample {
            tx_in_flight: 10,
            lost: 1,
            ..sample(19)
        },
    );
    assert_eq!(f.bbr().inflight_hi, 15);

    // (c) loss at the threshold is not too high: 200 in flight, 3 lost, 200 * 5 >> 8 =
    // 3, 3 > 3 is false; inflight_hi (unset) is left alone, still UP.
    let mut f = Flow::in_probe_bw(Phase::Up);
    f.cc.bbr.bw_probe_samples = true;
    f.ack(
        T0 + 1000,
        1,
        false,
        RateSample {
            tx_in_flight: 200,
            lost: 3,
            ..sample(19)
        },
    );
    assert_eq!((f.bbr().inflight_hi, f.bbr().cycle_idx), (UNSET, Phase::Up));

    // (d) without bw_probe_samples (not probing) nothing is cut.
    let mut f = Flow::in_probe_bw(Phase::Up);
    f.ack(
        T0 + 1000,
        1,
        false,
        RateSample {
            tx_in_flight: 30,
            lost: 2,
            ..sample(19)
        },
    );
    assert_eq!(f.bbr().inflight_hi, UNSET);
}

/// bbr_skb_marked_lost -> bbr_inflight_hi_from_lost_skb: the inflight at which the
/// loss rate crossed loss_thresh within the lost packet's flight.
#[test]
fn a_packet_marked_lost_while_probing_cuts_inflight_hi_at_the_crossing_point() {
    // Flight of 200 when it was sent, 4 lost since (tp.lost 104 - tx.lost 100):
    // 4 > 200 * 5 >> 8 = 3, too high. inflight_prev = 199, lost_prev = 3,
    // loss_budget = (199 * 5 + 255) >> 8 = 1250 >> 8 = 4 > 3, so
    // lost_prefix = ((4 - 3) << 8) / (256 - 5) = 256 / 251 = 1: inflight_hi = 200.
    let mut f = Flow::in_probe_bw(Phase::Up);
    f.cc.bbr.bw_probe_samples = true;
    f.tp.lost = 104;
    let skb = LostSkb {
        tx_in_flight: 200,
        tx_lost: 100,
        tx_is_app_limited: false,
        tx_valid: true,
        pcount: 1,
    };
    f.cc.skb_marked_lost(&f.tp, &skb);
    let b = f.bbr();
    assert_eq!(b.inflight_hi, 200);
    assert_eq!(b.cycle_idx, Phase::Down);
    // bbr_note_loss marked the round lossy and timed it from here (tp.delivered 1000),
    // then bbr_start_bw_probe_down reset the signals for the new cycle.
    assert_eq!(b.loss_round_delivered, 1000);
    assert!(!b.loss_in_round && !b.loss_in_cycle);

    // Flight of 100, 3 lost: 3 > 100 * 5 >> 8 = 1. inflight_prev 99, lost_prev 2,
    // loss_budget = (99 * 5 + 255) >> 8 = 2 <= 2: prefix 0, inflight_hi = max(99, 15).
    let mut f = Flow::in_probe_bw(Phase::Up);
    f.cc.bbr.bw_probe_samples = true;
    f.tp.lost = 103;
    let skb = LostSkb {
        tx_in_flight: 100,
        tx_lost: 100,
        ..skb
    };
    f.cc.skb_marked_lost(&f.tp, &skb);
    assert_eq!(f.bbr().inflight_hi, 99);

    // App-limited flight: the probe ends but inflight_hi is kept.
    let mut f = Flow::in_probe_bw(Phase::Up);
    f.cc.bbr.bw_probe_samples = true;
    f.tp.lost = 103;
    f.cc.skb_marked_lost(
        &f.tp,
        &LostSkb {
            tx_is_app_limited: true,
            ..skb
        },
    );
    assert_eq!(
        (f.bbr().inflight_hi, f.bbr().cycle_idx),
        (UNSET, Phase::Down)
    );

    // Not probing: only the loss round is noted.
    let mut f = Flow::in_probe_bw(Phase::Cruise);
    f.tp.lost = 103;
    f.cc.skb_marked_lost(&f.tp, &skb);
    assert_eq!((f.bbr().inflight_hi, f.bbr().loss_in_round), (UNSET, true));
}

/// The PROBE_BW cycle: DOWN -> CRUISE -> REFILL -> UP -> DOWN with its gains.
#[test]
fn probe_bw_runs_down_cruise_refill_up_with_their_gains() {
    let mut f = Flow::in_probe_bw(Phase::Down);
    f.cc.bbr.ack_phase = AckPhase::Init;
    assert_eq!((f.bbr().pacing_gain, f.bbr().cwnd_gain), (232, 512));

    // DOWN -> CRUISE once inflight (prior_in_flight 20, no EDT lead) <= bbr_inflight
    // (max_bw, 1) = 20 and <= inflight_hi less headroom (unset).
    f.ack(
        T0 + 10_000,
        1,
        false,
        RateSample {
            prior_in_flight: 21,
            ..sample(19)
        },
    );
    assert_eq!(f.bbr().cycle_idx, Phase::Down, "21 > 20");
    f.ack(
        T0 + 20_000,
        1,
        false,
        RateSample {
            prior_in_flight: 20,
            ..sample(19)
        },
    );
    assert_eq!(f.bbr().cycle_idx, Phase::Cruise);
    assert_eq!((f.bbr().pacing_gain, f.bbr().cwnd_gain), (256, 512));

    // CRUISE -> REFILL when probe_wait_us (2.5 s) has elapsed since the cycle began
    // (cycle_mstamp = 1 s): not at 3.5 s exactly, at 3.5 s + 1 us.
    f.ack(T0 + 2_500_000, 1, false, sample(19));
    assert_eq!(f.bbr().cycle_idx, Phase::Cruise);
    f.ack(T0 + 2_500_001, 1, false, sample(19));
    let b = f.bbr();
    assert_eq!(
        (b.cycle_idx, b.ack_phase),
        (Phase::Refill, AckPhase::Refilling)
    );
    assert_eq!((b.pacing_gain, b.cwnd_gain), (256, 512));
    assert_eq!((b.bw_lo, b.inflight_lo), (UNSET, UNSET));
    assert_eq!(b.next_rtt_delivered, f.tp.delivered);

    // REFILL -> UP after one round: bw_probe_samples on, pacing 1.25, cwnd_gain
    // 2 + 1/4 = 576/256; bw_probe_up_cnt = cwnd / 2^0 = 40 and the slope doubles next.
    let t = T0 + 2_540_000;
    f.ack(t, 1, true, sample(19));
    let b = f.bbr();
    assert_eq!(
        (b.cycle_idx, b.ack_phase),
        (Phase::Up, AckPhase::ProbeStarting)
    );
    assert!(b.bw_probe_samples);
    assert_eq!((b.pacing_gain, b.cwnd_gain), (320, 576));
    assert_eq!((b.bw_probe_up_cnt, b.bw_probe_up_rounds), (40, 1));
    assert_eq!(b.cycle_mstamp, t);

    // UP -> DOWN on a bw plateau: full_bw = this round's sample; three more rounds
    // without 25 % growth set full_bw_now (bbr_check_full_bw_reached).
    for k in 1..=3u64 {
        assert_eq!(f.bbr().cycle_idx, Phase::Up, "round {k}");
        f.ack(t + k * 40_000, 1, true, sample(19));
    }
    let b = f.bbr();
    assert_eq!(
        (b.cycle_idx, b.ack_phase),
        (Phase::Down, AckPhase::ProbeStopping)
    );
    assert_eq!((b.pacing_gain, b.cwnd_gain), (232, 512));
    assert!(!b.prev_probe_too_high);
    assert_eq!(b.bw_probe_up_cnt, UNSET);
}

/// bbr_is_reno_coexistence_probe_time: CRUISE also ends after min(63, target inflight)
/// rounds.
#[test]
fn cruise_ends_after_bdp_rounds_for_reno_coexistence() {
    // target inflight = min(bbr_inflight(bw, 1) = 20, cwnd 40) = 20 rounds.
    let mut f = Flow::in_probe_bw(Phase::Cruise);
    for k in 1..=19u64 {
        f.ack(T0 + k * 40_000, 1, true, sample(19));
        assert_eq!(f.bbr().cycle_idx, Phase::Cruise, "round {k}");
    }
    f.ack(T0 + 20 * 40_000, 1, true, sample(19));
    assert_eq!(f.bbr().cycle_idx, Phase::Refill);
}

/// STARTUP exit on loss (bbr_check_loss_too_high_in_startup): at the end of a loss
/// round in Recovery with >= 6 loss events and lost / tx_in_flight above loss_thresh.
#[test]
fn startup_exits_on_six_loss_events_and_a_high_loss_rate() {
    let run = |events: u32, lost: i64| {
        let mut f = Flow::new();
        let b = &mut f.cc.bbr;
        b.bw_hi = [BW_20, 0];
        b.min_rtt_us = MIN_RTT_US;
        b.probe_rtt_min_us = MIN_RTT_US;
        b.next_rtt_delivered = u64::MAX; // no packet-timed round ends
        b.loss_round_delivered = 1000;
        f.tp.ca_state = CaState::Recovery;
        f.tp.snd_cwnd = 40;
        f.tp.srtt_us = MIN_RTT_US;
        f.tp.delivered = 1000;
        f.tp.packets_out = 40; // DRAIN does not end on the same ACK (40 > 20)
                               // Samples at 30 packets / 80 ms (bw 6292 < 8388, so max_bw stays 8388).
        let s = RateSample {
            interval_us: 80_000,
            ..sample(30)
        };
        for k in 0..events {
            f.ack(
                T0 + u64::from(k) * 1000,
                1,
                false,
                RateSample { losses: 1, ..s },
            );
        }
        // The loss round ends (prior_delivered 1000 >= loss_round_delivered 1000).
        f.tp.delivered = 1000;
        let rs = RateSample {
            prior_delivered: 1000,
            tx_in_flight: 40,
            lost,
            acked_sacked: 1,
            ..s
        };
        f.tp.now_us = T0 + 50_000;
        f.tp.delivered += 1;
        f.cc.cong_control(&mut f.tp, &rs);
        f
    };
    // 6 events, 3 lost of 40 > 40 * 5 >> 8 = 0: full_bw_reached, inflight_hi =
    // max(bbr_inflight(max_bw, 1) = 20, inflight_latest = 30) = 30; DRAIN on the same
    // ACK, ssthresh = 20.
    let f = run(6, 3);
    let b = f.bbr();
    assert!(b.full_bw_reached);
    assert_eq!(b.inflight_hi, 30);
    assert_eq!(b.mode, Mode::Drain);
    assert_eq!(f.tp.snd_ssthresh, 20);
    assert_eq!((b.pacing_gain, b.cwnd_gain), (88, 512));
    // 5 events: stays in STARTUP (gains 710 / 512) and the count restarts.
    let f = run(5, 3);
    assert_eq!(
        (
            f.bbr().mode,
            f.bbr().full_bw_reached,
            f.bbr().loss_events_in_round
        ),
        (Mode::Startup, false, 0)
    );
    assert_eq!((f.bbr().pacing_gain, f.bbr().cwnd_gain), (710, 512));
    // 6 events but no loss in the sample: stays.
    let f = run(6, 0);
    assert_eq!(f.bbr().mode, Mode::Startup);
}

/// PROBE_RTT after 5 s without a lower RTT: cwnd = max(4, 0.5 x BDP) = 10 (v1: 4).
#[test]
fn probe_rtt_comes_after_five_seconds_and_holds_half_a_bdp() {
    let mut f = Flow::in_probe_bw(Phase::Cruise);
    f.cc.bbr.probe_wait_us = 60_000_000; // no bw probe in the way
                                         // At 5.000 s (jiffies 5000, not after 0 + 5000) nothing happens...
    f.ack(
        5_000_999,
        1,
        false,
        RateSample {
            rtt_us: 45_000,
            ..sample(19)
        },
    );
    assert_eq!(f.bbr().mode, Mode::ProbeBw);
    // ...at 5.001 s the 5 s filter has expired: PROBE_RTT, cwnd saved (40).
    f.ack(
        5_001_000,
        1,
        false,
        RateSample {
            rtt_us: 45_000,
            ..sample(19)
        },
    );
    let b = f.bbr();
    assert_eq!(b.mode, Mode::ProbeRtt);
    assert_eq!(b.min_rtt_us, MIN_RTT_US, "the 10 s filter keeps 40 ms");
    assert_eq!(b.prior_cwnd, 40);
    assert_eq!(f.tp.snd_cwnd, 10);
    assert_eq!((b.pacing_gain, b.cwnd_gain), (256, 256));
    assert_ne!(f.tp.app_limited, 0, "PROBE_RTT marks samples app-limited");

    // Inflight at 10: the 200 ms starts (done at jiffies 5002 + 200); a round ends; at
    // 5.203 s it is over: cwnd restored to 40, PROBE_BW in CRUISE, bounds lifted.
    f.tp.packets_out = 10;
    f.ack(5_002_000, 1, false, sample(19));
    assert_eq!(f.bbr().probe_rtt_done_stamp, 5202);
    f.ack(5_100_000, 1, true, sample(19));
    assert_eq!(f.bbr().mode, Mode::ProbeRtt);
    f.ack(5_203_000, 1, false, sample(19));
    let b = f.bbr();
    assert_eq!((b.mode, b.cycle_idx), (Mode::ProbeBw, Phase::Cruise));
    assert_eq!(b.probe_rtt_min_stamp, 5203);
    // cwnd = max(10, prior_cwnd 40) on exit, then bbr_set_cwnd in CRUISE: 40 + 1 acked,
    // snapped to the target 40; no bound (inflight_lo lifted, inflight_hi unset).
    assert_eq!(f.tp.snd_cwnd, 40);
}

/// bbr_adapt_lower_bounds at the end of a loss round outside probing:
/// bw_lo = max(bw_latest, max_bw * 0.7), inflight_lo = max(inflight_latest, cwnd * 0.7).
#[test]
fn a_lossy_round_in_cruise_cuts_bw_lo_and_inflight_lo_by_beta() {
    // One ACK with a loss that ends the loss round (prior_delivered 1000 >=
    // loss_round_delivered 1000); sample 10 packets / 40 ms:
    // bw = ceil(10 * 2^24 / 40000) = 4195, inflight_latest 10.
    // bw_lo = max(4195, 8388 * 180 >> 8 = 5897) = 5897;
    // inflight_lo = max(10, 40 * 180 >> 8 = 28) = 28.
    let mut f = Flow::in_probe_bw(Phase::Cruise);
    f.tp.now_us = T0 + 1000;
    f.tp.delivered += 1;
    let rs = RateSample {
        prior_delivered: 1000,
        acked_sacked: 1,
        losses: 1,
        lost: 1,
        tx_in_flight: 40,
        ..sample(10)
    };
    f.cc.cong_control(&mut f.tp, &rs);
    let b = f.bbr();
    assert_eq!((b.bw_lo, b.inflight_lo), (5897, 28));
    // cwnd in CRUISE is capped by inflight_lo.
    assert_eq!(f.tp.snd_cwnd, 28);
    // Pacing now at bw_lo: 5897 * 1448 * 990000 >> 24 = 503 865 bytes/s.
    assert_eq!(f.tp.pacing_rate, 503_865);

    // Undo restores the saved (unset) bounds: recovery began before the cut.
    let mut g = Flow::in_probe_bw(Phase::Cruise);
    g.cc.ssthresh(&g.tp);
    g.tp.now_us = T0 + 1000;
    g.tp.delivered += 1;
    g.cc.cong_control(&mut g.tp, &rs);
    assert_eq!(g.bbr().bw_lo, 5897);
    let cwnd = g.cc.undo_cwnd(&g.tp);
    assert_eq!(
        (g.bbr().bw_lo, g.bbr().inflight_lo, cwnd),
        (UNSET, UNSET, 40)
    );
}

/// ECN: ineligible flows ignore CE; an eligible one updates alpha once per round.
#[test]
fn ecn_alpha_moves_only_for_an_eligible_flow() {
    // ECN not negotiated: CE marks and ECE change nothing.
    let mut f = Flow::in_probe_bw(Phase::Cruise);
    f.tp.delivered_ce = 50;
    f.ack(
        T0 + 40_000,
        100,
        true,
        RateSample {
            delivered_ce: 50,
            is_ece: true,
            ..sample(19)
        },
    );
    assert_eq!(
        (
            f.bbr().ecn_eligible,
            f.bbr().ecn_alpha,
            f.bbr().ecn_in_round
        ),
        (false, 256, false)
    );

    // Negotiated but min_rtt 40 ms > bbr_ecn_max_rtt_us 5 ms: still ineligible.
    let mut f = Flow::in_probe_bw(Phase::Cruise);
    f.tp.ecn_ok = true;
    f.ack(
        T0 + 40_000,
        100,
        true,
        RateSample {
            delivered_ce: 50,
            is_ece: true,
            ..sample(19)
        },
    );
    assert!(!f.bbr().ecn_eligible);

    // min_rtt 2 ms: eligible. Since the last update (alpha_last_delivered = 1000) 100
    // delivered, 50 CE: ce_ratio = 50 << 8 / 100 = 128; alpha = (240 * 256 >> 8) +
    // (16 * 128 >> 8) = 240 + 8 = 248.
    let mut f = Flow::in_probe_bw(Phase::Cruise);
    f.tp.ecn_ok = true;
    f.cc.bbr.min_rtt_us = 2000;
    f.cc.bbr.probe_rtt_min_us = 2000;
    f.cc.bbr.alpha_last_delivered = 1000;
    f.tp.delivered_ce = 50;
    f.ack(
        T0 + 40_000,
        100,
        true,
        RateSample {
            delivered_ce: 50,
            is_ece: true,
            rtt_us: 2000,
            ..sample(19)
        },
    );
    assert!(f.bbr().ecn_eligible);
    assert_eq!(f.bbr().ecn_alpha, 248);
    assert!(f.bbr().ecn_in_cycle);
}

/// An RTO outside probing starts inflight_lo at the pre-RTO cwnd; leaving Loss restores
/// the saved cwnd (bbr_set_state, bbr_exit_loss_recovery).
#[test]
fn rto_sets_inflight_lo_from_the_prior_cwnd_and_exit_restores_cwnd() {
    let mut f = Flow::in_probe_bw(Phase::Cruise);
    f.cc.ssthresh(&f.tp); // bbr_save_cwnd: prior_cwnd 40
    f.tp.snd_cwnd = 1;
    f.cc.set_state(&mut f.tp, CaState::Loss);
    f.tp.ca_state = CaState::Loss;
    assert_eq!(f.bbr().inflight_lo, 40);
    f.cc.set_state(&mut f.tp, CaState::Open);
    assert_eq!(f.tp.snd_cwnd, 40);
}

/// A TLP-repaired loss while probing is one lost packet on top of inflight_latest.
#[test]
fn tlp_recovery_counts_as_a_loss_while_probing() {
    // inflight_latest 10: tx_in_flight 11, lost 1 > 11 * 5 >> 8 = 0: too high;
    // inflight_hi = max(11, 22 * 180 >> 8 = 15) = 15.
    let mut f = Flow::in_probe_bw(Phase::Up);
    f.cc.bbr.bw_probe_samples = true;
    f.cc.bbr.inflight_latest = 10;
    f.cc.cwnd_event(&mut f.tp, CaEvent::TlpRecovery);
    assert_eq!((f.bbr().inflight_hi, f.bbr().cycle_idx), (15, Phase::Down));
    // Not probing: the loss only marks the round.
    let mut f = Flow::in_probe_bw(Phase::Cruise);
    f.cc.cwnd_event(&mut f.tp, CaEvent::TlpRecovery);
    assert_eq!((f.bbr().inflight_hi, f.bbr().loss_in_round), (UNSET, true));
}

#[test]
fn info_names_and_values() {
    let f = Flow::in_probe_bw(Phase::Cruise);
    let info = f.cc.info();
    let get = |n: &str| {
        info.iter()
            .find(|(k, _)| *k == n)
            .unwrap_or_else(|| panic!("{n}"))
            .1
    };
    assert_eq!(get("mode"), crate::ops::InfoValue::Label("PROBE_BW"));
    assert_eq!(get("phase"), crate::ops::InfoValue::Label("CRUISE"));
    // 8388 * 1448 * 1e6 >> 24 = 723 947 bytes/s = 5 791 576 bit/s.
    assert_eq!(get("bw_bps"), crate::ops::InfoValue::Num(5_791_576.0));
    assert!(matches!(get("inflight_hi_pkts"), crate::ops::InfoValue::Num(x) if x.is_nan()));
}

/// A variant that only caps cwnd: the `cap_cwnd`, `info` and `name` hooks are used.
struct CapAt(u32);

impl Bbr3Variant for CapAt {
    fn name(&self) -> &'static str {
        "bbr3-cap-test"
    }
    fn cap_cwnd(&mut self, _bbr: &Bbr3, _tp: &CcView, cwnd: u32) -> u32 {
        cwnd.min(self.0)
    }
    fn info(&self, _bbr: &Bbr3, out: &mut Vec<crate::ops::InfoField>) {
        out.push(("cap_pkts", crate::ops::InfoValue::Num(f64::from(self.0))));
    }
}

#[test]
fn a_variant_hook_applies_after_the_model_bound() {
    // CRUISE, cwnd 40 + 1 acked -> target 40 (see the probe_rtt test) for plain bbr3;
    // the variant, given the same state and socket, caps it at 25.
    let mut plain = Flow::in_probe_bw(Phase::Cruise);
    let mut g = Flow::in_probe_bw(Phase::Cruise);
    let mut cc = Bbr3Ops::with_variant(cfg(), CapAt(25));
    cc.bbr = g.cc.bbr.clone();
    plain.ack(T0 + 1000, 1, false, sample(19));
    assert_eq!(plain.tp.snd_cwnd, 40, "plain bbr3");
    g.tp.now_us = T0 + 1000;
    g.tp.delivered += 1;
    cc.cong_control(
        &mut g.tp,
        &RateSample {
            acked_sacked: 1,
            ..sample(19)
        },
    );
    assert_eq!(g.tp.snd_cwnd, 25);
    assert_eq!(cc.name(), "bbr3-cap-test");
    assert!(cc.info().iter().any(|(k, _)| *k == "cap_pkts"));
}

// ---- BBRv2 (v2alpha tcp_bbr2.c, `Bbr3Config::v2()`): where its code differs ----

fn cfg_v2() -> Bbr3Config {
    Bbr3Config {
        extra_acked_gain: 0,
        seed: 7,
        ..Bbr3Config::v2()
    }
}

impl Flow {
    fn in_probe_bw_v2(phase: Phase) -> Self {
        let mut f = Flow::in_probe_bw(phase);
        f.cc.bbr.cfg = cfg_v2();
        model::bbr_update_gains(&mut f.cc.bbr);
        f
    }
}

#[test]
fn v2_gains_and_constants() {
    // tcp_bbr2.c: high_gain = startup_cwnd_gain = 256 * 2885 / 1000 + 1 = 739;
    // pacing gains 5/4, 3/4, 1, 1 (DOWN 192); PROBE_UP cwnd_gain stays 2 (512).
    assert_eq!(
        (v2::BBR_HIGH_GAIN, v2::BBR_PACING_GAIN),
        (739, [320, 192, 256, 256])
    );
    assert_eq!(
        Bbr3Config::v2_from_params(&v2::SPEC.default_params()),
        Bbr3Config::v2()
    );
    let f = Flow::in_probe_bw_v2(Phase::Down);
    assert_eq!((f.bbr().pacing_gain, f.bbr().cwnd_gain), (192, 512));
    let f = Flow::in_probe_bw_v2(Phase::Up);
    assert_eq!((f.bbr().pacing_gain, f.bbr().cwnd_gain), (320, 512));
    let mut tp = CcView::new(MSS, 0);
    let mut cc = Bbr3Ops::with_variant(cfg_v2(), KernelBbr2);
    cc.init(&mut tp);
    assert_eq!(cc.name(), "bbr2");
    cc.cong_control(
        &mut tp,
        &RateSample {
            acked_sacked: 1,
            ..sample(19)
        },
    );
    assert_eq!((cc.bbr().pacing_gain, cc.bbr().cwnd_gain), (739, 739));
}

/// v2's PROBE_UP ends once it has lasted a min_rtt and inflight reached
/// bw_probe_pif_gain (1.25) x BDP: bbr_inflight(8388, 320) = ceil(24.998) = 25, + 2 in UP
/// = 27; inflight = prior_in_flight + tso_segs_goal 2 (pacing gain 1.25 > 1).
#[test]
fn v2_probe_up_ends_after_a_min_rtt_at_one_and_a_quarter_bdp() {
    // Not yet a min_rtt into the phase (cycle_mstamp = 1 s, min_rtt 40 ms).
    let mut f = Flow::in_probe_bw_v2(Phase::Up);
    f.ack(
        T0 + 40_000,
        1,
        false,
        RateSample {
            prior_in_flight: 25,
            ..sample(19)
        },
    );
    assert_eq!(f.bbr().cycle_idx, Phase::Up);
    // A min_rtt later, 24 + 2 = 26 < 27: still probing.
    f.ack(
        T0 + 40_001,
        1,
        false,
        RateSample {
            prior_in_flight: 24,
            ..sample(19)
        },
    );
    assert_eq!(f.bbr().cycle_idx, Phase::Up);
    // 25 + 2 = 27 >= 27: PROBE_DOWN at 0.75.
    f.ack(
        T0 + 40_002,
        1,
        false,
        RateSample {
            prior_in_flight: 25,
            ..sample(19)
        },
    );
    assert_eq!(f.bbr().cycle_idx, Phase::Down);
    assert_eq!(f.bbr().pacing_gain, 192);
}

/// v2's full-pipe test (v1's): max_bw must grow 25 % per round; 3 rounds without.
#[test]
fn v2_startup_ends_after_three_rounds_without_max_bw_growth() {
    let mut tp = CcView::new(MSS, 0);
    let mut cc = Bbr3Ops::new(cfg_v2()); // v2's code; the name does not matter here
    cc.init(&mut tp);
    cc.bbr.bw_hi = [BW_20, 0];
    cc.bbr.min_rtt_us = MIN_RTT_US;
    tp.packets_out = 60; // so DRAIN does not end at once
    let mut f = Flow { cc, tp };
    // Round 1: full_bw = max_bw 8388 (>= 0 * 1.25). Rounds 2-4: 19-packet samples keep
    // max_bw at 8388 < 1.25 x 8388: full_bw_cnt 1, 2, 3 -> full, DRAIN.
    for k in 1..=3u64 {
        f.ack(k * 40_000, 1, true, sample(19));
        assert_eq!(f.bbr().mode, Mode::Startup, "round {k}");
    }
    f.ack(4 * 40_000, 1, true, sample(19));
    assert!(f.bbr().full_bw_reached);
    assert_eq!(f.bbr().mode, Mode::Drain);
}

/// v2's STARTUP loss exit needs 8 loss events (v3: 6) and sets inflight_hi to the BDP
/// only (v3: max with inflight_latest = 30).
#[test]
fn v2_startup_loss_exit_needs_eight_events_and_sets_inflight_hi_to_the_bdp() {
    let run = |events: u32| {
        let mut tp = CcView::new(MSS, 0);
        let mut cc = Bbr3Ops::new(cfg_v2()); // v2's code; the name does not matter here
        cc.init(&mut tp);
        cc.bbr.bw_hi = [BW_20, 0];
        cc.bbr.min_rtt_us = MIN_RTT_US;
        cc.bbr.probe_rtt_min_us = MIN_RTT_US;
        cc.bbr.next_rtt_delivered = u64::MAX;
        cc.bbr.loss_round_delivered = 1000;
        tp.ca_state = CaState::Recovery;
        tp.snd_cwnd = 40;
        tp.srtt_us = MIN_RTT_US;
        tp.delivered = 1000;
        tp.packets_out = 40;
        let mut f = Flow { cc, tp };
        let s = RateSample {
            interval_us: 80_000,
            ..sample(30)
        };
        for k in 0..events {
            f.ack(
                T0 + u64::from(k) * 1000,
                1,
                false,
                RateSample { losses: 1, ..s },
            );
        }
        let rs = RateSample {
            prior_delivered: 1000,
            tx_in_flight: 40,
            lost: 3,
            acked_sacked: 1,
            ..s
        };
        f.tp.now_us = T0 + 50_000;
        f.tp.delivered += 1;
        f.cc.cong_control(&mut f.tp, &rs);
        f
    };
    let f = run(8);
    assert_eq!((f.bbr().mode, f.bbr().inflight_hi), (Mode::Drain, 20));
    let f = run(7);
    assert_eq!(f.bbr().mode, Mode::Startup);
}

/// v2 keeps ecn_alpha for every flow; only eligibility (bbr_ecn_enable, off by default)
/// lets it act. 100 delivered, 50 CE since the last update: alpha 256 -> 248.
#[test]
fn v2_updates_ecn_alpha_without_using_it_unless_enabled() {
    let mut f = Flow::in_probe_bw_v2(Phase::Cruise);
    f.cc.bbr.alpha_last_delivered = 1000;
    f.tp.delivered_ce = 50;
    f.ack(
        T0 + 40_000,
        100,
        true,
        RateSample {
            delivered_ce: 50,
            is_ece: true,
            ..sample(19)
        },
    );
    assert_eq!((f.bbr().ecn_alpha, f.bbr().ecn_eligible), (248, false));
}
