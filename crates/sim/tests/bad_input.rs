//! Bad configurations are rejected with an error naming the field; never a panic.

mod common;
use common::*;

use tcplab_sim::config::QueueLimit;
use tcplab_sim::NativeCc;
use tcplab_sim::{run_json, SimError, World, WorldConfig};

fn base() -> WorldConfig {
    dumbbell("reno", 2, 10_000_000, 40 * MS, 1.0, S)
}

fn field_of(cfg: &WorldConfig) -> (String, String) {
    match World::new(cfg, &NativeCc) {
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
    match run_json(text, &NativeCc) {
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
    match run_json(text, &NativeCc) {
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
    assert!(World::new(&cfg, &NativeCc).is_ok());
}

/// The world builds each flow's controller with the factory it is handed, one call per
/// flow with the flow's own seed, and prefixes the factory's field with the flow's path.
#[test]
fn the_world_asks_its_factory_for_each_flows_controller() {
    use std::cell::RefCell;
    use tcplab_cc::ops::CongestionOps;
    use tcplab_sim::{CcChoice, ConfigError, ControllerFactory};

    /// Native Reno for "x"; refuses anything else on `params.p`.
    struct Recording(RefCell<Vec<(String, u64)>>);
    impl ControllerFactory for Recording {
        fn build(
            &self,
            c: &CcChoice<'_>,
            seed: u64,
        ) -> Result<Box<dyn CongestionOps>, ConfigError> {
            if c.cc != "x" {
                return Err(ConfigError {
                    field: "params.p".into(),
                    message: "not x".into(),
                });
            }
            self.0.borrow_mut().push((c.cc.to_string(), seed));
            NativeCc.build(&CcChoice { cc: "reno", ..*c }, seed)
        }
    }
    let mut cfg = dumbbell("x", 2, 10_000_000, 40 * MS, 1.0, S);
    let f = Recording(RefCell::new(Vec::new()));
    World::new(&cfg, &f).unwrap();
    let calls = f.0.borrow().clone();
    // Validation builds each flow once with seed 0, then the world once with its own.
    assert_eq!(calls.len(), 4);
    assert_eq!(&calls[..2], &[("x".to_string(), 0), ("x".to_string(), 0)]);
    assert_ne!(calls[2].1, calls[3].1, "each flow has its own seed");
    cfg.flows[1].cc = "y".into();
    let e = World::new(&cfg, &f).err().unwrap();
    assert_eq!(
        (e.field.as_str(), e.message.as_str()),
        ("flows[1].params.p", "not x")
    );
    // The engine's own factory knows no BPF loader and says so on the field.
    let mut cfg = base();
    cfg.flows[0].bpf_object = Some("x.o".into());
    assert_eq!(field_of(&cfg).0, "flows[0].bpf_object");
}

/// `tcp.hz` is a CONFIG_HZ a kernel is built with (kernel/Kconfig.hz).
#[test]
fn tcp_hz_must_be_a_kernel_config_hz() {
    let mut cfg = base();
    for hz in [100, 250, 300, 1000] {
        cfg.tcp.hz = hz;
        assert!(World::new(&cfg, &NativeCc).is_ok(), "{hz}");
    }
    cfg.tcp.hz = 200;
    let (f, m) = field_of(&cfg);
    assert_eq!(f, "tcp.hz");
    assert!(m.contains("100, 250, 300 or 1000"), "{m}");
}

/// `tcp.kernel` is a profiled release's code (crates/cc bbr/kernel.rs).
#[test]
fn tcp_kernel_must_be_a_profiled_release() {
    let mut cfg = base();
    for k in [409, 414, 417, 618] {
        cfg.tcp.kernel = k;
        assert!(World::new(&cfg, &NativeCc).is_ok(), "{k}");
    }
    cfg.tcp.kernel = 500;
    let (f, m) = field_of(&cfg);
    assert_eq!(f, "tcp.kernel");
    assert!(m.contains("409, 414, 417 or 618"), "{m}");
}
