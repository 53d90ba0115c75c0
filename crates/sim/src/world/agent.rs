//! Agents: a trained policy driving an `external` flow from inside the engine, with the
//! same observation and action code tcplab.gym trains with (the Aurora preset calls
//! [`AuroraObservation`], [`aurora_write`] and [`aurora_start`] through crates/py), so
//! `cc = "policy:FILE"` runs, sweeps and reports like any algorithm.
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
//! What a deployed policy knows is what a sender knows (issue 38): its own ACK-derived
//! statistics (the interval's, and srtt), never the path's configuration. So:
//! - It starts as TCP starts. Until the flow's first RTT sample it writes TCP's initial
//!   window ([`INIT_CWND`] segments, unpaced) and looks again every [`MIN_STEP_NS`];
//!   at the first look with a sample its rate becomes the initial window over that round
//!   trip, [`aurora_start`]: `INIT_CWND x MSS / srtt`. The sample is the handshake's
//!   (the SYN-ACK's round trip: Linux's active opener takes it in tcp_ack ->
//!   tcp_clean_rtx_queue before tcp_init_transfer; the simulator does the same with
//!   `tcp.handshake`, on by default), chosen over the first data ACK's because it is
//!   there before any data leaves, on both backends the same way (policy_rate.bpf.c's
//!   `init` records srtt), so the policy paces its first window instead of learning its
//!   rate a round trip late. With `tcp.handshake = false` it is the first data ACK's.
//! - Its rate bounds are absolute ([`aurora_write`]): at least [`MIN_PKTS_PER_RTT`]
//!   segments per srtt, at most what the largest window it writes, [`MAX_CWND`], carries
//!   under the window rule (cwnd = 2 x rate x srtt, the rule PCC-RL's sender does not
//!   need and ours keeps so that the window never binds below the rate).
//!
//! Follows: Aurora (Jay et al., ICML 2019; PCCproject/PCC-RL src/gym/network_sim.py)
//! as tcplab.gym's preset models it (python/tcplab/gym/presets.py lists the deviations
//! from PCC-RL). Deviations of the in-engine agent from training: none in what it
//! computes when training starts as deployment does (tcplab.gym's default). PCC-RL
//! starts each training episode at 0.3-1.5 x the link's rate (`Sender(random.uniform(0.3,
//! 1.5) * bw, ...)`, network_sim.py); tcplab.gym keeps that only as the privileged
//! training option `privileged_start_fraction`, which a policy file cannot carry
//! ([`refuse_privileged`]). PCC-RL's bounds are absolute too (MIN_RATE = 40 and
//! MAX_RATE = 1000 packets/s, for links of 100-500 packets/s); ours scale with srtt.

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
/// TCP's initial window (segments; RFC 6928, Linux `TCP_INIT_CWND`): what a policy's flow
/// sends before its first RTT sample, and its start rate per that round trip.
pub const INIT_CWND: u32 = 10;
/// The rate's floor in segments per srtt. 4: BBR's smallest window (tcp_bbr.c
/// `bbr_cwnd_min_target`: "a sliding window protocol ACKing every other packet needs at
/// least 4 packets in flight"; PCC-RL's `MIN_CWND` is 4 too): below it delayed ACKs
/// stall the ACK clock the observation is made of.
pub const MIN_PKTS_PER_RTT: f64 = 4.0;
/// The largest cwnd a policy writes (segments), and so its rate's cap (the rate whose
/// window, 2 x rate x srtt, is this). 1 000 000: the largest cwnd an `external` flow
/// takes as a parameter (crates/cc/src/external.rs), 1.45 GB: the window of a rate of
/// 10 Gbit/s at an srtt of 0.58 s, or 100 Gbit/s at 58 ms. It binds only on paths with
/// larger bandwidth-delay products (the engine's rates reach 2.97 Tbit/s) and keeps a
/// policy that only ever raises its rate from overflowing the rate's float.
pub const MAX_CWND: u32 = 1_000_000;
/// The shortest monitor interval (ns), fixed or per RTT; also how often a policy looks
/// for its flow's first RTT sample. 1 ms: the RTT interval's floor (a 1 ns
/// interval cost 4.5 s of CPU per 20 ms simulated, issue 38), and the kernel backend's
/// agent, a Python process sleeping between steps, cannot keep a shorter one.
pub const MIN_STEP_NS: u64 = 1_000_000;

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

/// The rate's bounds at `srtt_us` (bit/s): [`MIN_PKTS_PER_RTT`] segments per srtt, and
/// the rate whose window (2 x rate x srtt) is [`MAX_CWND`] segments.
pub fn aurora_bounds(srtt_us: f64) -> (f64, f64) {
    let srtt_us = srtt_us.max(1.0);
    (
        MIN_PKTS_PER_RTT * MSS * 8e6 / srtt_us,
        MAX_CWND as f64 * MSS * 8e6 / (2.0 * srtt_us),
    )
}

/// What Aurora writes for a rate at `srtt_us` (> 0: a policy writes only once its flow
/// has an RTT sample): the rate within [`aurora_bounds`], and a window of 2 x rate x srtt
/// rounded up (at least 10 segments, at most [`MAX_CWND`]) so that the window never binds
/// below the rate. The rounding forgives 1e-12 of float error, so that a window of
/// exactly 20 segments (the start's) is 20, not 21. Returns (rate bit/s, cwnd segments).
pub fn aurora_write(rate_bps: f64, srtt_us: f64) -> (f64, u32) {
    let (floor, cap) = aurora_bounds(srtt_us);
    let rate = rate_bps.max(floor).min(cap);
    let window = 2.0 * rate * srtt_us.max(1.0) / (8e6 * MSS);
    let cwnd = (window * (1.0 - 1e-12)).ceil();
    (rate, cwnd.clamp(10.0, MAX_CWND as f64) as u32)
}

/// The start, as TCP starts: the initial window over the first round trip,
/// `INIT_CWND x MSS x 8 / srtt` bit/s, written as [`aurora_write`] writes any rate.
pub fn aurora_start(srtt_us: f64) -> (f64, u32) {
    aurora_write(INIT_CWND as f64 * MSS * 8e6 / srtt_us.max(1.0), srtt_us)
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
    /// Monitor interval: a fixed length (ns, at least [`MIN_STEP_NS`]), or, if absent,
    /// `rtt_fraction` x srtt (at least [`MIN_STEP_NS`]).
    #[serde(default)]
    pub interval_ns: Option<u64>,
    #[serde(default = "default_rtt_fraction")]
    pub rtt_fraction: f64,
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

/// Fields a policy file may not carry, and why: training options that read the path's
/// configuration, which a deployed sender does not know.
pub const PRIVILEGED_FIELDS: [(&str, &str); 2] = [
    (
        "privileged_start_fraction",
        "a training-only option of tcplab.gym (start at a fraction of the configured \
         bottleneck rate); a deployed policy knows no link rate and starts from the \
         initial window over the first RTT: remove the field",
    ),
    (
        "start_fraction",
        "tcplab 0.7's start at a fraction of the configured bottleneck rate, now the \
         training-only privileged_start_fraction; a deployed policy starts from the \
         initial window over the first RTT: remove the field",
    ),
];

/// Refuse a policy file's JSON object carrying a [`PRIVILEGED_FIELDS`] field, naming it
/// (serde's unknown-field error would say only that it is unknown).
pub fn refuse_privileged(v: &serde_json::Value) -> Result<(), ConfigError> {
    for (field, why) in PRIVILEGED_FIELDS {
        if v.get(field).is_some() {
            return Err(ConfigError {
                field: field.into(),
                message: why.into(),
            });
        }
    }
    Ok(())
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
        if let Some(i) = p.interval_ns.filter(|&i| i < MIN_STEP_NS) {
            return Err(bad(
                "interval_ns".into(),
                format!(
                    "must be at least {MIN_STEP_NS} (1 ms, the floor of an interval per \
                     RTT); got {i}"
                ),
            ));
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

/// What a policy writes into its flow at a step: the pacing rate (bit/s, 0 = unpaced)
/// and cwnd (segments), and when it acts next (ns).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    pub rate_bps: f64,
    pub cwnd: u32,
    pub next_ns: u64,
}

/// One policy's loop for one flow, apart from any world: wait for the first RTT sample
/// and start ([`PolicyController::begin`]), then observe an interval, act, and say what to
/// write and when to act next. The simulator's agents ([`Agents`]) and the kernel
/// backend's (python/tcplab/backends/kernel/policy_agent.py, through crates/py) both run
/// it, so a policy sees and does the same on both backends. It is given srtt and the
/// interval's statistics, nothing of the path's configuration.
#[derive(Clone, Debug)]
pub struct PolicyController {
    mlp: Mlp,
    obs: AuroraObservation,
    interval_ns: Option<u64>,
    rtt_fraction: f64,
    /// None until the first RTT sample (the controller is waiting).
    rate_bps: Option<f64>,
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
        let c = PolicyController::new(&a.policy).map_err(at)?;
        if let Some(iv) = a.policy.interval_ns.filter(|&iv| iv > cfg.duration_ns) {
            return Err(at(ConfigError {
                field: "interval_ns".into(),
                message: format!(
                    "{iv} ns is longer than the run ({} ns): the policy would never act",
                    cfg.duration_ns
                ),
            }));
        }
        Ok(c)
    }

    /// A controller for a checked policy.
    pub fn new(p: &PolicyConfig) -> Result<PolicyController, ConfigError> {
        Ok(PolicyController {
            mlp: Mlp::new(p)?,
            obs: AuroraObservation::new(p.history),
            interval_ns: p.interval_ns,
            rtt_fraction: p.rtt_fraction,
            rate_bps: None,
        })
    }

    fn next(&self, now_ns: u64, srtt_us: u64) -> u64 {
        next_step_ns(now_ns, self.interval_ns, self.rtt_fraction, srtt_us)
    }

    /// Whether the controller still waits for its flow's first RTT sample.
    pub fn waiting(&self) -> bool {
        self.rate_bps.is_none()
    }

    /// Before the connection: TCP's initial window, unpaced; look for an RTT sample
    /// [`MIN_STEP_NS`] later.
    pub fn start(&mut self, now_ns: u64) -> Decision {
        self.rate_bps = None;
        Decision {
            rate_bps: 0.0,
            cwnd: INIT_CWND,
            next_ns: now_ns + MIN_STEP_NS,
        }
    }

    /// A look while waiting (`srtt_us`: the flow's srtt now, 0 before a sample): None
    /// (look again at `now + MIN_STEP_NS`) until there is a sample; then the start rate,
    /// [`aurora_start`], and the first interval's end. The caller drops the statistics
    /// gathered while waiting (the environment's reset does the same).
    pub fn begin(&mut self, now_ns: u64, srtt_us: u64) -> Option<Decision> {
        if srtt_us == 0 {
            return None;
        }
        let (rate, cwnd) = aurora_start(srtt_us as f64);
        self.rate_bps = Some(rate);
        Some(Decision {
            rate_bps: rate,
            cwnd,
            next_ns: self.next(now_ns, srtt_us),
        })
    }

    /// Push an interval ending now (`srtt_us`: the flow's srtt now); the observation.
    pub fn observe(&mut self, iv: &IntervalStats, srtt_us: u64) -> &[f32] {
        self.obs.push(iv, srtt_us as f64)
    }

    /// The policy's action on the last observation (as float32, what the environment
    /// passes), the rate it moves to and what to write; `srtt_us` sizes the window and
    /// the next interval. Before [`begin`](Self::begin) has started it: None.
    pub fn act(&mut self, now_ns: u64, srtt_us: u64) -> Option<(f64, Decision)> {
        let from = self.rate_bps?;
        let action = self.mlp.act(self.obs.current()) as f32 as f64;
        let (rate, cwnd) = aurora_write(aurora_rate(from, action), srtt_us as f64);
        self.rate_bps = Some(rate);
        let d = Decision {
            rate_bps: rate,
            cwnd,
            next_ns: self.next(now_ns, srtt_us),
        };
        Some((action, d))
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

/// The next interval's end for a flow with an RTT sample (`srtt_us` > 0): fixed, or
/// `rtt_fraction` x srtt, at least [`MIN_STEP_NS`]. The training environment's rule.
pub fn next_step_ns(now_ns: u64, interval_ns: Option<u64>, rtt_fraction: f64, srtt_us: u64) -> u64 {
    let step = match interval_ns {
        Some(i) => i,
        None => (rtt_fraction * (srtt_us * 1000) as f64).round() as u64,
    };
    now_ns + step.max(MIN_STEP_NS)
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

    /// The start: each agent writes TCP's initial window, as the environment's reset does.
    pub fn start(&mut self, s: &mut Stepper) {
        for a in &mut self.agents {
            let d = a.ctl.start(s.now().ns());
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
    /// `CongestionControlEnv.step` does; at the end only the observation. A waiting agent
    /// only looks for its flow's first RTT sample, as the environment's reset does. (The
    /// writes leave srtt as it was: one read serves the observation, the window and the
    /// next interval.)
    pub fn step_due(&mut self, s: &mut Stepper) {
        let now = s.now();
        for a in &mut self.agents {
            if a.done || a.next > now {
                continue;
            }
            let iv = s.take_interval(a.flow).expect("checked flow");
            let st: FlowState = s.state(a.flow).expect("checked flow");
            if s.done() {
                if !a.ctl.waiting() {
                    a.ctl.observe(&iv, st.srtt_us);
                }
                a.done = true;
                continue;
            }
            if a.ctl.waiting() {
                // The statistics gathered while waiting are dropped (iv).
                match a.ctl.begin(now.ns(), st.srtt_us) {
                    Some(d) => {
                        Self::write(a.flow, &d, s);
                        a.next = SimTime(d.next_ns);
                    }
                    None => a.next = SimTime(now.ns() + MIN_STEP_NS),
                }
                continue;
            }
            a.ctl.observe(&iv, st.srtt_us);
            if let Some((_, d)) = a.ctl.act(now.ns(), st.srtt_us) {
                Self::write(a.flow, &d, s);
                a.next = SimTime(d.next_ns);
            }
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
            transform,
            layers: vec![Layer {
                weights,
                bias,
                activation: Activation::Linear,
            }],
        }
    }

    /// A controller whose action is always `a` (all weights 0, bias a).
    fn constant(a: f64) -> PolicyController {
        PolicyController::new(&policy(vec![vec![0.0; 3]], vec![a], Transform::None)).unwrap()
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
    fn an_interval_below_one_millisecond_is_refused_naming_the_field() {
        let mut p = policy(vec![vec![0.0; 3]], vec![0.0], Transform::None);
        p.interval_ns = Some(1);
        let e = Mlp::new(&p).unwrap_err();
        assert_eq!(e.field, "interval_ns");
        assert!(e.message.contains("at least 1000000"), "{}", e.message);
        p.interval_ns = Some(MIN_STEP_NS);
        assert!(Mlp::new(&p).is_ok());
    }

    #[test]
    fn a_policy_file_with_a_privileged_field_is_refused_naming_it() {
        let v: serde_json::Value = serde_json::from_str(
            r#"{"format": "tcplab-policy/1", "privileged_start_fraction": 0.5}"#,
        )
        .unwrap();
        let e = refuse_privileged(&v).unwrap_err();
        assert_eq!(e.field, "privileged_start_fraction");
        assert!(e.message.contains("training-only"), "{}", e.message);
        let v: serde_json::Value = serde_json::from_str(r#"{"start_fraction": 1.0}"#).unwrap();
        assert_eq!(refuse_privileged(&v).unwrap_err().field, "start_fraction");
        assert!(refuse_privileged(&serde_json::json!({"name": "x"})).is_ok());
    }

    #[test]
    fn a_controller_waits_for_an_rtt_sample_then_starts_with_the_initial_window() {
        // A constant action 4 (x 1.1 per step).
        let mut c = constant(4.0);
        // Before the connection: 10 segments unpaced, a look 1 ms later.
        let d = c.start(0);
        assert_eq!((d.rate_bps, d.cwnd, d.next_ns), (0.0, 10, 1_000_000));
        assert!(c.waiting());
        // No sample yet at 1 ms: nothing to write; no action either.
        assert_eq!(c.begin(1_000_000, 0), None);
        assert_eq!(c.act(1_000_000, 0), None);
        // The handshake's 48 ms sample at 49 ms: 10 x 1448 B x 8 / 0.048 s =
        // 2 413 333.33 bit/s; window 2 x 301 666.67 B/s x 0.048 s / 1448 = 20; next step
        // half of srtt later: 49 + 24 ms.
        let d = c.begin(49_000_000, 48_000).unwrap();
        assert!(
            (d.rate_bps - 2_413_333.333_333).abs() < 1e-3,
            "{}",
            d.rate_bps
        );
        assert_eq!((d.cwnd, d.next_ns), (20, 73_000_000));
        assert!(!c.waiting());
        // An interval with 3 samples of mean 50 ms (min 45 ms), 10 KB sent, 8 KB acked:
        // the first interval has no gradient, latency ratio 50/45, sending ratio 1.25.
        let iv = IntervalStats {
            duration_us: 24_000,
            sent_bytes: 10_000,
            acked_bytes: 8_000,
            rtt_samples: 3,
            rtt_mean_us: 50_000.0,
            rtt_min_us: 45_000,
            ..Default::default()
        };
        let obs = c.observe(&iv, 48_000).to_vec();
        assert_eq!(obs, vec![0.0, (50.0f64 / 45.0) as f32, 1.25]);
        // Act: x 1.1 = 2 654 666.67 bit/s; window 2 x 331 833.33 x 0.048 / 1448 = 22.0
        // -> 22; next step 73 + 24 ms.
        let (a, d) = c.act(73_000_000, 48_000).unwrap();
        assert_eq!(a, 4.0);
        assert!((d.rate_bps - 2_654_666.667).abs() < 1e-2, "{}", d.rate_bps);
        assert_eq!((d.cwnd, d.next_ns), (22, 97_000_000));
    }

    #[test]
    fn the_floor_is_four_segments_per_srtt_reached_where_computed_by_hand() {
        // Constant action -10: / 1.25 per step from the start's 2 413 333.33 bit/s at
        // srtt 48 ms: 1 930 666.67, 1 544 533.33, 1 235 626.67, 988 501.33, then
        // 790 801.07 is below the floor 4 x 1448 x 8 / 0.048 = 965 333.33: the fifth act
        // writes the floor, with the least window, 10 segments (2 x 4 = 8 below it).
        let mut c = constant(-10.0);
        c.start(0);
        c.begin(1_000_000, 48_000).unwrap();
        let want = [1_930_666.667, 1_544_533.333, 1_235_626.667, 988_501.333];
        for w in want {
            let (_, d) = c.act(0, 48_000).unwrap();
            assert!((d.rate_bps - w).abs() < 1e-2, "{} vs {w}", d.rate_bps);
        }
        let (_, d) = c.act(0, 48_000).unwrap();
        assert!((d.rate_bps - 965_333.333).abs() < 1e-2, "{}", d.rate_bps);
        assert_eq!(d.cwnd, 10);
        let (_, again) = c.act(0, 48_000).unwrap();
        assert_eq!(again.rate_bps, d.rate_bps);
    }

    #[test]
    fn the_cap_is_the_largest_window_reached_where_computed_by_hand() {
        // Constant action 10: x 1.25 per step from 2 413 333.33 bit/s at srtt 48 ms. The
        // cap: the rate whose window 2 x rate x srtt is 1 000 000 segments,
        // 1e6 x 1448 x 8 / (2 x 0.048) = 1.206 666 67e11 bit/s. After 48 acts the rate is
        // 2 413 333.33 x 1.25^48 = 1.0822e11 (1.25^48 = 44 841.6), below it; the 49th
        // (1.3527e11) is capped, with a window of exactly MAX_CWND.
        let mut c = constant(10.0);
        c.start(0);
        c.begin(1_000_000, 48_000).unwrap();
        for _ in 0..48 {
            c.act(0, 48_000).unwrap();
        }
        let (_, d49) = {
            let mut probe = c.clone();
            probe.act(0, 48_000).unwrap()
        };
        assert!(
            (d49.rate_bps - 1.206_666_667e11).abs() < 1e2,
            "{}",
            d49.rate_bps
        );
        assert_eq!(d49.cwnd, MAX_CWND);
        let r48 = c.rate_bps.unwrap();
        assert!((r48 / 1.0822e11 - 1.0).abs() < 1e-3, "{r48}");
    }

    #[test]
    fn a_do_nothing_policy_keeps_the_same_rate_whatever_the_path_rate() {
        // The controller is given srtt and statistics only: two flows with the same
        // 60 ms handshake start at the same 10 x 1448 x 8 / 0.06 = 1 930 666.67 bit/s and
        // a do-nothing policy (action 0) stays there.
        let mut c = constant(0.0);
        c.start(0);
        let d = c.begin(1_000_000, 60_000).unwrap();
        assert!((d.rate_bps - 1_930_666.667).abs() < 1e-2);
        for _ in 0..100 {
            let (_, d) = c.act(0, 60_000).unwrap();
            assert!((d.rate_bps - 1_930_666.667).abs() < 1e-2);
        }
    }

    #[test]
    fn the_rate_moves_by_aurora_s_rule() {
        // a = 4: x (1 + 0.1); a = -4: / (1 + 0.1); |a| > 10 clamps to 10: x 1.25.
        assert!((aurora_rate(1e6, 4.0) - 1.1e6).abs() < 1e-6);
        assert!((aurora_rate(1.1e6, -4.0) - 1e6).abs() < 1e-6);
        assert!((aurora_rate(1e6, 50.0) - 1.25e6).abs() < 1e-6);
        assert_eq!(aurora_rate(1e6, f64::NAN), 1e6);
        // 10 Mbit/s at 40 ms: 2 x 1.25e6 B/s x 0.04 s / 1448 = 69.06 -> 70 segments.
        assert_eq!(aurora_write(10e6, 40_000.0), (10e6, 70));
        // At least 10 segments: 2 Mbit/s at 40 ms is a window of 13.8 -> 14, 1.2 Mbit/s
        // 8.3 -> 10.
        assert_eq!(aurora_write(2e6, 40_000.0).1, 14);
        assert_eq!(aurora_write(1.2e6, 40_000.0).1, 10);
    }
}
