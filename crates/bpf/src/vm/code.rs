//! The form the interpreter runs: each instruction decoded once into an `Op` with its
//! operands resolved, and the commonest instruction pairs and triples of clang's output
//! fused into superinstructions (mod.rs runs them). Built at first use and cached by the
//! loaded program (`Program::code`). The unfused form and the compiled code of the JIT
//! (jit/) are kept beside it.

use std::sync::{Arc, OnceLock};

use crate::vm::insn::*;

use super::memory::{addr, REGION_FUNC};

/// One decoded instruction: the BPF opcode with its operands resolved. `imm` is the
/// immediate sign-extended to 64 bits (LD_IMM64: the whole 64-bit value); `t` is a jump
/// or call's absolute target pc, or a memory access's offset.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Op {
    pub(super) code: u8,
    pub(super) d: u8,
    pub(super) s: u8,
    /// The atomic operation (BPF_ATOMIC's imm) or the byte-swap width.
    pub(super) x: u8,
    pub(super) t: i32,
    pub(super) imm: u64,
}

/// A program decoded for `run_code`, one op per instruction slot (so every jump target
/// stays where it was), plus one op past the end that faults.
#[derive(Clone, Debug, Default)]
pub struct Code {
    pub(super) ops: Vec<Op>,
    /// The functions whose address the program takes (LD_IMM64 BPF_PSEUDO_FUNC): the
    /// callbacks bpf_loop may run.
    pub(super) funcs: Vec<usize>,
    /// The ops before fusion (what the JIT translates, one BPF instruction each).
    pub(super) plain: Vec<Op>,
    /// The entry pcs the JIT compiles (the callbacks); others run in the interpreter.
    pub(super) entries: Vec<usize>,
    /// The JIT's record of this program (its code once compiled; shared by every
    /// `Code` of the same program in the process).
    pub(super) jit: OnceLock<Arc<super::jit::Slot>>,
    /// Per map (by handle index): a PROG_ARRAY's slots, the entry pc of the program in
    /// each (host/maps.rs `prog_slots`); empty for other maps. What `bpf_tail_call` jumps to.
    pub(super) tail_slots: Vec<Vec<Option<usize>>>,
}

impl Code {
    /// Decodes `insns` (already checked by verify.rs: targets inside the code, no
    /// register above r10), with pc 0 as the JIT's one entry.
    pub fn new(insns: &[Insn]) -> Code {
        Code::with_entries(insns, &[0])
    }

    /// As `new`, the JIT compiling the functions at `entries` (a program's callbacks)
    /// and what they call.
    pub fn with_entries(insns: &[Insn], entries: &[usize]) -> Code {
        let (mut ops, funcs) = decode(insns);
        let plain = ops.clone();
        fuse_pairs(&mut ops);
        let mut entries = entries.to_vec();
        entries.sort_unstable();
        entries.dedup();
        Code {
            ops,
            funcs,
            plain,
            entries,
            jit: OnceLock::new(),
            tail_slots: Vec::new(),
        }
    }

    /// With the programs of each PROG_ARRAY's slots (per map index), for
    /// `bpf_tail_call`.
    pub fn with_tail_slots(mut self, slots: Vec<Vec<Option<usize>>>) -> Code {
        self.tail_slots = slots;
        self
    }

    /// Instruction slots (without the end marker).
    pub fn len(&self) -> usize {
        self.ops.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One op per instruction slot plus the end marker, and the functions whose address
/// the program takes (sorted, without duplicates).
fn decode(insns: &[Insn]) -> (Vec<Op>, Vec<usize>) {
    {
        let mut ops: Vec<Op> = Vec::with_capacity(insns.len() + 1);
        let mut funcs = Vec::new();
        let mut pc = 0;
        while pc < insns.len() {
            let i = insns[pc];
            let mut op = Op {
                code: i.code,
                d: i.dst & 15,
                s: i.src & 15,
                x: 0,
                t: i32::from(i.off),
                imm: i.imm as i64 as u64,
            };
            let rel = |off: i64| (pc as i64 + 1 + off) as i32;
            match i.class() {
                CLASS_JMP | CLASS_JMP32 if i.code == CALL => {
                    if i.src == PSEUDO_CALL {
                        op.t = rel(i64::from(i.imm));
                    } else {
                        // kfunc/helper: `t` is the call's `off` (the native kfunc index).
                        op.t = i32::from(i.off);
                    }
                }
                CLASS_JMP | CLASS_JMP32 => op.t = rel(i64::from(i.off)),
                CLASS_STX if i.code & 0xe0 == 0xc0 => op.x = i.imm as u8,
                _ => {}
            }
            if i.code == LD_IMM64 {
                let hi = insns.get(pc + 1).map_or(0, |n| n.imm as u32 as u64);
                op.imm = (i.imm as u32 as u64) | hi << 32;
                if i.src == PSEUDO_FUNC {
                    // A function pointer: its pc in a region no access can reach.
                    let t = rel(i64::from(i.imm)) as usize;
                    op.imm = addr(REGION_FUNC, t);
                    funcs.push(t);
                }
                ops.push(op);
                if let Some(n) = insns.get(pc + 1) {
                    ops.push(Op {
                        code: n.code,
                        ..Op::default()
                    });
                }
                pc += 2;
                continue;
            }
            ops.push(op);
            pc += 1;
        }
        // Past the end: an opcode no program has (0xff), which faults.
        ops.push(Op {
            code: END,
            ..Op::default()
        });
        funcs.sort_unstable();
        funcs.dedup();
        (ops, funcs)
    }
}

// Superinstructions: the commonest adjacent pairs in clang's output for the shipped
// examples (measured on bbr.bpf.c, which runs ~400 instructions per ACK), each done by
// one op at the first slot that runs both steps in order and continues after the second.
// The other slots keep their own ops, so a jump into one runs from there. The codes are
// ALU/JMP opcodes with operations 0xe0/0xf0 and LD-class codes other than LD_IMM64,
// which BPF does not define (verify.rs refuses them in programs).
/// `lsh64 d, 32; rsh64 d, 32`: zero-extend the low half.
pub(super) const F_ZEXT: u8 = 0xe7;
/// `lsh64 d, 32; arsh64 d, 32`: sign-extend the low half.
pub(super) const F_SEXT: u8 = 0xef;
/// `mov64 d, s; and64 d, imm`.
pub(super) const F_MOV_ANDI: u8 = 0xf7;
/// `mov64 d, s; lsh64 d, imm`.
pub(super) const F_MOV_LSHI: u8 = 0xe4;
/// `mov64 d, s; add64 d, x`.
pub(super) const F_MOV_ADD: u8 = 0xec;
/// `and64 d, imm_lo; jne x, imm_hi, t` (the two immediates packed in `imm`).
pub(super) const F_ANDI_JNE: u8 = 0xf4;
/// `and64 d, imm_lo; jeq x, imm_hi, t`.
pub(super) const F_ANDI_JEQ: u8 = 0xfc;
/// `mov64 d, imm; jgt x_lo, x_hi, t` (registers packed in `x`).
pub(super) const F_MOVI_JGT: u8 = 0xe5;
/// `mov64 d, imm; jsgt x_lo, x_hi, t`.
pub(super) const F_MOVI_JSGT: u8 = 0xed;
/// `ldxw d, [s + t]; mov64 x_lo, x_hi`.
pub(super) const F_LDXW_MOV: u8 = 0xf5;
/// `ldxdw d, [s + t]; ldxw x_lo, [x_hi + imm]`.
pub(super) const F_LDXDW_LDXW: u8 = 0xfd;
/// `ldxdw d, [s + t]; ldxdw x_lo, [x_hi + imm]`.
pub(super) const F_LDXDW_LDXDW: u8 = 0xe6;
/// `ldxw d, [s + t]; ldxdw x_lo, [x_hi + imm]`.
pub(super) const F_LDXW_LDXDW: u8 = 0xee;
/// `mov64 d, s; lsh64 d, imm_lo; rsh64 d, imm_hi`: a bitfield's extraction.
pub(super) const F_MOV_LSH_RSH: u8 = 0xf6;
/// `mov64 d, s; and64 d, imm_lo; jne x, imm_hi, t`: a flag's test.
pub(super) const F_MOV_ANDI_JNE: u8 = 0xfe;
/// `mov64 d, imm; mov64 s, x_lo; add64 s, x_hi`.
pub(super) const F_MOVI_MOV_ADD: u8 = 0x08;
/// `mov64 d, s; add64 d, imm`.
pub(super) const F_MOV_ADDI: u8 = 0x10;
/// `mov64 d, s; and64 d, x`.
pub(super) const F_MOV_AND: u8 = 0x20;
/// `rsh64 d, imm; jge x_lo, x_hi, t`.
pub(super) const F_RSHI_JGE: u8 = 0x28;

/// The fused op for the three ops `a`, `b`, `c`, if they form one of the triples above.
fn fuse3(a: &Op, b: &Op, c: &Op) -> Option<Op> {
    let pack = |lo: u64, hi: u64| (lo & 0xffff_ffff) | hi << 32;
    let same = a.d == b.d && b.d == c.d;
    Some(match (a.code, b.code, c.code) {
        (0xbf, 0x67, 0x77) if same => Op {
            code: F_MOV_LSH_RSH,
            imm: pack(b.imm, c.imm),
            ..*a
        },
        (0xbf, 0x57, 0x55) if a.d == b.d => Op {
            code: F_MOV_ANDI_JNE,
            x: c.d,
            t: c.t,
            imm: pack(b.imm, c.imm),
            ..*a
        },
        (0xb7, 0xbf, 0x0f) if b.d == c.d => Op {
            code: F_MOVI_MOV_ADD,
            s: b.d,
            x: b.s | c.s << 4,
            ..*a
        },
        _ => return None,
    })
}

/// The fused op for `a` followed by `b`, if they form one of the pairs above.
fn fuse(a: &Op, b: &Op) -> Option<Op> {
    let regs = |lo: u8, hi: u8| lo | hi << 4;
    let pack = |lo: u64, hi: u64| (lo & 0xffff_ffff) | hi << 32;
    let f = |code: u8, x: u8, t: i32, imm: u64| Op {
        code,
        d: a.d,
        s: a.s,
        x,
        t,
        imm,
    };
    Some(match (a.code, b.code) {
        (0x67, 0x77) if a.imm == 32 && b.imm == 32 && a.d == b.d => f(F_ZEXT, 0, 0, 0),
        (0x67, 0xc7) if a.imm == 32 && b.imm == 32 && a.d == b.d => f(F_SEXT, 0, 0, 0),
        (0xbf, 0x57) if a.d == b.d => f(F_MOV_ANDI, 0, 0, b.imm),
        (0xbf, 0x67) if a.d == b.d => f(F_MOV_LSHI, 0, 0, b.imm),
        (0xbf, 0x0f) if a.d == b.d => f(F_MOV_ADD, b.s, 0, 0),
        (0x57, 0x55) => f(F_ANDI_JNE, b.d, b.t, pack(a.imm, b.imm)),
        (0x57, 0x15) => f(F_ANDI_JEQ, b.d, b.t, pack(a.imm, b.imm)),
        (0xb7, 0x2d) => f(F_MOVI_JGT, regs(b.d, b.s), b.t, a.imm),
        (0xb7, 0x6d) => f(F_MOVI_JSGT, regs(b.d, b.s), b.t, a.imm),
        (0x61, 0xbf) => f(F_LDXW_MOV, regs(b.d, b.s), a.t, 0),
        (0x79, 0x61) => f(F_LDXDW_LDXW, regs(b.d, b.s), a.t, b.t as i64 as u64),
        (0x79, 0x79) => f(F_LDXDW_LDXDW, regs(b.d, b.s), a.t, b.t as i64 as u64),
        (0x61, 0x79) => f(F_LDXW_LDXDW, regs(b.d, b.s), a.t, b.t as i64 as u64),
        (0xbf, 0x07) if a.d == b.d => f(F_MOV_ADDI, 0, 0, b.imm),
        (0xbf, 0x5f) if a.d == b.d => f(F_MOV_AND, b.s, 0, 0),
        (0x77, 0x3d) => f(F_RSHI_JGE, regs(b.d, b.s), b.t, a.imm),
        _ => return None,
    })
}

/// Replaces the first op of each fusable triple or pair, left to right (a triple before
/// a pair), each slot in at most one.
fn fuse_pairs(ops: &mut [Op]) {
    let mut p = 0;
    while p + 1 < ops.len() {
        if p + 2 < ops.len() {
            if let Some(f) = fuse3(&ops[p], &ops[p + 1], &ops[p + 2]) {
                ops[p] = f;
                p += 3;
                continue;
            }
        }
        match fuse(&ops[p], &ops[p + 1]) {
            Some(f) => {
                ops[p] = f;
                p += 2;
            }
            None => p += 1,
        }
    }
}

/// The op past the last instruction (0xff is no BPF opcode; verify.rs refuses it).
pub(super) const END: u8 = 0xff;
