//! The plain configuration a world is built from. This is the contract between the
//! Python front end (which resolves units, BDP multiples and per-flow RTTs) and the
//! engine: every quantity is already an integer in base units (ns, bit/s, bytes,
//! packets). It arrives as JSON (serde) and is validated by [`WorldConfig::validate`]
//! before anything is built; errors name the field path.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A dumbbell: N sender/receiver pairs, each with its own access links, sharing one
/// bottleneck between two routers.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WorldConfig {
    /// Simulated duration (ns).
    pub duration_ns: u64,
    /// Seed of the run's RNG; components draw from named sub-streams of it.
    #[serde(default)]
    pub seed: u64,
    /// Series sampling interval (ns); 0 records counters only.
    #[serde(default)]
    pub sample_interval_ns: u64,
    #[serde(default)]
    pub tcp: TcpConfig,
    /// The shared link, router A -> router B (data direction).
    pub bottleneck: LinkConfig,
    /// The ACK direction of the bottleneck, router B -> router A. Default: same rate and
    /// delay as the data direction, no loss, an unlimited queue (never a bottleneck).
    #[serde(default)]
    pub bottleneck_reverse: Option<LinkConfig>,
    pub flows: Vec<FlowConfig>,
    /// Changes to the bottleneck (data direction) during the run.
    #[serde(default)]
    pub events: Vec<LinkEvent>,
}

/// TCP settings shared by every flow of the run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    /// Payload bytes per segment (Linux `mss_cache` on a 1500-byte Ethernet path with
    /// timestamps: 1448).
    pub mss_bytes: u32,
    /// Header bytes added on the wire (20 IP + 20 TCP + 12 timestamp option = 52).
    pub header_bytes: u32,
    /// Receiver delays ACKs (every second full segment or 40 ms).
    pub delayed_ack: bool,
    /// Initial cwnd (segments); Linux TCP_INIT_CWND = 10.
    pub initial_cwnd: u32,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig { mss_bytes: 1448, header_bytes: 52, delayed_ack: true, initial_cwnd: 10 }
    }
}

/// One direction of a point-to-point link and the queue at its sending side.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
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
}

/// A drop-tail limit, in packets or bytes (wire bytes), > 0.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueLimit {
    Packets(u64),
    Bytes(u64),
}

/// One sender/receiver pair.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Registered algorithm name.
    pub cc: String,
    /// Algorithm parameters (numbers or booleans), validated against the registry.
    #[serde(default)]
    pub params: BTreeMap<String, serde_json::Value>,
    /// Sender host -> router A (and the reverse direction uses the same rate and delay).
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
}

/// What the sending application offers.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum AppConfig {
    /// Always has data (iperf-like).
    #[default]
    Bulk,
    /// Exactly this many payload bytes, then nothing.
    Finite { bytes: u64 },
}

/// A scheduled change of the bottleneck's data direction.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkEvent {
    pub at_ns: u64,
    #[serde(default)]
    pub rate_bps: Option<u64>,
    #[serde(default)]
    pub delay_ns: Option<u64>,
    #[serde(default)]
    pub loss: Option<f64>,
}

/// A configuration error: the field path (`flows[1].cc`) and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ConfigError {}
