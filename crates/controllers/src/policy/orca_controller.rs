//! Orca's loop for one flow, apart from any world: CUBIC runs on its own until it first
//! leaves slow start ([`orca_ready`]); from then on, at each report the controller pushes
//! the interval into Orca's state history, evaluates the policy and scales CUBIC's window
//! by 4^a ([`orca_cwnd`]), as `CongestionControlEnv.step` does with the Orca preset.
//! The pacing rate is never written: CUBIC's own stays (Orca's server writes only
//! `TCP_CWND`). The simulator's agents and the kernel backend's (policy_agent.py over
//! policy_cubic.bpf.c, through crates/py's `OrcaAgent`) run it. See [`super::orca`] for
//! the sources and deviations.

use tcplab_sim::{AgentStep, AgentWrite, ConfigError, FlowState, IntervalStats};

use super::orca::{orca_cwnd, orca_ready, OrcaObservation};
use super::{next_step_ns, Mlp, PolicyConfig, MIN_STEP_NS};

#[derive(Clone, Debug)]
pub struct OrcaController {
    mlp: Mlp,
    obs: OrcaObservation,
    interval_ns: Option<u64>,
    rtt_fraction: f64,
    /// Whether CUBIC has left slow start and the policy acts.
    acting: bool,
}

impl OrcaController {
    /// A controller for a checked policy whose preset is "orca".
    pub fn new(p: &PolicyConfig) -> Result<OrcaController, ConfigError> {
        Ok(OrcaController {
            mlp: Mlp::new(p)?,
            obs: OrcaObservation::new(p.history),
            interval_ns: p.interval_ns,
            rtt_fraction: p.rtt_fraction,
            acting: false,
        })
    }

    /// Whether the controller still waits for CUBIC's first exit from slow start.
    pub fn waiting(&self) -> bool {
        !self.acting
    }

    /// At the run's start: nothing written (CUBIC starts as it does); look again
    /// [`MIN_STEP_NS`] later.
    pub fn start(&mut self, now_ns: u64) -> AgentStep {
        self.acting = false;
        self.obs = OrcaObservation::new(self.obs.history());
        AgentStep {
            write: None,
            next_ns: now_ns + MIN_STEP_NS,
        }
    }

    /// A look while waiting: None (look again at `now + MIN_STEP_NS`) until the flow is
    /// [`orca_ready`]; then the first report's end. The caller drops the statistics
    /// gathered while waiting.
    pub fn begin(&mut self, now_ns: u64, st: &FlowState) -> Option<AgentStep> {
        if !orca_ready(st) {
            return None;
        }
        self.acting = true;
        Some(AgentStep {
            write: None,
            next_ns: next_step_ns(now_ns, self.interval_ns, self.rtt_fraction, st.srtt_us),
        })
    }

    /// Push a report ending now (the flow's state now); the observation.
    pub fn observe(&mut self, iv: &IntervalStats, st: &FlowState) -> &[f32] {
        self.obs.push(iv, st)
    }

    /// The policy's action on the last observation (as float32, what the environment
    /// passes) and the step: the window scaled from the flow's window now, and the next
    /// report's end.
    pub fn act(&mut self, now_ns: u64, st: &FlowState) -> (f64, AgentStep) {
        let action = self.mlp.act(self.obs.current()) as f32 as f64;
        let step = AgentStep {
            write: Some(AgentWrite {
                rate_bps: None,
                cwnd: orca_cwnd(st.cwnd_pkts, action),
            }),
            next_ns: next_step_ns(now_ns, self.interval_ns, self.rtt_fraction, st.srtt_us),
        };
        (action, step)
    }
}
