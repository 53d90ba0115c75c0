//! Scenario tests of BBR v1 (crates/cc/src/bbr) on the engine's dumbbell,
//! each against the behaviour the BBR papers report, with its tolerance and the
//! measured figures stated beside the assertion. The figures are from
//! `cargo test -p tcplab-sim --release --test bbr_scenarios -- --nocapture` (seed 1),
//! which prints them; docs/RESULTS.md compares them with the papers.
//!
//! Path arithmetic used throughout (common::dumbbell, 1448-byte payload, 1500 wire
//! bytes, 1 Gbit/s access links): at 10 Mbit/s a packet takes 1.2 ms on the
//! bottleneck, 833.3 packets/s, 9.653 Mbit/s of payload. The minimum RTT of a 40 ms
//! path is 40 ms propagation + 1.2 ms data serialization + 2 x 12 us on the access
//! links + 41.6 us for a 52-byte ACK on the 10 Mbit/s reverse bottleneck (+ under 1 us
//! for the ACK on the access links) = 41.27 ms. BDP = 10 Mbit/s x 40 ms = 50 000 bytes.

mod common;
use common::*;

use tcplab_sim::config::LinkEvent;
use tcplab_sim::NativeCc;
use tcplab_sim::{RunOutput, World};

/// Payload rate of a 10 Mbit/s bottleneck: 833.33 packets/s x 1448 x 8 bit.
const PAYLOAD_10M: f64 = 10e6 * 1448.0 / 1500.0;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Bottleneck backlog (bytes) at sample times in (from, to], with the flow-0 mode.
fn backlog(out: &RunOutput, from: u64, to: u64) -> Vec<(u64, f64)> {
    let qt = out.queue_series.get("time_ns").unwrap().as_u64().unwrap();
    let qb = out
        .queue_series
        .get("backlog_bytes")
        .unwrap()
        .as_u64()
        .unwrap();
    (0..qt.len())
        .filter(|&i| qt[i] > from && qt[i] <= to)
        .map(|i| (qt[i], qb[i] as f64))
        .collect()
}

/// Row indices of `flow` with from < time <= to.
fn rows(out: &RunOutput, flow: u64, from: u64, to: u64) -> Vec<usize> {
    let t = u64_col(out, "time_ns");
    let f = u64_col(out, "flow");
    (0..t.len())
        .filter(|&i| f[i] == flow && t[i] > from && t[i] <= to)
        .collect()
}

#[test]
fn bbr_single_flow_fills_the_link_with_a_small_queue_and_probes_rtt_every_ten_seconds() {
    let cfg = dumbbell("bbr", 1, 10_000_000, 40 * MS, 5.0, 60 * S);
    let out = World::run_config(&cfg, &NativeCc).unwrap();
    let f = &out.flows[0];

    // Utilisation after 2 s >= 95 % (measured 98.0 %).
    let util = flow_mean(&out, "throughput_bps", 0, 2 * S, 60 * S) / PAYLOAD_10M;
    // After it, min_rtt in PROBE_BW within 1 ms of the path minimum 41.27 ms (the issue's "within
    // 1 ms of 40 ms" is for the propagation delay; the 1.27 ms of serialization is part
    // of every RTT). Measured 41.266 ms, and 41.836 ms after some PROBE_RTTs: there the
    // 4-packet flight moves in delayed-ACK pairs, and the kernel's pacing credit after
    // idle (tcp_update_skb_after_send forgives up to half a packet time) lets the second
    // of a pair leave ~0.6 ms after the first, so it waits ~0.57 ms behind it. (On
    // entering PROBE_RTT the expired filter takes the current, queued sample for a few
    // ms, as the kernel does; those rows are excluded.)
    // Until the first PROBE_RTT the estimate is the handshake's: the SYN-ACK's
    // header-only round trip, 40 ms + 2 x 41.6 us (52 B at 10 Mbit/s) + 4 x 0.416 us
    // (at 1 Gbit/s) = 40.085 ms -> 40 084 us, shorter than any data sample, so it holds
    // until it expires (as tcp_min_rtt does on a Linux host).
    let mode = str_col(&out, "cc_mode");
    let min_rtt = f64_col(&out, "cc_min_rtt_ms");
    // PROBE_RTT entries: 10 s after the last sample at min_rtt, so every 10.2-10.6 s
    // (200 ms + a round in PROBE_RTT, then the queue-free samples right after it).
    let t = u64_col(&out, "time_ns");
    let entries: Vec<f64> = (1..mode.len())
        .filter(|&i| mode[i] == "PROBE_RTT" && mode[i - 1] != "PROBE_RTT")
        .map(|i| t[i] as f64 / 1e9)
        .collect();
    let first_probe_rtt = (entries[0] * 1e9) as u64;
    let before: Vec<usize> = rows(&out, 0, 2 * S, first_probe_rtt)
        .into_iter()
        .filter(|&i| mode[i] == "PROBE_BW")
        .collect();
    assert!(!before.is_empty() && before.iter().all(|&i| min_rtt[i] == 40.084));
    let pbw = rows(&out, 0, first_probe_rtt, 60 * S)
        .into_iter()
        .filter(|&i| mode[i] == "PROBE_BW");
    let worst = pbw.map(|i| (min_rtt[i] - 41.27).abs()).fold(0.0, f64::max);
    // Queue in PROBE_BW, median over 2-60 s, in BDPs (measured 0.21: the quantization
    // budget of 6 packets plus the 1.25 probes).
    let bbr_q = median(
        backlog(&out, 2 * S, 60 * S)
            .into_iter()
            .filter(|(qt, _)| {
                let i = t.iter().position(|x| x == qt).unwrap();
                mode[i] == "PROBE_BW"
            })
            .map(|(_, b)| b / 50_000.0)
            .collect(),
    );
    // CUBIC, same scenario: measured median backlog 4.14 BDP.
    let cubic = World::run_config(
        &dumbbell("cubic", 1, 10_000_000, 40 * MS, 5.0, 60 * S),
        &NativeCc,
    )
    .unwrap();
    let cubic_q = median(
        backlog(&cubic, 2 * S, 60 * S)
            .into_iter()
            .map(|(_, b)| b / 50_000.0)
            .collect(),
    );
    eprintln!(
        "bbr single: util {util:.4}, worst |min_rtt - 41.27| {worst:.3} ms, PROBE_RTT at {entries:?} s, \
         median backlog {bbr_q:.3} BDP (cubic {cubic_q:.3}), dropped {} retransmitted {}",
        f.dropped_packets, f.retransmitted_packets
    );
    assert!(util >= 0.95, "utilisation {util}");
    assert!(worst <= 1.0, "min_rtt off the path minimum by {worst} ms");
    assert_eq!(entries.len(), 5, "{entries:?}");
    assert!((9.5..11.0).contains(&entries[0]), "{entries:?}");
    assert!(
        entries
            .windows(2)
            .all(|w| (10.0..11.0).contains(&(w[1] - w[0]))),
        "{entries:?}"
    );
    assert_eq!((f.dropped_packets, f.retransmitted_packets), (0, 0));
    assert!(bbr_q < 0.5, "BBR median backlog {bbr_q} BDP");
    assert!(cubic_q > 2.0, "CUBIC median backlog {cubic_q} BDP");
}

#[test]
fn bbr_follows_the_bottleneck_doubling_and_halving() {
    // BBR' report Sections 4.3-4.4, TUM Figure 4: 10 -> 20 Mbit/s at 20 s, back at 40 s.
    let mut cfg = dumbbell("bbr", 1, 10_000_000, 40 * MS, 5.0, 60 * S);
    let change = |at, rate| LinkEvent {
        at_ns: at,
        rate_bps: Some(rate),
        delay_ns: None,
        loss: None,
    };
    cfg.events = vec![change(20 * S, 20_000_000), change(40 * S, 10_000_000)];
    let out = World::run_config(&cfg, &NativeCc).unwrap();
    let infl_before = flow_mean(&out, "inflight_pkts", 0, 15 * S, 20 * S);
    let infl_after = flow_mean(&out, "inflight_pkts", 0, 21 * S, 22 * S);
    let bw = f64_col(&out, "cc_btlbw_bps");
    let t = u64_col(&out, "time_ns");
    // Last sample still holding the 20 Mbit/s estimate after the decrease.
    let held_until = rows(&out, 0, 40 * S, 60 * S)
        .into_iter()
        .filter(|&i| bw[i] > 15e6)
        .map(|i| t[i] as f64 / 1e9)
        .fold(40.0, f64::max);
    let late_q = median(
        backlog(&out, 47 * S, 60 * S)
            .into_iter()
            .map(|(_, b)| b / 50_000.0)
            .collect(),
    );
    let peak_q = backlog(&out, 40 * S, 41 * S)
        .into_iter()
        .map(|(_, b)| b / 50_000.0)
        .fold(0.0, f64::max);
    eprintln!(
        "bbr doubling: inflight {infl_before:.1} -> {infl_after:.1} pkts; 20 Mbit/s estimate held until {held_until:.1} s; \
         backlog peak {peak_q:.2} BDP after the decrease, median {late_q:.3} BDP over 47-60 s"
    );
    // The BDP doubles (34 -> 69 packets); within 2 s inflight follows: ratio in
    // [1.6, 2.4] (measured 41.1 -> 73.8 packets, 1.80).
    let ratio = infl_after / infl_before;
    assert!((1.6..=2.4).contains(&ratio), "inflight ratio {ratio}");
    // After the decrease the max filter keeps the old rate for 10 rounds of the
    // inflated RTT: ~112 queued packets make it 41 + 134 = 175 ms, 10 rounds = 1.75 s
    // (measured: held until 40.9 s; a PROBE_RTT at 40.3-40.7 s shortened the rounds).
    assert!(
        held_until > 40.05 && held_until <= 41.8,
        "held until {held_until}"
    );
    // The queue built by the stale estimate (measured peak 3.45 BDP) drains afterwards
    // (measured median 0.21 BDP over 47-60 s).
    assert!(peak_q > 1.0 && late_q < 0.5, "peak {peak_q}, late {late_q}");
}

#[test]
fn bbr_rate_dips_after_the_rtt_triples_until_the_old_min_rtt_expires() {
    // TUM Figure 4: the RTT triples at 56 s (data-direction bottleneck delay 10 -> 90 ms,
    // so 40 -> 120 ms; path minimum 41.27 -> 121.27 ms).
    let mut cfg = dumbbell("bbr", 1, 10_000_000, 40 * MS, 5.0, 80 * S);
    cfg.events = vec![LinkEvent {
        at_ns: 56 * S,
        rate_bps: None,
        delay_ns: Some(90 * MS),
        loss: None,
    }];
    let out = World::run_config(&cfg, &NativeCc).unwrap();
    let t = u64_col(&out, "time_ns");
    let min_rtt = f64_col(&out, "cc_min_rtt_ms");
    let expiry = rows(&out, 0, 56 * S, 80 * S)
        .into_iter()
        .find(|&i| min_rtt[i] > 100.0)
        .map(|i| t[i])
        .unwrap();
    let before = flow_mean(&out, "throughput_bps", 0, 45 * S, 55 * S);
    let dip = flow_mean(&out, "throughput_bps", 0, 57 * S, expiry - 200 * MS);
    let after = flow_mean(&out, "throughput_bps", 0, expiry + 2 * S, 80 * S);
    eprintln!(
        "bbr rtt x3: min_rtt expires at {:.1} s (-> {:.3} ms); throughput {before:.0} -> {dip:.0} -> {after:.0} bit/s",
        expiry as f64 / 1e9,
        min_rtt[rows(&out, 0, 79 * S, 80 * S)[0]]
    );
    // The old min_rtt is at most 10 s old at the change: it expires within 10.5 s
    // (measured 61.7 s, 10 s after the PROBE_RTT at ~51.3 s), then holds 121.27 ms.
    assert!(expiry <= 66_500 * MS, "expiry at {expiry}");
    assert!((min_rtt[rows(&out, 0, 79 * S, 80 * S)[0]] - 121.27).abs() < 1.0);
    // With min_rtt stuck at 41 ms, cwnd = 2 x bw x 41 ms is 0.68 of the new BDP, so the
    // flow is cwnd-limited and its bw estimate decays: measured 9.44 -> 6.05 Mbit/s.
    assert!(dip < 0.75 * before, "dip {dip} vs {before}");
    // Then it recovers (measured 9.44 Mbit/s).
    assert!(after >= 0.95 * before, "after {after} vs {before}");
}

#[test]
fn two_bbr_flows_started_together_share_fairly() {
    let out = World::run_config(
        &dumbbell("bbr", 2, 10_000_000, 40 * MS, 5.0, 60 * S),
        &NativeCc,
    )
    .unwrap();
    let x: Vec<f64> = (0..2)
        .map(|f| flow_mean(&out, "throughput_bps", f, 10 * S, 60 * S))
        .collect();
    let j = jain(&x);
    eprintln!("two bbr: {x:?} bit/s, Jain {j:.4}");
    assert!(j >= 0.9, "Jain {j} (measured 0.9999)");
}

/// Summed inflight of five BBR flows (100 ms, 5 BDP) over 10-60 s, in BDPs.
fn five_flow_inflight(extra_acked: bool) -> f64 {
    let mut cfg = dumbbell("bbr", 5, 10_000_000, 100 * MS, 5.0, 60 * S);
    for f in &mut cfg.flows {
        f.params
            .insert("extra_acked".into(), serde_json::Value::Bool(extra_acked));
    }
    let out = World::run_config(&cfg, &NativeCc).unwrap();
    let t = u64_col(&out, "time_ns");
    let infl = f64_col(&out, "inflight_pkts");
    let mut sums = std::collections::BTreeMap::new();
    for i in 0..t.len() {
        if t[i] > 10 * S {
            *sums.entry(t[i]).or_insert(0.0) += infl[i];
        }
    }
    // BDP = 10 Mbit/s x 100 ms = 125 000 bytes = 83.3 packets of 1500 wire bytes.
    let bdp = 125_000.0 / 1500.0;
    sums.values().sum::<f64>() / sums.len() as f64 / bdp
}

#[test]
fn five_bbr_flows_keep_two_to_two_and_a_half_bdp_in_flight() {
    // Hock et al., reproduced in the TUM paper Section 4.3 on Linux 4.9, whose
    // tcp_bbr.c has no ACK-aggregation (extra_acked) term (`linux_4_9` below is only
    // that term off; the other post-4.9 changes stay, see the bbr module doc): the summed
    // inflight sits in [2, 2.5] BDP (measured mean 2.35). The current kernel's
    // extra_acked adds allowance on top (measured 2.59): reported, and checked only to
    // lie between the 2 BDP of cwnd_gain and 3 BDP.
    let linux_4_9 = five_flow_inflight(false);
    let current = five_flow_inflight(true);
    eprintln!("five bbr: summed inflight {linux_4_9:.3} BDP without extra_acked, {current:.3} BDP with it");
    assert!((2.0..=2.5).contains(&linux_4_9), "{linux_4_9}");
    assert!(current > linux_4_9 && current <= 3.0, "{current}");
}

#[test]
fn bbr_takes_most_of_a_shallow_buffer_from_cubic_and_retransmits_far_more() {
    // BBR-CWS paper Figure 9: 50 Mbit/s, 10 ms RTT, buffer 0.5 BDP. The paper reports
    // BBR taking most of the bandwidth and 16 945 BBR retransmissions over 150 s.
    let mut cfg = dumbbell("bbr", 2, 50_000_000, 10 * MS, 0.5, 60 * S);
    cfg.flows[1].cc = "cubic".into();
    let out = World::run_config(&cfg, &NativeCc).unwrap();
    let x: Vec<f64> = (0..2)
        .map(|f| flow_mean(&out, "throughput_bps", f, 10 * S, 60 * S))
        .collect();
    let share = x[0] / (x[0] + x[1]);
    let (rb, rc) = (
        out.flows[0].retransmitted_packets,
        out.flows[1].retransmitted_packets,
    );
    eprintln!("bbr vs cubic 0.5 BDP: throughput {x:?} bit/s (BBR share {share:.3}, Jain {:.3}); retransmissions bbr {rb} cubic {rc}", jain(&x));
    // Measured (with tail loss probes, Linux's default): BBR 45.6 Mbit/s, CUBIC 1.8 Mbit/s
    // (share 0.961, Jain 0.54); 3726 BBR retransmissions in 60 s (the paper's rate would
    // give ~6800) vs 1572 for CUBIC. Without TLP: 46.0 / 1.5, 3544 vs 1138.
    assert!(share >= 0.8, "BBR share {share}");
    assert!(
        rb >= 2 * rc && rb >= 1000,
        "retransmissions bbr {rb} cubic {rc}"
    );
}
