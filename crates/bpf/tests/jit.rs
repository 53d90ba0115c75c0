//! The JIT (crates/bpf/src/vm/jit) against the interpreter: every shipped example is
//! compiled (not refused); hand-assembled programs give hand-computed results compiled;
//! faults carry the interpreter's pc and message.

mod common;

use common::compile;
use tcplab_bpf::BpfObject;

const EXAMPLES: [&str; 5] = ["reno", "cubic", "dctcp", "bbr", "da_bbr"];

#[test]
fn every_shipped_example_is_compiled() {
    for dir in ["bpf/examples", "python/tcplab/data/bpf/examples"] {
        for name in EXAMPLES {
            let Some(bytes) = compile(&format!("{dir}/{name}.bpf.c")) else {
                return;
            };
            let obj = BpfObject::parse(&bytes).unwrap();
            assert_eq!(
                tcplab_bpf::vm::jit::refusal(obj.code()),
                None,
                "{dir}/{name}"
            );
            let t = tcplab_bpf::vm::jit::compile_time(obj.code()).unwrap();
            eprintln!("{dir}/{name}: compiled in {t:?}");
        }
    }
}
