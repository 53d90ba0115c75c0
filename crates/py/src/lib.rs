//! `tcplab._engine`: PyO3 glue only. A JSON configuration in (the contract of
//! `tcplab_sim::config`), the `RunOutput` out through its serde form (pythonize: the
//! same shape as its JSON, described by `schema()`); errors mapped: a configuration
//! error -> ValueError("field: message"), a flow's algorithm that failed during the run
//! (a BPF program's fault) -> AlgorithmFault (a RuntimeError with `flow`, `message`), a failed
//! conservation check or a Rust panic -> RuntimeError. No panic crosses into Python.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{PyMemoryError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use tcplab_cc::registry::{ParamKind, ALGORITHMS};
use tcplab_controllers::Controllers;
use tcplab_sim::time::SimTime;
use tcplab_sim::{SimError, World, WorldConfig};

mod orca;
mod stepping;

// A flow's algorithm failed during the run: the user's BPF program faulted (an
// out-of-bounds access, a call depth over 8, ...). Its own type so that Python can tell
// the user's program from tcplab's failures (exit 2, not 1). Its text is SimError's
// ("flow 3: callback ..."); attributes `flow` (the engine's flat index) and `message`.
// A RuntimeError, as every run failure was before.
pyo3::create_exception!(_engine, AlgorithmFault, PyRuntimeError);

/// How many progress callbacks a run makes (about).
pub(crate) const PROGRESS_STEPS: u64 = 100;
/// How many slices a run is cut into, progress or not: between two slices the GIL is
/// taken back and pending signals run their Python handlers (Ctrl-C, SIGTERM), so a
/// quiet run (`-q`) stops as soon as a progress-reporting one.
pub(crate) const SLICES: u64 = 1000;

pub(crate) fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

pub(crate) fn sim_err(e: SimError) -> PyErr {
    match e {
        SimError::Config(c) => PyValueError::new_err(c.to_string()),
        SimError::Algorithm { flow, ref message } => Python::with_gil(|py| {
            let err = AlgorithmFault::new_err(e.to_string());
            let value = err.value(py);
            // Setting an attribute on a fresh exception object cannot fail short of
            // memory; the text above says the same either way.
            let _ = value.setattr("flow", flow);
            let _ = value.setattr("message", message.as_str());
            err
        }),
        SimError::Conservation(_) => PyRuntimeError::new_err(e.to_string()),
    }
}

pub(crate) fn parse(config_json: &str) -> PyResult<WorldConfig> {
    let cfg =
        WorldConfig::from_json(config_json).map_err(|e| PyValueError::new_err(e.to_string()))?;
    cfg.validate(&Controllers::new())
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(cfg)
}

/// Run a configuration (JSON text). `progress(sim_time_s)` is called about 100 times.
/// Returns the run's `RunOutput` as Python objects (its shape: `schema()["run_output"]`).
/// With `max_packets_held`, the run stops with MemoryError when its links hold more
/// packets than that between two slices (the memory limit, from Python's estimate of
/// bytes per packet): an unlimited buffer cannot be bounded before the run.
#[pyfunction]
#[pyo3(signature = (config_json, progress=None, max_packets_held=None))]
fn run<'py>(
    py: Python<'py>,
    config_json: &str,
    progress: Option<PyObject>,
    max_packets_held: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let cfg = parse(config_json)?;
    let controllers = Controllers::new();
    let mut world = catch_unwind(AssertUnwindSafe(|| World::new(&cfg, &controllers)))
        .map_err(|p| PyRuntimeError::new_err(format!("engine panic: {}", panic_message(p))))?
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let end = world.end().ns();
    let every = SLICES / PROGRESS_STEPS;
    for k in 1..=SLICES {
        let t = SimTime(((end as u128 * k as u128) / SLICES as u128) as u64);
        py.allow_threads(|| catch_unwind(AssertUnwindSafe(|| world.run_until(t))))
            .map_err(|p| PyRuntimeError::new_err(format!("engine panic: {}", panic_message(p))))?;
        py.check_signals()?;
        if let Some(cap) = max_packets_held {
            let held = world.packets_held();
            if held > cap {
                return Err(PyMemoryError::new_err(format!(
                    "the run held {held} packets in its links at {:.3} s, more than the \
                     memory limit allows ({cap})",
                    t.secs_f64()
                )));
            }
        }
        if let (Some(cb), true) = (&progress, k % every == 0) {
            cb.call1(py, (t.secs_f64(),))?;
        }
    }
    let out = py
        .allow_threads(|| catch_unwind(AssertUnwindSafe(|| world.finish())))
        .map_err(|p| PyRuntimeError::new_err(format!("engine panic: {}", panic_message(p))))?
        .map_err(sim_err)?;
    let doc = pythonize::pythonize(py, &out).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    // BPF programs' bpf_printk lines (the kernel's trace_pipe): beside the run's output,
    // only when a program printed (tcplab.storage writes them to bpf_printk.log).
    let (lines, dropped) = controllers.printk();
    if !lines.is_empty() || dropped > 0 {
        let rows = PyList::empty(py);
        for l in lines {
            let row = PyDict::new(py);
            row.set_item("program", l.program)?;
            row.set_item("time_ns", l.time_ns)?;
            row.set_item("text", l.text)?;
            rows.append(row)?;
        }
        doc.set_item("bpf_printk", rows)?;
        doc.set_item("bpf_printk_dropped", dropped)?;
    }
    // Every map of each loaded BPF program at the end (tcplab.storage: bpf_maps.json):
    // [{"program", "maps": [{"name", "type", "key_size", "value_size", "max_entries",
    // "entries": [{"key": hex, "value": hex}]}]}], only when a program was loaded.
    let programs = controllers.bpf_maps();
    if !programs.is_empty() {
        let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        let rows = PyList::empty(py);
        for (program, maps) in programs {
            let pd = PyDict::new(py);
            pd.set_item("program", program)?;
            let ml = PyList::empty(py);
            for m in maps {
                let md = PyDict::new(py);
                md.set_item("name", m.name)?;
                md.set_item("type", m.map_type)?;
                md.set_item("key_size", m.key_size)?;
                md.set_item("value_size", m.value_size)?;
                md.set_item("max_entries", m.max_entries)?;
                let el = PyList::empty(py);
                for (k, v) in &m.entries {
                    let e = PyDict::new(py);
                    e.set_item("key", hex(k))?;
                    e.set_item("value", hex(v))?;
                    el.append(e)?;
                }
                md.set_item("entries", el)?;
                ml.append(md)?;
            }
            pd.set_item("maps", ml)?;
            rows.append(pd)?;
        }
        doc.set_item("bpf_maps", rows)?;
    }
    Ok(doc)
}

/// Check a configuration without running it; raises ValueError("field: message").
#[pyfunction]
fn validate(config_json: &str) -> PyResult<()> {
    catch_unwind(|| parse(config_json).map(|_| ()))
        .map_err(|p| PyRuntimeError::new_err(format!("engine panic: {}", panic_message(p))))?
}

/// The registered algorithms: [{name, summary, source, held_against, params: [{name, kind, default,
/// min, max, doc, and for kind "choice" choices: [(label, value)]}]}].
#[pyfunction]
fn algorithms(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let out = PyList::empty(py);
    for spec in ALGORITHMS {
        let d = PyDict::new(py);
        d.set_item("name", spec.name)?;
        d.set_item("family", spec.family.name())?;
        d.set_item("summary", spec.summary)?;
        d.set_item("source", spec.source)?;
        d.set_item("held_against", tcplab_cc::registry::held_against(spec.name))?;
        let params = PyList::empty(py);
        for p in spec.params {
            let pd = PyDict::new(py);
            pd.set_item("name", p.name)?;
            let kind = match p.kind {
                ParamKind::Float => "float",
                ParamKind::Int => "int",
                ParamKind::Bool => "bool",
                ParamKind::Choice(_) => "choice",
            };
            pd.set_item("kind", kind)?;
            match p.kind {
                ParamKind::Bool => pd.set_item("default", p.default != 0.0)?,
                ParamKind::Int => pd.set_item("default", p.default as i64)?,
                ParamKind::Float => pd.set_item("default", p.default)?,
                ParamKind::Choice(choices) => {
                    pd.set_item("default", p.default)?;
                    // [(label, value)]: the spec writes the label, the flow carries the value.
                    let list: Vec<(&str, f64)> =
                        choices.iter().map(|c| (c.label, c.value)).collect();
                    pd.set_item("choices", list)?;
                }
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

/// Check an algorithm name and its parameters (JSON object text) against the registry:
/// None, or (field, message) with field `cc` or `params.<name>`
/// (tcplab_sim::native_cc::check_cc, the rules the engine applies to every flow).
#[pyfunction]
fn check_params(cc: &str, params_json: &str) -> PyResult<Option<(String, String)>> {
    let params = serde_json::from_str(params_json)
        .map_err(|e| PyValueError::new_err(format!("params: {e}")))?;
    catch_unwind(|| tcplab_sim::native_cc::check_cc(cc, &params))
        .map_err(|p| PyRuntimeError::new_err(format!("engine panic: {}", panic_message(p))))
        .map(|r| r.err().map(|e| (e.field, e.message)))
}

/// The series columns a run of this configuration writes, as (name, kind) with kind
/// "u64", "f64" or "str", without running it (tcplab_sim::world::series_columns).
#[pyfunction]
fn series_columns(config_json: &str) -> PyResult<Vec<(String, &'static str)>> {
    let cfg = parse(config_json)?;
    catch_unwind(AssertUnwindSafe(|| {
        tcplab_sim::world::series_columns(&cfg, &Controllers::new())
    }))
    .map_err(|p| PyRuntimeError::new_err(format!("engine panic: {}", panic_message(p))))?
    .map(|cols| cols.into_iter().map(|(n, k)| (n, k.name())).collect())
    .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Run the kernel backend's link emulator (crates/emu) on a config file, as the
/// `tcplab-emu` binary does, so an installed wheel carries it: None when it finished,
/// else (exit status, message). Meant for its own process
/// (`python -m tcplab.backends.kernel.emulator CONFIG`): it talks on stdin/stdout and dies
/// with its parent.
#[pyfunction]
fn emulate(py: Python<'_>, config_path: &str) -> Option<(i32, String)> {
    // The emulator is a process of its own whose stderr the kernel backend reports:
    // a panic there should say where (take_hook restores Rust's default hook).
    drop(std::panic::take_hook());
    py.allow_threads(|| tcplab_emu::run(config_path))
        .err()
        .map(|e| (e.code, e.message))
}

/// Run the kernel backend's BPF loader (crates/bpfload) with `args` (its command line
/// without the program name) and return its exit status, as the `tcplab-bpfload` binary
/// does, so every install carries it. Meant for its own process
/// (`python -m tcplab.bpf_loader ARGS`): `register` blocks its signals and waits for
/// SIGTERM or the end of its standard input while it holds the registrations.
#[pyfunction]
fn bpfload(py: Python<'_>, args: Vec<String>) -> i32 {
    py.allow_threads(|| tcplab_bpfload::run(&args))
}

/// How this extension was built: {"git_commit": the commit of the tree it was built
/// from, or None outside a git checkout (TCPLAB_GIT_COMMIT at build time overrides)}.
#[pyfunction]
fn build_info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("git_commit", option_env!("TCPLAB_GIT_COMMIT"))?;
    Ok(d)
}

/// A compiled BPF struct_ops object's name, `tcp_congestion_ops.flags` and parameters
/// (its `const volatile` globals): {"name": "bpf_cubic", "flags": 0, "params": [{"name", "kind": "bool" | "int", "min",
/// "max", "default"}]}; ValueError naming what is wrong with the object. `object_path` is
/// `PATH` or `PATH#OPS` (one of several struct_ops, tcplab_bpf::split_object_ref).
#[pyfunction]
fn bpf_object<'py>(py: Python<'py>, object_path: &str) -> PyResult<Bound<'py, PyDict>> {
    use tcplab_bpf::params::BpfParamKind;
    let (file, ops) = tcplab_bpf::split_object_ref(object_path);
    let bytes =
        std::fs::read(file).map_err(|e| PyValueError::new_err(format!("{object_path}: {e}")))?;
    let obj = catch_unwind(|| tcplab_bpf::BpfObject::parse_named(&bytes, ops))
        .map_err(|p| PyRuntimeError::new_err(format!("engine panic: {}", panic_message(p))))?
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let d = PyDict::new(py);
    d.set_item("name", obj.name())?;
    d.set_item("flags", obj.flags())?;
    let params = PyList::empty(py);
    for p in obj.params() {
        let pd = PyDict::new(py);
        pd.set_item("name", &p.name)?;
        match p.kind {
            BpfParamKind::Bool => pd.set_item("kind", "bool")?,
            BpfParamKind::Int { signed, bytes } => {
                let bits = 8 * bytes as u32;
                let (lo, hi) = if signed {
                    (
                        -(2f64.powi(bits as i32 - 1)),
                        2f64.powi(bits as i32 - 1) - 1.0,
                    )
                } else {
                    (0.0, 2f64.powi(bits as i32) - 1.0)
                };
                pd.set_item("kind", "int")?;
                pd.set_item("min", lo)?;
                pd.set_item("max", hi)?;
            }
        }
        match p.default {
            tcplab_cc::ParamValue::Bool(b) => pd.set_item("default", b)?,
            tcplab_cc::ParamValue::Num(x) => pd.set_item("default", x)?,
        }
        params.append(pd)?;
    }
    d.set_item("params", params)?;
    Ok(d)
}

/// The object file with a flow's parameters (JSON object text) written into its .rodata,
/// as the kernel backend registers it (tcplab_bpf::BpfObject::patched_elf); ValueError
/// naming the parameter or what is wrong with the object.
#[pyfunction]
fn bpf_patched<'py>(
    py: Python<'py>,
    object_path: &str,
    params_json: &str,
) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
    let (file, ops) = tcplab_bpf::split_object_ref(object_path);
    let bytes =
        std::fs::read(file).map_err(|e| PyValueError::new_err(format!("{object_path}: {e}")))?;
    let params = serde_json::from_str(params_json)
        .map_err(|e| PyValueError::new_err(format!("params: {e}")))?;
    let patched = catch_unwind(|| {
        let values = tcplab_sim::native_cc::param_values(&params)
            .map_err(|e| format!("{}: {}", e.field, e.message))?;
        let obj = tcplab_bpf::BpfObject::parse_named(&bytes, ops).map_err(|e| e.to_string())?;
        obj.patched_elf(&bytes, &values).map_err(|e| e.to_string())
    })
    .map_err(|p| PyRuntimeError::new_err(format!("engine panic: {}", panic_message(p))))?
    .map_err(PyValueError::new_err)?;
    Ok(pyo3::types::PyBytes::new(py, &patched))
}

/// The engine's contract as JSON Schema text: {"world_config", "run_output"}
/// (tcplab_sim::schema).
#[pyfunction]
fn schema() -> String {
    tcplab_sim::schema::contract().to_string()
}

/// Rust's default panic hook prints "thread panicked at ..." to stderr before the panic
/// becomes a Python error; the command already reports that error in one line ("engine
/// panic: ..." / "internal error: ..."), so the hook stays quiet unless TCPLAB_DEBUG is
/// set. (A Ctrl-C while pyo3 imports a module makes such a panic; the command then says
/// "interrupted" and nothing else.) The hook is this extension's own: each Rust
/// extension in a process has its own std. The emulator's process keeps the default.
fn quiet_panics() {
    if std::env::var_os("TCPLAB_DEBUG").is_none() {
        std::panic::set_hook(Box::new(|_| {}));
    }
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    quiet_panics();
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(check_params, m)?)?;
    m.add_function(wrap_pyfunction!(series_columns, m)?)?;
    m.add_function(wrap_pyfunction!(emulate, m)?)?;
    m.add_function(wrap_pyfunction!(bpfload, m)?)?;
    m.add_function(wrap_pyfunction!(build_info, m)?)?;
    m.add_function(wrap_pyfunction!(bpf_object, m)?)?;
    m.add_function(wrap_pyfunction!(bpf_patched, m)?)?;
    m.add("AlgorithmFault", m.py().get_type::<AlgorithmFault>())?;
    m.add_class::<stepping::Stepper>()?;
    m.add_class::<stepping::AuroraObservation>()?;
    m.add_class::<stepping::Policy>()?;
    m.add_class::<stepping::PolicyAgent>()?;
    m.add_function(wrap_pyfunction!(stepping::aurora_reward, m)?)?;
    m.add_function(wrap_pyfunction!(stepping::aurora_rate, m)?)?;
    m.add_function(wrap_pyfunction!(stepping::aurora_write, m)?)?;
    m.add_function(wrap_pyfunction!(stepping::aurora_start, m)?)?;
    // The shortest monitor interval (ns) and how often a waiting policy looks for its
    // first RTT sample (crates/controllers' policy), for tcplab.gym and the kernel agent.
    m.add(
        "POLICY_MIN_STEP_NS",
        tcplab_controllers::policy::MIN_STEP_NS,
    )?;
    m.add_function(wrap_pyfunction!(stepping::check_policy, m)?)?;
    m.add_function(wrap_pyfunction!(stepping::policy_underlay, m)?)?;
    m.add_class::<orca::OrcaObservation>()?;
    m.add_class::<orca::OrcaAgent>()?;
    m.add_function(wrap_pyfunction!(orca::orca_cwnd, m)?)?;
    m.add_function(wrap_pyfunction!(orca::orca_ready, m)?)?;
    m.add("ORCA_REPORT_NS", tcplab_controllers::policy::ORCA_REPORT_NS)?;
    // The receive window as capture tables carry it (storage/pcap.py): the receiver's
    // window scale and the value of an ACK that sets no limit.
    m.add("RCV_WSCALE", tcplab_sim::tcp::rcv_space::RCV_WSCALE)?;
    m.add("NO_WINDOW", tcplab_sim::net::packet::NO_WINDOW)?;
    Ok(())
}
