//! A BPF program's per-socket state as series: the struct it keeps in `icsk_ca_priv`
//! (what `inet_csk_ca(sk)` points to: `struct bbr` in bbr.bpf.c, `struct bictcp` in the
//! kernel's bpf_cubic.c), named by the flow (`flows[i].bpf.state` in a spec, the engine
//! config's `bpf_state`), read field by field from the object's own BTF and recorded
//! each interval as `cc_<struct>_<field>` columns, in the program's own units.
//!
//! Why by name and from BTF: the kernel gives a BPF congestion control no `get_info`
//! (bpf_tcp_ca.c refuses the member), so there is no program-side way to export state
//! that both backends share; the struct a program casts `inet_csk_ca(sk)` to is the
//! state the researcher would print. BTF has its layout (clang -g), bitfields included,
//! so programs written for the kernel need no change.
//!
//! Layout rules: integer, bool and enum members (bitfields too) are fields; a nested
//! struct's members are flattened as `<member>_<sub>`, an array's elements as
//! `<member>_<i>` (at most `MAX_FIELDS` in all); unions and pointers are skipped (a union
//! has no one meaning to read, a pointer no meaning outside the kernel). The struct must
//! fit `icsk_ca_priv` (ICSK_CA_PRIV_SIZE, 104 bytes on 6.18), as the kernel's
//! BUILD_BUG_ON / BPF verifier bounds make it.
//!
//! Deviation: the kernel backend does not sample these (reading `icsk_ca_priv` from user
//! space would need a BPF iterator of its own); its runs say so in their warnings.

use std::collections::BTreeSet;
use std::sync::{Mutex, OnceLock};

use tcplab_cc::ops::{InfoField, InfoValue};

use crate::error::BpfError;
use crate::layout::ICSK_CA_PRIV_SIZE;
use crate::object::btf::{Btf, BtfType};

/// Fields recorded per flow at most: a 104-byte struct of bytes would give 104.
pub const MAX_FIELDS: usize = 128;

/// One scalar of the state struct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateField {
    /// `<struct>_<path>`; the recorder prefixes `cc_`.
    pub name: &'static str,
    pub bit_offset: u32,
    pub bits: u32,
    pub signed: bool,
}

/// The scalars of one struct, in layout order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateLayout {
    pub fields: Vec<StateField>,
}

/// Column names live as long as the process (`InfoField` names are `&'static str`, as
/// the native algorithms' are literals); each distinct name is leaked once, so a sweep
/// of thousands of runs of one program keeps one copy.
fn intern(name: String) -> &'static str {
    static NAMES: OnceLock<Mutex<BTreeSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.get(name.as_str()) {
        return n;
    }
    let leaked: &'static str = Box::leak(name.into_boxed_str());
    names.insert(leaked);
    leaked
}

fn refuse(why: impl Into<String>) -> BpfError {
    BpfError::State(why.into())
}

impl StateLayout {
    /// The layout of `struct <name>` in the object `elf`: from its BTF when the struct is
    /// there, else from its DWARF (dwarf_types.rs: clang's BTF leaves out structs only
    /// reached through local pointers, bbr.bpf.c's `struct bbr` among them).
    pub fn for_object(elf: &[u8], name: &str) -> Result<StateLayout, BpfError> {
        let btf = btf_section(elf)?;
        if btf.find_struct(name).is_some() {
            return StateLayout::new(&btf, name);
        }
        match crate::object::dwarf_types::struct_btf(elf, name)? {
            Some(from_dwarf) => StateLayout::new(&from_dwarf, name),
            None => {
                let mut have = btf_struct_names(&btf);
                have.extend(crate::object::dwarf_types::struct_names(
                    elf,
                    ICSK_CA_PRIV_SIZE as u64,
                )?);
                Err(missing(name, have))
            }
        }
    }

    /// The layout of `struct <name>` in `btf`; refused (naming what is wrong) when the
    /// object has no such struct, it is a union, it does not fit `icsk_ca_priv`, or it
    /// has no scalar to record.
    pub fn new(btf: &Btf, name: &str) -> Result<StateLayout, BpfError> {
        let (id, ty) = btf
            .find_struct(name)
            .ok_or_else(|| missing(name, btf_struct_names(btf)))?;
        let BtfType::Struct { size, is_union, .. } = ty else {
            unreachable!("find_struct returns structs")
        };
        if *is_union {
            return Err(refuse(format!("{name:?} is a union, not a struct")));
        }
        if *size as usize > ICSK_CA_PRIV_SIZE {
            return Err(refuse(format!(
                "struct {name} is {size} bytes: icsk_ca_priv holds {ICSK_CA_PRIV_SIZE}"
            )));
        }
        let mut fields = Vec::new();
        flatten(btf, id, name, 0, 0, &mut fields)?;
        if fields.is_empty() {
            return Err(refuse(format!(
                "struct {name} has no integer member to record"
            )));
        }
        Ok(StateLayout { fields })
    }

    /// The fields' values in `ca_priv` (the socket's `icsk_ca_priv` bytes).
    pub fn read(&self, ca_priv: &[u8]) -> Vec<InfoField> {
        self.fields
            .iter()
            .map(|f| (f.name, InfoValue::Num(read_bits(ca_priv, f) as f64)))
            .collect()
    }
}

/// The named structs of `btf` that fit `icsk_ca_priv`.
fn btf_struct_names(btf: &Btf) -> Vec<String> {
    btf.types
        .iter()
        .filter_map(|t| match t {
            BtfType::Struct {
                name,
                is_union: false,
                size,
                ..
            } if !name.is_empty() && (*size as usize) <= ICSK_CA_PRIV_SIZE => Some(name.clone()),
            _ => None,
        })
        .collect()
}

/// No struct `name`: refused, listing the candidates.
fn missing(name: &str, mut have: Vec<String>) -> BpfError {
    have.sort_unstable();
    have.dedup();
    refuse(format!(
        "the object has no struct {name:?} (its structs that fit icsk_ca_priv: {})",
        if have.is_empty() {
            "none".to_string()
        } else {
            have.join(", ")
        }
    ))
}

/// The object's .BTF section, parsed.
fn btf_section(elf: &[u8]) -> Result<Btf, BpfError> {
    use object::{Object, ObjectSection};
    let file = object::File::parse(elf).map_err(|e| BpfError::Elf(e.to_string()))?;
    match file.section_by_name(".BTF").and_then(|s| s.data().ok()) {
        Some(data) => Btf::parse(data),
        None => Ok(Btf::default()),
    }
}

/// Appends the scalars of type `id` at `bit_offset` under `prefix`.
fn flatten(
    btf: &Btf,
    id: u32,
    prefix: &str,
    bit_offset: u32,
    depth: u32,
    out: &mut Vec<StateField>,
) -> Result<(), BpfError> {
    if depth > 8 {
        return Err(refuse(format!("{prefix}: nesting too deep")));
    }
    let (_, ty, _) = btf.resolve(id)?;
    match ty {
        BtfType::Int { size, signed, .. } | BtfType::Enum { size, signed, .. } => {
            push_field(out, prefix.to_string(), bit_offset, size * 8, *signed)
        }
        BtfType::Struct {
            members,
            is_union: false,
            ..
        } => {
            for m in members {
                if m.name.is_empty() {
                    // an anonymous struct's members belong to the enclosing one
                    flatten(
                        btf,
                        m.type_id,
                        prefix,
                        bit_offset + m.bit_offset,
                        depth + 1,
                        out,
                    )?;
                    continue;
                }
                let name = format!("{prefix}_{}", m.name);
                if m.bitfield_size != 0 {
                    let (_, t, _) = btf.resolve(m.type_id)?;
                    let signed = matches!(t, BtfType::Int { signed: true, .. });
                    let at = bit_offset + m.bit_offset;
                    push_field(out, name, at, m.bitfield_size, signed)?;
                } else {
                    flatten(
                        btf,
                        m.type_id,
                        &name,
                        bit_offset + m.bit_offset,
                        depth + 1,
                        out,
                    )?;
                }
            }
            Ok(())
        }
        BtfType::Array { elem, nelems } => {
            let elem_bits = btf.size_of(*elem)? * 8;
            for i in 0..*nelems {
                flatten(
                    btf,
                    *elem,
                    &format!("{prefix}_{i}"),
                    bit_offset + i * elem_bits,
                    depth + 1,
                    out,
                )?;
            }
            Ok(())
        }
        // unions, pointers and the rest: nothing to record (module doc)
        _ => Ok(()),
    }
}

/// Appends one scalar, refusing more than `MAX_FIELDS`.
fn push_field(
    out: &mut Vec<StateField>,
    name: String,
    bit_offset: u32,
    bits: u32,
    signed: bool,
) -> Result<(), BpfError> {
    if out.len() == MAX_FIELDS {
        return Err(refuse(format!(
            "more than {MAX_FIELDS} fields to record (at {name})"
        )));
    }
    out.push(StateField {
        name: intern(name),
        bit_offset,
        bits,
        signed,
    });
    Ok(())
}

/// The little-endian bit field `f` of `bytes` (as clang lays out bitfields on x86-64
/// and the BPF target: from the low bit of the first byte), sign-extended if signed.
fn read_bits(bytes: &[u8], f: &StateField) -> i128 {
    let mut v: u128 = 0;
    for i in 0..f.bits {
        let bit = f.bit_offset + i;
        let byte = bytes.get((bit / 8) as usize).copied().unwrap_or(0);
        if byte >> (bit % 8) & 1 == 1 {
            v |= 1 << i;
        }
    }
    if f.signed && f.bits > 0 && f.bits < 128 && v >> (f.bits - 1) & 1 == 1 {
        (v as i128) - (1i128 << f.bits)
    } else {
        v as i128
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::btf::Member;

    fn int(size: u32, signed: bool) -> BtfType {
        BtfType::Int {
            name: String::new(),
            size,
            signed,
            is_bool: false,
            bits: size * 8,
        }
    }

    fn member(name: &str, type_id: u32, bit_offset: u32, bitfield_size: u32) -> Member {
        Member {
            name: name.into(),
            type_id,
            bit_offset,
            bitfield_size,
        }
    }

    /// struct pair { u32 t; u32 v; };
    /// struct st { u32 min_rtt_us; struct pair s[2]; s16 delta; u32 mode:3, flag:1; };
    fn btf() -> Btf {
        Btf {
            types: vec![
                BtfType::Void,
                int(4, false), // 1: u32
                BtfType::Struct {
                    name: "pair".into(),
                    size: 8,
                    members: vec![member("t", 1, 0, 0), member("v", 1, 32, 0)],
                    is_union: false,
                },
                BtfType::Array { elem: 2, nelems: 2 }, // 3: struct pair[2]
                int(2, true),                          // 4: s16
                BtfType::Struct {
                    name: "st".into(),
                    size: 24,
                    members: vec![
                        member("min_rtt_us", 1, 0, 0),
                        member("s", 3, 32, 0),
                        member("delta", 4, 160, 0),
                        member("mode", 1, 176, 3),
                        member("flag", 1, 179, 1),
                    ],
                    is_union: false,
                },
            ],
            strs: Vec::new(),
        }
    }

    #[test]
    fn nested_arrays_and_bitfields_flatten_in_layout_order() {
        let l = StateLayout::new(&btf(), "st").unwrap();
        let names: Vec<&str> = l.fields.iter().map(|f| f.name).collect();
        assert_eq!(
            names,
            [
                "st_min_rtt_us",
                "st_s_0_t",
                "st_s_0_v",
                "st_s_1_t",
                "st_s_1_v",
                "st_delta",
                "st_mode",
                "st_flag"
            ]
        );
    }

    #[test]
    fn values_are_read_at_their_bits() {
        let l = StateLayout::new(&btf(), "st").unwrap();
        let mut b = [0u8; 104];
        b[0..4].copy_from_slice(&40_000u32.to_le_bytes()); // min_rtt_us
        b[12..16].copy_from_slice(&7u32.to_le_bytes()); // s[1].t (s starts at byte 4)
        b[20..22].copy_from_slice(&(-5i16).to_le_bytes()); // delta
                                                           // byte 22 holds bits 176..183: mode = 5 (101b) in bits 0-2, flag = 1 in bit 3
        b[22] = 0b0000_1101;
        let got: Vec<f64> = l
            .read(&b)
            .into_iter()
            .map(|(_, v)| match v {
                InfoValue::Num(x) => x,
                InfoValue::Label(_) => f64::NAN,
            })
            .collect();
        assert_eq!(got, [40_000.0, 0.0, 0.0, 7.0, 0.0, -5.0, 5.0, 1.0]);
    }

    #[test]
    fn a_missing_or_oversized_struct_is_refused_naming_the_candidates() {
        let e = StateLayout::new(&btf(), "bbr").unwrap_err().to_string();
        assert!(e.contains("no struct \"bbr\""), "{e}");
        assert!(e.contains("pair, st"), "{e}");
        let mut big = btf();
        if let BtfType::Struct { size, .. } = &mut big.types[5] {
            *size = 112;
        }
        let e = StateLayout::new(&big, "st").unwrap_err().to_string();
        assert!(e.contains("112 bytes: icsk_ca_priv holds 104"), "{e}");
    }
}
