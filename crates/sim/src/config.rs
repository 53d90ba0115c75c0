//! The plain configuration a world is built from. This is the contract between the
//! Python front end (which resolves units, BDP multiples and per-flow RTTs) and the
//! engine: every quantity is already an integer in base units (ns, bit/s, bytes,
//! packets). It arrives as JSON (serde) and is validated by [`WorldConfig::validate`]
//! (validate.rs) before anything is built; errors name the field path. This file holds
//! types only; the leaf types other modules share live in `contract`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::net::netem::{JitterDistribution, NetemConfig};

pub use crate::contract::{
    AgentConfig, AppConfig, CcChoice, ConfigError, LinkEvent, OnOffConfig, QueueLimit,
    ReceiveBuffer, TcpConfig,
};

/// A dumbbell: N sender/receiver pairs, each with its own access links, sharing one
/// bottleneck between two routers.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorldConfig {
    /// Simulated duration (ns).
    #[schemars(extend("x-spec" = "experiment.duration"))]
    pub duration_ns: u64,
    /// Seed of the run's RNG; components draw from named sub-streams of it.
    #[serde(default)]
    #[schemars(extend("x-spec" = "experiment.seed"))]
    pub seed: u64,
    /// Series sampling interval (ns); 0 records counters only.
    #[serde(default)]
    #[schemars(extend("x-spec" = "experiment.sample_interval"))]
    pub sample_interval_ns: u64,
    #[serde(default)]
    pub tcp: TcpConfig,
    /// The shared link, router A -> router B (data direction).
    pub bottleneck: LinkConfig,
    /// The ACK direction of the bottleneck, router B -> router A. Default: same rate and
    /// delay as the data direction, no loss, an unlimited queue (never a bottleneck).
    #[serde(default)]
    #[schemars(extend("x-spec" = "bottleneck.reverse"))]
    pub bottleneck_reverse: Option<LinkConfig>,
    pub flows: Vec<FlowConfig>,
    /// Changes to the bottleneck (data direction) during the run.
    #[serde(default)]
    pub events: Vec<LinkEvent>,
    /// Traces and policers by link name (net/shaping.rs).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub shaping: BTreeMap<String, crate::net::shaping::Shaping>,
    /// Links whose departures are recorded for pcap output (net/capture.rs), by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capture: Vec<String>,
    /// Named links beyond the bottleneck (net/topology.rs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<NamedLink>,
    /// Per flow, the link directions its data crosses (empty: all flows `["bottleneck"]`;
    /// else one per flow, an empty one meaning `["bottleneck"]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<Vec<String>>,
    /// Constant-rate UDP-like sources, optionally on/off (source.rs); dumbbell only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceConfig>,
    /// Latency probes: small packets at a fixed interval, echoed by the receiving host
    /// (probe.rs, ping's model); dumbbell only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<ProbeConfig>,
    /// Interval agents (trained policies) driving `external` flows from inside the engine
    /// (world/agents.rs; a spec's `cc = "policy:FILE"`), built by the controller factory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(extend("x-spec" = "flows"))]
    pub agents: Vec<AgentConfig>,
}

/// A constant-rate source (source.rs): fixed-size packets at a fixed rate, no ACKs.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceConfig {
    /// Sending rate while on (bit/s, wire bytes), > 0.
    pub rate_bps: u64,
    /// Wire bytes per packet (default 1500: a full Ethernet-MTU datagram).
    #[serde(default = "default_packet_bytes")]
    pub packet_bytes: u32,
    /// Source host -> router A.
    #[schemars(extend("x-spec" = "access"))]
    pub sender_access: LinkConfig,
    /// Router B -> receiving host.
    pub receiver_access: LinkConfig,
    #[serde(default)]
    pub start_ns: u64,
    /// Default: the end of the run.
    #[serde(default)]
    pub stop_ns: Option<u64>,
    #[serde(default)]
    pub onoff: Option<OnOffConfig>,
}

fn default_packet_bytes() -> u32 {
    1500
}

/// A latency probe (probe.rs): a `packet_bytes` packet every `interval_ns` from
/// `start_ns` to `stop_ns`, echoed at once by the receiving host; each echo's round trip
/// is recorded.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProbeConfig {
    /// Time between probes (ns), > 0.
    #[schemars(extend("x-spec" = "interval"))]
    pub interval_ns: u64,
    /// Wire bytes of a probe and of its echo (IP total length), in [1, 65535].
    #[schemars(extend("x-spec" = "size"))]
    pub packet_bytes: u32,
    /// Probing host -> router A (the echo comes back at the same rate and delay).
    #[schemars(extend("x-spec" = "rtt"))]
    pub sender_access: LinkConfig,
    /// Router B -> echoing host (and back).
    #[schemars(extend("x-spec" = "rtt"))]
    pub receiver_access: LinkConfig,
    #[serde(default)]
    pub start_ns: u64,
    /// No probe is sent at or after it; default: the end of the run.
    #[serde(default)]
    pub stop_ns: Option<u64>,
}

/// One direction of a point-to-point link and the queue at its sending side.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    /// Line rate (bit/s), > 0.
    pub rate_bps: u64,
    /// One-way propagation delay (ns).
    pub delay_ns: u64,
    /// Drop-tail queue limit. `None`: unlimited.
    #[serde(default)]
    pub buffer: Option<QueueLimit>,
    /// Bernoulli loss probability for packets entering this link, in [0, 1).
    #[serde(default)]
    pub loss: f64,
    /// The queue discipline at this link's sending side; `None`: drop-tail. Its hard
    /// limit is `buffer`. Only the bottleneck's data direction may have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aqm: Option<crate::net::aqm::AqmConfig>,
    /// netem's jitter (`delay D J`, the J; ns): each packet's propagation delay is drawn
    /// around `delay_ns` (net/netem.rs); packets then arrive in time order, so they may
    /// overtake each other. At most 2147483647 (netem's s32).
    #[serde(default)]
    pub jitter_ns: u64,
    /// The jitter's distribution (netem/iproute2's tables; uniform without one).
    #[serde(default)]
    pub jitter_distribution: JitterDistribution,
    /// Correlation of successive jitter draws (netem's `delay D J C`), in [0, 1].
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub jitter_correlation: f64,
    /// netem's `reorder P`: probability that a packet skips the propagation delay, in
    /// [0, 1]; needs `delay_ns` > 0.
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub reorder: f64,
    /// netem's `gap G`: packets delayed before the next may skip the delay, >= 1.
    #[serde(default = "one_u32")]
    #[schemars(range(min = 1))]
    pub reorder_gap: u32,
    /// Correlation of successive reorder draws (netem's `reorder P C`), in [0, 1].
    #[serde(default)]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub reorder_correlation: f64,
}

fn one_u32() -> u32 {
    1
}

impl Default for LinkConfig {
    /// A link with no rate (invalid until one is set), no delay, no loss, unlimited, no
    /// jitter or reordering: for struct updates.
    fn default() -> Self {
        // The netem fields' defaults live in one place, NetemConfig::default.
        let NetemConfig {
            jitter_ns,
            jitter_distribution,
            jitter_correlation,
            reorder,
            reorder_gap,
            reorder_correlation,
        } = NetemConfig::default();
        LinkConfig {
            rate_bps: 0,
            delay_ns: 0,
            buffer: None,
            loss: 0.0,
            aqm: None,
            jitter_ns,
            jitter_distribution,
            jitter_correlation,
            reorder,
            reorder_gap,
            reorder_correlation,
        }
    }
}

impl LinkConfig {
    /// The jitter and reorder fields, gathered for [`crate::net::netem::Netem`].
    pub fn netem(&self) -> NetemConfig {
        NetemConfig {
            jitter_ns: self.jitter_ns,
            jitter_distribution: self.jitter_distribution,
            jitter_correlation: self.jitter_correlation,
            reorder: self.reorder,
            reorder_gap: self.reorder_gap,
            reorder_correlation: self.reorder_correlation,
        }
    }
}

/// A named link beyond the dumbbell's bottleneck.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NamedLink {
    /// `[A-Za-z0-9_-]+`, not `bottleneck`, not ending in `_reverse`.
    pub name: String,
    pub forward: LinkConfig,
    /// Default: the forward rate and delay, lossless, unlimited.
    #[serde(default)]
    pub reverse: Option<LinkConfig>,
}

/// One sender/receiver pair.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Registered algorithm name.
    pub cc: String,
    /// Algorithm parameters (numbers or booleans), validated against the registry.
    #[serde(default)]
    pub params: BTreeMap<String, serde_json::Value>,
    /// Sender host -> router A (and the reverse direction uses the same rate and delay).
    #[schemars(extend("x-spec" = "access"))]
    pub sender_access: LinkConfig,
    /// Router B -> receiver host (and back).
    pub receiver_access: LinkConfig,
    /// When the application starts sending (ns).
    #[serde(default)]
    pub start_ns: u64,
    /// When the application stops offering data (ns); default: the end of the run.
    #[serde(default)]
    pub stop_ns: Option<u64>,
    #[serde(default)]
    pub app: AppConfig,
    /// ECN for this flow, overriding `tcp.ecn`.
    #[serde(default)]
    pub ecn: Option<bool>,
    /// The application alternates on and off periods from `start_ns` (world/onoff.rs);
    /// `None`: always on. Absent from the JSON unless set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub onoff: Option<OnOffConfig>,
    /// With `cc = "bpf"`: path of a compiled BPF struct_ops object whose
    /// `tcp_congestion_ops` the flow runs (crates/controllers); `params` are its `const volatile`
    /// globals. Absent from the JSON unless set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bpf_object: Option<String>,
    /// With `bpf_object`: the C struct the program keeps in `icsk_ca_priv`, recorded
    /// each interval as `cc_<struct>_<field>` series (crates/bpf/src/object/state_series.rs).
    /// Absent from the JSON unless set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-spec" = "bpf.state"))]
    pub bpf_state: Option<String>,
}

impl FlowConfig {
    /// What this flow asks of its congestion controller, for a [`ControllerFactory`], in
    /// a run whose simulated CONFIG_HZ is `hz` (`tcp.hz`).
    ///
    /// [`ControllerFactory`]: crate::contract::ControllerFactory
    pub fn cc_choice(&self, hz: u32) -> CcChoice<'_> {
        CcChoice {
            cc: &self.cc,
            params: &self.params,
            bpf_object: self.bpf_object.as_deref(),
            bpf_state: self.bpf_state.as_deref(),
            hz,
        }
    }
}

impl WorldConfig {
    /// Parse JSON, reporting the path of a field that does not parse
    /// (`flows[0].sender_access.delay_ns: invalid value: integer `-5`, expected u64`).
    pub fn from_json(text: &str) -> Result<WorldConfig, ConfigError> {
        let de = &mut serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(de).map_err(|e| {
            let path = e.path().to_string();
            let field = if path == "." || path == "?" || path.is_empty() {
                "config".to_string()
            } else {
                path
            };
            ConfigError {
                field,
                message: e.into_inner().to_string(),
            }
        })
    }
}
