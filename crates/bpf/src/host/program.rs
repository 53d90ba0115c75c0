//! A program as the kernel loads it: `BpfObject::load` applies the parameters to .rodata
//! and resolves the `__kconfig` externs against a `KernelEnv` (libbpf's
//! bpf_object__resolve_externs + bpf_object__load), giving a `LoadedProgram`. Its global
//! data (.bss, .data, .rodata, .kconfig) and the output it collects (bpf_printk) belong
//! to the program, not to a socket: every socket instantiated from it
//! (`LoadedProgram::instantiate`) reads and writes the same globals, as every socket
//! using one registered tcp_congestion_ops does in the kernel (the sections are array
//! maps of the program, kernel/bpf/arraymap.c).
//!
//! The simulator runs one event at a time, so the sockets of a run take turns: before a
//! callback the socket's memory borrows the program's globals, after it they go back.
//!
//! Kconfig (libbpf's bpf_object__read_kconfig_file, with the simulated kernel's values):
//! `CONFIG_HZ` is `KernelEnv::hz` and the one `CONFIG_HZ_<hz>` is y;
//! `LINUX_KERNEL_VERSION` is `KernelEnv::kernel_version`; `LINUX_HAS_BPF_COOKIE` and
//! `LINUX_HAS_SYSCALL_WRAPPER` are 1; other `CONFIG_*` come from `KernelEnv::kconfig`
//! (which also overrides these; `y` = 1, `m` = 2, `n` = 0, the values of libbpf's
//! tristate enum). An option not there is 0 when declared `__weak`
//! and refused, naming it, otherwise (libbpf: "extern (kcfg) 'X': value not found").

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tcplab_cc::ops::CongestionOps;

use crate::error::BpfError;
use crate::host::maps::MapState;
use crate::host::ops::BpfCongestionOps;
use crate::object::loader::Program;
use crate::vm::memory::Global;

/// `KERNEL_VERSION(a, b, c)` of include/generated/uapi/linux/version.h.
pub const fn kernel_version(a: u32, b: u32, c: u32) -> u32 {
    (a << 16) + (b << 8) + if c > 255 { 255 } else { c }
}

/// The simulated kernel's configuration, what `__kconfig` externs read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelEnv {
    /// CONFIG_HZ: jiffies per second (also the rate of the socket image's
    /// `tcp_jiffies32` fields and of `bpf_jiffies64`).
    pub hz: u32,
    /// LINUX_KERNEL_VERSION.
    pub kernel_version: u32,
    /// Further CONFIG_* values (bool/tristate: y = 1, m = 2).
    pub kconfig: BTreeMap<String, u64>,
}

impl Default for KernelEnv {
    /// HZ = 1000 (tcplab's default `[tcp] hz`), the 6.18 kernel tcplab follows.
    fn default() -> Self {
        KernelEnv {
            hz: 1000,
            kernel_version: kernel_version(6, 18, 0),
            kconfig: BTreeMap::new(),
        }
    }
}

impl KernelEnv {
    /// The value of kconfig option `name`, if this kernel has it.
    pub fn value(&self, name: &str) -> Option<u64> {
        if let Some(v) = self.kconfig.get(name) {
            return Some(*v);
        }
        match name {
            "CONFIG_HZ" => Some(u64::from(self.hz)),
            // Exactly one CONFIG_HZ_<n> is y (kernel/Kconfig.hz).
            _ if name.starts_with("CONFIG_HZ_") => {
                (name["CONFIG_HZ_".len()..] == self.hz.to_string()).then_some(1)
            }
            "LINUX_KERNEL_VERSION" => Some(u64::from(self.kernel_version)),
            // libbpf's own virtual externs (bpf_object__resolve_externs), x86-64 6.18.
            "LINUX_HAS_BPF_COOKIE" | "LINUX_HAS_SYSCALL_WRAPPER" => Some(1),
            _ => None,
        }
    }
}

/// One `bpf_printk` line: the simulated time (ns) and the formatted text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintkLine {
    pub time_ns: u64,
    pub text: String,
}

/// The most printk lines a program keeps (the kernel's trace buffer is a ring too);
/// later ones are counted in `printk_dropped`.
pub const PRINTK_MAX_LINES: usize = 100_000;

/// One map of a loaded program at a moment: `enum bpf_map_type` number, sizes and every
/// entry (key bytes, value bytes) in key order (LoadedProgram::maps_dump).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapDump {
    pub name: String,
    pub map_type: u32,
    pub key_size: usize,
    pub value_size: usize,
    pub max_entries: usize,
    pub entries: Vec<(Vec<u8>, Vec<u8>)>,
}

/// What the sockets of one loaded program share.
#[derive(Debug, Default)]
pub struct Shared {
    pub globals: Vec<Global>,
    /// One per `Program::maps`.
    pub maps: Vec<MapState>,
    pub printk: Vec<PrintkLine>,
    pub printk_dropped: u64,
    /// The id the next socket gets (SK_STORAGE's key).
    pub next_socket: u64,
}

/// Locks `shared`; a poisoned lock (a panic elsewhere) still holds consistent bytes.
pub(crate) fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

/// A program loaded once, run by any number of sockets (see the module docs).
#[derive(Clone, Debug)]
pub struct LoadedProgram {
    pub(crate) prog: Arc<Program>,
    pub(crate) name: &'static str,
    pub(crate) shared: Arc<Mutex<Shared>>,
    pub(crate) env: KernelEnv,
}

impl LoadedProgram {
    pub(crate) fn new(
        prog: Arc<Program>,
        name: &'static str,
        mut globals: Vec<Global>,
        env: &KernelEnv,
    ) -> Result<LoadedProgram, BpfError> {
        for k in &prog.kconfig {
            let v = match env.value(&k.name) {
                Some(v) => v,
                None if k.weak => 0,
                None => {
                    return Err(BpfError::Kconfig {
                        name: k.name.clone(),
                        why: format!(
                            "not set in the simulated kernel (known: CONFIG_HZ, LINUX_KERNEL_VERSION{}); declare it __weak to read 0",
                            env.kconfig.keys().map(|k| format!(", {k}")).collect::<String>()
                        ),
                    })
                }
            };
            let data = &mut globals[k.region].data;
            data[k.offset..k.offset + k.size].copy_from_slice(&v.to_le_bytes()[..k.size]);
        }
        let maps = vec![MapState::default(); prog.maps.len()];
        Ok(LoadedProgram {
            prog,
            name,
            shared: Arc::new(Mutex::new(Shared {
                globals,
                maps,
                ..Shared::default()
            })),
            env: env.clone(),
        })
    }

    /// `tcp_congestion_ops.name`.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The kernel this program was loaded into.
    pub fn env(&self) -> &KernelEnv {
        &self.env
    }

    /// One socket running this program, its `bpf_get_prandom_u32` seeded with `seed`.
    pub fn instantiate_socket(&self, seed: u64) -> BpfCongestionOps {
        BpfCongestionOps::new(self.clone()).with_seed(seed)
    }

    /// As `instantiate_socket`, behind the simulator's seam.
    pub fn instantiate(&self, seed: u64) -> Box<dyn CongestionOps> {
        Box::new(self.instantiate_socket(seed))
    }

    /// The `bpf_printk` lines so far, in the order they were printed.
    pub fn printk(&self) -> Vec<PrintkLine> {
        lock(&self.shared).printk.clone()
    }

    /// Lines not kept because `PRINTK_MAX_LINES` were already.
    pub fn printk_dropped(&self) -> u64 {
        lock(&self.shared).printk_dropped
    }

    /// Every map of the program as it is now, as `bpftool map dump` lists a loaded
    /// object's maps: its global sections (".bss", ".data", ".rodata", ".kconfig", ...:
    /// libbpf's ARRAY maps of one entry) and its `.maps` maps, each with its entries.
    pub fn maps_dump(&self) -> Vec<MapDump> {
        let shared = lock(&self.shared);
        let map_regions: Vec<usize> = self.prog.maps.iter().map(|m| m.region).collect();
        let mut out: Vec<MapDump> = shared
            .globals
            .iter()
            .enumerate()
            .filter(|(i, g)| !map_regions.contains(i) && g.name.starts_with('.'))
            .map(|(_, g)| MapDump {
                name: g.name.clone(),
                map_type: crate::host::maps::MapKind::Array as u32,
                key_size: 4,
                value_size: g.data.len(),
                max_entries: 1,
                entries: vec![(0u32.to_le_bytes().to_vec(), g.data.clone())],
            })
            .collect();
        for (m, st) in self.prog.maps.iter().zip(&shared.maps) {
            out.push(MapDump {
                name: m.name.clone(),
                map_type: m.kind as u32,
                key_size: m.key_size,
                value_size: m.value_size,
                max_entries: m.max_entries,
                entries: m.entries(st, &shared.globals),
            });
        }
        out
    }

    /// The current bytes of global section `name` (".bss", ".data", ".rodata", ...).
    pub fn global_section(&self, name: &str) -> Option<Vec<u8>> {
        lock(&self.shared)
            .globals
            .iter()
            .find(|g| g.name == name)
            .map(|g| g.data.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kconfig_values_of_the_simulated_kernel() {
        let env = KernelEnv {
            hz: 250,
            ..KernelEnv::default()
        };
        assert_eq!(env.value("CONFIG_HZ"), Some(250));
        assert_eq!(env.value("CONFIG_HZ_250"), Some(1));
        assert_eq!(env.value("CONFIG_HZ_1000"), None);
        // KERNEL_VERSION(6, 18, 0) = 6 << 16 | 18 << 8.
        assert_eq!(env.value("LINUX_KERNEL_VERSION"), Some(0x06_12_00));
        assert_eq!(env.value("CONFIG_TCP_CONG_BBR"), None);
        let mut env = env;
        env.kconfig.insert("CONFIG_TCP_CONG_BBR".into(), 2);
        assert_eq!(env.value("CONFIG_TCP_CONG_BBR"), Some(2));
    }
}
