//! What a sender measures, and the interval agent: a controller that asks to be called
//! every interval with those measurements instead of on every ACK (a learned policy,
//! crates/controllers' `policy`). The engine drives agents (world/agents.rs) and knows
//! nothing of what one computes: a [`crate::ControllerFactory`] builds them from the
//! config's opaque `agents[i].policy`, as it builds a flow's algorithm from its `cc`.
//!
//! This is a leaf module (it imports nothing of the world), so the factory's contract
//! (contract.rs) can name the agent trait without an import circle.

/// A flow's state now: the socket's view and its cumulative counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlowState {
    /// The connection is established (its algorithm's `init` has run).
    pub started: bool,
    pub cwnd_pkts: u32,
    pub ssthresh_pkts: u32,
    pub inflight_pkts: u32,
    /// `sk_pacing_rate` in bit/s (0: none set).
    pub pacing_rate_bps: f64,
    /// Smoothed RTT (us), 0 before the first sample.
    pub srtt_us: u64,
    /// Windowed minimum RTT (us), 0 before the first sample.
    pub min_rtt_us: u64,
    /// Latest RTT sample (us), 0 before the first.
    pub latest_rtt_us: u64,
    /// `tcp_rate.c`'s latest delivery rate (bit/s).
    pub delivery_rate_bps: f64,
    /// `icsk_ca_state` as the kernel's number (0 Open .. 4 Loss).
    pub ca_state: u8,
    pub sent_bytes: u64,
    /// Segments delivered (`tp->delivered`: cumulatively acked or SACKed) x MSS.
    pub acked_bytes: u64,
    /// Bytes the receiver delivered in order to the application (goodput).
    pub delivered_bytes: u64,
    /// Segments marked lost (`tp->lost`).
    pub lost_pkts: u64,
    pub retransmitted_pkts: u64,
    pub rto_count: u64,
}

/// What happened to one flow between two reads.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IntervalStats {
    /// Simulated time since the previous read (us).
    pub duration_us: u64,
    pub sent_bytes: u64,
    pub acked_bytes: u64,
    pub delivered_bytes: u64,
    pub lost_pkts: u64,
    pub retransmitted_pkts: u64,
    pub rto_count: u64,
    /// RTT samples taken in the interval (one per ACK with a valid sample).
    pub rtt_samples: u64,
    /// Their mean and minimum (us); 0 when there were none.
    pub rtt_mean_us: f64,
    pub rtt_min_us: u64,
}

impl IntervalStats {
    /// The statistics between two states of one flow `duration_us` apart, with the RTT
    /// samples taken in between (count, sum and minimum, us).
    pub fn between(
        prev: &FlowState,
        now: &FlowState,
        duration_us: u64,
        rtt_count: u64,
        rtt_sum_us: u64,
        rtt_min_us: u64,
    ) -> IntervalStats {
        IntervalStats {
            duration_us,
            sent_bytes: now.sent_bytes - prev.sent_bytes,
            acked_bytes: now.acked_bytes.saturating_sub(prev.acked_bytes),
            delivered_bytes: now.delivered_bytes - prev.delivered_bytes,
            lost_pkts: now.lost_pkts.saturating_sub(prev.lost_pkts),
            retransmitted_pkts: now.retransmitted_pkts - prev.retransmitted_pkts,
            rto_count: now.rto_count - prev.rto_count,
            rtt_samples: rtt_count,
            rtt_mean_us: if rtt_count > 0 {
                rtt_sum_us as f64 / rtt_count as f64
            } else {
                0.0
            },
            rtt_min_us: if rtt_count > 0 { rtt_min_us } else { 0 },
        }
    }
}

/// What an agent writes into its flow: the pacing rate (bit/s, 0 = unpaced; None: leave
/// the flow's own) and cwnd (segments, >= 1), as a congestion controller writes them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AgentWrite {
    pub rate_bps: Option<f64>,
    pub cwnd: u32,
}

/// An agent's answer at a call: what to write now (nothing: leave the flow as it is) and
/// when to be called next (ns, later than now).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AgentStep {
    pub write: Option<AgentWrite>,
    pub next_ns: u64,
}

/// A controller called at intervals of its own choosing with its flow's measurements:
/// what a sender knows (ACK-derived counters, srtt), never the path's configuration. Its
/// flow runs [`underlay`](Self::underlay) underneath: `external` (the rate and window
/// hold until the next write), or an algorithm whose window the agent overrides (Orca's
/// CUBIC).
pub trait IntervalAgent: Send {
    /// The flow's algorithm as reported (`policy:<name>`).
    fn name(&self) -> String;
    /// The algorithm its flow must run (the config's `flows[i].cc`).
    fn underlay(&self) -> &'static str {
        "external"
    }
    /// At the run's start, before the connection (a write waits for it).
    fn start(&mut self, now_ns: u64) -> AgentStep;
    /// At the time the previous answer asked for (before the run's end): the flow's
    /// statistics since the previous call (since the start at the first) and its state.
    fn step(&mut self, now_ns: u64, interval: &IntervalStats, state: &FlowState) -> AgentStep;
}
