//! The address space of a running callback. A pointer is `region << 32 | offset`; each
//! region is a byte buffer of its own, so every load and store is one match and one
//! bounds check, and no pointer can reach Rust memory outside the buffers.
//!
//! Regions: the stack (512 bytes per call frame, as the kernel's MAX_BPF_STACK), the
//! ctx array of callback arguments (read-only), the socket image (writes only where the
//! kernel's bpf_tcp_ca_btf_struct_access allows), the sample argument (rate_sample or
//! ack_sample, read-only) and one region per global data section (.rodata read-only).

use crate::layout::{RATE_SAMPLE_SIZE, SOCK_SIZE};

pub const REGION_STACK: u64 = 1;
pub const REGION_CTX: u64 = 2;
pub const REGION_SOCK: u64 = 3;
pub const REGION_SAMPLE: u64 = 4;
/// Global section `i` lives in region `REGION_GLOBAL0 + i`.
pub const REGION_GLOBAL0: u64 = 5;

/// Stack bytes per frame (MAX_BPF_STACK) and call depth (MAX_CALL_FRAMES).
pub const FRAME_SIZE: usize = 512;
pub const MAX_FRAMES: usize = 8;

pub const fn addr(region: u64, offset: usize) -> u64 {
    region << 32 | offset as u64
}

#[derive(Clone, Debug)]
pub struct Global {
    pub name: String,
    pub data: Vec<u8>,
    pub writable: bool,
}

#[derive(Clone, Debug)]
pub struct Memory {
    pub stack: Vec<u8>,
    /// Callback arguments as u64s (BPF_PROG reads them from here).
    pub ctx: [u8; 40],
    pub sock: [u8; SOCK_SIZE],
    pub sock_writable: [bool; SOCK_SIZE],
    pub sample: [u8; RATE_SAMPLE_SIZE],
    /// Bytes of `sample` that belong to the current argument.
    pub sample_len: usize,
    pub globals: Vec<Global>,
}

impl Memory {
    pub fn new(globals: Vec<Global>) -> Memory {
        Memory {
            stack: vec![0; FRAME_SIZE * MAX_FRAMES],
            ctx: [0; 40],
            sock: [0; SOCK_SIZE],
            sock_writable: crate::layout::sock_writable_mask(),
            sample: [0; RATE_SAMPLE_SIZE],
            sample_len: 0,
            globals,
        }
    }

    fn span(&self, a: u64, size: usize) -> Result<(&[u8], usize), String> {
        let region = a >> 32;
        let off = (a & 0xffff_ffff) as usize;
        let buf: &[u8] = match region {
            REGION_STACK => &self.stack,
            REGION_CTX => &self.ctx,
            REGION_SOCK => &self.sock,
            REGION_SAMPLE => &self.sample[..self.sample_len],
            r if r >= REGION_GLOBAL0 => match self.globals.get((r - REGION_GLOBAL0) as usize) {
                Some(g) => &g.data,
                None => return Err(format!("access to invalid address {a:#x}")),
            },
            _ => return Err(format!("access to invalid address {a:#x}")),
        };
        if off.checked_add(size).is_some_and(|end| end <= buf.len()) {
            Ok((buf, off))
        } else {
            Err(format!(
                "{size}-byte access at {a:#x} out of bounds ({})",
                region_name(region)
            ))
        }
    }

    pub fn load(&self, a: u64, size: usize) -> Result<u64, String> {
        let (buf, off) = self.span(a, size)?;
        let mut b = [0u8; 8];
        b[..size].copy_from_slice(&buf[off..off + size]);
        Ok(u64::from_le_bytes(b))
    }

    pub fn store(&mut self, a: u64, size: usize, val: u64) -> Result<(), String> {
        self.span(a, size)?; // bounds first, then the region's write rule
        let region = a >> 32;
        let off = (a & 0xffff_ffff) as usize;
        let bytes = &val.to_le_bytes()[..size];
        let buf: &mut [u8] = match region {
            REGION_STACK => &mut self.stack,
            REGION_SOCK => {
                if !self.sock_writable[off..off + size].iter().all(|&w| w) {
                    return Err(format!(
                        "write to socket byte {off}, a field BPF congestion control may not write"
                    ));
                }
                &mut self.sock
            }
            r if r >= REGION_GLOBAL0 => {
                let g = &mut self.globals[(r - REGION_GLOBAL0) as usize];
                if !g.writable {
                    return Err(format!("write to read-only section {}", g.name));
                }
                &mut g.data
            }
            r => return Err(format!("write to read-only {}", region_name(r))),
        };
        buf[off..off + size].copy_from_slice(bytes);
        Ok(())
    }
}

fn region_name(r: u64) -> &'static str {
    match r {
        REGION_STACK => "stack",
        REGION_CTX => "callback arguments",
        REGION_SOCK => "socket",
        REGION_SAMPLE => "sample",
        r if r >= REGION_GLOBAL0 => "global data",
        _ => "no region",
    }
}
