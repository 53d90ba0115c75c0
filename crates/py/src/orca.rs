//! Orca's mathematics for tcplab.gym's Orca preset (crates/controllers' `policy::orca`,
//! the code an in-engine `policy:` file with `preset = "orca"` runs): the state history
//! and reward, the window an action writes, and when the agent starts. Flow state comes
//! as tcplab.gym's FlowState holds it (floats: counts and microseconds, cast here).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use tcplab_controllers::policy as agent;
use tcplab_sim::world::stepping::FlowState;

use crate::parse;
use crate::stepping::{check_history, interval_from};

/// Orca's state history: `push(interval, cwnd_pkts, inflight_pkts, srtt_us, min_rtt_us)`
/// takes an interval in INTERVAL_FIELDS order and the flow's state at its end and returns
/// the observation (float32 values, the last `history` reports of 7 features, oldest
/// first); `reward()` is the last report's reward.
#[pyclass(module = "tcplab._engine")]
pub struct OrcaObservation {
    inner: agent::OrcaObservation,
}

#[pymethods]
impl OrcaObservation {
    #[new]
    fn new(history: usize) -> PyResult<Self> {
        check_history(history)?;
        Ok(OrcaObservation {
            inner: agent::OrcaObservation::new(history),
        })
    }
    fn push(
        &mut self,
        interval: [f64; 10],
        cwnd_pkts: f64,
        inflight_pkts: f64,
        srtt_us: f64,
        min_rtt_us: f64,
    ) -> Vec<f32> {
        let st = state(cwnd_pkts, inflight_pkts, srtt_us, min_rtt_us);
        self.inner.push(&interval_from(interval), &st).to_vec()
    }
    fn reward(&self) -> f64 {
        self.inner.reward()
    }
}

/// The window Orca writes for action `a` on a window of `cwnd` segments.
#[pyfunction]
pub(crate) fn orca_cwnd(cwnd: f64, a: f64) -> u32 {
    agent::orca_cwnd(cwnd as u32, a)
}

/// Whether Orca's agent acts yet: an RTT sample, and CUBIC out of slow start.
#[pyfunction]
pub(crate) fn orca_ready(srtt_us: f64, ssthresh_pkts: f64, cwnd_pkts: f64) -> bool {
    agent::orca_ready(&ready_state(srtt_us, ssthresh_pkts, cwnd_pkts))
}

/// What the start rule reads (`orca_ready`).
fn ready_state(srtt_us: f64, ssthresh_pkts: f64, cwnd_pkts: f64) -> FlowState {
    FlowState {
        ssthresh_pkts: ssthresh_pkts as u32,
        ..state(cwnd_pkts, 0.0, srtt_us, 0.0)
    }
}

fn state(cwnd_pkts: f64, inflight_pkts: f64, srtt_us: f64, min_rtt_us: f64) -> FlowState {
    FlowState {
        cwnd_pkts: cwnd_pkts as u32,
        inflight_pkts: inflight_pkts as u32,
        srtt_us: srtt_us as u64,
        min_rtt_us: min_rtt_us as u64,
        ..FlowState::default()
    }
}

/// One Orca policy's loop for one flow of a world config (`agents[index]`), apart from
/// the world: crates/controllers' `OrcaController`, the code the simulator's agents run.
/// The kernel backend's agent (tcplab/backends/kernel/policy_agent.py) drives a real
/// socket running the kernel's CUBIC with it (policy_cubic.bpf.c). It writes windows
/// only: `start` and `begin` return when to look or act next (ns), `act` the action,
/// the window to write and the next step.
#[pyclass(module = "tcplab._engine")]
pub struct OrcaAgent {
    inner: agent::OrcaController,
    #[pyo3(get)]
    flow: usize,
}

#[pymethods]
impl OrcaAgent {
    #[new]
    fn new(config_json: &str, index: usize) -> PyResult<Self> {
        let cfg = parse(config_json)?;
        let inner = agent::PolicyAgent::orca_for(&cfg, index)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(OrcaAgent {
            inner,
            flow: cfg.agents[index].flow,
        })
    }
    /// Whether the controller still waits for CUBIC's first exit from slow start.
    #[getter]
    fn waiting(&self) -> bool {
        self.inner.waiting()
    }
    /// At the start: nothing written; the next look (ns).
    fn start(&mut self, now_ns: u64) -> u64 {
        self.inner.start(now_ns).next_ns
    }
    /// A look while waiting: None until the flow is ready (look again MIN_STEP_NS
    /// later), then the first report's end (ns).
    fn begin(
        &mut self,
        now_ns: u64,
        srtt_us: f64,
        ssthresh_pkts: f64,
        cwnd_pkts: f64,
    ) -> Option<u64> {
        self.inner
            .begin(now_ns, &ready_state(srtt_us, ssthresh_pkts, cwnd_pkts))
            .map(|s| s.next_ns)
    }
    fn observe(
        &mut self,
        interval: [f64; 10],
        cwnd_pkts: f64,
        inflight_pkts: f64,
        srtt_us: f64,
        min_rtt_us: f64,
    ) -> Vec<f32> {
        let st = state(cwnd_pkts, inflight_pkts, srtt_us, min_rtt_us);
        self.inner.observe(&interval_from(interval), &st).to_vec()
    }
    /// (action, window to write, its percentage of the window read, next step ns); before
    /// the start a ValueError. The kernel's program applies the percentage to the window
    /// the socket has when the write lands (policy_cubic.bpf.c), at least `min_cwnd`.
    fn act(&mut self, now_ns: u64, cwnd_pkts: f64, srtt_us: f64) -> PyResult<(f64, u32, u64, u64)> {
        if self.inner.waiting() {
            return Err(PyValueError::new_err(
                "act: the controller has not started (CUBIC has not left slow start yet)",
            ));
        }
        let (a, step) = self.inner.act(now_ns, &state(cwnd_pkts, 0.0, srtt_us, 0.0));
        let cwnd = step.write.map_or(cwnd_pkts as u32, |w| w.cwnd);
        Ok((a, cwnd, agent::orca::orca_percent(a), step.next_ns))
    }
    /// The least window a write leaves (Orca's floor, segments).
    #[getter]
    fn min_cwnd(&self) -> u32 {
        agent::orca::ORCA_MIN_CWND
    }
}
