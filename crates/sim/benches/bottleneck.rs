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
//! `... -- bbr600` runs 2 BBR flows at 10 Mbit/s for 600 s (issue 41's 2-flow figure), and
//! `... -- wide10 wide100 wide1000` run 10, 100 and 1000 flows (half BBR, half CUBIC) over a
//! 10 Gbit/s bottleneck for 2 s with 100 Gbit/s access links (issue 41's scaling figures).
//! `... -- wide10_10ms wide1000_10ms` run wide10 and wide1000 over a 10 ms base RTT.
//! `... -- share10 share100` run 10 and 100 flows each with wide1000's per-flow share
//! (10 Mbit/s): the bottleneck 10 x 10 Mbit/s or 100 x 10 Mbit/s, access links 10x it.
//! `... -- digest` prints a hash of the whole output (counters and 10 ms series) of several
//! of these worlds: an engine optimisation must leave every hash and event count unchanged.
//! BPF objects against their native twins: `cargo bench -p tcplab-controllers --bench bpf`
//! (crates/controllers/benches/bpf.rs, where the BPF loader lives).

use std::time::Instant;

use tcplab_sim::config::{AppConfig, FlowConfig, LinkConfig, QueueLimit, TcpConfig, WorldConfig};
use tcplab_sim::net::aqm::fq_codel::FqCodelConfig;
use tcplab_sim::net::aqm::AqmConfig;
use tcplab_sim::NativeCc;
use tcplab_sim::World;

fn dumbbell(n: usize, rate_bps: u64, duration_s: u64) -> WorldConfig {
    mixed(n, rate_bps, 1_000_000_000, duration_s, &["cubic"])
}

/// `n` flows over one bottleneck with a 40 ms base RTT (delays and buffer from
/// [`with_rtt`]); flow i runs `ccs[i % ccs.len()]`.
fn mixed(n: usize, rate_bps: u64, access_bps: u64, duration_s: u64, ccs: &[&str]) -> WorldConfig {
    let access = LinkConfig {
        rate_bps: access_bps,
        buffer: None,
        loss: 0.0,
        aqm: None,
        ..Default::default()
    };
    let cfg = WorldConfig {
        duration_ns: duration_s * 1_000_000_000,
        seed: 1,
        sample_interval_ns: 0,
        tcp: TcpConfig::default(),
        bottleneck: LinkConfig {
            rate_bps,
            loss: 0.0,
            aqm: None,
            ..Default::default()
        },
        bottleneck_reverse: None,
        flows: (0..n)
            .map(|i| FlowConfig {
                cc: ccs[i % ccs.len()].into(),
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
        probes: vec![],
        agents: vec![],
    };
    with_rtt(cfg, 40_000_000)
}

/// `n` flows, half BBR and half CUBIC, for 2 s over a bottleneck of `rate_bps` with access
/// links 10x it: the `wide` worlds at 10 Gbit/s, the `share` worlds at 10 Mbit/s a flow.
fn half_bbr_half_cubic(n: usize, rate_bps: u64) -> WorldConfig {
    mixed(n, rate_bps, 10 * rate_bps, 2, &["bbr", "cubic"])
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
    // TCPLAB_BENCH_REPS=1 runs each case once, for an outside timer (alternated runs of two
    // builds) or a profiler.
    let reps = std::env::var("TCPLAB_BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(reps);
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

/// Hash of the JSON of each world's whole output, with series sampled every 10 ms.
fn digest() {
    use std::hash::{Hash, Hasher};
    let mut fq = dumbbell(10, 100_000_000, 10);
    fq.bottleneck.buffer = Some(QueueLimit::Packets(10240));
    fq.bottleneck.aqm = Some(AqmConfig::FqCodel(FqCodelConfig {
        target_ns: 5_000_000,
        interval_ns: 100_000_000,
        quantum_bytes: 1514,
        flows: 1024,
        ecn: true,
    }));
    let mut lossy = mixed(4, 50_000_000, 1_000_000_000, 20, &["bbr", "cubic"]);
    lossy.bottleneck.loss = 0.01;
    let cases = [
        ("a", dumbbell(2, 10_000_000, 60)),
        ("bbr", mixed(2, 10_000_000, 1_000_000_000, 60, &["bbr"])),
        ("c", fq),
        ("lossy", lossy),
        (
            "wide100",
            mixed(100, 10_000_000_000, 100_000_000_000, 2, &["bbr", "cubic"]),
        ),
        (
            "wide1000",
            mixed(1000, 10_000_000_000, 100_000_000_000, 1, &["bbr", "cubic"]),
        ),
    ];
    for (name, mut cfg) in cases {
        cfg.sample_interval_ns = 10_000_000;
        let out = World::run_config(&cfg, &NativeCc).expect("run");
        let hash = |out: &tcplab_sim::RunOutput| {
            let json = serde_json::to_string(out).expect("serialize");
            let mut h = std::collections::hash_map::DefaultHasher::new();
            json.hash(&mut h);
            (h.finish(), json.len())
        };
        let (all, bytes) = hash(&out);
        // The same without the event count: what an optimisation that saves events (the
        // ninth step's departures without events) must leave unchanged.
        let mut results = out.clone();
        results.events_processed = 0;
        let (results, _) = hash(&results);
        println!(
            "{name}: events {} bottleneck packets {} output hash {all:016x} ({bytes} bytes) \
             results hash {results:016x}",
            out.events_processed, out.bottleneck_packets,
        );
    }
}

/// `cfg` (from [`mixed`]) with its delays and its bottleneck's buffer set for a base RTT
/// of `rtt_ns`: a quarter each way on the bottleneck, an eighth on each access link, and
/// a buffer of one bandwidth-delay product in bytes.
fn with_rtt(mut cfg: WorldConfig, rtt_ns: u64) -> WorldConfig {
    let rate = cfg.bottleneck.rate_bps;
    cfg.bottleneck.delay_ns = rtt_ns / 4;
    cfg.bottleneck.buffer = Some(QueueLimit::Bytes(rate * rtt_ns / 1_000_000_000 / 8));
    for f in &mut cfg.flows {
        f.sender_access.delay_ns = rtt_ns / 8;
        f.receiver_access.delay_ns = rtt_ns / 8;
    }
    cfg
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
    if args.first().map(String::as_str) == Some("digest") {
        digest();
        return;
    }
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
    if args.iter().any(|a| a == "bbr600") {
        bench(
            "bbr600: 2 bbr flows, 10 Mbit/s, 600 s",
            &mixed(2, 10_000_000, 1_000_000_000, 600, &["bbr"]),
            3,
        );
    }
    for n in [10, 100, 1000] {
        if args.iter().any(|a| *a == format!("wide{n}")) {
            bench(
                &format!("wide{n}: {n} flows (half bbr, half cubic), 10 Gbit/s, 2 s"),
                &half_bbr_half_cubic(n, 10_000_000_000),
                3,
            );
        }
    }
    // Each flow's share of wide1000 (10 Mbit/s, a 40 ms RTT, a BDP buffer, access links
    // 10x the bottleneck) with fewer flows: 10 flows over 100 Mbit/s, 100 over 1 Gbit/s.
    // A flow's own TCP work per packet is then about the same as at 1000 flows, so their
    // per-packet cost against wide1000's is what the number of flows adds (wide10's
    // flows, at 1 Gbit/s each, also behave differently: benches/RESULTS.md, "seventeenth
    // step").
    for n in [10u64, 100] {
        if args.iter().any(|a| *a == format!("share{n}")) {
            bench(
                &format!("share{n}: {n} flows (half bbr, half cubic), {n} x 10 Mbit/s, 2 s"),
                &half_bbr_half_cubic(n as usize, n * 10_000_000),
                3,
            );
        }
    }
    // The same worlds over a 10 ms path: a quarter of the packets in flight and queued
    // (the state that grows with the bandwidth-delay product), the same flows and links.
    // What the 10 to 1000 flows ratio is when less of the state must stay in the cache
    // (benches/RESULTS.md, "sixteenth step").
    for n in [10, 1000] {
        if args.iter().any(|a| *a == format!("wide{n}_10ms")) {
            bench(
                &format!("wide{n}_10ms: as wide{n} with a 10 ms base RTT"),
                &with_rtt(half_bbr_half_cubic(n, 10_000_000_000), 10_000_000),
                3,
            );
        }
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
