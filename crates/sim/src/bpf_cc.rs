//! A flow whose congestion control is a compiled BPF struct_ops object (crates/bpf,
//! issue 17): `cc = "bpf"` with `bpf_object = "path/to/x.bpf.o"` in the flow's config;
//! `params` then set the object's `const volatile` globals. Errors name the field:
//! `flows[i].bpf_object` for the file and the object, `flows[i].params.NAME` for a
//! parameter the object does not have or a value of the wrong kind.
//!
//! A callback that faults at run time (out-of-bounds access, instruction budget) makes
//! the algorithm inert; `World::finish` then fails the run with
//! `SimError::Algorithm`, naming the flow, callback and pc, instead of reporting it.

use std::collections::BTreeMap;

use tcplab_bpf::{BpfError, BpfObject};
use tcplab_cc::ops::CongestionOps;
use tcplab_cc::ParamValue;

use crate::config::{ConfigError, FlowConfig};

/// The `cc` name that selects a BPF object.
pub const CC_NAME: &str = "bpf";

fn error(field: String, message: impl Into<String>) -> ConfigError {
    ConfigError {
        field,
        message: message.into(),
    }
}

/// Reads and loads flow `p`'s object (`p` is its path in the config, `flows[i]`).
pub fn load(f: &FlowConfig, p: &str) -> Result<BpfObject, ConfigError> {
    let field = format!("{p}.bpf_object");
    if f.cc != CC_NAME {
        return Err(error(
            field,
            format!("is only for cc = \"{CC_NAME}\" (cc is \"{}\")", f.cc),
        ));
    }
    let path = f
        .bpf_object
        .as_deref()
        .ok_or_else(|| error(field.clone(), format!("required with cc = \"{CC_NAME}\"")))?;
    let bytes = std::fs::read(path).map_err(|e| error(field.clone(), format!("{path}: {e}")))?;
    BpfObject::parse(&bytes).map_err(|e| error(field, format!("{path}: {e}")))
}

/// One instance of flow `p`'s object with `params` applied; `seed` seeds its
/// `bpf_get_prandom_u32` (World::new derives it from the run seed as for the native
/// algorithms' `seed` parameter, so BPF BBR draws what native BBR draws).
pub fn build(
    f: &FlowConfig,
    p: &str,
    params: &BTreeMap<String, ParamValue>,
    seed: u64,
) -> Result<Box<dyn CongestionOps>, ConfigError> {
    let ops = load(f, p)?.instantiate_ops(params).map_err(|e| match e {
        BpfError::Param { ref name, .. } => error(format!("{p}.params.{name}"), e.to_string()),
        other => error(format!("{p}.bpf_object"), other.to_string()),
    })?;
    Ok(Box::new(ops.with_seed(seed)))
}
