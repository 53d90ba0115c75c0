//! Property test: BBRv3 and BBRv2 (`Bbr3Config::v2()`) driven by random ACKs (with losses, CE marks, app-limited
//! samples), packets marked lost, recovery, RTOs, undo, TLP recoveries and idle
//! restarts. Invariants after every event (all from v3 tcp_bbr.c): no panic (overflow
//! checks on), cwnd >= 1, ecn_alpha <= 1, the bit-field counters within their widths,
//! pacing never above the cap; and, with the fast path off (it skips the control update
//! on some app-limited ACKs, so an RTO's cwnd can outlive an ACK), after every ACK the
//! gains `bbr_update_gains` assigns to the mode and phase, cwnd <= max(4, inflight_lo),
//! in PROBE_BW outside CRUISE <= max(4, inflight_hi), in PROBE_RTT <= max(4, 0.5 BDP).

use super::bw::bbr_bw;
use super::cwnd::bbr_bdp;
use super::*;
use crate::ops::{CaEvent, CaState, CcView, CongestionOps, LostSkb, RateSample};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Ev {
    Ack {
        gap_us: u32,
        acked: u32,
        delivered: i64,
        interval_us: i64,
        rtt_us: i64,
        losses: u32,
        lost: i64,
        ce: i64,
        in_flight: u32,
        round_end: bool,
        app_limited: bool,
    },
    Lost {
        tx_in_flight: u32,
        back: u64,
    },
    EnterRecovery,
    ExitRecovery,
    Rto,
    Undo,
    Tlp,
    IdleRestart,
}

fn ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        10 => (1u32..100_000, 0u32..20, -1i64..60, -1i64..100_000, -1i64..200_000, 0u32..4, 0i64..20, 0i64..20, 0u32..300, any::<bool>(), any::<bool>())
            .prop_map(|(gap_us, acked, delivered, interval_us, rtt_us, losses, lost, ce, in_flight, round_end, app_limited)|
                Ev::Ack { gap_us, acked, delivered, interval_us, rtt_us, losses, lost, ce, in_flight, round_end, app_limited }),
        2 => (0u32..400, 0u64..30).prop_map(|(tx_in_flight, back)| Ev::Lost { tx_in_flight, back }),
        1 => Just(Ev::EnterRecovery),
        1 => Just(Ev::ExitRecovery),
        1 => Just(Ev::Rto),
        1 => Just(Ev::Undo),
        1 => Just(Ev::Tlp),
        1 => Just(Ev::IdleRestart),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn bbr3_invariants_hold_under_random_events(events in prop::collection::vec(ev(), 1..400), ecn in any::<bool>(), fast_path in any::<bool>(), v2 in any::<bool>(), seed in 0u64..1000) {
        let mut tp = CcView::new(1448, 0);
        tp.max_pacing_rate = 50_000_000;
        tp.ecn_ok = ecn;
        let base = if v2 { Bbr3Config { ecn_enable: ecn, ..Bbr3Config::v2() } } else { Bbr3Config::default() };
        let mut cc = Bbr3Ops::new(Bbr3Config { seed, fast_path, ..base });
        cc.init(&mut tp);
        let mut now = 0u64;
        for e in events {
            let mut acked_now = false;
            match e {
                Ev::Ack { gap_us, acked, delivered, interval_us, rtt_us, losses, lost, ce, in_flight, round_end, app_limited } => {
                    now += u64::from(gap_us);
                    tp.now_us = now;
                    let prior_delivered = if round_end { tp.delivered } else { 0 };
                    tp.delivered += u64::from(acked);
                    tp.delivered_ce += ce.min(i64::from(acked)) as u64;
                    tp.delivered_mstamp_us = now;
                    tp.lost += u64::from(losses);
                    tp.packets_out = in_flight;
                    tp.is_cwnd_limited = in_flight >= tp.snd_cwnd;
                    if rtt_us > 0 {
                        tp.srtt_us = rtt_us as u32;
                        tp.min_rtt_us = tp.min_rtt_us.min(rtt_us as u32);
                    }
                    let rs = RateSample {
                        prior_delivered, delivered, interval_us, rtt_us, losses, lost,
                        delivered_ce: ce.min(delivered.max(0)), acked_sacked: acked,
                        tx_in_flight: in_flight + acked, prior_in_flight: in_flight + acked,
                        is_app_limited: app_limited, is_ece: ce > 0, ..RateSample::default()
                    };
                    cc.cong_control(&mut tp, &rs);
                    acked_now = true;
                }
                Ev::Lost { tx_in_flight, back } => {
                    tp.lost += 1;
                    let skb = LostSkb { tx_in_flight, tx_lost: tp.lost.saturating_sub(back), tx_is_app_limited: false, tx_valid: true, pcount: 1 };
                    cc.skb_marked_lost(&tp, &skb);
                }
                Ev::EnterRecovery => {
                    if tp.ca_state < CaState::Recovery {
                        tp.snd_ssthresh = cc.ssthresh(&tp);
                        cc.set_state(&mut tp, CaState::Recovery);
                        tp.ca_state = CaState::Recovery;
                    }
                }
                Ev::ExitRecovery => {
                    cc.set_state(&mut tp, CaState::Open);
                    tp.ca_state = CaState::Open;
                }
                Ev::Rto => {
                    tp.snd_ssthresh = cc.ssthresh(&tp);
                    tp.snd_cwnd = crate::helpers::tcp_packets_in_flight(&tp) + 1;
                    cc.set_state(&mut tp, CaState::Loss);
                    tp.ca_state = CaState::Loss;
                }
                Ev::Undo => {
                    tp.snd_cwnd = cc.undo_cwnd(&tp).max(tp.snd_cwnd).max(1);
                }
                Ev::Tlp => cc.cwnd_event(&mut tp, CaEvent::TlpRecovery),
                Ev::IdleRestart => {
                    tp.app_limited = tp.delivered.max(1);
                    cc.cwnd_event(&mut tp, CaEvent::TxStart);
                }
            }
            let b = cc.bbr();
            prop_assert!(tp.snd_cwnd >= 1);
            prop_assert!(tp.pacing_rate <= tp.max_pacing_rate);
            prop_assert!(b.ecn_alpha <= BBR_UNIT);
            prop_assert!(b.rounds_since_probe <= 0xFF && b.bw_probe_up_rounds <= 31 && b.loss_events_in_round <= 0xF);
            prop_assert!(b.full_bw_cnt <= 3 && b.startup_ecn_rounds <= 3);
            if acked_now {
                let cfg = &b.cfg;
                let want = match b.mode {
                    Mode::Startup => (cfg.startup_pacing_gain, cfg.startup_cwnd_gain),
                    Mode::Drain => (cfg.drain_gain, cfg.startup_cwnd_gain),
                    Mode::ProbeBw => (cfg.pacing_gain[b.cycle_idx as usize],
                        cfg.cwnd_gain + if b.cycle_idx == Phase::Up { BBR_UNIT * cfg.bw_probe_cwnd_gain / 4 } else { 0 }),
                    Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
                };
                // The fast path (bbr_run_fast_path) skips the control update, leaving
                // the gains and cwnd of an earlier ACK: check those only without it.
                if b.cfg.fast_path {
                    continue;
                }
                prop_assert_eq!((b.pacing_gain, b.cwnd_gain), want);
                prop_assert!(tp.snd_cwnd <= b.inflight_lo.max(4), "cwnd {} inflight_lo {}", tp.snd_cwnd, b.inflight_lo);
                if b.mode == Mode::ProbeBw && b.cycle_idx != Phase::Cruise {
                    prop_assert!(tp.snd_cwnd <= b.inflight_hi.max(4), "cwnd {} inflight_hi {}", tp.snd_cwnd, b.inflight_hi);
                }
                if b.mode == Mode::ProbeRtt {
                    let cap = bbr_bdp(b, bbr_bw(b), b.cfg.probe_rtt_cwnd_gain).max(4);
                    prop_assert!(tp.snd_cwnd <= cap, "PROBE_RTT cwnd {} > {}", tp.snd_cwnd, cap);
                }
            }
        }
    }
}
