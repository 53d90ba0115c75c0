//! BPF objects against their native twins: `cargo bench -p tcplab-controllers --bench bpf
//! [NAME...]` (needs clang) runs the bottleneck bench's scenario (a) (2 flows, 10 Mbit/s,
//! 40 ms, 1-BDP drop-tail buffer, 60 s, counters only) with reno, cubic, dctcp and bbr
//! natively and as compiled BPF objects (bpf/examples/*.bpf.c, `cc = "bpf"`, crates/bpf's
//! interpreter), alternating, and prints the median wall time per bottleneck packet and
//! the ratio BPF / native. A pair's outputs are identical (tests/bpf_flows.rs), so the
//! ratio is the BPF seam's cost alone. It also prints the ratio of the thread's CPU
//! time (CLOCK_THREAD_CPUTIME_ID), which time spent waiting for a core shared with
//! other processes does not inflate.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use tcplab_controllers::Controllers;
use tcplab_sim::World;

#[path = "../../sim/tests/common/mod.rs"]
mod common;

use common::{dumbbell, MS, S};

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

/// This thread's CPU time in seconds.
fn cpu_now() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the struct we pass and nothing else.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Scenario (a) with `name` natively and as its BPF object, alternating `reps` times.
fn bench_bpf(name: &str, reps: usize) {
    let obj = bpf_object(name);
    let mut native = dumbbell("cubic", 2, 10_000_000, 40 * MS, 1.0, 60 * S);
    native.sample_interval_ns = 0;
    let mut bpf = native.clone();
    for f in &mut native.flows {
        f.cc = name.replace('_', "-");
    }
    for f in &mut bpf.flows {
        f.cc = "bpf".into();
        f.bpf_object = Some(obj.to_string_lossy().into_owned());
    }
    let (mut tn, mut tb) = (Vec::new(), Vec::new());
    let (mut cn, mut cb) = (Vec::new(), Vec::new());
    let mut pkts = 0;
    for _ in 0..reps {
        let (t0, c0) = (Instant::now(), cpu_now());
        let a = World::run_config(&native, &Controllers::new()).expect("run");
        tn.push(t0.elapsed().as_secs_f64());
        cn.push(cpu_now() - c0);
        let (t0, c0) = (Instant::now(), cpu_now());
        let b = World::run_config(&bpf, &Controllers::new()).expect("run");
        tb.push(t0.elapsed().as_secs_f64());
        cb.push(cpu_now() - c0);
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
    let (ncpu, bcpu) = (med(cn), med(cb));
    let per = |w: f64| w * 1e9 / pkts as f64;
    println!(
        "bpf {name}: {pkts} bottleneck packets; median over {reps} runs: native {:.1} ns/packet ({:.0} packets/s), BPF interpreter {:.1} ns/packet ({:.0} packets/s); BPF / native = {:.2}; CPU time: native {:.1}, BPF {:.1} ns/packet, BPF / native = {:.2}",
        per(n),
        pkts as f64 / n,
        per(b),
        pkts as f64 / b,
        b / n,
        per(ncpu),
        per(bcpu),
        bcpu / ncpu
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let names: Vec<&str> = match args.len() {
        0 => vec!["reno", "cubic", "dctcp", "bbr", "da_bbr"],
        _ => args.iter().map(String::as_str).collect(),
    };
    for name in names {
        bench_bpf(name, 9);
    }
}
