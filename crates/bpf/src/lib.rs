//! tcplab-bpf: runs a congestion control written as a Linux BPF struct_ops
//! `tcp_congestion_ops` program (compiled by clang against bpf/include/tcplab_cc.h, as
//! the kernel's tools/testing/selftests/bpf/progs/bpf_cubic.c is against vmlinux.h) in
//! the simulator, the same object file that bpftool loads into a kernel.
//!
//! ```text
//! BpfObject::parse(bytes)  object/loader.rs: ELF, kfunc/helper/global/map/kconfig
//! (or parse_named)         relocations, struct_ops (one of several, by name), license
//!                          object/core.rs + layout.rs: CO-RE against the simulator's
//!                          socket, writes outside the kernel's writable fields refused
//!                          vm/verify.rs: opcodes, registers, jump targets; the
//!                          verifier's stack-size and recursion rules
//!                          vm/track.rs: value tracking (ranges: vm/scalar.rs) for
//!                          the verifier's stack and map value bounds, and the loops
//!                          it cannot bound (vm/loop_walk.rs)
//! obj.params()             object/params.rs: the .rodata `const volatile` globals
//! obj.load(&params, &env)  host/program.rs: one LoadedProgram (globals shared by its
//!                          sockets, kconfig externs from the KernelEnv, printk output)
//! loaded.instantiate(seed) one BpfCongestionOps per socket (host/ops.rs): socket image
//!                          (host/sock_image.rs), interpreter (vm/), helpers and kfuncs
//!                          (host/sim_host.rs, maps.rs, printk.rs, native.rs)
//! ```
//!
//! Three rooms, each with a mod.rs saying what it holds and what it uses:
//!
//! ```text
//! object/  reading the object: ELF, BTF, CO-RE, DWARF, parameters, state layout
//! vm/      the machine: instructions, call table, verifier, memory, interpreter, JIT
//! host/    the kernel around it: helper and kfunc bodies, maps, the socket image,
//!          the loaded program and the per-socket CongestionOps
//! ```
//!
//! error.rs and layout.rs (the simulator's layout of the kernel structures) stay here,
//! used by all three. The dependencies as the code has them: vm -> layout only;
//! object -> vm (instruction format, call table, load-time checks, global regions) and,
//! for declarations, host/maps.rs and host/native.rs; host -> vm and object. Every
//! module keeps its old path (`tcplab_bpf::loader`, `tcplab_bpf::insn`, ...) through the
//! re-exports below, so no other crate names a room.
//!
//! Nothing a program does can panic or reach memory outside its regions: loading refuses
//! what we cannot run (naming it), running reports the callback and pc of a fault.

pub mod error;
pub mod host;
pub mod layout;
pub mod object;
pub mod vm;

// The paths these modules had before they moved into rooms.
pub use host::{maps, native, ops, printk, program, sock_image};
pub use object::{btf, btf_ext, core, dwarf_types, helper_names, loader, params, state_series};
pub use vm::{calls, insn};

use std::collections::BTreeMap;
use std::sync::Arc;

use tcplab_cc::ops::CongestionOps;
use tcplab_cc::ParamValue;

pub use error::BpfError;
pub use host::ops::BpfCongestionOps;
pub use host::program::{KernelEnv, LoadedProgram, MapDump, PrintkLine};
pub use object::params::{BpfParam, BpfParamKind};
pub use object::state_series::StateLayout;

/// Splits an engine config's `bpf_object` into the object file and the chosen
/// `tcp_congestion_ops`: `"x.bpf.o#dctcp"` is x.bpf.o's struct_ops `dctcp` (variable or
/// `.name`, as `BpfObject::parse_named`), `"x.bpf.o"` the object's only one. A `#` followed
/// by a `/` belongs to the path.
pub fn split_object_ref(object_ref: &str) -> (&str, Option<&str>) {
    match object_ref.rsplit_once('#') {
        Some((path, ops)) if !ops.is_empty() && !ops.contains('/') => (path, Some(ops)),
        _ => (object_ref, None),
    }
}

/// A parsed and relocated object, ready to run on any number of flows.
#[derive(Clone, Debug)]
pub struct BpfObject {
    prog: Arc<loader::Program>,
    /// `tcp_congestion_ops.name`, leaked once per object: `CongestionOps::name` is
    /// `&'static str` (the native algorithms' names are literals).
    name: &'static str,
    /// The ELF bytes, for what is read only on request (a state struct's layout).
    elf: Arc<[u8]>,
}

impl BpfObject {
    /// Loads an ELF object as clang emits it (`clang -target bpf -O2 -g -c`).
    pub fn parse(bytes: &[u8]) -> Result<BpfObject, BpfError> {
        Self::parse_named(bytes, None)
    }

    /// As `parse`, choosing the `tcp_congestion_ops` named `ops_name` (its variable
    /// name or its `.name`) when the object has several; without a name an object with
    /// several is refused, listing them.
    pub fn parse_named(bytes: &[u8], ops_name: Option<&str>) -> Result<BpfObject, BpfError> {
        let prog = loader::load(bytes, ops_name)?;
        let name: &'static str = Box::leak(prog.name.clone().into_boxed_str());
        Ok(BpfObject {
            prog: Arc::new(prog),
            name,
            elf: bytes.into(),
        })
    }

    /// The program as the VM runs it (vm::jit: compiled or not, and how long it took).
    pub fn code(&self) -> &vm::Code {
        self.prog.code()
    }

    /// `tcp_congestion_ops.name` (e.g. "bpf_cubic").
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// `tcp_congestion_ops.flags` (TCP_CONG_NEEDS_ECN = 2): whether the receiving host
    /// runs the program too (for its ECN echo), on both backends.
    pub fn flags(&self) -> u32 {
        self.prog.flags
    }

    /// The program's parameters: its scalar `const volatile` globals in .rodata.
    pub fn params(&self) -> Vec<BpfParam> {
        params::list(&self.prog)
    }

    /// The object file `elf` (the bytes this object was parsed from) with `values`
    /// written into .rodata: what the kernel backend registers for a flow's `params`.
    pub fn patched_elf(
        &self,
        elf: &[u8],
        values: &BTreeMap<String, ParamValue>,
    ) -> Result<Vec<u8>, BpfError> {
        params::patch_elf(&self.prog, elf, values)
    }

    /// Loads the program as the kernel does: `values` applied to .rodata (others keep
    /// their defaults; an unknown name or a value of the wrong kind or range is an error
    /// naming it), `__kconfig` externs resolved from `env`. Every socket instantiated
    /// from the result shares its globals (program.rs); different `values` make a
    /// different program, as they do on the kernel backend.
    pub fn load(
        &self,
        values: &BTreeMap<String, ParamValue>,
        env: &KernelEnv,
    ) -> Result<LoadedProgram, BpfError> {
        let globals = params::apply(&self.prog, values)?;
        LoadedProgram::new(self.prog.clone(), self.name, globals, env)
    }

    /// The layout of `struct <name>`, the state the program keeps in `icsk_ca_priv`,
    /// from the object's BTF (state_series.rs), for recording as series.
    pub fn state_layout(&self, name: &str) -> Result<StateLayout, BpfError> {
        StateLayout::for_object(&self.elf, name)
    }

    /// A program loaded for one flow alone (default `KernelEnv`): its globals are its
    /// own. Kept for callers that have not moved to `load` + `instantiate`.
    pub fn instantiate_ops(
        &self,
        values: &BTreeMap<String, ParamValue>,
    ) -> Result<BpfCongestionOps, BpfError> {
        Ok(BpfCongestionOps::new(
            self.load(values, &KernelEnv::default())?,
        ))
    }

    /// As `instantiate_ops`, behind the simulator's seam.
    pub fn instantiate(
        &self,
        values: &BTreeMap<String, ParamValue>,
    ) -> Result<Box<dyn CongestionOps>, BpfError> {
        Ok(Box::new(self.instantiate_ops(values)?))
    }
}
