//! Scenario tests of issue 5: each BBR research variant against plain `bbr` on the same
//! dumbbell and seed, in the scenario of its paper (or the seed paper that uses it as a
//! baseline), checking the direction the paper claims. Measured figures are written
//! beside each assertion (`cargo test -p tcplab-sim --test variant_scenarios --release
//! -- --nocapture` prints them); the tolerances are stated there. Durations are shorter
//! than the papers' 150-300 s to keep the suite quick, except BBR-ACD's cheap 1 Mbit/s
//! case, which runs the full 300 s.

mod common;
use common::*;

use tcplab_sim::config::{AppConfig, FlowConfig, QueueLimit, TcpConfig, WorldConfig};
use tcplab_sim::{RunOutput, World};

fn run(cfg: &WorldConfig) -> RunOutput {
    World::run_config(cfg).unwrap()
}

/// Mean throughput (bit/s) of each flow over from..to.
fn throughputs(out: &RunOutput, n: u64, from: u64, to: u64) -> Vec<f64> {
    (0..n).map(|f| flow_mean(out, "throughput_bps", f, from, to)).collect()
}

fn retransmissions(out: &RunOutput) -> u64 {
    out.flows.iter().map(|f| f.retransmitted_packets).sum()
}

fn goodput_bps(out: &RunOutput) -> f64 {
    out.flows.iter().map(|f| f.delivered_bytes as f64 * 8.0).sum::<f64>() / (out.duration_ns as f64 / 1e9)
}

// ---- BBR-ACD (seed 000), Section 3.3 / Table 1 -------------------------------------

/// Seven flows, 40 Mbit/s access links with 8 ms (sender side) and 2 ms (receiver
/// side), a 1 Mbit/s bottleneck, a drop-tail buffer of one BDP, all starting together.
/// The bottleneck delay: Section 3.3's text says 50 ms, Table 1 says 1 ms. We take
/// 50 ms: it gives a 120 ms base RTT, matching the ~125 ms minRTT the paper reports in
/// Section 5.2 (1 ms would give 22 ms). BDP = 1 Mbit/s x 120 ms = 15 000 bytes.
/// Segment size 536 bytes, ns-3's `TcpSocket::SegmentSize` default, which the paper's
/// own count implies: 68 420 packets sent in 300 s at under 1 Mbit/s leaves at most
/// ~550 bytes per packet (with 1448-byte segments BBR sends ~32 000 here).
fn acd_scenario(cc: &str) -> WorldConfig {
    let flows = (0..7)
        .map(|_| FlowConfig {
            cc: cc.to_string(),
            params: Default::default(),
            sender_access: link(40_000_000, 8 * MS),
            receiver_access: link(40_000_000, 2 * MS),
            start_ns: 0,
            stop_ns: None,
            app: AppConfig::Bulk,
        })
        .collect();
    WorldConfig {
        duration_ns: 300 * S,
        seed: 1,
        sample_interval_ns: 100 * MS,
        tcp: TcpConfig { mss_bytes: 536, ..TcpConfig::default() },
        bottleneck: tcplab_sim::config::LinkConfig {
            rate_bps: 1_000_000,
            delay_ns: 50 * MS,
            buffer: Some(QueueLimit::Bytes(15_000)),
            loss: 0.0,
        },
        bottleneck_reverse: None,
        flows,
        events: vec![],
    }
}

#[test]
fn bbr_acd_retransmits_less_than_bbr_with_no_less_goodput_in_the_congested_dumbbell() {
    let bbr = run(&acd_scenario("bbr"));
    let acd = run(&acd_scenario("bbr-acd"));
    let (rb, ra) = (retransmissions(&bbr), retransmissions(&acd));
    let (gb, ga) = (goodput_bps(&bbr), goodput_bps(&acd));
    eprintln!("acd dumbbell 300 s: retransmitted bbr {rb} acd {ra}; goodput bbr {gb:.0} acd {ga:.0} bit/s");
    // Paper (Section 5.2): BBR lost 28 775 of 68 420 packets, BBR-ACD 2311 of 70 324,
    // goodput 0.5 vs 0.86 Mbit/s. Measured: 11 352 vs 10 773 retransmissions (5 % fewer),
    // goodput 863 975 vs 867 648 bit/s. The direction holds; the size does not: here
    // most retransmissions follow RTOs (810 for BBR, 752 for ACD), which ACD does not
    // touch, and ACD finds congestion on only ~5 % of its 100 ms samples. Tolerance:
    // strictly fewer retransmissions, goodput within 1 % or better.
    assert!(ra < rb, "retransmissions acd {ra} bbr {rb}");
    assert!(ga >= 0.99 * gb, "goodput acd {ga} bbr {gb}");
}

// ---- BBR-CWS and Modest BBR vs CUBIC (seed 002), Section 5.4 scenario 1 ------------

/// One BBR-family flow and one CUBIC flow, 50 Mbit/s, 10 ms RTT, 60 s (paper: 150 s).
fn vs_cubic(cc: &str, buffer_bdp: f64) -> (Vec<f64>, u64, u64) {
    let mut cfg = dumbbell(cc, 2, 50_000_000, 10 * MS, buffer_bdp, 60 * S);
    cfg.flows[1].cc = "cubic".into();
    let out = run(&cfg);
    let x = throughputs(&out, 2, 10 * S, 60 * S);
    (x, out.flows[0].retransmitted_packets, out.flows[1].retransmitted_packets)
}

#[test]
fn bbr_cws_shares_a_shallow_buffer_with_cubic_fairer_than_bbr_and_retransmits_far_less() {
    let (xb, rb, rcb) = vs_cubic("bbr", 0.5);
    let (xc, rc, rcc) = vs_cubic("bbr-cws", 0.5);
    let (jb, jc) = (jain(&xb), jain(&xc));
    eprintln!(
        "0.5 BDP vs cubic: bbr {xb:?} Jain {jb:.3} retrans {rb} (cubic {rcb}); \
         bbr-cws {xc:?} Jain {jc:.3} retrans {rc} (cubic {rcc})"
    );
    // Paper (Figures 9, 11, 13a): BBR 16 945 retransmissions in 150 s and Jain 0.5-0.6;
    // BBR-CWS 96 % fewer retransmissions and Jain >= 0.9. Measured over 10-60 s: BBR
    // 46.3 vs CUBIC 1.0 Mbit/s (Jain 0.523), 3337 BBR retransmissions; BBR-CWS 45.5 vs
    // 2.6 Mbit/s (Jain 0.558), 516 retransmissions (85 % fewer). Retransmissions fall as
    // claimed; fairness improves only slightly: upper_scaling_factor settles near 0.57
    // (mean over 10-60 s), keeping cwnd ~57 packets against a 43-packet BDP, and CUBIC
    // still loses to the standing queue. Tolerance: Jain strictly above BBR's,
    // retransmissions at most a quarter of BBR's.
    assert!(jc > jb, "Jain bbr-cws {jc} bbr {jb}");
    assert!(rc * 4 <= rb, "retransmissions bbr-cws {rc} bbr {rb}");
}

#[test]
fn bbr_cws_with_cubic_in_a_deep_buffer() {
    let (xb, rb, _) = vs_cubic("bbr", 5.0);
    let (xc, rc, _) = vs_cubic("bbr-cws", 5.0);
    let (jb, jc) = (jain(&xb), jain(&xc));
    eprintln!("5 BDP vs cubic: bbr {xb:?} Jain {jb:.3} retrans {rb}; bbr-cws {xc:?} Jain {jc:.3} retrans {rc}");
    // Paper (Section 5.4, Figure 13a): BBR-CWS keeps Jain >= 0.9 in every buffer size.
    // Measured over 10-60 s: BBR 23.3 vs CUBIC 24.8 Mbit/s (Jain 0.999, 130
    // retransmissions: the 10 s cyclic exchange averages out over 50 s); BBR-CWS 29.6
    // vs 18.5 Mbit/s (Jain 0.950, 136 retransmissions). Tolerance: Jain >= 0.9.
    assert!(jc >= 0.9, "Jain bbr-cws {jc}");
}

#[test]
fn modest_bbr_shares_a_shallow_buffer_with_cubic_fairer_than_bbr() {
    let (xb, rb, _) = vs_cubic("bbr", 0.5);
    let (xm, rm, _) = vs_cubic("modest-bbr", 0.5);
    let (jb, jm) = (jain(&xb), jain(&xm));
    eprintln!("0.5 BDP vs cubic: bbr Jain {jb:.3} retrans {rb}; modest-bbr {xm:?} Jain {jm:.3} retrans {rm}");
    // Seed 002, Section 5.4 / Figure 13a: Modest BBR's index 0.6-0.85 in shallow
    // buffers against BBR's 0.5-0.6; Section 5.3: up to 75 % fewer retransmissions.
    // Measured over 10-60 s: Modest BBR 36.5 vs CUBIC 11.7 Mbit/s, Jain 0.790 (BBR
    // 0.523); 319 retransmissions (BBR 3337, 90 % fewer). Tolerance: Jain at least 0.1
    // above BBR's, retransmissions at most half of BBR's.
    assert!(jm >= jb + 0.1, "Jain modest {jm} bbr {jb}");
    assert!(rm * 2 <= rb, "retransmissions modest {rm} bbr {rb}");
}

// ---- RTT fairness: BBR-ACW, BBQ, DA-BBR (seed 001), Sections 5.2-5.3 ---------------

/// A 10 ms and a 50 ms flow of `cc` on 100 Mbit/s with a buffer of `buffer_bdp` BDPs of
/// the 50 ms path (the paper does not say whose BDP; 5 x 625 000 bytes is deep for both
/// flows), 60 s (paper: 300 s). Bottleneck delay 1 ms each way; the access links carry
/// the rest (2 ms and 12 ms each side, each way). Returns the mean throughputs over
/// 10-60 s and the retransmissions of both flows.
fn rtt_pair(cc: &str, buffer_bdp: f64) -> (Vec<f64>, u64) {
    let mut cfg = dumbbell(cc, 2, 100_000_000, 50 * MS, buffer_bdp, 60 * S);
    cfg.bottleneck.delay_ns = MS;
    for (f, access) in cfg.flows.iter_mut().zip([2 * MS, 12 * MS]) {
        f.sender_access.delay_ns = access;
        f.receiver_access.delay_ns = access;
    }
    let out = run(&cfg);
    (throughputs(&out, 2, 10 * S, 60 * S), retransmissions(&out))
}

#[test]
fn bbq_and_da_bbr_share_between_10_and_50_ms_flows_fairer_than_bbr() {
    let (xb, _) = rtt_pair("bbr", 5.0);
    let (xq, _) = rtt_pair("bbq", 5.0);
    let (xd, _) = rtt_pair("da-bbr", 5.0);
    let (jb, jq, jd) = (jain(&xb), jain(&xq), jain(&xd));
    eprintln!("10 vs 50 ms, 5 BDP: bbr {xb:?} Jain {jb:.3}; bbq {xq:?} Jain {jq:.3}; da-bbr {xd:?} Jain {jd:.3}");
    // Seed 001 Figure 8c (100 Mbit/s, 10 vs 50 ms): BBR ~0.6, BBQ ~0.9, DA-BBR ~0.95.
    // Measured: BBR 6.4 / 87.9 Mbit/s (Jain 0.572; the paper's Figure 5a: 8.9 / 85.2);
    // BBQ 23.3 / 71.0 (0.796); DA-BBR 47.9 / 46.6 (1.000: the 50 ms flow's gain is
    // 1 + 1 x 10/50 = 1.2 against the 10 ms flow's 2, so both queue 10 ms worth).
    // Tolerance: each at least 0.15 above BBR.
    assert!(jq >= jb + 0.15, "Jain bbq {jq} bbr {jb}");
    assert!(jd >= jb + 0.15, "Jain da-bbr {jd} bbr {jb}");
}

#[test]
fn bbr_acw_equals_bbr_in_a_loss_free_deep_buffer() {
    let (xb, rb) = rtt_pair("bbr", 5.0);
    let (xa, ra) = rtt_pair("bbr-acw", 5.0);
    let (jb, ja) = (jain(&xb), jain(&xa));
    eprintln!("10 vs 50 ms, 5 BDP: bbr {xb:?} Jain {jb:.3} retrans {rb}; bbr-acw {xa:?} Jain {ja:.3} retrans {ra}");
    // The paper (Figure 5d, Figure 8c) reports Jain >= 0.92 for BBR-ACW here. Not
    // reproduced: Algorithm 1 lowers cwnd_gain only under high load *with loss*
    // (line 11), and raises it only when I_i <= 1.25 Q_i (line 5). Here both flows see
    // RTTs of 42 and 82 ms against RTTmin 10 and 50 ms (high load) and no packet is
    // lost, so every phase keeps gain 2 and the run is BBR's, packet for packet
    // (measured: 6.4 / 87.9 Mbit/s, Jain 0.572, 0 retransmissions, for both).
    // Tolerance: Jain within 0.01 of BBR's.
    assert!((ja - jb).abs() <= 0.01, "Jain bbr-acw {ja} bbr {jb}");
}

#[test]
fn bbr_acw_retransmits_less_than_bbr_and_is_fairer_in_a_shallow_buffer() {
    let (xb, rb) = rtt_pair("bbr", 0.5);
    let (xa, ra) = rtt_pair("bbr-acw", 0.5);
    let (jb, ja) = (jain(&xb), jain(&xa));
    eprintln!("10 vs 50 ms, 0.5 BDP: bbr {xb:?} Jain {jb:.3} retrans {rb}; bbr-acw {xa:?} Jain {ja:.3} retrans {ra}");
    // Seed 001 Section 5.3 / Figure 9: at 0.5 BDP BBR-ACW cuts retransmissions by up to
    // 78 %. Measured: BBR 35 990 (12.3 / 82.2 Mbit/s, Jain 0.647), BBR-ACW 15 423
    // (14.0 / 80.5 Mbit/s, Jain 0.669): 57 % fewer, as losses put phases in the beta
    // branch (mean cwnd_gain 1.79 and 1.61). Tolerance: at most 60 % of BBR's
    // retransmissions, Jain strictly higher.
    assert!(ra * 10 <= rb * 6, "retransmissions bbr-acw {ra} bbr {rb}");
    assert!(ja > jb, "Jain bbr-acw {ja} bbr {jb}");
}
