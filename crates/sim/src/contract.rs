//! The leaf types of the engine's configuration contract, used both by `config` and by
//! the parts of `net` that validate their own sections (qdiscs, shaping, topology).
//! They live apart from `config` so that those modules depend on this small file, not
//! on the whole config (which in turn names their config types): no import circle.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tcplab_cc::ops::CongestionOps;

use crate::interval::IntervalAgent;
use crate::time::NS_PER_MS;

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

/// A drop-tail limit, in packets or bytes (wire bytes), > 0.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueLimit {
    Packets(u64),
    Bytes(u64),
}

/// `TCP_RTO_MIN` (include/net/tcp.h): HZ / 5, 200 ms.
pub const TCP_RTO_MIN_NS: u64 = 200 * NS_PER_MS;

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
    /// before receive-buffer autotuning).
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
    /// The simulated kernel's CONFIG_HZ: how fast the jiffies clock ticks (100, 250, 300
    /// or 1000). Everything the kernel counts in jiffies follows it: the algorithms'
    /// clocks (CUBIC's epoch and `HZ/32` update gate, BBR's min_rtt and PROBE_RTT
    /// stamps), the RTO, tail-loss-probe and RACK reordering timers' rounding, the
    /// min_rtt filter's window. Default 1000, what tcplab always ran at, so results stay
    /// comparable with every stored run; set it to match a kernel (many distributions
    /// build with 250).
    #[schemars(extend("enum" = [100, 250, 300, 1000]))]
    pub hz: u32,
    /// The host's start-up variation (`start_jitter`): each flow's application starts
    /// later than its `start_ns` by an offset uniform in [0, this), drawn from the run
    /// seed, as a real host opens a connection some time after it is told to (connect,
    /// wake-up, scheduling; measured on Linux 6.18, `start_jitter` module); flows with
    /// the same start open in index order. 0: every flow exactly on time, flows with the
    /// same start in lockstep. At most 1 s.
    #[schemars(range(max = 1_000_000_000))]
    pub start_jitter_ns: u64,
    /// The Linux release the stack follows where it changed what BBR reads (`[tcp]
    /// kernel`, major * 100 + minor: 409, 414, 417, 618; docs/BBR_KERNELS.md): the rate
    /// sample's choice of segment (tcp_rate.c before 5.18) and loss detection (RACK
    /// without its timer before 4.10, the duplicate-ACK threshold beside RACK before
    /// 4.18). 618, the default, is today's stack; written only when another.
    #[schemars(extend("enum" = [409, 414, 417, 618]))]
    pub kernel: u32,
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
            rto_min_ns: TCP_RTO_MIN_NS,
            tlp: true,
            frto: true,
            ecn: false,
            receive_buffer: ReceiveBuffer::Linux,
            rcv_truesize: None,
            handshake: true,
            hz: tcplab_cc::ops::DEFAULT_HZ,
            start_jitter_ns: crate::start_jitter::DEFAULT_START_JITTER_NS,
            kernel: tcplab_cc::bbr::kernel::KernelRelease::V6_18.code(),
        }
    }
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

/// What a flow asks of its congestion controller: the algorithm's name, its parameters
/// (JSON numbers or booleans, as the config gives them) and, when the algorithm is a
/// compiled BPF object, the object's path.
#[derive(Clone, Copy, Debug)]
pub struct CcChoice<'a> {
    pub cc: &'a str,
    pub params: &'a BTreeMap<String, serde_json::Value>,
    pub bpf_object: Option<&'a str>,
    /// The struct in `icsk_ca_priv` a BPF flow records as series (`bpf_state`).
    pub bpf_state: Option<&'a str>,
    /// The run's simulated CONFIG_HZ (`tcp.hz`): what a loaded BPF program's
    /// `CONFIG_HZ` kconfig reads (native algorithms read it from `CcView::hz`).
    pub hz: u32,
}

/// Where congestion controllers come from (quinn-proto's `ControllerFactory` shape): the
/// world asks it for one controller per flow (and one more for a receiver that echoes
/// ECN with the flow's algorithm), and validation asks it to check each flow. The engine
/// itself knows no algorithm: `native_cc::NativeCc` builds the registry's (crates/cc),
/// and crates/controllers composes it with the BPF loader for the Python front end.
///
/// A factory may keep state for one run (a loaded BPF program shared by the flows that
/// run it), so a caller hands a fresh one to each `World`.
pub trait ControllerFactory {
    /// The controller for a flow asking for `choice`; `seed` seeds its random draws
    /// (World derives one per flow from the run seed, stream `cc/<flow>`; validation
    /// passes 0). An error names the field relative to the flow (`cc`,
    /// `params.<name>`, `bpf_object`) and what is allowed; the caller prefixes
    /// `flows[i].`.
    fn build(
        &self,
        choice: &CcChoice<'_>,
        seed: u64,
    ) -> Result<Box<dyn CongestionOps>, ConfigError>;

    /// The interval agent of a config's `agents[i]` entry (interval.rs), from its opaque
    /// `policy` in a run of `duration_ns`. An error names the field relative to the entry
    /// (`policy.<field>`); the caller prefixes `agents[i].`. By default a factory builds
    /// none.
    fn agent(
        &self,
        policy: &serde_json::Value,
        duration_ns: u64,
    ) -> Result<Box<dyn IntervalAgent>, ConfigError> {
        let _ = (policy, duration_ns);
        Err(ConfigError {
            field: "policy".into(),
            message: "this engine's controllers build no agents (policy files run through \
                      tcplab-controllers)"
                .into(),
        })
    }
}

/// An agent in the world config: the flow it drives (which must run `external`) and its
/// policy, which the engine does not read: the [`ControllerFactory`] builds the agent from
/// it (crates/controllers: a `tcplab-policy/1` policy file's contents).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// Index into `flows`.
    pub flow: usize,
    pub policy: serde_json::Value,
}
