//! Active queue management: the queue disciplines a link's sending side may run instead
//! of its plain drop-tail FIFO, modelled on Linux's qdiscs with their defaults.
//!
//! - [`step`]: mark (or drop) an arriving packet when the queue holds K packets or more,
//!   the switch marking DCTCP assumes (Alizadeh et al. 2010 Sec. 3.1, RFC 8257 Sec. 3.1).
//! - [`red`]: RED as net/sched/sch_red.c with include/net/red.h.
//! - [`codel`]: CoDel as net/sched/sch_codel.c with include/net/codel_impl.h.
//! - [`fq_codel`]: FQ-CoDel as net/sched/sch_fq_codel.c.
//! - [`pie`]: PIE as net/sched/sch_pie.c with include/net/pie.h.
//!
//! Each one owns its packets and reports, through [`AqmOut`], the packets it dropped
//! (other than a refused arrival) and how many it marked. A mark sets CE on an ECN-capable
//! packet (`INET_ECN_set_ce`: ECT(0)/ECT(1) become CE, CE stays CE and counts as marked,
//! Not-ECT cannot be marked and is dropped instead). The qdisc's hard limit is the link's
//! `buffer` (Linux: the qdisc's `limit`); the packet being serialized has left the qdisc.
//!
//! Deviations common to all: no Ethernet header (wire bytes are IP bytes; the device MTU
//! `psched_mtu` is taken as 1514 bytes, Ethernet's, so "one MTU of backlog" still means one
//! full packet); time is exact nanoseconds, not the kernel's coarser clocks.

pub mod codel;
pub mod fq_codel;
pub mod pie;
pub mod red;
pub mod step;

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::contract::{ConfigError, QueueLimit};
use crate::net::packet::{Ecn, Packet};
use crate::rng::Rng;
use crate::time::{Rate, SimTime};

/// `psched_mtu(dev)` for a 1500-byte Ethernet device: MTU + 14-byte hard header.
pub const PSCHED_MTU: u64 = 1514;

/// What a qdisc did besides handing a packet over.
#[derive(Default)]
pub struct AqmOut {
    /// Packets dropped by the qdisc other than a refused arrival (CoDel's dequeue drops,
    /// FQ-CoDel's drops from the fattest flow).
    pub dropped: Vec<Packet>,
    /// Packets marked CE.
    pub marks: u64,
}

/// A queue discipline: the link offers arrivals and asks for the next packet to send.
pub trait Qdisc: Send {
    /// Offer `pkt` at `now`. Returns false if the arrival itself was dropped.
    fn enqueue(&mut self, now: SimTime, pkt: Packet, out: &mut AqmOut) -> bool;
    /// The next packet to serialize and the time it was enqueued, after whatever the
    /// discipline drops at dequeue time.
    fn dequeue(&mut self, now: SimTime, out: &mut AqmOut) -> Option<(Packet, SimTime)>;
    /// Visit each FIFO the discipline holds packets in (one for most; one per flow
    /// queue for FQ-CoDel). The methods below are derived from it.
    fn for_each_fifo(&self, f: &mut dyn FnMut(&TimedFifo));
    /// Packets and wire bytes held.
    fn len_pkts(&self) -> u64 {
        let mut n = 0;
        self.for_each_fifo(&mut |q| n += q.len());
        n
    }
    fn len_bytes(&self) -> u64 {
        let mut n = 0;
        self.for_each_fifo(&mut |q| n += q.bytes());
        n
    }
    /// Every packet held (for the engine's accounting).
    fn for_each(&self, f: &mut dyn FnMut(&Packet)) {
        self.for_each_fifo(&mut |q| q.iter().for_each(&mut *f));
    }
}

/// `INET_ECN_set_ce`: mark an ECN-capable packet. Returns whether the packet now carries
/// CE (a packet already CE counts as marked, Not-ECT cannot be marked).
pub fn set_ce(pkt: &mut Packet) -> bool {
    match pkt.ecn() {
        Ecn::NotEct => false,
        Ecn::Ce => true,
        Ecn::Ect0 | Ecn::Ect1 => {
            pkt.set_ecn(Ecn::Ce);
            true
        }
    }
}

/// A FIFO of (enqueue time, packet) with its byte count: the queue every discipline here
/// is built from (`qdisc_enqueue_tail` / `__qdisc_dequeue_head` with `qstats.backlog`).
#[derive(Default)]
pub struct TimedFifo {
    q: VecDeque<(SimTime, Packet)>,
    bytes: u64,
}

impl TimedFifo {
    pub fn push(&mut self, now: SimTime, pkt: Packet) {
        self.bytes += pkt.wire_bytes as u64;
        self.q.push_back((now, pkt));
    }
    pub fn pop(&mut self) -> Option<(SimTime, Packet)> {
        let e = self.q.pop_front()?;
        self.bytes -= e.1.wire_bytes as u64;
        Some(e)
    }
    pub fn len(&self) -> u64 {
        self.q.len() as u64
    }
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
    pub fn iter(&self) -> impl Iterator<Item = &Packet> {
        self.q.iter().map(|(_, p)| p)
    }
    /// Whether `pkt` fits under `limit` (the drop-tail test of `qdisc_enqueue_tail`
    /// under `sch->limit`), for a discipline that decides more between test and append.
    pub fn admits(&self, limit: Option<QueueLimit>, pkt: &Packet) -> bool {
        !over_limit(limit, self.len(), self.bytes, pkt.wire_bytes as u64)
    }
    /// `qdisc_enqueue_tail` within `limit`: append `pkt` if it fits; false (the caller
    /// drops it) if not.
    pub fn push_within(&mut self, limit: Option<QueueLimit>, now: SimTime, pkt: Packet) -> bool {
        if !self.admits(limit, &pkt) {
            return false;
        }
        self.push(now, pkt);
        true
    }
}

/// Whether `limit` is reached by a FIFO of `pkts` packets / `bytes` bytes receiving a
/// packet of `size` bytes (the drop-tail test, `qdisc_enqueue_tail` under `limit`).
pub fn over_limit(limit: Option<QueueLimit>, pkts: u64, bytes: u64, size: u64) -> bool {
    match limit {
        None => false,
        Some(QueueLimit::Packets(n)) => pkts >= n,
        Some(QueueLimit::Bytes(b)) => bytes + size > b,
    }
}

/// The bottleneck's queue discipline, as the engine's JSON config gives it (Python
/// resolves units and defaults; see docs/spec.md, `[bottleneck] aqm`). Times in ns.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AqmConfig {
    /// Mark (or drop) an arrival when `k_pkts` or more packets wait.
    Step {
        k_pkts: u64,
        #[serde(default)]
        ecn: bool,
    },
    Red(red::RedConfig),
    Codel(codel::CodelConfig),
    FqCodel(fq_codel::FqCodelConfig),
    Pie(pie::PieConfig),
}

fn err(field: String, message: impl Into<String>) -> ConfigError {
    ConfigError {
        field,
        message: message.into(),
    }
}

/// A time parameter in [1 us, 10 s].
pub(crate) fn check_time(field: String, ns: u64) -> Result<(), ConfigError> {
    if !(1_000..=10_000_000_000).contains(&ns) {
        return Err(err(field, format!("{ns} ns is outside [1 us, 10 s]")));
    }
    Ok(())
}

impl AqmConfig {
    pub fn name(&self) -> &'static str {
        match self {
            AqmConfig::Step { .. } => "step",
            AqmConfig::Red(_) => "red",
            AqmConfig::Codel(_) => "codel",
            AqmConfig::FqCodel(_) => "fq_codel",
            AqmConfig::Pie(_) => "pie",
        }
    }

    /// Whether the discipline may mark instead of dropping.
    pub fn ecn(&self) -> bool {
        match self {
            AqmConfig::Step { ecn, .. } => *ecn,
            AqmConfig::Red(c) => c.ecn,
            AqmConfig::Codel(c) => c.ecn,
            AqmConfig::FqCodel(c) => c.ecn,
            AqmConfig::Pie(c) => c.ecn,
        }
    }

    /// Check the parameters; `path` is the field path of this table (`aqm`).
    pub fn validate(&self, path: &str) -> Result<(), ConfigError> {
        match self {
            AqmConfig::Step { k_pkts, .. } => {
                if *k_pkts == 0 {
                    return Err(err(format!("{path}.k_pkts"), "must be >= 1 packet"));
                }
                Ok(())
            }
            AqmConfig::Red(c) => c.validate(path),
            AqmConfig::Codel(c) => c.validate(path),
            AqmConfig::FqCodel(c) => c.validate(path),
            AqmConfig::Pie(c) => c.validate(path),
        }
    }

    /// Build the discipline with hard limit `limit` for a link of `rate`, with its own
    /// random stream.
    pub fn build(&self, limit: Option<QueueLimit>, rate: Rate, rng: Rng) -> Box<dyn Qdisc> {
        match self {
            AqmConfig::Step { k_pkts, ecn } => Box::new(step::Step::new(*k_pkts, *ecn, limit)),
            AqmConfig::Red(c) => Box::new(red::Red::new(c, limit, rate, rng)),
            AqmConfig::Codel(c) => Box::new(codel::Codel::new(c, limit)),
            AqmConfig::FqCodel(c) => Box::new(fq_codel::FqCodel::new(c, limit)),
            AqmConfig::Pie(c) => Box::new(pie::Pie::new(c, limit, rng)),
        }
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    use crate::net::packet::{Ecn, Packet};

    /// A full-size data packet of `flow` (1500 wire bytes), ECT(0) if `ect`.
    pub fn pkt(flow: u32, seq: u64, ect: bool) -> Packet {
        let mut p = Packet::data(flow, seq, 1448, 52, false);
        if ect {
            p.set_ecn(Ecn::Ect0);
        }
        p
    }
}
