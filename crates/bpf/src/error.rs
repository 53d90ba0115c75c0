//! Every way loading or running a BPF congestion control can fail. Each message names
//! what it is about (section, field, kfunc, parameter, callback and pc), so a researcher
//! can find the line in their .bpf.c without a debugger.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BpfError {
    /// The bytes are not an ELF BPF object, or a section is malformed.
    Elf(String),
    /// The .BTF or .BTF.ext section is missing or malformed.
    Btf(String),
    /// No `.struct_ops` / `.struct_ops.link` section holding a `tcp_congestion_ops`.
    NoStructOps,
    /// A CO-RE relocation names a field the simulator's socket image does not have.
    UnmodelledField { strukt: String, field: String },
    /// A CO-RE relocation we cannot apply (kind, type or size).
    Relocation(String),
    /// A call to a kfunc or helper the simulator does not provide.
    UnknownCall { name: String },
    /// An instruction the interpreter refuses at load time.
    BadInstruction {
        prog: String,
        pc: usize,
        why: String,
    },
    /// A parameter that is not a `const volatile` global of .rodata, or a wrong value.
    Param { name: String, why: String },
    /// Refused at load as the kernel's verifier refuses it (license, stack, loops, a
    /// read-only field), with the program and, from .BTF.ext, the source line.
    Verifier {
        prog: String,
        line: Option<String>,
        why: String,
    },
    /// A map in `.maps` the simulator cannot create (type, sizes, flags).
    Map { name: String, why: String },
    /// A `__kconfig` extern the simulated kernel does not set (and not `__weak`).
    Kconfig { name: String, why: String },
    /// The state struct a flow asked to record (`bpf_state`) cannot be read.
    State(String),
    /// A callback failed while running (out-of-bounds access, budget, division...).
    Runtime {
        callback: String,
        pc: usize,
        why: String,
    },
}

impl fmt::Display for BpfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BpfError::Elf(m) => write!(f, "not a usable BPF object: {m}"),
            BpfError::Btf(m) => write!(f, "BTF: {m}"),
            BpfError::NoStructOps => write!(
                f,
                "no .struct_ops or .struct_ops.link section with a struct tcp_congestion_ops"
            ),
            BpfError::UnmodelledField { strukt, field } => {
                write!(f, "field {strukt}.{field} is not modelled by the simulator")
            }
            BpfError::Relocation(m) => write!(f, "CO-RE relocation: {m}"),
            BpfError::UnknownCall { name } => {
                write!(
                    f,
                    "call to {name}, a kfunc or helper the simulator does not provide"
                )
            }
            BpfError::BadInstruction { prog, pc, why } => {
                write!(f, "program {prog}, pc {pc}: {why}")
            }
            BpfError::Param { name, why } => write!(f, "parameter {name}: {why}"),
            BpfError::Verifier { prog, line, why } => match line {
                Some(l) => write!(f, "program {prog} ({l}): {why}"),
                None if prog.is_empty() => write!(f, "{why}"),
                None => write!(f, "program {prog}: {why}"),
            },
            BpfError::Map { name, why } => write!(f, "map {name}: {why}"),
            BpfError::Kconfig { name, why } => write!(f, "extern {name} __kconfig: {why}"),
            BpfError::State(m) => write!(f, "state to record: {m}"),
            BpfError::Runtime { callback, pc, why } => {
                write!(f, "callback {callback} failed at pc {pc}: {why}")
            }
        }
    }
}

impl std::error::Error for BpfError {}
