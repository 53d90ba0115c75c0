//! Hand-computed checks of Orca's state, reward, window rule, start rule and loop.

use super::*;
use tcplab_sim::{AgentWrite, FlowState, IntervalStats};

fn orca_policy(history: usize, bias: f64) -> PolicyConfig {
    PolicyConfig {
        format: "tcplab-policy/1".into(),
        name: "o".into(),
        preset: "orca".into(),
        history,
        interval_ns: Some(ORCA_REPORT_NS),
        rtt_fraction: 0.5,
        transform: Transform::None,
        layers: vec![Layer {
            weights: vec![vec![0.0; ORCA_FEATURES * history]],
            bias: vec![bias],
            activation: Activation::Linear,
        }],
    }
}

fn iv(acked: u64, lost: u64, samples: u64) -> IntervalStats {
    IntervalStats {
        duration_us: 20_000,
        acked_bytes: acked,
        lost_pkts: lost,
        rtt_samples: samples,
        ..Default::default()
    }
}

fn st(cwnd: u32, inflight: u32, srtt_us: u64, min_rtt_us: u64) -> FlowState {
    FlowState {
        cwnd_pkts: cwnd,
        inflight_pkts: inflight,
        srtt_us,
        min_rtt_us,
        ..Default::default()
    }
}

fn close(got: &[f32], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            (*g as f64 - w).abs() < 1e-6 * w.abs().max(1.0),
            "{got:?} vs {want:?}"
        );
    }
}

#[test]
fn the_state_and_reward_compute_by_hand() {
    // Report 1, 20 ms: 50 000 B acked, 2 lost, 25 RTT samples; cwnd 100, 90 in flight,
    // srtt 60 ms, min RTT 40 ms.
    //   thr 50 000 / 0.02 = 2.5e6 B/s = max_bw; loss 2 x 1448 / 0.02 = 144 800 B/s;
    //   pacing 1500 x max(100, 90) / 0.06 = 2.5e6 B/s -> ratio 1;
    //   1.25 x 40 = 50 ms < 60 ms: delay metric 50 / 60 = 0.833333;
    //   state [1, 1, 5 x 144 800 / 2.5e6 = 0.2896, 25 / 100 = 0.25, 0.02, 40 / 60, 0.833333];
    //   reward (2.5e6 - 724 000) / 2.5e6 x 0.833333 = 0.7104 x 0.833333 = 0.592.
    let mut o = OrcaObservation::new(2);
    o.push(&iv(50_000, 2, 25), &st(100, 90, 60_000, 40_000));
    let first = [1.0, 1.0, 0.2896, 0.25, 0.02, 40.0 / 60.0, 50.0 / 60.0];
    let mut want = vec![0.0; 7];
    want.extend(first);
    close(o.current(), &want);
    assert!((o.reward() - 0.592).abs() < 1e-12, "{}", o.reward());
    // Report 2: 25 000 B acked, no loss, 10 samples; cwnd 50, 60 in flight, srtt 48 ms
    // (below 1.25 x 40 = 50 ms: delay metric 1).
    //   thr 1.25e6 -> 0.5 of max_bw; pacing 1500 x 60 / 0.048 = 1.875e6 -> 0.75;
    //   state [0.5, 0.75, 0, 10 / 50 = 0.2, 0.02, 40 / 48, 1]; reward 0.5.
    let obs = o
        .push(&iv(25_000, 0, 10), &st(50, 60, 48_000, 40_000))
        .to_vec();
    let mut want = first.to_vec();
    want.extend([0.5, 0.75, 0.0, 0.2, 0.02, 40.0 / 48.0, 1.0]);
    close(&obs, &want);
    assert!((o.reward() - 0.5).abs() < 1e-12);
    assert_eq!(o.max_bw(), 2.5e6);
}

#[test]
fn the_pacing_ratio_is_capped_at_ten_and_a_silent_start_reads_zero() {
    // Nothing acked yet: max_bw 0, so the first three features and the reward are 0.
    let mut o = OrcaObservation::new(1);
    o.push(&iv(0, 0, 0), &st(10, 10, 40_000, 40_000));
    close(o.current(), &[0.0, 0.0, 0.0, 0.0, 0.02, 1.0, 1.0]);
    assert_eq!(o.reward(), 0.0);
    // 1448 B acked in 20 ms: max_bw 72 400 B/s; pacing 1500 x 100 / 0.04 = 3.75e6 B/s,
    // 51.8 x max_bw: capped at 10.
    o.push(&iv(1448, 0, 1), &st(100, 1, 40_000, 40_000));
    assert_eq!(o.current()[1], 10.0);
}

#[test]
fn the_window_follows_orca_s_integer_rule() {
    // int(100 x 4^a) x cwnd / 100 (integer division), at least 4.
    assert_eq!(orca_cwnd(100, 0.0), 100);
    assert_eq!(orca_cwnd(100, 1.0), 400);
    assert_eq!(orca_cwnd(100, -1.0), 25);
    assert_eq!(orca_cwnd(100, 0.5), 200);
    // 4^0.25 = 1.41421: int(141.42) = 141; 141 x 10 / 100 = 14.
    assert_eq!(orca_cwnd(10, 0.25), 14);
    // 4^-0.5 = 0.5: 50 x 7 / 100 = 3, below the least window 4.
    assert_eq!(orca_cwnd(7, -0.5), 4);
    // Outside [-1, 1] clamps; NaN keeps the window.
    assert_eq!(orca_cwnd(100, 3.0), 400);
    assert_eq!(orca_cwnd(100, f64::NAN), 100);
}

#[test]
fn the_agent_starts_when_cubic_first_leaves_slow_start() {
    let ready = |srtt_us, ssthresh_pkts, cwnd_pkts| {
        orca_ready(&FlowState {
            srtt_us,
            ssthresh_pkts,
            cwnd_pkts,
            ..Default::default()
        })
    };
    assert!(!ready(0, 5, 10)); // no RTT sample
    assert!(!ready(40_000, u32::MAX, 10)); // slow start
    assert!(!ready(40_000, 10, 10)); // ssthresh < cwnd, strictly
    assert!(ready(40_000, 10, 11));
}

#[test]
fn the_loop_waits_then_scales_cubic_s_window_without_touching_its_pacing() {
    // A constant action 0.5: the window doubles at each report.
    let p = orca_policy(1, 0.5);
    let mut c = OrcaController::new(&p).unwrap();
    let s = c.start(0);
    assert_eq!((s.write, s.next_ns), (None, 1_000_000));
    // In slow start: nothing yet.
    let slow = FlowState {
        ssthresh_pkts: u32::MAX,
        ..st(20, 20, 40_000, 40_000)
    };
    assert!(c.begin(1_000_000, &slow).is_none());
    assert!(c.waiting());
    // Out of it (ssthresh 30 < cwnd 31): start, the first report 20 ms later.
    let out = FlowState {
        ssthresh_pkts: 30,
        ..st(31, 31, 40_000, 40_000)
    };
    let s = c.begin(50_000_000, &out).unwrap();
    assert_eq!((s.write, s.next_ns), (None, 70_000_000));
    c.observe(&iv(50_000, 0, 20), &out);
    let (a, s) = c.act(70_000_000, &out);
    assert_eq!(a, 0.5);
    let want = AgentWrite {
        rate_bps: None,
        cwnd: 62,
    };
    assert_eq!((s.write, s.next_ns), (Some(want), 90_000_000));
}

#[test]
fn an_orca_file_checks_its_width_and_refuses_aurora_s_transform() {
    let mut p = orca_policy(10, 0.0);
    assert!(Mlp::new(&p).is_ok()); // 7 x 10 inputs
    p.layers[0].weights = vec![vec![0.0; 30]]; // Aurora's width
    assert_eq!(Mlp::new(&p).unwrap_err().field, "layers[0].weights[0]");
    let mut p = orca_policy(10, 0.0);
    p.transform = Transform::AuroraLog;
    assert_eq!(Mlp::new(&p).unwrap_err().field, "transform");
    p.preset = "sage".into();
    let e = Mlp::new(&p).unwrap_err();
    assert_eq!(e.field, "preset");
    assert!(e.message.contains("\"orca\""), "{}", e.message);
    assert_eq!(Preset::Orca.underlay(), "cubic");
    assert_eq!(Preset::Aurora.underlay(), "external");
}
