//! FQ-CoDel (RFC 8290) as Linux runs it: net/sched/sch_fq_codel.c.
//!
//! Model: arrivals are hashed to one of `flows` (1024) queues, here by flow id (the
//! simulator's stand-in for the 5-tuple hash; distinct flows never collide while there
//! are at most `flows` of them). A queue that was not scheduled joins the tail of the
//! new-flows list with a deficit of `quantum` (1514 bytes). Dequeue serves the head of
//! new-flows, else of old-flows (deficit round robin): a queue whose deficit is used up
//! gets another quantum and moves to the tail of old-flows; otherwise CoDel (target 5
//! ms, interval 100 ms, ECN marking on by default as in `fq_codel_init`) picks its next
//! packet, with each queue's own CoDel state but the whole qdisc's backlog for the MTU
//! test (as the kernel passes `sch->qstats.backlog`). An empty new queue moves to
//! old-flows if old-flows is non-empty (so it cannot starve them), else leaves the lists.
//! Past the limit (10240 packets by default), `fq_codel_drop` drops from the head of the
//! queue with the largest byte backlog until half of that backlog or 64 packets
//! (`drop_batch_size`) are gone.
//!
//! Deviations: no `memory_limit` (32 MB by default: 10240 full-size packets stay below
//! it), no `ce_threshold`; flows hash by id, not by a perturbed Jenkins hash of the
//! 5-tuple.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::contract::{ConfigError, QueueLimit};
use crate::net::aqm::codel::{codel_dequeue, CodelParams, CodelSource, CodelVars};
use crate::net::aqm::{check_time, AqmOut, Qdisc, TimedFifo, PSCHED_MTU};
use crate::net::packet::Packet;
use crate::time::SimTime;

fn default_target() -> u64 {
    5_000_000 // fq_codel_init -> codel_params_init: 5 ms
}
fn default_interval() -> u64 {
    100_000_000 // codel_params_init: 100 ms
}
fn default_quantum() -> u64 {
    PSCHED_MTU // fq_codel_init: quantum = psched_mtu(dev)
}
fn default_flows() -> u32 {
    1024 // fq_codel_init: flows_cnt = 1024
}
fn default_ecn() -> bool {
    true // fq_codel_init: cparams.ecn = true
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FqCodelConfig {
    #[serde(default = "default_target")]
    pub target_ns: u64,
    #[serde(default = "default_interval")]
    pub interval_ns: u64,
    #[serde(default = "default_quantum")]
    pub quantum_bytes: u64,
    #[serde(default = "default_flows")]
    pub flows: u32,
    #[serde(default = "default_ecn")]
    pub ecn: bool,
}

impl FqCodelConfig {
    pub(super) fn validate(&self, path: &str) -> Result<(), ConfigError> {
        check_time(format!("{path}.target_ns"), self.target_ns)?;
        check_time(format!("{path}.interval_ns"), self.interval_ns)?;
        let e = |f: &str, m: String| {
            Err(ConfigError {
                field: format!("{path}.{f}"),
                message: m,
            })
        };
        if self.target_ns >= self.interval_ns {
            return e(
                "target_ns",
                format!("must be below interval_ns ({})", self.interval_ns),
            );
        }
        if !(64..=1_048_576).contains(&self.quantum_bytes) {
            return e(
                "quantum_bytes",
                format!("{} is outside [64, 1048576]", self.quantum_bytes),
            );
        }
        // fq_codel_change: flows in [1, 65536].
        if !(1..=65_536).contains(&self.flows) {
            return e("flows", format!("{} is outside [1, 65536]", self.flows));
        }
        Ok(())
    }
}

/// `drop_batch_size` default (fq_codel_init).
const DROP_BATCH_SIZE: u32 = 64;

#[derive(Clone, Copy, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

struct FlowQueue {
    q: TimedFifo,
    deficit: i64,
    vars: CodelVars,
    list: List,
}

pub struct FqCodel {
    params: CodelParams,
    quantum: i64,
    limit: Option<QueueLimit>,
    flows: Vec<FlowQueue>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    pkts: u64,
    bytes: u64,
}

/// One queue plus the qdisc totals it updates, as CoDel's packet source.
struct Src<'a> {
    q: &'a mut TimedFifo,
    pkts: &'a mut u64,
    bytes: &'a mut u64,
}

impl CodelSource for Src<'_> {
    fn pop(&mut self) -> Option<(SimTime, Packet)> {
        let e = self.q.pop()?;
        *self.pkts -= 1;
        *self.bytes -= e.1.wire_bytes as u64;
        Some(e)
    }
    fn backlog(&self) -> u64 {
        *self.bytes
    }
}

impl FqCodel {
    pub fn new(c: &FqCodelConfig, limit: Option<QueueLimit>) -> FqCodel {
        FqCodel {
            params: CodelParams {
                target: c.target_ns,
                interval: c.interval_ns,
                ecn: c.ecn,
                mtu: PSCHED_MTU,
            },
            quantum: c.quantum_bytes as i64,
            limit,
            flows: (0..c.flows)
                .map(|_| FlowQueue {
                    q: TimedFifo::default(),
                    deficit: 0,
                    vars: CodelVars::default(),
                    list: List::None,
                })
                .collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            pkts: 0,
            bytes: 0,
        }
    }

    fn over_limit(&self) -> bool {
        match self.limit {
            None => false,
            Some(QueueLimit::Packets(n)) => self.pkts > n,
            Some(QueueLimit::Bytes(b)) => self.bytes > b,
        }
    }

    /// `fq_codel_drop`: drop from the head of the fattest queue, up to half its backlog
    /// or `DROP_BATCH_SIZE` packets.
    fn drop_from_fattest(&mut self, out: &mut AqmOut) {
        let mut idx = 0;
        let mut max = 0;
        for (i, f) in self.flows.iter().enumerate() {
            if f.q.bytes() > max {
                max = f.q.bytes();
                idx = i;
            }
        }
        let threshold = max >> 1;
        let mut len = 0;
        let mut i = 0;
        let f = &mut self.flows[idx];
        while let Some((_, p)) = f.q.pop() {
            len += p.wire_bytes as u64;
            self.pkts -= 1;
            self.bytes -= p.wire_bytes as u64;
            out.dropped.push(p);
            i += 1;
            if i >= DROP_BATCH_SIZE || len >= threshold {
                break;
            }
        }
    }

    /// Queue sizes by flow index (tests).
    pub fn flow_backlog(&self, idx: usize) -> u64 {
        self.flows[idx].q.len()
    }
}

impl Qdisc for FqCodel {
    fn enqueue(&mut self, now: SimTime, pkt: Packet, out: &mut AqmOut) -> bool {
        // A source's packets (flow = source index) count down from the top (u32::MAX -
        // index): with a power-of-two queue count (default 1024) they share no TCP flow's
        // queue while flows + sources <= the count. Linux hashes 5-tuples (collisions are
        // possible there too).
        // A probe's packets (probe.rs) count down from the middle (2^31 - index): a queue
        // of their own too while flows, sources and probes fit the count.
        let key = match pkt.kind {
            crate::net::PacketKind::Datagram => u32::MAX - pkt.flow,
            crate::net::PacketKind::Probe | crate::net::PacketKind::ProbeEcho => {
                (1u32 << 31) - 1 - pkt.flow
            }
            _ => pkt.flow,
        };
        let idx = key as usize % self.flows.len();
        let f = &mut self.flows[idx];
        f.q.push(now, pkt);
        self.pkts += 1;
        self.bytes += pkt.wire_bytes as u64;
        if f.list == List::None {
            f.list = List::New;
            f.deficit = self.quantum;
            self.new_flows.push_back(idx);
        }
        if self.over_limit() {
            self.drop_from_fattest(out);
        }
        true
    }

    fn dequeue(&mut self, now: SimTime, out: &mut AqmOut) -> Option<(Packet, SimTime)> {
        loop {
            let from_new = !self.new_flows.is_empty();
            let head = if from_new {
                &mut self.new_flows
            } else {
                &mut self.old_flows
            };
            let idx = *head.front()?;
            let f = &mut self.flows[idx];
            if f.deficit <= 0 {
                f.deficit += self.quantum;
                head.pop_front();
                f.list = List::Old;
                self.old_flows.push_back(idx);
                continue;
            }
            let mut src = Src {
                q: &mut f.q,
                pkts: &mut self.pkts,
                bytes: &mut self.bytes,
            };
            match codel_dequeue(&mut src, &self.params, &mut f.vars, now, out) {
                None => {
                    head.pop_front();
                    if from_new && !self.old_flows.is_empty() {
                        f.list = List::Old;
                        self.old_flows.push_back(idx);
                    } else {
                        f.list = List::None;
                    }
                }
                Some((t, p)) => {
                    f.deficit -= p.wire_bytes as i64;
                    return Some((p, t));
                }
            }
        }
    }

    // Kept as counters (the fattest-queue drop needs them anyway): O(1), not a walk.
    fn len_pkts(&self) -> u64 {
        self.pkts
    }
    fn len_bytes(&self) -> u64 {
        self.bytes
    }
    fn for_each_fifo(&self, f: &mut dyn FnMut(&TimedFifo)) {
        for q in &self.flows {
            f(&q.q);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::aqm::test_util::pkt;

    fn fq(limit: u64) -> FqCodel {
        let c = FqCodelConfig {
            target_ns: 5_000_000,
            interval_ns: 100_000_000,
            quantum_bytes: 1514,
            flows: 1024,
            ecn: true,
        };
        FqCodel::new(&c, Some(QueueLimit::Packets(limit)))
    }

    #[test]
    fn round_robin_serves_flows_alternately_by_quantum() {
        // Flow 0 queues 4 packets, then flow 1 queues 4. Quantum 1514 >= one 1500-byte
        // packet and < two: each turn sends one packet, so service alternates 0,1,0,1...
        let mut q = fq(100);
        let mut out = AqmOut::default();
        for i in 0..4 {
            q.enqueue(SimTime(0), pkt(0, i, true), &mut out);
        }
        for i in 0..4 {
            q.enqueue(SimTime(0), pkt(1, i, true), &mut out);
        }
        let order: Vec<u32> = (0..8)
            .map(|_| q.dequeue(SimTime(0), &mut out).unwrap().0.flow)
            .collect();
        // Flow 0: deficit 1514 -> sends 1 (14 left, > 0) -> sends a 2nd (-1486) -> moves to
        // old with +1514 = 28 -> flow 1 likewise twice; then 0 sends 1 (28 -> -1472) ...
        assert_eq!(order, vec![0, 0, 1, 1, 0, 1, 0, 1]);
        assert!(q.dequeue(SimTime(0), &mut out).is_none());
        assert_eq!(q.len_pkts(), 0);
    }

    #[test]
    fn overflow_drops_from_the_fattest_flow_head() {
        // Limit 10: flow 0 holds 8, flow 1 holds 2; the 11th arrival (flow 1) overflows:
        // flow 0 (12000 bytes) loses packets from its head until 6000 bytes (4 packets).
        let mut q = fq(10);
        let mut out = AqmOut::default();
        for i in 0..8 {
            q.enqueue(SimTime(0), pkt(0, i, true), &mut out);
        }
        for i in 0..3 {
            q.enqueue(SimTime(0), pkt(1, i, true), &mut out);
        }
        let seqs: Vec<u64> = out.dropped.iter().map(|p| p.seq).collect();
        assert!(out.dropped.iter().all(|p| p.flow == 0));
        assert_eq!(seqs, vec![0, 1, 2, 3]);
        assert_eq!(
            (q.flow_backlog(0), q.flow_backlog(1), q.len_pkts()),
            (4, 3, 7)
        );
    }
}
