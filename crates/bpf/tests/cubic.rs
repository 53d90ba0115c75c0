//! bpf/examples/cubic.bpf.c: a hand-computed epoch start, its parameters, and the
//! native `cubic` (crates/cc/src/cubic) driven by the same hook sequence, compared at
//! every step including HyStart, losses, RTOs and idle restarts.

mod common;

use std::collections::BTreeMap;

use common::{compile, view};
use tcplab_bpf::{BpfCongestionOps, BpfObject};
use tcplab_cc::cubic::CubicConfig;
use tcplab_cc::ops::{AckSample, CaEvent, CaState, CcView, CongestionOps};
use tcplab_cc::ParamValue;

fn object() -> Option<BpfObject> {
    let obj = BpfObject::parse(&compile("bpf/examples/cubic.bpf.c")?).unwrap();
    assert_eq!(obj.name(), "bpf_cubic");
    Some(obj)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

#[test]
fn epoch_after_a_loss_at_100_segments() {
    let Some(obj) = object() else { return };
    let mut cc: BpfCongestionOps = obj.instantiate_ops(&BTreeMap::new()).unwrap();
    let mut tp = view(100, 0x7fff_ffff);
    cc.init(&mut tp);
    // ssthresh = 100 * 717 / 1024 = 70 (70.02 rounded down); W_max = 100.
    assert_eq!(cc.ssthresh(&tp), 70);
    tp.snd_cwnd = 70;
    tp.snd_ssthresh = 70;
    tp.now_us += 5_000;
    cc.cong_avoid(&mut tp, 1, 1);
    let ca = cc.ca_priv();
    // K = cubic_root(cube_factor * 30) = 4316 (1/1024 s), worked in cubic/root.rs;
    // delta = 410 * 4316^3 >> 40 = 29, target = 100 - 29 = 71, cnt = 70 / (71 - 70).
    assert_eq!(u32_at(ca, 20), 4316, "bic_K");
    assert_eq!(u32_at(ca, 16), 100, "bic_origin_point");
    assert_eq!(u32_at(ca, 4), 100, "last_max_cwnd");
    assert_eq!(u32_at(ca, 0), 70, "cnt");
    assert_eq!(
        u32_at(ca, 28),
        1005,
        "epoch_start: the jiffy of now, 1 s + 5 ms"
    );
    assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (70, 1));
    // A second loss below W_max: fast convergence, W_max = 70 * (1024 + 717) / 2048 = 59.
    cc.ssthresh(&tp);
    assert_eq!(u32_at(cc.ca_priv(), 4), 59);
}

#[test]
fn parameters_are_the_module_parameters() {
    let Some(obj) = object() else { return };
    let names: Vec<String> = obj.params().into_iter().map(|p| p.name).collect();
    assert_eq!(
        names,
        [
            "beta",
            "bic_scale",
            "fast_convergence",
            "gso_max_size",
            "hystart",
            "hystart_ack_delta_us",
            "hystart_detect",
            "hystart_low_window",
            "initial_ssthresh",
            "tcp_friendliness"
        ]
    );
    // beta = 512: ssthresh = cwnd / 2.
    let p: BTreeMap<String, ParamValue> = [("beta".to_string(), ParamValue::Num(512.0))].into();
    let mut cc = obj.instantiate(&p).unwrap();
    assert_eq!(cc.ssthresh(&view(100, 50)), 50);
    // hystart off with initial_ssthresh: init sets it.
    let p: BTreeMap<String, ParamValue> = [
        ("hystart".to_string(), ParamValue::Bool(false)),
        ("initial_ssthresh".to_string(), ParamValue::Num(33.0)),
    ]
    .into();
    let mut cc = obj.instantiate(&p).unwrap();
    let mut tp = view(10, 0x7fff_ffff);
    cc.init(&mut tp);
    assert_eq!(tp.snd_ssthresh, 33);
}

/// A toy flow: every step one ACK of 1..3 segments after an RTT that drifts, with
/// occasional losses (Recovery, cwnd to ssthresh), RTOs (Loss, cwnd 1), undo and idle
/// restarts. Same inputs to both; compares what the sender reads back.
fn run_side_by_side(
    bpf: &mut (dyn CongestionOps + 'static),
    native: &mut (dyn CongestionOps + 'static),
    seed: u64,
) {
    let mut a = CcView::new(1448, 1_000_000);
    a.is_cwnd_limited = true;
    let mut b = a.clone();
    bpf.init(&mut a);
    native.init(&mut b);
    let mut x = seed;
    let mut rtt: i64 = 40_000;
    for step in 0..30_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let r = x % 1000;
        for tp in [&mut a, &mut b] {
            tp.now_us += 200 + (x >> 40) % 3000;
            tp.snd_nxt = tp.snd_una + u64::from(tp.snd_cwnd);
        }
        // The queue fills during slow start: the RTT rises, which HyStart notices.
        rtt = (rtt + ((x >> 8) % 700) as i64 - 300).clamp(20_000, 120_000);
        if r < 3 {
            let (sa, sb) = (bpf.ssthresh(&a), native.ssthresh(&b));
            assert_eq!(sa, sb, "ssthresh at step {step}");
            for (cc, tp, s) in [(&mut *bpf, &mut a, sa), (&mut *native, &mut b, sb)] {
                tp.prior_cwnd = tp.snd_cwnd;
                cc.set_state(tp, CaState::Recovery);
                tp.ca_state = CaState::Recovery;
                tp.snd_ssthresh = s;
                tp.snd_cwnd = s;
                cc.set_state(tp, CaState::Open);
                tp.ca_state = CaState::Open;
            }
        } else if r == 3 {
            let (sa, sb) = (bpf.ssthresh(&a), native.ssthresh(&b));
            assert_eq!(sa, sb, "RTO ssthresh at step {step}");
            for (cc, tp, s) in [(&mut *bpf, &mut a, sa), (&mut *native, &mut b, sb)] {
                cc.cwnd_event(tp, CaEvent::Loss);
                cc.set_state(tp, CaState::Loss);
                tp.snd_ssthresh = s;
                tp.snd_cwnd = 1;
                cc.set_state(tp, CaState::Open);
            }
        } else if r == 4 {
            let (ua, ub) = (bpf.undo_cwnd(&a), native.undo_cwnd(&b));
            assert_eq!(ua, ub, "undo at step {step}");
        } else if r == 5 {
            // Idle: nothing sent for a while, then a transmission starts.
            for (cc, tp) in [(&mut *bpf, &mut a), (&mut *native, &mut b)] {
                tp.lsndtime_us = tp.now_us;
                tp.now_us += 300_000;
                cc.cwnd_event(tp, CaEvent::TxStart);
                tp.lsndtime_us = tp.now_us;
            }
        } else {
            let acked = (x % 3) as u32 + 1;
            let sample = AckSample {
                pkts_acked: acked,
                rtt_us: if r < 20 { -1 } else { rtt },
                in_flight: a.snd_cwnd,
                prior_in_flight: a.snd_cwnd,
            };
            for (cc, tp) in [(&mut *bpf, &mut a), (&mut *native, &mut b)] {
                tp.snd_una += u64::from(acked);
                tp.srtt_us = rtt as u32;
                cc.pkts_acked(tp, &sample);
                let una = tp.snd_una;
                cc.cong_avoid(tp, una, acked);
            }
        }
        assert_eq!(
            (a.snd_cwnd, a.snd_ssthresh, a.snd_cwnd_cnt),
            (b.snd_cwnd, b.snd_ssthresh, b.snd_cwnd_cnt),
            "step {step} (seed {seed:#x})"
        );
    }
    assert_eq!(bpf.fault(), None);
}

#[test]
fn matches_native_cubic_step_by_step() {
    let Some(obj) = object() else { return };
    for seed in [0x2545_f491_4f6c_dd1d, 0x9e37_79b9_7f4a_7c15, 7] {
        let mut bpf = obj.instantiate(&BTreeMap::new()).unwrap();
        let mut native = CubicConfig::default().build();
        run_side_by_side(bpf.as_mut(), &mut native, seed);
    }
}

#[test]
fn matches_native_cubic_with_other_parameters() {
    let Some(obj) = object() else { return };
    let p: BTreeMap<String, ParamValue> = [
        ("beta".to_string(), ParamValue::Num(800.0)),
        ("bic_scale".to_string(), ParamValue::Num(60.0)),
        ("fast_convergence".to_string(), ParamValue::Num(0.0)),
        ("hystart_detect".to_string(), ParamValue::Num(2.0)),
    ]
    .into();
    let mut bpf = obj.instantiate(&p).unwrap();
    let cfg = CubicConfig {
        beta: 800,
        bic_scale: 60,
        fast_convergence: false,
        hystart_detect: 2,
        ..CubicConfig::default()
    };
    let mut native = cfg.build();
    run_side_by_side(bpf.as_mut(), &mut native, 0x1234_5678_9abc_def1);
}

/// HyStart's ACK train, worked by hand: one segment acked every 100 us at a constant
/// 10 ms RTT, from cwnd 10. A round ends when snd_una passes the snd_nxt recorded at its
/// start (snd_nxt = snd_una + cwnd here). Rounds start at ACKs 1, 12, 34 and 78 (cwnd
/// 11, 21, 43, 87 then); detection runs from cwnd 16 (ACK 7 on). The train fires once
/// an ACK comes more than delay_min / 2 = 5000 us after its round's start: in the round
/// of ACK 78 (87 ACKs long) at ACK 129 (5100 us), when cwnd is 10 + 128 = 138, so
/// ssthresh becomes 138 there and not before. Rounds 1-3 last 1100, 2200, 4400 us.
#[test]
fn hystart_ack_train_ends_slow_start_at_the_hand_computed_ack() {
    let Some(obj) = object() else { return };
    let mut bpf = obj.instantiate(&BTreeMap::new()).unwrap();
    let mut native = CubicConfig::default().build();
    for cc in [bpf.as_mut(), &mut native as &mut dyn CongestionOps] {
        let mut tp = CcView::new(1448, 1_000_000);
        tp.is_cwnd_limited = true;
        cc.init(&mut tp);
        let mut exit_at = None;
        for k in 1..=140u64 {
            tp.now_us = 1_000_000 + 100 * k;
            tp.snd_una = k;
            tp.snd_nxt = k + u64::from(tp.snd_cwnd);
            let sample = AckSample {
                pkts_acked: 1,
                rtt_us: 10_000,
                in_flight: tp.snd_cwnd,
                prior_in_flight: tp.snd_cwnd,
            };
            cc.pkts_acked(&mut tp, &sample);
            if exit_at.is_none() && tp.snd_ssthresh != 0x7fff_ffff {
                exit_at = Some((k, tp.snd_ssthresh));
            }
            cc.cong_avoid(&mut tp, k, 1);
        }
        assert_eq!(exit_at, Some((129, 138)), "{}", cc.name());
    }
}

#[test]
fn patched_object_file_carries_the_parameters() {
    // The kernel backend registers a copy of the file with the flow's params written into
    // .rodata: parsed again, the copy's defaults are the given values, the rest unchanged.
    let Some(bytes) = compile("bpf/examples/cubic.bpf.c") else {
        return;
    };
    let obj = BpfObject::parse(&bytes).unwrap();
    let p: BTreeMap<String, ParamValue> = [
        ("beta".to_string(), ParamValue::Num(512.0)),
        ("hystart".to_string(), ParamValue::Bool(false)),
    ]
    .into();
    let patched = obj.patched_elf(&bytes, &p).unwrap();
    assert_eq!(patched.len(), bytes.len());
    let again = BpfObject::parse(&patched).unwrap();
    let defaults: BTreeMap<String, ParamValue> = again
        .params()
        .into_iter()
        .map(|q| (q.name, q.default))
        .collect();
    assert_eq!(defaults["beta"], ParamValue::Num(512.0));
    assert_eq!(defaults["hystart"], ParamValue::Bool(false));
    assert_eq!(defaults["bic_scale"], ParamValue::Num(41.0));
    // beta = 512 in the copy's defaults: ssthresh = cwnd / 2 with no params given.
    let mut cc = again.instantiate(&BTreeMap::new()).unwrap();
    assert_eq!(cc.ssthresh(&view(100, 50)), 50);
    // A wrong value is refused by name, as for a simulated flow.
    let bad: BTreeMap<String, ParamValue> = [("beta".to_string(), ParamValue::Bool(true))].into();
    assert!(obj
        .patched_elf(&bytes, &bad)
        .unwrap_err()
        .to_string()
        .contains("beta"));
}
