//! CO-RE: rewrites each relocated instruction for the simulator's layout (layout.rs),
//! as libbpf does for vmlinux (tools/lib/bpf/relo_core.c: bpf_core_calc_field_relo,
//! bpf_core_patch_insn). The program's access string walks its LOCAL types (its
//! header's); every step is matched BY NAME in our tables, so field order and offsets in
//! the header are free, but every field must exist here.
//!
//! Deviations from libbpf: flavours (`tcp_sock___v1`) are matched by their essential
//! name only at the root, with no fallback between several candidates; no matching of
//! anonymous members by their inner fields, no type-id/enum-value relocations, and a load
//! whose width differs from our field is an error instead of being resized.

use crate::error::BpfError;
use crate::layout::{self, Kind, TField};
use crate::object::btf::{Btf, BtfType};
use crate::object::btf_ext::{CoreKind, CoreRelo};
use crate::vm::insn::Insn;

/// The field a relocation resolved to: its byte offset from the root struct, and the
/// final field (None when the access is the root itself or an array element of a
/// scalar array, where `size` says the element size).
struct Resolved {
    offset: u32,
    size: u32,
    /// Size of the field in the program's own (local) type.
    local_size: u32,
    bits: u32,
    signed: bool,
    /// bpf_tcp_ca_btf_struct_access lets a program write it.
    writable: bool,
    /// "tcp_sock.snd_una", "inet_connection_sock.icsk_ack.pending" (for errors).
    path: String,
}

fn unmodelled(strukt: &str, field: &str) -> BpfError {
    BpfError::UnmodelledField {
        strukt: strukt.to_string(),
        field: field.to_string(),
    }
}

fn resolve(btf: &Btf, r: &CoreRelo) -> Result<Option<Resolved>, BpfError> {
    let (_, root_local, _) = btf.resolve(r.type_id)?;
    let root_name = match root_local {
        BtfType::Struct { name, .. } => name.clone(),
        _ => {
            return Err(BpfError::Relocation(format!(
                "access {} not on a struct",
                r.access
            )))
        }
    };
    // "Flavours" (tcp_sock___v2) name the same kernel struct (libbpf's
    // bpf_core_essential_name_len).
    let root_name = match root_name.find("___") {
        Some(i) => root_name[..i].to_string(),
        None => root_name,
    };
    let target = layout::root(&root_name).ok_or_else(|| {
        BpfError::Relocation(format!(
            "struct {root_name} is not modelled by the simulator"
        ))
    })?;
    let steps: Vec<u32> = r
        .access
        .split(':')
        .map(|s| s.parse::<u32>())
        .collect::<Result<_, _>>()
        .map_err(|_| BpfError::Relocation(format!("bad access string {:?}", r.access)))?;
    let Some((&first, rest)) = steps.split_first() else {
        return Err(BpfError::Relocation("empty access string".into()));
    };
    let mut local_id = r.type_id;
    let mut kind = Kind::Struct(target);
    let mut offset = target.size.saturating_mul(first);
    let mut last: Option<&TField> = None;
    let mut elem_size = target.size;
    let mut writable = false;
    let mut path = root_name.clone();
    for &idx in rest {
        let (_, local, _) = btf.resolve(local_id)?;
        match (local, kind) {
            (BtfType::Struct { name, members, .. }, Kind::Struct(ts)) => {
                let m = members.get(idx as usize).ok_or_else(|| {
                    BpfError::Relocation(format!("member {idx} of struct {name} out of range"))
                })?;
                let f = match ts.field(&m.name) {
                    Some(f) => f,
                    None => {
                        let sname = if ts.name.is_empty() {
                            name.as_str()
                        } else {
                            ts.name
                        };
                        return if r.kind == CoreKind::FieldExists {
                            Ok(None)
                        } else {
                            Err(unmodelled(sname, &m.name))
                        };
                    }
                };
                offset = offset.saturating_add(f.offset);
                kind = f.kind;
                elem_size = f.size;
                writable = f.writable;
                path = format!("{path}.{}", m.name);
                last = Some(f);
                local_id = m.type_id;
            }
            (
                BtfType::Array { elem, .. },
                Kind::Array {
                    elem: ek,
                    elem_size: es,
                    n,
                },
            ) => {
                if idx >= n {
                    return Err(BpfError::Relocation(format!(
                        "index {idx} beyond {n} elements in {}",
                        r.access
                    )));
                }
                offset = offset.saturating_add(es * idx);
                kind = *ek;
                elem_size = es;
                last = None;
                local_id = *elem;
            }
            _ => {
                return Err(BpfError::Relocation(format!(
                    "access {} of struct {root_name} does not match the simulator's types",
                    r.access
                )))
            }
        }
    }
    let signed = matches!(kind, Kind::Int { signed: true });
    let local_size = btf.size_of(local_id)?;
    Ok(Some(match last {
        Some(f) => Resolved {
            offset,
            size: f.size,
            local_size,
            bits: f.bits,
            signed,
            writable,
            path,
        },
        None => Resolved {
            offset,
            size: elem_size,
            local_size,
            bits: 0,
            signed,
            writable,
            path,
        },
    }))
}

/// The value the instruction must carry (bpf_core_calc_field_relo). Bitfields live at
/// bit 0 of their own byte (layout.rs), so byte offset/size are the byte's.
fn value(res: &Option<Resolved>, kind: CoreKind) -> u64 {
    let Some(f) = res else { return 0 };
    let width = if f.bits > 0 { f.bits } else { f.size * 8 };
    match kind {
        CoreKind::FieldByteOffset => u64::from(f.offset),
        CoreKind::FieldByteSize => u64::from(f.size),
        CoreKind::FieldExists => 1,
        CoreKind::FieldSigned => u64::from(f.signed),
        // Little endian: the field's top bit goes to bit 63, then back down to bit 0.
        CoreKind::FieldLshiftU64 => u64::from(64 - width),
        CoreKind::FieldRshiftU64 => u64::from(64 - width),
    }
}

/// Applies one relocation to `insns` (the section's instructions start at `base`).
pub fn apply(btf: &Btf, r: &CoreRelo, insns: &mut [Insn], base: usize) -> Result<(), BpfError> {
    let res = resolve(btf, r)?;
    let val = value(&res, r.kind);
    let pc = base + (r.insn_off / 8) as usize;
    let insn = insns.get(pc).copied().ok_or_else(|| {
        BpfError::Relocation(format!(
            "instruction {}+{} out of range",
            r.section, r.insn_off
        ))
    })?;
    let class = insn.code & 7;
    match class {
        // ALU / ALU64 with an immediate: `r = imm`, `r += imm`.
        4 | 7 if insn.code & 8 == 0 => {
            insns[pc].imm = val as i32;
        }
        // LDX / ST / STX: the offset field.
        1..=3 => {
            let f = res.as_ref().ok_or_else(|| {
                BpfError::Relocation(format!("memory access to a missing field ({})", r.access))
            })?;
            let width = match (insn.code >> 3) & 3 {
                0 => 4,
                1 => 2,
                2 => 1,
                _ => 8,
            };
            // As libbpf: a load of the whole field whose width differs between the
            // program's header and our layout would need resizing; we refuse it. (An
            // access inside a larger field, e.g. icsk_ca_priv, keeps its own width.)
            let whole = width == f.local_size as usize;
            if r.kind == CoreKind::FieldByteOffset && f.bits == 0 && whole && f.local_size != f.size
            {
                return Err(BpfError::Relocation(format!(
                    "{}-byte field in the program, {} bytes in the simulator ({})",
                    f.local_size, f.size, r.access
                )));
            }
            // bpf_tcp_ca_btf_struct_access (net/ipv4/bpf_tcp_ca.c): the verifier refuses
            // a store to any other field when the program loads.
            if class != 1 && r.kind == CoreKind::FieldByteOffset && !f.writable {
                return Err(BpfError::Verifier {
                    prog: String::new(),
                    line: None,
                    why: format!(
                        "write to {}, a field BPF congestion control may not write \
                         (bpf_tcp_ca_btf_struct_access allows {})",
                        f.path,
                        layout::WRITABLE_FIELDS
                    ),
                });
            }
            insns[pc].off = i16::try_from(val).map_err(|_| {
                BpfError::Relocation(format!("offset {val} does not fit an instruction"))
            })?;
        }
        // LD_IMM64: the 64-bit constant spans this slot and the next.
        0 if insn.code == 0x18 => {
            insns[pc].imm = val as u32 as i32;
            if let Some(next) = insns.get_mut(pc + 1) {
                next.imm = (val >> 32) as u32 as i32;
            }
        }
        _ => {
            return Err(BpfError::Relocation(format!(
                "cannot relocate opcode {:#x} at {}+{}",
                insn.code, r.section, r.insn_off
            )))
        }
    }
    Ok(())
}
