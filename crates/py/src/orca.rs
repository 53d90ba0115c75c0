//! Orca's mathematics for tcplab.gym's Orca preset (crates/controllers' `policy::orca`,
//! the code an in-engine `policy:` file with `preset = "orca"` runs): the state history
//! and reward, the window an action writes, and when the agent starts. Flow state comes
//! as tcplab.gym's FlowState holds it (floats: counts and microseconds, cast here).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use tcplab_controllers::policy as agent;
use tcplab_sim::world::stepping::FlowState;

use crate::stepping::interval_from;

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
        if history == 0 || history > 1000 {
            return Err(PyValueError::new_err("history: must be in 1..=1000"));
        }
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
        let st = FlowState {
            cwnd_pkts: cwnd_pkts as u32,
            inflight_pkts: inflight_pkts as u32,
            srtt_us: srtt_us as u64,
            min_rtt_us: min_rtt_us as u64,
            ..FlowState::default()
        };
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
    agent::orca_ready(&FlowState {
        srtt_us: srtt_us as u64,
        ssthresh_pkts: ssthresh_pkts as u32,
        cwnd_pkts: cwnd_pkts as u32,
        ..FlowState::default()
    })
}
