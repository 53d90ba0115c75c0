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
        if choice.bpf_state.is_some() {
            return Err(err(
                "bpf_state",
                "is only for a BPF flow (cc = \"bpf\" with bpf_object)",
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
    let out = param_values(&with_choice_values(registry::find(cc), params)?)?;
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

/// `params` with each choice parameter given by its label (`"kernel": "4.9"`) replaced by
/// the label's value (409), as the algorithm reads it; a label not among the choices is
/// an error naming `params.<name>` and the labels. Other values pass unchanged.
fn with_choice_values(
    spec: Option<&tcplab_cc::AlgorithmSpec>,
    params: &BTreeMap<String, serde_json::Value>,
) -> Result<BTreeMap<String, serde_json::Value>, ConfigError> {
    let mut out = params.clone();
    for (k, v) in out.iter_mut() {
        let (serde_json::Value::String(label), Some(spec)) = (&*v, spec) else {
            continue;
        };
        let Some(tcplab_cc::ParamKind::Choice(choices)) =
            spec.params.iter().find(|p| p.name == k).map(|p| p.kind)
        else {
            continue;
        };
        let Some(c) = choices.iter().find(|c| c.label == label) else {
            let labels: Vec<String> = choices.iter().map(|c| format!("'{}'", c.label)).collect();
            return Err(err(
                format!("params.{k}"),
                format!("'{label}' is not one of {}", labels.join(", ")),
            ));
        };
        *v = serde_json::json!(c.value);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(kernel: serde_json::Value) -> BTreeMap<String, serde_json::Value> {
        BTreeMap::from([("kernel".to_string(), kernel)])
    }

    /// bbr's `kernel` is a choice: its label and its value give the same parameter.
    #[test]
    fn a_choice_parameter_takes_its_label_or_its_value() {
        let by_label = check_cc("bbr", &params(serde_json::json!("4.9"))).unwrap();
        let by_value = check_cc("bbr", &params(serde_json::json!(409))).unwrap();
        assert_eq!(by_label, by_value);
        assert_eq!(by_label["kernel"], ParamValue::Num(409.0));
        let e = check_cc("bbr", &params(serde_json::json!("5.4"))).unwrap_err();
        assert_eq!(e.field, "params.kernel");
        assert_eq!(
            e.message,
            "'5.4' is not one of '4.9', '4.14', '4.17', '6.18'"
        );
        // A label for a parameter that is not a choice is not a number.
        let e = check_cc(
            "bbr",
            &BTreeMap::from([("seed".into(), serde_json::json!("x"))]),
        );
        assert_eq!(e.unwrap_err().field, "params.seed");
    }
}
