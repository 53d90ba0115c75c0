//! tcplab-sim: a deterministic packet-level discrete-event simulator whose TCP behaves
//! like Linux, driving congestion-control algorithms through the `tcplab_cc` seam.
//!
//! What is modelled: a dumbbell of point-to-point links (rate, propagation delay,
//! drop-tail queue in packets or bytes, or on the bottleneck a Linux-like queue
//! discipline with ECN marking ([`net::aqm`]), Bernoulli loss, scheduled rate/delay/loss
//! changes; optionally Mahimahi traces, policers and captures on any link, and named links
//! with per-flow paths: [`net::trace`], [`net::policer`], [`net::capture`],
//! [`net::topology`]) carrying MSS-sized TCP segments between bulk or finite applications; a
//! Linux-like TCP sender and receiver (see [`tcp`] for the model and its deviations:
//! a handshake as a delay (no SYN packets), no TSO/GSO, no TSQ, no fq qdisc, undo of fast recovery only (D-SACK, timestamps); ECN as RFC 3168 / DCTCP;
//! loss detection by RACK as Linux, or RFC 6675 on request).
//!
//! Determinism: integer nanosecond time ([`time`]), events ordered by (time, insertion
//! sequence) ([`sched`]), one seeded RNG with named sub-streams ([`rng`]). The same
//! configuration and seed give bit-identical output.
//!
//! Entry points: [`config::WorldConfig`] (the plain configuration), [`world::World`]
//! (`new`, `run_until`, `finish`, or `World::run_config`), [`record::RunOutput`].

pub mod app;
pub mod config;
pub mod contract;
pub mod interval;
pub mod native_cc;
pub mod net;
pub mod onoff;
mod prefetch;
pub mod probe;
pub mod record;
pub mod rng;
pub mod sched;
mod sched_keys;
pub mod schema;
pub mod source;
pub mod start_jitter;
pub mod tcp;
pub mod time;
pub mod validate;
pub mod world;

pub use config::{ConfigError, WorldConfig};
pub use contract::{AgentConfig, CcChoice, ControllerFactory};
pub use interval::{AgentStep, AgentWrite, FlowState, IntervalAgent, IntervalStats};
pub use native_cc::NativeCc;
pub use record::RunOutput;
pub use world::{SimError, World};

/// Parse a JSON configuration, run it with the controllers `cc` builds, and return the
/// output.
pub fn run_json(text: &str, cc: &dyn ControllerFactory) -> Result<RunOutput, SimError> {
    let cfg = WorldConfig::from_json(text)?;
    World::run_config(&cfg, cc)
}
