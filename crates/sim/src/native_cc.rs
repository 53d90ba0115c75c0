//! The registry's algorithms (crates/cc) as a [`ControllerFactory`]: a flow's `cc`
//! names a registered algorithm and `params` its parameters, checked against the
//! algorithm's schema. This is the engine's own factory for its tests and tools; the
//! Python front end composes it with the BPF loader (crates/controllers).

use std::collections::BTreeMap;

use tcplab_cc::ops::CongestionOps;
use tcplab_cc::ParamValue;

use crate::contract::{CcChoice, ConfigError, ControllerFactory};

fn err(field: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError {
        field: field.into(),
        message: message.into(),
    }
}

/// The native registry (`tcplab_cc::registry::ALGORITHMS`).
#[derive(Clone, Copy, Debug, Default)]
pub struct NativeCc;

impl ControllerFactory for NativeCc {
    fn build(
        &self,
        choice: &CcChoice<'_>,
        seed: u64,
    ) -> Result<Box<dyn CongestionOps>, ConfigError> {
        if choice.bpf_object.is_some() {
            return Err(err(
                "bpf_object",
                "this engine was built without a BPF loader; only registered algorithms run",
            ));
        }
        let mut params = check_cc(choice.cc, choice.params)?;
        // An algorithm that draws random numbers (BBR's PROBE_BW start phase) takes a
        // `seed` parameter; unless the spec fixes it, each flow gets its own from the
        // run seed (World: stream "cc/<flow>"), so flows are desynchronised as in the
        // kernel and the run stays a function of (spec, seed).
        let takes_seed = tcplab_cc::registry::find(choice.cc)
            .is_some_and(|s| s.params.iter().any(|p| p.name == "seed"));
        if takes_seed && !params.contains_key("seed") {
            params.insert("seed".to_string(), ParamValue::Num(seed as f64));
        }
        tcplab_cc::registry::build(choice.cc, &params).map_err(|e| err("cc", e.to_string()))
    }
}

/// A flow's `params` (JSON) as the values an algorithm takes; the error names
/// `params.<name>`.
pub fn param_values(
    params: &BTreeMap<String, serde_json::Value>,
) -> Result<BTreeMap<String, tcplab_cc::ParamValue>, ConfigError> {
    let mut out = BTreeMap::new();
    for (k, v) in params {
        let pv = match v {
            serde_json::Value::Bool(b) => ParamValue::Bool(*b),
            serde_json::Value::Number(n) => ParamValue::Num(n.as_f64().unwrap_or(f64::NAN)),
            other => {
                return Err(err(
                    format!("params.{k}"),
                    format!("expected a number or a boolean, got {other}"),
                ))
            }
        };
        out.insert(k.clone(), pv);
    }
    Ok(out)
}

/// Check an algorithm name and its parameters against the registry; the error's field is
/// relative to the flow (`cc` or `params.<name>`). The front end asks this too
/// (`tcplab._engine.check_params`), so there is one implementation of the rules.
pub fn check_cc(
    cc: &str,
    params: &BTreeMap<String, serde_json::Value>,
) -> Result<BTreeMap<String, tcplab_cc::ParamValue>, ConfigError> {
    use tcplab_cc::registry::{self, CcError};
    let out = param_values(params)?;
    match registry::find(cc) {
        None => Err(err(
            "cc",
            CcError::UnknownAlgorithm {
                name: cc.to_string(),
            }
            .to_string(),
        )),
        Some(spec) => match spec.validate(&out) {
            Ok(_) => Ok(out),
            Err(e @ CcError::UnknownParam { .. }) => {
                let name = match &e {
                    CcError::UnknownParam { param, .. } => param.clone(),
                    _ => unreachable!(),
                };
                Err(err(format!("params.{name}"), e.to_string()))
            }
            Err(e @ CcError::BadParam { param, .. }) => {
                Err(err(format!("params.{param}"), e.to_string()))
            }
            Err(e) => Err(err("cc", e.to_string())),
        },
    }
}
