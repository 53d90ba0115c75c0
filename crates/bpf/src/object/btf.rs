//! A reader for the .BTF section clang emits (include/uapi/linux/btf.h): the type table
//! and its strings. We need it for three things: the local types that CO-RE access
//! strings index into, the `tcp_congestion_ops` layout of the .struct_ops section (which
//! member a function pointer fills), and the names and types of the global variables
//! (the program's parameters).
//!
//! Only what those need is decoded; other kinds are kept as `Other` so type ids stay
//! aligned. Every offset is checked: a truncated section is an error, never a panic.

use crate::error::BpfError;

const BTF_MAGIC: u16 = 0xeb9f;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    pub type_id: u32,
    pub bit_offset: u32,
    /// Nonzero for a bitfield.
    pub bitfield_size: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BtfType {
    /// Type id 0.
    Void,
    Int {
        name: String,
        size: u32,
        signed: bool,
        is_bool: bool,
        bits: u32,
    },
    Ptr {
        target: u32,
    },
    Array {
        elem: u32,
        nelems: u32,
    },
    Struct {
        name: String,
        size: u32,
        members: Vec<Member>,
        is_union: bool,
    },
    Enum {
        name: String,
        size: u32,
        signed: bool,
    },
    Typedef {
        name: String,
        target: u32,
    },
    /// const, volatile, restrict, type_tag: the underlying type, unqualified.
    Qualifier {
        target: u32,
        is_const: bool,
    },
    Var {
        name: String,
        target: u32,
    },
    Datasec {
        name: String,
        /// The VAR type ids it holds (its `btf_var_secinfo`s).
        vars: Vec<u32>,
    },
    Other,
}

#[derive(Clone, Debug, Default)]
pub struct Btf {
    pub types: Vec<BtfType>,
    /// The string table (.BTF.ext names its sections through it).
    pub strs: Vec<u8>,
}

fn rd_u32(b: &[u8], at: usize) -> Result<u32, BpfError> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| BpfError::Btf(format!("truncated at byte {at}")))
}

fn rd_u16(b: &[u8], at: usize) -> Result<u16, BpfError> {
    b.get(at..at + 2)
        .map(|s| u16::from_le_bytes([s[0], s[1]]))
        .ok_or_else(|| BpfError::Btf(format!("truncated at byte {at}")))
}

/// The NUL-terminated string at `off` of a string table.
pub fn cstr(strs: &[u8], off: u32) -> Result<String, BpfError> {
    let start = off as usize;
    let tail = strs
        .get(start..)
        .ok_or_else(|| BpfError::Btf(format!("string offset {off} out of range")))?;
    let end = tail.iter().position(|&c| c == 0).unwrap_or(tail.len());
    Ok(String::from_utf8_lossy(&tail[..end]).into_owned())
}

impl Btf {
    pub fn parse(data: &[u8]) -> Result<Btf, BpfError> {
        if rd_u16(data, 0)? != BTF_MAGIC {
            return Err(BpfError::Btf(
                "bad magic (big-endian objects are not supported)".into(),
            ));
        }
        let hdr_len = rd_u32(data, 4)? as usize;
        let type_off = rd_u32(data, 8)? as usize;
        let type_len = rd_u32(data, 12)? as usize;
        let str_off = rd_u32(data, 16)? as usize;
        let str_len = rd_u32(data, 20)? as usize;
        let section = |off: usize, len: usize| {
            hdr_len
                .checked_add(off)
                .and_then(|s| Some((s, s.checked_add(len)?)))
                .and_then(|(s, e)| data.get(s..e))
                .ok_or_else(|| BpfError::Btf("type or string section out of range".into()))
        };
        let types_raw = section(type_off, type_len)?;
        let strs = section(str_off, str_len)?;
        let mut types = vec![BtfType::Void];
        let mut at = 0usize;
        while at < types_raw.len() {
            let name = cstr(strs, rd_u32(types_raw, at)?)?;
            let info = rd_u32(types_raw, at + 4)?;
            let size_or_type = rd_u32(types_raw, at + 8)?;
            at += 12;
            let vlen = (info & 0xffff) as usize;
            let kind = (info >> 24) & 0x1f;
            let kind_flag = info >> 31 == 1;
            let ty = match kind {
                1 => {
                    let enc = rd_u32(types_raw, at)?;
                    at += 4;
                    BtfType::Int {
                        name,
                        size: size_or_type,
                        signed: (enc >> 24) & 1 == 1,
                        is_bool: (enc >> 24) & 4 == 4,
                        bits: enc & 0xff,
                    }
                }
                2 => BtfType::Ptr {
                    target: size_or_type,
                },
                3 => {
                    let elem = rd_u32(types_raw, at)?;
                    let nelems = rd_u32(types_raw, at + 8)?;
                    at += 12;
                    BtfType::Array { elem, nelems }
                }
                4 | 5 => {
                    let mut members = Vec::with_capacity(vlen.min(1024));
                    for _ in 0..vlen {
                        let mname = cstr(strs, rd_u32(types_raw, at)?)?;
                        let type_id = rd_u32(types_raw, at + 4)?;
                        let off = rd_u32(types_raw, at + 8)?;
                        at += 12;
                        let (bit_offset, bitfield_size) = if kind_flag {
                            (off & 0xff_ffff, off >> 24)
                        } else {
                            (off, 0)
                        };
                        members.push(Member {
                            name: mname,
                            type_id,
                            bit_offset,
                            bitfield_size,
                        });
                    }
                    BtfType::Struct {
                        name,
                        size: size_or_type,
                        members,
                        is_union: kind == 5,
                    }
                }
                6 => {
                    at += 8 * vlen;
                    BtfType::Enum {
                        name,
                        size: size_or_type,
                        signed: kind_flag,
                    }
                }
                19 => {
                    at += 12 * vlen;
                    BtfType::Enum {
                        name,
                        size: size_or_type,
                        signed: kind_flag,
                    }
                }
                8 => BtfType::Typedef {
                    name,
                    target: size_or_type,
                },
                9 | 11 | 18 => BtfType::Qualifier {
                    target: size_or_type,
                    is_const: false,
                },
                10 => BtfType::Qualifier {
                    target: size_or_type,
                    is_const: true,
                },
                13 => {
                    at += 8 * vlen;
                    BtfType::Other
                }
                14 => {
                    at += 4;
                    BtfType::Var {
                        name,
                        target: size_or_type,
                    }
                }
                15 => {
                    let mut vars = Vec::with_capacity(vlen.min(1024));
                    for _ in 0..vlen {
                        vars.push(rd_u32(types_raw, at)?);
                        at += 12;
                    }
                    BtfType::Datasec { name, vars }
                }
                17 => {
                    at += 4;
                    BtfType::Other
                }
                7 | 12 | 16 => BtfType::Other,
                k => return Err(BpfError::Btf(format!("unknown BTF kind {k}"))),
            };
            types.push(ty);
        }
        Ok(Btf {
            types,
            strs: strs.to_vec(),
        })
    }

    pub fn get(&self, id: u32) -> Result<&BtfType, BpfError> {
        self.types
            .get(id as usize)
            .ok_or_else(|| BpfError::Btf(format!("type id {id} out of range")))
    }

    /// Follows typedefs and qualifiers to the type that has a layout. Returns the id too,
    /// and whether a `const` was crossed on the way.
    pub fn resolve(&self, mut id: u32) -> Result<(u32, &BtfType, bool), BpfError> {
        let mut is_const = false;
        for _ in 0..64 {
            match self.get(id)? {
                BtfType::Typedef { target, .. } => id = *target,
                BtfType::Qualifier {
                    target,
                    is_const: c,
                } => {
                    is_const |= *c;
                    id = *target;
                }
                t => return Ok((id, t, is_const)),
            }
        }
        Err(BpfError::Btf(format!("type chain at id {id} too deep")))
    }

    /// Byte size of a type (after `resolve`); arrays of arrays are followed at most 16
    /// deep, so a cyclic (malformed) table is an error rather than endless recursion.
    pub fn size_of(&self, id: u32) -> Result<u32, BpfError> {
        self.size_at_depth(id, 0)
    }

    fn size_at_depth(&self, id: u32, depth: u32) -> Result<u32, BpfError> {
        if depth > 16 {
            return Err(BpfError::Btf(format!(
                "array nesting at type id {id} too deep"
            )));
        }
        let (_, t, _) = self.resolve(id)?;
        Ok(match t {
            BtfType::Int { size, .. } | BtfType::Enum { size, .. } => *size,
            BtfType::Struct { size, .. } => *size,
            BtfType::Ptr { .. } => 8,
            BtfType::Array { elem, nelems } => self
                .size_at_depth(*elem, depth + 1)?
                .saturating_mul(*nelems),
            _ => 0,
        })
    }

    /// The struct with this name, if any.
    pub fn find_struct(&self, want: &str) -> Option<(u32, &BtfType)> {
        self.types.iter().enumerate().find_map(|(i, t)| match t {
            BtfType::Struct { name, .. } if name == want => Some((i as u32, t)),
            _ => None,
        })
    }

    /// The name of the DATASEC that holds VAR `var` (".kconfig", ".ksyms", ".bss"...).
    pub fn datasec_of(&self, var: u32) -> Option<&str> {
        self.types.iter().find_map(|t| match t {
            BtfType::Datasec { name, vars } if vars.contains(&var) => Some(name.as_str()),
            _ => None,
        })
    }

    /// The VAR with this name (a global), if any.
    pub fn find_var(&self, want: &str) -> Option<u32> {
        self.types.iter().enumerate().find_map(|(i, t)| match t {
            BtfType::Var { name, .. } if name == want => Some(i as u32),
            _ => None,
        })
    }
}
