//! The host: the kernel around a running program. Everything a program calls out to
//! and the state it shares with its socket and its siblings.
//!
//! - sim_host.rs: `SimHost`, the bodies of the kfuncs and helpers (vm/calls.rs lists
//!   which exist) on the socket image, with the kernel's wrapping arithmetic
//! - maps.rs: BTF-defined maps, their declarations and the helpers on them
//! - native.rs: the kfuncs the kernel exports from its own congestion controls, bound to
//!   crates/cc's native ports
//! - printk.rs: bpf_printk formatting
//! - sock_image.rs: the socket image written from the simulator's `CcView` and read back
//! - program.rs: `LoadedProgram` and `KernelEnv`, a program as the kernel loads it
//!   (globals and maps shared by its sockets)
//! - ops.rs: `BpfCongestionOps`, one socket's program behind the simulator's seam
//!
//! Dependencies: the machine (vm/: the `Host` trait this room implements, `Memory`, the
//! call table), the object (object/loader.rs's `Program`, state_series.rs for the state
//! columns), and error.rs / layout.rs. The machine uses nothing here; the object only
//! maps.rs and native.rs (see object/mod.rs).

pub mod maps;
pub mod native;
pub mod ops;
pub mod printk;
pub mod program;
pub mod sim_host;
pub mod sock_image;

// `tcplab_bpf::host::SimHost` and `host::SOCK_ADDR` were host.rs's; keep the paths.
pub use sim_host::*;
