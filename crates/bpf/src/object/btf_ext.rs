//! The CO-RE part of .BTF.ext (`struct bpf_core_relo`, include/uapi/linux/bpf.h): for
//! each instruction clang could not give a fixed offset, the local type, the access
//! string ("0:3:1": member 3 of the root struct, then member 1 of that) and what the
//! instruction needs (byte offset, size, existence, bitfield shifts); and line_info
//! (`struct bpf_line_info`), which load-time errors use to name the source line.
//! func_info is skipped.

use crate::error::BpfError;
use crate::object::btf::{cstr, Btf};

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

/// Calls `each(section, record)` for every record of one .BTF.ext subsection
/// (`struct btf_ext_header`: its offset and length at header bytes `at` and `at + 4`,
/// counted after the header): after the record size, blocks of (ELF section name, record
/// count, records). An older header without the subsection, or an empty one, has none.
fn for_each_record(
    ext: &[u8],
    btf: &Btf,
    at: usize,
    what: &str,
    min_size: usize,
    mut each: impl FnMut(&String, &[u8]) -> Result<(), BpfError>,
) -> Result<(), BpfError> {
    let hdr_len = rd(ext, 4)? as usize;
    if hdr_len < at + 8 {
        return Ok(()); // no such subsection in this header version
    }
    let off = rd(ext, at)? as usize;
    let len = rd(ext, at + 4)? as usize;
    let start = hdr_len.saturating_add(off);
    let sec = ext
        .get(start..start.saturating_add(len))
        .ok_or_else(|| BpfError::Btf(format!(".BTF.ext {what} section out of range")))?;
    if sec.is_empty() {
        return Ok(());
    }
    let rec_size = rd(sec, 0)? as usize;
    if rec_size < min_size {
        return Err(BpfError::Btf(format!(
            ".BTF.ext {what} record size {rec_size}"
        )));
    }
    let mut pos = 4;
    while pos < sec.len() {
        let section = cstr(&btf.strs, rd(sec, pos)?)?;
        let n = rd(sec, pos + 4)? as usize;
        pos += 8;
        for _ in 0..n {
            let rec = sec.get(pos..pos.saturating_add(rec_size)).ok_or_else(|| {
                BpfError::Btf(format!(".BTF.ext truncated at byte {}", start + pos))
            })?;
            each(&section, rec)?;
            pos += rec_size;
        }
    }
    Ok(())
}

pub fn parse_core_relos(ext: &[u8], btf: &Btf) -> Result<Vec<CoreRelo>, BpfError> {
    let mut out = Vec::new();
    for_each_record(ext, btf, 24, "CO-RE", 16, |section, rec| {
        let insn_off = rd(rec, 0)?;
        let kind = match rd(rec, 12)? {
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
            type_id: rd(rec, 4)?,
            access: cstr(&btf.strs, rd(rec, 8)?)?,
            kind,
        });
        Ok(())
    })?;
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
    let mut out = Vec::new();
    for_each_record(ext, btf, 16, "line_info", 16, |section, rec| {
        let file = cstr(&btf.strs, rd(rec, 4)?)?;
        out.push(LineInfo {
            section: section.clone(),
            insn_off: rd(rec, 0)?,
            file: file.rsplit('/').next().unwrap_or(&file).to_string(),
            line: rd(rec, 12)? >> 10,
            text: cstr(&btf.strs, rd(rec, 8)?)?.trim().to_string(),
        });
        Ok(())
    })?;
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
