//! Bad configurations are rejected with an error naming the field; never a panic.

mod common;
use common::*;

use tcplab_sim::config::QueueLimit;
use tcplab_sim::{run_json, SimError, World, WorldConfig};

fn base() -> WorldConfig {
    dumbbell("reno", 2, 10_000_000, 40 * MS, 1.0, S)
}

fn field_of(cfg: &WorldConfig) -> (String, String) {
    match World::new(cfg) {
        Err(e) => (e.field, e.message),
        Ok(_) => panic!("accepted a bad config"),
    }
}

#[test]
fn zero_rate_is_rejected_with_its_path() {
    let mut cfg = base();
    cfg.flows[1].sender_access.rate_bps = 0;
    let (f, m) = field_of(&cfg);
    assert_eq!(
        (f.as_str(), m.as_str()),
        ("flows[1].sender_access.rate_bps", "must be > 0")
    );
}

#[test]
fn zero_buffer_is_rejected() {
    let mut cfg = base();
    cfg.bottleneck.buffer = Some(QueueLimit::Packets(0));
    assert_eq!(field_of(&cfg).0, "bottleneck.buffer.packets");
    cfg.bottleneck.buffer = Some(QueueLimit::Bytes(1000));
    let (f, m) = field_of(&cfg);
    assert_eq!(f, "bottleneck.buffer.bytes");
    assert!(m.contains("1500"), "{m}");
}

#[test]
fn unknown_algorithm_is_rejected_listing_the_known_ones() {
    let mut cfg = base();
    cfg.flows[0].cc = "bbbr".into();
    let (f, m) = field_of(&cfg);
    assert_eq!(f, "flows[0].cc");
    assert!(
        m.contains("unknown algorithm 'bbbr'") && m.contains("reno"),
        "{m}"
    );
}

#[test]
fn bad_algorithm_parameter_names_the_parameter() {
    let mut cfg = base();
    cfg.flows[0]
        .params
        .insert("no_such_knob".into(), serde_json::json!(1));
    assert_eq!(field_of(&cfg).0, "flows[0].params.no_such_knob");
}

#[test]
fn start_after_stop_is_rejected() {
    let mut cfg = base();
    cfg.flows[0].start_ns = 500 * MS;
    cfg.flows[0].stop_ns = Some(100 * MS);
    let (f, m) = field_of(&cfg);
    assert_eq!(f, "flows[0].stop_ns");
    assert!(m.contains("after start_ns"), "{m}");
    cfg.flows[0].stop_ns = None;
    cfg.flows[0].start_ns = 2 * S; // after the 1 s run
    assert_eq!(field_of(&cfg).0, "flows[0].start_ns");
}

#[test]
fn loss_outside_unit_interval_is_rejected() {
    let mut cfg = base();
    cfg.bottleneck.loss = 1.0;
    assert_eq!(field_of(&cfg).0, "bottleneck.loss");
}

#[test]
fn negative_delay_in_json_names_the_field() {
    let text = r#"{"duration_ns": 1000000000,
        "bottleneck": {"rate_bps": 10000000, "delay_ns": 1000},
        "flows": [{"cc": "reno", "sender_access": {"rate_bps": 1000000000, "delay_ns": -5},
                   "receiver_access": {"rate_bps": 1000000000, "delay_ns": 0}}]}"#;
    match run_json(text) {
        Err(SimError::Config(e)) => {
            assert_eq!(e.field, "flows[0].sender_access.delay_ns");
            assert!(e.message.contains("-5"), "{}", e.message);
        }
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[test]
fn unknown_field_in_json_is_rejected() {
    let text = r#"{"duration_ns": 1, "bottleneck": {"rate_bps": 1, "delay_ns": 0, "rat": 3}, "flows": []}"#;
    match run_json(text) {
        Err(SimError::Config(e)) => assert!(e.field.starts_with("bottleneck"), "{e}"),
        other => panic!("expected a config error, got {other:?}"),
    }
}

#[test]
fn no_flows_and_zero_duration_are_rejected() {
    let mut cfg = base();
    cfg.flows.clear();
    assert_eq!(field_of(&cfg).0, "flows");
    let mut cfg = base();
    cfg.duration_ns = 0;
    assert_eq!(field_of(&cfg).0, "duration_ns");
}

#[test]
fn a_sampling_interval_that_would_exhaust_memory_is_rejected() {
    let mut cfg = base();
    cfg.sample_interval_ns = 1; // 1 s / 1 ns * 2 flows = 2e9 rows
    let (f, m) = field_of(&cfg);
    assert_eq!(f, "sample_interval_ns");
    assert!(m.contains("2000000000"), "{m}");
}

#[test]
fn a_truesize_not_above_the_mss_is_rejected() {
    // scaling_ratio = 256 x mss / truesize must fit Linux's u8 (1..=255).
    let mut cfg = base();
    cfg.tcp.rcv_truesize = Some(1448);
    let (f, m) = field_of(&cfg);
    assert_eq!(
        (f.as_str(), m.as_str()),
        (
            "tcp.rcv_truesize",
            "must be > mss (1448) and <= 256 x mss bytes"
        )
    );
    cfg.tcp.rcv_truesize = Some(2304);
    assert!(World::new(&cfg).is_ok());
}
