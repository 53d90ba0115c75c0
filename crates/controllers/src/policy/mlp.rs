//! The JSON MLP of a policy file (`layers`): dense layers with linear, tanh, ReLU or
//! sigmoid activations evaluated in f64, and the input transform (`transform`) that turns
//! Aurora's observation into the network's input. Shapes are checked when the file is
//! read, errors naming the field.

use serde::{Deserialize, Serialize};
use tcplab_sim::ConfigError;

use super::{PolicyConfig, Preset, MIN_STEP_NS};

/// One dense layer: `out = activation(weights x in + bias)`, weights `[out][in]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    pub weights: Vec<Vec<f64>>,
    pub bias: Vec<f64>,
    #[serde(default)]
    pub activation: Activation,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Activation {
    #[default]
    Linear,
    Tanh,
    Relu,
    /// 1 / (1 + e^-y): ONNX's Sigmoid, which a PyTorch MLP exports for `nn.Sigmoid`
    /// (python/tcplab/onnx_policy.py translates ONNX graphs into these layers).
    Sigmoid,
}

/// How the observation becomes the network's input.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Transform {
    /// The observation as it is.
    #[default]
    None,
    /// Per interval: the gradient clipped to [-1, 1], ln(ratio), ln(1 + sending ratio);
    /// then a constant 1 (a bias input). examples/gym_cem.py's features.
    AuroraLog,
}

/// The network of a policy, checked.
#[derive(Clone, Debug)]
pub struct Mlp {
    transform: Transform,
    layers: Vec<Layer>,
    input: usize,
}

impl Mlp {
    /// Check the layer shapes against the observation size; errors name the field.
    pub fn new(p: &PolicyConfig) -> Result<Mlp, ConfigError> {
        let bad = |field: String, message: String| ConfigError { field, message };
        if p.format != "tcplab-policy/1" {
            return Err(bad(
                "format".into(),
                format!("must be \"tcplab-policy/1\"; got {:?}", p.format),
            ));
        }
        let preset = Preset::parse(&p.preset)?;
        if p.transform == Transform::AuroraLog && preset != Preset::Aurora {
            return Err(bad(
                "transform".into(),
                format!(
                    "\"aurora_log\" transforms Aurora's features; the {:?} preset takes \"none\"",
                    p.preset
                ),
            ));
        }
        if p.history == 0 || p.history > 1000 {
            return Err(bad("history".into(), "must be in 1..=1000".into()));
        }
        if !(p.rtt_fraction > 0.0 && p.rtt_fraction <= 100.0) {
            return Err(bad("rtt_fraction".into(), "must be in (0, 100]".into()));
        }
        if let Some(i) = p.interval_ns.filter(|&i| i < MIN_STEP_NS) {
            return Err(bad(
                "interval_ns".into(),
                format!(
                    "must be at least {MIN_STEP_NS} (1 ms, the floor of an interval per \
                     RTT); got {i}"
                ),
            ));
        }
        let obs = preset.features() * p.history;
        let input = match p.transform {
            Transform::None => obs,
            Transform::AuroraLog => obs + 1,
        };
        if p.layers.is_empty() {
            return Err(bad("layers".into(), "needs at least one layer".into()));
        }
        let mut width = input;
        for (i, l) in p.layers.iter().enumerate() {
            if l.weights.len() != l.bias.len() || l.weights.is_empty() {
                return Err(bad(
                    format!("layers[{i}]"),
                    format!(
                        "{} weight rows for {} biases: one row per output",
                        l.weights.len(),
                        l.bias.len()
                    ),
                ));
            }
            for (r, row) in l.weights.iter().enumerate() {
                if row.len() != width {
                    return Err(bad(
                        format!("layers[{i}].weights[{r}]"),
                        format!(
                            "has {} inputs; the layer's input is {width} wide",
                            row.len()
                        ),
                    ));
                }
                if row.iter().any(|x| !x.is_finite()) {
                    return Err(bad(
                        format!("layers[{i}].weights[{r}]"),
                        "must be finite".into(),
                    ));
                }
            }
            if l.bias.iter().any(|x| !x.is_finite()) {
                return Err(bad(format!("layers[{i}].bias"), "must be finite".into()));
            }
            width = l.bias.len();
        }
        if width != 1 {
            return Err(bad(
                "layers".into(),
                format!("the last layer must have 1 output (the action); it has {width}"),
            ));
        }
        Ok(Mlp {
            transform: p.transform,
            layers: p.layers.clone(),
            input,
        })
    }

    /// The action for an observation (f64 of the network's output).
    pub fn act(&self, obs: &[f32]) -> f64 {
        let mut x: Vec<f64> = Vec::with_capacity(self.input);
        match self.transform {
            Transform::None => x.extend(obs.iter().map(|&v| v as f64)),
            Transform::AuroraLog => {
                for c in obs.chunks(3) {
                    let (g, r, s) = (c[0] as f64, c[1] as f64, c[2] as f64);
                    x.push(g.clamp(-1.0, 1.0));
                    x.push((r - 1.0).ln_1p());
                    x.push(s.ln_1p());
                }
                x.push(1.0);
            }
        }
        for l in &self.layers {
            x = l
                .weights
                .iter()
                .zip(&l.bias)
                .map(|(row, b)| {
                    let mut acc = 0.0;
                    for (w, v) in row.iter().zip(&x) {
                        acc += w * v;
                    }
                    let y = acc + b;
                    match l.activation {
                        Activation::Linear => y,
                        Activation::Tanh => y.tanh(),
                        Activation::Relu => y.max(0.0),
                        Activation::Sigmoid => 1.0 / (1.0 + (-y).exp()),
                    }
                })
                .collect();
        }
        x[0]
    }
}
