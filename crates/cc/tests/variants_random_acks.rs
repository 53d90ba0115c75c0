//! Every BBR variant, built by name from the registry, driven with random ACK streams
//! (deliveries, RTT samples with and without queueing, losses, CA-state changes, RTOs,
//! idle restarts): no panic, cwnd never below 1, pacing set once an RTT is known, and
//! `info()` names unique. The sender-level property test lives with the engine.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use tcplab_cc::ops::{CaEvent, CaState, CcView, RateSample};
use tcplab_cc::registry;

const VARIANTS: [&str; 7] = [
    "bbr",
    "bbr-acd",
    "bbr-cws",
    "bbr-acw",
    "modest-bbr",
    "bbq",
    "da-bbr",
];

#[derive(Clone, Debug)]
struct Ack {
    dt_us: u64,
    delivered: u32,
    rtt_us: i64,
    losses: u32,
    state: u8,
    app_limited: bool,
    idle: bool,
}

fn ack() -> impl Strategy<Value = Ack> {
    (
        1u64..20_000,
        0u32..8,
        prop_oneof![Just(-1i64), 5_000i64..200_000],
        prop_oneof![4 => Just(0u32), 1 => 1u32..5],
        0u8..10,
        any::<bool>(),
        prop::bool::weighted(0.02),
    )
        .prop_map(
            |(dt_us, delivered, rtt_us, losses, state, app_limited, idle)| Ack {
                dt_us,
                delivered,
                rtt_us,
                losses,
                state,
                app_limited,
                idle,
            },
        )
}

fn drive(name: &str, acks: &[Ack]) {
    let mut cc = registry::build(name, &BTreeMap::new()).expect("registered");
    let mut tp = CcView::new(1448, 1_000);
    cc.init(&mut tp);
    tp.packets_out = 10;
    let mut min_rtt = u32::MAX;
    for a in acks {
        tp.now_us += a.dt_us;
        if a.idle {
            tp.app_limited = tp.delivered + 1;
            cc.cwnd_event(&mut tp, CaEvent::TxStart);
        }
        let new_state = match a.state {
            0..=5 => CaState::Open,
            6 => CaState::Disorder,
            7 | 8 => CaState::Recovery,
            _ => CaState::Loss,
        };
        if new_state != tp.ca_state {
            if new_state >= CaState::Recovery && tp.ca_state < CaState::Recovery {
                tp.prior_cwnd = tp.snd_cwnd;
                tp.snd_ssthresh = cc.ssthresh(&tp);
            }
            if new_state == CaState::Loss {
                cc.cwnd_event(&mut tp, CaEvent::Loss);
            }
            cc.set_state(&mut tp, new_state);
            tp.ca_state = new_state;
        }
        let prior_in_flight = tp.packets_out;
        let prior_delivered = tp.delivered.saturating_sub(u64::from(tp.snd_cwnd));
        tp.delivered += u64::from(a.delivered);
        tp.delivered_mstamp_us = tp.now_us;
        tp.lost += u64::from(a.losses);
        if a.rtt_us > 0 {
            min_rtt = min_rtt.min(a.rtt_us as u32);
            tp.min_rtt_us = min_rtt;
            tp.srtt_us = a.rtt_us as u32;
        }
        let rs = RateSample {
            prior_delivered,
            delivered: i64::from(a.delivered),
            interval_us: if a.delivered == 0 {
                -1
            } else {
                a.rtt_us.max(1_000)
            },
            rtt_us: a.rtt_us,
            losses: a.losses,
            acked_sacked: a.delivered,
            prior_in_flight,
            is_app_limited: a.app_limited,
            ..RateSample::default()
        };
        cc.cong_control(&mut tp, &rs);
        assert!(tp.snd_cwnd >= 1, "{name}: cwnd {}", tp.snd_cwnd);
        tp.packets_out = tp.snd_cwnd;
        if min_rtt != u32::MAX {
            assert!(
                tp.pacing_rate > 0,
                "{name}: no pacing rate with an RTT known"
            );
        }
    }
    let names: Vec<&str> = cc.info().iter().map(|(k, _)| *k).collect();
    let unique: BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!(
        names.len(),
        unique.len(),
        "{name}: duplicate info names {names:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn bbr_variants_survive_random_ack_streams(acks in prop::collection::vec(ack(), 1..400)) {
        for name in VARIANTS {
            drive(name, &acks);
        }
    }
}

#[test]
fn every_variant_is_registered_with_its_paper_defaults() {
    for name in VARIANTS {
        let spec = registry::find(name).unwrap_or_else(|| panic!("{name} not registered"));
        let cc = (spec.build)(&spec.default_params());
        assert_eq!(cc.name(), name);
    }
    let acd = registry::find("bbr-acd").unwrap().default_params();
    assert_eq!(acd.get("alpha_us"), 1000.0); // Figure 6
    let cws = registry::find("bbr-cws").unwrap().default_params();
    assert_eq!(
        (cws.get("beta"), cws.get("delta"), cws.get("min_factor")),
        (0.9, 0.01, 0.2)
    ); // Sec. 4.2
}
