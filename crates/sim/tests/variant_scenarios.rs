//! Scenario tests: each BBR research variant against plain `bbr` on the same
//! dumbbell and seed, in the scenario of its paper (or the seed paper that uses it as a
//! baseline), checking the direction the paper claims. Measured figures are written
//! beside each assertion (`cargo test -p tcplab-sim --release --test variant_scenarios
//! -- --nocapture` prints them, seed 1; the other seeds' figures come from the same
//! tests with `WorldConfig::seed` changed); the tolerances are stated there.
//! docs/variants.md and docs/RESULTS.md carry the same figures. Durations are shorter
//! than the papers' 150-300 s to keep the suite quick, except BBR-ACD's cheap 1 Mbit/s
//! case, which runs the full 300 s.

mod common;
use common::*;

use tcplab_sim::config::{AppConfig, FlowConfig, QueueLimit, TcpConfig, WorldConfig};
use tcplab_sim::NativeCc;
use tcplab_sim::{RunOutput, World};

fn run(cfg: &WorldConfig) -> RunOutput {
    World::run_config(cfg, &NativeCc).unwrap()
}

/// Mean throughput (bit/s) of each flow over from..to.
fn throughputs(out: &RunOutput, n: u64, from: u64, to: u64) -> Vec<f64> {
    (0..n)
        .map(|f| flow_mean(out, "throughput_bps", f, from, to))
        .collect()
}

fn retransmissions(out: &RunOutput) -> u64 {
    out.flows.iter().map(|f| f.retransmitted_packets).sum()
}

fn goodput_bps(out: &RunOutput) -> f64 {
    out.flows
        .iter()
        .map(|f| f.delivered_bytes as f64 * 8.0)
        .sum::<f64>()
        / (out.duration_ns as f64 / 1e9)
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
            ecn: None,
            onoff: None,
            bpf_object: None,
            bpf_state: None,
        })
        .collect();
    WorldConfig {
        duration_ns: 300 * S,
        seed: 1,
        sample_interval_ns: 100 * MS,
        tcp: TcpConfig {
            mss_bytes: 536,
            ..TcpConfig::default()
        },
        bottleneck: tcplab_sim::config::LinkConfig {
            rate_bps: 1_000_000,
            delay_ns: 50 * MS,
            buffer: Some(QueueLimit::Bytes(15_000)),
            loss: 0.0,
            aqm: None,
            ..Default::default()
        },
        bottleneck_reverse: None,
        flows,
        events: vec![],
        shaping: Default::default(),
        capture: vec![],
        links: vec![],
        paths: vec![],
        sources: vec![],
        probes: vec![],
        agents: vec![],
    }
}

#[test]
fn bbr_acd_and_bbr_retransmit_alike_in_the_paper_1_mbit_dumbbell() {
    let bbr = run(&acd_scenario("bbr"));
    let acd = run(&acd_scenario("bbr-acd"));
    let (rb, ra) = (retransmissions(&bbr), retransmissions(&acd));
    let (gb, ga) = (goodput_bps(&bbr), goodput_bps(&acd));
    let rto = |o: &RunOutput| o.flows.iter().map(|f| f.rto_count).sum::<u64>();
    eprintln!(
        "acd dumbbell 300 s: retransmitted bbr {rb} acd {ra}; goodput bbr {gb:.0} acd {ga:.0} bit/s; RTOs bbr {} acd {}",
        rto(&bbr),
        rto(&acd)
    );
    // Paper (Section 5.2): BBR lost 28 775 of 68 420 packets, BBR-ACD 2311 of 70 324;
    // goodput 0.5 vs 0.86 Mbit/s. NOT reproduced. Measured with RTT samples from the
    // timestamps of ACKs of retransmitted data: 10 101 vs 11 141 (ACD 10.3 %
    // more), goodput 908 599 vs 909 085 bit/s, RTOs 5 vs 8; ACD's steady-RTT test now
    // also sees whole-millisecond samples during recovery, where it saw none. (0.2.0,
    // Linux receive buffer: 10 355 vs 10 920 retransmissions (ACD 5.5 % more), goodput
    // 908 241 vs 908 170 bit/s, RTOs 6 vs 23; 0.1.0 with tail loss probes: 10 530 vs
    // 10 673, RTOs 2 vs 62;
    // before TLP: 10 996 vs 10 227, RTOs 4 vs 31; seeds 2-5 then: ACD between
    // 0.3 % and 8.1 % more). Why:
    // a 1-BDP buffer keeps every RTT below 2 x min_rtt, so only the steady-RTT test can
    // fire, and our BBR does not fall into the RTO storms of the paper's ns-3 BBR, which
    // is where ACD's halving paid off there. Tolerance: retransmissions from 10 % below
    // to 15 % above BBR's (the paper's claim is a 12x reduction), goodput within 1 %.
    // (The testbed case below shows ACD's effect.)
    assert!(
        ra * 20 <= rb * 23 && ra * 10 >= rb * 9,
        "retransmissions acd {ra} bbr {rb}"
    );
    assert!((ga - gb).abs() <= 0.01 * gb, "goodput acd {ga} bbr {gb}");
}

/// Testbed scenario #3 (Section 3.1): buffer 100 packets, no random loss, two senders
/// of five flows each, the first five starting at 0-4 s, the other five at 55-59 s.
/// The paper gives neither the RTT nor the rate of its testbed; Table 2's ~9.6-9.9
/// Mbit/s totals suggest 10 Mbit/s, and we take the project's 40 ms base RTT
/// (BDP 33 packets, so the buffer is 3 BDP). 120 s.
fn acd_testbed(cc: &str) -> WorldConfig {
    let mut cfg = dumbbell(cc, 10, 10_000_000, 40 * MS, 1.0, 120 * S);
    cfg.bottleneck.buffer = Some(QueueLimit::Packets(100));
    for (i, f) in cfg.flows.iter_mut().enumerate() {
        let i = i as u64;
        f.start_ns = if i < 5 { i * S } else { (55 + i - 5) * S };
    }
    cfg
}

#[test]
fn bbr_acd_retransmits_far_less_than_bbr_with_equal_goodput_in_the_100_packet_testbed() {
    let bbr = run(&acd_testbed("bbr"));
    let acd = run(&acd_testbed("bbr-acd"));
    let (rb, ra) = (retransmissions(&bbr), retransmissions(&acd));
    let (gb, ga) = (goodput_bps(&bbr), goodput_bps(&acd));
    eprintln!(
        "acd testbed #3: retransmitted bbr {rb} acd {ra}; goodput bbr {gb:.0} acd {ga:.0} bit/s"
    );
    // Paper Table 2, scenario #3: 9990 vs 4568 retransmissions (54 % fewer), goodput
    // 8.82 vs 9.64 Mbit/s. Measured (0.2.0): 14 322 vs 2755 (81 % fewer), goodput 9.600
    // vs 9.581 Mbit/s (0.1.0 with tail loss probes: 11 898 vs 3074; before TLP: 17 632 vs 3063; seeds 3-5 then: 10 748
    // vs 3100, 11 728 vs 2580, 14 621 vs 3194; seed 2 gave 8910 vs 5546, which missed the
    // tolerance below). Retransmissions as claimed; goodput equal, not higher.
    // Tolerance: at most half of BBR's retransmissions, goodput within 1 %.
    assert!(ra * 2 <= rb, "retransmissions acd {ra} bbr {rb}");
    assert!(ga >= 0.99 * gb, "goodput acd {ga} bbr {gb}");
}

// ---- BBR-CWS and Modest BBR vs CUBIC (seed 002), Section 5.4 scenario 1 ------------

/// One BBR-family flow and one CUBIC flow, 50 Mbit/s, 10 ms RTT, 60 s (paper: 150 s).
fn vs_cubic(cc: &str, buffer_bdp: f64) -> (Vec<f64>, u64, u64) {
    vs_cubic_seed(cc, buffer_bdp, 1)
}

fn vs_cubic_seed(cc: &str, buffer_bdp: f64, seed: u64) -> (Vec<f64>, u64, u64) {
    let mut cfg = dumbbell(cc, 2, 50_000_000, 10 * MS, buffer_bdp, 60 * S);
    cfg.seed = seed;
    cfg.flows[1].cc = "cubic".into();
    let out = run(&cfg);
    let x = throughputs(&out, 2, 10 * S, 60 * S);
    (
        x,
        out.flows[0].retransmitted_packets,
        out.flows[1].retransmitted_packets,
    )
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
    // BBR-CWS 96 % fewer retransmissions and Jain >= 0.9. Measured over 10-60 s (0.2.0):
    // BBR 45.5 vs CUBIC 2.0 Mbit/s (Jain 0.544), 3992 BBR retransmissions; BBR-CWS 42.9
    // vs 4.5 Mbit/s (Jain 0.603), 662 retransmissions (83 % fewer). (0.1.0 with tail
    // loss probes: Jain 0.540 and 0.600, 3726 and 668.) Before TLP seeds 2, 3 gave Jain 0.589 and 0.589 against 0.531 and 0.531.
    // Retransmissions fall as claimed; fairness
    // improves far less than claimed: upper_scaling_factor keeps cwnd above the BDP and
    // CUBIC still loses to the standing queue. Tolerance: Jain at least 0.05 above
    // BBR's, retransmissions at most a quarter of BBR's.
    assert!(jc >= jb + 0.05, "Jain bbr-cws {jc} bbr {jb}");
    assert!(rc * 4 <= rb, "retransmissions bbr-cws {rc} bbr {rb}");
}

#[test]
fn bbr_cws_with_cubic_in_a_deep_buffer() {
    let (xb, rb, _) = vs_cubic("bbr", 5.0);
    let jc: Vec<f64> = (1..=5)
        .map(|seed| jain(&vs_cubic_seed("bbr-cws", 5.0, seed).0))
        .collect();
    let mut sorted = jc.clone();
    sorted.sort_by(f64::total_cmp);
    eprintln!(
        "5 BDP vs cubic: bbr {xb:?} Jain {:.3} retrans {rb}; bbr-cws Jain, seeds 1-5: {jc:.3?}",
        jain(&xb)
    );
    // Paper (Section 5.4, Figure 13a): BBR-CWS keeps Jain >= 0.9 in every buffer size.
    // Measured over 10-60 s, seeds 1-5 (0.2.0): BBR-CWS 0.952, 0.954, 0.948, 0.943, 0.941
    // (BBR 0.996). With `tcp.receive_buffer = "unlimited"` (the receiver before 0.2.0):
    // 0.953, 0.951, 0.954, 0.928, 0.943. One seed can fall far: with the receive-buffer
    // model but before CUBIC's HyStart round fix, seed 1 gave 0.754 (37.9 vs 10.3
    // Mbit/s). Tolerance: the median of the five >= 0.9.
    assert!(sorted[2] >= 0.9, "Jain bbr-cws over seeds 1-5 {jc:?}");
}

#[test]
fn modest_bbr_shares_a_shallow_buffer_with_cubic_fairer_than_bbr() {
    let (xb, rb, _) = vs_cubic("bbr", 0.5);
    let (xm, rm, _) = vs_cubic("modest-bbr", 0.5);
    let (jb, jm) = (jain(&xb), jain(&xm));
    eprintln!("0.5 BDP vs cubic: bbr Jain {jb:.3} retrans {rb}; modest-bbr {xm:?} Jain {jm:.3} retrans {rm}");
    // Seed 002, Section 5.4 / Figure 13a: Modest BBR's index 0.6-0.85 in shallow
    // buffers against BBR's 0.5-0.6; Section 5.3: up to 75 % fewer retransmissions.
    // Measured over 10-60 s (0.2.0): Modest BBR 36.4 vs CUBIC 11.2 Mbit/s, Jain 0.781
    // (BBR 0.544); 280 retransmissions (BBR 3992, 93 % fewer). (0.1.0 with tail loss
    // probes: Jain 0.816, 330 retransmissions.) Before TLP
    // seeds 2, 3 gave Jain 0.833, 0.789.
    // Tolerance: Jain at least 0.1 above BBR's, retransmissions at most half of BBR's.
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
    // Defaults (1 ms probe cap / reference RTT, the kernel's pacing time slice, chosen
    // independently of this scenario; see the modules). Measured (0.2.0): BBR 7.0 / 87.4
    // Mbit/s (Jain 0.580; the paper's Figure 5a: 8.9 / 85.2); BBQ 44.5 / 50.1 (0.997:
    // both flows probe 1 ms); DA-BBR 24.7 / 69.9 (0.814; cwnd gains 1.1 and 1.02). (0.1.0:
    // 0.569, 0.996, 0.812.) With the earlier
    // 10 ms defaults (equal to this scenario's short flow) BBQ gave 0.799, DA-BBR 1.000.
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
    // RTTs tens of ms above RTTmin 10 and 50 ms (high load) and no packet is
    // lost, so every phase keeps gain 2 and the run is BBR's, packet for packet
    // (measured: 6.1 / 88.2 Mbit/s, Jain 0.569, 0 retransmissions, for both; likewise
    // seeds 2-5).
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
    // 78 %. Measured (0.2.0): BBR 23 177 (13.2 / 81.6 Mbit/s, Jain 0.657), BBR-ACW
    // 12 438 (17.0 / 77.5 Mbit/s, Jain 0.709): 46 % fewer (0.1.0: 25 331 vs 11 326, 55 %
    // fewer, Jain 0.646 vs 0.704), as losses put phases in the beta
    // branch. The reduction depends on the seed: seeds 2, 3: 31 % and 41 % fewer
    // (18 464 vs 12 782, 21 933 vs 12 949; Jain 0.707 vs 0.627 and 0.711 vs 0.648);
    // seeds 4, 5: 41 % and 39 % fewer. (Before SACK compression seeds 2 and 3 missed
    // the tolerance below.) Tolerance: at most 80 % of BBR's retransmissions, Jain
    // strictly higher.
    assert!(ra * 10 <= rb * 8, "retransmissions bbr-acw {ra} bbr {rb}");
    assert!(ja > jb, "Jain bbr-acw {ja} bbr {jb}");
}
