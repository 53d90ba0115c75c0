//! Hand-computed checks of the policy's network, file checks and controller.

use super::*;

fn policy(weights: Vec<Vec<f64>>, bias: Vec<f64>, transform: Transform) -> PolicyConfig {
    PolicyConfig {
        format: "tcplab-policy/1".into(),
        name: "t".into(),
        preset: "aurora".into(),
        history: 1,
        interval_ns: None,
        rtt_fraction: 0.5,
        transform,
        layers: vec![Layer {
            weights,
            bias,
            activation: Activation::Linear,
        }],
    }
}

/// A controller whose action is always `a` (all weights 0, bias a).
fn constant(a: f64) -> PolicyController {
    PolicyController::new(&policy(vec![vec![0.0; 3]], vec![a], Transform::None)).unwrap()
}

#[test]
fn the_network_computes_by_hand() {
    // aurora_log of (gradient 2 -> clipped 1, ratio e -> ln e = 1, sending ratio
    // e - 1 -> ln(e) = 1) and the bias input 1: weights (1, 2, 3, 4) + bias 0.5
    // -> 1 + 2 + 3 + 4 + 0.5 = 10.5.
    let e = std::f64::consts::E;
    let p = policy(
        vec![vec![1.0, 2.0, 3.0, 4.0]],
        vec![0.5],
        Transform::AuroraLog,
    );
    let m = Mlp::new(&p).unwrap();
    let got = m.act(&[2.0, e as f32, (e - 1.0) as f32]);
    assert!((got - 10.5).abs() < 1e-6, "{got}");
}

#[test]
fn sigmoid_computes_by_hand() {
    // One observation (1, 0, 0), weight 1 on its first value, bias 0: sigmoid(1) =
    // 1 / (1 + e^-1) = 0.7310585786300049; sigmoid(-1) = 0.2689414213699951.
    let mut p = policy(vec![vec![1.0, 0.0, 0.0]], vec![0.0], Transform::None);
    p.layers[0].activation = Activation::Sigmoid;
    let m = Mlp::new(&p).unwrap();
    let got = m.act(&[1.0, 0.0, 0.0]);
    assert!((got - 0.731_058_578_630_004_9).abs() < 1e-12, "{got}");
    let got = m.act(&[-1.0, 0.0, 0.0]);
    assert!((got - 0.268_941_421_369_995_1).abs() < 1e-12, "{got}");
}

#[test]
fn shapes_are_checked_naming_the_field() {
    let p = policy(vec![vec![1.0, 2.0]], vec![0.0], Transform::None);
    let e = Mlp::new(&p).unwrap_err();
    assert_eq!(e.field, "layers[0].weights[0]");
    let p = policy(
        vec![vec![0.0; 3], vec![0.0; 3]],
        vec![0.0, 0.0],
        Transform::None,
    );
    assert_eq!(Mlp::new(&p).unwrap_err().field, "layers");
    let mut p = policy(vec![vec![0.0; 3]], vec![0.0], Transform::None);
    p.format = "v2".into();
    assert_eq!(Mlp::new(&p).unwrap_err().field, "format");
}

#[test]
fn an_interval_below_one_millisecond_is_refused_naming_the_field() {
    let mut p = policy(vec![vec![0.0; 3]], vec![0.0], Transform::None);
    p.interval_ns = Some(1);
    let e = Mlp::new(&p).unwrap_err();
    assert_eq!(e.field, "interval_ns");
    assert!(e.message.contains("at least 1000000"), "{}", e.message);
    p.interval_ns = Some(MIN_STEP_NS);
    assert!(Mlp::new(&p).is_ok());
}

#[test]
fn a_policy_file_with_a_privileged_field_is_refused_naming_it() {
    let v: serde_json::Value =
        serde_json::from_str(r#"{"format": "tcplab-policy/1", "privileged_start_fraction": 0.5}"#)
            .unwrap();
    let e = refuse_privileged(&v).unwrap_err();
    assert_eq!(e.field, "privileged_start_fraction");
    assert!(e.message.contains("training-only"), "{}", e.message);
    let v: serde_json::Value = serde_json::from_str(r#"{"start_fraction": 1.0}"#).unwrap();
    assert_eq!(refuse_privileged(&v).unwrap_err().field, "start_fraction");
    assert!(refuse_privileged(&serde_json::json!({"name": "x"})).is_ok());
}

#[test]
fn a_controller_waits_for_an_rtt_sample_then_starts_with_the_initial_window() {
    // A constant action 4 (x 1.1 per step).
    let mut c = constant(4.0);
    // Before the connection: 10 segments unpaced, a look 1 ms later.
    let d = c.start(0);
    assert_eq!((d.rate_bps, d.cwnd, d.next_ns), (0.0, 10, 1_000_000));
    assert!(c.waiting());
    // No sample yet at 1 ms: nothing to write; no action either.
    assert_eq!(c.begin(1_000_000, 0), None);
    assert_eq!(c.act(1_000_000, 0), None);
    // The handshake's 48 ms sample at 49 ms: 10 x 1448 B x 8 / 0.048 s =
    // 2 413 333.33 bit/s; window 2 x 301 666.67 B/s x 0.048 s / 1448 = 20; next step
    // half of srtt later: 49 + 24 ms.
    let d = c.begin(49_000_000, 48_000).unwrap();
    assert!(
        (d.rate_bps - 2_413_333.333_333).abs() < 1e-3,
        "{}",
        d.rate_bps
    );
    assert_eq!((d.cwnd, d.next_ns), (20, 73_000_000));
    assert!(!c.waiting());
    // An interval with 3 samples of mean 50 ms (min 45 ms), 10 KB sent, 8 KB acked:
    // the first interval has no gradient, latency ratio 50/45, sending ratio 1.25.
    let iv = IntervalStats {
        duration_us: 24_000,
        sent_bytes: 10_000,
        acked_bytes: 8_000,
        rtt_samples: 3,
        rtt_mean_us: 50_000.0,
        rtt_min_us: 45_000,
        ..Default::default()
    };
    let obs = c.observe(&iv, 48_000).to_vec();
    assert_eq!(obs, vec![0.0, (50.0f64 / 45.0) as f32, 1.25]);
    // Act: x 1.1 = 2 654 666.67 bit/s; window 2 x 331 833.33 x 0.048 / 1448 = 22.0
    // -> 22; next step 73 + 24 ms.
    let (a, d) = c.act(73_000_000, 48_000).unwrap();
    assert_eq!(a, 4.0);
    assert!((d.rate_bps - 2_654_666.667).abs() < 1e-2, "{}", d.rate_bps);
    assert_eq!((d.cwnd, d.next_ns), (22, 97_000_000));
}

#[test]
fn the_floor_is_four_segments_per_srtt_reached_where_computed_by_hand() {
    // Constant action -10: / 1.25 per step from the start's 2 413 333.33 bit/s at
    // srtt 48 ms: 1 930 666.67, 1 544 533.33, 1 235 626.67, 988 501.33, then
    // 790 801.07 is below the floor 4 x 1448 x 8 / 0.048 = 965 333.33: the fifth act
    // writes the floor, with the least window, 10 segments (2 x 4 = 8 below it).
    let mut c = constant(-10.0);
    c.start(0);
    c.begin(1_000_000, 48_000).unwrap();
    let want = [1_930_666.667, 1_544_533.333, 1_235_626.667, 988_501.333];
    for w in want {
        let (_, d) = c.act(0, 48_000).unwrap();
        assert!((d.rate_bps - w).abs() < 1e-2, "{} vs {w}", d.rate_bps);
    }
    let (_, d) = c.act(0, 48_000).unwrap();
    assert!((d.rate_bps - 965_333.333).abs() < 1e-2, "{}", d.rate_bps);
    assert_eq!(d.cwnd, 10);
    let (_, again) = c.act(0, 48_000).unwrap();
    assert_eq!(again.rate_bps, d.rate_bps);
}

#[test]
fn the_cap_is_the_largest_window_reached_where_computed_by_hand() {
    // Constant action 10: x 1.25 per step from 2 413 333.33 bit/s at srtt 48 ms. The
    // cap: the rate whose window 2 x rate x srtt is 1 000 000 segments,
    // 1e6 x 1448 x 8 / (2 x 0.048) = 1.206 666 67e11 bit/s. After 48 acts the rate is
    // 2 413 333.33 x 1.25^48 = 1.0822e11 (1.25^48 = 44 841.6), below it; the 49th
    // (1.3527e11) is capped, with a window of exactly MAX_CWND.
    let mut c = constant(10.0);
    c.start(0);
    c.begin(1_000_000, 48_000).unwrap();
    for _ in 0..48 {
        c.act(0, 48_000).unwrap();
    }
    let (_, d49) = {
        let mut probe = c.clone();
        probe.act(0, 48_000).unwrap()
    };
    assert!(
        (d49.rate_bps - 1.206_666_667e11).abs() < 1e2,
        "{}",
        d49.rate_bps
    );
    assert_eq!(d49.cwnd, MAX_CWND);
    let r48 = c.rate_bps.unwrap();
    assert!((r48 / 1.0822e11 - 1.0).abs() < 1e-3, "{r48}");
}

#[test]
fn a_do_nothing_policy_keeps_the_same_rate_whatever_the_path_rate() {
    // The controller is given srtt and statistics only: two flows with the same
    // 60 ms handshake start at the same 10 x 1448 x 8 / 0.06 = 1 930 666.67 bit/s and
    // a do-nothing policy (action 0) stays there.
    let mut c = constant(0.0);
    c.start(0);
    let d = c.begin(1_000_000, 60_000).unwrap();
    assert!((d.rate_bps - 1_930_666.667).abs() < 1e-2);
    for _ in 0..100 {
        let (_, d) = c.act(0, 60_000).unwrap();
        assert!((d.rate_bps - 1_930_666.667).abs() < 1e-2);
    }
}

#[test]
fn the_rate_moves_by_aurora_s_rule() {
    // a = 4: x (1 + 0.1); a = -4: / (1 + 0.1); |a| > 10 clamps to 10: x 1.25.
    assert!((aurora_rate(1e6, 4.0) - 1.1e6).abs() < 1e-6);
    assert!((aurora_rate(1.1e6, -4.0) - 1e6).abs() < 1e-6);
    assert!((aurora_rate(1e6, 50.0) - 1.25e6).abs() < 1e-6);
    assert_eq!(aurora_rate(1e6, f64::NAN), 1e6);
    // 10 Mbit/s at 40 ms: 2 x 1.25e6 B/s x 0.04 s / 1448 = 69.06 -> 70 segments.
    assert_eq!(aurora_write(10e6, 40_000.0), (10e6, 70));
    // At least 10 segments: 2 Mbit/s at 40 ms is a window of 13.8 -> 14, 1.2 Mbit/s
    // 8.3 -> 10.
    assert_eq!(aurora_write(2e6, 40_000.0).1, 14);
    assert_eq!(aurora_write(1.2e6, 40_000.0).1, 10);
}
