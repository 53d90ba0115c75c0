//! Reading an object: what clang wrote into the ELF file, turned into one relocated
//! program (`loader::Program`) before anything runs.
//!
//! - loader.rs: the ELF sections, relocations and the struct_ops member -> callback map
//! - btf.rs, btf_ext.rs: .BTF types and strings; .BTF.ext CO-RE records and line info
//! - core.rs: CO-RE, each relocated instruction rewritten for the simulator's layout
//! - dwarf_types.rs: a struct's layout from .debug_info where BTF does not carry it
//! - params.rs: the `const volatile` .rodata globals (the program's knobs)
//! - state_series.rs: the per-socket state struct's fields, for recording as series
//! - helper_names.rs: helper numbers -> names, for error messages
//!
//! Dependencies (what this room uses; the crate's rooms are described in lib.rs):
//! error.rs and layout.rs (the shared vocabulary: core.rs and state_series.rs resolve
//! against the simulator's layout); the machine (vm/: the instruction format and call
//! table, memory's region addresses for globals, and the load-time checks verify.rs and
//! track.rs that loader.rs runs); and from the host only what a declaration needs:
//! host/maps.rs parses `.maps` declarations (`maps::define`, where each map's runtime
//! also lives) and host/native.rs says which kfunc names are native ones. Nothing here
//! runs a program.

pub mod btf;
pub mod btf_ext;
pub mod core;
pub mod dwarf_types;
pub mod helper_names;
pub mod loader;
pub mod params;
pub mod state_series;
