//! A flow whose congestion control is a compiled BPF struct_ops object (crates/bpf):
//! `cc = "bpf"` with `bpf_object = "path/to/x.bpf.o"` in the flow's config; `params`
//! then set the object's `const volatile` globals. Errors name the field relative to
//! the flow: `bpf_object` for the file and the object, `params.NAME` for a parameter the
//! object does not have or a value of the wrong kind.
//!
//! A callback that faults at run time (out-of-bounds access, instruction budget) makes
//! the algorithm inert; `World::finish` then fails the run with
//! `SimError::Algorithm`, naming the flow, callback and pc, instead of reporting it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use tcplab_bpf::{BpfError, BpfObject};
use tcplab_cc::ops::CongestionOps;
use tcplab_sim::native_cc::param_values;
use tcplab_sim::{CcChoice, ConfigError};

/// The `cc` name that selects a BPF object.
pub const CC_NAME: &str = "bpf";

fn error(field: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError {
        field: field.into(),
        message: message.into(),
    }
}

/// Loads BPF objects for one run: each file is read and parsed once.
///
/// TODO(bpf-sim interface 2, docs PLAN): the kernel loads ONE program per (object,
/// params) and every socket running it shares its globals and maps. When crates/bpf
/// has `BpfObject::load(&values, &KernelEnv) -> LoadedProgram` and
/// `LoadedProgram::instantiate(seed)`, keep one `LoadedProgram` per (path, params) here
/// and instantiate per flow, with `KernelEnv { hz: choice.hz, .. }` (the run's
/// `tcp.hz`). Until then each flow gets its own instance (`instantiate_ops(params)` +
/// `with_seed(seed)`), i.e. its own copy of the globals, and the object's own HZ.
#[derive(Default)]
pub struct BpfLoader {
    objects: RefCell<BTreeMap<String, Rc<BpfObject>>>,
}

impl BpfLoader {
    /// The object at the flow's `bpf_object`, read and parsed once per run.
    fn object(&self, choice: &CcChoice<'_>) -> Result<Rc<BpfObject>, ConfigError> {
        if choice.cc != CC_NAME {
            return Err(error(
                "bpf_object",
                format!("is only for cc = \"{CC_NAME}\" (cc is \"{}\")", choice.cc),
            ));
        }
        let path = choice
            .bpf_object
            .ok_or_else(|| error("bpf_object", format!("required with cc = \"{CC_NAME}\"")))?;
        if let Some(o) = self.objects.borrow().get(path) {
            return Ok(Rc::clone(o));
        }
        let bytes = std::fs::read(path).map_err(|e| error("bpf_object", format!("{path}: {e}")))?;
        let obj =
            BpfObject::parse(&bytes).map_err(|e| error("bpf_object", format!("{path}: {e}")))?;
        let obj = Rc::new(obj);
        self.objects
            .borrow_mut()
            .insert(path.to_string(), Rc::clone(&obj));
        Ok(obj)
    }

    /// One instance of the flow's object with its `params` applied; `seed` seeds its
    /// `bpf_get_prandom_u32` (World derives it from the run seed as for the native
    /// algorithms' `seed` parameter, so BPF BBR draws what native BBR draws).
    pub fn build(
        &self,
        choice: &CcChoice<'_>,
        seed: u64,
    ) -> Result<Box<dyn CongestionOps>, ConfigError> {
        let obj = self.object(choice)?;
        // A BPF program's parameters are its own globals, not a registry schema.
        let params = param_values(choice.params)?;
        let ops = obj.instantiate_ops(&params).map_err(|e| match e {
            BpfError::Param { ref name, .. } => error(format!("params.{name}"), e.to_string()),
            other => error("bpf_object", other.to_string()),
        })?;
        Ok(Box::new(ops.with_seed(seed)))
    }
}
