//! Benchmark: simulated packets (data segments crossing the bottleneck) per wall second.
//!
//! `cargo bench -p tcplab-sim --bench bottleneck` runs
//!   (a) 2 CUBIC flows, 10 Mbit/s, 60 s, and
//!   (b) 10 CUBIC flows, 100 Mbit/s, 30 s,
//!   (c) as (b) with FQ-CoDel (Linux defaults, limit 10240 packets) at the bottleneck,
//! all with a 40 ms base RTT, a 1-BDP drop-tail buffer (not (c)), delayed ACKs and no series
//! (counters only), and prints the median of several repetitions.
//! `... --bench bottleneck -- memory SECONDS` runs (a) for SECONDS simulated seconds and
//! prints the peak resident set size, to show that memory stays flat as the simulated
//! duration grows.
//! BPF objects against their native twins: `cargo bench -p tcplab-controllers --bench bpf`
//! (crates/controllers/benches/bpf.rs, where the BPF loader lives).

use std::time::Instant;

use tcplab_sim::config::{AppConfig, FlowConfig, LinkConfig, QueueLimit, TcpConfig, WorldConfig};
use tcplab_sim::net::aqm::fq_codel::FqCodelConfig;
use tcplab_sim::net::aqm::AqmConfig;
use tcplab_sim::NativeCc;
use tcplab_sim::World;

fn dumbbell(n: usize, rate_bps: u64, duration_s: u64) -> WorldConfig {
    let rtt_ns = 40_000_000u64;
    let bdp = rate_bps * rtt_ns / 1_000_000_000 / 8;
    let access = LinkConfig {
        rate_bps: 1_000_000_000,
        delay_ns: rtt_ns / 8,
        buffer: None,
        loss: 0.0,
        aqm: None,
        ..Default::default()
    };
    WorldConfig {
        duration_ns: duration_s * 1_000_000_000,
        seed: 1,
        sample_interval_ns: 0,
        tcp: TcpConfig::default(),
        bottleneck: LinkConfig {
            rate_bps,
            delay_ns: rtt_ns / 4,
            buffer: Some(QueueLimit::Bytes(bdp)),
            loss: 0.0,
            aqm: None,
            ..Default::default()
        },
        bottleneck_reverse: None,
        flows: (0..n)
            .map(|_| FlowConfig {
                cc: "cubic".into(),
                params: Default::default(),
                sender_access: access.clone(),
                receiver_access: access.clone(),
                start_ns: 0,
                stop_ns: None,
                app: AppConfig::Bulk,
                ecn: None,
                onoff: None,
                bpf_object: None,
                bpf_state: None,
            })
            .collect(),
        events: vec![],
        shaping: Default::default(),
        capture: vec![],
        links: vec![],
        paths: vec![],
        sources: vec![],
        agents: vec![],
    }
}

/// Nanoseconds this thread has spent on a CPU (/proc/self/schedstat, first field): unlike
/// wall time it does not count time the scheduler gave to other processes.
fn on_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn bench(name: &str, cfg: &WorldConfig, reps: usize) {
    let mut walls = Vec::new();
    let mut cpus = Vec::new();
    let mut last = None;
    for _ in 0..reps {
        let c0 = on_cpu_ns();
        let t0 = Instant::now();
        let out = World::run_config(cfg, &NativeCc).expect("run");
        let wall = t0.elapsed().as_secs_f64();
        if let (Some(a), Some(b)) = (c0, on_cpu_ns()) {
            cpus.push((b - a) as f64 / 1e9);
        }
        walls.push(wall);
        last = Some(out);
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let out = last.unwrap();
    let pkts = out.bottleneck_packets as f64;
    let (wall_min, wall_max) = (
        walls.iter().cloned().fold(f64::MAX, f64::min),
        walls.iter().cloned().fold(0.0, f64::max),
    );
    let wall = med(&mut walls);
    print!(
        "{name}: {} bottleneck packets, {} events; median wall {:.4} s over {reps} runs -> {:.0} bottleneck packets per wall second (best {:.0}, worst {:.0})",
        out.bottleneck_packets,
        out.events_processed,
        wall,
        pkts / wall,
        pkts / wall_min,
        pkts / wall_max
    );
    if !cpus.is_empty() {
        let cpu = med(&mut cpus);
        print!(
            "; median on-CPU {cpu:.4} s -> {:.0} per CPU second",
            pkts / cpu
        );
    }
    println!();
}

fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("memory") {
        let secs: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(60);
        let out = World::run_config(&dumbbell(2, 10_000_000, secs), &NativeCc).expect("run");
        println!(
            "memory: (a) for {secs} s: {} bottleneck packets, peak RSS {} KiB",
            out.bottleneck_packets,
            peak_rss_kib()
        );
        return;
    }
    // `-- a b` runs only those cases (default: all).
    let want = |case: &str| args.is_empty() || args.iter().any(|a| a == case);
    if want("a") {
        bench(
            "(a) 2 cubic flows, 10 Mbit/s, 60 s",
            &dumbbell(2, 10_000_000, 60),
            21,
        );
    }
    if want("b") {
        bench(
            "(b) 10 cubic flows, 100 Mbit/s, 30 s",
            &dumbbell(10, 100_000_000, 30),
            5,
        );
    }
    if !want("c") {
        return;
    }
    let mut fq = dumbbell(10, 100_000_000, 30);
    fq.bottleneck.buffer = Some(QueueLimit::Packets(10240));
    fq.bottleneck.aqm = Some(AqmConfig::FqCodel(FqCodelConfig {
        target_ns: 5_000_000,
        interval_ns: 100_000_000,
        quantum_bytes: 1514,
        flows: 1024,
        ecn: true,
    }));
    bench("(c) as (b) with fq_codel", &fq, 5);
}
