//! tcplab-controllers: where a flow's congestion controller comes from. The engine
//! (crates/sim) knows no algorithm; it asks a `ControllerFactory` for one per flow. This
//! crate composes the two sources the front end offers:
//!
//! - the native registry (crates/cc, through `tcplab_sim::NativeCc`): `cc` names a
//!   registered algorithm;
//! - a compiled BPF struct_ops object (crates/bpf, [`bpf`]): `cc = "bpf"` with
//!   `bpf_object = "path/to/x.bpf.o"`;
//! - a trained policy ([`policy`]): an interval agent for a config's `agents[i]` entry
//!   (a spec's `cc = "policy:FILE"`), driving an `external` flow.
//!
//! Hand a fresh [`Controllers`] to each run: it keeps what it loaded for that run.

pub mod bpf;
pub mod policy;

use tcplab_cc::ops::CongestionOps;
use tcplab_sim::{CcChoice, ConfigError, ControllerFactory, IntervalAgent, NativeCc};

/// The native registry and the BPF loader, for one run.
#[derive(Default)]
pub struct Controllers {
    bpf: bpf::BpfLoader,
}

impl Controllers {
    pub fn new() -> Controllers {
        Controllers::default()
    }

    /// The `bpf_printk` lines of the BPF programs this run loaded, in time order, and
    /// how many were not kept (see [`bpf::BpfLoader::printk`]).
    pub fn printk(&self) -> (Vec<bpf::PrintkRecord>, u64) {
        self.bpf.printk()
    }

    /// The BPF programs' maps at the end of the run (see [`bpf::BpfLoader::maps`]).
    pub fn bpf_maps(&self) -> Vec<(String, Vec<tcplab_bpf::MapDump>)> {
        self.bpf.maps()
    }
}

impl ControllerFactory for Controllers {
    fn build(
        &self,
        choice: &CcChoice<'_>,
        seed: u64,
    ) -> Result<Box<dyn CongestionOps>, ConfigError> {
        if choice.cc == bpf::CC_NAME || choice.bpf_object.is_some() {
            self.bpf.build(choice, seed)
        } else {
            NativeCc.build(choice, seed)
        }
    }

    fn agent(
        &self,
        policy: &serde_json::Value,
        duration_ns: u64,
    ) -> Result<Box<dyn IntervalAgent>, ConfigError> {
        Ok(Box::new(policy::PolicyAgent::new(policy, duration_ns)?))
    }
}
