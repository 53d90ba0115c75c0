//! `tcplab._engine`: PyO3 glue only. A JSON configuration in (the contract of
//! `tcplab_sim::config`), counters and columns out as plain Python objects; errors
//! mapped: a configuration error -> ValueError("field: message"), a failed conservation
//! check or a Rust panic -> RuntimeError. No panic crosses into Python.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use tcplab_cc::registry::{ParamKind, ALGORITHMS};
use tcplab_sim::record::{Column, Table};
use tcplab_sim::time::SimTime;
use tcplab_sim::{RunOutput, SimError, World, WorldConfig};

/// How many progress callbacks a run makes (about).
const PROGRESS_STEPS: u64 = 100;

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

fn sim_err(e: SimError) -> PyErr {
    match e {
        SimError::Config(c) => PyValueError::new_err(c.to_string()),
        SimError::Conservation(_) | SimError::Algorithm { .. } => {
            PyRuntimeError::new_err(e.to_string())
        }
    }
}

fn parse(config_json: &str) -> PyResult<WorldConfig> {
    let cfg =
        WorldConfig::from_json(config_json).map_err(|e| PyValueError::new_err(e.to_string()))?;
    cfg.validate()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(cfg)
}

fn table<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in &t.columns {
        match col {
            Column::U64(v) => d.set_item(name, PyList::new(py, v)?)?,
            Column::F64(v) => d.set_item(name, PyList::new(py, v)?)?,
            Column::Str(v) => d.set_item(name, PyList::new(py, v)?)?,
        }
    }
    Ok(d)
}

fn to_py<'py>(py: Python<'py>, out: &RunOutput) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let flows = PyList::empty(py);
    for f in &out.flows {
        let fd = PyDict::new(py);
        fd.set_item("cc", &f.cc)?;
        fd.set_item("sent_packets", f.sent_packets)?;
        fd.set_item("sent_bytes", f.sent_bytes)?;
        fd.set_item("retransmitted_packets", f.retransmitted_packets)?;
        fd.set_item("received_packets", f.received_packets)?;
        fd.set_item("received_bytes", f.received_bytes)?;
        fd.set_item("delivered_bytes", f.delivered_bytes)?;
        fd.set_item("duplicate_packets", f.duplicate_packets)?;
        fd.set_item("dropped_packets", f.dropped_packets)?;
        fd.set_item("in_flight_packets_at_end", f.in_flight_packets_at_end)?;
        fd.set_item("rto_count", f.rto_count)?;
        fd.set_item("recoveries", f.recoveries)?;
        fd.set_item("tlp_probes", f.tlp_probes)?;
        fd.set_item("ce_packets", f.ce_packets)?;
        fd.set_item("ece_acks", f.ece_acks)?;
        fd.set_item("ecn_reductions", f.ecn_reductions)?;
        fd.set_item("start_ns", f.start_ns)?;
        fd.set_item("stop_ns", f.stop_ns)?;
        if let Some(c) = f.completed_ns {
            fd.set_item("completed_ns", c)?;
        }
        flows.append(fd)?;
    }
    let queues = PyList::empty(py);
    for q in &out.queues {
        let qd = PyDict::new(py);
        qd.set_item("name", &q.name)?;
        qd.set_item("enqueued", q.enqueued)?;
        qd.set_item("departed", q.departed)?;
        qd.set_item("dropped", q.dropped)?;
        qd.set_item("random_loss", q.random_loss)?;
        qd.set_item("marked", q.marked)?;
        qd.set_item("backlog_pkts", q.backlog_pkts)?;
        qd.set_item("backlog_bytes", q.backlog_bytes)?;
        queues.append(qd)?;
    }
    d.set_item("flows", flows)?;
    if !out.sources.is_empty() {
        // Only when the config has sources, so that other runs' results are as they were.
        let sources = PyList::empty(py);
        for c in &out.sources {
            let sd = PyDict::new(py);
            sd.set_item("rate_bps", c.rate_bps)?;
            sd.set_item("packet_bytes", c.packet_bytes)?;
            sd.set_item("sent_packets", c.sent_packets)?;
            sd.set_item("sent_bytes", c.sent_bytes)?;
            sd.set_item("received_packets", c.received_packets)?;
            sd.set_item("received_bytes", c.received_bytes)?;
            sd.set_item("dropped_packets", c.dropped_packets)?;
            sd.set_item("in_flight_packets_at_end", c.in_flight_packets_at_end)?;
            sd.set_item("on_ns", c.on_ns)?;
            sd.set_item("start_ns", c.start_ns)?;
            sd.set_item("stop_ns", c.stop_ns)?;
            sources.append(sd)?;
        }
        d.set_item("sources", sources)?;
    }
    d.set_item("queues", queues)?;
    d.set_item("series", table(py, &out.series)?)?;
    d.set_item("queue_series", table(py, &out.queue_series)?)?;
    d.set_item("bottleneck_packets", out.bottleneck_packets)?;
    d.set_item("events_processed", out.events_processed)?;
    d.set_item("duration_ns", out.duration_ns)?;
    if !out.captures.is_empty() {
        let caps = PyDict::new(py);
        for (name, t) in &out.captures {
            caps.set_item(name, table(py, t)?)?;
        }
        d.set_item("captures", caps)?;
        d.set_item("capture_missed", out.capture_missed)?;
    }
    Ok(d)
}

/// Run a configuration (JSON text). `progress(sim_time_s)` is called about 100 times.
/// Returns {"flows", "queues", "series", "queue_series", "bottleneck_packets",
/// "events_processed", "duration_ns"}.
#[pyfunction]
#[pyo3(signature = (config_json, progress=None))]
fn run<'py>(
    py: Python<'py>,
    config_json: &str,
    progress: Option<PyObject>,
) -> PyResult<Bound<'py, PyDict>> {
    let cfg = parse(config_json)?;
    let mut world = catch_unwind(AssertUnwindSafe(|| World::new(&cfg)))
        .map_err(|p| PyRuntimeError::new_err(format!("engine panic: {}", panic_message(p))))?
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let end = world.end().ns();
    let steps = if progress.is_some() {
        PROGRESS_STEPS
    } else {
        1
    };
    for k in 1..=steps {
        let t = SimTime(((end as u128 * k as u128) / steps as u128) as u64);
        py.allow_threads(|| catch_unwind(AssertUnwindSafe(|| world.run_until(t))))
            .map_err(|p| PyRuntimeError::new_err(format!("engine panic: {}", panic_message(p))))?;
        if let Some(cb) = &progress {
            cb.call1(py, (t.secs_f64(),))?;
        }
    }
    let out = py
        .allow_threads(|| catch_unwind(AssertUnwindSafe(|| world.finish())))
        .map_err(|p| PyRuntimeError::new_err(format!("engine panic: {}", panic_message(p))))?
        .map_err(sim_err)?;
    to_py(py, &out)
}

/// Check a configuration without running it; raises ValueError("field: message").
#[pyfunction]
fn validate(config_json: &str) -> PyResult<()> {
    catch_unwind(|| parse(config_json).map(|_| ()))
        .map_err(|p| PyRuntimeError::new_err(format!("engine panic: {}", panic_message(p))))?
}

/// The registered algorithms: [{name, summary, source, params: [{name, kind, default,
/// min, max, doc}]}].
#[pyfunction]
fn algorithms(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for spec in ALGORITHMS {
        let d = PyDict::new(py);
        d.set_item("name", spec.name)?;
        d.set_item("summary", spec.summary)?;
        d.set_item("source", spec.source)?;
        let params = PyList::empty(py);
        for p in spec.params {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            let kind = match p.kind {
                ParamKind::Float => "float",
                ParamKind::Int => "int",
                ParamKind::Bool => "bool",
            };
            pd.set_item("kind", kind)?;
            match p.kind {
                ParamKind::Bool => pd.set_item("default", p.default != 0.0)?,
                ParamKind::Int => pd.set_item("default", p.default as i64)?,
                ParamKind::Float => pd.set_item("default", p.default)?,
            }
            pd.set_item("min", p.min)?;
            pd.set_item("max", p.max)?;
            pd.set_item("doc", p.doc)?;
            params.append(pd)?;
        }
        d.set_item("params", params)?;
        out.append(d)?;
    }
    Ok(out)
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    Ok(())
}
