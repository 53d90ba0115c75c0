//! The address space of a running callback. A pointer is `region << 32 | offset`; each
//! region is a byte buffer of its own, so every load and store is one match and one
//! bounds check, and no pointer can reach Rust memory outside the buffers.
//!
//! Regions: the stack (512 bytes per call frame, as the kernel's MAX_BPF_STACK), the
//! ctx array of callback arguments (read-only), the socket image (writes only where the
//! kernel's bpf_tcp_ca_btf_struct_access allows), the sample argument (rate_sample or
//! ack_sample, read-only) and one region per global data section (.rodata read-only).
//!
//! Each value of a map is a region of its own (`map_value_addr`): an access outside
//! `[value, value + value_size)` faults with the kernel verifier's words ("invalid
//! access to map value, value_size=16 off=16 size=8"), where one buffer for the whole
//! map let an index past the end of one value write its neighbour. The region number
//! codes the map's storage (a `Global` with `value_size`) and the value's slot; the
//! storage itself is reachable only through such addresses.
//!
//! Deviation: the stack is checked as one region of 8 frames; the kernel verifier also
//! confines each frame to its 512 bytes below r10, which a clang-built program never
//! leaves anyway.

use crate::layout::{RATE_SAMPLE_SIZE, SOCK_SIZE};

pub const REGION_STACK: u64 = 1;
pub const REGION_CTX: u64 = 2;
pub const REGION_SOCK: u64 = 3;
pub const REGION_SAMPLE: u64 = 4;
/// Global section `i` lives in region `REGION_GLOBAL0 + i`.
pub const REGION_GLOBAL0: u64 = 5;
/// A function pointer (LD_IMM64 BPF_PSEUDO_FUNC, bpf_loop's callback) is this region
/// and the function's pc: no section has this number, so no access goes through one.
pub const REGION_FUNC: u64 = 0xffff_ffff;
/// A map value's region: this bit, the storage's global index (11 bits, below
/// `MAX_VALUE_GLOBAL`) and the value's slot (20 bits). The JIT's region table has no
/// entry this high, so its accesses take the call out to `Memory`.
pub const REGION_MAP_VALUE: u64 = 0x8000_0000;
/// Globals from this index on cannot hold a map's values (REGION_FUNC's bits).
pub const MAX_VALUE_GLOBAL: usize = 0x7ff;
/// Slots per map (`MAX_MAP_BYTES` / 8 is 2^17, well below).
pub const MAX_VALUE_SLOTS: usize = 1 << 20;

/// Stack bytes per frame (MAX_BPF_STACK) and call depth (MAX_CALL_FRAMES).
pub const FRAME_SIZE: usize = 512;
pub const MAX_FRAMES: usize = 8;

pub const fn addr(region: u64, offset: usize) -> u64 {
    region << 32 | offset as u64
}

/// The first region id of map handles (a map as a program holds it, host/maps.rs): far
/// above any real region.
const HANDLE_REGION0: u64 = 0x4000_0000;

/// What a program holds for map `k`.
pub const fn map_handle(k: usize) -> u64 {
    addr(HANDLE_REGION0 + k as u64, 0)
}

/// The map a handle names, if it is one.
pub fn map_of_handle(a: u64, n: usize) -> Option<usize> {
    let r = a >> 32;
    (a & 0xffff_ffff == 0 && r >= HANDLE_REGION0 && ((r - HANDLE_REGION0) as usize) < n)
        .then(|| (r - HANDLE_REGION0) as usize)
}

/// The address of value `slot` of the map whose storage is global `global`.
pub const fn map_value_addr(global: usize, slot: usize) -> u64 {
    addr(REGION_MAP_VALUE | (global as u64) << 20 | slot as u64, 0)
}

/// The (global, slot) of a map value's region `r`.
#[inline(always)]
fn map_value_of(r: u64) -> Option<(usize, usize)> {
    let g = ((r >> 20) & 0x7ff) as usize;
    (r & REGION_MAP_VALUE != 0 && r <= 0xffff_ffff && g < MAX_VALUE_GLOBAL)
        .then_some((g, (r & 0xf_ffff) as usize))
}

#[derive(Clone, Debug)]
pub struct Global {
    pub name: String,
    pub data: Vec<u8>,
    pub writable: bool,
    /// A map's values (host/maps.rs), each `value_size` bytes at a multiple of 8: reached
    /// only through `map_value_addr`, one value per region. None: a global section.
    pub value_size: Option<usize>,
}

impl Global {
    /// A global data section (.data, .rodata, .bss, .kconfig).
    pub fn section(name: &str, data: Vec<u8>, writable: bool) -> Global {
        Global {
            name: name.to_string(),
            data,
            writable,
            value_size: None,
        }
    }

    /// The byte range of value `slot` in `data`, if the map has that slot.
    fn value_range(&self, slot: usize) -> Option<std::ops::Range<usize>> {
        let size = self.value_size?;
        let at = slot.checked_mul(size.next_multiple_of(8))?;
        (at + size <= self.data.len()).then_some(at..at + size)
    }
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

    /// The bytes of region `r` as a program may read them.
    #[inline(always)]
    fn region(&self, r: u64) -> Option<&[u8]> {
        Some(match r {
            REGION_SOCK => &self.sock,
            REGION_STACK => &self.stack,
            REGION_SAMPLE => &self.sample[..self.sample_len],
            REGION_CTX => &self.ctx,
            r if r >= REGION_MAP_VALUE => {
                let (g, slot) = map_value_of(r)?;
                let g = self.globals.get(g)?;
                &g.data[g.value_range(slot)?]
            }
            r if r >= REGION_GLOBAL0 => {
                let g = self.globals.get((r - REGION_GLOBAL0) as usize)?;
                if g.value_size.is_some() {
                    return None;
                }
                &g.data
            }
            _ => return None,
        })
    }

    /// As `region`, for writing: a map value's bytes (maps are writable to programs).
    #[inline(always)]
    fn map_value_mut(&mut self, r: u64) -> Option<&mut [u8]> {
        let (g, slot) = map_value_of(r)?;
        let g = self.globals.get_mut(g)?;
        let range = g.value_range(slot)?;
        Some(&mut g.data[range])
    }

    /// The fault of an access of `size` bytes at `a` that failed its bounds check.
    #[cold]
    fn bad_access(&self, a: u64, size: usize) -> String {
        let r = a >> 32;
        let off = (a & 0xffff_ffff) as u32;
        // An offset of 2^31 or more is a negative one from the next region (a pointer
        // moved below its value's start borrows from the region bits).
        let (r, off) = if off >= 0x8000_0000 {
            (r + 1, i64::from(off as i32))
        } else {
            (r, i64::from(off))
        };
        if let Some((g, slot)) = map_value_of(r) {
            if let Some(m) = self
                .globals
                .get(g)
                .filter(|m| m.value_range(slot).is_some())
            {
                // The kernel verifier's words (check_mem_region_access).
                return format!(
                    "invalid access to map value, value_size={} off={off} size={size} ({})",
                    m.value_size.unwrap_or(0),
                    m.name
                );
            }
        }
        bad_access(a, size)
    }

    /// A load of `N` (1, 2, 4, 8) bytes: the interpreter's per-opcode fast path.
    #[inline(always)]
    pub fn load_n<const N: usize>(&self, a: u64) -> Result<u64, String> {
        let off = (a & 0xffff_ffff) as usize;
        let b: &[u8; N] = self
            .region(a >> 32)
            .and_then(|buf| buf.get(off..off.checked_add(N)?))
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| self.bad_access(a, N))?;
        let mut w = [0u8; 8];
        w[..N].copy_from_slice(b);
        Ok(u64::from_le_bytes(w))
    }

    #[inline(always)]
    pub fn load(&self, a: u64, size: usize) -> Result<u64, String> {
        let off = (a & 0xffff_ffff) as usize;
        let b = self
            .region(a >> 32)
            .and_then(|buf| buf.get(off..off.checked_add(size)?))
            .ok_or_else(|| self.bad_access(a, size))?;
        Ok(match *b {
            [x] => u64::from(x),
            [x, y] => u64::from(u16::from_le_bytes([x, y])),
            [x0, x1, x2, x3] => u64::from(u32::from_le_bytes([x0, x1, x2, x3])),
            [x0, x1, x2, x3, x4, x5, x6, x7] => {
                u64::from_le_bytes([x0, x1, x2, x3, x4, x5, x6, x7])
            }
            _ => return Err(bad_access(a, size)),
        })
    }

    /// A store of `size` (1, 2, 4, 8) bytes.
    #[inline]
    pub fn store(&mut self, a: u64, size: usize, val: u64) -> Result<(), String> {
        match size {
            1 => self.store_n::<1>(a, val),
            2 => self.store_n::<2>(a, val),
            4 => self.store_n::<4>(a, val),
            8 => self.store_n::<8>(a, val),
            _ => Err(bad_access(a, size)),
        }
    }

    /// A store of `N` bytes: the width a constant, so the copy is one move (a store of
    /// a run-time width called memcpy, 2 % of a BPF BBR run).
    #[inline(always)]
    pub fn store_n<const N: usize>(&mut self, a: u64, val: u64) -> Result<(), String> {
        let region = a >> 32;
        let off = (a & 0xffff_ffff) as usize;
        let end = off + N;
        let buf: &mut [u8] = match region {
            REGION_SOCK => {
                let w = self
                    .sock_writable
                    .get(off..end)
                    .ok_or_else(|| bad_access(a, N))?;
                if !w.iter().all(|&w| w) {
                    return Err(format!(
                        "write to socket byte {off}, a field BPF congestion control may not write"
                    ));
                }
                &mut self.sock
            }
            REGION_STACK => &mut self.stack,
            r if r >= REGION_MAP_VALUE && map_value_of(r).is_some() => {
                let fits = self.region(r).is_some_and(|v| end <= v.len());
                if !fits {
                    return Err(self.bad_access(a, N));
                }
                self.map_value_mut(r).ok_or_else(|| bad_access(a, N))?
            }
            r if r >= REGION_GLOBAL0 => {
                let g = self
                    .globals
                    .get_mut((r - REGION_GLOBAL0) as usize)
                    .filter(|g| g.value_size.is_none())
                    .ok_or_else(|| bad_access(a, N))?;
                if !g.writable {
                    return Err(format!("write to read-only section {}", g.name));
                }
                &mut g.data
            }
            REGION_CTX | REGION_SAMPLE => {
                if self.region(region).and_then(|b| b.get(off..end)).is_none() {
                    return Err(bad_access(a, N));
                }
                return Err(format!("write to read-only {}", region_name(region)));
            }
            _ => return Err(bad_access(a, N)),
        };
        let dst: &mut [u8; N] = buf
            .get_mut(off..end)
            .and_then(|d| d.try_into().ok())
            .ok_or_else(|| bad_access(a, N))?;
        let v = val.to_le_bytes();
        dst.copy_from_slice(&v[..N]);
        Ok(())
    }
}

impl Memory {
    /// `n` bytes at `a` (a helper's pointer argument), bounds-checked.
    pub fn read_bytes(&self, a: u64, n: usize) -> Result<Vec<u8>, String> {
        let off = (a & 0xffff_ffff) as usize;
        self.region(a >> 32)
            .and_then(|buf| buf.get(off..off.checked_add(n)?))
            .map(<[u8]>::to_vec)
            .ok_or_else(|| self.bad_access(a, n))
    }

    /// Writes `b` at `a` under the same rules as a program's stores.
    pub fn write_bytes(&mut self, a: u64, b: &[u8]) -> Result<(), String> {
        for (k, &v) in b.iter().enumerate() {
            self.store(a.wrapping_add(k as u64), 1, u64::from(v))?;
        }
        Ok(())
    }
}

#[cold]
fn bad_access(a: u64, size: usize) -> String {
    let region = a >> 32;
    if region == REGION_FUNC {
        return format!("{size}-byte access through function pointer {a:#x}");
    }
    if matches!(
        region,
        REGION_STACK | REGION_CTX | REGION_SOCK | REGION_SAMPLE
    ) || region >= REGION_GLOBAL0
    {
        format!(
            "{size}-byte access at {a:#x} out of bounds ({})",
            region_name(region)
        )
    } else {
        format!("access to invalid address {a:#x}")
    }
}

fn region_name(r: u64) -> &'static str {
    match r {
        REGION_STACK => "stack",
        REGION_CTX => "callback arguments",
        REGION_SOCK => "socket",
        REGION_SAMPLE => "sample",
        REGION_MAP_VALUE..=0xffff_fffe => "map value",
        r if r >= REGION_GLOBAL0 => "global data",
        _ => "no region",
    }
}
