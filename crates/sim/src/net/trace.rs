//! Trace-driven link capacity in Mahimahi's format (Netravali et al., "Mahimahi: Accurate
//! Record-and-Replay for HTTP", USENIX ATC 2015; ravinet/mahimahi
//! `src/frontend/link_queue.cc`).
//!
//! Model: a trace is a list of integer millisecond timestamps, one per *delivery
//! opportunity*; each opportunity can deliver [`OPPORTUNITY_BYTES`] bytes. The trace
//! repeats forever with period = its last timestamp (`base_timestamp_ += schedule_.back()`
//! at wrap-around), so opportunity `k` of repetition `r` is at `r * last + trace[k]`.
//! Several lines with the same timestamp are several opportunities at that instant. As in
//! `LinkQueue::rationalize`:
//! - an opportunity delivers up to its bytes from the head of the queue: several small
//!   packets (ACKs) may leave at one opportunity; a packet larger than what is left is
//!   delivered in part and finishes at a later opportunity (`bytes_to_transmit` carries
//!   over); the surplus of an opportunity is offered to the next queued packet and is lost
//!   when the queue is empty;
//! - an opportunity that finds the queue empty is wasted (capacity is not banked);
//! - a packet leaves the link at the time of the opportunity that completes it: there is
//!   no serialization time beyond waiting for opportunities. Propagation delay is added
//!   after it (Mahimahi nests a separate `mm-delay` shell).
//!
//! Deviations from Mahimahi:
//! - Mahimahi's opportunity is `PACKET_SIZE` = 1504 bytes, the TUN device's MTU of 1500
//!   plus its 4-byte packet-information header, which every packet also carries: one
//!   opportunity moves exactly one full-sized IP packet. Our packets have no TUN header,
//!   so an opportunity is 1500 wire bytes: the same one full-sized packet (1448 + 52).
//! - Mahimahi's clock has millisecond resolution: a packet arriving during ms `t` cannot use
//!   an opportunity at `t` (it is rationalized before the packet is queued). Ours is in
//!   nanoseconds: a packet reaching an idle link at time `t` waits for the first
//!   opportunity strictly after `t`, the same rule at finer resolution. A packet that
//!   queues behind another uses the surplus of the opportunity that completes its
//!   predecessor, as in Mahimahi.
//! - Mahimahi can stop at the end of the trace (no `--repeat`); we always repeat.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::time::SimTime;

/// Bytes one delivery opportunity carries: one full-sized packet (see the module doc for
/// Mahimahi's 1504 = 1500 MTU + 4-byte TUN header).
pub const OPPORTUNITY_BYTES: u32 = 1500;

/// Opportunities a trace may hold (a 1-hour Mahimahi LTE trace has a few million).
pub const MAX_TRACE_OPPORTUNITIES: usize = 50_000_000;

/// A trace as the engine receives it: the opportunities in ms, already read from the file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    /// Where it came from (for messages and reports only).
    #[serde(default)]
    pub name: String,
    /// Delivery opportunities, integer ms, non-decreasing, the last > 0.
    pub opportunities_ms: Vec<u64>,
}

impl TraceConfig {
    /// `None` if the trace is valid, else what is wrong (Mahimahi's own checks in the
    /// `LinkQueue` constructor: non-empty, non-decreasing, nonzero duration).
    pub fn problem(&self) -> Option<String> {
        let t = &self.opportunities_ms;
        if t.is_empty() {
            return Some("no delivery opportunities".into());
        }
        if t.len() > MAX_TRACE_OPPORTUNITIES {
            return Some(format!(
                "{} opportunities; at most {MAX_TRACE_OPPORTUNITIES}",
                t.len()
            ));
        }
        if let Some(i) = t.windows(2).position(|w| w[1] < w[0]) {
            return Some(format!(
                "timestamps must be non-decreasing: entry {} ({} ms) < entry {} ({} ms)",
                i + 1,
                t[i + 1],
                i,
                t[i]
            ));
        }
        let last = *t.last().expect("non-empty");
        if last == 0 {
            return Some("the trace must last a nonzero time (last timestamp > 0 ms)".into());
        }
        if last > 3_600_000_000 {
            return Some("the last timestamp must be at most 1000 hours".into());
        }
        None
    }

    /// The mean rate (bit/s): opportunities x 1500 bytes x 8 per period.
    pub fn mean_rate_bps(&self) -> u64 {
        let period_ms = *self.opportunities_ms.last().unwrap_or(&1);
        (self.opportunities_ms.len() as u128 * u128::from(OPPORTUNITY_BYTES) * 8 * 1000
            / u128::from(period_ms.max(1))) as u64
    }
}

/// The delivery schedule of one link direction and where in it the link is.
#[derive(Clone, Debug)]
pub struct TraceServer {
    /// Opportunity times within one period (ns).
    sched: Arc<[u64]>,
    period_ns: u64,
    /// Start of the current repetition (ns).
    base_ns: u64,
    /// Index of the next unused opportunity.
    next: usize,
    /// Bytes left of the opportunity that completed the last packet.
    surplus: u32,
}

impl TraceServer {
    /// The schedule of a valid trace (see [`TraceConfig::problem`]), starting at time 0.
    pub fn new(cfg: &TraceConfig) -> TraceServer {
        let sched: Arc<[u64]> = cfg
            .opportunities_ms
            .iter()
            .map(|ms| ms * 1_000_000)
            .collect();
        let period_ns = *sched.last().expect("validated trace");
        TraceServer {
            sched,
            period_ns,
            base_ns: 0,
            next: 0,
            surplus: 0,
        }
    }

    fn next_time(&self) -> u64 {
        self.base_ns + self.sched[self.next]
    }

    /// Use the next opportunity; returns its time.
    fn take(&mut self) -> u64 {
        let t = self.next_time();
        self.next += 1;
        if self.next == self.sched.len() {
            self.next = 0;
            self.base_ns += self.period_ns;
        }
        t
    }

    /// Burn every opportunity at or before `now` (the link was idle: they are wasted).
    fn skip_through(&mut self, now: u64) {
        if self.next_time() > now {
            return;
        }
        self.surplus = 0;
        // Whole repetitions first, so a long idle period costs O(log n), not O(idle).
        if now >= self.base_ns + self.period_ns {
            let reps = (now - self.base_ns) / self.period_ns;
            self.base_ns += reps * self.period_ns;
            self.next = 0;
        }
        let within = now - self.base_ns;
        let first_after = self.sched.partition_point(|&t| t <= within);
        self.next = self.next.max(first_after);
        if self.next == self.sched.len() {
            self.next = 0;
            self.base_ns += self.period_ns;
        }
        debug_assert!(self.next_time() > now);
    }

    /// When a packet of `bytes` starting service at `now` has left the link. `fresh`: the
    /// link was idle (earlier opportunities are wasted); otherwise `now` is the opportunity
    /// that completed the previous packet and its surplus is used first.
    #[inline(never)] // out of the fixed-rate link's hot path
    pub fn service_end(&mut self, now: SimTime, bytes: u32, fresh: bool) -> SimTime {
        if fresh {
            self.skip_through(now.ns());
            self.surplus = 0;
        }
        if self.surplus >= bytes {
            self.surplus -= bytes;
            return now;
        }
        let mut need = bytes - self.surplus;
        loop {
            let t = self.take();
            if need <= OPPORTUNITY_BYTES {
                self.surplus = OPPORTUNITY_BYTES - need;
                return SimTime(t);
            }
            need -= OPPORTUNITY_BYTES;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(ms: &[u64]) -> TraceServer {
        TraceServer::new(&TraceConfig {
            name: String::new(),
            opportunities_ms: ms.to_vec(),
        })
    }
    const MS: u64 = 1_000_000;

    #[test]
    fn idle_link_waits_for_the_first_opportunity_after_arrival() {
        // Opportunities at 2, 5, 9 ms, period 9 ms: then 11, 14, 18, ...
        let mut s = server(&[2, 5, 9]);
        assert_eq!(s.service_end(SimTime(0), 1500, true), SimTime(2 * MS));
        // Arriving at exactly 5 ms: the 5 ms opportunity is burned (Mahimahi's ms rule).
        assert_eq!(s.service_end(SimTime(5 * MS), 1500, true), SimTime(9 * MS));
        // Arriving at 9.5 ms: next is 9 + 2 = 11 ms.
        assert_eq!(
            s.service_end(SimTime(9 * MS + MS / 2), 1500, true),
            SimTime(11 * MS)
        );
    }

    #[test]
    fn small_packets_share_one_opportunity_and_large_ones_span_several() {
        let mut s = server(&[1]); // one opportunity every ms: 12 Mbit/s
                                  // Three 500-byte packets queued before 1 ms all leave at 1 ms.
        assert_eq!(s.service_end(SimTime(0), 500, true), SimTime(MS));
        assert_eq!(s.service_end(SimTime(MS), 500, false), SimTime(MS));
        assert_eq!(s.service_end(SimTime(MS), 500, false), SimTime(MS));
        // A fourth needs the 2 ms opportunity; 1000 bytes of it are left over...
        assert_eq!(s.service_end(SimTime(MS), 500, false), SimTime(2 * MS));
        // ...so a 2000-byte packet takes them and 1000 bytes of the 3 ms opportunity.
        assert_eq!(s.service_end(SimTime(2 * MS), 2000, false), SimTime(3 * MS));
        // The queue empties: the 500-byte surplus at 3 ms is lost to a later arrival.
        assert_eq!(s.service_end(SimTime(3 * MS), 100, true), SimTime(4 * MS));
    }

    #[test]
    fn repeated_timestamps_are_several_opportunities_and_the_trace_wraps() {
        // Two opportunities at 3 ms, period 3 ms; the wrap adds 3 ms to each.
        let mut s = server(&[3, 3]);
        assert_eq!(s.service_end(SimTime(0), 1500, true), SimTime(3 * MS));
        assert_eq!(s.service_end(SimTime(3 * MS), 1500, false), SimTime(3 * MS));
        assert_eq!(s.service_end(SimTime(3 * MS), 1500, false), SimTime(6 * MS));
        assert_eq!(s.service_end(SimTime(6 * MS), 1500, false), SimTime(6 * MS));
        assert_eq!(s.service_end(SimTime(6 * MS), 1500, false), SimTime(9 * MS));
    }

    #[test]
    fn long_idle_skips_whole_repetitions() {
        let mut s = server(&[0, 4, 10]);
        // At 1 000 003 ms: repetition 100 000 starts at 1 000 000 ms; 1 000 000 and
        // 1 000 000 + 0 are burned, next is 1 000 004 ms.
        assert_eq!(
            s.service_end(SimTime(1_000_003 * MS), 1500, true),
            SimTime(1_000_004 * MS)
        );
    }

    #[test]
    fn mean_rate_and_validation() {
        let c = TraceConfig {
            name: String::new(),
            opportunities_ms: vec![1],
        };
        assert_eq!(c.mean_rate_bps(), 12_000_000);
        let c = TraceConfig {
            name: String::new(),
            opportunities_ms: vec![5, 5, 10, 10],
        };
        // 4 x 12 000 bits in 10 ms = 4.8 Mbit/s.
        assert_eq!(c.mean_rate_bps(), 4_800_000);
        assert!(TraceConfig {
            name: String::new(),
            opportunities_ms: vec![0]
        }
        .problem()
        .is_some());
        assert!(TraceConfig {
            name: String::new(),
            opportunities_ms: vec![]
        }
        .problem()
        .is_some());
        assert!(TraceConfig {
            name: String::new(),
            opportunities_ms: vec![3, 2]
        }
        .problem()
        .unwrap()
        .contains("non-decreasing"));
    }
}
