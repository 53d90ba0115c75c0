//! A flow whose congestion control is a compiled BPF struct_ops object (crates/bpf):
//! `cc = "bpf"` with `bpf_object = "path/to/x.bpf.o"` (or `"x.bpf.o#NAME"`: the object's
//! `tcp_congestion_ops` NAME, of several) in the flow's config; `params`
//! then set the object's `const volatile` globals. Errors name the field relative to
//! the flow: `bpf_object` for the file and the object, `params.NAME` for a parameter the
//! object does not have or a value of the wrong kind. `bpf_state` names the struct the
//! program keeps in `icsk_ca_priv`, recorded as `cc_<struct>_<field>` series
//! (crates/bpf/src/object/state_series.rs); a struct the object lacks is refused there.
//!
//! A callback that faults at run time (out-of-bounds access, instruction budget) makes
//! the algorithm inert; `World::finish` then fails the run with
//! `SimError::Algorithm`, naming the flow, callback and pc, instead of reporting it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use tcplab_bpf::{BpfError, BpfObject, KernelEnv, LoadedProgram, StateLayout};
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

/// Loads BPF objects for one run as the kernel does: each file is read and parsed once,
/// and each (object, params) is ONE loaded program (`BpfObject::load`) whose globals and
/// maps every socket running it shares (a flow's sender and, for an ECN echo, its
/// receiver), with the run's `tcp.hz` as its `CONFIG_HZ`. Flows of one object with other
/// `params` get a program of their own, as the kernel backend registers a copy per
/// `params` (docs/WRITING_ALGORITHMS.md).
#[derive(Default)]
pub struct BpfLoader {
    objects: RefCell<BTreeMap<String, Rc<BpfObject>>>,
    /// Loaded programs by object path, params and hz (their Debug forms: ParamValue
    /// holds floats, so it is not a key itself; BTreeMap's order makes the text unique).
    programs: RefCell<BTreeMap<String, LoadedProgram>>,
    /// State layouts by object path and struct name, read from the object once per run
    /// (its DWARF is parsed for each), not once per flow.
    states: RefCell<BTreeMap<(String, String), Arc<StateLayout>>>,
}

/// One `bpf_printk` line of a run: the program that printed it, when, and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintkRecord {
    pub program: String,
    pub time_ns: u64,
    pub text: String,
}

impl BpfLoader {
    /// Every program's `bpf_printk` lines so far, in time order (a program's own lines
    /// keep their order; equal times keep the programs' load order), and how many lines
    /// the programs did not keep (`PRINTK_MAX_LINES` each).
    pub fn printk(&self) -> (Vec<PrintkRecord>, u64) {
        let mut lines = Vec::new();
        let mut dropped = 0;
        for prog in self.programs.borrow().values() {
            dropped += prog.printk_dropped();
            lines.extend(prog.printk().into_iter().map(|l| PrintkRecord {
                program: prog.name().to_string(),
                time_ns: l.time_ns,
                text: l.text,
            }));
        }
        lines.sort_by_key(|l| l.time_ns); // stable: each program's order is kept
        (lines, dropped)
    }

    /// Every loaded program's maps as they are now (`bpf_maps.json`), by program name,
    /// in load order.
    pub fn maps(&self) -> Vec<(String, Vec<tcplab_bpf::MapDump>)> {
        self.programs
            .borrow()
            .values()
            .map(|p| (p.name().to_string(), p.maps_dump()))
            .collect()
    }

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
        let (file, ops) = tcplab_bpf::split_object_ref(path);
        let bytes = std::fs::read(file).map_err(|e| error("bpf_object", format!("{file}: {e}")))?;
        let obj = BpfObject::parse_named(&bytes, ops)
            .map_err(|e| error("bpf_object", format!("{path}: {e}")))?;
        let obj = Rc::new(obj);
        self.objects
            .borrow_mut()
            .insert(path.to_string(), Rc::clone(&obj));
        Ok(obj)
    }

    /// One socket's instance of the flow's program (loaded on first use with its
    /// `params` applied); `seed` seeds its `bpf_get_prandom_u32` (World derives it from the
    /// run seed as for the native algorithms' `seed` parameter, so BPF BBR draws what
    /// native BBR draws).
    pub fn build(
        &self,
        choice: &CcChoice<'_>,
        seed: u64,
    ) -> Result<Box<dyn CongestionOps>, ConfigError> {
        let obj = self.object(choice)?;
        // A BPF program's parameters are its own globals, not a registry schema.
        let params = param_values(choice.params)?;
        let state = match choice.bpf_state {
            Some(name) => Some(self.state_layout(&obj, choice, name)?),
            None => None,
        };
        let key = format!("{:?}\0{params:?}\0{}", choice.bpf_object, choice.hz);
        if let Some(prog) = self.programs.borrow().get(&key) {
            return Ok(socket(prog, seed, state));
        }
        let env = KernelEnv {
            hz: choice.hz,
            ..KernelEnv::default()
        };
        let prog = obj.load(&params, &env).map_err(|e| match e {
            BpfError::Param { ref name, .. } => error(format!("params.{name}"), e.to_string()),
            other => error("bpf_object", other.to_string()),
        })?;
        let ops = socket(&prog, seed, state);
        self.programs.borrow_mut().insert(key, prog);
        Ok(ops)
    }
}

impl BpfLoader {
    /// The layout of the flow's `bpf_state` struct in its object, read once per run.
    fn state_layout(
        &self,
        obj: &BpfObject,
        choice: &CcChoice<'_>,
        name: &str,
    ) -> Result<Arc<StateLayout>, ConfigError> {
        let key = (
            choice.bpf_object.unwrap_or_default().to_string(),
            name.to_string(),
        );
        if let Some(l) = self.states.borrow().get(&key) {
            return Ok(Arc::clone(l));
        }
        let layout = Arc::new(
            obj.state_layout(name)
                .map_err(|e| error("bpf_state", e.to_string()))?,
        );
        self.states.borrow_mut().insert(key, Arc::clone(&layout));
        Ok(layout)
    }
}

/// One socket of `prog`, recording `state` (the flow's `bpf_state`) if it names one.
fn socket(
    prog: &LoadedProgram,
    seed: u64,
    state: Option<Arc<StateLayout>>,
) -> Box<dyn CongestionOps> {
    let ops = prog.instantiate_socket(seed);
    Box::new(match state {
        Some(layout) => ops.with_state(layout),
        None => ops,
    })
}
