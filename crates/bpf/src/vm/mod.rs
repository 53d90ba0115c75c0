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
//! instruction budget; any failure is an `Err` with the pc, never a panic.
//!
//! Semantics follow the kernel interpreter (kernel/bpf/core.c, ___bpf_prog_run):
//! 32-bit ALU results are zero-extended, shifts use the low 5/6 bits of the amount,
//! division by zero gives 0 and modulo by zero leaves the dividend.

pub mod memory;
pub mod verify;

use crate::calls::Call;
use crate::insn::*;
use memory::{addr, Memory, FRAME_SIZE, MAX_FRAMES, REGION_STACK};

/// What the interpreter cannot do itself: kfuncs and helpers.
pub trait Host {
    fn call(&mut self, call: Call, args: [u64; 5], mem: &mut Memory) -> Result<u64, String>;
}

/// A run failed at `pc`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub pc: usize,
    pub why: String,
}

struct Frame {
    ret_pc: usize,
    saved: [u64; 4],
}

/// Runs from `entry` with r1 = `r1` until the outermost `exit`; returns r0.
pub fn run(
    insns: &[Insn],
    entry: usize,
    r1: u64,
    mem: &mut Memory,
    host: &mut dyn Host,
    budget: u64,
) -> Result<u64, Fault> {
    let mut reg = [0u64; 11];
    reg[1] = r1;
    reg[10] = addr(REGION_STACK, FRAME_SIZE);
    let mut frames: Vec<Frame> = Vec::new();
    let mut pc = entry;
    let mut left = budget;
    let fault = |pc: usize, why: String| Fault { pc, why };
    loop {
        if left == 0 {
            return Err(fault(
                pc,
                format!("instruction budget of {budget} exhausted"),
            ));
        }
        left -= 1;
        let Some(&i) = insns.get(pc) else {
            return Err(fault(pc, "ran past the end of the program".into()));
        };
        let d = i.dst as usize & 15;
        let s = i.src as usize & 15;
        if d > 10 || s > 10 {
            return Err(fault(pc, "bad register".into()));
        }
        let imm = i.imm as i64 as u64;
        pc += 1;
        match i.class() {
            CLASS_ALU64 => {
                let src = if i.code & 8 != 0 { reg[s] } else { imm };
                let dst = reg[d];
                reg[d] = match i.code & 0xf0 {
                    0x00 => dst.wrapping_add(src),
                    0x10 => dst.wrapping_sub(src),
                    0x20 => dst.wrapping_mul(src),
                    0x30 => dst.checked_div(src).unwrap_or(0),
                    0x40 => dst | src,
                    0x50 => dst & src,
                    0x60 => dst.wrapping_shl(src as u32),
                    0x70 => dst.wrapping_shr(src as u32),
                    0x80 => dst.wrapping_neg(),
                    0x90 => dst.checked_rem(src).unwrap_or(dst),
                    0xa0 => dst ^ src,
                    0xb0 => src,
                    0xc0 => (dst as i64).wrapping_shr(src as u32) as u64,
                    _ => return Err(fault(pc - 1, format!("bad opcode {:#x}", i.code))),
                };
            }
            CLASS_ALU => {
                let src = if i.code & 8 != 0 {
                    reg[s] as u32
                } else {
                    i.imm as u32
                };
                let dst = reg[d] as u32;
                let r: u32 = match i.code & 0xf0 {
                    0x00 => dst.wrapping_add(src),
                    0x10 => dst.wrapping_sub(src),
                    0x20 => dst.wrapping_mul(src),
                    0x30 => dst.checked_div(src).unwrap_or(0),
                    0x40 => dst | src,
                    0x50 => dst & src,
                    0x60 => dst.wrapping_shl(src),
                    0x70 => dst.wrapping_shr(src),
                    0x80 => dst.wrapping_neg(),
                    0x90 => dst.checked_rem(src).unwrap_or(dst),
                    0xa0 => dst ^ src,
                    0xb0 => src,
                    0xc0 => (dst as i32).wrapping_shr(src) as u32,
                    0xd0 => {
                        // BPF_END: to little endian is a truncation on this host order;
                        // to big endian swaps.
                        let v = reg[d];
                        let be = i.code & 8 != 0;
                        reg[d] = match (i.imm, be) {
                            (16, false) => v as u16 as u64,
                            (32, false) => v as u32 as u64,
                            (64, false) => v,
                            (16, true) => (v as u16).swap_bytes() as u64,
                            (32, true) => (v as u32).swap_bytes() as u64,
                            (64, true) => v.swap_bytes(),
                            _ => return Err(fault(pc - 1, "bad byte swap width".into())),
                        };
                        continue;
                    }
                    _ => return Err(fault(pc - 1, format!("bad opcode {:#x}", i.code))),
                };
                reg[d] = r as u64;
            }
            CLASS_LDX => {
                let a = reg[s].wrapping_add(i.off as i64 as u64);
                reg[d] = mem.load(a, i.mem_size()).map_err(|w| fault(pc - 1, w))?;
            }
            CLASS_ST => {
                let a = reg[d].wrapping_add(i.off as i64 as u64);
                mem.store(a, i.mem_size(), imm)
                    .map_err(|w| fault(pc - 1, w))?;
            }
            CLASS_STX => {
                let a = reg[d].wrapping_add(i.off as i64 as u64);
                let size = i.mem_size();
                if i.code & 0xe0 == 0xc0 {
                    atomic(&i, a, size, &mut reg, mem).map_err(|w| fault(pc - 1, w))?;
                } else {
                    mem.store(a, size, reg[s]).map_err(|w| fault(pc - 1, w))?;
                }
            }
            CLASS_LD => {
                if i.code != LD_IMM64 {
                    return Err(fault(pc - 1, "jump into the middle of LD_IMM64".into()));
                }
                // LD_IMM64 (verify.rs refuses every other LD); the high half is in the
                // next slot, which we step over.
                let hi = insns.get(pc).map_or(0, |n| n.imm as u32 as u64);
                reg[d] = (i.imm as u32 as u64) | hi << 32;
                pc += 1;
            }
            class @ (CLASS_JMP | CLASS_JMP32) => {
                let op = i.code & 0xf0;
                match op {
                    0x80 => {
                        if i.src == PSEUDO_CALL {
                            if frames.len() + 2 > MAX_FRAMES {
                                return Err(fault(pc - 1, "call depth over 8 frames".into()));
                            }
                            frames.push(Frame {
                                ret_pc: pc,
                                saved: [reg[6], reg[7], reg[8], reg[9]],
                            });
                            reg[10] = addr(REGION_STACK, FRAME_SIZE * (frames.len() + 1));
                            pc = (pc as i64 + i.imm as i64) as usize;
                        } else {
                            let call = Call::from_id(i.imm)
                                .ok_or_else(|| fault(pc - 1, format!("unknown call {}", i.imm)))?;
                            let args = [reg[1], reg[2], reg[3], reg[4], reg[5]];
                            reg[0] = host.call(call, args, mem).map_err(|w| fault(pc - 1, w))?;
                        }
                        continue;
                    }
                    0x90 => match frames.pop() {
                        None => return Ok(reg[0]),
                        Some(f) => {
                            reg[6..10].copy_from_slice(&f.saved);
                            reg[10] = addr(REGION_STACK, FRAME_SIZE * (frames.len() + 1));
                            pc = f.ret_pc;
                            continue;
                        }
                    },
                    _ => {}
                }
                let (a, b) = if class == CLASS_JMP32 {
                    let b = if i.code & 8 != 0 {
                        reg[s] as u32
                    } else {
                        i.imm as u32
                    };
                    (reg[d] as u32 as u64, b as u64)
                } else {
                    (reg[d], if i.code & 8 != 0 { reg[s] } else { imm })
                };
                let (sa, sb) = if class == CLASS_JMP32 {
                    (a as u32 as i32 as i64, b as u32 as i32 as i64)
                } else {
                    (a as i64, b as i64)
                };
                let taken = match op {
                    0x00 => true,
                    0x10 => a == b,
                    0x20 => a > b,
                    0x30 => a >= b,
                    0x40 => a & b != 0,
                    0x50 => a != b,
                    0x60 => sa > sb,
                    0x70 => sa >= sb,
                    0xa0 => a < b,
                    0xb0 => a <= b,
                    0xc0 => sa < sb,
                    0xd0 => sa <= sb,
                    _ => return Err(fault(pc - 1, format!("bad opcode {:#x}", i.code))),
                };
                if taken {
                    pc = (pc as i64 + i.off as i64) as usize;
                }
            }
            _ => return Err(fault(pc - 1, format!("bad opcode {:#x}", i.code))),
        }
    }
}

/// BPF_ATOMIC on `size` bytes at `a`: add/or/and/xor (optionally fetching the old value
/// into src), xchg and cmpxchg (r0 is the comparand and receives the old value).
fn atomic(
    i: &Insn,
    a: u64,
    size: usize,
    reg: &mut [u64; 11],
    mem: &mut Memory,
) -> Result<(), String> {
    let s = i.src as usize;
    let mask = if size == 4 { u32::MAX as u64 } else { u64::MAX };
    let old = mem.load(a, size)?;
    let v = reg[s] & mask;
    let fetch = i.imm & 1 != 0;
    let new = match i.imm & !1 {
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
    if fetch || i.imm & !1 == 0xe0 {
        reg[s] = old;
    }
    Ok(())
}
