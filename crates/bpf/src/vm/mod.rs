//! The machine: the eBPF instruction set and what runs it. This room holds insn.rs (one
//! instruction and the opcode fields), calls.rs (the call table: which helper and kfunc
//! ids exist and which the kernel allows a tcp_congestion_ops; the `Host` trait below is
//! how a call leaves the machine), verify.rs and track.rs (the load-time checks),
//! code.rs (the decoded form), memory.rs (regions, addresses, map handles), jit/ and
//! this file, the interpreter.
//!
//! Dependencies: layout.rs only (memory's socket and rate_sample region
//! sizes, the socket's writable fields); neither the object (object/) nor the host
//! (host/) is used here; both use this room.
//!
//! The interpreter: runs one callback of a loaded program over a `Memory`.
//!
//! Why our own and not rbpf: rbpf's helpers are plain `fn(u64 x5) -> u64` with no access
//! to the socket or the simulator's state, it has no notion of kfunc calls
//! (BPF_PSEUDO_KFUNC_CALL) or bpf-to-bpf calls with per-frame stacks, and its memory
//! checks are a list of allowed ranges rather than regions with write rules (the socket's
//! writable fields). Its JIT does not bounds-check at all. What we need is small: the
//! eBPF v3 ISA (what clang -O2 emits for -mcpu=v1..v3) plus atomics.
//!
//! Safety: every memory access goes through `Memory` (bounds and write rules), every
//! jump target and register was checked at load (verify.rs), and each run has an
//! instruction budget (instruction slots, charged at each jump, call and return); any
//! failure is an `Err` with the pc, never a panic.
//!
//! Speed: the cost is the dispatches (one indirect jump per op, often mispredicted;
//! benches/RESULTS.md). The program is decoded once (code.rs: `Code`, cached by the
//! loaded program) into ops with their operands resolved (immediates sign-extended,
//! jump and call targets absolute) and common pairs and triples fused into one op;
//! loads and stores have one arm per width; the dispatch reads the opcode straight from
//! the op array. `run_code` runs that form (or the JIT's machine code for it, jit/, where
//! that is compiled: the same results); `interpret` only the interpreter; `run` decodes
//! and runs (tests, one-off calls).
//!
//! bpf_tail_call (helper 12) runs here too: it jumps to the program in a PROG_ARRAY's
//! slot (`Code::tail_slots`), at most MAX_TAIL_CALL_CNT times per callback.
//!
//! bpf_loop (helper 181) runs here, not in the `Host`: its callback, a function whose
//! address the program took (LD_IMM64 BPF_PSEUDO_FUNC), runs in the next call frame
//! with r1 = the index and r2 = the context, its instructions on the same budget.
//!
//! Semantics follow the kernel interpreter (kernel/bpf/core.c, ___bpf_prog_run):
//! 32-bit ALU results are zero-extended, shifts use the low 5/6 bits of the amount,
//! division by zero gives 0 and modulo by zero leaves the dividend.

pub mod calls;
mod code;
pub mod insn;
pub mod jit;
mod loop_walk;
pub mod memory;
mod scalar;
#[cfg(test)]
mod tests;
pub mod track;
pub mod verify;

use crate::vm::calls::Call;
use crate::vm::insn::*;
use crate::vm::memory::map_of_handle;
pub use code::Code;
use code::*;
use memory::{addr, Memory, FRAME_SIZE, MAX_FRAMES, REGION_FUNC, REGION_STACK};

/// What the interpreter cannot do itself: kfuncs and helpers.
pub trait Host {
    /// `sub`: the call instruction's `off` (which native kfunc, for `Call::Native`).
    fn call(
        &mut self,
        call: Call,
        sub: i16,
        args: [u64; 5],
        mem: &mut Memory,
    ) -> Result<u64, String>;
}

/// A run failed at `pc`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub pc: usize,
    pub why: String,
}

#[derive(Clone, Copy)]
struct Frame {
    ret_pc: usize,
    saved: [u64; 4],
}

/// Runs from `entry` with r1 = `r1` until the outermost `exit`; returns r0 (decodes
/// `insns` first: `run_code` with a cached `Code` is the fast path).
pub fn run(
    insns: &[Insn],
    entry: usize,
    r1: u64,
    mem: &mut Memory,
    host: &mut dyn Host,
    budget: u64,
) -> Result<u64, Fault> {
    run_code(
        &Code::with_entries(insns, &[entry]),
        entry,
        r1,
        mem,
        host,
        budget,
    )
}

/// Runs `code` from `entry` with r1 = `r1` until the outermost `exit`; returns r0.
/// Compiled (jit/) where the JIT is on, due (`jit::Mode`) and took the program, else
/// interpreted (`interpret`); both give the same result.
pub fn run_code(
    code: &Code,
    entry: usize,
    r1: u64,
    mem: &mut Memory,
    host: &mut dyn Host,
    budget: u64,
) -> Result<u64, Fault> {
    let mode = jit::mode();
    if mode != jit::Mode::Off {
        let eager = mode == jit::Mode::Eager;
        if let Some(r) = jit::run_as(code, entry, r1, mem, host, budget, eager) {
            return r;
        }
    }
    interpret(code, entry, r1, mem, host, budget)
}

/// Interprets `code` from `entry` with r1 = `r1` until the outermost `exit`; returns r0.
///
/// One `match` on the whole opcode byte (a single jump table), registers in a 16-slot
/// array indexed by the 4-bit fields (no bounds checks; verify.rs refuses r11..r15).
pub fn interpret(
    code: &Code,
    entry: usize,
    r1: u64,
    mem: &mut Memory,
    host: &mut dyn Host,
    budget: u64,
) -> Result<u64, Fault> {
    let mut left = budget;
    exec::<false>(
        code,
        entry,
        [r1, 0, 0, 0, 0],
        0,
        mem,
        host,
        &mut left,
        budget,
    )
}

/// Runs the function at `entry` with r1..r5 = `args` in call frame `base` until its
/// `exit`, drawing on `budget_left`. `NESTED`: a bpf_loop callback (`base` > 0), which
/// also charges its last run; the outermost callback's copy (`base` 0) is compiled
/// without that bookkeeping.
#[allow(clippy::too_many_arguments)]
fn exec<const NESTED: bool>(
    code: &Code,
    entry: usize,
    args: [u64; 5],
    base: usize,
    mem: &mut Memory,
    host: &mut dyn Host,
    budget_left: &mut u64,
    budget: u64,
) -> Result<u64, Fault> {
    let insns = &code.ops[..];
    let base = if NESTED { base } else { 0 };
    let mut reg = [0u64; 16];
    reg[1..6].copy_from_slice(&args);
    reg[10] = addr(REGION_STACK, FRAME_SIZE * (base + 1));
    // Caller frames of bpf-to-bpf calls, on the Rust stack: no allocation per callback.
    let mut frames = [Frame {
        ret_pc: 0,
        saved: [0; 4],
    }; MAX_FRAMES];
    let mut depth = 0usize;
    let mut tail_calls = 0u32;
    let mut pc = entry;
    let mut left = *budget_left;
    // The budget is charged per straight-line run, at each control transfer: a run
    // between transfers is at most the program's length, so an endless loop still
    // exhausts it, and the loop body pays one check instead of one per instruction.
    let mut seg = entry;
    let fault = |pc: usize, why: String| Fault { pc, why };
    // Charge the run from `seg` up to this instruction (`pc` is already past it) and
    // start the next one at `$to`.
    macro_rules! charge {
        ($to:expr) => {{
            let ran = pc.saturating_sub(seg) as u64;
            if ran > left {
                return Err(fault(
                    pc - 1,
                    format!("instruction budget of {budget} exhausted"),
                ));
            }
            left -= ran;
            seg = $to;
        }};
    }
    // ALU on 64 bits (`$f(dst, src)`), with an immediate (sign-extended) or a register.
    macro_rules! alu64 {
        ($i:expr, $d:expr, $s:expr, $r:expr, $f:expr) => {{
            let src = if $r { reg[$s] } else { $i.imm };
            reg[$d] = $f(reg[$d], src);
        }};
    }
    // ALU on 32 bits: operands truncated, the result zero-extended.
    macro_rules! alu32 {
        ($i:expr, $d:expr, $s:expr, $r:expr, $f:expr) => {{
            let src = if $r { reg[$s] as u32 } else { $i.imm as u32 };
            let r: u32 = $f(reg[$d] as u32, src);
            reg[$d] = u64::from(r);
        }};
    }
    // Conditional jump on 64 bits (`$f(a, b)`, unsigned; signed ones cast inside).
    macro_rules! jmp64 {
        ($i:expr, $d:expr, $s:expr, $r:expr, $pc:expr, $f:expr) => {{
            let b = if $r { reg[$s] } else { $i.imm };
            if $f(reg[$d], b) {
                let to = $i.t as usize;
                charge!(to);
                $pc = to;
            }
        }};
    }
    macro_rules! jmp32 {
        ($i:expr, $d:expr, $s:expr, $r:expr, $pc:expr, $f:expr) => {{
            let b = if $r { reg[$s] as u32 } else { $i.imm as u32 };
            if $f(reg[$d] as u32, b) {
                let to = $i.t as usize;
                charge!(to);
                $pc = to;
            }
        }};
    }
    loop {
        // A reference, not a copy: the opcode byte is loaded straight from the op array,
        // which shortens the dependency chain to the dispatch jump (a copy went through
        // the stack first).
        let Some(i) = insns.get(pc) else {
            return Err(fault(pc, "ran past the end of the program".into()));
        };
        let d = i.d as usize;
        let s = i.s as usize;
        pc += 1;
        match i.code {
            // ALU64
            0x07 => alu64!(i, d, s, false, |a: u64, b: u64| a.wrapping_add(b)),
            0x0f => alu64!(i, d, s, true, |a: u64, b: u64| a.wrapping_add(b)),
            0x17 => alu64!(i, d, s, false, |a: u64, b: u64| a.wrapping_sub(b)),
            0x1f => alu64!(i, d, s, true, |a: u64, b: u64| a.wrapping_sub(b)),
            0x27 => alu64!(i, d, s, false, |a: u64, b: u64| a.wrapping_mul(b)),
            0x2f => alu64!(i, d, s, true, |a: u64, b: u64| a.wrapping_mul(b)),
            0x37 => alu64!(i, d, s, false, |a: u64, b: u64| a
                .checked_div(b)
                .unwrap_or(0)),
            0x3f => alu64!(i, d, s, true, |a: u64, b: u64| a
                .checked_div(b)
                .unwrap_or(0)),
            0x47 => alu64!(i, d, s, false, |a: u64, b: u64| a | b),
            0x4f => alu64!(i, d, s, true, |a: u64, b: u64| a | b),
            0x57 => alu64!(i, d, s, false, |a: u64, b: u64| a & b),
            0x5f => alu64!(i, d, s, true, |a: u64, b: u64| a & b),
            0x67 => alu64!(i, d, s, false, |a: u64, b: u64| a.wrapping_shl(b as u32)),
            0x6f => alu64!(i, d, s, true, |a: u64, b: u64| a.wrapping_shl(b as u32)),
            0x77 => alu64!(i, d, s, false, |a: u64, b: u64| a.wrapping_shr(b as u32)),
            0x7f => alu64!(i, d, s, true, |a: u64, b: u64| a.wrapping_shr(b as u32)),
            0x87 => reg[d] = reg[d].wrapping_neg(),
            0x97 => alu64!(i, d, s, false, |a: u64, b: u64| a
                .checked_rem(b)
                .unwrap_or(a)),
            0x9f => alu64!(i, d, s, true, |a: u64, b: u64| a
                .checked_rem(b)
                .unwrap_or(a)),
            0xa7 => alu64!(i, d, s, false, |a: u64, b: u64| a ^ b),
            0xaf => alu64!(i, d, s, true, |a: u64, b: u64| a ^ b),
            0xb7 => alu64!(i, d, s, false, |_a: u64, b: u64| b),
            0xbf => alu64!(i, d, s, true, |_a: u64, b: u64| b),
            0xc7 => alu64!(
                i,
                d,
                s,
                false,
                |a: u64, b: u64| (a as i64).wrapping_shr(b as u32) as u64
            ),
            0xcf => alu64!(
                i,
                d,
                s,
                true,
                |a: u64, b: u64| (a as i64).wrapping_shr(b as u32) as u64
            ),
            // ALU (32 bits)
            0x04 => alu32!(i, d, s, false, |a: u32, b: u32| a.wrapping_add(b)),
            0x0c => alu32!(i, d, s, true, |a: u32, b: u32| a.wrapping_add(b)),
            0x14 => alu32!(i, d, s, false, |a: u32, b: u32| a.wrapping_sub(b)),
            0x1c => alu32!(i, d, s, true, |a: u32, b: u32| a.wrapping_sub(b)),
            0x24 => alu32!(i, d, s, false, |a: u32, b: u32| a.wrapping_mul(b)),
            0x2c => alu32!(i, d, s, true, |a: u32, b: u32| a.wrapping_mul(b)),
            0x34 => alu32!(i, d, s, false, |a: u32, b: u32| a
                .checked_div(b)
                .unwrap_or(0)),
            0x3c => alu32!(i, d, s, true, |a: u32, b: u32| a
                .checked_div(b)
                .unwrap_or(0)),
            0x44 => alu32!(i, d, s, false, |a: u32, b: u32| a | b),
            0x4c => alu32!(i, d, s, true, |a: u32, b: u32| a | b),
            0x54 => alu32!(i, d, s, false, |a: u32, b: u32| a & b),
            0x5c => alu32!(i, d, s, true, |a: u32, b: u32| a & b),
            0x64 => alu32!(i, d, s, false, |a: u32, b: u32| a.wrapping_shl(b)),
            0x6c => alu32!(i, d, s, true, |a: u32, b: u32| a.wrapping_shl(b)),
            0x74 => alu32!(i, d, s, false, |a: u32, b: u32| a.wrapping_shr(b)),
            0x7c => alu32!(i, d, s, true, |a: u32, b: u32| a.wrapping_shr(b)),
            0x84 => reg[d] = u64::from((reg[d] as u32).wrapping_neg()),
            0x94 => alu32!(i, d, s, false, |a: u32, b: u32| a
                .checked_rem(b)
                .unwrap_or(a)),
            0x9c => alu32!(i, d, s, true, |a: u32, b: u32| a
                .checked_rem(b)
                .unwrap_or(a)),
            0xa4 => alu32!(i, d, s, false, |a: u32, b: u32| a ^ b),
            0xac => alu32!(i, d, s, true, |a: u32, b: u32| a ^ b),
            0xb4 => alu32!(i, d, s, false, |_a: u32, b: u32| b),
            0xbc => alu32!(i, d, s, true, |_a: u32, b: u32| b),
            0xc4 => alu32!(i, d, s, false, |a: u32, b: u32| (a as i32).wrapping_shr(b)
                as u32),
            0xcc => alu32!(i, d, s, true, |a: u32, b: u32| (a as i32).wrapping_shr(b)
                as u32),
            // BPF_END: to little endian truncates on this host order; to big endian swaps.
            0xd4 | 0xdc => {
                let v = reg[d];
                reg[d] = match (i.imm, i.code == 0xdc) {
                    (16, false) => v as u16 as u64,
                    (32, false) => v as u32 as u64,
                    (64, false) => v,
                    (16, true) => (v as u16).swap_bytes() as u64,
                    (32, true) => (v as u32).swap_bytes() as u64,
                    (64, true) => v.swap_bytes(),
                    _ => return Err(fault(pc - 1, "bad byte swap width".into())),
                };
            }
            // Memory
            // Loads, one arm per width so the size is a constant.
            0x61 => {
                let a = reg[s].wrapping_add(i.t as i64 as u64);
                reg[d] = mem.load_n::<4>(a).map_err(|w| fault(pc - 1, w))?;
            }
            0x69 => {
                let a = reg[s].wrapping_add(i.t as i64 as u64);
                reg[d] = mem.load_n::<2>(a).map_err(|w| fault(pc - 1, w))?;
            }
            0x71 => {
                let a = reg[s].wrapping_add(i.t as i64 as u64);
                reg[d] = mem.load_n::<1>(a).map_err(|w| fault(pc - 1, w))?;
            }
            0x79 => {
                let a = reg[s].wrapping_add(i.t as i64 as u64);
                reg[d] = mem.load_n::<8>(a).map_err(|w| fault(pc - 1, w))?;
            }
            // Stores, one arm per width (ST: the immediate; STX: a register).
            0x62 => {
                let a = reg[d].wrapping_add(i.t as i64 as u64);
                mem.store_n::<4>(a, i.imm).map_err(|w| fault(pc - 1, w))?;
            }
            0x6a => {
                let a = reg[d].wrapping_add(i.t as i64 as u64);
                mem.store_n::<2>(a, i.imm).map_err(|w| fault(pc - 1, w))?;
            }
            0x72 => {
                let a = reg[d].wrapping_add(i.t as i64 as u64);
                mem.store_n::<1>(a, i.imm).map_err(|w| fault(pc - 1, w))?;
            }
            0x7a => {
                let a = reg[d].wrapping_add(i.t as i64 as u64);
                mem.store_n::<8>(a, i.imm).map_err(|w| fault(pc - 1, w))?;
            }
            0x63 => {
                let a = reg[d].wrapping_add(i.t as i64 as u64);
                mem.store_n::<4>(a, reg[s]).map_err(|w| fault(pc - 1, w))?;
            }
            0x6b => {
                let a = reg[d].wrapping_add(i.t as i64 as u64);
                mem.store_n::<2>(a, reg[s]).map_err(|w| fault(pc - 1, w))?;
            }
            0x73 => {
                let a = reg[d].wrapping_add(i.t as i64 as u64);
                mem.store_n::<1>(a, reg[s]).map_err(|w| fault(pc - 1, w))?;
            }
            0x7b => {
                let a = reg[d].wrapping_add(i.t as i64 as u64);
                mem.store_n::<8>(a, reg[s]).map_err(|w| fault(pc - 1, w))?;
            }
            0xc3 | 0xdb => {
                let a = reg[d].wrapping_add(i.t as i64 as u64);
                atomic(i, a, mem_size(i.code), &mut reg, mem).map_err(|w| fault(pc - 1, w))?;
            }
            // LD_IMM64: the high half is in the next slot, which we step over.
            0x18 => {
                reg[d] = i.imm;
                pc += 1;
            }
            // JMP (64 bits)
            0x05 => {
                let to = i.t as usize;
                charge!(to);
                pc = to;
            }
            0x15 => jmp64!(i, d, s, false, pc, |a: u64, b: u64| a == b),
            0x1d => jmp64!(i, d, s, true, pc, |a: u64, b: u64| a == b),
            0x25 => jmp64!(i, d, s, false, pc, |a: u64, b: u64| a > b),
            0x2d => jmp64!(i, d, s, true, pc, |a: u64, b: u64| a > b),
            0x35 => jmp64!(i, d, s, false, pc, |a: u64, b: u64| a >= b),
            0x3d => jmp64!(i, d, s, true, pc, |a: u64, b: u64| a >= b),
            0x45 => jmp64!(i, d, s, false, pc, |a: u64, b: u64| a & b != 0),
            0x4d => jmp64!(i, d, s, true, pc, |a: u64, b: u64| a & b != 0),
            0x55 => jmp64!(i, d, s, false, pc, |a: u64, b: u64| a != b),
            0x5d => jmp64!(i, d, s, true, pc, |a: u64, b: u64| a != b),
            0x65 => jmp64!(i, d, s, false, pc, |a: u64, b: u64| (a as i64) > (b as i64)),
            0x6d => jmp64!(i, d, s, true, pc, |a: u64, b: u64| (a as i64) > (b as i64)),
            0x75 => jmp64!(i, d, s, false, pc, |a: u64, b: u64| (a as i64)
                >= (b as i64)),
            0x7d => jmp64!(i, d, s, true, pc, |a: u64, b: u64| (a as i64) >= (b as i64)),
            0xa5 => jmp64!(i, d, s, false, pc, |a: u64, b: u64| a < b),
            0xad => jmp64!(i, d, s, true, pc, |a: u64, b: u64| a < b),
            0xb5 => jmp64!(i, d, s, false, pc, |a: u64, b: u64| a <= b),
            0xbd => jmp64!(i, d, s, true, pc, |a: u64, b: u64| a <= b),
            0xc5 => jmp64!(i, d, s, false, pc, |a: u64, b: u64| (a as i64) < (b as i64)),
            0xcd => jmp64!(i, d, s, true, pc, |a: u64, b: u64| (a as i64) < (b as i64)),
            0xd5 => jmp64!(i, d, s, false, pc, |a: u64, b: u64| (a as i64)
                <= (b as i64)),
            0xdd => jmp64!(i, d, s, true, pc, |a: u64, b: u64| (a as i64) <= (b as i64)),
            // JMP32
            0x16 => jmp32!(i, d, s, false, pc, |a: u32, b: u32| a == b),
            0x1e => jmp32!(i, d, s, true, pc, |a: u32, b: u32| a == b),
            0x26 => jmp32!(i, d, s, false, pc, |a: u32, b: u32| a > b),
            0x2e => jmp32!(i, d, s, true, pc, |a: u32, b: u32| a > b),
            0x36 => jmp32!(i, d, s, false, pc, |a: u32, b: u32| a >= b),
            0x3e => jmp32!(i, d, s, true, pc, |a: u32, b: u32| a >= b),
            0x46 => jmp32!(i, d, s, false, pc, |a: u32, b: u32| a & b != 0),
            0x4e => jmp32!(i, d, s, true, pc, |a: u32, b: u32| a & b != 0),
            0x56 => jmp32!(i, d, s, false, pc, |a: u32, b: u32| a != b),
            0x5e => jmp32!(i, d, s, true, pc, |a: u32, b: u32| a != b),
            0x66 => jmp32!(i, d, s, false, pc, |a: u32, b: u32| (a as i32) > (b as i32)),
            0x6e => jmp32!(i, d, s, true, pc, |a: u32, b: u32| (a as i32) > (b as i32)),
            0x76 => jmp32!(i, d, s, false, pc, |a: u32, b: u32| (a as i32)
                >= (b as i32)),
            0x7e => jmp32!(i, d, s, true, pc, |a: u32, b: u32| (a as i32) >= (b as i32)),
            0xa6 => jmp32!(i, d, s, false, pc, |a: u32, b: u32| a < b),
            0xae => jmp32!(i, d, s, true, pc, |a: u32, b: u32| a < b),
            0xb6 => jmp32!(i, d, s, false, pc, |a: u32, b: u32| a <= b),
            0xbe => jmp32!(i, d, s, true, pc, |a: u32, b: u32| a <= b),
            0xc6 => jmp32!(i, d, s, false, pc, |a: u32, b: u32| (a as i32) < (b as i32)),
            0xce => jmp32!(i, d, s, true, pc, |a: u32, b: u32| (a as i32) < (b as i32)),
            0xd6 => jmp32!(i, d, s, false, pc, |a: u32, b: u32| (a as i32)
                <= (b as i32)),
            0xde => jmp32!(i, d, s, true, pc, |a: u32, b: u32| (a as i32) <= (b as i32)),
            CALL => {
                if i.s == PSEUDO_CALL {
                    if base + depth + 2 > MAX_FRAMES {
                        return Err(fault(pc - 1, "call depth over 8 frames".into()));
                    }
                    frames[depth] = Frame {
                        ret_pc: pc,
                        saved: [reg[6], reg[7], reg[8], reg[9]],
                    };
                    depth += 1;
                    reg[10] = addr(REGION_STACK, FRAME_SIZE * (base + depth + 1));
                    let to = i.t as usize;
                    charge!(to);
                    pc = to;
                } else {
                    let id = i.imm as i32;
                    let call = Call::from_id(id)
                        .ok_or_else(|| fault(pc - 1, format!("unknown call {id}")))?;
                    if call == Call::TailCall {
                        // bpf_tail_call(ctx, prog_array, index): the program in the slot
                        // replaces this one in this frame (its exit returns to our
                        // caller), r1 still the context; an empty or out-of-range slot,
                        // or the MAX_TAIL_CALL_CNT-th call, falls through to the next
                        // instruction (kernel/bpf/core.c, JMP_TAIL_CALL: the count goes
                        // up before the slot is read).
                        let slots = map_of_handle(reg[2], code.tail_slots.len())
                            .map(|m| &code.tail_slots[m]);
                        let index = reg[3] as u32 as usize;
                        if let Some(slots) = slots.filter(|s| index < s.len()) {
                            if tail_calls < MAX_TAIL_CALL_CNT {
                                tail_calls += 1;
                                if let Some(to) = slots[index] {
                                    charge!(to);
                                    pc = to;
                                }
                            }
                        }
                        continue;
                    }
                    if call == Call::Loop {
                        // The callbacks' instructions draw on the same budget.
                        charge!(pc);
                        reg[0] = bpf_loop(
                            code,
                            &reg,
                            base + depth,
                            pc - 1,
                            mem,
                            host,
                            &mut left,
                            budget,
                        )?;
                        continue;
                    }
                    let args = [reg[1], reg[2], reg[3], reg[4], reg[5]];
                    reg[0] = host
                        .call(call, i.t as i16, args, mem)
                        .map_err(|w| fault(pc - 1, w))?;
                }
            }
            EXIT => {
                if depth == 0 {
                    if NESTED {
                        // A bpf_loop callback: charge its last run, so that every
                        // iteration costs at least its exit.
                        let ran = pc.saturating_sub(seg) as u64;
                        if ran > left {
                            return Err(fault(
                                pc - 1,
                                format!("instruction budget of {budget} exhausted"),
                            ));
                        }
                        *budget_left = left - ran;
                    }
                    return Ok(reg[0]);
                }
                depth -= 1;
                let f = frames[depth];
                reg[6..10].copy_from_slice(&f.saved);
                reg[10] = addr(REGION_STACK, FRAME_SIZE * (base + depth + 1));
                charge!(f.ret_pc);
                pc = f.ret_pc;
            }
            0x00 => return Err(fault(pc - 1, "jump into the middle of LD_IMM64".into())),
            END => return Err(fault(pc - 1, "ran past the end of the program".into())),
            // Superinstructions (`fuse`): `pc` is past the first slot; step past the second.
            F_ZEXT => {
                reg[d] = reg[d] as u32 as u64;
                pc += 1;
            }
            F_SEXT => {
                reg[d] = reg[d] as u32 as i32 as i64 as u64;
                pc += 1;
            }
            F_MOV_ANDI => {
                reg[d] = reg[s];
                reg[d] &= i.imm;
                pc += 1;
            }
            F_MOV_LSHI => {
                reg[d] = reg[s];
                reg[d] = reg[d].wrapping_shl(i.imm as u32);
                pc += 1;
            }
            F_MOV_ADD => {
                reg[d] = reg[s];
                reg[d] = reg[d].wrapping_add(reg[i.x as usize & 15]);
                pc += 1;
            }
            F_ANDI_JNE | F_ANDI_JEQ => {
                reg[d] &= i.imm as u32 as i32 as i64 as u64;
                pc += 1;
                let b = (i.imm >> 32) as u32 as i32 as i64 as u64;
                let a = reg[i.x as usize & 15];
                if (a != b) == (i.code == F_ANDI_JNE) {
                    let to = i.t as usize;
                    charge!(to);
                    pc = to;
                }
            }
            F_MOVI_JGT | F_MOVI_JSGT => {
                reg[d] = i.imm;
                pc += 1;
                let (a, b) = (reg[i.x as usize & 15], reg[(i.x >> 4) as usize]);
                let taken = if i.code == F_MOVI_JGT {
                    a > b
                } else {
                    (a as i64) > (b as i64)
                };
                if taken {
                    let to = i.t as usize;
                    charge!(to);
                    pc = to;
                }
            }
            F_MOV_LSH_RSH => {
                reg[d] = reg[s];
                reg[d] = reg[d].wrapping_shl(i.imm as u32);
                reg[d] = reg[d].wrapping_shr((i.imm >> 32) as u32);
                pc += 2;
            }
            F_MOV_ANDI_JNE => {
                reg[d] = reg[s];
                reg[d] &= i.imm as u32 as i32 as i64 as u64;
                pc += 2;
                if reg[i.x as usize & 15] != (i.imm >> 32) as u32 as i32 as i64 as u64 {
                    let to = i.t as usize;
                    charge!(to);
                    pc = to;
                }
            }
            F_MOVI_MOV_ADD => {
                reg[d] = i.imm;
                reg[s] = reg[i.x as usize & 15];
                reg[s] = reg[s].wrapping_add(reg[(i.x >> 4) as usize]);
                pc += 2;
            }
            F_MOV_ADDI => {
                reg[d] = reg[s];
                reg[d] = reg[d].wrapping_add(i.imm);
                pc += 1;
            }
            F_MOV_AND => {
                reg[d] = reg[s];
                reg[d] &= reg[i.x as usize & 15];
                pc += 1;
            }
            F_RSHI_JGE => {
                reg[d] = reg[d].wrapping_shr(i.imm as u32);
                pc += 1;
                if reg[i.x as usize & 15] >= reg[(i.x >> 4) as usize] {
                    let to = i.t as usize;
                    charge!(to);
                    pc = to;
                }
            }
            F_LDXW_MOV => {
                let a = reg[s].wrapping_add(i.t as i64 as u64);
                reg[d] = mem.load_n::<4>(a).map_err(|w| fault(pc - 1, w))?;
                reg[i.x as usize & 15] = reg[(i.x >> 4) as usize];
                pc += 1;
            }
            F_LDXDW_LDXW | F_LDXDW_LDXDW | F_LDXW_LDXDW => {
                let a = reg[s].wrapping_add(i.t as i64 as u64);
                reg[d] = if i.code == F_LDXW_LDXDW {
                    mem.load_n::<4>(a)
                } else {
                    mem.load_n::<8>(a)
                }
                .map_err(|w| fault(pc - 1, w))?;
                pc += 1;
                let a = reg[(i.x >> 4) as usize].wrapping_add(i.imm);
                reg[i.x as usize & 15] = if i.code == F_LDXDW_LDXW {
                    mem.load_n::<4>(a)
                } else {
                    mem.load_n::<8>(a)
                }
                .map_err(|w| fault(pc - 1, w))?;
            }
            _ => return Err(fault(pc - 1, format!("bad opcode {:#x}", i.code))),
        }
    }
}

/// `MAX_TAIL_CALL_CNT` (include/linux/bpf.h): tail calls per run of a program.
pub const MAX_TAIL_CALL_CNT: u32 = 33;

/// `BPF_MAX_LOOPS` (include/linux/bpf.h) and the errors bpf_loop returns.
const BPF_MAX_LOOPS: u32 = 1 << 23;
const EINVAL: i64 = 22;
const E2BIG: i64 = 7;

/// `bpf_loop(nr_loops, callback_fn, callback_ctx, flags)` (kernel/bpf/bpf_iter.c):
/// -EINVAL for flags other than 0, -E2BIG for more than BPF_MAX_LOOPS; otherwise calls
/// `callback(index, ctx)` in the frame above `frame` for index 0, 1, ... until it
/// returns non-zero (then i + 1) or nr_loops have run (then nr_loops).
///
/// Deviation: the kernel verifier refuses a callback that is not a function of the
/// program or that returns other than 0 or 1 at load; here a bad pointer faults when
/// called, and any non-zero return stops the loop (as the kernel's code does).
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn bpf_loop(
    code: &Code,
    reg: &[u64; 16],
    frame: usize,
    call_pc: usize,
    mem: &mut Memory,
    host: &mut dyn Host,
    left: &mut u64,
    budget: u64,
) -> Result<u64, Fault> {
    let (nr_loops, callback, ctx, flags) = (reg[1] as u32, reg[2], reg[3], reg[4]);
    if flags != 0 {
        return Ok(-EINVAL as u64);
    }
    if nr_loops > BPF_MAX_LOOPS {
        return Ok(-E2BIG as u64);
    }
    let fault = |why: String| Fault { pc: call_pc, why };
    let entry = (callback >> 32 == REGION_FUNC)
        .then_some((callback & 0xffff_ffff) as usize)
        .filter(|t| code.funcs.binary_search(t).is_ok())
        .ok_or_else(|| {
            fault(format!(
                "bpf_loop: callback {callback:#x} is not a function"
            ))
        })?;
    if frame + 2 > MAX_FRAMES {
        return Err(fault("call depth over 8 frames".into()));
    }
    for index in 0..nr_loops {
        let args = [u64::from(index), ctx, 0, 0, 0];
        if exec::<true>(code, entry, args, frame + 1, mem, host, left, budget)? != 0 {
            return Ok(u64::from(index) + 1);
        }
    }
    Ok(u64::from(nr_loops))
}

/// BPF_ATOMIC on `size` bytes at `a`: add/or/and/xor (optionally fetching the old value
/// into src), xchg and cmpxchg (r0 is the comparand and receives the old value).
fn atomic(
    i: &Op,
    a: u64,
    size: usize,
    reg: &mut [u64; 16],
    mem: &mut Memory,
) -> Result<(), String> {
    let s = i.s as usize;
    let mask = if size == 4 { u32::MAX as u64 } else { u64::MAX };
    let old = mem.load(a, size)?;
    let v = reg[s] & mask;
    let fetch = i.x & 1 != 0;
    let new = match i.x & !1 {
        0x00 => old.wrapping_add(v),
        0x40 => old | v,
        0x50 => old & v,
        0xa0 => old ^ v,
        0xe0 => v,
        0xf0 => {
            let hit = old == reg[0] & mask;
            reg[0] = old;
            if hit {
                mem.store(a, size, v)?;
            }
            return Ok(());
        }
        op => return Err(format!("unsupported atomic operation {op:#x}")),
    };
    mem.store(a, size, new & mask)?;
    if fetch || i.x & !1 == 0xe0 {
        reg[s] = old;
    }
    Ok(())
}

/// Width in bytes of a memory access (LDX/ST/STX) from its opcode.
#[inline(always)]
fn mem_size(code: u8) -> usize {
    match (code >> 3) & 3 {
        0 => 4,
        1 => 2,
        2 => 1,
        _ => 8,
    }
}
