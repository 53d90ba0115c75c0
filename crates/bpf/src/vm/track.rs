//! Load-time value tracking: a small part of the kernel verifier's register tracking
//! (kernel/bpf/verifier.c, do_check), enough to give its verdicts on stack and map
//! value bounds and on loops without it.
//!
//! Each function is run once over an abstract state (`Val` per register, joined where
//! paths meet, to a fixpoint) instead of path by path as the verifier does. Scalars
//! carry an unsigned range and known bits (scalar.rs), refined on both edges of a
//! conditional jump as regs_refine_cond_op does, and a branch whose ranges decide it
//! takes only its side (is_branch_taken). With that:
//!
//! - **Stack bounds** (check_stack_access_within_bounds): an access through r10, or a
//!   register holding r10 + a constant, outside the frame's `[-512, 0)` is refused with
//!   the kernel's words, "invalid write to stack R10 off=0 size=8".
//! - **Map value bounds** (check_map_access, check_mem_region_access): an access through
//!   a pointer `bpf_map_lookup_elem` or `bpf_sk_storage_get` returned, at a constant
//!   offset outside the value, is refused: "invalid access to map value,
//!   value_size=16 off=16 size=8". At a variable offset, the offset's range decides
//!   as in the kernel: its largest value past the end ("invalid access to map value,
//!   value_size=16 off=24 size=8": `v[cwnd % 4]` of two u64s), or not below
//!   BPF_MAX_VAR_OFF ("R0 unbounded memory access": `v[cwnd]`), or a pointer plus a
//!   register that may be negative without bound (adjust_ptr_min_max_vals, "math between
//!   map_value pointer and register with unbounded min value is not allowed").
//! - **Loops it cannot bound** (`loops`): a loop whose every exit tests only values
//!   that are the same unknown on every pass (read afresh from the socket or a map, or
//!   a helper's result, or unchanged by the loop) never ends in the verifier's
//!   simulation either: it refuses such a loop ("infinite loop detected" when the
//!   state repeats exactly, "BPF program is too large" when a counter keeps it from
//!   repeating). A loop with no exit at all is the same case. Any other loop is walked
//!   pass by pass as the verifier walks it (loop_walk.rs): one whose exits its ranges
//!   do not decide within the verifier's 1,000,000 instructions (`for (i = 0; i <
//!   cwnd; i++)`) is refused.
//!
//! Conservative by construction: a value the tracking is unsure of is `Top` or an
//! inexact scalar, and nothing is refused because of either; a path that passed a
//! branch the tracking could not model is marked unsure (`State::sure`), and no
//! variable-offset access on it is refused. What remains the kernel's alone: spilled
//! registers (a value stored to the stack and read back is `Top` here; the verifier
//! keeps its range), signed and 32-bit sub-register bounds, and a constant
//! out-of-bounds access on a path the verifier proves dead and this does not (clang
//! leaves no such code behind a constant condition).

use crate::vm::calls::Call;
use crate::vm::insn::*;
use crate::vm::loop_walk;
use crate::vm::memory::map_of_handle;
use crate::vm::scalar::{self, Scalar, BPF_MAX_VAR_OFF};

/// What the tracking knows of one register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Val {
    /// Anything (paths disagree on its kind; read back from the stack; an argument).
    Top,
    /// A constant the program computed (an immediate, an LD_IMM64 address or map).
    Const(u64),
    /// r10 + this, in the function's own frame.
    Stack(i64),
    /// A pointer into a value of map `map`: `off` bytes in (constant part) plus a
    /// variable part in `var` (0..=0 when none), as the verifier's reg->off and
    /// umin/umax; `exact` as for a scalar; `null` until a test against 0 rules it out.
    MapValue {
        map: usize,
        off: i64,
        var: (u64, u64),
        exact: bool,
        null: bool,
    },
    /// A number: read from the socket, the callback's arguments, a map value or
    /// writable global data; a helper's result; arithmetic on those.
    Scalar(Scalar),
}

/// The registers, and whether the path here passed only branches the tracking
/// modelled (or decided): where not, a branch the verifier decides might make this
/// path dead for it, so no variable access is refused here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct State {
    pub r: [Val; 11],
    pub sure: bool,
}

fn join_val(a: Val, b: Val) -> Val {
    match (a, b) {
        _ if a == b => a,
        // The same pointer, NULL-checked on one path only.
        (
            Val::MapValue {
                map,
                off,
                var,
                exact,
                null: n1,
            },
            Val::MapValue { null: n2, .. },
        ) if Val::MapValue {
            map,
            off,
            var,
            exact,
            null: n2,
        } == b =>
        {
            Val::MapValue {
                map,
                off,
                var,
                exact,
                null: n1 || n2,
            }
        }
        (
            Val::MapValue {
                map: m, null: n1, ..
            },
            Val::MapValue {
                map: n, null: n2, ..
            },
        ) if m == n => Val::MapValue {
            map: m,
            off: 0,
            var: (0, 0),
            exact: false,
            null: n1 || n2,
        },
        // Two numbers from loads or arithmetic stay a number (not exact); a constant
        // meeting anything else is Top, as before ranges: it may be an address.
        (Val::Scalar(_), Val::Scalar(_)) => Val::Scalar(Scalar::unknown()),
        _ => Val::Top,
    }
}

/// Where two paths meet: what both agree on. Exact values are equal on both, so they
/// hold on the sure one if either is.
pub(crate) fn join(a: &State, b: &State) -> State {
    let mut r = a.r;
    for (k, v) in r.iter_mut().enumerate() {
        *v = join_val(a.r[k], b.r[k]);
    }
    State {
        r,
        sure: a.sure || b.sure,
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

/// Whether a load through `base` reads a value the verifier does not know (the
/// socket, a map value, writable global data): a fresh unknown on every pass.
fn fresh(base: Val, env: &Env) -> bool {
    match base {
        Val::Scalar(_) | Val::MapValue { .. } => true,
        Val::Const(a) => (env.writable_global)(a),
        _ => false,
    }
}

/// The value a load of `size` bytes through `base` gives.
fn loaded(base: Val, size: usize, env: &Env) -> Val {
    if fresh(base, env) {
        Val::Scalar(Scalar::loaded(size))
    } else {
        Val::Top
    }
}

/// `v` as a scalar, if it is one.
fn as_scalar(v: Val) -> Option<Scalar> {
    match v {
        Val::Const(c) => Some(Scalar::konst(c)),
        Val::Scalar(s) => Some(s),
        _ => None,
    }
}

/// A scalar back into a register: constants stay constants.
fn of_scalar(s: Scalar) -> Val {
    match s.is_const() {
        Some(c) if s.id == 0 => Val::Const(c),
        _ => Val::Scalar(s),
    }
}

/// Register `r` now holds `new` (a branch's refinement of its old value): every copy
/// linked to it (same id) learns the same, shifted by its own delta, as the
/// verifier's sync_linked_regs does. None: a copy cannot hold it (a dead edge).
fn refine(s: &mut State, r: usize, new: Scalar) -> Option<()> {
    let Val::Scalar(old) = s.r[r] else {
        return Some(());
    };
    s.r[r] = Val::Scalar(new);
    if old.id == 0 {
        return Some(());
    }
    for k in 0..11 {
        let Val::Scalar(o) = s.r[k] else { continue };
        if k == r || o.id != old.id {
            continue;
        }
        let shift = o.delta.wrapping_sub(old.delta);
        let moved = |x: u64| x.checked_add_signed(shift);
        s.r[k] = match (moved(new.lo), moved(new.hi)) {
            (Some(lo), Some(hi)) => Val::Scalar(o.clamp(lo, hi)?),
            _ => Val::Scalar(Scalar { exact: false, ..o }),
        };
    }
    Some(())
}

/// The operands of a jump no longer exact (a branch not modelled): their copies too.
fn blur(s: &mut State, regs: &[usize]) {
    for &r in regs {
        if let Val::Scalar(x) = s.r[r] {
            for k in 0..11 {
                if let Val::Scalar(o) = s.r[k] {
                    if k == r || (x.id != 0 && o.id == x.id) {
                        s.r[k] = Val::Scalar(Scalar { exact: false, ..o });
                    }
                }
            }
        }
    }
}

/// The ALU op `insns[pc]` on `s`.
fn step_alu(i: Insn, pc: usize, s: &mut State) {
    let (d, sr) = (usize::from(i.dst), usize::from(i.src));
    let wide = i.class() == CLASS_ALU64;
    let op = i.code & 0xf0;
    let by_reg = i.code & 0x08 != 0;
    let src = if by_reg {
        s.r[sr]
    } else if wide {
        Val::Const(i64::from(i.imm) as u64)
    } else {
        Val::Const(u64::from(i.imm as u32))
    };
    // A copy of a scalar shares its id (check_alu_op's BPF_MOV: the verifier gives
    // the source an id first if it has none).
    if op == 0xb0 && by_reg {
        if let Val::Scalar(mut x) = src {
            if !wide && x.hi > u32::MAX as u64 {
                s.r[d] = Val::Scalar(Scalar::range(0, u32::MAX as u64, false));
                return;
            }
            if x.id == 0 {
                x.id = pc as u32 + 1;
                x.delta = 0;
                s.r[sr] = Val::Scalar(x);
            }
            s.r[d] = Val::Scalar(x);
            return;
        }
    }
    let dst = s.r[d];
    s.r[d] = match (op, dst, src) {
        (0xb0, _, v) if wide => v,
        (0xb0, _, Val::Const(c)) => Val::Const(c & 0xffff_ffff),
        (_, Val::Const(a), Val::Const(b)) => {
            alu(op, wide, a, b).map_or(Val::Scalar(Scalar::unknown()), Val::Const)
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
        (0x00, Val::Const(c), Val::Stack(o)) if wide => Val::Stack(o.wrapping_add(c as i64)),
        (0x00 | 0x10, Val::MapValue { .. }, _) | (0x00, _, Val::MapValue { .. }) if wide => {
            map_math(op, dst, src)
        }
        // Scalars: ranges (scalar.rs); an add or sub of a constant keeps the link to
        // the copies (the verifier's BPF_ADD_CONST).
        (_, Val::Scalar(_) | Val::Const(_), Val::Scalar(_) | Val::Const(_))
            if op != 0x80 && op != 0xd0 =>
        {
            let (a, b) = (as_scalar(dst).unwrap(), as_scalar(src).unwrap());
            let mut r = Scalar::alu(op, wide, a, b);
            if let (0x00 | 0x10, Val::Scalar(x), Val::Const(c)) = (op, dst, src) {
                let c = if op == 0x00 {
                    c as i64
                } else {
                    (c as i64).wrapping_neg()
                };
                if x.id != 0 && r.exact == x.exact {
                    if let Some(delta) = x.delta.checked_add(c) {
                        r.id = x.id;
                        r.delta = delta;
                    }
                }
            }
            of_scalar(r)
        }
        // A neg or byte swap of a scalar: a scalar the tracking does not follow.
        (0x80 | 0xd0, Val::Scalar(_) | Val::Const(_), _) => Val::Scalar(Scalar::unknown()),
        _ => Val::Top,
    };
}

/// A map value pointer plus or minus something (adjust_ptr_min_max_vals): a constant
/// moves the fixed offset, a scalar adds its range to the variable part.
fn map_math(op: u8, dst: Val, src: Val) -> Val {
    let (ptr, other) = match (dst, src) {
        (Val::MapValue { .. }, o) => (dst, o),
        (o, p) => (p, o),
    };
    let Val::MapValue {
        map,
        off,
        var,
        exact,
        null,
    } = ptr
    else {
        return Val::Top;
    };
    let blurred = Val::MapValue {
        map,
        off: 0,
        var: (0, 0),
        exact: false,
        null,
    };
    match (op, other) {
        (_, Val::Const(c)) => {
            let c = c as i64;
            Val::MapValue {
                map,
                off: if op == 0x00 {
                    off.wrapping_add(c)
                } else {
                    off.wrapping_sub(c)
                },
                var,
                exact,
                null,
            }
        }
        (_, Val::Top | Val::Stack(_) | Val::MapValue { .. }) => Val::Top,
        (0x00, Val::Scalar(x)) => match (var.0.checked_add(x.lo), var.1.checked_add(x.hi)) {
            (Some(lo), Some(hi)) if hi <= i64::MAX as u64 => Val::MapValue {
                map,
                off,
                var: (lo, hi),
                exact: exact && x.exact,
                null,
            },
            _ => blurred,
        },
        _ => blurred,
    }
}

/// Runs `insns[pc]` on `s`; returns the feasible successors, each with its state
/// (a conditional jump's two edges refine its operands differently).
pub(crate) fn step(insns: &[Insn], pc: usize, s: &State, env: &Env) -> Vec<(usize, State)> {
    let i = insns[pc];
    let (d, sr) = (usize::from(i.dst), usize::from(i.src));
    let mut s = *s;
    match i.class() {
        CLASS_ALU | CLASS_ALU64 => step_alu(i, pc, &mut s),
        CLASS_LDX => s.r[d] = loaded(s.r[sr], i.mem_size(), env),
        CLASS_STX if i.code & 0xe0 == 0xc0 => {
            // BPF_ATOMIC: fetching forms write the old value into src (cmpxchg: r0).
            let v = loaded(s.r[d], i.mem_size(), env);
            if i.imm == 0xf1 {
                s.r[0] = v;
            } else if i.imm & 1 != 0 {
                s.r[sr] = v;
            }
        }
        CLASS_LD => {
            // LD_IMM64 (verify.rs allows no other): a function's address or a constant.
            let hi = insns.get(pc + 1).map_or(0, |n| n.imm as u32);
            s.r[d] = if i.src == PSEUDO_FUNC {
                Val::Top
            } else {
                Val::Const(u64::from(hi) << 32 | u64::from(i.imm as u32))
            };
            return vec![(pc + 2, s)];
        }
        CLASS_JMP | CLASS_JMP32 => return step_jump(i, pc, s, env),
        _ => {}
    }
    vec![(pc + 1, s)]
}

fn step_jump(i: Insn, pc: usize, mut s: State, env: &Env) -> Vec<(usize, State)> {
    let (d, sr) = (usize::from(i.dst), usize::from(i.src));
    let op = i.code & 0xf0;
    let to = (pc as i64 + 1 + i64::from(i.off)) as usize;
    let wide = i.class() == CLASS_JMP;
    match op {
        0x00 => return vec![(to, s)],
        0x90 => return Vec::new(),
        0x80 => {
            let r0 = match (i.src, Call::from_id(i.imm)) {
                (PSEUDO_KFUNC_CALL, Some(Call::MapLookup | Call::SkStorageGet)) => match s.r[1] {
                    Val::Const(h) => {
                        map_of_handle(h, env.value_sizes.len()).map_or(Val::Top, |map| {
                            Val::MapValue {
                                map,
                                off: 0,
                                var: (0, 0),
                                exact: true,
                                null: true,
                            }
                        })
                    }
                    _ => Val::Top,
                },
                (PSEUDO_CALL, _) => Val::Top,
                // A helper's result: the verifier knows its range for a few helpers
                // only (do_refine_retval_range), so not exact.
                _ => Val::Scalar(Scalar::unknown()),
            };
            s.r[0] = r0;
            // r1-r5 are the callee's (the verifier: NOT_INIT).
            s.r[1..6].fill(Val::Top);
            return vec![(pc + 1, s)];
        }
        _ => {}
    }
    let by_reg = i.code & 0x08 != 0;
    let b = if by_reg {
        s.r[sr]
    } else if wide {
        Val::Const(i64::from(i.imm) as u64)
    } else {
        Val::Const(u64::from(i.imm as u32))
    };
    let both = |mut s: State| {
        s.sure = false;
        vec![(pc + 1, s), (to, s)]
    };
    match (s.r[d], b) {
        (Val::Const(x), Val::Const(y)) => match decide(op, wide, x, y) {
            Some(true) => vec![(to, s)],
            Some(false) => vec![(pc + 1, s)],
            None => both(s),
        },
        // A NULL check of a lookup's result (mark_ptr_or_null_regs).
        (
            Val::MapValue {
                map,
                off,
                var,
                exact,
                null,
            },
            Val::Const(0),
        ) if op == 0x10 || op == 0x50 => {
            let (mut is_null, mut not_null) = (s, s);
            is_null.r[d] = Val::Const(0);
            not_null.r[d] = Val::MapValue {
                map,
                off,
                var,
                exact,
                null: false,
            };
            let (on_eq, on_ne) = if op == 0x10 {
                (to, pc + 1)
            } else {
                (pc + 1, to)
            };
            let mut out = vec![(on_ne, not_null)];
            if null {
                out.push((on_eq, is_null));
            }
            out
        }
        (x, y) => {
            let (Some(a), Some(b)) = (as_scalar(x), as_scalar(y)) else {
                return both(s);
            };
            // A 32-bit compare is the 64-bit one on values that fit 32 bits (signed:
            // 31 bits, where the sign bit is clear in both views).
            let signed = matches!(op, 0x60 | 0x70 | 0xc0 | 0xd0);
            let limit = if signed {
                i32::MAX as u64
            } else {
                u32::MAX as u64
            };
            let fits = |v: Scalar| v.hi <= limit;
            let modelled = if wide || (fits(a) && fits(b)) {
                scalar::branch(op, a, b)
            } else {
                None
            };
            let Some((taken, fall)) = modelled.filter(|_| a.exact && b.exact) else {
                blur(&mut s, &[d, sr]);
                return both(s);
            };
            let mut out = Vec::new();
            for (target, edge) in [(pc + 1, fall), (to, taken)] {
                let Some((na, nb)) = edge else { continue };
                let mut e = s;
                let ok = refine(&mut e, d, na).is_some()
                    && (!by_reg || refine(&mut e, sr, nb).is_some());
                if ok {
                    out.push((target, e));
                }
            }
            out
        }
    }
}

fn run(insns: &[Insn], start: usize, end: usize, env: &Env) -> Flow {
    let n = insns.len();
    let mut state: Vec<Option<State>> = vec![None; n];
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    state[start] = Some(entry_state(start, env));
    let mut work = vec![start];
    while let Some(pc) = work.pop() {
        let Some(s) = state[pc] else { continue };
        let to = step(insns, pc, &s, env);
        for (t, st) in &to {
            let t = *t;
            if t < start || t >= end {
                continue;
            }
            let merged = match &state[t] {
                None => *st,
                Some(old) => join(old, st),
            };
            if state[t] != Some(merged) {
                state[t] = Some(merged);
                work.push(t);
            }
        }
        let mut next: Vec<usize> = to
            .into_iter()
            .map(|(t, _)| t)
            .filter(|&t| (start..end).contains(&t))
            .collect();
        next.dedup();
        succ[pc] = next;
    }
    Flow { state, succ }
}

/// A function's state at its first instruction: r1 the context at a callback's entry
/// (its loads are the socket's fields and the arguments), anything elsewhere.
fn entry_state(start: usize, env: &Env) -> State {
    let mut r = [Val::Top; 11];
    r[10] = Val::Stack(0);
    if env.entries.contains(&start) {
        r[1] = Val::Scalar(Scalar::loaded(8));
    }
    State { r, sure: true }
}

fn check_accesses(insns: &[Insn], flow: &Flow, env: &Env) -> Result<(), (usize, String)> {
    for (pc, st) in flow.state.iter().enumerate() {
        let Some(s) = st else { continue };
        let i = insns[pc];
        // A map value pointer plus a scalar the verifier cannot keep from S64_MIN.
        let wide_add = i.code == 0x0f;
        if let (true, Val::MapValue { .. }, Val::Scalar(x)) =
            (wide_add, s.r[usize::from(i.dst)], s.r[usize::from(i.src)])
        {
            if s.sure && x.exact && x.lo <= i64::MAX as u64 && x.hi > i64::MAX as u64 {
                return Err((
                    pc,
                    "math between map_value pointer and register with unbounded min value \
                     is not allowed"
                        .into(),
                ));
            }
        }
        let (base, write) = match i.class() {
            CLASS_LDX => (i.src, false),
            CLASS_ST | CLASS_STX => (i.dst, true),
            _ => continue,
        };
        let size = i.mem_size() as i64;
        match s.r[usize::from(base)] {
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
            Val::MapValue {
                map,
                off,
                var,
                exact: true,
                ..
            } => {
                let value_size = env.value_sizes[map] as i64;
                let at = off + i64::from(i.off);
                let outside = |o: i64| o < 0 || o + size > value_size;
                let words = |o: i64| {
                    format!(
                        "invalid access to map value, value_size={value_size} off={o} size={size}"
                    )
                };
                if var == (0, 0) {
                    if outside(at) {
                        return Err((pc, words(at)));
                    }
                    continue;
                }
                if !s.sure {
                    continue;
                }
                // check_mem_region_access: the smallest offset, then the bound, then
                // the largest.
                let lo = at + var.0 as i64;
                if outside(lo) {
                    return Err((
                        pc,
                        format!(
                            "{} (R{base} min value is outside of the allowed memory range)",
                            words(lo)
                        ),
                    ));
                }
                if var.1 >= BPF_MAX_VAR_OFF {
                    return Err((
                        pc,
                        format!(
                            "R{base} unbounded memory access, make sure to bounds check any \
                             such access"
                        ),
                    ));
                }
                let hi = at + var.1 as i64;
                if outside(hi) {
                    return Err((
                        pc,
                        format!(
                            "{} (R{base} max value is outside of the allowed memory range)",
                            words(hi)
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
        let Val::Const(h) = s.r[arg] else { continue };
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
    let header_pcs: Vec<usize> = headers.iter().map(|h| h.0).collect();
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
            let s = flow.state[p].map_or([Val::Top; 11], |s| s.r);
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
                    if fresh(s[usize::from(i.src)], env) {
                        c &= !bit(i.dst);
                    } else {
                        c |= bit(i.dst);
                    }
                }
                CLASS_LD => c &= !bit(i.dst),
                CLASS_STX if i.code & 0xe0 == 0xc0 => {
                    let w = writes(&i);
                    if fresh(s[usize::from(i.dst)], env) {
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
        // An exit that changes from pass to pass: whether the verifier's ranges
        // decide it in time is for a walk like its own (loop_walk.rs). A loop with
        // another inside it is left alone (conservative: accepted).
        if header_pcs.iter().any(|&h| h != t && body[h]) {
            continue;
        }
        let mut entry: Option<State> = None;
        for &p in &pred[t] {
            let Some(sp) = flow.state.get(p).copied().flatten() else {
                continue;
            };
            if body[p] {
                continue;
            }
            for (q, e) in step(insns, p, &sp, env) {
                if q == t {
                    entry = Some(entry.map_or(e, |old| join(&old, &e)));
                }
            }
        }
        if let Some(entry) = entry {
            loop_walk::walk(insns, &body, t, back, entry, env)?;
        }
    }
    Ok(())
}

/// 1 if register `r` carries in `c`.
fn c_of(c: u16, r: u8) -> u16 {
    (c >> r) & 1
}
