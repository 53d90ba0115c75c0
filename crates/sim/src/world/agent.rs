//! Agents: a trained policy driving an `external` flow from inside the engine, with the
//! same observation and action code tcplab.gym trains with (the Aurora preset calls
//! [`AuroraObservation`] and [`aurora_write`] through crates/py), so `cc = "policy:FILE"`
//! runs, sweeps and reports like any algorithm.
//!
//! At each monitor interval the agent reads the flow's interval statistics (the stepping
//! engine's, world/stepping.rs), pushes them into Aurora's observation history, evaluates
//! the policy (a small MLP, [`Mlp`]) and writes the new rate, exactly as
//! `CongestionControlEnv.step` does: the agent loop is the environment's loop, run in
//! Rust. The policy file format (JSON, `format = "tcplab-policy/1"`) is [`PolicyConfig`].
//! One flow's loop, apart from the world, is [`PolicyController`]: the kernel backend's
//! agent (python/tcplab/backends/kernel/policy_agent.py, through crates/py's
//! `PolicyAgent`) runs it on intervals measured by a BPF program on a real socket.
//!
//! Follows: Aurora (Jay et al., ICML 2019; PCCproject/PCC-RL src/gym/network_sim.py)
//! as tcplab.gym's preset models it (python/tcplab/gym/presets.py lists the deviations
//! from PCC-RL). Deviations of the in-engine agent from training: none in what it
//! computes; the start rate is `start_fraction` x the bottleneck rate (training may draw
//! it at random, as PCC-RL does: 0.3-1.5), and the agent knows the bottleneck rate for
//! its rate bounds (0.01-2 x), as the training environment does.

use serde::{Deserialize, Serialize};

use super::stepping::{FlowState, IntervalStats, Stepper};
use crate::config::{ConfigError, WorldConfig};
use crate::time::SimTime;

/// Segment payload the Aurora preset sizes windows with (python MSS).
pub const MSS: f64 = 1448.0;
/// PCC-RL `config.DELTA_SCALE`.
pub const DELTA_SCALE: f64 = 0.025;
/// PCC-RL sender_obs bounds of (latency gradient, latency ratio, sending ratio).
pub const FEATURE_LOW: [f64; 3] = [-1.0, 1.0, 0.0];
pub const FEATURE_HIGH: [f64; 3] = [10.0, 10000.0, 1000.0];

/// Aurora's observation: the last `history` intervals' (latency gradient, latency ratio,
/// sending ratio), oldest first, as float32 (what the policy saw in training).
#[derive(Clone, Debug)]
pub struct AuroraObservation {
    history: usize,
    min_rtt_us: f64,
    prev_rtt_us: Option<f64>,
    feats: Vec<f32>,
}

impl AuroraObservation {
    pub fn new(history: usize) -> Self {
        let mut feats = Vec::with_capacity(3 * history);
        for _ in 0..history {
            feats.extend_from_slice(&[0.0, 1.0, 1.0]);
        }
        AuroraObservation {
            history,
            min_rtt_us: f64::INFINITY,
            prev_rtt_us: None,
            feats,
        }
    }

    pub fn history(&self) -> usize {
        self.history
    }

    /// The observation as the last `push` left it.
    pub fn current(&self) -> &[f32] {
        &self.feats
    }

    /// The interval's latency (us): its mean RTT sample, srtt when it had none.
    pub fn latency_us(iv: &IntervalStats, srtt_us: f64) -> f64 {
        if iv.rtt_samples > 0 {
            iv.rtt_mean_us
        } else {
            srtt_us
        }
    }

    /// Push one interval; returns the observation.
    pub fn push(&mut self, iv: &IntervalStats, srtt_us: f64) -> &[f32] {
        let lat = Self::latency_us(iv, srtt_us);
        if iv.rtt_samples > 0 {
            self.min_rtt_us = self.min_rtt_us.min(iv.rtt_min_us as f64);
        }
        let dur = iv.duration_us as f64;
        let gradient = match self.prev_rtt_us {
            Some(prev) if lat > 0.0 && dur > 0.0 => (lat - prev) / dur,
            _ => 0.0,
        };
        if lat > 0.0 {
            self.prev_rtt_us = Some(lat);
        }
        let ratio = if lat > 0.0 && self.min_rtt_us.is_finite() {
            lat / self.min_rtt_us
        } else {
            1.0
        };
        let send_ratio = if iv.acked_bytes > 0 {
            iv.sent_bytes as f64 / iv.acked_bytes as f64
        } else {
            1.0
        };
        self.feats.drain(..3);
        for (k, v) in [gradient, ratio, send_ratio].into_iter().enumerate() {
            self.feats
                .push(v.max(FEATURE_LOW[k]).min(FEATURE_HIGH[k]) as f32);
        }
        &self.feats
    }
}

/// Aurora's reward (PCC-RL): (10 x throughput in 1500-byte packets/s - 1000 x latency
/// (s) - 2000 x loss ratio) x 0.001.
pub fn aurora_reward(iv: &IntervalStats, srtt_us: f64) -> f64 {
    let dur_s = iv.duration_us as f64 / 1e6;
    if dur_s <= 0.0 {
        return 0.0;
    }
    let throughput_pps = iv.acked_bytes as f64 / 1500.0 / dur_s;
    let latency_s = AuroraObservation::latency_us(iv, srtt_us) / 1e6;
    let acked_pkts = iv.acked_bytes as f64 / MSS;
    let lost = iv.lost_pkts as f64;
    let loss = if acked_pkts + lost > 0.0 {
        lost / (acked_pkts + lost)
    } else {
        0.0
    };
    (10.0 * throughput_pps - 1e3 * latency_s - 2e3 * loss) * 0.001
}

/// Aurora's rate change for action `a` (clamped to [-10, 10]; NaN, from a network that
/// overflowed, changes nothing): x (1 + 0.025 a) or / (1 - 0.025 a).
pub fn aurora_rate(rate_bps: f64, a: f64) -> f64 {
    let a = if a.is_nan() {
        0.0
    } else {
        a.clamp(-10.0, 10.0)
    };
    let d = a * DELTA_SCALE;
    if d >= 0.0 {
        rate_bps * (1.0 + d)
    } else {
        rate_bps / (1.0 - d)
    }
}

/// What Aurora writes for a rate: the rate clamped to [0.01, 2] x the bottleneck, and a
/// window of 2 x rate x srtt (at least 10 segments) so that the window never binds.
/// Returns (rate bit/s, cwnd segments).
pub fn aurora_write(rate_bps: f64, bottleneck_bps: f64, srtt_us: f64) -> (f64, u32) {
    let rate = rate_bps
        .max(0.01 * bottleneck_bps)
        .min(2.0 * bottleneck_bps);
    let window = 2.0 * rate / 8.0 * srtt_us.max(1.0) / 1e6 / MSS;
    (rate, (window.ceil().max(10.0)).min(u32::MAX as f64) as u32)
}

/// One dense layer: `out = activation(weights x in + bias)`, weights `[out][in]`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    pub weights: Vec<Vec<f64>>,
    pub bias: Vec<f64>,
    #[serde(default)]
    pub activation: Activation,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Activation {
    #[default]
    Linear,
    Tanh,
    Relu,
}

/// How the observation becomes the network's input.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Transform {
    /// The observation as it is.
    #[default]
    None,
    /// Per interval: the gradient clipped to [-1, 1], ln(ratio), ln(1 + sending ratio);
    /// then a constant 1 (a bias input). examples/gym_cem.py's features.
    AuroraLog,
}

/// A policy file (`cc = "policy:FILE"`): JSON, `format = "tcplab-policy/1"`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// "tcplab-policy/1".
    pub format: String,
    /// Reported as the flow's algorithm: `policy:<name>`.
    pub name: String,
    /// The observation and action design: "aurora" (the only one so far).
    pub preset: String,
    /// Intervals in the observation (Aurora: 10).
    #[serde(default = "default_history")]
    pub history: usize,
    /// Monitor interval: a fixed length (ns), or, if absent, `rtt_fraction` x srtt.
    #[serde(default)]
    pub interval_ns: Option<u64>,
    #[serde(default = "default_rtt_fraction")]
    pub rtt_fraction: f64,
    /// Start rate as a fraction of the bottleneck rate.
    #[serde(default = "default_start_fraction")]
    pub start_fraction: f64,
    #[serde(default)]
    pub transform: Transform,
    pub layers: Vec<Layer>,
}

fn default_history() -> usize {
    10
}
fn default_rtt_fraction() -> f64 {
    0.5
}
fn default_start_fraction() -> f64 {
    1.0
}

/// An agent in the world config: which flow the policy drives.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// Index into `flows`; the flow must run `external`.
    pub flow: usize,
    pub policy: PolicyConfig,
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
        if p.preset != "aurora" {
            return Err(bad(
                "preset".into(),
                format!(
                    "must be \"aurora\" (the only one built); got {:?}",
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
        if p.interval_ns == Some(0) {
            return Err(bad("interval_ns".into(), "must be > 0".into()));
        }
        if !(p.start_fraction > 0.0 && p.start_fraction <= 2.0) {
            return Err(bad("start_fraction".into(), "must be in (0, 2]".into()));
        }
        let obs = 3 * p.history;
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
                    }
                })
                .collect();
        }
        x[0]
    }
}

/// What a policy writes into its flow at a step: the pacing rate (bit/s) and cwnd
/// (segments), and when it acts next (ns).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    pub rate_bps: f64,
    pub cwnd: u32,
    pub next_ns: u64,
}

/// One policy's loop for one flow, apart from any world: observe an interval, act, and
/// say what to write and when to act next. The simulator's agents ([`Agents`]) and the
/// kernel backend's (python/tcplab/backends/kernel/policy_agent.py, through crates/py)
/// both run it, so a policy sees and does the same on both backends.
#[derive(Clone, Debug)]
pub struct PolicyController {
    mlp: Mlp,
    obs: AuroraObservation,
    interval_ns: Option<u64>,
    rtt_fraction: f64,
    base_rtt_ns: u64,
    bottleneck_bps: f64,
    rate_bps: f64,
}

impl PolicyController {
    /// The controller of `cfg.agents[i]` (checked: errors name `agents[i].…`).
    pub fn for_agent(cfg: &WorldConfig, i: usize) -> Result<PolicyController, ConfigError> {
        let a = cfg.agents.get(i).ok_or_else(|| ConfigError {
            field: "agents".into(),
            message: format!("has {} agents; no agent {i}", cfg.agents.len()),
        })?;
        if a.flow >= cfg.flows.len() || cfg.flows[a.flow].cc != "external" {
            return Err(ConfigError {
                field: format!("agents[{i}].flow"),
                message: format!(
                    "must index a flow with cc = \"external\"; flow {} is {}",
                    a.flow,
                    cfg.flows
                        .get(a.flow)
                        .map(|f| f.cc.as_str())
                        .unwrap_or("absent")
                ),
            });
        }
        let at = |e: ConfigError| ConfigError {
            field: format!("agents[{i}].policy.{}", e.field),
            message: e.message,
        };
        PolicyController::new(
            &a.policy,
            cfg.bottleneck.rate_bps as f64,
            base_rtt_ns(cfg, a.flow),
        )
        .map_err(at)
    }

    /// A controller for a path of bottleneck rate `bottleneck_bps` (its rate bounds) and
    /// two-way propagation delay `base_rtt_ns` (the interval before an RTT sample).
    pub fn new(
        p: &PolicyConfig,
        bottleneck_bps: f64,
        base_rtt_ns: u64,
    ) -> Result<PolicyController, ConfigError> {
        Ok(PolicyController {
            mlp: Mlp::new(p)?,
            obs: AuroraObservation::new(p.history),
            interval_ns: p.interval_ns,
            rtt_fraction: p.rtt_fraction,
            base_rtt_ns,
            bottleneck_bps,
            rate_bps: p.start_fraction * bottleneck_bps,
        })
    }

    fn next(&self, now_ns: u64, srtt_us: u64) -> u64 {
        next_step_ns(
            now_ns,
            self.interval_ns,
            self.rtt_fraction,
            srtt_us,
            self.base_rtt_ns,
        )
    }

    /// The start, as the environment's reset: the start rate, with the window of an
    /// unknown RTT (10 segments).
    pub fn start(&mut self, now_ns: u64, srtt_us: u64) -> Decision {
        let (rate, cwnd) = aurora_write(self.rate_bps, self.bottleneck_bps, 0.0);
        self.rate_bps = rate;
        Decision {
            rate_bps: rate,
            cwnd,
            next_ns: self.next(now_ns, srtt_us),
        }
    }

    /// Push an interval ending now (`srtt_us`: the flow's srtt now); the observation.
    pub fn observe(&mut self, iv: &IntervalStats, srtt_us: u64) -> &[f32] {
        self.obs.push(iv, srtt_us as f64)
    }

    /// The policy's action on the last observation (as float32, what the environment
    /// passes), the rate it moves to and what to write; `srtt_us` sizes the window and
    /// the next interval.
    pub fn act(&mut self, now_ns: u64, srtt_us: u64) -> (f64, Decision) {
        let action = self.mlp.act(self.obs.current()) as f32 as f64;
        let rate = aurora_rate(self.rate_bps, action);
        let (rate, cwnd) = aurora_write(rate, self.bottleneck_bps, srtt_us as f64);
        self.rate_bps = rate;
        let d = Decision {
            rate_bps: rate,
            cwnd,
            next_ns: self.next(now_ns, srtt_us),
        };
        (action, d)
    }
}

/// One agent driving one flow.
struct Agent {
    flow: usize,
    ctl: PolicyController,
    next: SimTime,
    done: bool,
}

/// The agents of a world config, stepped by [`Agents::run`].
pub struct Agents {
    agents: Vec<Agent>,
}

/// Run `s` to its end with `agents` driving their flows; `between(now)` is called after
/// each advance (progress, signals) and stops the run when it returns an error.
pub fn run<E>(
    s: &mut Stepper,
    agents: &mut Agents,
    slices: u64,
    mut between: impl FnMut(SimTime) -> Result<(), E>,
) -> Result<(), E> {
    let end = s.end();
    let slice = (end.ns() / slices.max(1)).max(1);
    let mut next_slice = SimTime(slice.min(end.ns()));
    agents.start(s);
    while !s.done() {
        let t = agents.next_time(end).min(next_slice);
        s.advance_to(t);
        agents.step_due(s);
        if s.now() >= next_slice {
            between(s.now())?;
            next_slice = SimTime((next_slice.ns() + slice).min(end.ns()));
        }
    }
    Ok(())
}

/// A flow's two-way propagation delay (its spec `rtt` on a dumbbell).
pub fn base_rtt_ns(cfg: &WorldConfig, flow: usize) -> u64 {
    let f = &cfg.flows[flow];
    2 * (f.sender_access.delay_ns + cfg.bottleneck.delay_ns + f.receiver_access.delay_ns)
}

/// The next interval's end for a flow: fixed, or `rtt_fraction` x srtt (the base RTT
/// before the first sample), at least 1 ms. The training environment's rule.
pub fn next_step_ns(
    now_ns: u64,
    interval_ns: Option<u64>,
    rtt_fraction: f64,
    srtt_us: u64,
    base_rtt_ns: u64,
) -> u64 {
    let step = match interval_ns {
        Some(i) => i,
        None => {
            let rtt_ns = if srtt_us > 0 {
                srtt_us * 1000
            } else {
                base_rtt_ns
            };
            ((rtt_fraction * rtt_ns as f64).round() as u64).max(1_000_000)
        }
    };
    now_ns + step
}

impl Agents {
    /// Check and build the config's agents (errors name `agents[i].…`).
    pub fn new(cfg: &WorldConfig) -> Result<Agents, ConfigError> {
        let mut agents = Vec::new();
        for (i, a) in cfg.agents.iter().enumerate() {
            let ctl = PolicyController::for_agent(cfg, i)?;
            if cfg.agents[..i].iter().any(|b| b.flow == a.flow) {
                return Err(ConfigError {
                    field: format!("agents[{i}].flow"),
                    message: format!("flow {} already has an agent", a.flow),
                });
            }
            agents.push(Agent {
                flow: a.flow,
                ctl,
                next: SimTime::ZERO,
                done: false,
            });
        }
        Ok(Agents { agents })
    }

    pub fn is_empty(&self) -> bool {
        self.agents.is_empty()
    }

    fn write(flow: usize, d: &Decision, s: &mut Stepper) {
        s.set_pacing_rate(flow, d.rate_bps)
            .expect("an agent's flow is external (checked)");
        s.set_cwnd(flow, d.cwnd).expect("cwnd >= 10");
    }

    /// The start: each agent writes its start rate, as the environment's reset does.
    pub fn start(&mut self, s: &mut Stepper) {
        for a in &mut self.agents {
            let st = s.state(a.flow).expect("checked flow");
            let d = a.ctl.start(s.now().ns(), st.srtt_us);
            Self::write(a.flow, &d, s);
            a.next = SimTime(d.next_ns);
        }
    }

    /// When the next agent acts (the end if none will).
    pub fn next_time(&self, end: SimTime) -> SimTime {
        self.agents
            .iter()
            .filter(|a| !a.done)
            .map(|a| a.next)
            .min()
            .unwrap_or(end)
            .min(end)
    }

    /// Step every agent whose interval ends now: read, observe, act, write, as
    /// `CongestionControlEnv.step` does; at the end only the observation. (The writes
    /// leave srtt as it was: one read serves the observation, the window and the next
    /// interval.)
    pub fn step_due(&mut self, s: &mut Stepper) {
        let now = s.now();
        for a in &mut self.agents {
            if a.done || a.next > now {
                continue;
            }
            let iv = s.take_interval(a.flow).expect("checked flow");
            let st: FlowState = s.state(a.flow).expect("checked flow");
            a.ctl.observe(&iv, st.srtt_us);
            if s.done() {
                a.done = true;
                continue;
            }
            let (_, d) = a.ctl.act(now.ns(), st.srtt_us);
            Self::write(a.flow, &d, s);
            a.next = SimTime(d.next_ns);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(weights: Vec<Vec<f64>>, bias: Vec<f64>, transform: Transform) -> PolicyConfig {
        PolicyConfig {
            format: "tcplab-policy/1".into(),
            name: "t".into(),
            preset: "aurora".into(),
            history: 1,
            interval_ns: None,
            rtt_fraction: 0.5,
            start_fraction: 1.0,
            transform,
            layers: vec![Layer {
                weights,
                bias,
                activation: Activation::Linear,
            }],
        }
    }

    #[test]
    fn the_network_computes_by_hand() {
        // aurora_log of (gradient 2 -> clipped 1, ratio e -> ln e = 1, sending ratio
        // e - 1 -> ln(e) = 1) and the bias input 1: weights (1, 2, 3, 4) + bias 0.5
        // -> 1 + 2 + 3 + 4 + 0.5 = 10.5.
        let e = std::f64::consts::E;
        let p = policy(
            vec![vec![1.0, 2.0, 3.0, 4.0]],
            vec![0.5],
            Transform::AuroraLog,
        );
        let m = Mlp::new(&p).unwrap();
        let got = m.act(&[2.0, e as f32, (e - 1.0) as f32]);
        assert!((got - 10.5).abs() < 1e-6, "{got}");
    }

    #[test]
    fn shapes_are_checked_naming_the_field() {
        let p = policy(vec![vec![1.0, 2.0]], vec![0.0], Transform::None);
        let e = Mlp::new(&p).unwrap_err();
        assert_eq!(e.field, "layers[0].weights[0]");
        let p = policy(
            vec![vec![0.0; 3], vec![0.0; 3]],
            vec![0.0, 0.0],
            Transform::None,
        );
        assert_eq!(Mlp::new(&p).unwrap_err().field, "layers");
        let mut p = policy(vec![vec![0.0; 3]], vec![0.0], Transform::None);
        p.format = "v2".into();
        assert_eq!(Mlp::new(&p).unwrap_err().field, "format");
    }

    #[test]
    fn a_controller_starts_acts_and_times_its_steps_by_hand() {
        // A constant action 4 (all weights 0, bias 4): x 1.1 per step.
        let mut p = policy(vec![vec![0.0; 3]], vec![4.0], Transform::None);
        p.start_fraction = 0.5;
        let mut c = PolicyController::new(&p, 10e6, 40_000_000).unwrap();
        // Start: 0.5 x 10 Mbit/s, 10 segments; no srtt yet: the next step after half the
        // base RTT (20 ms).
        let d = c.start(0, 0);
        assert_eq!((d.rate_bps, d.cwnd, d.next_ns), (5e6, 10, 20_000_000));
        // An interval with 3 samples of mean 50 ms (min 45 ms), 10 KB sent, 8 KB acked:
        // the first interval has no gradient, latency ratio 50/45, sending ratio 1.25.
        let iv = IntervalStats {
            duration_us: 20_000,
            sent_bytes: 10_000,
            acked_bytes: 8_000,
            rtt_samples: 3,
            rtt_mean_us: 50_000.0,
            rtt_min_us: 45_000,
            ..Default::default()
        };
        let obs = c.observe(&iv, 48_000).to_vec();
        assert_eq!(obs, vec![0.0, (50.0f64 / 45.0) as f32, 1.25]);
        // Act: 5.5 Mbit/s; window 2 x 687500 B/s x 0.048 s / 1448 = 45.58 -> 46; next
        // step half of srtt later: 20 + 24 ms.
        let (a, d) = c.act(20_000_000, 48_000);
        assert_eq!(a, 4.0);
        assert!((d.rate_bps - 5.5e6).abs() < 1e-6, "{}", d.rate_bps);
        assert_eq!((d.cwnd, d.next_ns), (46, 44_000_000));
    }

    #[test]
    fn the_rate_moves_by_aurora_s_rule() {
        // a = 4: x (1 + 0.1); a = -4: / (1 + 0.1); |a| > 10 clamps to 10: x 1.25.
        assert!((aurora_rate(1e6, 4.0) - 1.1e6).abs() < 1e-6);
        assert!((aurora_rate(1.1e6, -4.0) - 1e6).abs() < 1e-6);
        assert!((aurora_rate(1e6, 50.0) - 1.25e6).abs() < 1e-6);
        assert_eq!(aurora_rate(1e6, f64::NAN), 1e6);
        // 10 Mbit/s at 40 ms: 2 x 1.25e6 B/s x 0.04 s / 1448 = 69.06 -> 70 segments.
        assert_eq!(aurora_write(10e6, 20e6, 40_000.0), (10e6, 70));
        // Clamped to 2 x the bottleneck; at least 10 segments.
        assert_eq!(aurora_write(1e9, 20e6, 1.0).0, 40e6);
        assert_eq!(aurora_write(1e6, 20e6, 0.0).1, 10);
    }
}
