//! Stepping: a world held between calls, advanced by the caller in intervals of its own
//! choosing (a learning agent's monitor interval), with each flow's state and the
//! interval's statistics read in between, and cwnd, pacing rate and ssthresh written as a
//! congestion controller writes them (tcplab.gym drives it through crates/py).
//!
//! Nothing here runs per packet: the event loop is `World::run_until`, unchanged; the
//! interval statistics are differences of the stack's counters between two reads plus
//! the RTT samples the sender sums as it takes them (`RttSamples`, tcp/rtt.rs). A run
//! stepped to its end and finished gives the same `RunOutput` as `World::run_config`
//! when nothing is written (tests/stepping.rs).
//!
//! Writes act at the current simulated time, between events:
//! - `set_cwnd` writes `tp.snd_cwnd` of any flow (as Orca's kernel module writes
//!   `tp->snd_cwnd` over CUBIC; the flow's algorithm continues from it on the next ACK),
//!   then lets the sender transmit what the new window allows (`tcp_push`-like).
//! - `set_pacing_rate` only for `external` flows (an algorithm without `cong_control`
//!   recomputes `sk_pacing_rate` on every ACK, so a write would not hold); 0 = unpaced.
//! - `set_ssthresh` writes `tp.snd_ssthresh` of any flow.
//!
//! A write to a flow whose connection is not established yet is kept and applied when the
//! first `advance` that establishes it returns (the socket is created fresh at
//! establishment, so an earlier write would be lost): at most one interval late.
//!
//! Snapshots (cloning a running world) are not offered: a world holds each flow's
//! algorithm as `Box<dyn CongestionOps>` (BPF programs with their maps and VM among
//! them), which has no clone; adding one to every algorithm is the price, not the copy
//! of the queues (a few hundred KB).

pub use crate::interval::{FlowState, IntervalStats};

use super::{SimError, World};
use crate::record::RunOutput;
use crate::time::SimTime;

/// A write that waits for its flow's connection.
#[derive(Clone, Copy, Debug, Default)]
struct Pending {
    cwnd: Option<u32>,
    pacing_bytes: Option<u64>,
    ssthresh: Option<u32>,
}

/// A world held for stepping; see the module docs.
pub struct Stepper {
    world: World,
    /// Per flow, its state at the previous interval read and when that was.
    marks: Vec<(FlowState, SimTime)>,
    pending: Vec<Pending>,
}

/// Why a write was refused: the argument's name and what is allowed.
#[derive(Clone, Debug, PartialEq)]
pub struct StepError {
    pub field: &'static str,
    pub message: String,
}

impl std::fmt::Display for StepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl Stepper {
    pub fn new(world: World) -> Stepper {
        let n = world.flows.len();
        Stepper {
            world,
            marks: vec![(FlowState::default(), SimTime::ZERO); n],
            pending: vec![Pending::default(); n],
        }
    }

    pub fn world(&self) -> &World {
        &self.world
    }
    pub fn n_flows(&self) -> usize {
        self.world.flows.len()
    }
    pub fn now(&self) -> SimTime {
        self.world.now
    }
    pub fn end(&self) -> SimTime {
        self.world.end
    }
    pub fn done(&self) -> bool {
        self.world.now >= self.world.end
    }
    /// The registry name of flow `i`'s algorithm.
    pub fn cc_name(&self, i: usize) -> &str {
        &self.world.flows[i].cc_name
    }

    /// Run every event before `t` (capped at the end), then apply the writes that waited
    /// for a connection established meanwhile.
    pub fn advance_to(&mut self, t: SimTime) {
        self.world.run_until(t);
        for i in 0..self.pending.len() {
            if self.world.flows[i].sender.is_started() {
                let p = std::mem::take(&mut self.pending[i]);
                self.apply(i, p);
            }
        }
    }

    fn check_flow(&self, flow: usize) -> Result<(), StepError> {
        if flow >= self.world.flows.len() {
            return Err(StepError {
                field: "flow",
                message: format!(
                    "{flow} is not a flow index; the world has flows 0..{}",
                    self.world.flows.len()
                ),
            });
        }
        Ok(())
    }

    pub fn state(&self, flow: usize) -> Result<FlowState, StepError> {
        self.check_flow(flow)?;
        Ok(self.world.flow_state(flow))
    }

    /// The statistics of `flow` since the previous call for it (since the start at the
    /// first), and the RTT sample accumulator reset.
    pub fn take_interval(&mut self, flow: usize) -> Result<IntervalStats, StepError> {
        self.check_flow(flow)?;
        let now = self.world.now;
        let (iv, state) = self
            .world
            .interval_since(flow, &self.marks[flow].0, self.marks[flow].1);
        self.marks[flow] = (state, now);
        Ok(iv)
    }

    /// Write cwnd (segments, >= 1) of any flow.
    pub fn set_cwnd(&mut self, flow: usize, cwnd: u32) -> Result<(), StepError> {
        self.check_flow(flow)?;
        if cwnd == 0 {
            return Err(StepError {
                field: "cwnd",
                message: "must be at least 1 segment".into(),
            });
        }
        self.write(
            flow,
            Pending {
                cwnd: Some(cwnd),
                ..Default::default()
            },
        );
        Ok(())
    }

    /// Write the pacing rate (bit/s; 0 = unpaced) of an `external` flow.
    pub fn set_pacing_rate(&mut self, flow: usize, bps: f64) -> Result<(), StepError> {
        self.check_flow(flow)?;
        if !(bps.is_finite() && bps >= 0.0) {
            return Err(StepError {
                field: "pacing_rate",
                message: format!("must be a finite rate >= 0 bit/s; got {bps}"),
            });
        }
        if self.world.flows[flow].sender.cc.name() != "external" {
            return Err(StepError {
                field: "flow",
                message: format!(
                    "flow {flow} runs {}, which sets its own pacing rate on every ACK; \
                     only cc = \"external\" flows take one from outside",
                    self.world.flows[flow].cc_name
                ),
            });
        }
        self.write(
            flow,
            Pending {
                pacing_bytes: Some((bps / 8.0) as u64),
                ..Default::default()
            },
        );
        Ok(())
    }

    /// Write ssthresh (segments, >= 2 as `tcp_reno_ssthresh` keeps it) of any flow.
    pub fn set_ssthresh(&mut self, flow: usize, ssthresh: u32) -> Result<(), StepError> {
        self.check_flow(flow)?;
        if ssthresh < 2 {
            return Err(StepError {
                field: "ssthresh",
                message: "must be at least 2 segments".into(),
            });
        }
        self.write(
            flow,
            Pending {
                ssthresh: Some(ssthresh),
                ..Default::default()
            },
        );
        Ok(())
    }

    fn write(&mut self, flow: usize, w: Pending) {
        if self.world.flows[flow].sender.is_started() {
            self.apply(flow, w);
        } else {
            let p = &mut self.pending[flow];
            p.cwnd = w.cwnd.or(p.cwnd);
            p.pacing_bytes = w.pacing_bytes.or(p.pacing_bytes);
            p.ssthresh = w.ssthresh.or(p.ssthresh);
        }
    }

    fn apply(&mut self, flow: usize, w: Pending) {
        self.world
            .apply_write(flow, w.ssthresh, w.pacing_bytes, w.cwnd);
    }

    /// Run to the end, check conservation and produce the output, as `World::run_config`.
    pub fn finish(mut self) -> Result<RunOutput, SimError> {
        let end = self.world.end;
        self.world.run_until(end);
        self.world.finish()
    }
}
