//! ELF loading: turns a clang-compiled BPF object into one relocated instruction array,
//! the callbacks of its `tcp_congestion_ops`, and its global data. The steps are
//! libbpf's (tools/lib/bpf/libbpf.c: bpf_object__elf_collect, bpf_object__collect_relos,
//! bpf_object__relocate, bpf_object__collect_st_ops_relos), reduced to what a
//! congestion control needs:
//!
//! - every executable section is appended to one array (so bpf-to-bpf calls between
//!   sections become plain pc-relative calls);
//! - `call` relocations to an undefined symbol are kfuncs, resolved by name (vm/calls.rs);
//!   helper calls are resolved by number; anything unknown is refused here, naming it;
//! - `ld_imm64` relocations to .rodata/.data/.bss become pointers into that global's
//!   region (vm/memory.rs);
//! - CO-RE relocations from .BTF.ext are applied against the simulator's layout (core.rs);
//! - the `.struct_ops` / `.struct_ops.link` section's relocations say which program
//!   fills which member of `struct tcp_congestion_ops` (by the member's offset in the
//!   object's own BTF); its `name` and `flags` members are read from the section data.
//!
//! - `ld_imm64` relocations to a `.maps` variable define that map (host/maps.rs) and load
//!   its handle; to an undefined `__kconfig` extern, its slot in `.kconfig`.
//!
//! - an object may hold several `tcp_congestion_ops` variables (in `.struct_ops` and/or
//!   `.struct_ops.link`): one is chosen by variable or `.name` (`ops_name`), and an
//!   object with several and no name is refused, listing them.

use std::collections::HashMap;

use object::{
    Object, ObjectSection, ObjectSymbol, RelocationFlags, RelocationTarget, SectionKind, SymbolKind,
};

use crate::error::BpfError;
use crate::host::maps::{self, MapDef};
use crate::host::native;
use crate::object::btf::{Btf, BtfType};
use crate::object::btf_ext;
use crate::object::core;
use crate::object::helper_names;
use crate::vm::calls::{self, Call};
use crate::vm::insn::{
    decode_all, Insn, CALL, LD_IMM64, PSEUDO_CALL, PSEUDO_FUNC, PSEUDO_KFUNC_CALL,
};
use crate::vm::memory::{addr, Global, REGION_GLOBAL0};
use crate::vm::{track, verify};

/// The members of `struct tcp_congestion_ops` that hold a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Callback {
    Init = 0,
    Release,
    Ssthresh,
    CongAvoid,
    SetState,
    CwndEvent,
    InAckEvent,
    PktsAcked,
    CongControl,
    UndoCwnd,
    MinTsoSegs,
    SndbufExpand,
}

pub const CALLBACKS: [(&str, Callback); 12] = [
    ("init", Callback::Init),
    ("release", Callback::Release),
    ("ssthresh", Callback::Ssthresh),
    ("cong_avoid", Callback::CongAvoid),
    ("set_state", Callback::SetState),
    ("cwnd_event", Callback::CwndEvent),
    ("in_ack_event", Callback::InAckEvent),
    ("pkts_acked", Callback::PktsAcked),
    ("cong_control", Callback::CongControl),
    ("undo_cwnd", Callback::UndoCwnd),
    ("min_tso_segs", Callback::MinTsoSegs),
    ("sndbuf_expand", Callback::SndbufExpand),
];

/// One global variable of .rodata: where it is and what BTF says it is.
#[derive(Clone, Debug)]
pub struct GlobalVar {
    pub name: String,
    pub section: usize,
    pub offset: usize,
    pub size: usize,
    /// Resolved BTF type: `Int`, `Enum`, or something that is not a parameter.
    pub ty: BtfType,
}

/// One `extern ... __kconfig` variable: where its value goes in the `.kconfig` region.
#[derive(Clone, Debug)]
pub struct KconfigExtern {
    pub name: String,
    pub region: usize,
    pub offset: usize,
    pub size: usize,
    /// Declared `__weak`: an unknown option reads as 0 instead of being refused.
    pub weak: bool,
}

/// A loaded, relocated object, shared by every flow that runs it.
#[derive(Debug, Default)]
pub struct Program {
    pub insns: Vec<Insn>,
    /// Entry pc and program (symbol) name per callback.
    pub callbacks: [Option<(usize, String)>; 12],
    /// `tcp_congestion_ops.name`.
    pub name: String,
    /// `tcp_congestion_ops.flags` (TCP_CONG_NEEDS_ECN = 2).
    pub flags: u32,
    /// Initial contents of the global sections, in region order.
    pub globals: Vec<Global>,
    pub rodata_vars: Vec<GlobalVar>,
    /// The `__kconfig` externs the code reads.
    pub kconfig: Vec<KconfigExtern>,
    /// The maps of `.maps` the code uses, in the order first referenced.
    pub maps: Vec<MapDef>,
    /// `insns` decoded for the interpreter, on first use (vm/code.rs).
    pub code: std::sync::OnceLock<crate::vm::Code>,
}

impl Program {
    /// The callbacks' entry pcs (what the JIT compiles).
    pub fn entries(&self) -> Vec<usize> {
        self.callbacks.iter().flatten().map(|(pc, _)| *pc).collect()
    }

    /// `insns` decoded (and, on first run, compiled) for the VM, built on first use.
    pub fn code(&self) -> &crate::vm::Code {
        self.code.get_or_init(|| {
            let slots = self.maps.iter().map(|m| {
                m.prog_slots
                    .iter()
                    .map(|s| s.as_ref().map(|(pc, _)| *pc))
                    .collect()
            });
            crate::vm::Code::with_entries(&self.insns, &self.entries())
                .with_tail_slots(slots.collect())
        })
    }
}

/// The largest .rodata/.data/.bss section we load (1 MiB).
const MAX_GLOBAL_SECTION: u64 = 1 << 20;

fn elf(m: impl Into<String>) -> BpfError {
    BpfError::Elf(m.into())
}

fn r_type(flags: RelocationFlags) -> u32 {
    match flags {
        RelocationFlags::Elf { r_type } => r_type,
        _ => 0,
    }
}

/// Loads `bytes`; `ops_name` chooses one of several `tcp_congestion_ops` (by variable
/// or `.name`), and must when there are several.
pub fn load(bytes: &[u8], ops_name: Option<&str>) -> Result<Program, BpfError> {
    let file = object::File::parse(bytes).map_err(|e| elf(e.to_string()))?;
    if file.architecture() != object::Architecture::Bpf {
        return Err(elf(format!(
            "architecture {:?}, not BPF",
            file.architecture()
        )));
    }
    let section_data = |name: &str| -> Result<Option<Vec<u8>>, BpfError> {
        match file.section_by_name(name) {
            Some(s) => Ok(Some(
                s.data().map_err(|e| elf(format!("{name}: {e}")))?.to_vec(),
            )),
            None => Ok(None),
        }
    };
    let btf_bytes = section_data(".BTF")?
        .ok_or_else(|| BpfError::Btf("no .BTF section (compile with -g)".into()))?;
    let btf = Btf::parse(&btf_bytes)?;

    // Code: every executable section, appended.
    let mut insns: Vec<Insn> = Vec::new();
    let mut code_base: HashMap<object::SectionIndex, usize> = HashMap::new();
    let mut base_by_name: HashMap<String, usize> = HashMap::new();
    for s in file.sections() {
        if s.kind() != SectionKind::Text || s.size() == 0 {
            continue;
        }
        let name = s.name().map_err(|e| elf(e.to_string()))?.to_string();
        let data = s.data().map_err(|e| elf(format!("{name}: {e}")))?;
        let code =
            decode_all(data).ok_or_else(|| elf(format!("{name}: size not a multiple of 8")))?;
        code_base.insert(s.index(), insns.len());
        base_by_name.insert(name, insns.len());
        insns.extend(code);
    }

    // Globals: .rodata*, .data*, .bss* each become a region.
    let mut globals: Vec<Global> = Vec::new();
    let mut global_region: HashMap<object::SectionIndex, usize> = HashMap::new();
    for s in file.sections() {
        let name = s.name().unwrap_or("").to_string();
        let is_global = [".rodata", ".data", ".bss"]
            .iter()
            .any(|p| name.starts_with(p));
        if !is_global {
            continue;
        }
        // A congestion control's globals are bytes to kilobytes; a (corrupt) header
        // asking for more must not make us allocate it.
        if s.size() > MAX_GLOBAL_SECTION {
            return Err(elf(format!(
                "{name}: {} bytes, more than {MAX_GLOBAL_SECTION}",
                s.size()
            )));
        }
        let data = if s.kind() == SectionKind::UninitializedData {
            vec![0; s.size() as usize]
        } else {
            s.data().map_err(|e| elf(format!("{name}: {e}")))?.to_vec()
        };
        global_region.insert(s.index(), globals.len());
        let writable = !name.starts_with(".rodata");
        globals.push(Global::section(&name, data, writable));
    }

    // Program symbols, for names in errors and struct_ops.
    let symbols: Vec<object::Symbol> = file.symbols().collect();
    let sym_by_index = |idx: object::SymbolIndex| symbols.iter().find(|s| s.index() == idx);

    // Relocations of code sections.
    let mut kconfig: Vec<KconfigExtern> = Vec::new();
    let mut maps: Vec<MapDef> = Vec::new();
    let maps_section = file.section_by_name(".maps").map(|s| s.index());
    let mut resolved_calls = vec![false; insns.len()];
    for s in file.sections() {
        let Some(&base) = code_base.get(&s.index()) else {
            continue;
        };
        for (off, rel) in s.relocations() {
            let pc = base + (off / 8) as usize;
            let RelocationTarget::Symbol(si) = rel.target() else {
                return Err(elf(format!("relocation at {pc} without a symbol")));
            };
            let sym = sym_by_index(si).ok_or_else(|| elf("relocation to a missing symbol"))?;
            let sym_name = sym.name().unwrap_or("?").to_string();
            let insn = *insns
                .get(pc)
                .ok_or_else(|| elf(format!("relocation at {off} out of range")))?;
            if insn.code == CALL {
                if sym.is_undefined() {
                    insns[pc].src = PSEUDO_KFUNC_CALL;
                    if let Some(call) = Call::kfunc(&sym_name) {
                        insns[pc].imm = call as i32;
                    } else if let Some(k) = native::index(&sym_name) {
                        insns[pc].imm = Call::Native as i32;
                        insns[pc].off = k as i16;
                    } else {
                        return Err(BpfError::UnknownCall { name: sym_name });
                    }
                } else {
                    let tsec = sym
                        .section_index()
                        .ok_or_else(|| elf("call to no section"))?;
                    let tbase = *code_base
                        .get(&tsec)
                        .ok_or_else(|| elf(format!("call to {sym_name}, not code")))?;
                    let mut target = tbase as i64 + (sym.address() / 8) as i64;
                    if sym.kind() == SymbolKind::Section {
                        target += insn.imm as i64 + 1;
                    }
                    insns[pc].src = PSEUDO_CALL;
                    insns[pc].imm = i32::try_from(target - (pc as i64 + 1))
                        .map_err(|_| elf("call distance"))?;
                }
                resolved_calls[pc] = true;
            } else if insn.code == LD_IMM64 && sym.is_undefined() {
                let at = kconfig_slot(&btf, &sym_name, sym.is_weak(), &mut kconfig, &mut globals)?;
                let a = addr(REGION_GLOBAL0 + at.0 as u64, at.1);
                insns[pc].imm = a as u32 as i32;
                if let Some(next) = insns.get_mut(pc + 1) {
                    next.imm = (a >> 32) as u32 as i32;
                }
            } else if insn.code == LD_IMM64 && sym.section_index() == maps_section {
                let k = match maps.iter().position(|m| m.name == sym_name) {
                    Some(k) => k,
                    None => {
                        maps.push(maps::define(&btf, &sym_name, &mut globals)?);
                        maps.len() - 1
                    }
                };
                let a = maps::map_handle(k);
                insns[pc].imm = a as u32 as i32;
                if let Some(next) = insns.get_mut(pc + 1) {
                    next.imm = (a >> 32) as u32 as i32;
                }
            } else if let Some(&tbase) = sym
                .section_index()
                .and_then(|t| code_base.get(&t))
                .filter(|_| insn.code == LD_IMM64)
            {
                // A function's address (bpf_loop's callback): BPF_PSEUDO_FUNC with the
                // pc-relative target, as libbpf rewrites it (RELO_SUBPROG_ADDR).
                let target = tbase as i64 + (sym.address() as i64 + insn.imm as i64) / 8;
                insns[pc].src = PSEUDO_FUNC;
                insns[pc].imm = i32::try_from(target - (pc as i64 + 1))
                    .map_err(|_| elf("function address distance"))?;
            } else if insn.code == LD_IMM64 {
                let tsec = sym.section_index().ok_or_else(|| BpfError::UnknownCall {
                    name: sym_name.clone(),
                })?;
                let region = *global_region.get(&tsec).ok_or_else(|| {
                    elf(format!("ld_imm64 at {pc} refers to {sym_name}, which is not global data (maps are not supported)"))
                })?;
                let offset = sym.address() as i64 + insn.imm as i64;
                let a = addr(REGION_GLOBAL0 + region as u64, offset.max(0) as usize);
                insns[pc].imm = a as u32 as i32;
                if let Some(next) = insns.get_mut(pc + 1) {
                    next.imm = (a >> 32) as u32 as i32;
                }
            } else {
                return Err(elf(format!(
                    "relocation type {} at pc {pc} ({sym_name}) on opcode {:#x}",
                    r_type(rel.flags()),
                    insn.code
                )));
            }
        }
    }
    // CO-RE (and the source lines, for load-time errors).
    let ext = section_data(".BTF.ext")?;
    let lines = match &ext {
        Some(ext) => btf_ext::parse_line_info(ext, &btf)?,
        None => Vec::new(),
    };
    let locate = |e: BpfError, pc: usize| -> BpfError {
        let BpfError::Verifier { why, .. } = e else {
            return e;
        };
        let (section, base) = base_by_name
            .iter()
            .filter(|(_, &b)| b <= pc)
            .max_by_key(|(_, &b)| b)
            .map_or(("", 0), |(n, &b)| (n.as_str(), b));
        BpfError::Verifier {
            prog: program_at(&symbols, &code_base, pc),
            line: btf_ext::line_at(&lines, section, ((pc - base) * 8) as u32),
            why,
        }
    };
    if let Some(ext) = &ext {
        for r in btf_ext::parse_core_relos(ext, &btf)? {
            let base = *base_by_name.get(&r.section).ok_or_else(|| {
                BpfError::Relocation(format!("section {} is not code", r.section))
            })?;
            core::apply(&btf, &r, &mut insns, base)
                .map_err(|e| locate(e, base + (r.insn_off / 8) as usize))?;
        }
    }

    // The kernel's order: libbpf relocates (above), the verifier refuses a program
    // without a GPL-compatible license before anything else (check_struct_ops_btf_id),
    // then a member it cannot attach to, then helpers and the rest; the struct's
    // required members are checked only when it is registered
    // (tcp_validate_congestion_control), so last here.
    check_license(&section_data("license")?)?;
    let (callbacks, name, flags) = struct_ops(&file, &btf, &symbols, &code_base, ops_name)?;

    prog_array_slots(
        &file, &btf, &symbols, &code_base, &insns, &callbacks, &mut maps,
    )?;

    // Helper calls: by number, from the set the kernel allows a tcp_congestion_ops
    // program (vm/calls.rs helper_allowed; setsockopt/getsockopt not in release).
    let functions = functions(&symbols, &code_base);
    let release = callbacks[Callback::Release as usize]
        .as_ref()
        .and_then(|(entry, _)| functions.iter().find(|f| f.0 == *entry).copied());
    for pc in 0..insns.len() {
        let i = insns[pc];
        if i.code != CALL || i.src != 0 || resolved_calls[pc] {
            continue;
        }
        let in_release = release.is_some_and(|(s, e)| s <= pc && pc < e);
        if !calls::helper_allowed(i.imm, in_release) {
            let where_ = if in_release { " in release" } else { "" };
            return Err(locate(
                BpfError::Verifier {
                    prog: String::new(),
                    line: None,
                    why: format!(
                        "{} is not available to struct_ops tcp_congestion_ops programs{where_} \
                         (net/ipv4/bpf_tcp_ca.c bpf_tcp_ca_get_func_proto)",
                        helper_names::describe(i.imm)
                    ),
                },
                pc,
            ));
        }
        let call = Call::helper(i.imm).ok_or_else(|| BpfError::UnknownCall {
            name: helper_names::describe(i.imm),
        })?;
        insns[pc].src = PSEUDO_KFUNC_CALL;
        insns[pc].imm = call as i32;
    }

    if let Err((pc, why)) = verify::check(&insns) {
        let prog = program_at(&symbols, &code_base, pc);
        return Err(BpfError::BadInstruction { prog, pc, why });
    }
    verify::check_kernel_rules(&insns, &functions).map_err(|(pc, why)| {
        locate(
            BpfError::Verifier {
                prog: String::new(),
                line: None,
                why,
            },
            pc,
        )
    })?;
    let value_sizes: Vec<usize> = maps.iter().map(|m| m.value_size).collect();
    let map_types: Vec<u32> = maps.iter().map(|m| m.kind as u32).collect();
    let writable_global = |a: u64| {
        let r = a >> 32;
        r >= REGION_GLOBAL0
            && globals
                .get((r - REGION_GLOBAL0) as usize)
                .is_some_and(|g| g.writable && g.value_size.is_none())
    };
    let entries: Vec<usize> = callbacks.iter().flatten().map(|(pc, _)| *pc).collect();
    let env = track::Env {
        value_sizes: &value_sizes,
        map_types: &map_types,
        writable_global: &writable_global,
        entries: &entries,
    };
    track::check(&insns, &functions, &env).map_err(|(pc, why)| {
        locate(
            BpfError::Verifier {
                prog: String::new(),
                line: None,
                why,
            },
            pc,
        )
    })?;
    check_required(&callbacks)?;

    let rodata_vars = rodata_vars(&btf, &symbols, &global_region, &globals);
    Ok(Program {
        insns,
        callbacks,
        name,
        flags,
        globals,
        rodata_vars,
        kconfig,
        maps,
        code: Default::default(),
    })
}

/// Fills each PROG_ARRAY's slots from its `.values = { [i] = &prog }` (the `.maps`
/// section's relocations, as libbpf's bpf_object__collect_map_relos), under the
/// kernel's rule for struct_ops programs (bpf_prog_map_compatible): the first program
/// that uses the map owns it, and only a program with the owner's attach_func_proto,
/// the same struct_ops member, may use it or sit in a slot. On 6.18 a slot holding
/// another member's program is refused when libbpf fills it ("map 'jmp': failed to
/// initialize slot [0] to prog 'undo_cwnd' fd=8: -22"), so only a program's tail call
/// into itself can ever be taken.
fn prog_array_slots(
    file: &object::File,
    btf: &Btf,
    symbols: &[object::Symbol],
    code_base: &HashMap<object::SectionIndex, usize>,
    insns: &[Insn],
    callbacks: &[Option<(usize, String)>; 12],
    maps: &mut [MapDef],
) -> Result<(), BpfError> {
    if !maps.iter().any(|m| m.kind == maps::MapKind::ProgArray) {
        return Ok(());
    }
    // The callback whose own code is at `pc` (a subprogram's use is not judged).
    let entry_of = |pc: usize| {
        let f = program_at(symbols, code_base, pc);
        callbacks.iter().flatten().find(|(_, n)| *n == f).cloned()
    };
    let refuse = |map: &str, why: String| BpfError::Map {
        name: map.to_string(),
        why,
    };
    for (k, map) in maps.iter_mut().enumerate() {
        if map.kind != maps::MapKind::ProgArray {
            continue;
        }
        let name = map.name.clone();
        // The owner: the first callback whose code loads the map.
        let handle = maps::map_handle(k);
        let users: Vec<(usize, String)> = (0..insns.len())
            .filter(|&pc| {
                let i = insns[pc];
                i.code == LD_IMM64
                    && i.imm as u32 == handle as u32
                    && insns
                        .get(pc + 1)
                        .is_some_and(|n| n.imm as u32 == (handle >> 32) as u32)
            })
            .filter_map(entry_of)
            .collect();
        let Some(owner) = users.first().cloned() else {
            continue;
        };
        if let Some(other) = users.iter().find(|u| u.0 != owner.0) {
            return Err(refuse(
                &name,
                format!(
                    "program '{}' cannot use this PROG_ARRAY: its owner is '{}', another                      struct_ops member (the kernel refuses it: -EINVAL, bpf_prog_map_compatible)",
                    other.1, owner.1
                ),
            ));
        }
        let Some(sec) = file.section_by_name(".maps") else {
            continue;
        };
        let Some(var) = symbols
            .iter()
            .find(|s| s.section_index() == Some(sec.index()) && s.name() == Ok(name.as_str()))
        else {
            continue;
        };
        let Some(values_off) = maps::values_offset(btf, &name) else {
            continue;
        };
        let (start, size) = (var.address(), var.size());
        for (off, rel) in sec.relocations() {
            if off < start || off >= start + size {
                continue;
            }
            let RelocationTarget::Symbol(si) = rel.target() else {
                continue;
            };
            let Some(sym) = symbols.iter().find(|s| s.index() == si) else {
                continue;
            };
            let slot = (off - start) as usize;
            let slot = match slot.checked_sub(values_off) {
                Some(b) if b % 8 == 0 && b / 8 < map.prog_slots.len() => b / 8,
                _ => {
                    return Err(refuse(
                        &name,
                        format!("relocation at byte {off} is no slot"),
                    ))
                }
            };
            let prog = sym.name().unwrap_or("?").to_string();
            let entry = sym
                .section_index()
                .and_then(|i| code_base.get(&i))
                .map(|b| b + (sym.address() / 8) as usize);
            if entry != Some(owner.0) {
                return Err(refuse(
                    &name,
                    format!(
                        "failed to initialize slot [{slot}] to prog '{prog}': -22 (the kernel \
                         takes into a struct_ops program's PROG_ARRAY only programs of the \
                         member that owns it, '{}')",
                        owner.1
                    ),
                ));
            }
            map.prog_slots[slot] = Some(owner.clone());
        }
    }
    Ok(())
}

/// The `.kconfig` region and offset of extern `name`, given one on its first use. The
/// region (read-only, as libbpf's .kconfig map is frozen) is appended to the globals
/// the first time; its values are filled in at load from the `KernelEnv`.
fn kconfig_slot(
    btf: &Btf,
    name: &str,
    weak: bool,
    kconfig: &mut Vec<KconfigExtern>,
    globals: &mut Vec<Global>,
) -> Result<(usize, usize), BpfError> {
    if let Some(k) = kconfig.iter().find(|k| k.name == name) {
        return Ok((k.region, k.offset));
    }
    let var = btf.find_var(name).ok_or_else(|| BpfError::UnknownCall {
        name: name.to_string(),
    })?;
    let sec = btf.datasec_of(var).unwrap_or("");
    if sec != ".kconfig" {
        return Err(BpfError::Elf(format!(
            "extern {name} is in {sec:?}: the only extern variables tcplab resolves are __kconfig ones"
        )));
    }
    let BtfType::Var { target, .. } = btf.get(var)? else {
        return Err(BpfError::Btf(format!("{name} is not a VAR")));
    };
    let (_, ty, _) = btf.resolve(*target)?;
    let size = match ty {
        BtfType::Int { size, .. } | BtfType::Enum { size, .. } if matches!(size, 1 | 2 | 4 | 8) => {
            *size as usize
        }
        _ => {
            return Err(BpfError::Elf(format!(
            "__kconfig extern {name}: only integer, bool and enum (tristate) types are supported"
        )))
        }
    };
    let region = match globals.iter().position(|g| g.name == ".kconfig") {
        Some(r) => r,
        None => {
            globals.push(Global::section(".kconfig", Vec::new(), false));
            globals.len() - 1
        }
    };
    let data = &mut globals[region].data;
    let offset = data.len().next_multiple_of(size);
    data.resize(offset + size, 0);
    kconfig.push(KconfigExtern {
        name: name.to_string(),
        region,
        offset,
        size,
        weak,
    });
    Ok((region, offset))
}

/// The license must be GPL-compatible: the verifier refuses a struct_ops program
/// otherwise (kernel/bpf/verifier.c check_struct_ops_btf_id; compatibility as
/// include/linux/license.h license_is_gpl_compatible).
fn check_license(data: &Option<Vec<u8>>) -> Result<(), BpfError> {
    let text = data.as_deref().map(|b| {
        String::from_utf8_lossy(&b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())])
            .into_owned()
    });
    let ok = matches!(
        text.as_deref(),
        Some(
            "GPL"
                | "GPL v2"
                | "GPL and additional rights"
                | "Dual BSD/GPL"
                | "Dual MIT/GPL"
                | "Dual MPL/GPL"
        )
    );
    if ok {
        return Ok(());
    }
    let got = match text {
        Some(t) => format!("its license is {t:?}"),
        None => "it has no SEC(\"license\") string".into(),
    };
    Err(BpfError::Verifier {
        prog: String::new(),
        line: None,
        why: format!(
            "struct ops programs must have a GPL compatible license; {got} \
             (GPL, GPL v2, GPL and additional rights, Dual BSD/GPL, Dual MIT/GPL, Dual MPL/GPL)"
        ),
    })
}

/// Every function (program or subprogram) as (first pc, end pc), sorted.
fn functions(
    symbols: &[object::Symbol],
    code_base: &HashMap<object::SectionIndex, usize>,
) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = symbols
        .iter()
        .filter(|s| s.kind() == SymbolKind::Text && s.size() > 0)
        .filter_map(|s| {
            let base = *code_base.get(&s.section_index()?)?;
            let start = base + (s.address() / 8) as usize;
            Some((start, start + (s.size() / 8) as usize))
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The name of the function symbol that contains `pc`.
fn program_at(
    symbols: &[object::Symbol],
    code_base: &HashMap<object::SectionIndex, usize>,
    pc: usize,
) -> String {
    symbols
        .iter()
        .filter(|s| s.kind() == SymbolKind::Text)
        .filter_map(|s| {
            let base = *code_base.get(&s.section_index()?)?;
            let start = base + (s.address() / 8) as usize;
            (start <= pc && pc < start + (s.size() / 8).max(1) as usize)
                .then(|| s.name().unwrap_or("?").to_string())
        })
        .next()
        .unwrap_or_else(|| "?".into())
}

type StructOps = ([Option<(usize, String)>; 12], String, u32);

/// One `struct tcp_congestion_ops` variable of a `.struct_ops*` section.
struct OpsVar {
    section: object::SectionIndex,
    /// Byte offset of the variable in its section, and its size.
    offset: u64,
    size: u64,
    var_name: String,
    /// Its `.name` member.
    ca_name: String,
}

/// The `tcp_congestion_ops` variables of every `.struct_ops` / `.struct_ops.link`
/// section (libbpf accepts both, and several variables in each).
fn ops_vars(
    file: &object::File,
    symbols: &[object::Symbol],
    name_at: impl Fn(&[u8]) -> String,
    size: u64,
) -> Result<Vec<OpsVar>, BpfError> {
    let mut out = Vec::new();
    for sec in file.sections() {
        let sname = sec.name().unwrap_or("");
        if sname != ".struct_ops" && sname != ".struct_ops.link" {
            continue;
        }
        let data = sec.data().map_err(|e| elf(format!("{sname}: {e}")))?;
        let mut vars: Vec<(u64, String)> = symbols
            .iter()
            .filter(|s| s.section_index() == Some(sec.index()) && s.kind() == SymbolKind::Data)
            .map(|s| (s.address(), s.name().unwrap_or("?").to_string()))
            .collect();
        if vars.is_empty() && !data.is_empty() {
            vars.push((0, "?".into())); // no symbol: the section is one variable
        }
        vars.sort();
        for (offset, var_name) in vars {
            let bytes = usize::try_from(offset)
                .ok()
                .and_then(|o| data.get(o..o.checked_add(size as usize)?))
                .ok_or_else(|| {
                    elf(format!(
                        "{sname}: {var_name} is not a whole tcp_congestion_ops"
                    ))
                })?;
            out.push(OpsVar {
                section: sec.index(),
                offset,
                size,
                ca_name: name_at(bytes),
                var_name,
            });
        }
    }
    Ok(out)
}

fn struct_ops(
    file: &object::File,
    btf: &Btf,
    symbols: &[object::Symbol],
    code_base: &HashMap<object::SectionIndex, usize>,
    want: Option<&str>,
) -> Result<StructOps, BpfError> {
    let Some((_, BtfType::Struct { members, size, .. })) = btf.find_struct("tcp_congestion_ops")
    else {
        return Err(BpfError::NoStructOps);
    };
    let field = |data: &[u8], name: &str, len: usize| -> Option<Vec<u8>> {
        let m = members.iter().find(|m| m.name == name)?;
        let o = (m.bit_offset / 8) as usize;
        data.get(o..o + len).map(<[u8]>::to_vec)
    };
    let name_at = |data: &[u8]| {
        field(data, "name", 16)
            .map(|b| {
                String::from_utf8_lossy(&b[..b.iter().position(|&c| c == 0).unwrap_or(16)])
                    .into_owned()
            })
            .unwrap_or_default()
    };
    let vars = ops_vars(file, symbols, name_at, u64::from(*size))?;
    let listing = || {
        vars.iter()
            .map(|v| format!("{} (.name \"{}\")", v.var_name, v.ca_name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let chosen = match want {
        Some(n) => vars
            .iter()
            .find(|v| v.var_name == n)
            .or_else(|| vars.iter().find(|v| v.ca_name == n))
            .ok_or_else(|| {
                elf(format!(
                    "no struct_ops variable named {n:?}; the object has {}",
                    listing()
                ))
            })?,
        None => match vars.as_slice() {
            [] => return Err(BpfError::NoStructOps),
            [one] => one,
            _ => {
                return Err(elf(format!(
                    "{} tcp_congestion_ops in the object, choose one by name: {}",
                    vars.len(),
                    listing()
                )))
            }
        },
    };
    let sec = file
        .section_by_index(chosen.section)
        .map_err(|e| elf(e.to_string()))?;
    let all = sec.data().map_err(|e| elf(e.to_string()))?;
    let data = usize::try_from(chosen.offset)
        .ok()
        .and_then(|o| all.get(o..o.checked_add(chosen.size as usize)?))
        .ok_or_else(|| elf("struct_ops variable out of its section"))?;
    let member_at = |off: u64| members.iter().find(|m| u64::from(m.bit_offset / 8) == off);
    let mut callbacks: [Option<(usize, String)>; 12] = Default::default();
    for (off, rel) in sec.relocations() {
        let RelocationTarget::Symbol(si) = rel.target() else {
            continue;
        };
        if off < chosen.offset || off - chosen.offset >= chosen.size {
            continue; // another variable's member
        }
        let off = off - chosen.offset;
        let sym = symbols
            .iter()
            .find(|s| s.index() == si)
            .ok_or_else(|| elf("struct_ops relocation symbol"))?;
        let m = member_at(off).ok_or_else(|| {
            elf(format!(
                "struct_ops relocation at offset {off} is no member"
            ))
        })?;
        let cb = CALLBACKS
            .iter()
            .find(|(n, _)| *n == m.name)
            .ok_or_else(|| {
                // The kernel's words (kernel/bpf/verifier.c check_struct_ops_btf_id;
                // net/ipv4/bpf_tcp_ca.c refuses get_info, the one callback it lacks).
                elf(format!(
                    "attach to unsupported member {} of struct tcp_congestion_ops",
                    m.name
                ))
            })?
            .1;
        let base = *sym
            .section_index()
            .and_then(|i| code_base.get(&i))
            .ok_or_else(|| elf(format!("{} is not code", m.name)))?;
        let prog = sym.name().unwrap_or("?").to_string();
        callbacks[cb as usize] = Some((base + (sym.address() / 8) as usize, prog));
    }
    let flags = field(data, "flags", 4).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    Ok((callbacks, chosen.ca_name.clone(), flags))
}

/// tcp_validate_congestion_control (net/ipv4/tcp_cong.c), which the kernel runs when
/// the struct_ops is registered: ssthresh, undo_cwnd and one of cong_avoid /
/// cong_control are required.
fn check_required(callbacks: &[Option<(usize, String)>; 12]) -> Result<(), BpfError> {
    for (cb, what) in [
        (Callback::Ssthresh, "ssthresh"),
        (Callback::UndoCwnd, "undo_cwnd"),
    ] {
        if callbacks[cb as usize].is_none() {
            return Err(elf(format!(
                "tcp_congestion_ops.{what} is required (tcp_validate_congestion_control)"
            )));
        }
    }
    if callbacks[Callback::CongAvoid as usize].is_none()
        && callbacks[Callback::CongControl as usize].is_none()
    {
        return Err(elf(
            "tcp_congestion_ops needs cong_avoid or cong_control (tcp_validate_congestion_control)",
        ));
    }
    Ok(())
}

/// The .rodata globals with their BTF types (the candidates for parameters).
fn rodata_vars(
    btf: &Btf,
    symbols: &[object::Symbol],
    global_region: &HashMap<object::SectionIndex, usize>,
    globals: &[Global],
) -> Vec<GlobalVar> {
    let mut out = Vec::new();
    for s in symbols {
        if s.kind() != SymbolKind::Data {
            continue;
        }
        let Some(&region) = s.section_index().and_then(|i| global_region.get(&i)) else {
            continue;
        };
        if globals[region].name != ".rodata" {
            continue;
        }
        let name = s.name().unwrap_or("").to_string();
        let ty = btf
            .find_var(&name)
            .and_then(|v| match btf.get(v).ok()? {
                BtfType::Var { target, .. } => Some(btf.resolve(*target).ok()?.1.clone()),
                _ => None,
            })
            .unwrap_or(BtfType::Other);
        out.push(GlobalVar {
            name,
            section: region,
            offset: s.address() as usize,
            size: s.size() as usize,
            ty,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}
