//! The JIT (crates/bpf/src/vm/jit) against hand-computed results and against the
//! interpreter: every shipped example is compiled (not refused); hand-assembled programs
//! give the kernel's arithmetic compiled; faults carry the interpreter's pc and message;
//! random programs give the interpreter's r0, memory and fault.
//! (crates/controllers/tests/bpf_jit.rs runs the examples as flows both ways.)

mod common;

use common::compile;
use proptest::prelude::*;
use tcplab_bpf::calls::Call;
use tcplab_bpf::host::SOCK_ADDR;
use tcplab_bpf::insn::{ins, Insn};
use tcplab_bpf::layout::SOCK_SIZE;
use tcplab_bpf::vm::memory::{addr, Global, Memory, REGION_CTX};
use tcplab_bpf::vm::{self, jit, verify, Code, Fault, Host};
use tcplab_bpf::BpfObject;

const EXAMPLES: [&str; 5] = ["reno", "cubic", "dctcp", "bbr", "da_bbr"];

#[test]
fn every_shipped_example_is_compiled() {
    // bpf/ is python/tcplab/data/bpf (a symlink): one set of examples.
    let dir = "bpf/examples";
    for name in EXAMPLES {
        let Some(bytes) = compile(&format!("{dir}/{name}.bpf.c")) else {
            return;
        };
        let obj = BpfObject::parse(&bytes).unwrap();
        assert_eq!(jit::refusal(obj.code()), None, "{dir}/{name}");
        let t = jit::compile_time(obj.code()).unwrap();
        eprintln!("{dir}/{name}: compiled in {t:?}");
    }
}

const EXIT: Insn = ins(tcplab_bpf::insn::EXIT, 0, 0, 0, 0);

struct NoCalls;
impl Host for NoCalls {
    fn call(&mut self, c: Call, _: i16, a: [u64; 5], _: &mut Memory) -> Result<u64, String> {
        // A recognisable result: the call id and the first argument.
        Ok((c as u64) << 32 | a[0] & 0xffff_ffff)
    }
}

fn memory() -> Memory {
    Memory::new(vec![
        Global::section(".data", vec![0; 16], true),
        Global::section(".rodata", vec![7; 16], false),
    ])
}

/// Runs `prog` from pc 0 compiled (it must compile), with `r1` and `budget`.
fn jitted(prog: &[Insn], r1: u64, budget: u64) -> (Result<u64, Fault>, Memory) {
    verify::check(prog).unwrap();
    let code = Code::with_entries(prog, &[0]);
    assert_eq!(jit::refusal(&code), None);
    let mut mem = memory();
    let r = jit::run(&code, 0, r1, &mut mem, &mut NoCalls, budget).expect("compiled");
    (r, mem)
}

fn interpreted(prog: &[Insn], r1: u64, budget: u64) -> (Result<u64, Fault>, Memory) {
    let code = Code::with_entries(prog, &[0]);
    let mut mem = memory();
    let r = vm::interpret(&code, 0, r1, &mut mem, &mut NoCalls, budget);
    (r, mem)
}

/// r0 of `prog` compiled, checked against the interpreter too.
fn r0(prog: &[Insn]) -> u64 {
    let (a, _) = jitted(prog, 0, 1000);
    let (b, _) = interpreted(prog, 0, 1000);
    assert_eq!(a, b, "JIT and interpreter differ");
    a.unwrap()
}

#[test]
fn alu32_wraps_and_zero_extends() {
    // r0 = -1 (mov64 sign-extends); w0 += 1 -> 0 with the upper half cleared.
    assert_eq!(
        r0(&[ins(0xb7, 0, 0, 0, -1), ins(0x04, 0, 0, 0, 1), EXIT]),
        0
    );
    // w0 = 0xffffffff; w0 *= 3 -> 0xfffffffd (mod 2^32), zero-extended.
    assert_eq!(
        r0(&[ins(0xb4, 0, 0, 0, -1), ins(0x24, 0, 0, 0, 3), EXIT]),
        0xffff_fffd
    );
    // w0 = 5; w0 -= 7 -> 0xfffffffe; neg32 -> 2.
    assert_eq!(
        r0(&[ins(0xb4, 0, 0, 0, 5), ins(0x14, 0, 0, 0, 7), EXIT]),
        0xffff_fffe
    );
    assert_eq!(
        r0(&[
            ins(0xb4, 0, 0, 0, 5),
            ins(0x14, 0, 0, 0, 7),
            ins(0x84, 0, 0, 0, 0),
            EXIT
        ]),
        2
    );
}

#[test]
fn shifts_mask_the_amount() {
    // r0 = 1; r1 = 65; r0 <<= r1 -> 1 << (65 & 63) = 2.
    assert_eq!(
        r0(&[
            ins(0xb7, 0, 0, 0, 1),
            ins(0xb7, 1, 0, 0, 65),
            ins(0x6f, 0, 1, 0, 0),
            EXIT
        ]),
        2
    );
    // w0 = 0x80000000; w1 = 33; w0 >>= w1 -> 0x80000000 >> 1.
    assert_eq!(
        r0(&[
            ins(0xb4, 0, 0, 0, i32::MIN),
            ins(0xb4, 1, 0, 0, 33),
            ins(0x7c, 0, 1, 0, 0),
            EXIT
        ]),
        0x4000_0000
    );
    // arsh32: w0 = 0x80000000 s>> 4 = 0xf8000000 (zero-extended); arsh64 of -16 by 2 = -4.
    assert_eq!(
        r0(&[ins(0xb4, 0, 0, 0, i32::MIN), ins(0xc4, 0, 0, 0, 4), EXIT]),
        0xf800_0000
    );
    assert_eq!(
        r0(&[ins(0xb7, 0, 0, 0, -16), ins(0xc7, 0, 0, 0, 2), EXIT]),
        (-4i64) as u64
    );
}

#[test]
fn division_and_modulo_by_zero_follow_the_kernel() {
    let zero = |op: u8| {
        [
            ins(0xb7, 0, 0, 0, 7),
            ins(0xb7, 1, 0, 0, 0),
            ins(op, 0, 1, 0, 0),
            EXIT,
        ]
    };
    assert_eq!(r0(&zero(0x3f)), 0, "div64 by 0");
    assert_eq!(r0(&zero(0x9f)), 7, "mod64 by 0");
    assert_eq!(r0(&zero(0x3c)), 0, "div32 by 0");
    assert_eq!(r0(&zero(0x9c)), 7, "mod32 by 0");
    // Immediate divisor 0 (the verifier refuses it in the kernel; the interpreter's rule).
    assert_eq!(r0(&[ins(0xb7, 0, 0, 0, 9), ins(0x37, 0, 0, 0, 0), EXIT]), 0);
    assert_eq!(r0(&[ins(0xb7, 0, 0, 0, 9), ins(0x97, 0, 0, 0, 0), EXIT]), 9);
    // Unsigned: -1 / 2 = 0x7fff_ffff_ffff_ffff; w: 0xffffffff % 10 = 5.
    assert_eq!(
        r0(&[ins(0xb7, 0, 0, 0, -1), ins(0x37, 0, 0, 0, 2), EXIT]),
        u64::MAX / 2
    );
    assert_eq!(
        r0(&[ins(0xb7, 0, 0, 0, -1), ins(0x94, 0, 0, 0, 10), EXIT]),
        5
    );
}

#[test]
fn signed_and_unsigned_compares() {
    // r1 = -1; r0 = 1; if r1 s> 0 goto +1 (not taken: -1 < 0); r0 = 2 -> ... result 2.
    let p = |code: u8, imm: i32| {
        [
            ins(0xb7, 1, 0, 0, -1),
            ins(0xb7, 0, 0, 0, 1),
            ins(code, 1, 0, 1, imm),
            ins(0xb7, 0, 0, 0, 2),
            EXIT,
        ]
    };
    assert_eq!(r0(&p(0x65, 0)), 2, "jsgt -1 > 0 not taken");
    assert_eq!(r0(&p(0x25, 0)), 1, "jgt: 2^64-1 > 0 taken");
    assert_eq!(r0(&p(0xc5, 0)), 1, "jslt -1 < 0 taken");
    assert_eq!(r0(&p(0xa5, 0)), 2, "jlt not taken");
    // jmp32: the low halves. w1 = 0xffffffff s< 0 taken; jeq32 with imm -1 taken.
    assert_eq!(r0(&p(0xc6, 0)), 1, "jslt32 taken");
    assert_eq!(r0(&p(0x16, -1)), 1, "jeq32 -1 taken");
    assert_eq!(r0(&p(0x46, 0x100)), 1, "jset32 taken");
    assert_eq!(r0(&p(0x56, -1)), 2, "jne32 not taken");
}

#[test]
fn byte_swaps_and_ld_imm64() {
    // r0 = 0x1122334455667788 (LD_IMM64); be16 -> 0x8877; le32 of it -> 0x55667788.
    let imm = [
        ins(0x18, 0, 0, 0, 0x5566_7788),
        ins(0, 0, 0, 0, 0x1122_3344),
    ];
    let with = |tail: Insn| [imm[0], imm[1], tail, EXIT];
    assert_eq!(r0(&with(ins(0xdc, 0, 0, 0, 16))), 0x8877);
    assert_eq!(r0(&with(ins(0xd4, 0, 0, 0, 32))), 0x5566_7788);
    assert_eq!(r0(&with(ins(0xdc, 0, 0, 0, 64))), 0x8877_6655_4433_2211);
    assert_eq!(r0(&with(ins(0xdc, 0, 0, 0, 32))), 0x8877_6655);
}

#[test]
fn atomics_on_the_stack() {
    // *(u64 *)(r10 - 8) = 5; r1 = 3; lock fetch_add -> r1 = 5, memory 8;
    // r0 = 8; cmpxchg(r10 - 8, r0 = 8, r2 = 42) -> r0 = 8, memory 42; r0 += r1; r0 += mem.
    let p = [
        ins(0x7a, 10, 0, -8, 5),
        ins(0xb7, 1, 0, 0, 3),
        ins(0xdb, 10, 1, -8, 0x01),
        ins(0xb7, 0, 0, 0, 8),
        ins(0xb7, 2, 0, 0, 42),
        ins(0xdb, 10, 2, -8, 0xf1),
        ins(0x0f, 0, 1, 0, 0),
        ins(0x79, 3, 10, -8, 0),
        ins(0x0f, 0, 3, 0, 0),
        EXIT,
    ];
    // 8 (old, cmpxchg) + 5 (fetch_add's old) + 42.
    assert_eq!(r0(&p), 55);
    // 32-bit xchg: old value in src, zero-extended; or without fetch leaves src.
    let p = [
        ins(0x62, 10, 0, -4, -1),
        ins(0xb7, 1, 0, 0, 9),
        ins(0xc3, 10, 1, -4, 0xe1),
        ins(0xb7, 2, 0, 0, 0x10),
        ins(0xc3, 10, 2, -4, 0x40),
        ins(0x61, 0, 10, -4, 0),
        ins(0x0f, 0, 1, 0, 0),
        EXIT,
    ];
    // memory 9 | 0x10 = 0x19, plus r1 = old 0xffffffff.
    assert_eq!(r0(&p), 0x19 + 0xffff_ffff);
}

#[test]
fn bpf_to_bpf_calls_keep_r6_to_r9_and_pass_r1_to_r5_back() {
    // main: r6 = 100; r1 = 5; call f; r0 += r6; r0 += r1 (the callee's r1); exit
    // f: r1 *= 3; r6 = 7; r0 = r1; exit
    let p = [
        ins(0xb7, 6, 0, 0, 100),
        ins(0xb7, 1, 0, 0, 5),
        ins(0x85, 0, 1, 0, 3),
        ins(0x0f, 0, 6, 0, 0),
        ins(0x0f, 0, 1, 0, 0),
        EXIT,
        ins(0x27, 1, 0, 0, 3),
        ins(0xb7, 6, 0, 0, 7),
        ins(0xbf, 0, 1, 0, 0),
        EXIT,
    ];
    assert_eq!(r0(&p), 15 + 100 + 15);
}

/// The same `Fault` compiled and interpreted.
fn same_fault(prog: &[Insn], r1: u64, budget: u64) -> Fault {
    let (a, _) = jitted(prog, r1, budget);
    let (b, _) = interpreted(prog, r1, budget);
    assert_eq!(a, b);
    a.unwrap_err()
}

#[test]
fn faults_have_the_interpreters_pc_and_message() {
    // Out of bounds: r0 = *(u64 *)(r1 + 40), r1 the 40-byte ctx array.
    let f = same_fault(
        &[ins(0xb7, 0, 0, 0, 1), ins(0x79, 0, 1, 40, 0), EXIT],
        addr(REGION_CTX, 0),
        100,
    );
    assert_eq!(f.pc, 1);
    assert_eq!(
        f.why,
        "8-byte access at 0x200000028 out of bounds (callback arguments)"
    );
    // A write to a read-only socket field (snd_una at offset 0 is not writable).
    let f = same_fault(
        &[ins(0xb7, 2, 0, 0, 1), ins(0x63, 1, 2, 0, 0), EXIT],
        SOCK_ADDR,
        100,
    );
    assert_eq!(f.pc, 1);
    assert!(f.why.starts_with("write to socket byte 0,"), "{}", f.why);
    // A write to .rodata (region 6).
    let f = same_fault(
        &[
            ins(0x18, 1, 0, 0, 0),
            ins(0, 0, 0, 0, 6),
            ins(0x62, 1, 0, 0, 1),
            EXIT,
        ],
        0,
        100,
    );
    assert_eq!(
        (f.pc, f.why.as_str()),
        (2, "write to read-only section .rodata")
    );
    // Budget: a loop `r0 += 1; goto -2` charged 2 slots per jump: with budget 9 the
    // fifth jump (at pc 1) finds 1 left.
    let f = same_fault(&[ins(0x07, 0, 0, 0, 1), ins(0x05, 0, 0, -2, 0), EXIT], 0, 9);
    assert_eq!(
        (f.pc, f.why.as_str()),
        (1, "instruction budget of 9 exhausted")
    );
    // A nested call's return is charged too; the outermost exit is not.
    let call = [ins(0x85, 0, 1, 0, 1), EXIT, ins(0xb7, 0, 0, 0, 3), EXIT];
    // Budget 1: the call (1 slot) passes, the callee's run of 2 to its exit does not.
    let f = same_fault(&call, 0, 2);
    assert_eq!(
        (f.pc, f.why.as_str()),
        (3, "instruction budget of 2 exhausted")
    );
    assert_eq!(jitted(&call, 0, 3).0, Ok(3));
    // A jump into the middle of LD_IMM64.
    let f = same_fault(
        &[
            ins(0x05, 0, 0, 1, 0),
            ins(0x18, 0, 0, 0, 1),
            ins(0, 0, 0, 0, 0),
            EXIT,
        ],
        0,
        100,
    );
    assert_eq!(
        (f.pc, f.why.as_str()),
        (2, "jump into the middle of LD_IMM64")
    );
}

// Random programs: ALU, jumps (forward and back), stack loads and stores, calls.

const ALU: &[u8] = &[
    0x07, 0x0f, 0x17, 0x1f, 0x27, 0x2f, 0x37, 0x3f, 0x47, 0x4f, 0x57, 0x5f, 0x67, 0x6f, 0x77, 0x7f,
    0x87, 0x97, 0x9f, 0xa7, 0xaf, 0xb7, 0xbf, 0xc7, 0xcf, 0x04, 0x0c, 0x14, 0x1c, 0x24, 0x2c, 0x34,
    0x3c, 0x44, 0x4c, 0x54, 0x5c, 0x64, 0x6c, 0x74, 0x7c, 0x84, 0x94, 0x9c, 0xa4, 0xac, 0xb4, 0xbc,
    0xc4, 0xcc, 0xd4, 0xdc,
];
const JMP: &[u8] = &[
    0x05, 0x15, 0x1d, 0x25, 0x2d, 0x35, 0x3d, 0x45, 0x4d, 0x55, 0x5d, 0x65, 0x6d, 0x75, 0x7d, 0xa5,
    0xad, 0xb5, 0xbd, 0xc5, 0xcd, 0xd5, 0xdd, 0x16, 0x1e, 0x26, 0x2e, 0x36, 0x3e, 0x46, 0x4e, 0x56,
    0x5e, 0x66, 0x6e, 0x76, 0x7e, 0xa6, 0xae, 0xb6, 0xbe, 0xc6, 0xce, 0xd6, 0xde,
];
const MEM: &[u8] = &[
    0x61, 0x69, 0x71, 0x79, 0x62, 0x6a, 0x72, 0x7a, 0x63, 0x6b, 0x73, 0x7b, 0xc3, 0xdb,
];

fn imm() -> impl Strategy<Value = i32> {
    prop_oneof![
        -3i32..70,
        Just(i32::MIN),
        Just(i32::MAX),
        Just(16),
        Just(32),
        Just(64),
        any::<i32>()
    ]
}

fn insn() -> impl Strategy<Value = Insn> {
    prop_oneof![
        6 => (prop::sample::select(ALU), 0u8..10, 0u8..10, imm()).prop_map(|(c, d, s, imm)| {
            let imm = if c & 0xf0 == 0xd0 { [16, 32, 64][imm.rem_euclid(3) as usize] } else { imm };
            ins(c, d, s, 0, imm)
        }),
        3 => (prop::sample::select(JMP), 0u8..10, 0u8..10, -6i16..6, imm())
            .prop_map(|(c, d, s, off, imm)| ins(c, d, s, off, imm)),
        2 => (prop::sample::select(MEM), 0u8..11, 0u8..11, -520i16..16, imm(), 0u8..8)
            .prop_map(|(c, d, s, off, imm, k)| {
                // Mostly through r10 (the stack), in 8-byte steps; atomics' operations.
                let (d, s) = if c & 7 == 1 { (d.min(9), if k < 6 { 10 } else { s }) } else { (if k < 6 { 10 } else { d }, s) };
                let imm = if c & 0xe0 == 0xc0 { [0x00, 0x01, 0x40, 0x41, 0x50, 0x51, 0xa0, 0xa1, 0xe1, 0xf1][imm.rem_euclid(10) as usize] } else { imm };
                ins(c, d, s, off & !7, imm)
            }),
        // Through r9, the socket or ctx pointer (`assemble`): the socket's writable and
        // read-only fields.
        2 => (prop::sample::select(MEM), 0u8..10, 0i16..(SOCK_SIZE as i16), imm())
            .prop_map(|(c, r, off, imm)| {
                let imm = if c & 0xe0 == 0xc0 { 0x01 } else { imm };
                if c & 7 == 1 { ins(c, r.min(8), 9, off, imm) } else { ins(c, 9, r.min(8), off, imm) }
            }),
        // Every call but bpf_tail_call, whose programs the JIT leaves to the interpreter.
        1 => (0i32..(Call::ALL.len() as i32))
            .prop_filter("not compiled", |id| *id != Call::TailCall as i32)
            .prop_map(|id| ins(0x85, 0, 2, 0, id)),
        1 => (0u8..10, any::<i32>()).prop_map(|(d, lo)| ins(0x18, d, 0, 0, lo)),
    ]
}

/// `r9 = r1`, then `body` with each LD_IMM64 followed by its second slot, then an exit.
fn assemble(body: Vec<Insn>) -> Vec<Insn> {
    let mut p = vec![ins(0xbf, 9, 1, 0, 0)];
    for i in body {
        p.push(i);
        if i.code == 0x18 {
            p.push(ins(0, 0, 0, 0, i.imm.rotate_left(7)));
        }
    }
    p.push(EXIT);
    p
}

fn sim_run(prog: &[Insn], jit_on: bool, r1: u64) -> Option<(Result<u64, Fault>, Memory)> {
    let code = Code::with_entries(prog, &[0]);
    let mut mem = memory();
    let mut parts = common::HostParts::new();
    let mut host = parts.host();
    let r = if jit_on {
        jit::run(&code, 0, r1, &mut mem, &mut host, 3_000)?
    } else {
        vm::interpret(&code, 0, r1, &mut mem, &mut host, 3_000)
    };
    Some((r, mem))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, max_global_rejects: 100_000, ..ProptestConfig::default() })]

    /// Random programs: the same r0 or fault, the same stack, socket and globals.
    #[test]
    fn random_programs_run_as_interpreted(body in prop::collection::vec(insn(), 1..40), sock in any::<bool>()) {
        let prog = assemble(body);
        prop_assume!(verify::check(&prog).is_ok());
        let r1 = if sock { SOCK_ADDR } else { addr(REGION_CTX, 0) };
        let code = Code::with_entries(&prog, &[0]);
        prop_assert_eq!(jit::refusal(&code), None);
        let (a, ma) = sim_run(&prog, true, r1).unwrap();
        let (b, mb) = sim_run(&prog, false, r1).unwrap();
        prop_assert_eq!(a, b);
        prop_assert_eq!(ma.stack, mb.stack);
        prop_assert_eq!(ma.sock.to_vec(), mb.sock.to_vec());
        prop_assert_eq!(ma.globals[0].data.clone(), mb.globals[0].data.clone());
    }
}

/// What the JIT does not take, the interpreter runs, whole: `neg` with a register
/// source (0x8f) passes the load-time checks but is no instruction the interpreter
/// runs; the JIT refuses the program, and `run_code` gives the interpreter's fault.
#[test]
fn a_refused_program_runs_in_the_interpreter() {
    let p = [ins(0xb7, 0, 0, 0, 1), ins(0x8f, 0, 1, 0, 0), EXIT];
    verify::check(&p).unwrap();
    let code = Code::with_entries(&p, &[0]);
    assert_eq!(jit::refusal(&code), Some("opcode 0x8f at pc 1".to_string()));
    assert!(jit::run(&code, 0, 0, &mut memory(), &mut NoCalls, 100).is_none());
    let r = vm::run_code(&code, 0, 0, &mut memory(), &mut NoCalls, 100);
    assert_eq!(
        r,
        Err(Fault {
            pc: 1,
            why: "bad opcode 0x8f".into()
        })
    );
}

/// bpf_loop and the other calls from compiled code: tests/progs/loop.bpf.c's callbacks
/// compiled at once (`Mode::Eager`) give bpf_loop.rs's hand-computed values, and the
/// same views, returns and errors as interpreted, budget exhaustion included.
#[test]
fn bpf_loop_from_compiled_code() {
    use std::collections::BTreeMap;
    use tcplab_bpf::KernelEnv;
    use tcplab_cc::ops::CongestionOps;
    let Some(bytes) = compile("crates/bpf/tests/progs/loop.bpf.c") else {
        return;
    };
    let obj = BpfObject::parse(&bytes).unwrap();
    assert_eq!(jit::refusal(obj.code()), None);
    let run = |mode: jit::Mode| {
        jit::set_mode(mode);
        let prog = obj.load(&BTreeMap::new(), &KernelEnv::default()).unwrap();
        let mut ops = prog.instantiate(1);
        let mut seen = Vec::new();
        for (cwnd, limit, acked) in [(3, 100, 10), (3, 4, 10), (3, 100, 0)] {
            let mut tp = common::view(cwnd, limit);
            ops.cong_avoid(&mut tp, 0, acked);
            seen.push((tp.snd_cwnd, tp.snd_ssthresh));
        }
        let mut tp = common::view(3, 100);
        ops.in_ack_event(&mut tp, 0);
        seen.push((tp.snd_cwnd, 0));
        let tp = common::view(3, 100);
        seen.push((ops.ssthresh(&tp), ops.undo_cwnd(&tp)));
        // 1000 iterations cannot fit in a budget of 1000: the same fault.
        let mut small = prog.instantiate_socket(1).with_budget(1000);
        let mut tp = common::view(3, 10_000);
        small.cong_avoid(&mut tp, 0, 1000);
        (seen, small.error().map(|e| e.to_string()))
    };
    let compiled = run(jit::Mode::Eager);
    let interpreted = run(jit::Mode::Off);
    jit::set_mode(jit::Mode::Tiered);
    // bpf_loop.rs: 0 + ... + 9 = 45; limit 4: 5 loops, 6 added; none; 2 * (0 + 1 + 2)
    // nested; -EINVAL and -E2BIG.
    assert_eq!(
        compiled.0,
        vec![
            (10, 45),
            (5, 6),
            (0, 0),
            (2006, 0),
            ((-22i32) as u32, (-7i32) as u32)
        ]
    );
    let why = compiled.1.clone().unwrap_or_default();
    assert!(why.contains("budget of 1000 exhausted"), "{why}");
    assert_eq!(compiled, interpreted);
}
