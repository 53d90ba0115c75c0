//! Load-time checks, a small subset of the kernel verifier (kernel/bpf/verifier.c):
//! what the interpreter relies on to stay simple. Every opcode must be one it runs,
//! every register 0..=10 (r10, the frame pointer, never written), every jump and call
//! target inside the code, every LD_IMM64 followed by its second slot, every call
//! resolved (calls.rs). Memory safety is not proven here: memory.rs checks each access
//! at run time, and the budget bounds loops; track.rs refuses the out-of-bounds
//! accesses (constant, or by a range it tracks) and the loops the kernel verifier
//! refuses that it can decide (scalar.rs, loop_walk.rs).

use crate::vm::calls::Call;
use crate::vm::insn::*;

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
                // src 0: a constant; BPF_PSEUDO_FUNC: a function's address (bpf_loop's
                // callback), whose target must be code (check_kernel_rules: a function).
                if i.code == LD_IMM64 && i.src == PSEUDO_FUNC && target(i.imm as i64).is_none() {
                    return bad(format!("function address {} outside the code", i.imm));
                }
                if i.code != LD_IMM64 || (i.src != 0 && i.src != PSEUDO_FUNC) {
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

/// MAX_BPF_STACK (include/linux/filter.h): stack bytes per function and for a whole
/// call chain.
pub const MAX_BPF_STACK: usize = 512;

/// How deep below r10 function `[start, end)` reaches: accesses through r10 and through
/// a register set to `r10 + imm` (what clang emits to pass a stack pointer).
fn stack_depth(insns: &[Insn], start: usize, end: usize) -> usize {
    let mut depth = 0usize;
    // Registers holding r10 + offset, as far as a straight-line scan can tell.
    let mut fp: [Option<i64>; 11] = [None; 11];
    let mut note = |off: i64| {
        if off < 0 {
            depth = depth.max(off.unsigned_abs() as usize);
        }
    };
    for i in insns.get(start..end.min(insns.len())).unwrap_or(&[]) {
        let (d, s) = (i.dst as usize & 15, i.src as usize & 15);
        match i.class() {
            CLASS_LDX if s == 10 => note(i64::from(i.off)),
            CLASS_LDX => {}
            CLASS_ST | CLASS_STX if d == 10 => note(i64::from(i.off)),
            CLASS_ST | CLASS_STX => {}
            _ => {}
        }
        if let (CLASS_LDX, Some(Some(base))) = (i.class(), fp.get(s)) {
            note(base + i64::from(i.off));
        }
        if matches!(i.class(), CLASS_ST | CLASS_STX) {
            if let Some(Some(base)) = fp.get(d) {
                note(base + i64::from(i.off));
            }
        }
        if d > 10 {
            continue;
        }
        match i.code {
            0xbf if s == 10 => fp[d] = Some(0),
            0x07 => {
                if let Some(base) = fp[d] {
                    let v = base + i64::from(i.imm);
                    note(v);
                    fp[d] = Some(v);
                }
            }
            CALL => fp[..6].fill(None),
            _ if matches!(i.class(), CLASS_ALU | CLASS_ALU64 | CLASS_LDX | CLASS_LD) => {
                fp[d] = None
            }
            _ => {}
        }
    }
    depth
}

/// What the kernel verifier refuses and a clang-built program can still contain,
/// checked on the whole program (`functions`: each function's [start, end) pcs):
/// - a function reaching more than MAX_BPF_STACK bytes below r10, or a call chain whose
///   frames (each rounded up to 32 bytes, as check_max_stack_depth does) add up to more;
///   a recursive call.
///
/// Loops, and accesses outside the stack frame or a map value, are track.rs's.
pub fn check_kernel_rules(
    insns: &[Insn],
    functions: &[(usize, usize)],
) -> Result<(), (usize, String)> {
    let depths: Vec<usize> = functions
        .iter()
        .map(|&(s, e)| stack_depth(insns, s, e))
        .collect();
    for (k, &(s, _)) in functions.iter().enumerate() {
        if depths[k] > MAX_BPF_STACK {
            return Err((
                s,
                format!(
                    "stack size {} bytes is more than the kernel's MAX_BPF_STACK ({MAX_BPF_STACK})",
                    depths[k]
                ),
            ));
        }
    }
    let func_of = |pc: usize| functions.iter().position(|&(s, e)| s <= pc && pc < e);
    // A function's address (LD_IMM64 BPF_PSEUDO_FUNC) must be a function's first
    // instruction (the verifier's check_ld_imm / find_subprog).
    for (pc, i) in insns.iter().enumerate() {
        if i.code == LD_IMM64 && i.src == PSEUDO_FUNC {
            let t = (pc as i64 + 1 + i64::from(i.imm)) as usize;
            if !functions.iter().any(|&(s, _)| s == t) {
                return Err((
                    pc,
                    format!("function address {t} is not the start of a function"),
                ));
            }
        }
    }
    // A callback whose address a function takes (bpf_loop) runs in a frame above it:
    // for the stack and recursion checks it counts as called from there.
    let calls_or_takes = |i: &Insn| {
        (i.code == CALL && i.src == PSEUDO_CALL) || (i.code == LD_IMM64 && i.src == PSEUDO_FUNC)
    };
    // Callees of each function.
    let callees: Vec<Vec<(usize, usize)>> = functions
        .iter()
        .map(|&(s, e)| {
            (s..e.min(insns.len()))
                .filter(|&pc| calls_or_takes(&insns[pc]))
                .filter_map(|pc| {
                    let t = (pc as i64 + 1 + i64::from(insns[pc].imm)) as usize;
                    Some((pc, func_of(t)?))
                })
                .collect()
        })
        .collect();
    // Deepest chain from each function (frames rounded to 32 bytes), refusing cycles.
    fn chain(
        f: usize,
        depths: &[usize],
        callees: &[Vec<(usize, usize)>],
        on_path: &mut Vec<bool>,
        memo: &mut Vec<Option<usize>>,
    ) -> Result<usize, (usize, String)> {
        if let Some(d) = memo[f] {
            return Ok(d);
        }
        on_path[f] = true;
        let mut deepest = 0;
        for &(pc, g) in &callees[f] {
            if on_path[g] {
                return Err((pc, "recursive call (the verifier refuses recursion)".into()));
            }
            deepest = deepest.max(chain(g, depths, callees, on_path, memo)?);
        }
        on_path[f] = false;
        let d = depths[f].max(1).next_multiple_of(32) + deepest;
        memo[f] = Some(d);
        Ok(d)
    }
    let mut memo = vec![None; functions.len()];
    let mut on_path = vec![false; functions.len()];
    for (k, &(s, _)) in functions.iter().enumerate() {
        let d = chain(k, &depths, &callees, &mut on_path, &mut memo)?;
        if d > MAX_BPF_STACK {
            return Err((
                s,
                format!("combined stack size of its calls is {d} bytes, more than {MAX_BPF_STACK}"),
            ));
        }
    }
    Ok(())
}
