//! Shared helpers for the scenario tests: a dumbbell configuration and the metrics of
//! docs/METRICS.md computed from a run's series.
#![allow(dead_code)]

pub mod sender;

use tcplab_sim::config::{AppConfig, FlowConfig, LinkConfig, QueueLimit, TcpConfig, WorldConfig};
use tcplab_sim::record::{Column, RunOutput};

pub const MS: u64 = 1_000_000;
pub const S: u64 = 1_000_000_000;

pub fn link(rate_bps: u64, delay_ns: u64) -> LinkConfig {
    LinkConfig {
        rate_bps,
        delay_ns,
        buffer: None,
        loss: 0.0,
        aqm: None,
        ..Default::default()
    }
}

/// `n` flows of `cc` over a bottleneck of `rate_bps` with a base RTT of `rtt_ns`
/// (split: 1/4 on each access link, 1/2 on the bottleneck, both ways) and a drop-tail
/// buffer of `buffer_bdp` bandwidth-delay products in bytes. Access links run at 1 Gbit/s.
pub fn dumbbell(
    cc: &str,
    n: usize,
    rate_bps: u64,
    rtt_ns: u64,
    buffer_bdp: f64,
    duration_ns: u64,
) -> WorldConfig {
    let one_way = rtt_ns / 2;
    let bdp_bytes = rate_bps as f64 * rtt_ns as f64 / 1e9 / 8.0;
    let buffer = QueueLimit::Bytes((bdp_bytes * buffer_bdp).round() as u64);
    let flows = (0..n)
        .map(|_| FlowConfig {
            cc: cc.to_string(),
            params: Default::default(),
            sender_access: link(1_000_000_000, one_way / 4),
            receiver_access: link(1_000_000_000, one_way / 4),
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
        duration_ns,
        seed: 1,
        sample_interval_ns: 100 * MS,
        tcp: TcpConfig::default(),
        bottleneck: LinkConfig {
            rate_bps,
            delay_ns: one_way / 2,
            buffer: Some(buffer),
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

pub fn f64_col<'a>(out: &'a RunOutput, name: &str) -> &'a [f64] {
    out.series
        .get(name)
        .and_then(Column::as_f64)
        .unwrap_or_else(|| panic!("no f64 column {name}"))
}
pub fn u64_col<'a>(out: &'a RunOutput, name: &str) -> &'a [u64] {
    out.series
        .get(name)
        .and_then(Column::as_u64)
        .unwrap_or_else(|| panic!("no u64 column {name}"))
}
pub fn str_col<'a>(out: &'a RunOutput, name: &str) -> &'a [String] {
    match out.series.get(name) {
        Some(Column::Str(v)) => v,
        _ => panic!("no string column {name}"),
    }
}

/// Mean of `col` for `flow` over rows with from_ns < time <= to_ns.
pub fn flow_mean(out: &RunOutput, col: &str, flow: u64, from_ns: u64, to_ns: u64) -> f64 {
    let t = u64_col(out, "time_ns");
    let f = u64_col(out, "flow");
    let v = f64_col(out, col);
    let sel: Vec<f64> = (0..t.len())
        .filter(|&i| f[i] == flow && t[i] > from_ns && t[i] <= to_ns)
        .map(|i| v[i])
        .collect();
    sel.iter().sum::<f64>() / sel.len() as f64
}

/// Jain's fairness index of `x`: (sum x)^2 / (n * sum x^2).
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * s2)
}
