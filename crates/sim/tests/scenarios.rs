//! Scenario tests: a seconds-long simulated dumbbell each, with the
//! tolerances stated beside the assertion. Each prints its figures (`--nocapture`).

mod common;
use common::*;

use tcplab_sim::config::QueueLimit;
use tcplab_sim::NativeCc;
use tcplab_sim::World;

/// Wire bytes per payload byte of a full segment: (1448 + 52) / 1448.
const WIRE_PER_PAYLOAD: f64 = 1500.0 / 1448.0;

fn single_flow(cc: &str) -> (tcplab_sim::WorldConfig, tcplab_sim::RunOutput) {
    // 10 Mbit/s, 40 ms RTT, buffer 5 BDP = 5 * 50_000 B = 250_000 B, 60 s.
    let cfg = dumbbell(cc, 1, 10_000_000, 40 * MS, 5.0, 60 * S);
    let out = World::run_config(&cfg, &NativeCc).expect("run");
    (cfg, out)
}

fn check_fills_link_and_buffer(cc: &str) {
    let (cfg, out) = single_flow(cc);
    // Utilisation after the first 2 s: wire bytes reaching the receiver over link capacity.
    let thr = flow_mean(&out, "throughput_bps", 0, 2 * S, 60 * S);
    let util = thr * WIRE_PER_PAYLOAD / 10e6;
    // Mean backlog over 10-60 s relative to the 250_000-byte buffer.
    let qt = out.queue_series.get("time_ns").unwrap().as_u64().unwrap();
    let qb = out
        .queue_series
        .get("backlog_bytes")
        .unwrap()
        .as_u64()
        .unwrap();
    let sel: Vec<f64> = (0..qt.len())
        .filter(|&i| qt[i] > 10 * S)
        .map(|i| qb[i] as f64)
        .collect();
    let buffer = match cfg.bottleneck.buffer {
        Some(QueueLimit::Bytes(b)) => b as f64,
        _ => unreachable!(),
    };
    let fill = sel.iter().sum::<f64>() / sel.len() as f64 / buffer;
    let f = &out.flows[0];
    eprintln!(
        "{cc}: utilisation {util:.4}, mean backlog {fill:.3} of buffer, dropped {}, retransmitted {}, rto {}, recoveries {}",
        f.dropped_packets, f.retransmitted_packets, f.rto_count, f.recoveries
    );
    assert!(util >= 0.95, "utilisation {util}");
    assert!(fill >= 0.5, "mean backlog {fill} of the buffer");
    // Losses happen and are repaired: every segment sent once and not still in the last
    // window has been delivered in order. Unique segments = sent - retransmitted; the
    // last window is at most BDP + buffer = (50_000 + 250_000) / 1500 = 200 segments.
    assert!(f.dropped_packets > 0 && f.retransmitted_packets > 0);
    let unique = f.sent_packets - f.retransmitted_packets;
    let delivered_segs = f.delivered_bytes / 1448;
    eprintln!(
        "{cc}: unique segments sent {unique}, delivered {delivered_segs}, not yet delivered {}",
        unique - delivered_segs
    );
    assert!(
        unique - delivered_segs <= 200,
        "unique {unique} delivered {delivered_segs}"
    );
    assert_eq!(f.delivered_bytes % 1448, 0);
}

#[test]
fn cubic_single_flow_fills_the_link_and_keeps_the_buffer_mostly_full() {
    check_fills_link_and_buffer("cubic");
}

#[test]
fn reno_single_flow_fills_the_link_and_keeps_the_buffer_mostly_full() {
    check_fills_link_and_buffer("reno");
}

#[test]
fn reno_cwnd_halves_on_each_loss_event() {
    let mut cfg = dumbbell("reno", 1, 10_000_000, 40 * MS, 5.0, 60 * S);
    cfg.sample_interval_ns = 5 * MS;
    let out = World::run_config(&cfg, &NativeCc).unwrap();
    let cwnd = f64_col(&out, "cwnd_pkts");
    let state = str_col(&out, "ca_state");
    // For each Recovery episode: cwnd in the last Open row before it and in the first
    // Open row after it. Reno's ssthresh is cwnd/2 and Recovery ends at cwnd = ssthresh;
    // in 5 ms cwnd grows by at most 1 segment in congestion avoidance, so the ratio is
    // 0.5 within ~1 segment of ~150: allow [0.45, 0.55].
    let mut ratios = Vec::new();
    let mut i = 1;
    while i < state.len() {
        if state[i] == "Recovery" && state[i - 1] != "Recovery" {
            let before = cwnd[i - 1];
            let mut j = i;
            while j < state.len() && state[j] != "Open" {
                j += 1;
            }
            if j < state.len() {
                ratios.push(cwnd[j] / before);
            }
            i = j;
        }
        i += 1;
    }
    eprintln!(
        "reno: {} loss events, cwnd after/before = {:?}",
        ratios.len(),
        ratios
    );
    assert!(
        ratios.len() >= 3,
        "expected a sawtooth, got {} loss events",
        ratios.len()
    );
    for r in &ratios[1..] {
        // (The first event ends slow start: cwnd overshot, ratio is lower.)
        assert!((0.45..=0.55).contains(r), "cwnd ratio {r}");
    }
    // Between events cwnd grows (the teeth of the saw).
    let peak = cwnd.iter().cloned().fold(0.0, f64::max);
    eprintln!(
        "reno: peak cwnd {peak}, mid-run cwnd {}",
        cwnd[cwnd.len() / 2]
    );
    assert!(cwnd.iter().cloned().fold(0.0, f64::max) > 1.5 * cwnd[cwnd.len() / 2].min(100.0));
}

#[test]
fn reno_random_loss_throughput_within_a_factor_of_two_of_mathis() {
    // 1 % random loss on the bottleneck, 10 Mbit/s, 40 ms RTT, large buffer.
    let mut cfg = dumbbell("reno", 1, 10_000_000, 40 * MS, 5.0, 60 * S);
    cfg.bottleneck.loss = 0.01;
    let out = World::run_config(&cfg, &NativeCc).unwrap();
    let goodput = out.flows[0].delivered_bytes as f64 * 8.0 / 60.0;
    let srtt_ms = flow_mean(&out, "srtt_ms", 0, 2 * S, 60 * S);
    // Mathis: MSS / RTT * 1.22 / sqrt(p) = 1448 B * 8 / 0.040 s * 1.22 / 0.1
    //       = 289_600 bit/s * 12.2 = 3_533_120 bit/s.
    let mathis = 1448.0 * 8.0 / 0.040 * 1.22 / 0.01f64.sqrt();
    let ratio = goodput / mathis;
    eprintln!("reno 1% loss: goodput {goodput:.0} bit/s, Mathis {mathis:.0}, ratio {ratio:.3}, mean srtt {srtt_ms:.1} ms");
    assert!((0.5..=2.0).contains(&ratio), "ratio {ratio}");
}

/// Two `cc` flows, 10 Mbit/s, 40 ms, 5 BDP, 60 s: Jain's index of their throughputs is
/// at least 0.9.
fn two_flows_share_fairly(cc: &str) {
    let cfg = dumbbell(cc, 2, 10_000_000, 40 * MS, 5.0, 60 * S);
    let out = World::run_config(&cfg, &NativeCc).unwrap();
    let x: Vec<f64> = out
        .flows
        .iter()
        .map(|f| f.received_bytes as f64 * 8.0 / 60.0)
        .collect();
    let j = jain(&x);
    eprintln!("two {cc}: throughputs {x:?} bit/s, Jain {j:.4}");
    assert!(j >= 0.9, "Jain {j}");
}

#[test]
fn two_cubic_flows_share_fairly() {
    two_flows_share_fairly("cubic");
}

#[test]
fn two_reno_flows_share_fairly() {
    two_flows_share_fairly("reno");
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

#[test]
fn delivery_rate_estimate_matches_the_bottleneck_payload_rate() {
    // A saturated 10 Mbit/s link delivers 10e6 * 1448 / 1500 = 9_653_333 bit/s of payload;
    // tcp_rate.c samples of a cwnd-limited flow should measure that (within 3 %).
    let (_, out) = single_flow("cubic");
    let t = u64_col(&out, "time_ns");
    let d = f64_col(&out, "delivery_rate_bps");
    let m = median(
        (0..t.len())
            .filter(|&i| t[i] > 10 * S)
            .map(|i| d[i])
            .collect(),
    );
    eprintln!("cubic: median delivery rate {m:.0} bit/s");
    assert!((m / 9_653_333.0 - 1.0).abs() < 0.03, "{m}");
}

#[test]
fn srtt_follows_base_rtt_plus_queueing_delay() {
    // Expected RTT at each sample: 40 ms + backlog_bytes * 8 / 10e6 s (queueing at the
    // bottleneck); srtt lags it by its 1/8 smoothing, so compare means over 10-60 s
    // within 10 %.
    let (_, out) = single_flow("cubic");
    let qt = out.queue_series.get("time_ns").unwrap().as_u64().unwrap();
    let qb = out
        .queue_series
        .get("backlog_bytes")
        .unwrap()
        .as_u64()
        .unwrap();
    let idx: Vec<usize> = (0..qt.len()).filter(|&i| qt[i] > 10 * S).collect();
    let expected_ms = idx
        .iter()
        .map(|&i| 40.0 + qb[i] as f64 * 8.0 / 10e6 * 1e3)
        .sum::<f64>()
        / idx.len() as f64;
    let srtt_ms = flow_mean(&out, "srtt_ms", 0, 10 * S, 60 * S);
    eprintln!("cubic: mean srtt {srtt_ms:.1} ms, expected {expected_ms:.1} ms");
    assert!(
        (srtt_ms / expected_ms - 1.0).abs() < 0.1,
        "{srtt_ms} vs {expected_ms}"
    );
}
