//! BPF to cranelift IR (the JIT's shape and rules: jit/mod.rs). One cranelift function
//! per BPF function reachable from the program's entries; each BPF instruction becomes
//! the IR of the interpreter arm it mirrors (vm/mod.rs `exec`, the unfused ops).

use std::collections::HashMap;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I16, I32, I64};
use cranelift_codegen::ir::{
    AbiParam, Block, FuncRef, InstBuilder, MemFlagsData, SigRef, Signature, StackSlot,
    StackSlotData, StackSlotKind, UserFuncName, Value,
};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId, Linkage, Module as _};

use super::*;
use crate::vm::calls::Call;
use crate::vm::code::{Op, END};
use crate::vm::insn::{CALL, EXIT, LD_IMM64, PSEUDO_CALL};
use crate::vm::memory::{FRAME_SIZE, MAX_FRAMES, REGION_STACK};

/// The compiled code's memory, freed when the `Jit` goes.
pub(super) struct Module(Option<JITModule>);

impl Drop for Module {
    fn drop(&mut self) {
        if let Some(m) = self.0.take() {
            // SAFETY: the `Jit` owning this is dropped, so no `EntryFn` of it is running
            // or can be called again (`run` borrows the `Code` holding the `Jit`).
            unsafe { m.free_memory() };
        }
    }
}

/// What an instruction does to the control flow (for finding functions and blocks).
enum Flow {
    /// Falls through to the next slot (`+1`, LD_IMM64 `+2`).
    Next(usize),
    /// Jumps (JA).
    Jump(usize),
    /// Either (conditional jumps): (taken, fall-through).
    Branch(usize, usize),
    /// Leaves the function (exit, a fault).
    Stop,
}

fn is_alu(code: u8) -> bool {
    let class = code & 7;
    let op = code & 0xf0;
    match class {
        4 | 7 => match op {
            0x80 => code & 0x08 == 0,
            0xd0 => class == 4,
            0x00..=0xc0 => true,
            _ => false,
        },
        _ => false,
    }
}

fn is_cond_jump(code: u8) -> bool {
    let class = code & 7;
    (class == 5 || class == 6) && matches!(code & 0xf0, 0x10..=0x70 | 0xa0..=0xd0)
}

/// The flow of the op at `pc`, or why the JIT does not take it.
fn flow(ops: &[Op], pc: usize) -> Result<Flow, String> {
    let i = &ops[pc];
    let next = pc + 1;
    Ok(match i.code {
        END | 0x00 => Flow::Stop,
        EXIT => Flow::Stop,
        0x05 => Flow::Jump(i.t as usize),
        CALL => Flow::Next(next),
        LD_IMM64 => Flow::Next(pc + 2),
        c if is_cond_jump(c) => Flow::Branch(i.t as usize, next),
        0xd4 | 0xdc if !matches!(i.imm, 16 | 32 | 64) => {
            return Err(format!("byte swap width {} at pc {pc}", i.imm))
        }
        c if is_alu(c) => Flow::Next(next),
        0x61 | 0x69 | 0x71 | 0x79 | 0x62 | 0x6a | 0x72 | 0x7a | 0x63 | 0x6b | 0x73 | 0x7b => {
            Flow::Next(next)
        }
        0xc3 | 0xdb
            if matches!(
                i.x,
                0x00 | 0x01 | 0x40 | 0x41 | 0x50 | 0x51 | 0xa0 | 0xa1 | 0xe1 | 0xf1
            ) =>
        {
            Flow::Next(next)
        }
        c => return Err(format!("opcode {c:#04x} at pc {pc}")),
    })
}

/// Whether `i` may write r10 (the verifier refuses all of these; the JIT does not rely
/// on it).
fn writes_r10(i: &Op) -> bool {
    let class = i.code & 7;
    match class {
        0 | 1 | 4 | 7 => i.d == 10,
        3 if i.code & 0xe0 == 0xc0 => i.s == 10 && (i.x & 1 != 0 || i.x == 0xe1),
        _ => false,
    }
}

/// The pcs of the function at `entry` (reachable without crossing a call), in order,
/// the block leaders among them, and the functions it calls.
struct Func {
    pcs: Vec<usize>,
    /// No instruction of the function writes r10 (so it is always the frame pointer).
    r10_fixed: bool,
    leaders: Vec<bool>,
    callees: Vec<usize>,
}

fn scan(ops: &[Op], entry: usize) -> Result<Func, String> {
    let n = ops.len();
    let mut seen = vec![false; n];
    let mut leaders = vec![false; n];
    let mut callees = Vec::new();
    let mut work = vec![entry];
    leaders[entry.min(n - 1)] = true;
    let target = |t: usize| {
        if t < n {
            Ok(t)
        } else {
            Err(format!("target {t} outside the code"))
        }
    };
    while let Some(pc) = work.pop() {
        let pc = target(pc)?;
        if seen[pc] {
            continue;
        }
        seen[pc] = true;
        let i = &ops[pc];
        if i.code == CALL {
            if i.s == PSEUDO_CALL {
                callees.push(target(i.t as usize)?);
            } else if Call::from_id(i.imm as i32).is_none() {
                return Err(format!("unknown call {} at pc {pc}", i.imm as i32));
            }
        }
        match flow(ops, pc)? {
            Flow::Next(t) => {
                if i.code == LD_IMM64 {
                    leaders[target(t)?] = true;
                }
                work.push(t);
            }
            Flow::Jump(t) => {
                leaders[target(t)?] = true;
                work.push(t);
            }
            Flow::Branch(t, f) => {
                leaders[target(t)?] = true;
                leaders[target(f)?] = true;
                work.push(t);
                work.push(f);
            }
            Flow::Stop => {}
        }
    }
    let pcs: Vec<usize> = (0..n).filter(|&p| seen[p]).collect();
    let r10_fixed = !pcs.iter().any(|&p| writes_r10(&ops[p]));
    Ok(Func {
        pcs,
        r10_fixed,
        leaders,
        callees,
    })
}

/// Compiles every function reachable from `code.entries`.
pub(super) fn compile(code: &Code) -> Result<(Vec<(usize, EntryFn)>, Module), String> {
    let ops = &code.plain[..];
    if ops.is_empty() {
        return Err("no code".into());
    }
    // The functions, from the entries through their calls.
    let mut funcs: Vec<(usize, Func)> = Vec::new();
    let mut work: Vec<usize> = code.entries.clone();
    let mut total = 0;
    while let Some(e) = work.pop() {
        if e >= ops.len() || funcs.iter().any(|f| f.0 == e) {
            continue;
        }
        let f = scan(ops, e)?;
        total += f.pcs.len();
        if total > MAX_INSNS {
            return Err(format!("more than {MAX_INSNS} instructions"));
        }
        work.extend(f.callees.iter().copied());
        funcs.push((e, f));
    }
    if funcs.is_empty() {
        return Err("no entry".into());
    }

    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| {
        f.set(k, v).map_err(|e| format!("cranelift flag {k}: {e}"))
    };
    set(&mut flags, "opt_level", "speed")?;
    // The IR is ours and tested; checking it again costs ~10 % of compile time.
    set(&mut flags, "enable_verifier", "false")?;
    set(&mut flags, "use_colocated_libcalls", "false")?;
    set(&mut flags, "is_pic", "false")?;
    let isa = cranelift_native::builder()
        .map_err(|e| format!("cranelift: {e}"))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| format!("cranelift: {e}"))?;
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let cc = module.isa().default_call_conv();
    let sig = |params: usize, ret: Option<cranelift_codegen::ir::Type>| {
        let mut s = Signature::new(cc);
        s.params.extend((0..params).map(|_| AbiParam::new(I64)));
        s.returns.extend(ret.map(AbiParam::new));
        s
    };
    let fsig = sig(2, Some(I32));
    let ids: Vec<FuncId> = funcs
        .iter()
        .map(|(e, _)| {
            module
                .declare_function(&format!("bpf_{e}"), Linkage::Local, &fsig)
                .map_err(|e| format!("cranelift: {e}"))
        })
        .collect::<Result<_, _>>()?;
    let sigs = Sigs {
        load: sig(4, Some(I64)),
        store: sig(5, Some(I64)),
        call: sig(9, Some(I64)),
        atomic: sig(6, Some(I64)),
        lp: sig(8, Some(I64)),
    };

    let target = module.target_config();
    let mut ctx = module.make_context();
    let mut fctx = FunctionBuilderContext::new();
    for (k, (entry, f)) in funcs.iter().enumerate() {
        ctx.func.signature = fsig.clone();
        ctx.func.name = UserFuncName::user(0, ids[k].as_u32());
        {
            let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
            let mut refs = HashMap::new();
            for (j, (e, _)) in funcs.iter().enumerate() {
                refs.insert(*e, module.declare_func_in_func(ids[j], b.func));
            }
            let sigrefs = SigRefs {
                load: b.import_signature(sigs.load.clone()),
                store: b.import_signature(sigs.store.clone()),
                call: b.import_signature(sigs.call.clone()),
                atomic: b.import_signature(sigs.atomic.clone()),
                lp: b.import_signature(sigs.lp.clone()),
            };
            let mut t = Tr::new(&mut b, ops, *entry, f, refs, sigrefs);
            t.body()?;
            b.seal_all_blocks();
            b.finalize(target);
        }
        module
            .define_function(ids[k], &mut ctx)
            .map_err(|e| format!("cranelift: {e:?}"))?;
        module.clear_context(&mut ctx);
    }
    module
        .finalize_definitions()
        .map_err(|e| format!("cranelift: {e}"))?;
    let mut entries = Vec::new();
    for e in &code.entries {
        if let Some(k) = funcs.iter().position(|f| f.0 == *e) {
            let p = module.get_finalized_function(ids[k]);
            // SAFETY: `p` is the finalized code of a function declared with `fsig`
            // (two pointer-sized integers in, an i32 out, the host's C convention),
            // which is `EntryFn`'s.
            let f = unsafe { std::mem::transmute::<*const u8, EntryFn>(p) };
            entries.push((*e, f));
        }
    }
    Ok((entries, Module(Some(module))))
}

struct Sigs {
    load: Signature,
    store: Signature,
    call: Signature,
    atomic: Signature,
    lp: Signature,
}

struct SigRefs {
    load: SigRef,
    store: SigRef,
    call: SigRef,
    atomic: SigRef,
    lp: SigRef,
}

/// The translation of one function.
struct Tr<'a, 'b> {
    b: &'a mut FunctionBuilder<'b>,
    ops: &'a [Op],
    entry: usize,
    f: &'a Func,
    refs: HashMap<usize, FuncRef>,
    sigs: SigRefs,
    blocks: HashMap<usize, Block>,
    regs: [Variable; 11],
    /// `left + seg` (mod.rs: the budget).
    lv: Variable,
    /// Where this frame's r10 points in the stack buffer (`frame_slot`).
    sbase: Variable,
    cx: Value,
    rec: Value,
    frame: Value,
    outer: Value,
    /// The callee record of this function's calls.
    slot: Option<StackSlot>,
}

fn trusted() -> MemFlagsData {
    MemFlagsData::trusted()
}

impl<'a, 'b> Tr<'a, 'b> {
    fn new(
        b: &'a mut FunctionBuilder<'b>,
        ops: &'a [Op],
        entry: usize,
        f: &'a Func,
        refs: HashMap<usize, FuncRef>,
        sigs: SigRefs,
    ) -> Self {
        let regs = std::array::from_fn(|_| b.declare_var(I64));
        let lv = b.declare_var(I64);
        let sbase = b.declare_var(I64);
        let start = b.create_block();
        b.append_block_params_for_function_params(start);
        b.switch_to_block(start);
        b.seal_block(start);
        let cx = b.block_params(start)[0];
        let rec = b.block_params(start)[1];
        let frame = b.ins().load(I64, trusted(), rec, 8 * REC_FRAME as i32);
        let outer = b.ins().load(I64, trusted(), rec, 8 * REC_OUTER as i32);
        Tr {
            b,
            ops,
            entry,
            f,
            refs,
            sigs,
            blocks: HashMap::new(),
            regs,
            lv,
            sbase,
            cx,
            rec,
            frame,
            outer,
            slot: None,
        }
    }

    fn block(&mut self, pc: usize) -> Block {
        if let Some(b) = self.blocks.get(&pc) {
            return *b;
        }
        let b = self.b.create_block();
        self.blocks.insert(pc, b);
        b
    }

    /// Register `r` (`insn` refuses r11 and above).
    fn get(&mut self, r: u8) -> Value {
        self.b.use_var(self.regs[usize::from(r)])
    }

    fn set(&mut self, r: u8, v: Value) {
        self.b.def_var(self.regs[usize::from(r)], v);
    }

    fn iconst(&mut self, v: i64) -> Value {
        self.b.ins().iconst(I64, v)
    }

    /// r10 of this frame: the stack region, FRAME_SIZE * (frame + 1).
    fn frame_pointer(&mut self) -> Value {
        let f1 = self.b.ins().iadd_imm_s(self.frame, 1);
        let off = self.b.ins().imul_imm_s(f1, FRAME_SIZE as i64);
        self.b.ins().bor_imm_s(off, (REGION_STACK << 32) as i64)
    }

    /// If `cond`, the run stops with fault `kind` at `pc`.
    fn fault_if(&mut self, cond: Value, pc: usize, kind: u64) {
        let fb = self.b.create_block();
        let cont = self.b.create_block();
        self.b.set_cold_block(fb);
        self.b.ins().brif(cond, fb, &[], cont, &[]);
        self.b.seal_block(fb);
        self.b.seal_block(cont);
        self.b.switch_to_block(fb);
        self.fault_here(pc, kind);
        self.b.switch_to_block(cont);
    }

    /// Stops the run here with fault `kind` at `pc` (the block ends).
    fn fault_here(&mut self, pc: usize, kind: u64) {
        let p = self.iconst(pc as i64);
        let k = self.iconst(kind as i64);
        self.b.ins().store(trusted(), p, self.cx, CTX_FAULT_PC);
        self.b.ins().store(trusted(), k, self.cx, CTX_FAULT_KIND);
        let one = self.b.ins().iconst(I32, 1);
        self.b.ins().return_(&[one]);
    }

    /// After a call out: if it recorded a fault, return.
    fn check_called(&mut self) {
        let k = self.b.ins().load(I64, trusted(), self.cx, CTX_FAULT_KIND);
        let fb = self.b.create_block();
        let cont = self.b.create_block();
        self.b.set_cold_block(fb);
        self.b.ins().brif(k, fb, &[], cont, &[]);
        self.b.seal_block(fb);
        self.b.seal_block(cont);
        self.b.switch_to_block(fb);
        let one = self.b.ins().iconst(I32, 1);
        self.b.ins().return_(&[one]);
        self.b.switch_to_block(cont);
    }

    /// Charges the run up to the transfer at `pc` (fault if the budget is exhausted).
    fn charge(&mut self, pc: usize) {
        let l = self.b.use_var(self.lv);
        let c = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedLessThan, l, (pc + 1) as i64);
        self.fault_if(c, pc, KIND_BUDGET);
    }

    /// The taken transfer at `pc` to `t`: charge, then the next run starts at `t`.
    fn jump_to(&mut self, pc: usize, t: usize) {
        self.charge(pc);
        let l = self.b.use_var(self.lv);
        let l = self.b.ins().iadd_imm_s(l, t as i64 - pc as i64 - 1);
        self.b.def_var(self.lv, l);
        let blk = self.block(t);
        self.b.ins().jump(blk, &[]);
    }

    fn call_out(&mut self, sig: SigRef, f: usize, args: &[Value]) -> Value {
        let fp = self.iconst(f as i64);
        let mut all = vec![self.cx];
        all.extend_from_slice(args);
        let call = self.b.ins().call_indirect(sig, fp, &all);
        let v = self.b.inst_results(call)[0];
        self.check_called();
        self.reload_sbase();
        v
    }

    fn body(&mut self) -> Result<(), String> {
        // Registers from the record; r10 from the frame; L = left + entry.
        for r in 0..10u8 {
            let v = self
                .b
                .ins()
                .load(I64, trusted(), self.rec, 8 * i32::from(r));
            self.set(r, v);
        }
        let fp = self.frame_pointer();
        self.set(10, fp);
        self.reload_sbase();
        let left = self
            .b
            .ins()
            .load(I64, trusted(), self.rec, 8 * REC_LEFT as i32);
        let l = self.b.ins().iadd_imm_s(left, self.entry as i64);
        self.b.def_var(self.lv, l);
        let first = self.block(self.entry);
        self.b.ins().jump(first, &[]);

        let pcs = self.f.pcs.clone();
        // Each leader's last predecessor (its block is sealed once that is emitted).
        let mut last_pred: HashMap<usize, usize> = HashMap::new();
        for &pc in &pcs {
            let succ = match flow(self.ops, pc)? {
                Flow::Next(t) | Flow::Jump(t) => [Some(t), None],
                Flow::Branch(t, f) => [Some(t), Some(f)],
                Flow::Stop => [None, None],
            };
            for t in succ.into_iter().flatten() {
                let e = last_pred.entry(t).or_insert(pc);
                *e = (*e).max(pc);
            }
        }
        let mut seal_after: HashMap<usize, Vec<usize>> = HashMap::new();
        let mut open = false;
        for &pc in &pcs {
            if self.f.leaders[pc] {
                let blk = self.block(pc);
                if open {
                    self.b.ins().jump(blk, &[]);
                }
                self.b.switch_to_block(blk);
                match last_pred.get(&pc) {
                    Some(&p) if p >= pc => seal_after.entry(p).or_default().push(pc),
                    _ => self.b.seal_block(blk),
                }
            } else if !open {
                return Err(format!("pc {pc} reached only by falling through a stop"));
            }
            open = self.insn(pc)?;
            for l in seal_after.remove(&pc).unwrap_or_default() {
                let blk = self.block(l);
                self.b.seal_block(blk);
            }
        }
        if open {
            return Err("the last instruction falls through".into());
        }
        Ok(())
    }

    /// Translates the op at `pc`; false if it ends the block (no fall-through).
    fn insn(&mut self, pc: usize) -> Result<bool, String> {
        let i = self.ops[pc];
        let (d, s) = (i.d, i.s);
        if d > 10 || s > 10 {
            return Err(format!("register above r10 at pc {pc}"));
        }
        let x = i.code & 0x08 != 0;
        match i.code {
            END => {
                self.fault_here(pc, KIND_PAST_END);
                return Ok(false);
            }
            0x00 => {
                self.fault_here(pc, KIND_MID_IMM64);
                return Ok(false);
            }
            LD_IMM64 => {
                let v = self.iconst(i.imm as i64);
                self.set(d, v);
                let next = pc + 2;
                let blk = self.block(next);
                self.b.ins().jump(blk, &[]);
                return Ok(false);
            }
            0x05 => {
                self.jump_to(pc, i.t as usize);
                return Ok(false);
            }
            EXIT => {
                self.exit(pc);
                return Ok(false);
            }
            CALL => self.call(pc, &i)?,
            c if is_cond_jump(c) => {
                let wide = c & 7 == 5;
                let a = self.get(d);
                let bv = if x {
                    self.get(s)
                } else {
                    self.iconst(i.imm as i64)
                };
                let (a, bv) = if wide {
                    (a, bv)
                } else {
                    (self.b.ins().ireduce(I32, a), self.b.ins().ireduce(I32, bv))
                };
                let cond = match c & 0xf0 {
                    0x40 => {
                        let m = self.b.ins().band(a, bv);
                        self.b.ins().icmp_imm_s(IntCC::NotEqual, m, 0)
                    }
                    op => {
                        let cc = match op {
                            0x10 => IntCC::Equal,
                            0x20 => IntCC::UnsignedGreaterThan,
                            0x30 => IntCC::UnsignedGreaterThanOrEqual,
                            0x50 => IntCC::NotEqual,
                            0x60 => IntCC::SignedGreaterThan,
                            0x70 => IntCC::SignedGreaterThanOrEqual,
                            0xa0 => IntCC::UnsignedLessThan,
                            0xb0 => IntCC::UnsignedLessThanOrEqual,
                            0xc0 => IntCC::SignedLessThan,
                            _ => IntCC::SignedLessThanOrEqual,
                        };
                        self.b.ins().icmp(cc, a, bv)
                    }
                };
                let take = self.b.create_block();
                let next = self.block(pc + 1);
                self.b.ins().brif(cond, take, &[], next, &[]);
                self.b.seal_block(take);
                self.b.switch_to_block(take);
                self.jump_to(pc, i.t as usize);
                return Ok(false);
            }
            c if is_alu(c) => self.alu(&i),
            0x61 | 0x69 | 0x71 | 0x79 => {
                if let Some(p) = self.frame_slot(s, i.t, size_of(i.code)) {
                    let v = self.emit_load(size_of(i.code), p);
                    self.set(d, v);
                    return Ok(true);
                }
                let base = self.get(s);
                let a = self.b.ins().iadd_imm_s(base, i64::from(i.t));
                let v = self.load(a, size_of(i.code), pc);
                self.set(d, v);
            }
            0x62 | 0x6a | 0x72 | 0x7a | 0x63 | 0x6b | 0x73 | 0x7b => {
                let base = self.get(d);
                let a = self.b.ins().iadd_imm_s(base, i64::from(i.t));
                let v = if i.code & 7 == 2 {
                    self.iconst(i.imm as i64)
                } else {
                    self.get(s)
                };
                match self.frame_slot(d, i.t, size_of(i.code)) {
                    Some(p) => self.emit_store(size_of(i.code), v, p),
                    None => self.store(a, size_of(i.code), v, pc),
                }
            }
            0xc3 | 0xdb => {
                let base = self.get(d);
                let a = self.b.ins().iadd_imm_s(base, i64::from(i.t));
                let v = self.get(s);
                let r0 = self.get(0);
                let xs = self.iconst(i64::from(i.x) | (size_of(i.code) as i64) << 8);
                let p = self.iconst(pc as i64);
                let old = self.call_out(
                    self.sigs.atomic,
                    jit_atomic as *const () as usize,
                    &[a, v, r0, xs, p],
                );
                if i.x == 0xf1 {
                    self.set(0, old);
                } else if i.x & 1 != 0 {
                    self.set(s, old);
                }
            }
            c => return Err(format!("opcode {c:#04x} at pc {pc}")),
        }
        Ok(true)
    }

    fn exit(&mut self, pc: usize) {
        let inner = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(self.outer, done, &[], inner, &[]);
        self.b.seal_block(inner);
        // A callee's return: charge, then hand r0-r5 and the budget left back.
        self.b.switch_to_block(inner);
        self.charge(pc);
        let l = self.b.use_var(self.lv);
        let left = self.b.ins().iadd_imm_s(l, -(pc as i64 + 1));
        self.b
            .ins()
            .store(trusted(), left, self.rec, 8 * REC_LEFT as i32);
        for r in 1..6u8 {
            let v = self.get(r);
            self.b.ins().store(trusted(), v, self.rec, 8 * i32::from(r));
        }
        self.b.ins().jump(done, &[]);
        self.b.seal_block(done);
        self.b.switch_to_block(done);
        let r0 = self.get(0);
        self.b.ins().store(trusted(), r0, self.rec, 0);
        let zero = self.b.ins().iconst(I32, 0);
        self.b.ins().return_(&[zero]);
    }

    fn call(&mut self, pc: usize, i: &Op) -> Result<(), String> {
        if i.s == PSEUDO_CALL {
            let t = i.t as usize;
            // The interpreter: depth first, then the charge.
            let c = self.b.ins().icmp_imm_s(
                IntCC::UnsignedGreaterThan,
                self.frame,
                MAX_FRAMES as i64 - 2,
            );
            self.fault_if(c, pc, KIND_DEPTH);
            self.charge(pc);
            let slot = match self.slot {
                Some(s) => s,
                None => {
                    let s = self.b.create_sized_stack_slot(StackSlotData::new(
                        StackSlotKind::ExplicitSlot,
                        (8 * REC_LEN) as u32,
                        3,
                    ));
                    self.slot = Some(s);
                    s
                }
            };
            for r in 0..10u8 {
                let v = self.get(r);
                self.b.ins().stack_store(I64, v, slot, 8 * i32::from(r));
            }
            let l = self.b.use_var(self.lv);
            let left = self.b.ins().iadd_imm_s(l, -(pc as i64 + 1));
            self.b
                .ins()
                .stack_store(I64, left, slot, 8 * REC_LEFT as i32);
            let f1 = self.b.ins().iadd_imm_s(self.frame, 1);
            self.b
                .ins()
                .stack_store(I64, f1, slot, 8 * REC_FRAME as i32);
            let zero = self.iconst(0);
            self.b
                .ins()
                .stack_store(I64, zero, slot, 8 * REC_OUTER as i32);
            let p = self.b.ins().stack_addr(I64, slot, 0);
            let callee = *self
                .refs
                .get(&t)
                .ok_or_else(|| format!("callee {t} not compiled"))?;
            let call = self.b.ins().call(callee, &[self.cx, p]);
            let status = self.b.inst_results(call)[0];
            let fb = self.b.create_block();
            let cont = self.b.create_block();
            self.b.set_cold_block(fb);
            self.b.ins().brif(status, fb, &[], cont, &[]);
            self.b.seal_block(fb);
            self.b.seal_block(cont);
            self.b.switch_to_block(fb);
            self.b.ins().return_(&[status]);
            self.b.switch_to_block(cont);
            for r in 0..6u8 {
                let v = self.b.ins().stack_load(I64, I64, slot, 8 * i32::from(r));
                self.set(r, v);
            }
            let left = self.b.ins().stack_load(I64, I64, slot, 8 * REC_LEFT as i32);
            let l = self.b.ins().iadd_imm_s(left, pc as i64 + 1);
            self.b.def_var(self.lv, l);
            let fp = self.frame_pointer();
            self.set(10, fp);
            self.reload_sbase();
            return Ok(());
        }
        let id = i.imm as i32;
        let call = Call::from_id(id).ok_or_else(|| format!("unknown call {id}"))?;
        if call == Call::TailCall {
            return Err("bpf_tail_call: the interpreter runs programs that tail-call".into());
        }
        if call == Call::Loop {
            self.charge(pc);
            let l = self.b.use_var(self.lv);
            let left = self.b.ins().iadd_imm_s(l, -(pc as i64 + 1));
            let args = [self.get(1), self.get(2), self.get(3), self.get(4)];
            let p = self.iconst(pc as i64);
            let r0 = self.call_out(
                self.sigs.lp,
                jit_loop as *const () as usize,
                &[args[0], args[1], args[2], args[3], self.frame, p, left],
            );
            self.set(0, r0);
            let left = self.b.ins().load(I64, trusted(), self.cx, CTX_LOOP_LEFT);
            let l = self.b.ins().iadd_imm_s(left, pc as i64 + 1);
            self.b.def_var(self.lv, l);
            return Ok(());
        }
        let c = self.iconst(i64::from(id));
        let sub = self.iconst(i64::from(i.t as i16));
        let p = self.iconst(pc as i64);
        let mut args = vec![c, sub];
        for r in 1..6u8 {
            args.push(self.get(r));
        }
        args.push(p);
        let r0 = self.call_out(self.sigs.call, jit_call as *const () as usize, &args);
        self.set(0, r0);
        Ok(())
    }

    /// Address `a` = region << 32 | offset: the region's entry if the region exists
    /// and `size` bytes at the offset are within `len_at` (the readable or writable
    /// length), else None (branching to `slow`).
    /// The table entry of address `a`'s region, the offset, and the offset + `size`.
    fn entry_of(&mut self, a: Value, size: usize) -> (Value, Value, Value) {
        // Regions past the table's last (an empty one) read as that one: one check.
        let r = self.b.ins().ushr_imm_s(a, 32);
        let off = self.b.ins().band_imm_s(a, 0xffff_ffff);
        let last = self.b.ins().load(I64, trusted(), self.cx, CTX_LAST);
        let r = self.b.ins().umin(r, last);
        let table = self.b.ins().load(I64, trusted(), self.cx, CTX_TABLE);
        let ro = self.b.ins().ishl_imm_s(r, REGION_SHIFT);
        let e = self.b.ins().iadd(table, ro);
        let end = self.b.ins().iadd_imm_s(off, size as i64);
        (e, off, end)
    }

    fn inline_ptr(&mut self, a: Value, size: usize, len_at: i32, slow: Block) -> Value {
        let (e, off, end) = self.entry_of(a, size);
        let len = self.b.ins().load(I64, trusted(), e, len_at);
        let ok = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, len);
        let fast = self.b.create_block();
        self.b.ins().brif(ok, fast, &[], slow, &[]);
        self.b.seal_block(fast);
        self.b.seal_block(slow);
        self.b.switch_to_block(fast);
        let base = self.b.ins().load(I64, trusted(), e, REGION_PTR);
        self.b.ins().iadd(base, off)
    }

    fn load(&mut self, a: Value, size: usize, pc: usize) -> Value {
        let slow = self.b.create_block();
        let done = self.b.create_block();
        self.b.set_cold_block(slow);
        let tmp = self.b.declare_var(I64);
        let p = self.inline_ptr(a, size, REGION_LEN, slow);
        let v = self.emit_load(size, p);
        self.b.def_var(tmp, v);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(slow);
        let sz = self.iconst(size as i64);
        let pcv = self.iconst(pc as i64);
        let v = self.call_out(
            self.sigs.load,
            jit_load as *const () as usize,
            &[a, sz, pcv],
        );
        self.b.def_var(tmp, v);
        self.b.ins().jump(done, &[]);
        self.b.seal_block(done);
        self.b.switch_to_block(done);
        self.b.use_var(tmp)
    }

    fn store(&mut self, a: Value, size: usize, v: Value, pc: usize) {
        let slow = self.b.create_block();
        let done = self.b.create_block();
        let masked = self.b.create_block();
        self.b.set_cold_block(slow);
        // Inline where the region is writable to its end (stack, writable globals)...
        let (e, off, end) = self.entry_of(a, size);
        let wlen = self.b.ins().load(I64, trusted(), e, REGION_WLEN);
        let ok = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, wlen);
        let fast = self.b.create_block();
        self.b.ins().brif(ok, fast, &[], masked, &[]);
        self.b.seal_block(fast);
        self.b.seal_block(masked);
        self.b.switch_to_block(fast);
        let base = self.b.ins().load(I64, trusted(), e, REGION_PTR);
        let p = self.b.ins().iadd(base, off);
        self.emit_store(size, v, p);
        self.b.ins().jump(done, &[]);
        // ... or where a mask allows each byte (the socket's writable fields: memory.rs
        // `store_n`, each byte of the access writable).
        self.b.switch_to_block(masked);
        let mask = self.b.ins().load(I64, trusted(), e, REGION_MASK);
        let len = self.b.ins().load(I64, trusted(), e, REGION_LEN);
        let inb = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, len);
        let has = self.b.ins().icmp_imm_s(IntCC::NotEqual, mask, 0);
        let both = self.b.ins().band(inb, has);
        let chk = self.b.create_block();
        self.b.ins().brif(both, chk, &[], slow, &[]);
        self.b.seal_block(chk);
        self.b.switch_to_block(chk);
        let mp = self.b.ins().iadd(mask, off);
        let fl = MemFlagsData::new().with_notrap();
        let m = match size {
            1 => self.b.ins().uload8(I64, fl, mp, 0),
            2 => self.b.ins().uload16(I64, fl, mp, 0),
            4 => self.b.ins().uload32(fl, mp, 0),
            _ => self.b.ins().load(I64, fl, mp, 0),
        };
        // Every mask byte 1 (a bool true).
        let ones = (0x0101_0101_0101_0101u64 >> (64 - 8 * size)) as i64;
        let all = self.b.ins().icmp_imm_s(IntCC::Equal, m, ones);
        let put = self.b.create_block();
        self.b.ins().brif(all, put, &[], slow, &[]);
        self.b.seal_block(put);
        self.b.seal_block(slow);
        self.b.switch_to_block(put);
        let base = self.b.ins().load(I64, trusted(), e, REGION_PTR);
        let p = self.b.ins().iadd(base, off);
        self.emit_store(size, v, p);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(slow);
        let sz = self.iconst(size as i64);
        let pcv = self.iconst(pc as i64);
        self.call_out(
            self.sigs.store,
            jit_store as *const () as usize,
            &[a, sz, v, pcv],
        );
        self.b.ins().jump(done, &[]);
        self.b.seal_block(done);
        self.b.switch_to_block(done);
    }

    fn emit_store(&mut self, size: usize, v: Value, p: Value) {
        let fl = MemFlagsData::new().with_notrap();
        match size {
            1 => self.b.ins().istore8(fl, v, p, 0),
            2 => self.b.ins().istore16(fl, v, p, 0),
            4 => self.b.ins().istore32(fl, v, p, 0),
            _ => self.b.ins().store(fl, v, p, 0),
        };
    }

    fn emit_load(&mut self, size: usize, p: Value) -> Value {
        let fl = MemFlagsData::new().with_notrap();
        match size {
            1 => self.b.ins().uload8(I64, fl, p, 0),
            2 => self.b.ins().uload16(I64, fl, p, 0),
            4 => self.b.ins().uload32(fl, p, 0),
            _ => self.b.ins().load(I64, fl, p, 0),
        }
    }

    /// `[r10 + off]` of `size` bytes when it is within this frame's 512 bytes, which
    /// are always inside the stack (frame <= 7, the stack 8 frames): the address
    /// without a check. None if r10 may not be the frame pointer here.
    fn frame_slot(&mut self, base: u8, off: i32, size: usize) -> Option<Value> {
        if base != 10 || !self.f.r10_fixed || off < -(FRAME_SIZE as i32) || off + size as i32 > 0 {
            return None;
        }
        let sb = self.b.use_var(self.sbase);
        Some(self.b.ins().iadd_imm_s(sb, i64::from(off)))
    }

    /// The stack's address of this frame's r10 (`sbase`), after anything that may
    /// have rebuilt the region table.
    fn reload_sbase(&mut self) {
        let table = self.b.ins().load(I64, trusted(), self.cx, CTX_TABLE);
        let stack = self
            .b
            .ins()
            .load(I64, trusted(), table, REGION_PTR + (1 << REGION_SHIFT));
        let f1 = self.b.ins().iadd_imm_s(self.frame, 1);
        let off = self.b.ins().imul_imm_s(f1, FRAME_SIZE as i64);
        let sb = self.b.ins().iadd(stack, off);
        self.b.def_var(self.sbase, sb);
    }

    fn alu(&mut self, i: &Op) {
        let wide = i.code & 7 == 7;
        let x = i.code & 0x08 != 0;
        let op = i.code & 0xf0;
        let d = i.d;
        if op == 0xd0 {
            // BPF_END (ALU class only): to little endian truncates, to big endian swaps.
            let v = self.get(d);
            let r = match (i.imm, i.code == 0xdc) {
                (16, false) => self.b.ins().band_imm_s(v, 0xffff),
                (32, false) => self.b.ins().band_imm_s(v, 0xffff_ffff),
                (16, true) => {
                    let h = self.b.ins().ireduce(I16, v);
                    let h = self.b.ins().bswap(h);
                    self.b.ins().uextend(I64, h)
                }
                (32, true) => {
                    let h = self.b.ins().ireduce(I32, v);
                    let h = self.b.ins().bswap(h);
                    self.b.ins().uextend(I64, h)
                }
                (_, true) => self.b.ins().bswap(v),
                _ => v,
            };
            self.set(d, r);
            return;
        }
        let ty = if wide { I64 } else { I32 };
        let a0 = self.get(d);
        let a = if wide {
            a0
        } else {
            self.b.ins().ireduce(I32, a0)
        };
        let bv = if x {
            let s = self.get(i.s);
            if wide {
                s
            } else {
                self.b.ins().ireduce(I32, s)
            }
        } else if wide {
            self.b.ins().iconst(I64, i.imm as i64)
        } else {
            self.b.ins().iconst(I32, i64::from(i.imm as u32))
        };
        let r = match op {
            0x00 => self.b.ins().iadd(a, bv),
            0x10 => self.b.ins().isub(a, bv),
            0x20 => self.b.ins().imul(a, bv),
            0x30 | 0x90 => {
                // Division by zero gives 0, modulo by zero the dividend.
                let z = self.b.ins().icmp_imm_s(IntCC::Equal, bv, 0);
                let one = self.b.ins().iconst(ty, 1);
                let safe = self.b.ins().select(z, one, bv);
                if op == 0x30 {
                    let q = self.b.ins().udiv(a, safe);
                    let zero = self.b.ins().iconst(ty, 0);
                    self.b.ins().select(z, zero, q)
                } else {
                    let m = self.b.ins().urem(a, safe);
                    self.b.ins().select(z, a, m)
                }
            }
            0x40 => self.b.ins().bor(a, bv),
            0x50 => self.b.ins().band(a, bv),
            0x60 => self.b.ins().ishl(a, bv),
            0x70 => self.b.ins().ushr(a, bv),
            0x80 => self.b.ins().ineg(a),
            0xa0 => self.b.ins().bxor(a, bv),
            0xb0 => bv,
            _ => self.b.ins().sshr(a, bv),
        };
        let r = if wide {
            r
        } else {
            self.b.ins().uextend(I64, r)
        };
        self.set(d, r);
    }
}

/// Width in bytes of a memory access from its opcode.
fn size_of(code: u8) -> usize {
    match (code >> 3) & 3 {
        0 => 4,
        1 => 2,
        2 => 1,
        _ => 8,
    }
}
