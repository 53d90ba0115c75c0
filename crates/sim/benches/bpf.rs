//! Benchmark: a BPF congestion control (crates/bpf's interpreter) against the native one
//! on the same world, per bottleneck packet.
//!
//! `cargo bench -p tcplab-sim --bench bpf` compiles bpf/examples/{reno,cubic}.bpf.c with
//! clang and runs 2 flows, 10 Mbit/s, 40 ms, one-BDP buffer, 60 s (scenario (a) of
//! benches/bottleneck.rs) with each algorithm natively and as a BPF object, alternating,
//! and prints the median wall time per bottleneck packet and the ratio BPF / native.
//! The two runs of a pair give identical outputs (tests/bpf_flows.rs), so the ratio is
//! the interpreter's cost alone.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use tcplab_sim::config::{AppConfig, FlowConfig, LinkConfig, QueueLimit, TcpConfig, WorldConfig};
use tcplab_sim::World;

fn object(name: &str) -> PathBuf {
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

fn dumbbell(cc: &str, obj: Option<&Path>) -> WorldConfig {
    let (rate_bps, rtt_ns) = (10_000_000u64, 40_000_000u64);
    let access = LinkConfig {
        rate_bps: 1_000_000_000,
        delay_ns: rtt_ns / 8,
        buffer: None,
        loss: 0.0,
    };
    WorldConfig {
        duration_ns: 60_000_000_000,
        seed: 1,
        sample_interval_ns: 0,
        tcp: TcpConfig::default(),
        bottleneck: LinkConfig {
            rate_bps,
            delay_ns: rtt_ns / 4,
            buffer: Some(QueueLimit::Bytes(rate_bps * rtt_ns / 1_000_000_000 / 8)),
            loss: 0.0,
        },
        bottleneck_reverse: None,
        flows: (0..2)
            .map(|_| FlowConfig {
                cc: if obj.is_some() {
                    "bpf".into()
                } else {
                    cc.into()
                },
                params: Default::default(),
                sender_access: access.clone(),
                receiver_access: access.clone(),
                start_ns: 0,
                stop_ns: None,
                app: AppConfig::Bulk,
                ecn: None,
                onoff: None,
                bpf_object: obj.map(|p| p.to_string_lossy().into_owned()),
            })
            .collect(),
        events: vec![],
        aqm: None,
        shaping: Default::default(),
        capture: vec![],
        links: vec![],
        paths: vec![],
        sources: vec![],
    }
}

/// Wall seconds of one run and its bottleneck packets.
fn run(cfg: &WorldConfig) -> (f64, u64) {
    let t0 = Instant::now();
    let out = World::run_config(cfg).expect("run");
    (t0.elapsed().as_secs_f64(), out.bottleneck_packets)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let reps = 9;
    for name in ["reno", "cubic"] {
        let obj = object(name);
        let (native, bpf) = (dumbbell(name, None), dumbbell(name, Some(&obj)));
        let (mut tn, mut tb) = (Vec::new(), Vec::new());
        let mut pkts = 0;
        for _ in 0..reps {
            let (w, p) = run(&native);
            tn.push(w);
            let (w, q) = run(&bpf);
            assert_eq!(p, q, "BPF and native runs differ");
            tb.push(w);
            pkts = p;
        }
        let (n, b) = (median(tn), median(tb));
        let per = |w: f64| w * 1e9 / pkts as f64;
        println!(
            "{name}: {pkts} bottleneck packets; median over {reps} runs: native {:.1} ns/packet ({:.0} packets/s), BPF interpreter {:.1} ns/packet ({:.0} packets/s); BPF / native = {:.2}",
            per(n),
            pkts as f64 / n,
            per(b),
            pkts as f64 / b,
            b / n
        );
    }
}
