//! BPF objects against their native twins: `cargo bench -p tcplab-controllers --bench bpf
//! [NAME...]` (needs clang) runs the bottleneck bench's scenario (a) (2 flows, 10 Mbit/s,
//! 40 ms, 1-BDP drop-tail buffer, 60 s, counters only) with reno, cubic, dctcp and bbr
//! natively and as compiled BPF objects (bpf/examples/*.bpf.c, `cc = "bpf"`), the BPF
//! runs once with crates/bpf's interpreter (the JIT switched off) and once with its JIT,
//! alternating native, interpreter, JIT, and prints the median wall time per bottleneck
//! packet and the ratios BPF / native. A pair's outputs are identical (tests/bpf_flows.rs), so the
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

/// One run of `cfg`: (wall seconds, CPU seconds, bottleneck packets).
fn timed(cfg: &tcplab_sim::config::WorldConfig) -> (f64, f64, u64) {
    let (t0, c0) = (Instant::now(), cpu_now());
    let out = World::run_config(cfg, &Controllers::new()).expect("run");
    (
        t0.elapsed().as_secs_f64(),
        cpu_now() - c0,
        out.bottleneck_packets,
    )
}

/// Scenario (a) with `name` natively and as its BPF object (interpreted, then
/// compiled), alternating `reps` times.
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
    // Wall and CPU seconds per run: native, interpreter, JIT.
    let mut t: [Vec<f64>; 3] = Default::default();
    let mut c: [Vec<f64>; 3] = Default::default();
    let mut pkts = 0;
    for _ in 0..reps {
        for (k, (cfg, jit_on)) in [(&native, true), (&bpf, false), (&bpf, true)]
            .into_iter()
            .enumerate()
        {
            tcplab_bpf::vm::jit::set_mode(if jit_on {
                tcplab_bpf::vm::jit::Mode::Tiered
            } else {
                tcplab_bpf::vm::jit::Mode::Off
            });
            let (w, cpu, p) = timed(cfg);
            t[k].push(w);
            c[k].push(cpu);
            if k > 0 {
                assert_eq!(p, pkts, "BPF and native runs differ");
            }
            pkts = p;
        }
    }
    let med = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let per = |w: f64| w * 1e9 / pkts as f64;
    let (n, i, j) = (med(&t[0]), med(&t[1]), med(&t[2]));
    let (nc, ic, jc) = (med(&c[0]), med(&c[1]), med(&c[2]));
    println!(
        "bpf {name}: {pkts} bottleneck packets; median over {reps} runs, ns/packet wall: native {:.1}, interpreter {:.1}, JIT {:.1}; BPF / native = {:.2} interpreted, {:.2} JIT; CPU time: native {:.1}, interpreter {:.1}, JIT {:.1} ns/packet, BPF / native = {:.2} interpreted, {:.2} JIT",
        per(n),
        per(i),
        per(j),
        i / n,
        j / n,
        per(nc),
        per(ic),
        per(jc),
        ic / nc,
        jc / nc
    );
    let fresh =
        tcplab_bpf::BpfObject::parse(&std::fs::read(&obj).expect("object")).expect("object");
    match tcplab_bpf::vm::jit::compile_time(fresh.code()) {
        Some(d) => println!(
            "bpf {name}: JIT compile time {:.1} ms",
            d.as_secs_f64() * 1e3
        ),
        None => println!("bpf {name}: the JIT refused it"),
    }
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
    let reps = std::env::var("BENCH_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(9);
    for name in names {
        bench_bpf(name, reps);
    }
}
