//! The JIT changes nothing: every shipped example (bpf/examples/*.bpf.c, which is
//! python/tcplab/data/bpf/examples: bpf/ is a symlink) run as flows with the JIT and with the
//! interpreter (`tcplab_bpf::vm::jit::set_mode`: off, eager) gives the same output bit for bit:
//! every counter and every series. One test in this binary, as the switch is the
//! process's. Needs clang (scripts/test.sh installs it); without it the test says so
//! and passes.

#[path = "../../sim/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{dumbbell, MS, S};
use tcplab_bpf::vm::jit;
use tcplab_controllers::Controllers;
use tcplab_sim::net::aqm::AqmConfig;
use tcplab_sim::World;

fn object(path: &str) -> Option<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("jit_{}.o", path.replace(['/', '.'], "_")));
    let status = Command::new("clang")
        .args(["-target", "bpf", "-O2", "-g", "-I"])
        .arg(repo.join("bpf/include"))
        .arg("-c")
        .arg(repo.join(path))
        .arg("-o")
        .arg(&out)
        .status();
    match status {
        Err(_) => {
            eprintln!("SKIPPED: clang is not installed; cannot build {path}");
            None
        }
        Ok(s) => {
            assert!(s.success(), "clang failed on {path}");
            Some(out)
        }
    }
}

#[test]
fn every_shipped_example_runs_the_same_compiled_and_interpreted() {
    // bpf/ is python/tcplab/data/bpf (a symlink): one set of examples.
    let dir = "bpf/examples";
    for name in ["reno", "cubic", "dctcp", "bbr", "da_bbr", "vivace"] {
        let Some(obj) = object(&format!("{dir}/{name}.bpf.c")) else {
            return;
        };
        // Two flows, the second starting later, a lossy one-BDP buffer, 20 s:
        // slow start, losses, recovery, and for BBR a PROBE_RTT (min_rtt expires
        // after 10 s); series every 100 ms.
        let mut cfg = dumbbell("bpf", 2, 20_000_000, 40 * MS, 1.0, 20 * S);
        cfg.flows[1].start_ns = 3 * S;
        for f in &mut cfg.flows {
            f.bpf_object = Some(obj.to_string_lossy().into_owned());
        }
        if name == "dctcp" {
            // DCTCP's ECN path: a step-marking (K = 20 packets) ECN queue.
            cfg.bottleneck.aqm = Some(AqmConfig::Step {
                k_pkts: 20,
                ecn: true,
            });
        }
        jit::set_mode(jit::Mode::Off);
        let interpreted = World::run_config(&cfg, &Controllers::new()).unwrap();
        jit::set_mode(jit::Mode::Eager);
        let compiled = World::run_config(&cfg, &Controllers::new()).unwrap();
        let a = serde_json::to_string(&interpreted).unwrap();
        let b = serde_json::to_string(&compiled).unwrap();
        assert!(
            interpreted
                .flows
                .iter()
                .all(|f| f.delivered_bytes > 1_000_000),
            "{name}: {:?}",
            interpreted.flows
        );
        assert!(
            a == b,
            "{dir}/{name}: the JIT's run differs from the interpreter's"
        );
    }
}
