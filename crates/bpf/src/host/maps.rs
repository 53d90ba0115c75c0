//! Maps declared in `.maps` the BTF way (libbpf's bpf_object__init_user_btf_maps:
//! `__uint(type, BPF_MAP_TYPE_HASH); __uint(max_entries, 16); __type(key, u32);
//! __type(value, struct x);` make a struct whose members are pointers, the numbers
//! coded as array lengths) and the helpers on them (kernel/bpf/arraymap.c, hashtab.c,
//! net/core/bpf_sk_storage.c).
//!
//! A map's values live in a writable `Global` appended after the sections, and each
//! value is a region of its own (memory.rs `map_value_addr`), so the pointer
//! `bpf_map_lookup_elem` returns is an address the interpreter bounds-checks against
//! that one value: an index past its end faults ("invalid access to map value,
//! value_size=.. off=.. size=..") instead of reaching the next entry; the program holds `map_handle(k)` for map `k`, an
//! address no region answers to (reading it faults, as dereferencing a map pointer is
//! refused by the verifier). Maps belong to the loaded program, like the globals.
//!
//! Types: ARRAY and PERCPU_ARRAY (one CPU: the simulator runs one event at a time, so a
//! per-CPU array is an array), HASH, SK_STORAGE (one value per socket, keyed by the
//! socket, created by `bpf_sk_storage_get` with BPF_SK_STORAGE_GET_F_CREATE), and
//! PROG_ARRAY for `bpf_tail_call`: its slots are fixed when the object loads, from the
//! map's `.values = { [i] = &prog }` (libbpf's static initialisation; nothing else can
//! fill it for a struct_ops program: user space does not, and a program may not update
//! it), so they live in the loaded program (`prog_slots`), not in a region.
//!
//! Deviations: a HASH map's deleted slot is reused by the next insert (the kernel frees
//! it after an RCU grace period, so a pointer a program still holds to it may then see
//! the new element's value here); BPF_F_LOCK and spin locks are not supported (refused
//! at load by their flag); update flags BPF_ANY/BPF_NOEXIST/BPF_EXIST are honoured.

use std::collections::HashMap;

use crate::error::BpfError;
use crate::object::btf::{Btf, BtfType};
// The handle encoding is the machine's (an address the interpreter and verifier decode);
// re-exported so the loader and the helpers keep asking maps for it.
pub use crate::vm::memory::{map_handle, map_of_handle};
use crate::vm::memory::{map_value_addr, Global, MAX_VALUE_GLOBAL};

/// `enum bpf_map_type` numbers (include/uapi/linux/bpf.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapKind {
    Hash = 1,
    Array = 2,
    ProgArray = 3,
    PercpuArray = 6,
    SkStorage = 24,
}

#[derive(Clone, Debug)]
pub struct MapDef {
    pub name: String,
    pub kind: MapKind,
    pub key_size: usize,
    pub value_size: usize,
    pub max_entries: usize,
    /// Index of the values' region among the globals.
    pub region: usize,
    /// PROG_ARRAY: the program (entry pc, name) in each slot, `max_entries` of them.
    pub prog_slots: Vec<Option<(usize, String)>>,
}

/// The largest values region of a map (as for global sections): 1 MiB.
const MAX_MAP_BYTES: usize = 1 << 20;

fn bad(name: &str, why: impl Into<String>) -> BpfError {
    BpfError::Map {
        name: name.to_string(),
        why: why.into(),
    }
}

/// The number an `__uint(field, N)` member codes: `int (*field)[N]`.
fn uint_member(btf: &Btf, type_id: u32) -> Option<usize> {
    let (_, t, _) = btf.resolve(type_id).ok()?;
    let BtfType::Ptr { target } = t else {
        return None;
    };
    match btf.resolve(*target).ok()?.1 {
        BtfType::Array { nelems, .. } => Some(*nelems as usize),
        _ => None,
    }
}

/// The size of the type an `__type(field, T)` member points to.
fn type_member(btf: &Btf, type_id: u32) -> Option<usize> {
    let (_, t, _) = btf.resolve(type_id).ok()?;
    let BtfType::Ptr { target } = t else {
        return None;
    };
    btf.size_of(*target).ok().map(|s| s as usize)
}

/// The byte offset of the `values` member (`__array(values, ...)`) in `.maps` variable
/// `name`'s struct: where libbpf reads a PROG_ARRAY's initial programs.
pub fn values_offset(btf: &Btf, name: &str) -> Option<usize> {
    let BtfType::Var { target, .. } = btf.get(btf.find_var(name)?).ok()? else {
        return None;
    };
    let (_, BtfType::Struct { members, .. }, _) = btf.resolve(*target).ok()? else {
        return None;
    };
    let m = members.iter().find(|m| m.name == "values")?;
    Some((m.bit_offset / 8) as usize)
}

/// The map definition of `.maps` variable `name` (its BTF VAR), its values region
/// appended to `globals`.
pub fn define(btf: &Btf, name: &str, globals: &mut Vec<Global>) -> Result<MapDef, BpfError> {
    let var = btf.find_var(name).ok_or_else(|| {
        bad(
            name,
            "no BTF for it (declare maps the BTF way, in SEC(\".maps\"))",
        )
    })?;
    let BtfType::Var { target, .. } = btf.get(var)? else {
        return Err(bad(name, "not a variable"));
    };
    let (_, BtfType::Struct { members, .. }, _) = btf.resolve(*target)? else {
        return Err(bad(name, "not a struct of __uint/__type members"));
    };
    let mut kind = None;
    let (mut key_size, mut value_size, mut max_entries, mut flags) = (None, None, None, 0);
    let mut has_values = false;
    for m in members {
        match m.name.as_str() {
            "type" => kind = uint_member(btf, m.type_id),
            "max_entries" => max_entries = uint_member(btf, m.type_id),
            "key_size" => key_size = uint_member(btf, m.type_id),
            "value_size" => value_size = uint_member(btf, m.type_id),
            "key" => key_size = type_member(btf, m.type_id),
            "value" => value_size = type_member(btf, m.type_id),
            // `__array(values, ...)`: a PROG_ARRAY's initial programs (object/loader.rs).
            "values" => has_values = true,
            "map_flags" => flags = uint_member(btf, m.type_id).unwrap_or(0),
            "pinning" | "numa_node" | "map_extra" => {}
            other => return Err(bad(name, format!("member {other} is not supported"))),
        }
    }
    let kind = match kind {
        Some(1) => MapKind::Hash,
        Some(2) => MapKind::Array,
        Some(3) => MapKind::ProgArray,
        Some(6) => MapKind::PercpuArray,
        Some(24) => MapKind::SkStorage,
        Some(t) => {
            return Err(bad(
                name,
                format!("map type {t}; the simulator has ARRAY (2), PERCPU_ARRAY (6), HASH (1), PROG_ARRAY (3) and SK_STORAGE (24)"),
            ))
        }
        None => return Err(bad(name, "no __uint(type, ...)")),
    };
    if has_values && kind != MapKind::ProgArray {
        return Err(bad(name, "`values` initialises only a PROG_ARRAY here"));
    }
    if kind == MapKind::ProgArray {
        // libbpf gives a PROG_ARRAY declared with `values` 4-byte values (program fds);
        // the kernel takes no other size (fd_array_map_alloc_check).
        value_size = Some(value_size.unwrap_or(4));
        if key_size != Some(4) || value_size != Some(4) {
            return Err(bad(name, "a PROG_ARRAY's key and value are 4 bytes"));
        }
    }
    let key_size = key_size.ok_or_else(|| bad(name, "no key type or key_size"))?;
    let value_size = value_size.ok_or_else(|| bad(name, "no value type or value_size"))?;
    let max_entries = max_entries.unwrap_or(0);
    // BPF_F_NO_PREALLOC (1) is what SK_STORAGE requires and changes nothing here;
    // other flags (BPF_F_RDONLY_PROG, BPF_F_MMAPABLE, ...) are refused.
    if flags & !1 != 0 {
        return Err(bad(
            name,
            format!("map_flags {flags:#x}: only BPF_F_NO_PREALLOC is supported"),
        ));
    }
    if value_size == 0 || key_size == 0 {
        return Err(bad(name, "key and value must have a size"));
    }
    let initial = match kind {
        MapKind::Array | MapKind::PercpuArray | MapKind::ProgArray => {
            if key_size != 4 {
                return Err(bad(
                    name,
                    format!("an array's key is 4 bytes, not {key_size}"),
                ));
            }
            max_entries
        }
        MapKind::Hash => max_entries,
        MapKind::SkStorage => {
            if key_size != 4 || max_entries != 0 {
                return Err(bad(
                    name,
                    "SK_STORAGE needs an int key and max_entries 0 (as the kernel)",
                ));
            }
            0
        }
    };
    if initial == 0 && kind != MapKind::SkStorage {
        return Err(bad(name, "max_entries must be > 0"));
    }
    let bytes = initial.saturating_mul(value_size.next_multiple_of(8));
    if bytes > MAX_MAP_BYTES {
        return Err(bad(
            name,
            format!("{bytes} bytes of values, more than {MAX_MAP_BYTES}"),
        ));
    }
    if globals.len() >= MAX_VALUE_GLOBAL {
        return Err(bad(name, "too many global sections and maps"));
    }
    globals.push(Global {
        name: format!("map {name}"),
        data: vec![0; bytes],
        writable: true,
        value_size: Some(value_size),
    });
    Ok(MapDef {
        name: name.to_string(),
        kind,
        key_size,
        value_size,
        max_entries,
        region: globals.len() - 1,
        prog_slots: if kind == MapKind::ProgArray {
            vec![None; max_entries]
        } else {
            Vec::new()
        },
    })
}

/// The run-time state of one map besides its values: which slot holds which key.
#[derive(Clone, Debug, Default)]
pub struct MapState {
    slots: HashMap<Vec<u8>, usize>,
    free: Vec<usize>,
    next: usize,
}

/// BPF_NOEXIST / BPF_EXIST of bpf_map_update_elem.
const BPF_NOEXIST: u64 = 1;
const BPF_EXIST: u64 = 2;
/// -ENOENT, -EEXIST, -E2BIG, -EINVAL as the helpers return them.
pub const ENOENT: u64 = -2i64 as u64;
const EEXIST: u64 = -17i64 as u64;
const E2BIG: u64 = -7i64 as u64;
const EINVAL: u64 = -22i64 as u64;

impl MapDef {
    fn stride(&self) -> usize {
        self.value_size.next_multiple_of(8)
    }

    fn value_addr(&self, slot: usize) -> u64 {
        map_value_addr(self.region, slot)
    }

    /// The slot of `key`, if present (arrays: every index below max_entries).
    fn find(&self, st: &MapState, key: &[u8]) -> Option<usize> {
        match self.kind {
            MapKind::Array | MapKind::PercpuArray => {
                let i = u32::from_le_bytes(key.try_into().ok()?) as usize;
                (i < self.max_entries).then_some(i)
            }
            MapKind::ProgArray => None,
            MapKind::Hash | MapKind::SkStorage => st.slots.get(key).copied(),
        }
    }

    /// `bpf_map_lookup_elem`: the value's address or 0 (NULL).
    pub fn lookup(&self, st: &MapState, key: &[u8]) -> u64 {
        self.find(st, key).map_or(0, |s| self.value_addr(s))
    }

    /// A new slot for `key` (hash and sk_storage), its value zeroed; None when full.
    fn insert(&self, st: &mut MapState, key: &[u8], globals: &mut [Global]) -> Option<usize> {
        let slot = match st.free.pop() {
            Some(s) => s,
            None => {
                let cap = match self.kind {
                    MapKind::SkStorage => MAX_MAP_BYTES / self.stride(),
                    _ => self.max_entries,
                };
                if st.next >= cap {
                    return None;
                }
                st.next += 1;
                st.next - 1
            }
        };
        let data = &mut globals[self.region].data;
        let end = (slot + 1) * self.stride();
        if data.len() < end {
            data.resize(end, 0);
        }
        data[slot * self.stride()..end].fill(0);
        st.slots.insert(key.to_vec(), slot);
        Some(slot)
    }

    /// `bpf_map_update_elem(map, key, value, flags)`: 0 or a negative errno.
    pub fn update(
        &self,
        st: &mut MapState,
        key: &[u8],
        value: &[u8],
        flags: u64,
        globals: &mut [Global],
    ) -> u64 {
        if flags > BPF_EXIST {
            return EINVAL;
        }
        let slot = match (self.find(st, key), self.kind) {
            (Some(_), _) if flags == BPF_NOEXIST => return EEXIST,
            (Some(s), _) => s,
            (None, MapKind::Array | MapKind::PercpuArray | MapKind::ProgArray) => return E2BIG,
            (None, _) if flags == BPF_EXIST => return ENOENT,
            (None, _) => match self.insert(st, key, globals) {
                Some(s) => s,
                None => return E2BIG,
            },
        };
        let at = slot * self.stride();
        globals[self.region].data[at..at + self.value_size].copy_from_slice(value);
        0
    }

    /// `bpf_map_delete_elem`: 0, -ENOENT, or -EINVAL for an array (as arraymap.c).
    pub fn delete(&self, st: &mut MapState, key: &[u8]) -> u64 {
        match self.kind {
            MapKind::Array | MapKind::PercpuArray | MapKind::ProgArray => EINVAL,
            _ => match st.slots.remove(key) {
                Some(s) => {
                    st.free.push(s);
                    0
                }
                None => ENOENT,
            },
        }
    }

    /// Every entry (key bytes, value bytes) in key order: an array's every index, a
    /// hash's keys, an SK_STORAGE's sockets (keyed by the simulator's socket id, 8
    /// bytes); for `bpf_maps.json` at the end of a run (as `bpftool map dump`).
    pub fn entries(&self, st: &MapState, globals: &[Global]) -> Vec<(Vec<u8>, Vec<u8>)> {
        let value = |slot: usize| {
            let data = &globals[self.region].data;
            let at = slot * self.stride();
            data.get(at..at + self.value_size)
                .map_or_else(|| vec![0; self.value_size], <[u8]>::to_vec)
        };
        let mut out: Vec<(Vec<u8>, Vec<u8>)> = match self.kind {
            MapKind::Array | MapKind::PercpuArray => (0..self.max_entries)
                .map(|i| ((i as u32).to_le_bytes().to_vec(), value(i)))
                .collect(),
            // The programs' slots are not values; the kernel's dump gives program ids.
            MapKind::ProgArray => Vec::new(),
            MapKind::Hash | MapKind::SkStorage => st
                .slots
                .iter()
                .map(|(k, &s)| (k.clone(), value(s)))
                .collect(),
        };
        out.sort();
        out
    }

    /// `bpf_sk_storage_get(map, sk, value, flags)` for socket `sock`: the value's
    /// address, created (from `init` or zeroed) when `create`; 0 if absent or full.
    pub fn sk_storage_get(
        &self,
        st: &mut MapState,
        sock: u64,
        init: Option<&[u8]>,
        create: bool,
        globals: &mut [Global],
    ) -> u64 {
        let key = sock.to_le_bytes();
        if let Some(s) = st.slots.get(&key[..]) {
            return self.value_addr(*s);
        }
        if !create {
            return 0;
        }
        let Some(slot) = self.insert(st, &key, globals) else {
            return 0;
        };
        if let Some(v) = init {
            let at = slot * self.stride();
            globals[self.region].data[at..at + self.value_size].copy_from_slice(v);
        }
        self.value_addr(slot)
    }
}
