//! A struct's layout from the object's DWARF (`.debug_info`), as BTF entries: the
//! fallback of state_series.rs for a struct that clang's BTF does not carry. LLVM's BPF
//! backend emits BTF only for the types of globals, function signatures and CO-RE
//! accesses; a struct a program only reaches through a local pointer (`struct bbr *bbr =
//! inet_csk_ca(sk)` in always-inline helpers) is in DWARF alone. Every clang build of a
//! BPF program has both (`-g`).
//!
//! Read with gimli; the entries are translated into a small `Btf` (ints, enums,
//! structs, unions, arrays, typedefs and qualifiers; the rest as `Other`) so that one
//! flattening serves both sources. Relocations of the debug sections are not applied:
//! in a BPF object (REL, against section symbols) the offsets they fix are already in
//! place, which is how llvm-dwarfdump reads such objects too.

use std::collections::HashMap;

use gimli::{AttributeValue, EndianSlice, LittleEndian, UnitOffset};
use object::{Object, ObjectSection};

use crate::error::BpfError;
use crate::object::btf::{Btf, BtfType, Member};

type R<'a> = EndianSlice<'a, LittleEndian>;

fn dwarf_err(e: impl std::fmt::Display) -> BpfError {
    BpfError::State(format!("DWARF: {e}"))
}

/// The object's debug sections (empty where it has none), borrowed from `elf`.
fn load(elf: &[u8]) -> Result<gimli::Dwarf<R<'_>>, BpfError> {
    let file = object::File::parse(elf).map_err(dwarf_err)?;
    gimli::Dwarf::load(|id| -> Result<R<'_>, gimli::Error> {
        let data = file
            .section_by_name(id.name())
            .and_then(|s| s.data().ok())
            .unwrap_or(&[]);
        Ok(EndianSlice::new(data, LittleEndian))
    })
    .map_err(dwarf_err)
}

/// A `Btf` holding `struct <name>` and the types it uses, from `elf`'s DWARF; None when
/// the object has no debug info or no complete struct of that name.
pub fn struct_btf(elf: &[u8], name: &str) -> Result<Option<Btf>, BpfError> {
    let dwarf = load(elf)?;
    let mut units = dwarf.units();
    while let Some(header) = units.next().map_err(dwarf_err)? {
        let unit = dwarf.unit(header).map_err(dwarf_err)?;
        let mut entries = unit.entries();
        while let Some(e) = entries.next_dfs().map_err(dwarf_err)? {
            if e.tag() != gimli::DW_TAG_structure_type
                || e.attr_value(gimli::DW_AT_declaration).is_some()
            {
                continue;
            }
            if attr_name(&dwarf, &unit, e)?.as_deref() == Some(name) {
                let mut t = Translator {
                    dwarf: &dwarf,
                    unit: &unit,
                    btf: Btf {
                        types: vec![BtfType::Void],
                        strs: Vec::new(),
                    },
                    ids: HashMap::new(),
                };
                t.type_id(e.offset(), 0)?;
                return Ok(Some(t.btf));
            }
        }
    }
    Ok(None)
}

/// The names of the complete structs in `elf`'s DWARF of at most `max_size` bytes,
/// sorted (to say what a flow could have named).
pub fn struct_names(elf: &[u8], max_size: u64) -> Result<Vec<String>, BpfError> {
    let dwarf = load(elf)?;
    let mut names = Vec::new();
    let mut units = dwarf.units();
    while let Some(header) = units.next().map_err(dwarf_err)? {
        let unit = dwarf.unit(header).map_err(dwarf_err)?;
        let mut entries = unit.entries();
        while let Some(e) = entries.next_dfs().map_err(dwarf_err)? {
            if e.tag() != gimli::DW_TAG_structure_type {
                continue;
            }
            let size = udata(e.attr_value(gimli::DW_AT_byte_size));
            if let (Some(size), Some(name)) = (size, attr_name(&dwarf, &unit, e)?) {
                if size <= max_size {
                    names.push(name);
                }
            }
        }
    }
    names.sort();
    names.dedup();
    Ok(names)
}

fn attr_name<'a>(
    dwarf: &gimli::Dwarf<R<'a>>,
    unit: &gimli::Unit<R<'a>>,
    e: &gimli::DebuggingInformationEntry<R<'a>>,
) -> Result<Option<String>, BpfError> {
    match e.attr_value(gimli::DW_AT_name) {
        Some(v) => {
            let s = dwarf.attr_string(unit, v).map_err(dwarf_err)?;
            Ok(Some(s.to_string_lossy().into_owned()))
        }
        None => Ok(None),
    }
}

fn udata(v: Option<AttributeValue<R<'_>>>) -> Option<u64> {
    v.and_then(|v| v.udata_value())
}

struct Translator<'d, 'a> {
    dwarf: &'d gimli::Dwarf<R<'a>>,
    unit: &'d gimli::Unit<R<'a>>,
    btf: Btf,
    ids: HashMap<UnitOffset, u32>,
}

impl Translator<'_, '_> {
    /// The BTF id of the DWARF type at `off`, translating it (and what it uses) once.
    fn type_id(&mut self, off: UnitOffset, depth: u32) -> Result<u32, BpfError> {
        if let Some(id) = self.ids.get(&off) {
            return Ok(*id);
        }
        if depth > 32 {
            return Err(BpfError::State("DWARF: type nesting too deep".into()));
        }
        // reserve the id first: a struct may point to itself
        let id = self.btf.types.len() as u32;
        self.btf.types.push(BtfType::Other);
        self.ids.insert(off, id);
        let e = self.unit.entry(off).map_err(dwarf_err)?;
        let name = attr_name(self.dwarf, self.unit, &e)?.unwrap_or_default();
        let size = udata(e.attr_value(gimli::DW_AT_byte_size));
        let target = match e.attr_value(gimli::DW_AT_type) {
            Some(AttributeValue::UnitRef(t)) => Some(self.type_id(t, depth + 1)?),
            _ => None,
        };
        let ty = match e.tag() {
            gimli::DW_TAG_base_type => {
                let enc = e.attr_value(gimli::DW_AT_encoding);
                let enc = match enc {
                    Some(AttributeValue::Encoding(x)) => x,
                    _ => gimli::DW_ATE_unsigned,
                };
                let size = size.unwrap_or(0) as u32;
                BtfType::Int {
                    name,
                    size,
                    signed: enc == gimli::DW_ATE_signed || enc == gimli::DW_ATE_signed_char,
                    is_bool: enc == gimli::DW_ATE_boolean,
                    bits: size * 8,
                }
            }
            gimli::DW_TAG_enumeration_type => {
                let signed = matches!(
                    target.map(|t| &self.btf.types[t as usize]),
                    Some(BtfType::Int { signed: true, .. })
                );
                BtfType::Enum {
                    name,
                    size: size.unwrap_or(4) as u32,
                    signed,
                }
            }
            gimli::DW_TAG_typedef => BtfType::Typedef {
                name,
                target: target.unwrap_or(0),
            },
            gimli::DW_TAG_const_type
            | gimli::DW_TAG_volatile_type
            | gimli::DW_TAG_restrict_type => BtfType::Qualifier {
                target: target.unwrap_or(0),
                is_const: e.tag() == gimli::DW_TAG_const_type,
            },
            gimli::DW_TAG_pointer_type => BtfType::Ptr {
                target: target.unwrap_or(0),
            },
            gimli::DW_TAG_structure_type | gimli::DW_TAG_union_type => BtfType::Struct {
                name,
                size: size.unwrap_or(0) as u32,
                members: self.members(off, depth)?,
                is_union: e.tag() == gimli::DW_TAG_union_type,
            },
            gimli::DW_TAG_array_type => BtfType::Array {
                elem: target.unwrap_or(0),
                nelems: self.array_len(off)?,
            },
            _ => BtfType::Other,
        };
        self.btf.types[id as usize] = ty;
        Ok(id)
    }

    /// A struct's or union's members, offsets in bits (a bitfield's from DWARF 5's
    /// data_bit_offset or DWARF 4's bit_offset, data_member_location in bytes otherwise).
    fn members(&mut self, off: UnitOffset, depth: u32) -> Result<Vec<Member>, BpfError> {
        let mut found = Vec::new();
        {
            let mut tree = self.unit.entries_tree(Some(off)).map_err(dwarf_err)?;
            let root = tree.root().map_err(dwarf_err)?;
            let mut children = root.children();
            while let Some(child) = children.next().map_err(dwarf_err)? {
                let e = child.entry();
                if e.tag() != gimli::DW_TAG_member {
                    continue;
                }
                let name = attr_name(self.dwarf, self.unit, e)?.unwrap_or_default();
                let ty = match e.attr_value(gimli::DW_AT_type) {
                    Some(AttributeValue::UnitRef(t)) => t,
                    _ => continue,
                };
                let bits = udata(e.attr_value(gimli::DW_AT_bit_size));
                let at = |a| udata(e.attr_value(a));
                let bit_offset = match at(gimli::DW_AT_data_bit_offset) {
                    Some(b) => b,
                    None => {
                        let byte = at(gimli::DW_AT_data_member_location).unwrap_or(0);
                        // DWARF 4's bitfields (what clang emits for -gdwarf-4 and for
                        // BPF here): DW_AT_bit_offset counts from the most significant
                        // bit of a storage unit of DW_AT_byte_size bytes; on a
                        // little-endian target the field starts unit*8 - offset - size
                        // bits above the unit's low bit.
                        match (
                            at(gimli::DW_AT_bit_offset),
                            at(gimli::DW_AT_byte_size),
                            bits,
                        ) {
                            (Some(from_msb), Some(unit), Some(size)) => {
                                (8 * byte + 8 * unit).saturating_sub(from_msb + size)
                            }
                            _ => 8 * byte,
                        }
                    }
                };
                found.push((name, ty, bit_offset as u32, bits.unwrap_or(0) as u32));
            }
        }
        let mut members = Vec::with_capacity(found.len());
        for (name, ty, bit_offset, bitfield_size) in found {
            members.push(Member {
                name,
                type_id: self.type_id(ty, depth + 1)?,
                bit_offset,
                bitfield_size,
            });
        }
        Ok(members)
    }

    /// An array's element count: the product of its subranges' counts (C's `x[2][3]`
    /// is one array type with two subranges; flattened here as one of 6).
    fn array_len(&self, off: UnitOffset) -> Result<u32, BpfError> {
        let mut tree = self.unit.entries_tree(Some(off)).map_err(dwarf_err)?;
        let root = tree.root().map_err(dwarf_err)?;
        let mut children = root.children();
        let mut n: u64 = 1;
        while let Some(child) = children.next().map_err(dwarf_err)? {
            let e = child.entry();
            if e.tag() != gimli::DW_TAG_subrange_type {
                continue;
            }
            let count = match udata(e.attr_value(gimli::DW_AT_count)) {
                Some(c) => c,
                None => udata(e.attr_value(gimli::DW_AT_upper_bound)).map_or(0, |u| u + 1),
            };
            n = n.saturating_mul(count);
        }
        Ok(n.min(u64::from(u32::MAX)) as u32)
    }
}
