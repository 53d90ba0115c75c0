//! The JIT: a program's callbacks compiled to machine code with cranelift, run in place
//! of the interpreter (mod.rs), which stays the reference: the same r0, the same memory
//! effects, the same `Fault { pc, why }` (tests/jit.rs and crates/controllers'
//! tests/bpf_jit.rs compare the two).
//!
//! Why: the interpreter spends ~1.8 ns per BPF instruction on its dispatch, which BBR's
//! ~410 instructions per callback turn into 1.8x the native port's run time
//! (benches/RESULTS.md); compiled code has no dispatch.
//!
//! Shape (emit.rs): one cranelift function per BPF function (the code reachable from an
//! entry without crossing a call), registers as SSA variables. Loads and stores check
//! the region table of this run (`Region`: each region's base, readable length and
//! writable length) inline and call out to `Memory` for everything else (the socket's
//! per-field write rules, read-only regions, faults), so the errors are `Memory`'s own.
//! Helpers and kfuncs go through `jit_call` to the `Host`; bpf_loop through `jit_loop`
//! to the interpreter's `bpf_loop`, whose callbacks the interpreter runs. A bpf-to-bpf
//! call passes r0-r9 in a record (`REC_*`) and gets r0-r5 back (the interpreter
//! leaves the callee's r1-r5 in place; r6-r9 are the caller's own variables).
//!
//! The budget is charged exactly as the interpreter charges it: at each taken jump,
//! call and return, the straight-line run since the last one. The code keeps
//! `L = left + seg` (instructions left plus the pc the run started at), so a charge at
//! pc `p` is one compare (`p + 1 > L` is exhaustion, at `p`) and one add.
//!
//! Safety: the compiled code touches only the region buffers, through the table built
//! from `Memory` before the run and after each call out (which may move them), with a
//! bounds check before every access (the one exception: `[r10 + off]` within the
//! frame's 512 bytes in a function that never writes r10, always inside the 8-frame
//! stack, whose size `run` checks); the record and the `Ctx`. Calls out are
//! `extern "C"` functions that catch panics (a panic is a fault). The `unsafe` blocks
//! are the call into compiled code and the call outs' dereference of the `Ctx` pointer
//! the compiled code passes back.
//!
//! A map value's region (memory.rs `REGION_MAP_VALUE`) is past the table's end, so
//! its loads and stores are call outs: a value's own bounds are `Memory`'s check.
//!
//! Refused at compile time (the whole program then runs in the interpreter): any
//! opcode the interpreter has no arm for, an unknown call, bpf_tail_call, more than `MAX_INSNS`
//! instructions to compile; a host cranelift has no backend for.
//!
//! When (`Mode`): by default a program is compiled once it has run enough callbacks
//! in the process to repay the compile (`TIER_CALLS_PER_INSN`), and its code is
//! shared by every later load of the same program in the process; since both engines
//! give the same results, which one ran a callback never shows in the output.
//! `TCPLAB_BPF_JIT=0` turns the JIT off, `=1` compiles at the first callback.
//!
//! Deviations from the interpreter: none intended. A budget above 2^62 (where `L`
//! could overflow) runs in the interpreter.

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod emit;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod emit {
    //! No cranelift backend for this host: nothing is compiled.
    pub(super) struct Module;
    pub(super) fn compile(
        _: &super::super::Code,
    ) -> Result<(Vec<(usize, super::EntryFn)>, Module), String> {
        Err("no JIT for this host".into())
    }
}

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::memory::{Memory, FRAME_SIZE, MAX_FRAMES};
use super::{bpf_loop, Code, Fault, Host};
use crate::layout::SOCK_SIZE;
use crate::vm::calls::Call;

/// Compiled code: `(ctx, record) -> 0` (r0 in `record[0]`) or 1 (a fault, in `ctx`).
pub(super) type EntryFn = unsafe extern "C" fn(*mut Ctx<'_>, *mut u64) -> u32;

/// The record a compiled function reads its registers from and writes its results to.
pub(super) const REC_LEFT: usize = 10;
pub(super) const REC_FRAME: usize = 11;
pub(super) const REC_OUTER: usize = 12;
pub(super) const REC_LEN: usize = 13;

/// Fault kinds the compiled code stores itself (`Ctx::fault_kind`); 1: a call out
/// stored the fault.
pub(super) const KIND_CALLED: u64 = 1;
pub(super) const KIND_BUDGET: u64 = 2;
pub(super) const KIND_PAST_END: u64 = 3;
pub(super) const KIND_MID_IMM64: u64 = 4;
pub(super) const KIND_DEPTH: u64 = 5;

/// The most instructions compiled for one program (all its functions, each counted
/// once per entry that reaches it).
pub(super) const MAX_INSNS: usize = 200_000;

/// The largest budget the JIT runs (`L = left + seg` must not overflow).
const MAX_BUDGET: u64 = 1 << 62;

/// One region of the address space (memory.rs) for this run: `len` bytes readable
/// from `ptr`, the first `wlen` of them writable inline (0 where writes go through
/// `Memory::store`: read-only regions and the socket, whose fields have rules).
#[repr(C)]
pub(super) struct Region {
    ptr: *mut u8,
    len: u64,
    wlen: u64,
    /// Where stores beyond `wlen` are allowed byte by byte (one bool per byte), or null.
    mask: *const bool,
}
pub(super) const REGION_SHIFT: i64 = 5;
pub(super) const REGION_PTR: i32 = 0;
pub(super) const REGION_LEN: i32 = 8;
pub(super) const REGION_WLEN: i32 = 16;
pub(super) const REGION_MASK: i32 = 24;

/// What the compiled code and the call outs share during one run. The first fields'
/// offsets (`CTX_*`) are read and written by the compiled code.
#[repr(C)]
pub(super) struct Ctx<'a> {
    table: *const Region,
    /// The index of the table's last entry, an empty region (addresses of higher
    /// regions are clamped to it).
    last: u64,
    fault_pc: u64,
    fault_kind: u64,
    loop_left: u64,
    mem: *mut Memory,
    host: *mut (dyn Host + 'a),
    code: *const Code,
    budget: u64,
    fault: Option<Fault>,
    regions: Vec<Region>,
}
pub(super) const CTX_TABLE: i32 = 0;
pub(super) const CTX_LAST: i32 = 8;
pub(super) const CTX_FAULT_PC: i32 = 16;
pub(super) const CTX_FAULT_KIND: i32 = 24;
pub(super) const CTX_LOOP_LEFT: i32 = 32;

/// A program's compiled callbacks, kept with its `Code`.
pub struct Jit {
    entries: Vec<(usize, EntryFn)>,
    /// Owns the code's memory (freed on drop).
    _module: Mutex<emit::Module>,
    /// How long compiling took.
    pub compile_time: Duration,
}

impl std::fmt::Debug for Jit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jit")
            .field("entries", &self.entries.len())
            .field("compile_time", &self.compile_time)
            .finish()
    }
}

impl Jit {
    /// Compiles `code`'s entries; Err says why not (the interpreter then runs it).
    pub(super) fn compile(code: &Code) -> Result<Jit, String> {
        let t0 = Instant::now();
        let (entries, module) = catch_unwind(AssertUnwindSafe(|| emit::compile(code)))
            .unwrap_or_else(|_| Err("cranelift panicked".into()))?;
        Ok(Jit {
            entries,
            _module: Mutex::new(module),
            compile_time: t0.elapsed(),
        })
    }

    fn entry(&self, pc: usize) -> Option<EntryFn> {
        self.entries.iter().find(|e| e.0 == pc).map(|e| e.1)
    }
}

/// When `run_code` uses compiled code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Never (`TCPLAB_BPF_JIT=0`).
    Off,
    /// Once a program has run enough callbacks in this process to repay compiling it
    /// (`TIER_CALLS_PER_INSN` per instruction; the default): a short run of a large
    /// program stays interpreted, a long one or a sweep's later runs are compiled.
    Tiered,
    /// From the first callback (`TCPLAB_BPF_JIT=1`; tests).
    Eager,
}

const UNSET: u8 = 0;
static MODE: AtomicU8 = AtomicU8::new(UNSET);

fn code_of(m: Mode) -> u8 {
    match m {
        Mode::Off => 1,
        Mode::Tiered => 2,
        Mode::Eager => 3,
    }
}

/// The process's mode: `set_mode`'s, else from `TCPLAB_BPF_JIT` (0: off, 1: eager,
/// unset or anything else: tiered).
pub fn mode() -> Mode {
    match MODE.load(Ordering::Relaxed) {
        1 => Mode::Off,
        2 => Mode::Tiered,
        3 => Mode::Eager,
        _ => {
            let m = match std::env::var("TCPLAB_BPF_JIT").as_deref().map(str::trim) {
                Ok("0") => Mode::Off,
                Ok("1") => Mode::Eager,
                _ => Mode::Tiered,
            };
            MODE.store(code_of(m), Ordering::Relaxed);
            m
        }
    }
}

/// Sets the mode for the whole process (tests, benches).
pub fn set_mode(m: Mode) {
    MODE.store(code_of(m), Ordering::Relaxed);
}

/// Callbacks per instruction of a program before `Mode::Tiered` compiles it. Compiling
/// costs ~31 us per BPF instruction (bbr.bpf.c: 1,747 in ~55 ms) and saves ~0.6 us per
/// BBR callback (benches/RESULTS.md): about 50 callbacks per instruction repay it.
pub const TIER_CALLS_PER_INSN: u64 = 50;

/// One program's compiled code in this process, shared by every load of it (by
/// `key`), and how many callbacks it has run.
#[derive(Debug, Default)]
pub(crate) struct Slot {
    calls: AtomicU64,
    jit: OnceLock<Option<Arc<Jit>>>,
}

/// The programs of this process, by their instructions and entries: a run that loads
/// an object seen before (each run of a sweep loads its own) shares its count and code.
/// The most recent `CACHE_SIZE` are kept.
static CACHE: Mutex<Vec<(Vec<u64>, Arc<Slot>)>> = Mutex::new(Vec::new());
const CACHE_SIZE: usize = 32;

/// What identifies compiled code: every op (unfused) and the entries.
fn key(code: &Code) -> Vec<u64> {
    let mut k = Vec::with_capacity(2 * code.plain.len() + code.entries.len() + 1);
    for op in &code.plain {
        k.push(
            u64::from(op.code)
                | u64::from(op.d) << 8
                | u64::from(op.s) << 16
                | u64::from(op.x) << 24
                | u64::from(op.t as u32) << 32,
        );
        k.push(op.imm);
    }
    k.push(code.entries.len() as u64);
    k.extend(code.entries.iter().map(|&e| e as u64));
    k
}

fn slot(code: &Code) -> &Arc<Slot> {
    code.jit.get_or_init(|| {
        let k = key(code);
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, s)) = cache.iter().find(|(c, _)| *c == k) {
            return s.clone();
        }
        if cache.len() >= CACHE_SIZE {
            cache.remove(0);
        }
        let s = Arc::new(Slot::default());
        cache.push((k, s.clone()));
        s
    })
}

/// `code`'s compiled program if it is compiled or (`eager`, or enough callbacks have
/// run) compiles now; None if not (yet) or refused.
fn compiled(code: &Code, eager: bool) -> Option<&Arc<Jit>> {
    let s = slot(code);
    if let Some(j) = s.jit.get() {
        return j.as_ref();
    }
    let due = TIER_CALLS_PER_INSN.saturating_mul(code.plain.len() as u64);
    if !eager && s.calls.fetch_add(1, Ordering::Relaxed) < due {
        return None;
    }
    s.jit
        .get_or_init(|| Jit::compile(code).ok().map(Arc::new))
        .as_ref()
}

/// Why the JIT refuses `code` (None: it compiles; compiles anew). For tests and
/// diagnostics.
pub fn refusal(code: &Code) -> Option<String> {
    Jit::compile(code).err()
}

/// How long compiling `code` takes (compiles anew); None if refused.
pub fn compile_time(code: &Code) -> Option<Duration> {
    Jit::compile(code).ok().map(|j| j.compile_time)
}

thread_local! {
    /// The region table's storage, reused by every run on this thread.
    static REGIONS: std::cell::Cell<Vec<Region>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Runs `entry` compiled (compiling `code` now if it is not), as `run_code` would
/// interpret it; None if the JIT has no code for it (refused, or not an entry of
/// `code`) or the budget is too large.
pub fn run(
    code: &Code,
    entry: usize,
    r1: u64,
    mem: &mut Memory,
    host: &mut dyn Host,
    budget: u64,
) -> Option<Result<u64, Fault>> {
    run_as(code, entry, r1, mem, host, budget, true)
}

/// As `run`; not `eager`: None until the program is due (`Mode::Tiered`).
pub(super) fn run_as(
    code: &Code,
    entry: usize,
    r1: u64,
    mem: &mut Memory,
    host: &mut dyn Host,
    budget: u64,
    eager: bool,
) -> Option<Result<u64, Fault>> {
    if budget > MAX_BUDGET || mem.stack.len() < FRAME_SIZE * MAX_FRAMES {
        return None;
    }
    let f = compiled(code, eager)?.entry(entry)?;
    let mut cx = Ctx {
        table: std::ptr::null(),
        last: 0,
        fault_pc: 0,
        fault_kind: 0,
        loop_left: 0,
        mem,
        host,
        code,
        budget,
        fault: None,
        regions: REGIONS.take(),
    };
    cx.refresh();
    let mut rec = [0u64; REC_LEN];
    rec[1] = r1;
    rec[REC_LEFT] = budget;
    rec[REC_OUTER] = 1;
    // SAFETY: `f` was compiled by emit.rs for this signature; it reads and writes the
    // record (REC_LEN u64s), the `Ctx` fields at the CTX_* offsets and, within the
    // bounds the table gives, the region buffers `refresh` took from `mem`, which
    // nothing else touches until it returns (the call outs re-take the table).
    let status = unsafe { f(&mut cx, rec.as_mut_ptr()) };
    let r = if status == 0 {
        Ok(rec[0])
    } else {
        Err(cx.take_fault())
    };
    REGIONS.set(std::mem::take(&mut cx.regions));
    Some(r)
}

impl Ctx<'_> {
    /// Rebuilds the region table from `mem` (after anything that may have moved it).
    fn refresh(&mut self) {
        // SAFETY: `mem` is the `&mut Memory` `run` was given, alive for the run; no
        // reference to it is held across this function.
        let mem = unsafe { &mut *self.mem };
        let r = &mut self.regions;
        r.clear();
        let mut push = |ptr: *mut u8, len: usize, writable: bool, mask: *const bool| {
            r.push(Region {
                ptr,
                len: len as u64,
                wlen: if writable { len as u64 } else { 0 },
                mask,
            })
        };
        let none = std::ptr::null();
        // Regions 0..=4 (memory.rs): none, stack, ctx, socket, sample.
        push(std::ptr::null_mut(), 0, false, none);
        // The stack: emit.rs `frame_slot` relies on its 8 frames (`run` checks).
        push(mem.stack.as_mut_ptr(), mem.stack.len(), true, none);
        push(mem.ctx.as_mut_ptr(), mem.ctx.len(), false, none);
        // The socket: written where `sock_writable` allows each byte.
        let mask = mem.sock_writable.as_ptr();
        push(mem.sock.as_mut_ptr(), SOCK_SIZE, false, mask);
        let sample_len = mem.sample_len.min(mem.sample.len());
        push(mem.sample.as_mut_ptr(), sample_len, false, none);
        for g in &mut mem.globals {
            // A map's storage is reached only value by value (memory.rs
            // `map_value_addr`, regions past this table: the call outs).
            let len = if g.value_size.is_some() {
                0
            } else {
                g.data.len()
            };
            push(g.data.as_mut_ptr(), len, g.writable, none);
        }
        push(std::ptr::null_mut(), 0, false, none);
        self.table = self.regions.as_ptr();
        self.last = self.regions.len() as u64 - 1;
    }

    fn take_fault(&mut self) -> Fault {
        let pc = self.fault_pc as usize;
        let budget = self.budget;
        match self.fault_kind {
            KIND_BUDGET => Fault {
                pc,
                why: format!("instruction budget of {budget} exhausted"),
            },
            KIND_PAST_END => Fault {
                pc,
                why: "ran past the end of the program".into(),
            },
            KIND_MID_IMM64 => Fault {
                pc,
                why: "jump into the middle of LD_IMM64".into(),
            },
            KIND_DEPTH => Fault {
                pc,
                why: "call depth over 8 frames".into(),
            },
            _ => self.fault.take().unwrap_or(Fault {
                pc,
                why: "JIT: fault without a cause".into(),
            }),
        }
    }

    fn record(&mut self, pc: u64, why: String) {
        self.fault = Some(Fault {
            pc: pc as usize,
            why,
        });
        self.fault_kind = KIND_CALLED;
    }

    /// Runs a call out: `f`'s error or panic becomes the fault at `pc`; the table is
    /// rebuilt afterwards.
    fn guard(&mut self, pc: u64, f: impl FnOnce(&mut Self) -> Result<u64, String>) -> u64 {
        let mut r = catch_unwind(AssertUnwindSafe(|| f(self)))
            .unwrap_or_else(|_| Err("internal error: a call out of the JIT panicked".into()));
        // SAFETY: as in `refresh`.
        if unsafe { &*self.mem }.stack.len() < FRAME_SIZE * MAX_FRAMES && r.is_ok() {
            // The compiled code addresses the stack's frames unchecked (emit.rs
            // `frame_slot`): a helper that shrank it ends the run.
            r = Err("internal error: the stack was resized during a callback".into());
        }
        self.refresh();
        match r {
            Ok(v) => v,
            Err(why) => {
                self.record(pc, why);
                0
            }
        }
    }
}

// The call outs. Each receives the `Ctx` pointer `run` passed to the compiled code.
// SAFETY (all of them): `cx` is that pointer, valid and not otherwise borrowed while
// the compiled code runs; `mem`, `host` and `code` are the references `run` holds.

/// A load the inline check did not take: `Memory::load` gives the value or the error.
pub(super) unsafe extern "C" fn jit_load(cx: *mut Ctx<'_>, a: u64, size: u64, pc: u64) -> u64 {
    let cx = unsafe { &mut *cx };
    cx.guard(pc, |cx| unsafe { &*cx.mem }.load(a, size as usize))
}

/// A store the inline check did not take (the socket, read-only regions, faults).
pub(super) unsafe extern "C" fn jit_store(
    cx: *mut Ctx<'_>,
    a: u64,
    size: u64,
    v: u64,
    pc: u64,
) -> u64 {
    let cx = unsafe { &mut *cx };
    cx.guard(pc, |cx| {
        unsafe { &mut *cx.mem }
            .store(a, size as usize, v)
            .map(|()| 0)
    })
}

/// A helper or kfunc: `call` is the `Call` id, `sub` the instruction's `off`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe extern "C" fn jit_call(
    cx: *mut Ctx<'_>,
    call: u64,
    sub: u64,
    a1: u64,
    a2: u64,
    a3: u64,
    a4: u64,
    a5: u64,
    pc: u64,
) -> u64 {
    let cx = unsafe { &mut *cx };
    cx.guard(pc, |cx| {
        let c = Call::from_id(call as i32).ok_or_else(|| format!("unknown call {call}"))?;
        let (host, mem) = unsafe { (&mut *cx.host, &mut *cx.mem) };
        host.call(c, sub as i16, [a1, a2, a3, a4, a5], mem)
    })
}

/// BPF_ATOMIC (mod.rs `atomic`) on `size` bytes at `a` with the source register's
/// value `v`, r0 = `r0`; `xs` = the operation | size << 8. Returns the old value.
pub(super) unsafe extern "C" fn jit_atomic(
    cx: *mut Ctx<'_>,
    a: u64,
    v: u64,
    r0: u64,
    xs: u64,
    pc: u64,
) -> u64 {
    let cx = unsafe { &mut *cx };
    cx.guard(pc, |cx| {
        let mem = unsafe { &mut *cx.mem };
        let (x, size) = (xs as u8, (xs >> 8) as usize);
        let mask = if size == 4 { u32::MAX as u64 } else { u64::MAX };
        let old = mem.load(a, size)?;
        let v = v & mask;
        let new = match x & !1 {
            0x00 => old.wrapping_add(v),
            0x40 => old | v,
            0x50 => old & v,
            0xa0 => old ^ v,
            0xe0 => v,
            0xf0 => {
                if old == r0 & mask {
                    mem.store(a, size, v)?;
                }
                return Ok(old);
            }
            op => return Err(format!("unsupported atomic operation {op:#x}")),
        };
        mem.store(a, size, new & mask)?;
        Ok(old)
    })
}

/// bpf_loop from frame `frame` at `pc` with `left` instructions left: the
/// interpreter's `bpf_loop` (its callbacks interpreted); the budget left afterwards
/// goes to `Ctx::loop_left`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe extern "C" fn jit_loop(
    cx: *mut Ctx<'_>,
    r1: u64,
    r2: u64,
    r3: u64,
    r4: u64,
    frame: u64,
    pc: u64,
    left: u64,
) -> u64 {
    let cx = unsafe { &mut *cx };
    let mut reg = [0u64; 16];
    reg[1..5].copy_from_slice(&[r1, r2, r3, r4]);
    let mut left = left;
    let mut fault = None;
    let r0 = cx.guard(pc, |cx| {
        let (code, host, mem) = unsafe { (&*cx.code, &mut *cx.host, &mut *cx.mem) };
        match bpf_loop(
            code,
            &reg,
            frame as usize,
            pc as usize,
            mem,
            host,
            &mut left,
            cx.budget,
        ) {
            Ok(r0) => Ok(r0),
            Err(f) => {
                fault = Some(f);
                Ok(0)
            }
        }
    });
    if let Some(f) = fault {
        cx.fault = Some(f);
        cx.fault_kind = KIND_CALLED;
    }
    cx.loop_left = left;
    r0
}
