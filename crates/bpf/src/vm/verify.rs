//! Load-time checks, a small subset of the kernel verifier (kernel/bpf/verifier.c):
//! what the interpreter relies on to stay simple. Every opcode must be one it runs,
//! every register 0..=10 (r10, the frame pointer, never written), every jump and call
//! target inside the code, every LD_IMM64 followed by its second slot, every call
//! resolved (calls.rs). Memory safety is not proven here: memory.rs checks each access
//! at run time, and the budget bounds loops.

use crate::calls::Call;
use crate::insn::*;

/// Checks all of `insns`; on failure, the pc and why.
pub fn check(insns: &[Insn]) -> Result<(), (usize, String)> {
    let n = insns.len();
    let mut pc = 0;
    while pc < n {
        let i = insns[pc];
        let bad = |why: String| Err((pc, why));
        if i.dst > 10 || i.src > 10 {
            return bad(format!("register r{} / r{} does not exist", i.dst, i.src));
        }
        let writes_dst = matches!(i.class(), CLASS_ALU | CLASS_ALU64 | CLASS_LDX | CLASS_LD);
        if writes_dst && i.dst == 10 {
            return bad("write to r10, the read-only frame pointer".into());
        }
        let target = |off: i64| -> Option<usize> {
            let t = pc as i64 + 1 + off;
            (0..n as i64).contains(&t).then_some(t as usize)
        };
        match i.class() {
            CLASS_ALU | CLASS_ALU64 => {
                let op = i.code & 0xf0;
                let ok = match op {
                    0xd0 => i.class() == CLASS_ALU && matches!(i.imm, 16 | 32 | 64),
                    0x00..=0xc0 => i.off == 0,
                    _ => false,
                };
                if !ok {
                    return bad(format!("opcode {:#04x} is not supported", i.code));
                }
            }
            CLASS_LDX | CLASS_ST | CLASS_STX => {
                let mode = i.code & 0xe0;
                let ok = match (i.class(), mode) {
                    (_, 0x60) => true, // BPF_MEM
                    (CLASS_STX, 0xc0) => {
                        i.mem_size() >= 4
                            && matches!(
                                i.imm,
                                0x00 | 0x01 | 0x40 | 0x41 | 0x50 | 0x51 | 0xa0 | 0xa1 | 0xe1 | 0xf1
                            )
                    }
                    _ => false,
                };
                if !ok {
                    return bad(format!("opcode {:#04x} is not supported", i.code));
                }
            }
            CLASS_LD => {
                if i.code != LD_IMM64 || i.src != 0 {
                    return bad(format!(
                        "opcode {:#04x} (src {}) is not supported",
                        i.code, i.src
                    ));
                }
                match insns.get(pc + 1) {
                    Some(next)
                        if next.code == 0 && next.dst == 0 && next.src == 0 && next.off == 0 => {}
                    _ => return bad("LD_IMM64 without its second half".into()),
                }
                pc += 2;
                continue;
            }
            CLASS_JMP | CLASS_JMP32 => {
                let op = i.code & 0xf0;
                match op {
                    0x80 if i.class() == CLASS_JMP => match i.src {
                        PSEUDO_CALL => {
                            if target(i.imm as i64).is_none() {
                                return bad(format!("call target {} outside the code", i.imm));
                            }
                        }
                        PSEUDO_KFUNC_CALL | 0 => {
                            if Call::from_id(i.imm).is_none() {
                                return bad(format!("unresolved call {}", i.imm));
                            }
                        }
                        _ => return bad(format!("call with src {}", i.src)),
                    },
                    0x90 if i.class() == CLASS_JMP => {}
                    0x00 if i.class() == CLASS_JMP => {
                        if target(i.off as i64).is_none() {
                            return bad(format!("jump target {} outside the code", i.off));
                        }
                    }
                    0x10..=0x70 | 0xa0..=0xd0 => {
                        if target(i.off as i64).is_none() {
                            return bad(format!("jump target {} outside the code", i.off));
                        }
                    }
                    _ => return bad(format!("opcode {:#04x} is not supported", i.code)),
                }
            }
            _ => return bad(format!("opcode {:#04x} is not supported", i.code)),
        }
        pc += 1;
    }
    Ok(())
}
