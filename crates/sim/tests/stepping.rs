//! The stepping engine (world/stepping.rs): stepping without writes is a plain run; an
//! `external` flow holds the window and pacing rate it is given, with throughputs
//! computed by hand from the path.

mod common;
use common::*;

use std::collections::BTreeMap;
use tcplab_sim::time::SimTime;
use tcplab_sim::world::stepping::Stepper;
use tcplab_sim::NativeCc;
use tcplab_sim::{World, WorldConfig};

fn stepper(cfg: &WorldConfig) -> Stepper {
    Stepper::new(World::new(cfg, &NativeCc).unwrap())
}

#[test]
fn stepping_with_reads_only_equals_a_plain_run() {
    let mut cfg = dumbbell("cubic", 2, 10_000_000, 40 * MS, 1.0, 5 * S);
    cfg.bottleneck.loss = 0.005;
    let whole = serde_json::to_string(&World::run_config(&cfg, &NativeCc).unwrap()).unwrap();
    let mut s = stepper(&cfg);
    let mut t = 0;
    while !s.done() {
        t += 10 * MS;
        s.advance_to(SimTime(t));
        for i in 0..2 {
            s.state(i).unwrap();
            s.take_interval(i).unwrap();
        }
    }
    let stepped = serde_json::to_string(&s.finish().unwrap()).unwrap();
    assert_eq!(whole, stepped);
}

/// One `external` flow, 100 Mbit/s, 40 ms, 1 BDP buffer: far from the bottleneck rate,
/// so no queue and no loss. RTT = 40 ms of propagation + serialization of a 1500-byte
/// segment at 1 Gbit/s twice (24 us) and at 100 Mbit/s (120 us), and of the ACK (small):
/// about 40.15 ms. A window of W segments of 1448 bytes then delivers W x 1448 / 0.04015
/// bytes per second.
fn external_cfg() -> WorldConfig {
    let mut cfg = dumbbell("external", 1, 100_000_000, 40 * MS, 1.0, 6 * S);
    cfg.flows[0].params = BTreeMap::new();
    cfg
}

#[test]
fn an_external_flow_holds_the_window_it_is_given() {
    let mut s = stepper(&external_cfg());
    // Written before the connection exists: applied when it is established.
    s.set_cwnd(0, 20).unwrap();
    s.advance_to(SimTime(2 * S));
    assert_eq!(s.state(0).unwrap().cwnd_pkts, 20);
    s.take_interval(0).unwrap();
    s.advance_to(SimTime(3 * S));
    let iv = s.take_interval(0).unwrap();
    // 20 x 1448 / 0.04015 = 721_295 B/s over 1 s, give or take one window (28_960
    // bytes): the window's ACKs come back as a burst once per RTT, and 1 s holds 24 or 25.
    let expect = 20.0 * 1448.0 / 0.04015;
    let got = iv.acked_bytes as f64;
    assert!((got - expect).abs() <= 20.0 * 1448.0, "{got} vs {expect}");
    assert_eq!(iv.lost_pkts, 0);
    // Every RTT sample is the empty path's: 40.15 ms, +- the delayed ACK's wait for a
    // second segment (none here: segments leave in pairs at 1 Gbit/s).
    assert!(
        (iv.rtt_min_us as f64 - 40_150.0).abs() < 200.0,
        "{}",
        iv.rtt_min_us
    );
    assert!(
        (iv.rtt_mean_us - 40_150.0).abs() < 400.0,
        "{}",
        iv.rtt_mean_us
    );
    // Doubling the window doubles the rate.
    s.set_cwnd(0, 40).unwrap();
    s.advance_to(SimTime(4 * S));
    s.take_interval(0).unwrap();
    s.advance_to(SimTime(5 * S));
    let got = s.take_interval(0).unwrap().acked_bytes as f64;
    assert!((got - 2.0 * expect).abs() <= 40.0 * 1448.0, "{got}");
    s.finish().unwrap();
}

#[test]
fn an_external_flow_is_paced_at_the_rate_it_is_given() {
    let mut s = stepper(&external_cfg());
    s.set_cwnd(0, 1000).unwrap();
    s.set_pacing_rate(0, 8_000_000.0).unwrap(); // 1 MB/s of payload departures
    s.advance_to(SimTime(2 * S));
    s.take_interval(0).unwrap();
    s.advance_to(SimTime(4 * S));
    let iv = s.take_interval(0).unwrap();
    // Pacing spaces payload: 1448 bytes per 1448 us, so 2 s carry 2_000_000 bytes
    // (1381 segments of 1448 bytes; 1 segment of rounding).
    let got = iv.sent_bytes as f64;
    assert!((got - 2_000_000.0).abs() < 2.0 * 1448.0, "{got}");
    assert_eq!(s.state(0).unwrap().pacing_rate_bps, 8_000_000.0);
}

#[test]
fn writes_are_refused_with_the_argument_named() {
    let mut s = stepper(&dumbbell("cubic", 1, 10_000_000, 40 * MS, 1.0, S));
    let e = s.set_pacing_rate(0, 1e6).unwrap_err();
    assert_eq!(e.field, "flow");
    assert!(e.message.contains("cubic"), "{}", e.message);
    assert_eq!(s.set_cwnd(3, 10).unwrap_err().field, "flow");
    assert_eq!(s.set_cwnd(0, 0).unwrap_err().field, "cwnd");
    assert_eq!(s.set_ssthresh(0, 1).unwrap_err().field, "ssthresh");
    // cwnd may be written over any algorithm (Orca's underlay).
    s.advance_to(SimTime(200 * MS));
    s.set_cwnd(0, 77).unwrap();
    assert_eq!(s.state(0).unwrap().cwnd_pkts, 77);
}
