//! Random input never panics: random instruction sequences through the load-time checks
//! and the interpreter, and random corruptions of a real object through the loader.

mod common;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use tcplab_bpf::calls::Call;
use tcplab_bpf::host::SOCK_ADDR;
use tcplab_bpf::insn::{ins, Insn, EXIT};

/// The program's last instruction.
const EXIT_INSN: Insn = ins(EXIT, 0, 0, 0, 0);
use tcplab_bpf::vm::memory::{addr, Global, Memory, REGION_CTX};
use tcplab_bpf::vm::{self, verify};
use tcplab_bpf::BpfObject;

/// Opcodes the interpreter runs, plus a few it must refuse.
const CODES: &[u8] = &[
    0x07, 0x0f, 0x17, 0x1f, 0x27, 0x2f, 0x37, 0x3f, 0x47, 0x4f, 0x57, 0x5f, 0x67, 0x6f, 0x77, 0x7f,
    0x87, 0x97, 0x9f, 0xa7, 0xaf, 0xb7, 0xbf, 0xc7, 0xcf, 0x04, 0x0c, 0x14, 0x34, 0x3c, 0x64, 0x74,
    0x84, 0x94, 0x9c, 0xb4, 0xbc, 0xc4, 0xd4, 0xdc, 0x61, 0x69, 0x71, 0x79, 0x62, 0x6a, 0x72, 0x7a,
    0x63, 0x6b, 0x73, 0x7b, 0xc3, 0xdb, 0x18, 0x05, 0x15, 0x1d, 0x25, 0x2d, 0x35, 0x45, 0x55, 0x5d,
    0x65, 0x6d, 0x75, 0xa5, 0xb5, 0xc5, 0xd5, 0x16, 0x1e, 0xa6, 0x85, 0x95, 0x00, 0x20, 0xff, 0xe7,
];

fn insn() -> impl Strategy<Value = Insn> {
    (
        prop::sample::select(CODES),
        prop_oneof![20 => 0u8..10, 1 => 10u8..12],
        prop_oneof![20 => 0u8..11, 1 => Just(11u8)],
        prop_oneof![10 => -4i16..8, 1 => any::<i16>()],
        prop_oneof![
            -2i32..300,
            Just(0xc1),
            Just(0x01),
            Just(16),
            Just(32),
            any::<i32>()
        ],
        0u8..20,
    )
        .prop_map(|(code, dst, src, off, imm, keep_off)| {
            // ALU ops with a nonzero offset are refused; mostly generate runnable ones.
            let alu = matches!(code & 7, 4 | 7);
            let off = if alu && keep_off != 0 { 0 } else { off };
            ins(code, dst, src, off, imm)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_programs_never_panic(mut prog in prop::collection::vec(insn(), 1..40), r1_sock in any::<bool>()) {
        prog.push(EXIT_INSN);
        // Calls with src 0/2 must name one of ours to pass the checks; map small imms.
        for i in prog.iter_mut() {
            if i.code == 0x85 && i.src != 1 {
                i.imm = i.imm.rem_euclid(Call::ALL.len() as i32);
            }
        }
        if verify::check(&prog).is_ok() {
            let globals = vec![Global::section(".data", vec![0; 16], true)];
            let mut mem = Memory::new(globals);
            let mut parts = common::HostParts::new();
            let mut host = parts.host();
            let r1 = if r1_sock { SOCK_ADDR } else { addr(REGION_CTX, 0) };
            let _ = vm::run(&prog, 0, r1, &mut mem, &mut host, 5_000);
            // The stack region never grows past its frames.
            prop_assert_eq!(mem.stack.len(), 4096);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn corrupted_objects_never_panic(flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let Some(bytes) = reno_object() else { return Ok(()) };
        let mut bytes = bytes;
        for (at, v) in flips {
            let k = at.index(bytes.len());
            bytes[k] = v;
        }
        if let Ok(obj) = BpfObject::parse(&bytes) {
            let mut cc = obj.instantiate_ops(&Default::default()).unwrap();
            let mut tp = common::view(10, 100);
            use tcplab_cc::ops::CongestionOps;
            cc.init(&mut tp);
            cc.cong_avoid(&mut tp, 1, 1);
            let _ = cc.ssthresh(&tp);
        }
    }
}

/// Guards the generator: enough random programs must get past the checks to run.
#[test]
fn random_programs_mostly_run() {
    let mut runner = proptest::test_runner::TestRunner::default();
    let strategy = prop::collection::vec(insn(), 1..6);
    let mut ran = 0;
    for _ in 0..500 {
        let mut prog = strategy.new_tree(&mut runner).unwrap().current();
        prog.push(EXIT_INSN);
        for i in prog.iter_mut() {
            if i.code == 0x85 && i.src != 1 {
                i.imm = i.imm.rem_euclid(Call::ALL.len() as i32);
            }
        }
        ran += usize::from(verify::check(&prog).is_ok());
    }
    assert!(
        ran > 50,
        "only {ran} of 500 short random programs pass the checks"
    );
}

fn reno_object() -> Option<Vec<u8>> {
    use std::sync::OnceLock;
    static OBJ: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    OBJ.get_or_init(|| common::compile("bpf/examples/reno.bpf.c"))
        .clone()
}
