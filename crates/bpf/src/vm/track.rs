//! Load-time value tracking: a small part of the kernel verifier's register tracking
//! (kernel/bpf/verifier.c, do_check), enough to give three of its verdicts without it.
//!
//! Each function is run once over an abstract state (`Val` per register, joined where
//! paths meet, to a fixpoint) instead of path by path as the verifier does; a branch
//! whose operands are both constants takes only its side. With that:
//!
//! - **Stack bounds** (check_stack_access_within_bounds): an access through r10, or a
//!   register holding r10 + a constant, outside the frame's `[-512, 0)` is refused with
//!   the kernel's words, "invalid write to stack R10 off=0 size=8".
//! - **Map value bounds** (check_map_access): an access through a pointer
//!   `bpf_map_lookup_elem` or `bpf_sk_storage_get` returned, at a constant offset
//!   outside the value, is refused: "invalid access to map value, value_size=16 off=16
//!   size=8". A variable offset is not tracked (the verifier refuses one it cannot
//!   bound, "R1 unbounded memory access"); memory.rs faults on it when it runs out.
//! - **Loops it cannot bound** (`loops`): a loop whose every exit tests only values
//!   that are the same unknown on every pass (read afresh from the socket or a map, or
//!   a helper's result, or unchanged by the loop) never ends in the verifier's
//!   simulation either: it refuses such a loop ("infinite loop detected" when the
//!   state repeats exactly, "BPF program is too large" when a counter keeps it from
//!   repeating). A loop with no exit at all is the same case.
//!
//! Conservative by construction: a value the tracking is unsure of is `Top`, and
//! nothing is refused because of a `Top`. What remains the kernel's alone: variable
//! offsets, loops whose bound the verifier finds by its range tracking (or fails to),
//! and anything on a path the verifier's range tracking proves dead but ours does not
//! (a constant out-of-bounds access behind such a branch is refused here and not
//! there; clang leaves no such code behind a constant condition).

use crate::vm::calls::Call;
use crate::vm::insn::*;
use crate::vm::memory::map_of_handle;

/// What the tracking knows of one register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Val {
    /// Anything (paths disagree; read back from the stack; an argument).
    Top,
    /// A constant the program computed (an immediate, an LD_IMM64 address or map).
    Const(u64),
    /// r10 + this, in the function's own frame.
    Stack(i64),
    /// A pointer into a value of map `map`, `off` bytes in when that is constant.
    MapValue { map: usize, off: Option<i64> },
    /// An unknown that is no stack pointer: read from the socket, the callback's
    /// arguments, a map value or writable global data; a helper's result.
    Mem,
}

type State = [Val; 11];

fn join(a: Val, b: Val) -> Val {
    match (a, b) {
        _ if a == b => a,
        (Val::MapValue { map: m, .. }, Val::MapValue { map: n, .. }) if m == n => {
            Val::MapValue { map: m, off: None }
        }
        _ => Val::Top,
    }
}

/// The maps and global regions the tracking needs from the loader.
pub struct Env<'a> {
    /// Each map's value_size, by map index (memory.rs `map_handle`).
    pub value_sizes: &'a [usize],
    /// Each map's `enum bpf_map_type` number, by map index.
    pub map_types: &'a [u32],
    /// Whether a constant address is in writable global data (.data, .bss): a load
    /// from there is an unknown to the verifier, from .rodata/.kconfig a constant.
    pub writable_global: &'a dyn Fn(u64) -> bool,
    /// The callbacks' entry pcs (r1 is the context there; elsewhere an argument).
    pub entries: &'a [usize],
}

/// Tracked states of one function: the in-state of each reachable pc, and each
/// reachable pc's feasible successors.
struct Flow {
    state: Vec<Option<State>>,
    succ: Vec<Vec<usize>>,
}

/// Checks every function `[start, end)`; on failure, the pc and the kernel's reason.
pub fn check(
    insns: &[Insn],
    functions: &[(usize, usize)],
    env: &Env,
) -> Result<(), (usize, String)> {
    for &(start, end) in functions {
        // A corrupt object's symbols may lie outside the code.
        let end = end.min(insns.len());
        if start >= end {
            continue;
        }
        let flow = run(insns, start, end, env);
        check_accesses(insns, &flow, env)?;
        check_map_args(insns, &flow, env)?;
        loops(insns, start, end, &flow, env)?;
    }
    Ok(())
}

fn alu(op: u8, wide: bool, a: u64, b: u64) -> Option<u64> {
    let r = if wide {
        match op {
            0x00 => a.wrapping_add(b),
            0x10 => a.wrapping_sub(b),
            0x20 => a.wrapping_mul(b),
            0x40 => a | b,
            0x50 => a & b,
            0x60 => a.wrapping_shl(b as u32),
            0x70 => a.wrapping_shr(b as u32),
            0x80 => a.wrapping_neg(),
            0xa0 => a ^ b,
            0xb0 => b,
            0xc0 => (a as i64).wrapping_shr(b as u32) as u64,
            _ => return None,
        }
    } else {
        let (a, b) = (a as u32, b as u32);
        u64::from(match op {
            0x00 => a.wrapping_add(b),
            0x10 => a.wrapping_sub(b),
            0x20 => a.wrapping_mul(b),
            0x40 => a | b,
            0x50 => a & b,
            0x60 => a.wrapping_shl(b),
            0x70 => a.wrapping_shr(b),
            0x80 => a.wrapping_neg(),
            0xa0 => a ^ b,
            0xb0 => b,
            0xc0 => (a as i32).wrapping_shr(b) as u32,
            _ => return None,
        })
    };
    Some(r)
}

/// A conditional jump on constants: taken or not.
fn decide(op: u8, wide: bool, a: u64, b: u64) -> Option<bool> {
    let (a, b, sa, sb) = if wide {
        (a, b, a as i64, b as i64)
    } else {
        let (a, b) = (a as u32, b as u32);
        (
            u64::from(a),
            u64::from(b),
            i64::from(a as i32),
            i64::from(b as i32),
        )
    };
    Some(match op {
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
        _ => return None,
    })
}

/// The value a load through `base` gives.
fn loaded(base: Val, env: &Env) -> Val {
    match base {
        Val::Mem | Val::MapValue { .. } => Val::Mem,
        Val::Const(a) if (env.writable_global)(a) => Val::Mem,
        _ => Val::Top,
    }
}

/// Runs `insns[pc]` on `s`; returns the feasible successors.
fn step(insns: &[Insn], pc: usize, s: &mut State, env: &Env) -> Vec<usize> {
    let i = insns[pc];
    let (d, sr) = (usize::from(i.dst), usize::from(i.src));
    let next = vec![pc + 1];
    match i.class() {
        CLASS_ALU | CLASS_ALU64 => {
            let wide = i.class() == CLASS_ALU64;
            let op = i.code & 0xf0;
            let by_reg = i.code & 0x08 != 0;
            let src = if by_reg {
                s[sr]
            } else if wide {
                Val::Const(i64::from(i.imm) as u64)
            } else {
                Val::Const(u64::from(i.imm as u32))
            };
            let dst = s[d];
            s[d] = match (op, dst, src) {
                (0xb0, _, v) if wide => v,
                (0xb0, _, Val::Const(c)) => Val::Const(c & 0xffff_ffff),
                (_, Val::Const(a), Val::Const(b)) => {
                    alu(op, wide, a, b).map_or(Val::Mem, Val::Const)
                }
                // Pointer arithmetic with a constant (64-bit add and sub).
                (0x00 | 0x10, Val::Stack(o), Val::Const(c)) if wide => {
                    let c = c as i64;
                    Val::Stack(if op == 0x00 {
                        o.wrapping_add(c)
                    } else {
                        o.wrapping_sub(c)
                    })
                }
                (0x00, Val::Const(c), Val::Stack(o)) if wide => {
                    Val::Stack(o.wrapping_add(c as i64))
                }
                (0x00 | 0x10, Val::MapValue { map, off }, Val::Const(c)) if wide => {
                    let c = c as i64;
                    let off = off.map(|o| {
                        if op == 0x00 {
                            o.wrapping_add(c)
                        } else {
                            o.wrapping_sub(c)
                        }
                    });
                    Val::MapValue { map, off }
                }
                (0x00, Val::Const(_), Val::MapValue { map, .. }) if wide => {
                    Val::MapValue { map, off: None }
                }
                // A variable offset: still a pointer into the same value.
                (0x00 | 0x10, Val::MapValue { map, .. }, Val::Mem) if wide => {
                    Val::MapValue { map, off: None }
                }
                (0x00, Val::Mem, Val::MapValue { map, .. }) if wide => {
                    Val::MapValue { map, off: None }
                }
                // Scalars from unknowns and constants stay unknowns; a neg or
                // byte swap of an unknown too.
                (_, Val::Mem, Val::Mem | Val::Const(_)) | (_, Val::Const(_), Val::Mem) => Val::Mem,
                (0x80 | 0xd0, Val::Mem, _) => Val::Mem,
                _ => Val::Top,
            };
            next
        }
        CLASS_LDX => {
            s[d] = loaded(s[sr], env);
            next
        }
        CLASS_ST => next,
        CLASS_STX => {
            // BPF_ATOMIC: fetching forms write the old value into src (cmpxchg: r0).
            if i.code & 0xe0 == 0xc0 {
                let v = loaded(s[d], env);
                if i.imm == 0xf1 {
                    s[0] = v;
                } else if i.imm & 1 != 0 {
                    s[sr] = v;
                }
            }
            next
        }
        CLASS_LD => {
            // LD_IMM64 (verify.rs allows no other): a function's address or a constant.
            let hi = insns.get(pc + 1).map_or(0, |n| n.imm as u32);
            s[d] = if i.src == PSEUDO_FUNC {
                Val::Top
            } else {
                Val::Const(u64::from(hi) << 32 | u64::from(i.imm as u32))
            };
            vec![pc + 2]
        }
        CLASS_JMP | CLASS_JMP32 => {
            let op = i.code & 0xf0;
            let to = (pc as i64 + 1 + i64::from(i.off)) as usize;
            match op {
                0x00 => vec![to],
                0x90 => Vec::new(),
                0x80 => {
                    let r0 = match (i.src, Call::from_id(i.imm)) {
                        (PSEUDO_KFUNC_CALL, Some(Call::MapLookup | Call::SkStorageGet)) => {
                            match s[1] {
                                Val::Const(h) => map_of_handle(h, env.value_sizes.len())
                                    .map_or(Val::Top, |map| Val::MapValue { map, off: Some(0) }),
                                _ => Val::Top,
                            }
                        }
                        (PSEUDO_CALL, _) => Val::Top,
                        _ => Val::Mem,
                    };
                    s[0] = r0;
                    // r1-r5 are the callee's (the verifier: NOT_INIT).
                    s[1..6].fill(Val::Top);
                    next
                }
                _ => {
                    let b = if i.code & 0x08 != 0 {
                        s[sr]
                    } else {
                        Val::Const(i64::from(i.imm) as u64)
                    };
                    match (s[d], b) {
                        (Val::Const(x), Val::Const(y)) => {
                            match decide(op, i.class() == CLASS_JMP, x, y) {
                                Some(true) => vec![to],
                                Some(false) => next,
                                None => vec![pc + 1, to],
                            }
                        }
                        _ => vec![pc + 1, to],
                    }
                }
            }
        }
        _ => next,
    }
}

fn run(insns: &[Insn], start: usize, end: usize, env: &Env) -> Flow {
    let n = insns.len();
    let mut state: Vec<Option<State>> = vec![None; n];
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut entry = [Val::Top; 11];
    entry[10] = Val::Stack(0);
    if env.entries.contains(&start) {
        entry[1] = Val::Mem;
    }
    state[start] = Some(entry);
    let mut work = vec![start];
    while let Some(pc) = work.pop() {
        let Some(mut s) = state[pc] else { continue };
        let to = step(insns, pc, &mut s, env);
        for &t in &to {
            if t < start || t >= end {
                continue;
            }
            let merged = match state[t] {
                None => s,
                Some(old) => {
                    let mut m = old;
                    for r in 0..11 {
                        m[r] = join(old[r], s[r]);
                    }
                    m
                }
            };
            if state[t] != Some(merged) {
                state[t] = Some(merged);
                work.push(t);
            }
        }
        succ[pc] = to
            .into_iter()
            .filter(|&t| (start..end).contains(&t))
            .collect();
    }
    Flow { state, succ }
}

fn check_accesses(insns: &[Insn], flow: &Flow, env: &Env) -> Result<(), (usize, String)> {
    for (pc, st) in flow.state.iter().enumerate() {
        let Some(s) = st else { continue };
        let i = insns[pc];
        let (base, write) = match i.class() {
            CLASS_LDX => (i.src, false),
            CLASS_ST | CLASS_STX => (i.dst, true),
            _ => continue,
        };
        let size = i.mem_size() as i64;
        match s[usize::from(base)] {
            Val::Stack(o) => {
                let at = o + i64::from(i.off);
                if at < -(super::verify::MAX_BPF_STACK as i64) || at + size > 0 {
                    let what = if write { "write to" } else { "read from" };
                    return Err((
                        pc,
                        format!("invalid {what} stack R{base} off={} size={size}", i.off),
                    ));
                }
            }
            Val::MapValue { map, off: Some(o) } => {
                let at = o + i64::from(i.off);
                let value_size = env.value_sizes[map] as i64;
                if at < 0 || at + size > value_size {
                    return Err((
                        pc,
                        format!(
                            "invalid access to map value, value_size={value_size} off={at} size={size}"
                        ),
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// check_map_func_compatibility: a PROG_ARRAY goes only to bpf_tail_call, and
/// bpf_tail_call takes only a PROG_ARRAY.
fn check_map_args(insns: &[Insn], flow: &Flow, env: &Env) -> Result<(), (usize, String)> {
    const PROG_ARRAY: u32 = 3;
    for (pc, st) in flow.state.iter().enumerate() {
        let Some(s) = st else { continue };
        let i = insns[pc];
        if i.code != CALL || i.src != PSEUDO_KFUNC_CALL {
            continue;
        }
        let (arg, func) = match Call::from_id(i.imm) {
            Some(Call::MapLookup) => (1, "bpf_map_lookup_elem#1"),
            Some(Call::MapUpdate) => (1, "bpf_map_update_elem#2"),
            Some(Call::MapDelete) => (1, "bpf_map_delete_elem#3"),
            Some(Call::TailCall) => (2, "bpf_tail_call#12"),
            _ => continue,
        };
        let Val::Const(h) = s[arg] else { continue };
        let Some(map) = map_of_handle(h, env.map_types.len()) else {
            continue;
        };
        let t = env.map_types[map];
        if (t == PROG_ARRAY) != (func == "bpf_tail_call#12") {
            return Err((pc, format!("cannot pass map_type {t} into func {func}")));
        }
    }
    Ok(())
}

/// The registers `insns[pc]` writes.
fn writes(i: &Insn) -> u16 {
    let d = 1u16 << i.dst;
    match i.class() {
        CLASS_ALU | CLASS_ALU64 | CLASS_LDX | CLASS_LD => d,
        CLASS_STX if i.code & 0xe0 == 0xc0 => {
            if i.imm == 0xf1 {
                1
            } else if i.imm & 1 != 0 {
                1 << i.src
            } else {
                0
            }
        }
        CLASS_JMP if i.code == CALL => 0b11_1111,
        _ => 0,
    }
}

/// Refuses a loop the verifier cannot bound (see the module's comment). A loop is the
/// natural loop of a back-edge's target `t` (t and every pc that reaches one of its
/// back-edges without passing t); its exits are its edges to pcs outside it. A
/// register "carries" when the loop may change it from one pass to the next (written
/// in the loop from anything but a fresh unknown or a constant); the stack and
/// read-only data always count as carrying, since the verifier knows their contents.
fn loops(
    insns: &[Insn],
    start: usize,
    end: usize,
    flow: &Flow,
    env: &Env,
) -> Result<(), (usize, String)> {
    let n = insns.len();
    let mut pred: Vec<Vec<usize>> = vec![Vec::new(); n];
    for pc in start..end {
        for &t in &flow.succ[pc] {
            pred[t].push(pc);
        }
    }
    // Back-edges by layout (clang places a loop's latch after its header): each
    // target is a loop header, its latches the back-edges' sources.
    let mut headers: Vec<(usize, Vec<usize>)> = Vec::new();
    for pc in start..end {
        for &t in &flow.succ[pc] {
            if t > pc {
                continue;
            }
            match headers.iter_mut().find(|h| h.0 == t) {
                Some(h) => h.1.push(pc),
                None => headers.push((t, vec![pc])),
            }
        }
    }
    for (t, latches) in headers {
        // The natural loop: t and what reaches a latch without passing t.
        let mut body = vec![false; n];
        body[t] = true;
        let mut work: Vec<usize> = latches.clone();
        while let Some(p) = work.pop() {
            if body[p] {
                continue;
            }
            body[p] = true;
            work.extend(pred[p].iter().copied());
        }
        // A second way in (an irreducible loop): not ours to judge.
        let entered_elsewhere = (start..end)
            .filter(|&p| body[p] && p != t)
            .any(|p| pred[p].iter().any(|&q| !body[q]));
        if entered_elsewhere {
            continue;
        }
        let back = *latches.iter().max().unwrap_or(&t);
        let mut modified = 0u16;
        for p in (start..end).filter(|&p| body[p]) {
            modified |= writes(&insns[p]);
        }
        // Carried registers at each pc of the body (a may-analysis from t).
        let mut carried: Vec<Option<u16>> = vec![None; n];
        carried[t] = Some(modified);
        let mut work = vec![t];
        while let Some(p) = work.pop() {
            let Some(mut c) = carried[p] else { continue };
            let i = insns[p];
            let bit = |r: u8| 1u16 << r;
            let s = flow.state[p].unwrap_or([Val::Top; 11]);
            match i.class() {
                CLASS_ALU | CLASS_ALU64 => {
                    let op = i.code & 0xf0;
                    let by_reg = i.code & 0x08 != 0;
                    if op == 0xb0 {
                        let from = if by_reg { c_of(c, i.src) } else { 0 };
                        c = c & !bit(i.dst) | from << i.dst;
                    } else if by_reg {
                        c |= c_of(c, i.src) << i.dst;
                    }
                }
                CLASS_LDX => {
                    if loaded(s[usize::from(i.src)], env) == Val::Mem {
                        c &= !bit(i.dst);
                    } else {
                        c |= bit(i.dst);
                    }
                }
                CLASS_LD => c &= !bit(i.dst),
                CLASS_STX if i.code & 0xe0 == 0xc0 => {
                    let w = writes(&i);
                    if loaded(s[usize::from(i.dst)], env) == Val::Mem {
                        c &= !w;
                    } else {
                        c |= w;
                    }
                }
                CLASS_JMP if i.code == CALL => {
                    c &= !0b11_1111;
                    if i.src == PSEUDO_CALL {
                        c |= 1;
                    }
                }
                _ => {}
            }
            for &q in &flow.succ[p] {
                if !body[q] || q == t {
                    continue;
                }
                let m = carried[q].map_or(c, |old| old | c);
                if carried[q] != Some(m) {
                    carried[q] = Some(m);
                    work.push(q);
                }
            }
        }
        // Exits: a conditional jump in the loop with a side outside it.
        let mut exits = 0;
        let mut bounded = false;
        for p in (start..end).filter(|&p| body[p]) {
            if !flow.succ[p].iter().any(|&q| !body[q]) {
                continue;
            }
            exits += 1;
            let i = insns[p];
            let c = carried[p].unwrap_or(u16::MAX);
            let by_reg = i.code & 0x08 != 0;
            let varies = c_of(c, i.dst) != 0 || (by_reg && c_of(c, i.src) != 0);
            let on_scalars = matches!(i.class(), CLASS_JMP | CLASS_JMP32) && i.code & 0xf0 != 0x80;
            if varies || !on_scalars {
                bounded = true;
            }
        }
        if exits == 0 {
            return Err((
                back,
                format!("infinite loop detected at insn {back} (back-edge to {t} with no way out)"),
            ));
        }
        if !bounded {
            return Err((
                back,
                format!(
                    "unbounded loop from insn {t} to {back}: each of its exits tests only \
                     values that are the same unknown on every pass, so the verifier cannot \
                     bound it (the kernel refuses the program: \"infinite loop detected\" \
                     or \"BPF program is too large\")"
                ),
            ));
        }
    }
    Ok(())
}

/// 1 if register `r` carries in `c`.
fn c_of(c: u16, r: u8) -> u16 {
    (c >> r) & 1
}
