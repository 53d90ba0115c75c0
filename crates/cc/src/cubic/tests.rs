//! Hook-level tests for CUBIC. Expected values are worked out by hand from the kernel's
//! fixed-point formulas (arithmetic in the comments). Common numbers:
//! - cube_factor = floor(2^40 / (41*10)) = floor(1099511627776 / 410) = 2681735677
//! - cube_rtt_scale = 41*10 = 410; C(t-K)^3 in segments = 410 * offs^3 >> 40
//! - beta_scale = 8*(1024+717)/3/(1024-717) = 13928/3/307 = 4642/307 = 15

use super::hystart::{hystart_delay_thresh, HYSTART_ACK_TRAIN, HYSTART_DELAY};
use super::*;
use crate::ops::TCP_INFINITE_SSTHRESH;

/// A socket at `now_ms` in congestion avoidance with the given cwnd, cwnd-limited.
fn socket(now_ms: u64, cwnd: u32) -> CcView {
    let mut tp = CcView::new(1448, now_ms * 1000);
    tp.snd_cwnd = cwnd;
    tp.is_cwnd_limited = true;
    tp
}

fn cubic(cfg: CubicConfig, tp: &mut CcView) -> Cubic {
    let mut c = cfg.build();
    c.init(tp);
    c
}

fn at_ms(tp: &mut CcView, ms: u64) {
    tp.now_us = ms * 1000;
}

/// A loss at cwnd 100 (W_max = 100), then congestion avoidance from cwnd 70 whose
/// first ACK at 10 s starts the epoch.
fn after_loss_at_100(cfg: CubicConfig) -> (Cubic, CcView) {
    let mut tp = socket(9_000, 100);
    let mut c = cubic(cfg, &mut tp);
    let ss = c.ssthresh(&tp);
    tp.snd_ssthresh = ss;
    tp.snd_cwnd = ss;
    at_ms(&mut tp, 10_000);
    c.cong_avoid(&mut tp, 1, 1);
    (c, tp)
}

#[test]
fn cubic_scales_match_the_kernel_precomputation() {
    let c = CubicConfig::default().build();
    assert_eq!(c.beta_scale, 15);
    assert_eq!(c.cube_rtt_scale, 410);
    assert_eq!(c.cube_factor, 2_681_735_677);
}

#[test]
fn cubic_ssthresh_is_cwnd_times_717_over_1024_with_floor_two() {
    let mut tp = socket(0, 100);
    let mut c = cubic(CubicConfig::default(), &mut tp);
    // 100 * 717 / 1024 = 71700 / 1024 = 70.02 -> 70
    assert_eq!(c.ssthresh(&tp), 70);
    // 2 * 717 / 1024 = 1434 / 1024 = 1 -> floor 2
    tp.snd_cwnd = 2;
    assert_eq!(c.ssthresh(&tp), 2);
}

#[test]
fn cubic_fast_convergence_lowers_wmax() {
    let mut tp = socket(0, 100);
    let mut c = cubic(CubicConfig::default(), &mut tp);
    c.ssthresh(&tp); // first loss: W_max = 100 (no previous maximum)
    assert_eq!(c.ca.last_max_cwnd, 100);
    // Second loss below W_max at cwnd 90: W_max = 90 * (1024 + 717) / 2048
    // = 156690 / 2048 = 76.5 -> 76.
    tp.snd_cwnd = 90;
    assert_eq!(c.ssthresh(&tp), 63); // 90 * 717 / 1024 = 64530 / 1024 = 63.02 -> 63
    assert_eq!(c.ca.last_max_cwnd, 76);
}

#[test]
fn cubic_without_fast_convergence_keeps_wmax_at_the_loss_window() {
    let cfg = CubicConfig {
        fast_convergence: false,
        ..CubicConfig::default()
    };
    let mut tp = socket(0, 100);
    let mut c = cubic(cfg, &mut tp);
    c.ssthresh(&tp);
    tp.snd_cwnd = 90;
    c.ssthresh(&tp);
    assert_eq!(c.ca.last_max_cwnd, 90);
}

#[test]
fn cubic_k_is_the_cube_root_of_the_window_deficit_over_c() {
    // W_max = 100, cwnd = 70: K = cubic_root(2681735677 * 30) = 4316 (worked in
    // root.rs), in 1/1024 s: 4316 / 1024 = 4.215 s. The real-valued formula
    // K = cbrt(30 / 0.4004) = cbrt(74.93) = 4.216 s agrees.
    let (c, _) = after_loss_at_100(CubicConfig::default());
    assert_eq!(c.ca.bic_k, 4316);
    assert_eq!(c.ca.bic_origin_point, 100);
    assert_eq!(c.ca.epoch_start, 10_000);
}

#[test]
fn cubic_cnt_follows_the_concave_then_convex_curve() {
    let (mut c, mut tp) = after_loss_at_100(CubicConfig::default());
    // t = 0 (delay_min 0): offs = 4316, 410 * 4316^3 = 32963108863360, >> 40 = 29;
    // target = 100 - 29 = 71 > 70, so cnt = 70 / (71 - 70) = 70.
    assert_eq!(c.ca.cnt, 70);

    // t = 2 s: t = 2000 << 10 / 1000 = 2048, offs = 4316 - 2048 = 2268,
    // 410 * 2268^3 = 4783139061120, >> 40 = 4; target = 96; cnt = 70 / 26 = 2.
    at_ms(&mut tp, 12_000);
    c.cong_avoid(&mut tp, 2, 1);
    assert_eq!(c.ca.cnt, 2);

    // t = 4 s near the plateau: t = 4096, offs = 220, 410 * 220^3 = 4365680000 >> 40 = 0;
    // target = 100; with cwnd 99, cnt = 99 / 1 = 99.
    tp.snd_cwnd = 99;
    at_ms(&mut tp, 14_000);
    c.cong_avoid(&mut tp, 3, 1);
    assert_eq!(c.ca.cnt, 99);

    // t = 6 s past the plateau: t = 6144, offs = 1828, 410 * 1828^3 = 2504450376320,
    // >> 40 = 2; target = 102; with cwnd 100, cnt = 100 / 2 = 50.
    tp.snd_cwnd = 100;
    at_ms(&mut tp, 16_000);
    c.cong_avoid(&mut tp, 4, 1);
    assert_eq!(c.ca.cnt, 50);
    // Throughout, the Reno estimate (tcp_cwnd 70, one segment per 70*15>>3 = 131 acked)
    // stayed below cwnd, so it never lowered cnt.
    assert_eq!(c.ca.tcp_cwnd, 70);
}

#[test]
fn cubic_initial_growth_without_a_known_maximum_is_at_least_five_percent() {
    // Fresh flow in congestion avoidance at cwnd 100: W_max = 0 <= cwnd so K = 0 and the
    // origin is cwnd; target = 100 = cwnd, so cnt = 100 * 100 = 10000, capped at 20.
    let mut tp = socket(10_000, 100);
    tp.snd_ssthresh = 50;
    let mut c = cubic(CubicConfig::default(), &mut tp);
    c.cong_avoid(&mut tp, 1, 1);
    assert_eq!(c.ca.cnt, 20);
}

/// W_max = 100 and cwnd = 100 (so K = 0 and the cubic is flat at first), then one ACK
/// of 400 segments.
fn flat_cubic_then_400_acked(cfg: CubicConfig) -> (Cubic, CcView) {
    let mut tp = socket(9_000, 100);
    let mut c = cubic(cfg, &mut tp);
    c.ssthresh(&tp); // W_max = 100
    tp.snd_ssthresh = 70;
    at_ms(&mut tp, 10_000);
    c.cong_avoid(&mut tp, 400, 400);
    (c, tp)
}

#[test]
fn cubic_friendliness_region_follows_the_reno_estimate_when_larger() {
    // Cubic: t = 0, K = 0, target = 100 = cwnd, so cnt = 100 * 100 = 10000.
    // Reno estimate: delta = 100 * 15 >> 3 = 187 acked per segment; ack_cnt = 400 gives
    // 400 -> 213 -> 26, tcp_cwnd = 100 + 2 = 102 > 100, so cnt <= 100 / 2 = 50.
    // tcp_cong_avoid_ai(50, 400): 400 / 50 = 8 segments: cwnd 108.
    let (c, tp) = flat_cubic_then_400_acked(CubicConfig::default());
    assert_eq!((c.ca.tcp_cwnd, c.ca.ack_cnt, c.ca.cnt), (102, 26, 50));
    assert_eq!(tp.snd_cwnd, 108);
}

#[test]
fn cubic_without_friendliness_stays_on_the_flat_cubic() {
    // Same as above without the Reno estimate: cnt = 10000, 400 acked add nothing.
    let cfg = CubicConfig {
        tcp_friendliness: false,
        ..CubicConfig::default()
    };
    let (c, tp) = flat_cubic_then_400_acked(cfg);
    assert_eq!(c.ca.cnt, 10_000);
    assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (100, 400));
}

#[test]
fn cubic_tx_start_after_idle_shifts_the_epoch_by_the_idle_time() {
    let (mut c, mut tp) = after_loss_at_100(CubicConfig::default());
    // Epoch began at jiffy 10000. Last send at 10.5 s, restart at 12.5 s:
    // idle 2000 jiffies, epoch 10000 + 2000 = 12000 (not after now = 12500).
    tp.lsndtime_us = 10_500_000;
    at_ms(&mut tp, 12_500);
    c.cwnd_event(&mut tp, CaEvent::TxStart);
    assert_eq!(c.ca.epoch_start, 12_000);
    // A shift past now is capped at now: last send 11.99 s, restart 20 s:
    // 12000 + 8010 = 20010 > 20000 -> 20000.
    tp.lsndtime_us = 11_990_000;
    at_ms(&mut tp, 20_000);
    c.cwnd_event(&mut tp, CaEvent::TxStart);
    assert_eq!(c.ca.epoch_start, 20_000);
}

#[test]
fn cubic_tx_start_without_an_epoch_changes_nothing() {
    let mut tp = socket(5_000, 10);
    let mut c = cubic(CubicConfig::default(), &mut tp);
    tp.lsndtime_us = 1_000_000;
    c.cwnd_event(&mut tp, CaEvent::TxStart);
    assert_eq!(c.ca.epoch_start, 0);
}

#[test]
fn cubic_rto_forgets_the_cubic_and_restarts_hystart() {
    let (mut c, mut tp) = after_loss_at_100(CubicConfig::default());
    c.ca.delay_min = 40_000;
    c.ca.hystart.found = true;
    tp.snd_nxt = 500;
    c.set_state(&mut tp, CaState::Loss);
    assert_eq!(
        (
            c.ca.last_max_cwnd,
            c.ca.epoch_start,
            c.ca.bic_k,
            c.ca.delay_min
        ),
        (0, 0, 0, 0)
    );
    assert!(!c.ca.hystart.found);
    assert_eq!(
        (c.ca.hystart.end_seq, c.ca.hystart.curr_rtt),
        (500, u32::MAX)
    );
    // Entering Recovery keeps everything.
    c.ca.last_max_cwnd = 100;
    c.set_state(&mut tp, CaState::Recovery);
    assert_eq!(c.ca.last_max_cwnd, 100);
}

#[test]
fn cubic_undo_restores_the_larger_of_cwnd_and_prior_cwnd() {
    let mut tp = socket(0, 70);
    let mut c = cubic(CubicConfig::default(), &mut tp);
    tp.prior_cwnd = 100;
    assert_eq!(c.undo_cwnd(&tp), 100);
    tp.snd_cwnd = 120;
    assert_eq!(c.undo_cwnd(&tp), 120);
}

#[test]
fn cubic_initial_ssthresh_applies_only_without_hystart() {
    let mut tp = socket(0, 10);
    let with = CubicConfig {
        initial_ssthresh: 50,
        ..CubicConfig::default()
    };
    cubic(with.clone(), &mut tp);
    assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
    cubic(
        CubicConfig {
            hystart: false,
            ..with
        },
        &mut tp,
    );
    assert_eq!(tp.snd_ssthresh, 50);
}

#[test]
fn cubic_ignores_delay_samples_in_the_first_second_of_an_epoch() {
    let mut tp = socket(9_000, 100);
    let mut c = cubic(CubicConfig::default(), &mut tp);
    tp.snd_ssthresh = 50;
    let ack = |rtt_us| AckSample {
        pkts_acked: 1,
        rtt_us,
        in_flight: 10,
        prior_in_flight: 10,
    };
    c.pkts_acked(&mut tp, &ack(40_000)); // no epoch yet: taken
    assert_eq!(c.ca.delay_min, 40_000);
    at_ms(&mut tp, 10_000);
    c.cong_avoid(&mut tp, 1, 1); // epoch starts at jiffy 10000
    at_ms(&mut tp, 10_999); // 999 jiffies < HZ: discarded
    c.pkts_acked(&mut tp, &ack(30_000));
    assert_eq!(c.ca.delay_min, 40_000);
    at_ms(&mut tp, 11_000); // 1000 jiffies: taken
    c.pkts_acked(&mut tp, &ack(30_000));
    assert_eq!(c.ca.delay_min, 30_000);
}

// ---- HyStart ----

/// A flow in slow start at cwnd 20 (>= hystart_low_window 16), at 1 s.
fn slow_start(cfg: CubicConfig) -> (Cubic, CcView) {
    let mut tp = socket(1_000, 20);
    tp.snd_nxt = 0;
    let c = cubic(cfg, &mut tp);
    tp.snd_nxt = 100;
    (c, tp)
}

/// Feed `n` RTT samples of `rtt_us`, `gap_us` apart, each acking one more segment.
fn samples(c: &mut Cubic, tp: &mut CcView, n: u32, rtt_us: i64, gap_us: u64) {
    for _ in 0..n {
        tp.now_us += gap_us;
        tp.snd_una += 1;
        c.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: 1,
                rtt_us,
                in_flight: 20,
                prior_in_flight: 20,
            },
        );
    }
}

#[test]
fn hystart_delay_threshold_is_an_eighth_of_delay_min_clamped_to_4_16_ms() {
    assert_eq!(hystart_delay_thresh(10_000 >> 3), 4_000); // 1250 -> 4000
    assert_eq!(hystart_delay_thresh(40_000 >> 3), 5_000); // 5000
    assert_eq!(hystart_delay_thresh(200_000 >> 3), 16_000); // 25000 -> 16000
}

#[test]
fn hystart_delay_exits_slow_start_when_the_round_min_rtt_exceeds_delay_min_plus_threshold() {
    // ACKs 3 ms apart (> hystart_ack_delta_us 2 ms) so the ACK train never runs.
    // Kernel note: the round's minimum is compared with delay_min, the flow's minimum
    // (here the first round's 40 ms), not with the previous round's minimum.
    // Threshold = 40000 + clamp(40000 >> 3 = 5000, 4000, 16000) = 45000 us.
    let (mut c, mut tp) = slow_start(CubicConfig::default());
    // Round 1 (snd_una 1..9 > end_seq 0 resets the round, end_seq := snd_nxt = 100).
    samples(&mut c, &mut tp, 9, 40_000, 3_000);
    assert_eq!(c.ca.delay_min, 40_000);
    // Round 2: min RTT 45 ms = threshold, not above it.
    tp.snd_una = 100;
    tp.snd_nxt = 200;
    samples(&mut c, &mut tp, 9, 45_000, 3_000);
    assert!(!c.ca.hystart.found);
    assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
    // Round 3: min RTT 45.001 ms. The first 8 samples only fill the round
    // (HYSTART_MIN_SAMPLES); the 9th compares and exits: ssthresh = cwnd = 20.
    tp.snd_una = 200;
    tp.snd_nxt = 300;
    samples(&mut c, &mut tp, 8, 45_001, 3_000);
    assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
    samples(&mut c, &mut tp, 1, 45_001, 3_000);
    assert!(c.ca.hystart.found);
    assert_eq!(tp.snd_ssthresh, 20);
    assert_eq!(tp.snd_cwnd, 20);
}

#[test]
fn hystart_does_not_run_below_the_low_window() {
    let (mut c, mut tp) = slow_start(CubicConfig::default());
    tp.snd_cwnd = 15; // < hystart_low_window 16
    samples(&mut c, &mut tp, 9, 40_000, 3_000);
    tp.snd_una = 100;
    samples(&mut c, &mut tp, 9, 100_000, 3_000); // +60 ms, far above any threshold
    assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
}

/// Linux 6.14's "tcp_cubic: fix incorrect HyStart round start detection": rounds start
/// from the first ACK even below hystart_low_window, so that they line up with the
/// flights; only detection waits for cwnd 16. At cwnd 10 with the initial window of 10
/// segments out, the first ACK (snd_una 1 > end_seq 0) starts a round ending at 10.
#[test]
fn hystart_tracks_rounds_below_the_low_window() {
    let (mut c, mut tp) = slow_start(CubicConfig::default());
    tp.snd_cwnd = 10;
    tp.snd_nxt = 10;
    samples(&mut c, &mut tp, 1, 40_000, 500);
    assert_eq!(c.ca.hystart.end_seq, 10);
    assert_eq!(c.ca.hystart.round_start, tp.now_us as u32);
    assert_eq!(c.ca.hystart.sample_cnt, 0); // no detection below the low window
}

fn train_only() -> CubicConfig {
    CubicConfig {
        hystart_detect: HYSTART_ACK_TRAIN,
        ..CubicConfig::default()
    }
}

#[test]
fn hystart_ack_train_exits_after_half_delay_min_of_closely_spaced_acks() {
    // delay_min = 40 ms, unpaced: threshold = 40000 >> 1 = 20000 us. The first ACK
    // starts the round (round_start = now); ACK k arrives k ms later, 1 ms <= 2 ms after
    // the previous one, so the train continues; k*1000 > 20000 first at k = 21.
    let (mut c, mut tp) = slow_start(train_only());
    samples(&mut c, &mut tp, 1, 40_000, 0); // k = 0: round starts
    samples(&mut c, &mut tp, 20, 40_000, 1_000); // k = 1..20
    assert!(!c.ca.hystart.found);
    samples(&mut c, &mut tp, 1, 40_000, 1_000); // k = 21
    assert!(c.ca.hystart.found);
    assert_eq!(tp.snd_ssthresh, 20);
}

#[test]
fn hystart_ack_train_waits_a_full_delay_min_when_paced() {
    // Paced: no halving, threshold = 40000 us: k = 40 is not above it, k = 41 is.
    let (mut c, mut tp) = slow_start(train_only());
    tp.pacing_needed = true;
    samples(&mut c, &mut tp, 1, 40_000, 0);
    samples(&mut c, &mut tp, 40, 40_000, 1_000);
    assert!(!c.ca.hystart.found);
    samples(&mut c, &mut tp, 1, 40_000, 1_000);
    assert!(c.ca.hystart.found);
}

#[test]
fn hystart_ack_train_is_broken_by_a_gap_longer_than_ack_delta() {
    // k = 0, 1 ms, then a 3 ms gap (> 2 ms): last_ack stays at 1 ms and every later ACK
    // is more than 2 ms after it, so the train never reaches 20 ms.
    let (mut c, mut tp) = slow_start(train_only());
    samples(&mut c, &mut tp, 1, 40_000, 0);
    samples(&mut c, &mut tp, 1, 40_000, 1_000);
    samples(&mut c, &mut tp, 1, 40_000, 3_000);
    samples(&mut c, &mut tp, 30, 40_000, 1_000);
    assert!(!c.ca.hystart.found);
    assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
}

#[test]
fn hystart_delay_only_ignores_ack_trains() {
    // The same 21 ms train with only delay detection enabled: no exit.
    let cfg = CubicConfig {
        hystart_detect: HYSTART_DELAY,
        ..CubicConfig::default()
    };
    let (mut c, mut tp) = slow_start(cfg);
    samples(&mut c, &mut tp, 22, 40_000, 1_000);
    assert!(!c.ca.hystart.found);
}

#[test]
fn cubic_registry_builds_with_kernel_defaults() {
    let c = SPEC.default_params();
    assert_eq!(CubicConfig::from_params(&c), CubicConfig::default());
}

// ---- Over seconds: cong_avoid driven by one ACK per segment, evenly spread per RTT ----

/// A loss at cwnd 100 after RTT samples of `rtt_us` (so delay_min = rtt), then
/// `secs` seconds of rounds: each round acks the whole window, one segment per ACK,
/// evenly spread over the RTT. Returns cwnd at each whole second after the epoch began
/// (index 0 = the loss).
fn cwnd_per_second(cfg: CubicConfig, rtt_us: u64, secs: u64) -> Vec<u32> {
    let mut tp = socket(9_000, 100);
    let mut c = cubic(cfg, &mut tp);
    tp.snd_ssthresh = 100; // congestion avoidance; no HyStart
    c.pkts_acked(
        &mut tp,
        &AckSample {
            pkts_acked: 1,
            rtt_us: rtt_us as i64,
            in_flight: 100,
            prior_in_flight: 100,
        },
    );
    let ss = c.ssthresh(&tp);
    tp.snd_ssthresh = ss;
    tp.snd_cwnd = ss;
    let start_us = 10_000_000;
    let mut out = vec![tp.snd_cwnd];
    let mut round_us = start_us;
    while round_us < start_us + secs * 1_000_000 {
        let w = tp.snd_cwnd as u64;
        for i in 0..w {
            tp.now_us = round_us + i * rtt_us / w;
            tp.snd_una += 1;
            c.pkts_acked(
                &mut tp,
                &AckSample {
                    pkts_acked: 1,
                    rtt_us: rtt_us as i64,
                    in_flight: w as u32,
                    prior_in_flight: w as u32,
                },
            );
            let una = tp.snd_una;
            c.cong_avoid(&mut tp, una, 1);
        }
        round_us += rtt_us;
        if (round_us - start_us) % 1_000_000 == 0 {
            out.push(tp.snd_cwnd);
        }
    }
    out
}

#[test]
fn cubic_cwnd_follows_the_cubic_curve_over_seconds() {
    // W_max 100, cwnd 70, RTT 100 ms, Reno estimate off. The kernel aims at
    // W(t + delay_min) = 100 + 0.4004 (t + 0.1 - 4.2148)^3 with C = 410/1024 and
    // K = 4316/1024 s:
    //   t=1: 100 + 0.4004 * (-3.1148)^3 = 100 - 12.10 = 87.9
    //   t=2: 100 + 0.4004 * (-2.1148)^3 = 100 - 3.79 = 96.2
    //   t=3: 100 + 0.4004 * (-1.1148)^3 = 100 - 0.55 = 99.4
    //   t=5: 100 + 0.4004 * ( 0.8852)^3 = 100 + 0.28 = 100.3
    //   t=6: 100 + 0.4004 * ( 1.8852)^3 = 100 + 2.68 = 102.7
    //   t=7: 100 + 0.4004 * ( 2.8852)^3 = 100 + 9.62 = 109.6
    //   t=8: 100 + 0.4004 * ( 3.8852)^3 = 100 + 23.48 = 123.5
    // cwnd trails the target by about one RTT of growth (slope 3C(t-K)^2 * 0.1 s:
    // <= 1.2 segments up to 7 s, 1.8 at 8 s) plus the integer floor of the target (< 1),
    // and never runs ahead of it by a whole segment: expect W - 3 <= cwnd <= W + 1.
    let cfg = CubicConfig {
        tcp_friendliness: false,
        ..CubicConfig::default()
    };
    let cwnd = cwnd_per_second(cfg, 100_000, 8);
    let expected = [
        (1, 87.9),
        (2, 96.2),
        (3, 99.4),
        (5, 100.3),
        (6, 102.7),
        (7, 109.6),
        (8, 123.5),
    ];
    for (t, w) in expected {
        let got = cwnd[t] as f64;
        assert!(
            got >= w - 3.0 && got <= w + 1.0,
            "t = {t} s: cwnd {got}, curve {w}; all {cwnd:?}"
        );
    }
}

#[test]
fn cubic_friendliness_region_grows_like_aimd_on_short_rtts() {
    // RTT 10 ms: the cubic alone would give W(1.01) = 100 + 0.4004 (1.01 - 4.2148)^3
    // = 100 - 13.2 = 86.8 after 1 s. The Reno estimate grows 1 segment per
    // cwnd * 15 / 8 acked, i.e. 8/15 = 0.533 per RTT (Eq. 4: 3(1-b)/(1+b) = 0.53 for
    // b = 0.7): after 100 RTTs, 70 + 53.3 = 123.3. cwnd follows the larger, within a
    // round's lag and rounding: 123.3 +- 3.
    let cwnd = cwnd_per_second(CubicConfig::default(), 10_000, 1);
    assert!(
        (120..=126).contains(&cwnd[1]),
        "cwnd after 1 s: {}",
        cwnd[1]
    );
    // Without the Reno estimate the cubic's 86.8 applies (W - 3 .. W + 1).
    let cfg = CubicConfig {
        tcp_friendliness: false,
        ..CubicConfig::default()
    };
    let cubic_only = cwnd_per_second(cfg, 10_000, 1);
    assert!(
        (84..=87).contains(&cubic_only[1]),
        "cubic-only cwnd after 1 s: {}",
        cubic_only[1]
    );
}

#[test]
fn cubic_rejects_a_beta_that_would_divide_by_zero() {
    // beta_scale divides by (1024 - beta): 1024 must be refused by name, not panic.
    let mut given = std::collections::BTreeMap::new();
    given.insert("beta".to_string(), crate::registry::ParamValue::Num(1024.0));
    let err = SPEC.validate(&given).unwrap_err().to_string();
    assert!(
        err.starts_with("parameter 'beta' of cubic: 1024 is outside"),
        "{err}"
    );
}

/// `bictcp_update`'s `HZ/32` gate counts jiffies of the simulated CONFIG_HZ: with cwnd
/// unchanged, cnt is recomputed only once more than HZ/32 jiffies have passed since the
/// last computation (at jiffy 10.003 s reads as). HZ = 1000: 1000/32 = 31 jiffies, so
/// 10.034 s (31) is skipped and 10.035 s (32) recomputes, 32 ms later. HZ = 250: 250/32 =
/// 7 jiffies of 4 ms; 10.003 s is jiffy floor(10003 / 4) = 2500, 10.031 s is 2507 (skip),
/// 10.032 s is 2508 (recompute): 29 ms later, as the coarser tick rounds the start down.
#[test]
fn cubic_update_gate_is_hz_over_32_jiffies() {
    for (hz, skipped_ms, recomputed_ms, last) in
        [(1000, 10_034, 10_035, 10_035), (250, 10_031, 10_032, 2508)]
    {
        let (mut c, mut tp) = after_loss_at_100(CubicConfig::default());
        tp.hz = hz;
        (c.ca.epoch_start, c.ca.last_cwnd) = (0, 0); // recompute on the next update
        at_ms(&mut tp, 10_003);
        c.bictcp_update(tp.jiffies32(), tp.hz, tp.snd_cwnd, 1);
        let first = c.ca.last_time;
        at_ms(&mut tp, skipped_ms);
        c.bictcp_update(tp.jiffies32(), tp.hz, tp.snd_cwnd, 1);
        assert_eq!(
            c.ca.last_time, first,
            "hz {hz}: {skipped_ms} ms is inside the gate"
        );
        at_ms(&mut tp, recomputed_ms);
        c.bictcp_update(tp.jiffies32(), tp.hz, tp.snd_cwnd, 1);
        assert_eq!(
            c.ca.last_time, last,
            "hz {hz}: {recomputed_ms} ms recomputes"
        );
    }
}
