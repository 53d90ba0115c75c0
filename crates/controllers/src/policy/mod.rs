//! Policies: a trained policy driving a flow from inside the engine, with the same
//! observation and action code tcplab.gym trains with (the Aurora preset calls
//! [`AuroraObservation`], [`aurora_write`] and [`aurora_start`] through crates/py; the
//! Orca preset [`OrcaObservation`], [`orca_cwnd`] and [`orca_ready`]), so
//! `cc = "policy:FILE"` runs, sweeps and reports like any algorithm. A file's `preset`
//! ([`Preset`]) says which design it is: Aurora sets the rate of an `external` flow (the
//! rest of this header), Orca scales the window of a CUBIC flow ([`orca`],
//! [`OrcaController`]).
//!
//! The engine knows no policy: it drives an interval agent (crates/sim/src/interval.rs,
//! stepped by world/agents.rs), and [`crate::Controllers`] builds a [`PolicyAgent`] for a
//! config's `agents[i].policy` behind the `ControllerFactory` seam, as it builds native
//! and BPF algorithms. At each monitor interval the agent reads the flow's interval
//! statistics, pushes them into Aurora's observation history, evaluates
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
use tcplab_sim::{
    AgentStep, AgentWrite, ConfigError, FlowState, IntervalAgent, IntervalStats, WorldConfig,
};

pub mod aurora;
pub mod mlp;
pub mod orca;
mod orca_controller;
#[cfg(test)]
mod orca_tests;
#[cfg(test)]
mod tests;

pub use aurora::{
    aurora_bounds, aurora_rate, aurora_reward, aurora_start, aurora_write, AuroraObservation,
    INIT_CWND, MAX_CWND, MIN_PKTS_PER_RTT, MSS,
};
pub use mlp::{Activation, Layer, Mlp, Transform};
pub use orca::{orca_cwnd, orca_ready, OrcaObservation, ORCA_FEATURES, ORCA_REPORT_NS};
pub use orca_controller::OrcaController;

/// The shortest monitor interval (ns), fixed or per RTT; also how often a policy looks
/// for its flow's first RTT sample. 1 ms: the RTT interval's floor (a 1 ns
/// interval cost 4.5 s of CPU per 20 ms simulated, issue 38), and the kernel backend's
/// agent, a Python process sleeping between steps, cannot keep a shorter one.
pub const MIN_STEP_NS: u64 = 1_000_000;

/// A policy file (`cc = "policy:FILE"`): JSON, `format = "tcplab-policy/1"`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    /// "tcplab-policy/1".
    pub format: String,
    /// Reported as the flow's algorithm: `policy:<name>`.
    pub name: String,
    /// The observation and action design, a [`Preset`]: "aurora" or "orca".
    pub preset: String,
    /// Intervals in the observation (Aurora: 10; Orca: 10, its `rec_dim`).
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

/// The observation and action designs a policy file may name (`preset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// Aurora ([`aurora`]): the rate of an `external` flow.
    Aurora,
    /// Orca ([`orca`]): the window of a CUBIC flow.
    Orca,
}

impl Preset {
    /// The preset a file names; an error naming `preset` otherwise.
    pub fn parse(name: &str) -> Result<Preset, ConfigError> {
        match name {
            "aurora" => Ok(Preset::Aurora),
            "orca" => Ok(Preset::Orca),
            other => Err(ConfigError {
                field: "preset".into(),
                message: format!("must be \"aurora\" or \"orca\"; got {other:?}"),
            }),
        }
    }

    /// Features per interval of its observation.
    pub fn features(self) -> usize {
        match self {
            Preset::Aurora => 3,
            Preset::Orca => ORCA_FEATURES,
        }
    }

    /// The algorithm its flow runs underneath the policy.
    pub fn underlay(self) -> &'static str {
        match self {
            Preset::Aurora => "external",
            Preset::Orca => "cubic",
        }
    }
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

/// A policy file's JSON value as a [`PolicyConfig`] (a privileged field refused naming
/// it; a field that does not parse named by its path).
pub fn parse(v: &serde_json::Value) -> Result<PolicyConfig, ConfigError> {
    refuse_privileged(v)?;
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        ConfigError {
            field: if path == "." || path.is_empty() {
                "policy".into()
            } else {
                path
            },
            message: e.into_inner().to_string(),
        }
    })
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
/// write and when to act next. The simulator's agents ([`PolicyAgent`]) and the kernel
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

/// The next interval's end for a flow with an RTT sample (`srtt_us` > 0): fixed, or
/// `rtt_fraction` x srtt, at least [`MIN_STEP_NS`]. The training environment's rule.
pub fn next_step_ns(now_ns: u64, interval_ns: Option<u64>, rtt_fraction: f64, srtt_us: u64) -> u64 {
    let step = match interval_ns {
        Some(i) => i,
        None => (rtt_fraction * (srtt_us * 1000) as f64).round() as u64,
    };
    now_ns + step.max(MIN_STEP_NS)
}

/// The engine's view of a policy: called at its intervals with the flow's statistics, as
/// `CongestionControlEnv.step` calls the policy. A waiting controller only looks for its
/// start (Aurora: the flow's first RTT sample; Orca: CUBIC's first exit from slow start;
/// the statistics gathered while waiting are dropped, as the environment's reset drops
/// them); then each call observes the interval and acts.
pub struct PolicyAgent {
    name: String,
    ctl: Loop,
}

/// The preset's loop.
enum Loop {
    Aurora(PolicyController),
    Orca(OrcaController),
}

impl PolicyAgent {
    /// The agent of a policy file's JSON value in a run of `duration_ns` (errors name
    /// `policy.<field>`).
    pub fn new(v: &serde_json::Value, duration_ns: u64) -> Result<PolicyAgent, ConfigError> {
        let at = |e: ConfigError| ConfigError {
            field: format!("policy.{}", e.field),
            message: e.message,
        };
        let p = parse(v).map_err(at)?;
        let ctl = match Preset::parse(&p.preset).map_err(at)? {
            Preset::Aurora => Loop::Aurora(PolicyController::new(&p).map_err(at)?),
            Preset::Orca => Loop::Orca(OrcaController::new(&p).map_err(at)?),
        };
        if let Some(iv) = p.interval_ns.filter(|&iv| iv > duration_ns) {
            return Err(at(ConfigError {
                field: "interval_ns".into(),
                message: format!(
                    "{iv} ns is longer than the run ({duration_ns} ns): the policy would never act"
                ),
            }));
        }
        Ok(PolicyAgent {
            name: format!("policy:{}", p.name),
            ctl,
        })
    }

    /// The agent of `cfg.agents[i]` (errors name `agents[i].…`).
    fn of_config(cfg: &WorldConfig, i: usize) -> Result<PolicyAgent, ConfigError> {
        let a = cfg.agents.get(i).ok_or_else(|| ConfigError {
            field: "agents".into(),
            message: format!("has {} agents; no agent {i}", cfg.agents.len()),
        })?;
        PolicyAgent::new(&a.policy, cfg.duration_ns).map_err(|e| ConfigError {
            field: format!("agents[{i}].{}", e.field),
            message: e.message,
        })
    }

    /// The Aurora controller of `cfg.agents[i]`: the kernel backend's agent runs it on a
    /// real socket (policy_rate.bpf.c). An Orca policy there: [`Self::orca_for`].
    pub fn controller_for(cfg: &WorldConfig, i: usize) -> Result<PolicyController, ConfigError> {
        match Self::of_config(cfg, i)?.ctl {
            Loop::Aurora(c) => Ok(c),
            Loop::Orca(_) => Err(wrong_preset(i, "orca", "orca_for")),
        }
    }

    /// The Orca controller of `cfg.agents[i]`: the kernel backend's agent runs it on a
    /// real socket running the kernel's CUBIC (policy_cubic.bpf.c).
    pub fn orca_for(cfg: &WorldConfig, i: usize) -> Result<OrcaController, ConfigError> {
        match Self::of_config(cfg, i)?.ctl {
            Loop::Orca(c) => Ok(c),
            Loop::Aurora(_) => Err(wrong_preset(i, "aurora", "controller_for")),
        }
    }
}

fn wrong_preset(i: usize, preset: &str, instead: &str) -> ConfigError {
    ConfigError {
        field: format!("agents[{i}].policy.preset"),
        message: format!("is {preset:?}: its controller comes from PolicyAgent::{instead}"),
    }
}

fn write(d: &Decision) -> AgentStep {
    AgentStep {
        write: Some(AgentWrite {
            rate_bps: Some(d.rate_bps),
            cwnd: d.cwnd,
        }),
        next_ns: d.next_ns,
    }
}

/// The step of a controller still waiting: nothing written, look again soon.
fn look_again(now_ns: u64) -> AgentStep {
    AgentStep {
        write: None,
        next_ns: now_ns + MIN_STEP_NS,
    }
}

impl IntervalAgent for PolicyAgent {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn underlay(&self) -> &'static str {
        match self.ctl {
            Loop::Aurora(_) => Preset::Aurora.underlay(),
            Loop::Orca(_) => Preset::Orca.underlay(),
        }
    }

    fn start(&mut self, now_ns: u64) -> AgentStep {
        match &mut self.ctl {
            Loop::Aurora(c) => write(&c.start(now_ns)),
            Loop::Orca(c) => c.start(now_ns),
        }
    }

    fn step(&mut self, now_ns: u64, iv: &IntervalStats, st: &FlowState) -> AgentStep {
        match &mut self.ctl {
            Loop::Aurora(c) => {
                if c.waiting() {
                    return c
                        .begin(now_ns, st.srtt_us)
                        .map_or_else(|| look_again(now_ns), |d| write(&d));
                }
                c.observe(iv, st.srtt_us);
                match c.act(now_ns, st.srtt_us) {
                    Some((_, d)) => write(&d),
                    None => unreachable!("a controller that is not waiting acts"),
                }
            }
            Loop::Orca(c) => {
                if c.waiting() {
                    return c.begin(now_ns, st).unwrap_or_else(|| look_again(now_ns));
                }
                c.observe(iv, st);
                c.act(now_ns, st).1
            }
        }
    }
}
