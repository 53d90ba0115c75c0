//! Property test: BBR driven by random sequences of ACKs, losses, recovery episodes,
//! RTOs, undo and idle restarts, as a sender could produce them. Invariants: no panic
//! (and, in debug builds, only kernel mode transitions: `bbr_set_mode`), cwnd within
//! [1, snd_cwnd_clamp], at most 4 packets in PROBE_RTT, gains as `bbr_update_gains`
//! lays them out for the mode, pacing rate never above the cap, and before the pipe is
//! full the pacing rate never falls once an RTT has been seen.

use super::tests::{deliver_ack, Ack};
use super::*;
use crate::ops::{CaEvent, CaState, CcView, CongestionOps};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Ev {
    /// An ACK `gap_us` after the previous event (its `at_us` is set when it is fed).
    Ack {
        gap_us: u32,
        ack: Ack,
    },
    EnterRecovery,
    ExitRecovery,
    Rto,
    Undo,
    IdleRestart,
}

fn ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        8 => (1u32..150_000, 0u32..30, -1i64..60, -1i64..100_000, -1i64..300_000, 0u32..5, 0u32..200, any::<bool>(), any::<bool>())
            .prop_map(|(gap_us, acked, delivered, interval_us, rtt_us, losses, in_flight, ends_round, app_limited)| Ev::Ack {
                gap_us,
                ack: Ack {
                    at_us: 0, acked, delivered, interval_us, rtt_us, losses, in_flight, prior_in_flight: None,
                    ends_round, app_limited
                },
            }),
        1 => Just(Ev::EnterRecovery),
        1 => Just(Ev::ExitRecovery),
        1 => Just(Ev::Rto),
        1 => Just(Ev::Undo),
        1 => Just(Ev::IdleRestart),
    ]
}

fn gains_for_mode(b: &Bbr) -> (u32, u32) {
    let cfg = &b.cfg;
    match b.mode {
        BbrMode::Startup => (cfg.high_gain, cfg.high_gain),
        BbrMode::Drain => (cfg.drain_gain, cfg.high_gain),
        BbrMode::ProbeBw => {
            let p = if b.lt_use_bw {
                BBR_UNIT
            } else {
                probe_bw::BBR_PACING_GAIN[b.cycle_idx as usize]
            };
            (p, cfg.cwnd_gain)
        }
        BbrMode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn bbr_invariants_hold_under_random_events(events in prop::collection::vec(ev(), 1..400), clamp in 4u32..5000) {
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd_clamp = clamp;
        // tcp_init_cwnd: the initial cwnd already respects the clamp (without this the
        // invariant below fails when the first event is not an ACK and clamp < 10).
        tp.snd_cwnd = tp.snd_cwnd.min(clamp);
        tp.max_pacing_rate = 50_000_000;
        let mut cc = BbrFamily::new(BbrConfig::default(), KernelBbr);
        cc.init(&mut tp);
        let mut now = 0u64;
        for e in events {
            let rate_before = tp.pacing_rate;
            // The first RTT sample may lower the nominal-1-ms initial rate; after it,
            // STARTUP's rate only rises.
            let seen_rtt_before = cc.bbr().has_seen_rtt;
            let mut acked_now = false;
            match e {
                Ev::Ack { gap_us, ack } => {
                    now += u64::from(gap_us);
                    deliver_ack(&mut cc, &mut tp, &Ack { at_us: now, ..ack });
                    acked_now = true;
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
                    cc.set_state(&mut tp, CaState::Loss);
                    tp.ca_state = CaState::Loss;
                    tp.snd_cwnd = tcp_packets_in_flight_plus_one(&tp);
                }
                Ev::Undo => {
                    tp.snd_cwnd = cc.undo_cwnd(&tp).max(1);
                }
                Ev::IdleRestart => {
                    tp.app_limited = tp.delivered.max(1);
                    cc.cwnd_event(&mut tp, CaEvent::TxStart);
                }
            }
            let b = cc.bbr();
            prop_assert!(tp.snd_cwnd >= 1 && tp.snd_cwnd <= clamp.max(tcp_packets_in_flight_plus_one(&tp)), "cwnd {}", tp.snd_cwnd);
            if acked_now && b.mode == BbrMode::ProbeRtt {
                prop_assert!(tp.snd_cwnd <= BBR_CWND_MIN_TARGET);
            }
            if acked_now {
                prop_assert_eq!((b.pacing_gain, b.cwnd_gain), gains_for_mode(b));
            }
            prop_assert!(tp.pacing_rate <= tp.max_pacing_rate);
            prop_assert!(b.cycle_idx < probe_bw::CYCLE_LEN);
            if acked_now && !b.full_bw_reached && seen_rtt_before {
                prop_assert!(tp.pacing_rate >= rate_before, "{} < {}", tp.pacing_rate, rate_before);
            }
        }
    }
}

/// What the sender sets cwnd to on RTO (`tcp_enter_loss`): inflight + 1.
fn tcp_packets_in_flight_plus_one(tp: &CcView) -> u32 {
    crate::helpers::tcp_packets_in_flight(tp) + 1
}
