//! A program's parameters are its scalar `const volatile` globals in .rodata, the
//! convention of libbpf skeletons (`skel->rodata->beta = ...` before load): the compiler
//! must read them from memory (volatile), and the kernel verifier then knows them as
//! constants. Here an instance's copy of .rodata gets the new values before the first
//! callback. Bools take `ParamValue::Bool`; integers take a whole `Num` within the type's
//! range (an enum counts as an integer of its size).

use std::collections::BTreeMap;

use tcplab_cc::ParamValue;

use crate::error::BpfError;
use crate::object::btf::BtfType;
use crate::object::loader::{GlobalVar, Program};
use crate::vm::memory::Global;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BpfParamKind {
    Bool,
    /// An integer of `bytes` bytes (1, 2, 4, 8).
    Int {
        signed: bool,
        bytes: u8,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct BpfParam {
    pub name: String,
    pub kind: BpfParamKind,
    /// The initial value in the object.
    pub default: ParamValue,
}

fn kind_of(v: &GlobalVar) -> Option<BpfParamKind> {
    let (signed, size, is_bool) = match &v.ty {
        BtfType::Int {
            signed,
            size,
            is_bool,
            ..
        } => (*signed, *size, *is_bool),
        BtfType::Enum { signed, size, .. } => (*signed, *size, false),
        _ => return None,
    };
    if !matches!(size, 1 | 2 | 4 | 8) || size as usize != v.size {
        return None;
    }
    Some(if is_bool {
        BpfParamKind::Bool
    } else {
        BpfParamKind::Int {
            signed,
            bytes: size as u8,
        }
    })
}

fn read(prog: &Program, v: &GlobalVar, kind: BpfParamKind) -> ParamValue {
    let data = &prog.globals[v.section].data;
    let mut b = [0u8; 8];
    if let Some(src) = data.get(v.offset..v.offset + v.size) {
        b[..v.size].copy_from_slice(src);
    }
    let raw = u64::from_le_bytes(b);
    match kind {
        BpfParamKind::Bool => ParamValue::Bool(raw != 0),
        BpfParamKind::Int {
            signed: true,
            bytes,
        } => {
            let shift = 64 - 8 * u32::from(bytes);
            ParamValue::Num(((raw << shift) as i64 >> shift) as f64)
        }
        BpfParamKind::Int { signed: false, .. } => ParamValue::Num(raw as f64),
    }
}

pub fn list(prog: &Program) -> Vec<BpfParam> {
    prog.rodata_vars
        .iter()
        .filter_map(|v| {
            let kind = kind_of(v)?;
            Some(BpfParam {
                name: v.name.clone(),
                kind,
                default: read(prog, v, kind),
            })
        })
        .collect()
}

fn encode(name: &str, kind: BpfParamKind, value: &ParamValue) -> Result<u64, BpfError> {
    let bad = |why: String| BpfError::Param {
        name: name.to_string(),
        why,
    };
    match (kind, value) {
        (BpfParamKind::Bool, ParamValue::Bool(b)) => Ok(u64::from(*b)),
        (BpfParamKind::Bool, ParamValue::Num(_)) => {
            Err(bad("is a bool; give true or false".into()))
        }
        (BpfParamKind::Int { .. }, ParamValue::Bool(_)) => {
            Err(bad("is an integer, not a bool".into()))
        }
        (BpfParamKind::Int { signed, bytes }, ParamValue::Num(x)) => {
            let bits = 8 * u32::from(bytes);
            let (lo, hi) = if signed {
                (
                    -(2f64.powi(bits as i32 - 1)),
                    2f64.powi(bits as i32 - 1) - 1.0,
                )
            } else {
                (0.0, 2f64.powi(bits as i32) - 1.0)
            };
            if x.fract() != 0.0 || !x.is_finite() {
                return Err(bad(format!("{x} is not a whole number")));
            }
            if *x < lo || *x > hi {
                let t = if signed { "s" } else { "u" };
                return Err(bad(format!("{x} does not fit a {t}{bits} ({lo}..={hi})")));
            }
            Ok(if signed {
                (*x as i64) as u64
            } else {
                *x as u64
            })
        }
    }
}

/// The instance's globals: the object's, with `values` written into .rodata.
pub fn apply(
    prog: &Program,
    values: &BTreeMap<String, ParamValue>,
) -> Result<Vec<Global>, BpfError> {
    let mut globals = prog.globals.clone();
    for (name, value) in values {
        let v = prog
            .rodata_vars
            .iter()
            .find(|v| &v.name == name)
            .ok_or_else(|| BpfError::Param {
                name: name.clone(),
                why: "is not a const volatile global of the program's .rodata".into(),
            })?;
        let kind = kind_of(v).ok_or_else(|| BpfError::Param {
            name: name.clone(),
            why: "is a global of .rodata but not a scalar (bool, integer or enum)".into(),
        })?;
        let raw = encode(name, kind, value)?;
        let data = &mut globals[v.section].data;
        if let Some(dst) = data.get_mut(v.offset..v.offset + v.size) {
            dst.copy_from_slice(&raw.to_le_bytes()[..v.size]);
        }
    }
    Ok(globals)
}

/// The ELF object `elf` (the bytes `prog` was loaded from) with `values` written into
/// its .rodata sections, for loaders that take a file: the kernel backend registers this
/// copy with `bpftool struct_ops register`, as a libbpf skeleton would set
/// `skel->rodata->NAME` before load. Same checks and errors as [`apply`].
pub fn patch_elf(
    prog: &Program,
    elf: &[u8],
    values: &BTreeMap<String, ParamValue>,
) -> Result<Vec<u8>, BpfError> {
    use object::{Object, ObjectSection};

    let globals = apply(prog, values)?;
    let file = object::File::parse(elf).map_err(|e| BpfError::Elf(e.to_string()))?;
    let mut out = elf.to_vec();
    for g in globals.iter().filter(|g| g.name.starts_with(".rodata")) {
        let section = file
            .section_by_name(&g.name)
            .ok_or_else(|| BpfError::Elf(format!("{}: section not in the file", g.name)))?;
        let (offset, size) = section
            .file_range()
            .ok_or_else(|| BpfError::Elf(format!("{}: no bytes in the file", g.name)))?;
        let (offset, size) = (offset as usize, size as usize);
        let dst = out
            .get_mut(offset..offset + size)
            .filter(|d| d.len() == g.data.len())
            .ok_or_else(|| BpfError::Elf(format!("{}: section outside the file", g.name)))?;
        dst.copy_from_slice(&g.data);
    }
    Ok(out)
}
