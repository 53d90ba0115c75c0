//! Builds the test programs from source with clang, as a researcher would
//! (`clang -target bpf -O2 -g -I bpf/include -c`). Without clang the tests that need an
//! object print why and pass without checking (scripts/test.sh installs clang).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use tcplab_cc::ops::CcView;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Compiles `path` (relative to the repository root) and returns the object's bytes,
/// or None (with a message) when clang is not installed.
pub fn compile(path: &str) -> Option<Vec<u8>> {
    compile_with(path, &[])
}

/// As `compile`, with `-D` definitions (test cases of one source).
pub fn compile_with(path: &str, defines: &[&str]) -> Option<Vec<u8>> {
    let src = repo().join(path);
    let stem = src.file_stem().unwrap().to_string_lossy().replace('.', "_");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{stem}{}.o", defines.join("_")));
    let res = Command::new("clang")
        .args(defines.iter().map(|d| format!("-D{d}")))
        .args(["-target", "bpf", "-O2", "-g", "-I"])
        .arg(repo().join("bpf/include"))
        .arg("-c")
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .output();
    match res {
        Err(_) => {
            eprintln!("SKIPPED: clang is not installed; cannot build {path}");
            None
        }
        Ok(o) if !o.status.success() => {
            panic!(
                "clang failed on {path}:\n{}",
                String::from_utf8_lossy(&o.stderr)
            )
        }
        Ok(_) => Some(std::fs::read(&out).unwrap()),
    }
}

/// A socket in congestion avoidance or slow start with the window filled.
pub fn view(cwnd: u32, ssthresh: u32) -> CcView {
    let mut tp = CcView::new(1448, 1_000_000);
    tp.snd_cwnd = cwnd;
    tp.snd_ssthresh = ssthresh;
    tp.is_cwnd_limited = true;
    tp
}

/// What a `SimHost` borrows, owned, for tests that run code outside a loaded program
/// (`HostParts::new().host()`: time 5 ms, HZ 1000, socket 1, the `view(10, 100)` socket).
pub struct HostParts {
    rng: tcplab_cc::bbr::rng::CycleRng,
    program: tcplab_bpf::loader::Program,
    shared: tcplab_bpf::program::Shared,
    view: CcView,
    natives: tcplab_bpf::native::Natives,
}

impl HostParts {
    pub fn new() -> HostParts {
        HostParts {
            rng: tcplab_cc::bbr::rng::CycleRng::new(1),
            program: Default::default(),
            shared: Default::default(),
            view: view(10, 100),
            natives: Default::default(),
        }
    }

    pub fn host(&mut self) -> tcplab_bpf::host::SimHost<'_> {
        tcplab_bpf::host::SimHost {
            now_us: 5_000,
            hz: 1000,
            send_ack: None,
            rng: &mut self.rng,
            prog: &self.program,
            shared: &mut self.shared,
            socket: 1,
            ca_name: "random",
            view: &self.view,
            natives: &mut self.natives,
            rate: None,
            ack: None,
        }
    }
}

/// The cases of tests/progs/verifier.bpf.c (its `-D` define, "" for none) with the
/// verdict each side gives when the object loads: None (it loads) or part of the
/// message it is refused with. The kernel's are what the 6.18 verifier and libbpf say
/// (tests/kernel_load.rs checks them on the running kernel); the simulator's are held
/// to the same verdicts (docs/WRITING_ALGORITHMS.md, "What still differs", for what its
/// load-time checks leave to run time).
pub struct VerifierCase {
    pub define: &'static str,
    pub kernel: Option<&'static str>,
    pub simulator: Option<&'static str>,
}

pub const VERIFIER_SRC: &str = "crates/bpf/tests/progs/verifier.bpf.c";

pub const VERIFIER_CASES: &[VerifierCase] = &[
    VerifierCase {
        define: "",
        kernel: None,
        simulator: None,
    },
    // v[2] of a 16-byte value: off 16, size 8.
    VerifierCase {
        define: "CASE_MAP_CONST_OOB",
        kernel: Some("invalid access to map value, value_size=16 off=16 size=8"),
        simulator: Some("invalid access to map value, value_size=16 off=16 size=8"),
    },
    // v[cwnd % 4] (clang: `& 3`): offsets 0..=24, the verifier's range says 24 + 8 > 16,
    // and so does the simulator's (vm/scalar.rs).
    VerifierCase {
        define: "CASE_MAP_VAR_OOB",
        kernel: Some("invalid access to map value, value_size=16 off=24 size=8"),
        simulator: Some("invalid access to map value, value_size=16 off=24 size=8"),
    },
    // v[cwnd & 1]: offsets 0..=8, inside.
    VerifierCase {
        define: "CASE_MAP_VAR_AND",
        kernel: None,
        simulator: None,
    },
    // v[cwnd]: cwnd * 8 up to 2^35 - 8, past BPF_MAX_VAR_OFF (2^29).
    VerifierCase {
        define: "CASE_MAP_VAR_UNBOUNDED",
        kernel: Some("R0 unbounded memory access, make sure to bounds check any such access"),
        simulator: Some("R0 unbounded memory access, make sure to bounds check any such access"),
    },
    // if (k < 2) v[k]: the branch's fall-through edge leaves 0..=1.
    VerifierCase {
        define: "CASE_MAP_VAR_CHECKED",
        kernel: None,
        simulator: None,
    },
    VerifierCase {
        define: "CASE_STACK_FP0",
        kernel: Some("invalid write to stack R10 off=0 size=8"),
        simulator: Some("invalid write to stack R10 off=0 size=8"),
    },
    VerifierCase {
        define: "CASE_STACK_FP8",
        kernel: Some("invalid write to stack R10 off=8 size=8"),
        simulator: Some("invalid write to stack R10 off=8 size=8"),
    },
    // Each pass reads cwnd afresh and bumps a stack counter: no two passes' states
    // are equal, so the verifier walks it until its 1M-instruction limit.
    VerifierCase {
        define: "CASE_LOOP_FRESH",
        kernel: Some("BPF program is too large"),
        simulator: Some("unbounded loop"),
    },
    // Counted to cwnd, which the verifier does not know: each pass's counter is a new
    // constant, the exit `cwnd > i` undecided, until the 1M-instruction limit; the
    // simulator walks it the same way (vm/loop_walk.rs).
    VerifierCase {
        define: "CASE_LOOP_COUNTED",
        kernel: Some("BPF program is too large"),
        simulator: Some("BPF program is too large"),
    },
    // Counted to 64: the exit decides at the 64th pass.
    VerifierCase {
        define: "CASE_LOOP_CONST",
        kernel: None,
        simulator: None,
    },
    // i < cwnd && i < 16: the second exit decides at the 16th pass.
    VerifierCase {
        define: "CASE_LOOP_CLAMPED",
        kernel: None,
        simulator: None,
    },
    // n = min(cwnd, 64) first, then i < n: n is 0..=64 on the path, decided by pass 64.
    VerifierCase {
        define: "CASE_LOOP_MIN",
        kernel: None,
        simulator: None,
    },
    VerifierCase {
        define: "CASE_TAIL_CALL",
        kernel: None,
        simulator: None,
    },
    VerifierCase {
        define: "CASE_TAIL_CALL_EMPTY",
        kernel: None,
        simulator: None,
    },
    VerifierCase {
        define: "CASE_TAIL_CALL_OTHER",
        kernel: Some("failed to initialize slot [0] to prog 'verifier_undo_cwnd'"),
        simulator: Some("failed to initialize slot [0] to prog 'verifier_undo_cwnd'"),
    },
];
