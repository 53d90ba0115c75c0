//! `tcplab._engine.Stepper`: a running simulation held by Python (tcplab_sim's
//! `world::stepping::Stepper`), advanced by intervals, read and written between them.
//! Python runs once per call, never per packet. Flow state and interval statistics come
//! back as tuples of floats in the order of `STATE_FIELDS` / `INTERVAL_FIELDS` (a tuple
//! is the cheapest thing to build per step; tcplab.gym names them). Errors: a bad
//! config or write -> ValueError naming the field; a Rust panic -> RuntimeError.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;

use tcplab_controllers::Controllers;
use tcplab_sim::time::SimTime;
use tcplab_sim::world::stepping::{FlowState, IntervalStats, StepError, Stepper as Inner};
use tcplab_sim::World;

use tcplab_controllers::policy as agent;

use crate::{panic_message, parse, sim_err};

fn guard<T>(f: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f))
        .map_err(|p| PyRuntimeError::new_err(format!("engine panic: {}", panic_message(p))))
}

fn step_err(e: StepError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A flow's state, in `STATE_FIELDS` order.
const STATE_FIELDS: [&str; 17] = [
    "started",
    "cwnd_pkts",
    "ssthresh_pkts",
    "inflight_pkts",
    "pacing_rate_bps",
    "srtt_us",
    "min_rtt_us",
    "latest_rtt_us",
    "delivery_rate_bps",
    "ca_state",
    "sent_bytes",
    "acked_bytes",
    "delivered_bytes",
    "lost_pkts",
    "retransmitted_pkts",
    "rto_count",
    "now_us",
];

fn state_tuple(s: &FlowState, now_us: u64) -> [f64; 17] {
    [
        s.started as u8 as f64,
        s.cwnd_pkts as f64,
        s.ssthresh_pkts as f64,
        s.inflight_pkts as f64,
        s.pacing_rate_bps,
        s.srtt_us as f64,
        s.min_rtt_us as f64,
        s.latest_rtt_us as f64,
        s.delivery_rate_bps,
        s.ca_state as f64,
        s.sent_bytes as f64,
        s.acked_bytes as f64,
        s.delivered_bytes as f64,
        s.lost_pkts as f64,
        s.retransmitted_pkts as f64,
        s.rto_count as f64,
        now_us as f64,
    ]
}

/// An interval's statistics, in `INTERVAL_FIELDS` order.
const INTERVAL_FIELDS: [&str; 10] = [
    "duration_us",
    "sent_bytes",
    "acked_bytes",
    "delivered_bytes",
    "lost_pkts",
    "retransmitted_pkts",
    "rto_count",
    "rtt_samples",
    "rtt_mean_us",
    "rtt_min_us",
];

fn interval_tuple(i: &IntervalStats) -> [f64; 10] {
    [
        i.duration_us as f64,
        i.sent_bytes as f64,
        i.acked_bytes as f64,
        i.delivered_bytes as f64,
        i.lost_pkts as f64,
        i.retransmitted_pkts as f64,
        i.rto_count as f64,
        i.rtt_samples as f64,
        i.rtt_mean_us,
        i.rtt_min_us as f64,
    ]
}

/// A running simulation of one engine config (JSON text, as `run` takes).
// `unsendable`: a world is Send but not Sync (its algorithms and qdiscs are boxed
// trait objects); a simulation belongs to the thread that made it.
#[pyclass(module = "tcplab._engine", unsendable)]
pub struct Stepper {
    inner: Option<Inner>,
}

impl Stepper {
    fn get(&self) -> PyResult<&Inner> {
        self.inner
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err("this simulation has finished"))
    }
    fn get_mut(&mut self) -> PyResult<&mut Inner> {
        self.inner
            .as_mut()
            .ok_or_else(|| PyRuntimeError::new_err("this simulation has finished"))
    }
}

#[pymethods]
impl Stepper {
    #[new]
    fn new(config_json: &str) -> PyResult<Self> {
        let cfg = parse(config_json)?;
        let world = guard(|| World::new(&cfg, &Controllers::new()))?
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Stepper {
            inner: Some(Inner::new(world)),
        })
    }

    #[classattr]
    #[allow(non_snake_case)]
    fn STATE_FIELDS() -> Vec<&'static str> {
        STATE_FIELDS.to_vec()
    }

    #[classattr]
    #[allow(non_snake_case)]
    fn INTERVAL_FIELDS() -> Vec<&'static str> {
        INTERVAL_FIELDS.to_vec()
    }

    /// Simulated time now (ns).
    #[getter]
    fn now_ns(&self) -> PyResult<u64> {
        Ok(self.get()?.now().ns())
    }
    /// The run's end (ns).
    #[getter]
    fn end_ns(&self) -> PyResult<u64> {
        Ok(self.get()?.end().ns())
    }
    #[getter]
    fn n_flows(&self) -> PyResult<usize> {
        Ok(self.get()?.n_flows())
    }
    #[getter]
    fn done(&self) -> PyResult<bool> {
        Ok(self.get()?.done())
    }
    /// Flow `flow`'s algorithm as the run reports it.
    fn cc(&self, flow: usize) -> PyResult<String> {
        let s = self.get()?;
        if flow >= s.n_flows() {
            return Err(PyValueError::new_err(format!(
                "flow: {flow} is not a flow index; the world has flows 0..{}",
                s.n_flows()
            )));
        }
        Ok(s.cc_name(flow).to_string())
    }

    /// Run every event before `to_ns` (capped at the end; not before now); returns
    /// whether the run is at its end. The GIL is released meanwhile.
    fn advance(&mut self, py: Python<'_>, to_ns: u64) -> PyResult<bool> {
        let s = self.get_mut()?;
        if to_ns < s.now().ns() {
            return Err(PyValueError::new_err(format!(
                "to_ns: {to_ns} is before now ({} ns): a simulation only goes forward",
                s.now().ns()
            )));
        }
        py.allow_threads(|| guard(|| s.advance_to(SimTime(to_ns))))?;
        Ok(s.done())
    }

    /// Flow `flow`'s state now, in STATE_FIELDS order.
    fn state(&self, flow: usize) -> PyResult<[f64; 17]> {
        let s = self.get()?;
        let st = guard(|| s.state(flow))?.map_err(step_err)?;
        Ok(state_tuple(&st, s.now().ns() / 1000))
    }

    /// Flow `flow`'s statistics since the previous call for it, in INTERVAL_FIELDS order.
    fn interval(&mut self, flow: usize) -> PyResult<[f64; 10]> {
        let s = self.get_mut()?;
        let iv = guard(|| s.take_interval(flow))?.map_err(step_err)?;
        Ok(interval_tuple(&iv))
    }

    /// Write cwnd (segments) of any flow.
    fn set_cwnd(&mut self, flow: usize, cwnd: u32) -> PyResult<()> {
        let s = self.get_mut()?;
        guard(|| s.set_cwnd(flow, cwnd))?.map_err(step_err)
    }

    /// Write the pacing rate (bit/s, 0 = unpaced) of an `external` flow.
    fn set_pacing_rate(&mut self, flow: usize, bps: f64) -> PyResult<()> {
        let s = self.get_mut()?;
        guard(|| s.set_pacing_rate(flow, bps))?.map_err(step_err)
    }

    /// Write ssthresh (segments) of any flow.
    fn set_ssthresh(&mut self, flow: usize, ssthresh: u32) -> PyResult<()> {
        let s = self.get_mut()?;
        guard(|| s.set_ssthresh(flow, ssthresh))?.map_err(step_err)
    }

    /// Run to the end, check conservation and return the RunOutput (as `run` does); the
    /// object is spent afterwards.
    fn finish<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let s = self
            .inner
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this simulation has finished"))?;
        let out = py
            .allow_threads(|| guard(|| s.finish()))?
            .map_err(sim_err)?;
        pythonize::pythonize(py, &out).map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }
}

pub(crate) fn interval_from(t: [f64; 10]) -> IntervalStats {
    IntervalStats {
        duration_us: t[0] as u64,
        sent_bytes: t[1] as u64,
        acked_bytes: t[2] as u64,
        delivered_bytes: t[3] as u64,
        lost_pkts: t[4] as u64,
        retransmitted_pkts: t[5] as u64,
        rto_count: t[6] as u64,
        rtt_samples: t[7] as u64,
        rtt_mean_us: t[8],
        rtt_min_us: t[9] as u64,
    }
}

/// Aurora's observation history (crates/controllers' policy), the one code the training environment
/// and an in-engine policy use: `push(interval, srtt_us)` takes an interval in
/// INTERVAL_FIELDS order and returns the observation (float32 values).
#[pyclass(module = "tcplab._engine")]
pub struct AuroraObservation {
    inner: agent::AuroraObservation,
}

#[pymethods]
impl AuroraObservation {
    #[new]
    fn new(history: usize) -> PyResult<Self> {
        check_history(history)?;
        Ok(AuroraObservation {
            inner: agent::AuroraObservation::new(history),
        })
    }
    fn push(&mut self, interval: [f64; 10], srtt_us: f64) -> Vec<f32> {
        self.inner.push(&interval_from(interval), srtt_us).to_vec()
    }
}

/// An observation history's length as a policy file may give it (Mlp::new's bound).
pub(crate) fn check_history(history: usize) -> PyResult<()> {
    if history == 0 || history > 1000 {
        return Err(PyValueError::new_err("history: must be in 1..=1000"));
    }
    Ok(())
}

/// Aurora's reward for an interval (INTERVAL_FIELDS order) and srtt (us).
#[pyfunction]
pub(crate) fn aurora_reward(interval: [f64; 10], srtt_us: f64) -> f64 {
    agent::aurora_reward(&interval_from(interval), srtt_us)
}

/// Aurora's rate change for an action.
#[pyfunction]
pub(crate) fn aurora_rate(rate_bps: f64, action: f64) -> f64 {
    agent::aurora_rate(rate_bps, action)
}

fn positive_srtt(srtt_us: f64) -> PyResult<()> {
    if srtt_us.is_finite() && srtt_us > 0.0 {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "srtt_us: must be a finite RTT > 0 (a policy writes once its flow has an RTT \
             sample); got {srtt_us}"
        )))
    }
}

/// What Aurora writes for a rate at srtt `srtt_us` (> 0): (rate within the absolute
/// bounds, cwnd).
#[pyfunction]
pub(crate) fn aurora_write(rate_bps: f64, srtt_us: f64) -> PyResult<(f64, u32)> {
    positive_srtt(srtt_us)?;
    if !(rate_bps.is_finite() && rate_bps >= 0.0) {
        return Err(PyValueError::new_err(format!(
            "rate_bps: must be a finite rate >= 0; got {rate_bps}"
        )));
    }
    Ok(agent::aurora_write(rate_bps, srtt_us))
}

/// The start of a deployed policy at its first srtt `srtt_us` (> 0): the initial window
/// over that round trip, as `aurora_write` writes it: (rate, cwnd).
#[pyfunction]
pub(crate) fn aurora_start(srtt_us: f64) -> PyResult<(f64, u32)> {
    positive_srtt(srtt_us)?;
    Ok(agent::aurora_start(srtt_us))
}

fn parse_policy(policy_json: &str) -> PyResult<(agent::PolicyConfig, agent::Mlp)> {
    let bad = |e: String| PyValueError::new_err(e);
    let v: serde_json::Value = serde_json::from_str(policy_json).map_err(|e| bad(e.to_string()))?;
    agent::refuse_privileged(&v).map_err(|e| bad(e.to_string()))?;
    let p: agent::PolicyConfig = serde_json::from_value(v).map_err(|e| bad(e.to_string()))?;
    let mlp = agent::Mlp::new(&p).map_err(|e| bad(e.to_string()))?;
    Ok((p, mlp))
}

/// Check a policy file's JSON text; ValueError("field: message").
#[pyfunction]
pub(crate) fn check_policy(policy_json: &str) -> PyResult<()> {
    guard(|| parse_policy(policy_json).map(|_| ()))?
}

/// The algorithm a policy's flow runs underneath it (its preset's: "external" for
/// Aurora, "cubic" for Orca); ValueError for a policy that does not check.
#[pyfunction]
pub(crate) fn policy_underlay(policy_json: &str) -> PyResult<&'static str> {
    let (p, _) = guard(|| parse_policy(policy_json))??;
    agent::Preset::parse(&p.preset)
        .map(|k| k.underlay())
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A policy (JSON text, crates/controllers' policy's PolicyConfig): `act(observation) -> action`, the
/// network the engine evaluates for `cc = "policy:FILE"`.
#[pyclass(module = "tcplab._engine")]
pub struct Policy {
    mlp: agent::Mlp,
    /// Values in an observation (features per interval x history).
    width: usize,
}

#[pymethods]
impl Policy {
    #[new]
    fn new(policy_json: &str) -> PyResult<Self> {
        let (p, mlp) = guard(|| parse_policy(policy_json))??;
        // parse_policy checked the preset (Mlp::new).
        let features = agent::Preset::parse(&p.preset).map_or(3, |k| k.features());
        Ok(Policy {
            mlp,
            width: features * p.history,
        })
    }
    fn act(&self, observation: Vec<f32>) -> PyResult<f64> {
        if observation.len() != self.width {
            return Err(PyValueError::new_err(format!(
                "observation: {} values; this policy reads {}",
                observation.len(),
                self.width
            )));
        }
        Ok(self.mlp.act(&observation))
    }
}

/// One policy's loop for one flow of a world config (`agents[index]`), apart from the
/// world: crates/controllers' policy's `PolicyController`, the code the simulator's agents run. The
/// kernel backend's agent (tcplab/backends/kernel/policy_agent.py) drives a real socket
/// with it. `start(now_ns, srtt_us)` and `act(now_ns, srtt_us)` return what to write
/// (rate bit/s, cwnd segments) and when to act next (ns); `observe(interval, srtt_us)`
/// takes an interval in INTERVAL_FIELDS order and returns the observation.
#[pyclass(module = "tcplab._engine")]
pub struct PolicyAgent {
    inner: agent::PolicyController,
    #[pyo3(get)]
    flow: usize,
}

#[pymethods]
impl PolicyAgent {
    #[new]
    fn new(config_json: &str, index: usize) -> PyResult<Self> {
        let cfg = parse(config_json)?;
        let inner = agent::PolicyAgent::controller_for(&cfg, index)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(PolicyAgent {
            inner,
            flow: cfg.agents[index].flow,
        })
    }
    /// Whether the controller still waits for its flow's first RTT sample.
    #[getter]
    fn waiting(&self) -> bool {
        self.inner.waiting()
    }
    /// Before the connection: (rate 0 = unpaced, TCP's initial window, next look ns).
    fn start(&mut self, now_ns: u64) -> (f64, u32, u64) {
        let d = self.inner.start(now_ns);
        (d.rate_bps, d.cwnd, d.next_ns)
    }
    /// A look while waiting: None until `srtt_us` > 0 (look again MIN_STEP_NS later),
    /// then the start (rate bit/s, cwnd, next step ns).
    fn begin(&mut self, now_ns: u64, srtt_us: u64) -> Option<(f64, u32, u64)> {
        self.inner
            .begin(now_ns, srtt_us)
            .map(|d| (d.rate_bps, d.cwnd, d.next_ns))
    }
    fn observe(&mut self, interval: [f64; 10], srtt_us: u64) -> Vec<f32> {
        self.inner
            .observe(&interval_from(interval), srtt_us)
            .to_vec()
    }
    /// (action, rate bit/s, cwnd, next step ns); before the start a ValueError.
    fn act(&mut self, now_ns: u64, srtt_us: u64) -> PyResult<(f64, f64, u32, u64)> {
        let (a, d) = guard(|| self.inner.act(now_ns, srtt_us))?.ok_or_else(|| {
            PyValueError::new_err("act: the controller has not started (no RTT sample yet)")
        })?;
        Ok((a, d.rate_bps, d.cwnd, d.next_ns))
    }
}
