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
//! `... --bench bottleneck -- bpf` (not part of the default set: it needs clang) runs (a)
//! with reno, cubic, dctcp and bbr natively and as compiled BPF objects (bpf/examples/*.bpf.c,
//! `cc = "bpf"`, crates/bpf's interpreter), alternating, and prints the median wall time
//! per bottleneck packet and the ratio BPF / native. A pair's outputs are identical
//! (tests/bpf_flows.rs), so the ratio is the BPF seam's cost alone.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use tcplab_sim::config::{AppConfig, FlowConfig, LinkConfig, QueueLimit, TcpConfig, WorldConfig};
use tcplab_sim::net::aqm::fq_codel::FqCodelConfig;
use tcplab_sim::net::aqm::AqmConfig;
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
            })
            .collect(),
        events: vec![],
        shaping: Default::default(),
        capture: vec![],
        links: vec![],
        paths: vec![],
        sources: vec![],
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
        let out = World::run_config(cfg).expect("run");
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

/// Compiles bpf/examples/`name`.bpf.c with clang into the temporary directory.
fn bpf_object(name: &str) -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = std::env::temp_dir().join(format!("tcplab_bench_{name}.bpf.o"));
    let ok = Command::new("clang")
        .args(["-target", "bpf", "-O2", "-g", "-I"])
        .arg(repo.join("bpf/include"))
        .arg("-c")
        .arg(repo.join(format!("bpf/examples/{name}.bpf.c")))
        .arg("-o")
        .arg(&out)
        .status()
        .expect("clang (scripts/test.sh installs it)")
        .success();
    assert!(ok, "clang failed on {name}.bpf.c");
    out
}

/// Scenario (a) with `name` natively and as its BPF object, alternating `reps` times.
fn bench_bpf(name: &str, reps: usize) {
    let obj = bpf_object(name);
    let mut native = dumbbell(2, 10_000_000, 60);
    let mut bpf = native.clone();
    for f in &mut native.flows {
        f.cc = name.into();
    }
    for f in &mut bpf.flows {
        f.cc = "bpf".into();
        f.bpf_object = Some(obj.to_string_lossy().into_owned());
    }
    let (mut tn, mut tb) = (Vec::new(), Vec::new());
    let mut pkts = 0;
    for _ in 0..reps {
        let t0 = Instant::now();
        let a = World::run_config(&native).expect("run");
        tn.push(t0.elapsed().as_secs_f64());
        let t0 = Instant::now();
        let b = World::run_config(&bpf).expect("run");
        tb.push(t0.elapsed().as_secs_f64());
        assert_eq!(
            a.bottleneck_packets, b.bottleneck_packets,
            "BPF and native runs differ"
        );
        pkts = a.bottleneck_packets;
    }
    let med = |mut v: Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let (n, b) = (med(tn), med(tb));
    let per = |w: f64| w * 1e9 / pkts as f64;
    println!(
        "bpf {name}: {pkts} bottleneck packets; median over {reps} runs: native {:.1} ns/packet ({:.0} packets/s), BPF interpreter {:.1} ns/packet ({:.0} packets/s); BPF / native = {:.2}",
        per(n),
        pkts as f64 / n,
        per(b),
        pkts as f64 / b,
        b / n
    );
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
        let out = World::run_config(&dumbbell(2, 10_000_000, secs)).expect("run");
        println!(
            "memory: (a) for {secs} s: {} bottleneck packets, peak RSS {} KiB",
            out.bottleneck_packets,
            peak_rss_kib()
        );
        return;
    }
    if args.first().map(String::as_str) == Some("bpf") {
        // `-- bpf NAME...` runs only those algorithms.
        let names: Vec<&str> = match args.len() {
            1 => vec!["reno", "cubic", "dctcp", "bbr"],
            _ => args[1..].iter().map(String::as_str).collect(),
        };
        for name in names {
            bench_bpf(name, 9);
        }
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
