//! Scenario tests of BBRv3 (crates/cc/src/bbr3) and, at the end, BBRv2 (`bbr2`, the
//! same code with `Bbr3Config::v2()`) on the engine's dumbbell, each against
//! an expectation from Google's BBRv3 material, with its tolerance and the measured
//! figures beside the assertion. The figures are from
//! `cargo test -p tcplab-sim --release --test bbr3_scenarios -- --nocapture` (seed 1),
//! which prints them.
//!
//! Sources of the expectations:
//! - draft-ietf-ccwg-bbr (the IETF draft describing BBRv3): Sec. 1 (BBR aims at
//!   coexistence with Reno/CUBIC and uses loss to bound its operating point), the
//!   loss-rate bound `BBR.loss_thresh` = 2 % on inflight_hi, the ProbeRTT interval (5 s)
//!   and cwnd gain (0.5), and `BBRPickProbeWait` (2 s + random [0, 1 s), or a random
//!   0-1 extra round with the Reno-coexistence bound).
//! - The expectations after Google's IETF 117 / 119 BBRv3 slides (v3 keeps loss
//!   near loss_thresh in shallow buffers where v1 does not; v3 coexists better with
//!   CUBIC). The slides themselves were not reachable from the reference store, so no
//!   figure from them is compared; the tests check the direction with the tolerances
//!   stated beside each assertion.
//!
//! Path arithmetic (common::dumbbell, 1448-byte payload, 1500 wire bytes): at 50 Mbit/s
//! a packet takes 0.24 ms on the bottleneck; BDP at 40 ms = 250 000 bytes = 166.7
//! packets.

mod common;
use common::*;

use tcplab_sim::NativeCc;
use tcplab_sim::{RunOutput, World};

/// Retransmitted / sent data packets of the flows running `cc`.
fn retrans_rate(out: &RunOutput, cc: &str) -> f64 {
    let fl = out.flows.iter().filter(|f| f.cc == cc);
    let (r, s) = fl.fold((0u64, 0u64), |(r, s), f| {
        (r + f.retransmitted_packets, s + f.sent_packets)
    });
    r as f64 / s as f64
}

/// Per-flow mean throughput (bit/s) over (from, to].
fn rates(out: &RunOutput, n: usize, from: u64, to: u64) -> Vec<f64> {
    (0..n as u64)
        .map(|i| flow_mean(out, "throughput_bps", i, from, to))
        .collect()
}

/// `cc` x n over `rate` Mbit/s, 40 ms, a 0.5 BDP drop-tail buffer, 60 s.
fn shallow(cc: &str, n: usize, rate: u64) -> RunOutput {
    World::run_config(&dumbbell(cc, n, rate, 40 * MS, 0.5, 60 * S), &NativeCc).unwrap()
}

/// Shallow buffer, flows of one kind. Expectation (draft-ietf-ccwg-bbr's loss_thresh on
/// inflight_hi, v3's `bbr_loss_thresh` / `bbr_is_inflight_too_high`; the issue, after
/// Google's slides: v1 ignores loss and retransmits a large fraction in shallow
/// buffers, v3 bounds loss near 2 %): BBRv3's retransmission rate stays near or below
/// loss_thresh, BBRv1's is far higher, and v3 still fills the link.
/// Tolerances: v3 <= 2 x loss_thresh = 3.9 % (a probe's overshoot is detected per lost
/// packet, but a round of it is already in flight); v1 >= 3 x v3 and >= 3 %; v3
/// utilisation (5-60 s) >= 90 %.
/// Measured: 4 flows at 50 Mbit/s: v3 0.40 % (util 0.977, Jain 0.998), v1 11.9 %
/// (util 0.981); at 10 Mbit/s: v3 2.68 % (util 0.981), v1 13.8 %. (Also seen while
/// writing this test, not asserted: 8 flows / 0.25 BDP / 50 Mbit/s: v3 1.06 %, v1 9.8 %;
/// 2 flows / 100 Mbit/s: v3 0.22 %, v1 3.4 %.)
#[test]
fn bbr3_keeps_its_retransmission_rate_near_loss_thresh_in_a_shallow_buffer() {
    for rate in [50_000_000u64, 10_000_000] {
        let v3 = shallow("bbr3", 4, rate);
        let v1 = shallow("bbr", 4, rate);
        let (r3, r1) = (retrans_rate(&v3, "bbr3"), retrans_rate(&v1, "bbr"));
        let x3 = rates(&v3, 4, 5 * S, 60 * S);
        let x1 = rates(&v1, 4, 5 * S, 60 * S);
        let payload = rate as f64 * 1448.0 / 1500.0;
        let util3 = x3.iter().sum::<f64>() / payload;
        let util1 = x1.iter().sum::<f64>() / payload;
        eprintln!(
            "4 flows, {} Mbit/s, 40 ms, 0.5 BDP: retransmission rate bbr3 {:.4} (util {util3:.3}, Jain {:.3}), \
             bbr {:.4} (util {util1:.3}, Jain {:.3})",
            rate / 1_000_000,
            r3,
            jain(&x3),
            r1,
            jain(&x1)
        );
        assert!(r3 <= 2.0 * 5.0 / 256.0, "bbr3 retransmission rate {r3}");
        assert!(r1 >= 3.0 * r3 && r1 >= 0.03, "bbr {r1} vs bbr3 {r3}");
        assert!(util3 >= 0.9, "bbr3 utilisation {util3}");
    }
}

/// BBR (v1 or v3) flow 0 against CUBIC flow 1: CUBIC's share of the summed mean
/// throughput over (from, 60 or 120 s], and Jain's index.
fn vs_cubic(
    cc: &str,
    rate: u64,
    rtt_ns: u64,
    buffer_bdp: f64,
    duration: u64,
    from: u64,
) -> (f64, f64) {
    let mut cfg = dumbbell(cc, 2, rate, rtt_ns, buffer_bdp, duration);
    cfg.flows[1].cc = "cubic".into();
    let out = World::run_config(&cfg, &NativeCc).unwrap();
    let x = rates(&out, 2, from, duration);
    (x[1] / (x[0] + x[1]), jain(&x))
}

/// Shallow buffer against CUBIC, the scenario of bbr_scenarios.rs
/// (BBR-CWS Fig. 9: 50 Mbit/s, 10 ms, 0.5 BDP), where v1 takes ~96 %. Expectation
/// (draft-ietf-ccwg-bbr Sec. 1, coexistence with Reno/CUBIC as a design goal, via
/// inflight_hi and the loss response; the issue, after Google's slides): v3 leaves CUBIC
/// a far larger share. Tolerance: CUBIC share with v3 >= 2 x with v1, and >= 0.10.
/// Measured: CUBIC share 0.150 with v3 (Jain 0.671), 0.039 with v1 (Jain 0.540); v3
/// still takes 85 %, far from an even split (at 40 ms instead of 10 ms, seen while
/// writing this test: 0.241 at 50 Mbit/s, 0.439 at 10 Mbit/s, vs v1's 0.074 / 0.078).
#[test]
fn bbr3_leaves_cubic_far_more_of_a_shallow_buffer_than_bbr_v1() {
    let (s3, j3) = vs_cubic("bbr3", 50_000_000, 10 * MS, 0.5, 60 * S, 10 * S);
    let (s1, j1) = vs_cubic("bbr", 50_000_000, 10 * MS, 0.5, 60 * S, 10 * S);
    eprintln!("vs CUBIC, 50 Mbit/s, 10 ms, 0.5 BDP: CUBIC share with bbr3 {s3:.3} (Jain {j3:.3}), with bbr {s1:.3} (Jain {j1:.3})");
    assert!(
        s3 >= 2.0 * s1 && s3 >= 0.10,
        "CUBIC share with bbr3 {s3}, with bbr {s1}"
    );
}

/// Deep buffer (5 BDP) against CUBIC, 50 Mbit/s, 40 ms, 120 s (means over 10-120 s).
/// Expectation (the issue's, after Google's coexistence claims for v3): v3 shares more
/// evenly than v1. What holds: v1 is held to its 2 BDP cwnd while CUBIC fills the buffer,
/// so CUBIC gets more against v1 than against v3, and both leave CUBIC 30-70 %.
/// Tolerance: CUBIC share with v3 < with v1, both in [0.3, 0.7].
/// Measured (0.2.0): CUBIC share 0.414 with v3 (Jain 0.971), 0.602 with v1 (Jain
/// 0.960). With `tcp.receive_buffer = "unlimited"` (the receiver before 0.2.0): 0.428
/// (Jain 0.980) and 0.601 (Jain 0.961); with the receive-buffer model but before
/// CUBIC's HyStart round fix: 0.411 (0.969) and 0.559 (0.986). So which of the two is
/// "more even" by Jain depends on how CUBIC's slow start ends, and on the path (seen while writing this test, unlimited buffer: at 10 Mbit/s Jain 0.996
/// (v3) vs 1.000 (v1); at 3 BDP 0.953 vs 0.988; at 20 ms 0.997 vs 0.977; at 20 Mbit/s /
/// 8 BDP 0.990 vs 0.938): the expectation is not asserted. Reported as
/// measured, not tuned.
#[test]
fn bbr3_leaves_cubic_less_of_a_deep_buffer_than_bbr_v1_both_between_30_and_70_percent() {
    let (s3, j3) = vs_cubic("bbr3", 50_000_000, 40 * MS, 5.0, 120 * S, 10 * S);
    let (s1, j1) = vs_cubic("bbr", 50_000_000, 40 * MS, 5.0, 120 * S, 10 * S);
    eprintln!("vs CUBIC, 50 Mbit/s, 40 ms, 5 BDP: CUBIC share with bbr3 {s3:.3} (Jain {j3:.3}), with bbr {s1:.3} (Jain {j1:.3})");
    assert!(s3 < s1, "CUBIC share with bbr3 {s3} >= with bbr {s1}");
    assert!(
        (0.3..=0.7).contains(&s3) && (0.3..=0.7).contains(&s1),
        "CUBIC share with bbr3 {s3}, with bbr {s1}"
    );
}

/// Seconds of each change of `cc_mode`/`cc_phase` of flow 0: (time, mode, phase, cwnd).
fn transitions(out: &RunOutput) -> Vec<(f64, String, String, f64)> {
    let t = u64_col(out, "time_ns");
    let mode = str_col(out, "cc_mode");
    let phase = str_col(out, "cc_phase");
    let cwnd = f64_col(out, "cwnd_pkts");
    let mut v: Vec<(f64, String, String, f64)> = Vec::new();
    for i in 0..t.len() {
        if v.last().is_none_or(|l| l.1 != mode[i] || l.2 != phase[i]) {
            v.push((
                t[i] as f64 / 1e9,
                mode[i].clone(),
                phase[i].clone(),
                cwnd[i],
            ));
        }
    }
    v
}

/// One flow, 50 Mbit/s, 40 ms, 2 BDP buffer (no loss), 10 ms samples. Expectations from
/// draft-ietf-ccwg-bbr Sec. 4.6 (ProbeRTTInterval = 5 s, ProbeRTTDuration = 200 ms,
/// ProbeRTT cwnd = BBRProbeRTTCwndGain 0.5 x BDP) and Sec. 4.3.3.5 (the wall-clock
/// bandwidth-probe wait, 2 s + random [0, 1 s)), also the v3 commit's constants.
#[test]
fn bbr3_probes_rtt_every_five_seconds_at_half_a_bdp_and_bandwidth_every_two_to_three() {
    let mut cfg = dumbbell("bbr3", 1, 50_000_000, 40 * MS, 2.0, 40 * S);
    cfg.sample_interval_ns = 10 * MS;
    let out = World::run_config(&cfg, &NativeCc).unwrap();
    let tr = transitions(&out);
    for (t, m, p, c) in &tr {
        eprintln!("{t:6.2} s {m}/{p} cwnd {c}");
    }
    // PROBE_RTT entries: 5 s after the last min_rtt refresh, which is the exit of the
    // previous PROBE_RTT (200 ms + a round later), so 5.0-5.5 s apart (measured 5.2-5.3).
    let entries: Vec<f64> = tr
        .iter()
        .filter(|x| x.1 == "PROBE_RTT")
        .map(|x| x.0)
        .collect();
    let gaps: Vec<f64> = entries.windows(2).map(|w| w[1] - w[0]).collect();
    // PROBE_RTT cwnd: 0.5 x BDP, BDP = 4166.7 payload packets/s x 41.27 ms = 172
    // packets, so 86; within 10 % (measured 84: the bw estimate is 48.3 of 48.27
    // Mbit/s payload, the 1 % pacing margin lowers what is delivered).
    let rtt_cwnd: Vec<f64> = tr
        .iter()
        .filter(|x| x.1 == "PROBE_RTT")
        .map(|x| x.3)
        .collect();
    // Bandwidth probes (REFILL) 2-3 s after the cycle began (entering DOWN, or leaving
    // PROBE_RTT into CRUISE); the Reno-coexistence bound min(63 rounds, BDP) x 41 ms =
    // 2.6 s can come first, still inside the range. 20 ms of sampling slack.
    let mut waits = Vec::new();
    let mut start = None;
    for w in tr.windows(2) {
        let (prev, cur) = (&w[0], &w[1]);
        if cur.2 == "DOWN" || (prev.1 == "PROBE_RTT" && cur.1 == "PROBE_BW") {
            start = Some(cur.0);
        }
        if cur.2 == "REFILL" {
            if let Some(s) = start.take() {
                waits.push(cur.0 - s);
            }
        }
    }
    eprintln!(
        "PROBE_RTT gaps {gaps:.2?} s, cwnd {rtt_cwnd:?}; probe waits {waits:.2?} s; {:?}",
        out.flows[0]
    );
    assert!(gaps.len() >= 6, "{entries:?}");
    assert!(gaps.iter().all(|g| (5.0..=5.5).contains(g)), "{gaps:?}");
    assert!(
        rtt_cwnd.iter().all(|c| (77.0..=95.0).contains(c)),
        "{rtt_cwnd:?}"
    );
    assert!(waits.len() >= 6, "{waits:?}");
    assert!(
        waits.iter().all(|w| (2.0 - 0.02..=3.0 + 0.02).contains(w)),
        "{waits:?}"
    );
}

// ---- BBRv2 (`bbr2`, google/bbr v2alpha tcp_bbr2.c, sharing bbr3's code) ----
// Source: draft-cardwell-iccrg-bbr-congestion-control-02 (the draft that specified v2:
// loss_thresh 2 % bounding inflight_hi, Reno/CUBIC coexistence as a goal) and
// tcp_bbr2.c itself.

/// Shallow buffer, as the v3 test: v2 bounds its loss like v3 and unlike v1.
/// Tolerances as there: <= 2 x loss_thresh, v1 >= 3 x v2, utilisation >= 90 %.
/// Measured: 50 Mbit/s bbr2 0.25 % (util 0.979, Jain 0.996); 10 Mbit/s bbr2 0.53 %
/// (util 0.979, Jain 0.845); bbr (v1) 11.9 % and 13.8 % (first test).
#[test]
fn bbr2_keeps_its_retransmission_rate_near_loss_thresh_in_a_shallow_buffer() {
    for rate in [50_000_000u64, 10_000_000] {
        let v2 = shallow("bbr2", 4, rate);
        let v1 = shallow("bbr", 4, rate);
        let (r2, r1) = (retrans_rate(&v2, "bbr2"), retrans_rate(&v1, "bbr"));
        let x2 = rates(&v2, 4, 5 * S, 60 * S);
        let util2 = x2.iter().sum::<f64>() / (rate as f64 * 1448.0 / 1500.0);
        eprintln!(
            "4 flows, {} Mbit/s, 40 ms, 0.5 BDP: retransmission rate bbr2 {r2:.4} (util {util2:.3}, Jain {:.3}), bbr {r1:.4}",
            rate / 1_000_000,
            jain(&x2)
        );
        assert!(r2 <= 2.0 * 5.0 / 256.0, "bbr2 retransmission rate {r2}");
        assert!(r1 >= 3.0 * r2 && r1 >= 0.03, "bbr {r1} vs bbr2 {r2}");
        assert!(util2 >= 0.9, "bbr2 utilisation {util2}");
    }
}

/// Shallow buffer against CUBIC (the BBR-CWS Fig. 9 path, as the v3 test). Tolerance:
/// CUBIC's share with v2 >= 2 x with v1. Measured: 0.593 (Jain 0.967) vs 0.039; deep
/// buffer (50 Mbit/s, 40 ms, 5 BDP, 120 s, seen while writing, not asserted): 0.460
/// (Jain 0.994).
#[test]
fn bbr2_leaves_cubic_far_more_of_a_shallow_buffer_than_bbr_v1() {
    let (s2, j2) = vs_cubic("bbr2", 50_000_000, 10 * MS, 0.5, 60 * S, 10 * S);
    let (s1, _) = vs_cubic("bbr", 50_000_000, 10 * MS, 0.5, 60 * S, 10 * S);
    eprintln!("vs CUBIC, 50 Mbit/s, 10 ms, 0.5 BDP: CUBIC share with bbr2 {s2:.3} (Jain {j2:.3}), with bbr {s1:.3}");
    assert!(
        s2 >= 2.0 * s1 && s2 >= 0.10,
        "CUBIC share with bbr2 {s2}, with bbr {s1}"
    );
}

/// tcp_bbr2.c's `bbr_update_min_rtt` refreshes the 5 s PROBE_RTT filter also with a
/// sample equal to the minimum (`<=`, as v1 before upstream 1b9e2a8c99a5; v3: `<`).
/// A lone flow that keeps no standing queue sees such samples all the time, so v2
/// enters PROBE_RTT only once, when the handshake's min_rtt expires (the SYN-ACK's
/// header-only round trip is shorter than any data sample, so nothing refreshes it:
/// 5 s after init at 0.04 s), and never again; v3 enters every ~5.2 s (first
/// PROBE_RTT test). Expected from the code, not from a published figure; checked: one
/// entry in 30 s for bbr2, at 5.0-5.2 s, at least 4 for bbr3. Also: bw probes every
/// 2-3 s (the v2 draft's probe wait, `bbr2_pick_probe_wait`); measured REFILL gaps
/// 2.13-2.66 s.
#[test]
fn bbr2_without_a_queue_postpones_probe_rtt_where_bbr3_does_not() {
    let run = |cc: &str| {
        let mut cfg = dumbbell(cc, 1, 50_000_000, 40 * MS, 2.0, 30 * S);
        cfg.sample_interval_ns = 10 * MS;
        World::run_config(&cfg, &NativeCc).unwrap()
    };
    let (v2, v3) = (run("bbr2"), run("bbr3"));
    let entries = |out: &RunOutput| {
        transitions(out)
            .iter()
            .filter(|x| x.1 == "PROBE_RTT")
            .count()
    };
    let refills: Vec<f64> = transitions(&v2)
        .iter()
        .filter(|x| x.2 == "REFILL")
        .map(|x| x.0)
        .collect();
    // The gap around the one PROBE_RTT (at ~5 s) also holds PROBE_RTT and its exit.
    let probe_rtt_at = transitions(&v2)
        .iter()
        .find(|x| x.1 == "PROBE_RTT")
        .map_or(f64::NAN, |x| x.0);
    let gaps: Vec<f64> = refills
        .windows(2)
        .filter(|w| !(w[0] < probe_rtt_at && probe_rtt_at < w[1]))
        .map(|w| w[1] - w[0])
        .collect();
    eprintln!(
        "PROBE_RTT entries in 30 s: bbr2 {}, bbr3 {}; bbr2 REFILL gaps {gaps:.2?} s",
        entries(&v2),
        entries(&v3)
    );
    let v2_probe_rtt: Vec<f64> = transitions(&v2)
        .iter()
        .filter(|x| x.1 == "PROBE_RTT")
        .map(|x| x.0)
        .collect();
    assert!(
        v2_probe_rtt.len() == 1 && (5.0..=5.2).contains(&v2_probe_rtt[0]),
        "{v2_probe_rtt:?}"
    );
    assert!(entries(&v3) >= 4);
    // Each gap: DOWN and CRUISE after a ~0.1 s probe, then a 2-3 s wait: 2.0-3.2 s.
    assert!(
        gaps.len() >= 8 && gaps.iter().all(|g| (2.0..=3.2).contains(g)),
        "{gaps:?}"
    );
}
