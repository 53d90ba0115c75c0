//! The CO-RE part of .BTF.ext (`struct bpf_core_relo`, include/uapi/linux/bpf.h): for
//! each instruction clang could not give a fixed offset, the local type, the access
//! string ("0:3:1": member 3 of the root struct, then member 1 of that) and what the
//! instruction needs (byte offset, size, existence, bitfield shifts); and line_info
//! (`struct bpf_line_info`), which load-time errors use to name the source line.
//! func_info is skipped.

use crate::btf::{cstr, Btf};
use crate::error::BpfError;

/// `enum bpf_core_relo_kind`: the field-based kinds we apply; type- and enum-based
/// kinds are refused at load time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoreKind {
    FieldByteOffset,
    FieldByteSize,
    FieldExists,
    FieldSigned,
    FieldLshiftU64,
    FieldRshiftU64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CoreRelo {
    /// Section of the instruction (e.g. "struct_ops").
    pub section: String,
    /// Byte offset of the instruction in that section.
    pub insn_off: u32,
    pub type_id: u32,
    pub access: String,
    pub kind: CoreKind,
}

fn rd(b: &[u8], at: usize) -> Result<u32, BpfError> {
    b.get(at..at + 4)
        .map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
        .ok_or_else(|| BpfError::Btf(format!(".BTF.ext truncated at byte {at}")))
}

pub fn parse_core_relos(ext: &[u8], btf: &Btf) -> Result<Vec<CoreRelo>, BpfError> {
    let hdr_len = rd(ext, 4)? as usize;
    if hdr_len < 32 {
        return Ok(Vec::new()); // no CO-RE section in this header version
    }
    let off = rd(ext, 24)? as usize;
    let len = rd(ext, 28)? as usize;
    let start = hdr_len.saturating_add(off);
    let sec = ext
        .get(start..start.saturating_add(len))
        .ok_or_else(|| BpfError::Btf(".BTF.ext CO-RE section out of range".into()))?;
    if sec.is_empty() {
        return Ok(Vec::new());
    }
    let rec_size = rd(sec, 0)? as usize;
    if rec_size < 16 {
        return Err(BpfError::Btf(format!(
            ".BTF.ext CO-RE record size {rec_size}"
        )));
    }
    let mut out = Vec::new();
    let mut at = 4;
    while at < sec.len() {
        let section = cstr(&btf.strs, rd(sec, at)?)?;
        let n = rd(sec, at + 4)? as usize;
        at += 8;
        for _ in 0..n {
            let insn_off = rd(sec, at)?;
            let type_id = rd(sec, at + 4)?;
            let access = cstr(&btf.strs, rd(sec, at + 8)?)?;
            let kind = match rd(sec, at + 12)? {
                0 => CoreKind::FieldByteOffset,
                1 => CoreKind::FieldByteSize,
                2 => CoreKind::FieldExists,
                3 => CoreKind::FieldSigned,
                4 => CoreKind::FieldLshiftU64,
                5 => CoreKind::FieldRshiftU64,
                k => {
                    return Err(BpfError::Relocation(format!(
                        "kind {k} (type/enum-based) at {section}+{insn_off} is not supported"
                    )))
                }
            };
            out.push(CoreRelo {
                section: section.clone(),
                insn_off,
                type_id,
                access,
                kind,
            });
            at += rec_size;
        }
    }
    Ok(out)
}

/// One `struct bpf_line_info`: the source line an instruction came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineInfo {
    /// Section of the instruction.
    pub section: String,
    /// Byte offset of the first instruction of the line in that section.
    pub insn_off: u32,
    pub file: String,
    pub line: u32,
    /// The source text of the line, as clang recorded it.
    pub text: String,
}

/// The line_info part of .BTF.ext (empty if the object has none).
pub fn parse_line_info(ext: &[u8], btf: &Btf) -> Result<Vec<LineInfo>, BpfError> {
    let hdr_len = rd(ext, 4)? as usize;
    if hdr_len < 24 {
        return Ok(Vec::new());
    }
    let off = rd(ext, 16)? as usize;
    let len = rd(ext, 20)? as usize;
    let start = hdr_len.saturating_add(off);
    let sec = ext
        .get(start..start.saturating_add(len))
        .ok_or_else(|| BpfError::Btf(".BTF.ext line_info section out of range".into()))?;
    if sec.is_empty() {
        return Ok(Vec::new());
    }
    let rec_size = rd(sec, 0)? as usize;
    if rec_size < 16 {
        return Err(BpfError::Btf(format!(
            ".BTF.ext line_info record size {rec_size}"
        )));
    }
    let mut out = Vec::new();
    let mut at = 4;
    while at < sec.len() {
        let section = cstr(&btf.strs, rd(sec, at)?)?;
        let n = rd(sec, at + 4)? as usize;
        at += 8;
        for _ in 0..n {
            let file = cstr(&btf.strs, rd(sec, at + 4)?)?;
            out.push(LineInfo {
                section: section.clone(),
                insn_off: rd(sec, at)?,
                file: file.rsplit('/').next().unwrap_or(&file).to_string(),
                line: rd(sec, at + 12)? >> 10,
                text: cstr(&btf.strs, rd(sec, at + 8)?)?.trim().to_string(),
            });
            at += rec_size;
        }
    }
    Ok(out)
}

/// "file.c:42: `source`" for the instruction at `insn_off` of `section`: the last line
/// record at or before it.
pub fn line_at(lines: &[LineInfo], section: &str, insn_off: u32) -> Option<String> {
    lines
        .iter()
        .filter(|l| l.section == section && l.insn_off <= insn_off)
        .max_by_key(|l| l.insn_off)
        .map(|l| format!("{}:{}: `{}`", l.file, l.line, l.text))
}
