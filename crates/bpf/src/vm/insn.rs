//! One eBPF instruction (`struct bpf_insn`, include/uapi/linux/bpf.h) and the opcode
//! fields the loader, verifier and interpreter share.

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Insn {
    pub code: u8,
    pub dst: u8,
    pub src: u8,
    pub off: i16,
    pub imm: i32,
}

/// An instruction from its fields (tests and hand-assembled programs).
pub const fn ins(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn {
        code,
        dst,
        src,
        off,
        imm,
    }
}

/// `BPF_PSEUDO_CALL`: a call to another function of the object (imm is pc-relative).
pub const PSEUDO_CALL: u8 = 1;
/// `BPF_PSEUDO_KFUNC_CALL`: after loading, imm is our kfunc id (calls.rs).
pub const PSEUDO_KFUNC_CALL: u8 = 2;
/// `BPF_PSEUDO_FUNC` in an LD_IMM64: a function's address (imm is pc-relative).
pub const PSEUDO_FUNC: u8 = 4;

pub const CLASS_LD: u8 = 0;
pub const CLASS_LDX: u8 = 1;
pub const CLASS_ST: u8 = 2;
pub const CLASS_STX: u8 = 3;
pub const CLASS_ALU: u8 = 4;
pub const CLASS_JMP: u8 = 5;
pub const CLASS_JMP32: u8 = 6;
pub const CLASS_ALU64: u8 = 7;

pub const LD_IMM64: u8 = 0x18;
pub const CALL: u8 = 0x85;
pub const EXIT: u8 = 0x95;

impl Insn {
    pub fn decode(b: &[u8; 8]) -> Insn {
        Insn {
            code: b[0],
            dst: b[1] & 0x0f,
            src: b[1] >> 4,
            off: i16::from_le_bytes([b[2], b[3]]),
            imm: i32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        }
    }

    pub fn class(&self) -> u8 {
        self.code & 7
    }

    /// Width in bytes of a memory access (LDX/ST/STX).
    pub fn mem_size(&self) -> usize {
        match (self.code >> 3) & 3 {
            0 => 4,
            1 => 2,
            2 => 1,
            _ => 8,
        }
    }
}

/// Decodes a code section; a trailing partial instruction is an error.
pub fn decode_all(bytes: &[u8]) -> Option<Vec<Insn>> {
    let chunks = bytes.chunks_exact(8);
    if !chunks.remainder().is_empty() {
        return None;
    }
    Some(
        chunks
            .map(|c| Insn::decode(&[c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect(),
    )
}
