//! The plain configuration a world is built from. This is the contract between the
//! Python front end (which resolves units, BDP multiples and per-flow RTTs) and the
//! engine: every quantity is already an integer in base units (ns, bit/s, bytes,
//! packets). It arrives as JSON (serde) and is validated by [`WorldConfig::validate`]
//! before anything is built; errors name the field path.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::net::netem::{JitterDistribution, NetemConfig};

pub use crate::contract::{ConfigError, QueueLimit};

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
    pub links: Vec<crate::net::topology::NamedLink>,
    /// Per flow, the link directions its data crosses (empty: all flows `["bottleneck"]`;
    /// else one per flow, an empty one meaning `["bottleneck"]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<Vec<String>>,
    /// Constant-rate UDP-like sources, optionally on/off (source.rs); dumbbell only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceConfig>,
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

/// Alternating on and off periods, starting with an on period; fixed lengths, or
/// exponential with these means.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OnOffConfig {
    pub on_ns: u64,
    pub off_ns: u64,
    #[serde(default)]
    pub exponential: bool,
}

/// TCP settings shared by every flow of the run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    /// Payload bytes per segment (Linux `mss_cache` on a 1500-byte Ethernet path with
    /// timestamps: 1448).
    #[schemars(range(min = 1, max = 65495))]
    pub mss_bytes: u32,
    /// Header bytes added on the wire (20 IP + 20 TCP + 12 timestamp option = 52).
    pub header_bytes: u32,
    /// Receiver delays ACKs (every second full segment or 40 ms).
    pub delayed_ack: bool,
    /// Initial cwnd (segments); Linux TCP_INIT_CWND = 10.
    pub initial_cwnd: u32,
    /// Loss detection by RACK (RFC 8985), Linux's default (`tcp_recovery = 1`); false
    /// uses RFC 6675 `IsLost` marking only.
    pub rack: bool,
    /// SACK compression at the receiver (Linux >= 4.18 default, `tcp_comp_sack_nr` = 44,
    /// see `tcp::sack_compress`): while out-of-order data is held, after 3 immediate
    /// ACKs per `rcv_nxt` further ACKs wait up to min(1 ms, RTT / 20). False acknowledges
    /// every out-of-order segment at once (`tcp_comp_sack_nr = 0`).
    pub sack_compression: bool,
    /// Floor of the retransmission timer's variance term (`tcp_rto_min_us()`, the
    /// per-route `rto_min`): RTO >= srtt + rto_min. Linux `TCP_RTO_MIN` = 200 ms.
    pub rto_min_ns: u64,
    /// Tail loss probes (`tcp_early_retrans` = 3, Linux's default; see `tcp::tlp`).
    pub tlp: bool,
    /// F-RTO (RFC 5682's SACK-enhanced version, `tcp_frto` = 2, Linux's default; see
    /// `tcp::rto`): after a timeout, new data instead of retransmissions on the first
    /// ACK, and the undo of a timeout that (s)acks never-retransmitted data. False is
    /// `tcp_frto = 0`: a timeout is undone only by the Eifel timestamp test.
    pub frto: bool,
    /// Negotiate ECN on every flow (RFC 3168; Linux `tcp_ecn = 1`). Off by default, as
    /// Linux's `tcp_ecn = 2` does not request it on active opens. An algorithm that needs
    /// ECN (DCTCP) turns it on for its flow regardless.
    pub ecn: bool,
    /// The receiver's buffer: Linux's autotuning, whose window growth ACKs segments at
    /// once (`tcp::rcv_space`), or an unlimited buffer with no such ACKs (the model
    /// before issue 9).
    pub receive_buffer: ReceiveBuffer,
    /// Receive memory one full segment costs (`skb->truesize`); absent: what the kernel
    /// backend's TUN-then-veth path allocates (`rcv_space::tun_truesize`, 2304 bytes for
    /// a 1500-byte packet).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rcv_truesize: Option<u32>,
    /// Connect first, as a Linux client does: data starts one header-only round trip
    /// after the application starts, and that round trip (the SYN-ACK's) is the first RTT
    /// sample (srtt, RTO, min_rtt) before the algorithm's `init` (`tcp::sender`). False:
    /// data at the application's start with no RTT known (the model before 0.5.0).
    pub handshake: bool,
}

/// `tcp.receive_buffer`.
#[derive(
    Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum ReceiveBuffer {
    /// Linux 6.18's receive-buffer autotuning (`tcp_moderate_rcvbuf = 1`, the default).
    #[default]
    Linux,
    /// Never limiting and never growing: no window-growth quick ACKs.
    Unlimited,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss_bytes: 1448,
            header_bytes: 52,
            delayed_ack: true,
            initial_cwnd: 10,
            rack: true,
            sack_compression: true,
            rto_min_ns: crate::tcp::rtt::TCP_RTO_MIN.0,
            tlp: true,
            frto: true,
            ecn: false,
            receive_buffer: ReceiveBuffer::Linux,
            rcv_truesize: None,
            handshake: true,
        }
    }
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
    /// `tcp_congestion_ops` the flow runs (bpf_cc.rs); `params` are its `const volatile`
    /// globals. Absent from the JSON unless set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bpf_object: Option<String>,
}

/// What the sending application offers.
#[derive(
    Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum AppConfig {
    /// Always has data (iperf-like).
    #[default]
    Bulk,
    /// Exactly this many payload bytes, then nothing.
    Finite { bytes: u64 },
}

/// A scheduled change of the bottleneck's data direction.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
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

/// Series rows a run may record (each row is ~100 bytes in memory): a guard against a
/// sampling interval that would exhaust memory.
pub const MAX_SERIES_ROWS: u64 = 20_000_000;

fn err(field: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError {
        field: field.into(),
        message: message.into(),
    }
}

/// Largest wire size of a data segment: a byte-limited buffer must hold at least one.
fn full_packet(tcp: &TcpConfig) -> u64 {
    tcp.mss_bytes as u64 + tcp.header_bytes as u64
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
            err(field, e.into_inner().to_string())
        })
    }

    /// Check every field; the first problem found is reported with its path.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.duration_ns == 0 {
            return Err(err("duration_ns", "must be > 0"));
        }
        let t = &self.tcp;
        if t.mss_bytes == 0 || t.mss_bytes > 65_495 {
            return Err(err("tcp.mss_bytes", "must be in [1, 65495]"));
        }
        if t.header_bytes > 1_000 {
            return Err(err("tcp.header_bytes", "must be in [0, 1000]"));
        }
        if t.initial_cwnd == 0 || t.initial_cwnd > 1_000_000 {
            return Err(err("tcp.initial_cwnd", "must be in [1, 1000000] segments"));
        }
        if !(1_000_000..=60_000_000_000).contains(&t.rto_min_ns) {
            return Err(err("tcp.rto_min_ns", "must be in [1 ms, 60 s]"));
        }
        if let Some(ts) = t.rcv_truesize {
            // scaling_ratio = 256 x mss / truesize must be in [1, 255] (a u8 in Linux).
            if ts <= t.mss_bytes || ts as u64 > 256 * t.mss_bytes as u64 {
                return Err(err(
                    "tcp.rcv_truesize",
                    format!("must be > mss ({}) and <= 256 x mss bytes", t.mss_bytes),
                ));
            }
        }
        check_link("bottleneck", &self.bottleneck, t)?;
        if let Some(a) = &self.bottleneck.aqm {
            a.validate("bottleneck.aqm")?;
        }
        if let Some(r) = &self.bottleneck_reverse {
            check_link("bottleneck_reverse", r, t)?;
        }
        if self.flows.is_empty() && self.sources.is_empty() {
            return Err(err("flows", "at least one flow or source is required"));
        }
        self.check_sources()?;
        if let Some(samples) = self.duration_ns.checked_div(self.sample_interval_ns) {
            let rows = samples.saturating_mul(self.flows.len() as u64);
            if rows > MAX_SERIES_ROWS {
                return Err(err(
                    "sample_interval_ns",
                    format!("too small: {rows} series rows (duration / interval * flows); at most {MAX_SERIES_ROWS}"),
                ));
            }
        }
        for (i, f) in self.flows.iter().enumerate() {
            let p = format!("flows[{i}]");
            self.cc_params(i)?;
            check_link(&format!("{p}.sender_access"), &f.sender_access, t)?;
            check_link(&format!("{p}.receiver_access"), &f.receiver_access, t)?;
            if f.start_ns >= self.duration_ns {
                return Err(err(
                    format!("{p}.start_ns"),
                    format!("must be before duration_ns ({})", self.duration_ns),
                ));
            }
            if let Some(stop) = f.stop_ns {
                if stop <= f.start_ns {
                    return Err(err(
                        format!("{p}.stop_ns"),
                        format!("must be after start_ns ({})", f.start_ns),
                    ));
                }
            }
            if let Some(o) = f.onoff {
                check_onoff(&format!("{p}.onoff"), o)?;
            }
            if let AppConfig::Finite { bytes } = f.app {
                if bytes == 0 {
                    return Err(err(format!("{p}.app.finite.bytes"), "must be > 0"));
                }
            }
        }
        for (i, l) in self.links.iter().enumerate() {
            check_link(&format!("links[{i}].forward"), &l.forward, t)?;
            if let Some(r) = &l.reverse {
                check_link(&format!("links[{i}].reverse"), r, t)?;
            }
        }
        crate::net::topology::validate(self)?;
        let names = crate::net::topology::link_names(self);
        crate::net::shaping::validate(&self.shaping, &names, t)?;
        for (i, c) in self.capture.iter().enumerate() {
            if !names.contains(c) {
                return Err(err(
                    format!("capture[{i}]"),
                    format!("no link '{c}'; links: {}", names.join(", ")),
                ));
            }
        }
        let traced = self
            .shaping
            .get("bottleneck")
            .is_some_and(|s| s.trace.is_some());
        for (i, e) in self.events.iter().enumerate() {
            let p = format!("events[{i}]");
            if traced && e.rate_bps.is_some() {
                return Err(err(
                    format!("{p}.rate_bps"),
                    "the bottleneck's capacity follows a trace; a rate change is not allowed",
                ));
            }
            if e.at_ns > self.duration_ns {
                return Err(err(
                    format!("{p}.at_ns"),
                    format!("must be <= duration_ns ({})", self.duration_ns),
                ));
            }
            if e.rate_bps == Some(0) {
                return Err(err(format!("{p}.rate_bps"), "must be > 0"));
            }
            if e.delay_ns.is_some_and(|d| d > MAX_LINK_DELAY_NS) {
                return Err(err(format!("{p}.delay_ns"), "must be at most one hour"));
            }
            if let Some(l) = e.loss {
                check_loss(&format!("{p}.loss"), l)?;
            }
            if e.rate_bps.is_none() && e.delay_ns.is_none() && e.loss.is_none() {
                return Err(err(p, "changes nothing: set rate_bps, delay_ns or loss"));
            }
        }
        Ok(())
    }

    /// Flow `i`'s algorithm parameters, converted and validated against the registry.
    pub fn cc_params(
        &self,
        i: usize,
    ) -> Result<BTreeMap<String, tcplab_cc::ParamValue>, ConfigError> {
        let f = &self.flows[i];
        if f.cc == crate::bpf_cc::CC_NAME || f.bpf_object.is_some() {
            // A BPF program's parameters are its own globals (crate::bpf_cc).
            let p = format!("flows[{i}]");
            let out =
                param_values(&f.params).map_err(|e| err(format!("{p}.{}", e.field), e.message))?;
            crate::bpf_cc::build(f, &p, &out, 0)?;
            return Ok(out);
        }
        check_cc(&f.cc, &f.params).map_err(|e| err(format!("flows[{i}].{}", e.field), e.message))
    }
}

/// Parameter values as the registry takes them (numbers or booleans); the error's field
/// is `params.<name>`.
/// A flow's `params` (JSON) as the values an algorithm takes; the error names
/// `params.<name>`.
pub fn param_values(
    params: &BTreeMap<String, serde_json::Value>,
) -> Result<BTreeMap<String, tcplab_cc::ParamValue>, ConfigError> {
    use tcplab_cc::ParamValue;
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

impl WorldConfig {
    fn check_sources(&self) -> Result<(), ConfigError> {
        if !self.sources.is_empty() && (!self.links.is_empty() || !self.paths.is_empty()) {
            return Err(err(
                "sources",
                "sources run on the dumbbell only (no links or paths)",
            ));
        }
        for (i, s) in self.sources.iter().enumerate() {
            let p = format!("sources[{i}]");
            if s.rate_bps == 0 {
                return Err(err(format!("{p}.rate_bps"), "must be > 0"));
            }
            if !(1..=65_535).contains(&s.packet_bytes) {
                return Err(err(format!("{p}.packet_bytes"), "must be in [1, 65535]"));
            }
            check_link(&format!("{p}.sender_access"), &s.sender_access, &self.tcp)?;
            check_link(
                &format!("{p}.receiver_access"),
                &s.receiver_access,
                &self.tcp,
            )?;
            if s.start_ns >= self.duration_ns {
                return Err(err(
                    format!("{p}.start_ns"),
                    format!("must be before duration_ns ({})", self.duration_ns),
                ));
            }
            if s.stop_ns.is_some_and(|t| t <= s.start_ns) {
                return Err(err(
                    format!("{p}.stop_ns"),
                    format!("must be after start_ns ({})", s.start_ns),
                ));
            }
            if let Some(o) = s.onoff {
                check_onoff(&format!("{p}.onoff"), o)?;
            }
        }
        Ok(())
    }
}

fn check_onoff(path: &str, o: OnOffConfig) -> Result<(), ConfigError> {
    if o.on_ns == 0 {
        return Err(err(format!("{path}.on_ns"), "must be > 0"));
    }
    if o.off_ns == 0 {
        return Err(err(format!("{path}.off_ns"), "must be > 0"));
    }
    Ok(())
}

/// The longest one-way link delay a config may ask for, at start or by an event.
const MAX_LINK_DELAY_NS: u64 = 3_600 * 1_000_000_000;

fn check_loss(field: &str, loss: f64) -> Result<(), ConfigError> {
    if !loss.is_finite() || !(0.0..1.0).contains(&loss) {
        return Err(err(field, format!("{loss} is outside [0, 1)")));
    }
    Ok(())
}

fn check_link(path: &str, l: &LinkConfig, tcp: &TcpConfig) -> Result<(), ConfigError> {
    if l.aqm.is_some() && path != "bottleneck" {
        return Err(err(
            format!("{path}.aqm"),
            "a queue discipline is modelled on the bottleneck's data direction only",
        ));
    }
    if l.rate_bps == 0 {
        return Err(err(format!("{path}.rate_bps"), "must be > 0"));
    }
    if l.delay_ns > MAX_LINK_DELAY_NS {
        return Err(err(format!("{path}.delay_ns"), "must be at most one hour"));
    }
    match l.buffer {
        Some(QueueLimit::Packets(0)) => {
            return Err(err(format!("{path}.buffer.packets"), "must be > 0"))
        }
        Some(QueueLimit::Bytes(b)) if b < full_packet(tcp) => {
            return Err(err(
                format!("{path}.buffer.bytes"),
                format!(
                    "must hold at least one full packet ({} bytes)",
                    full_packet(tcp)
                ),
            ))
        }
        _ => {}
    }
    check_loss(&format!("{path}.loss"), l.loss)?;
    check_netem(path, l)
}

/// The jitter and reorder fields (net/netem.rs), with netem's and tc's limits.
fn check_netem(path: &str, l: &LinkConfig) -> Result<(), ConfigError> {
    if l.jitter_ns > i32::MAX as u64 {
        return Err(err(
            format!("{path}.jitter_ns"),
            "must be at most 2147483647 ns (netem's jitter is an s32 of ns)",
        ));
    }
    for (name, v) in [
        ("jitter_correlation", l.jitter_correlation),
        ("reorder", l.reorder),
        ("reorder_correlation", l.reorder_correlation),
    ] {
        if !v.is_finite() || !(0.0..=1.0).contains(&v) {
            return Err(err(
                format!("{path}.{name}"),
                format!("{v} is outside [0, 1]"),
            ));
        }
    }
    if l.reorder_gap == 0 {
        return Err(err(format!("{path}.reorder_gap"), "must be >= 1"));
    }
    if l.reorder > 0.0 && l.delay_ns == 0 {
        // tc/q_netem.c: "reordering not possible without specifying some delay".
        return Err(err(
            format!("{path}.reorder"),
            "needs a delay: a reordered packet skips the link's delay, and this link has none",
        ));
    }
    Ok(())
}
