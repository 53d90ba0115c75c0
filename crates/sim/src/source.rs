//! Constant-rate UDP-like sources (`WorldConfig::sources`), optionally on/off.
//!
//! Model: a source sends packets of `packet_bytes` wire bytes at `rate_bps` from `start`
//! to `stop` over its own two access links and the bottleneck (sender access -> router A
//! -> bottleneck -> router B -> receiver access -> receiving host). There is no congestion
//! control, no retransmission and no ACK: the receiving host only counts what arrives.
//! Its packets share the links' queues with TCP packets, so they load the bottleneck and
//! are dropped there like any packet. Within an on period the k-th packet leaves at
//! `on_start + floor(k * packet_bits / rate)` (computed from the period's start, so
//! rounding never accumulates). With `onoff`, on and off periods alternate, starting with
//! an on period at `start`; their lengths are fixed or exponential with the given means,
//! drawn from the run RNG's stream `source/<i>/onoff` (as ns-3's `OnOffApplication`,
//! whose `OnTime`/`OffTime` are random variables; an off period there also stops a
//! packet's pacing as here).
//!
//! Follows: ns-3 `OnOffApplication` / `UdpClient` (constant bit rate while on), iperf's
//! `-u -b RATE` (fixed-size datagrams at a constant rate).
//!
//! Deviations:
//! - Packets are counted as wire bytes only (no UDP/IP header model); captures mark them
//!   `is_datagram` and pcap.py writes them as IPv4/UDP frames of that size.
//! - A packet whose send time is inside an on period is sent whole even if its
//!   serialization runs past the period's end (ns-3 does the same).
//! - Sources run on the dumbbell only (no `links`/`paths`), and are not sampled in the
//!   time series (counters only).

use crate::config::SourceConfig;
use crate::net::dumbbell::make;
use crate::net::link::{Link, NextHop};
use crate::onoff::Periods;
pub use crate::record::SourceCounters;
use crate::rng::RunRng;
use crate::time::{SimTime, NS_PER_S};

pub struct Source {
    rate_bps: u64,
    packet_bytes: u32,
    stop: SimTime,
    onoff: Option<Periods>,
    /// Start of the current on period and packets sent in it.
    on_start: SimTime,
    on_end: SimTime,
    k: u64,
    pub sender_access: usize,
    pub receiver_access: usize,
    pub counters: SourceCounters,
}

impl Source {
    /// Build source `i` and its two access links (appended to `links`, data direction
    /// only: nothing comes back).
    pub fn build(
        i: usize,
        c: &SourceConfig,
        duration_ns: u64,
        bottleneck: usize,
        links: &mut Vec<Link>,
        rng: &RunRng,
    ) -> Source {
        links.push(make(
            format!("source{i}.sender_access"),
            &c.sender_access,
            NextHop::Link(bottleneck),
            rng,
        ));
        let sender_access = links.len() - 1;
        links.push(make(
            format!("source{i}.receiver_access"),
            &c.receiver_access,
            NextHop::Receiver,
            rng,
        ));
        let receiver_access = links.len() - 1;
        let stop = SimTime(c.stop_ns.unwrap_or(duration_ns).min(duration_ns));
        let mut s = Source {
            rate_bps: c.rate_bps,
            packet_bytes: c.packet_bytes,
            stop,
            onoff: c
                .onoff
                .map(|o| Periods::new(o, rng.stream(&format!("source/{i}/onoff")))),
            on_start: SimTime(c.start_ns),
            on_end: SimTime(c.start_ns),
            k: 0,
            sender_access,
            receiver_access,
            counters: SourceCounters {
                rate_bps: c.rate_bps,
                packet_bytes: c.packet_bytes,
                start_ns: c.start_ns,
                stop_ns: stop.ns(),
                ..Default::default()
            },
        };
        s.on_end = s.period_end(SimTime(c.start_ns));
        s
    }

    /// The first send time (the source's start).
    pub fn first_send(&self) -> SimTime {
        self.on_start
    }

    /// End of an on period starting at `t` (the stop time for a plain CBR source).
    fn period_end(&mut self, t: SimTime) -> SimTime {
        match &mut self.onoff {
            None => self.stop,
            Some(p) => SimTime(t.ns().saturating_add(p.on())).min(self.stop),
        }
    }

    fn kth_send(&self, k: u64) -> SimTime {
        let bits = k as u128 * self.packet_bytes as u128 * 8 * NS_PER_S as u128;
        SimTime(self.on_start.ns() + (bits / self.rate_bps as u128) as u64)
    }

    /// Send one packet now (the caller offers it with this source's index as the flow
    /// id) and return the next send time, if any before the stop.
    pub fn send(&mut self, now: SimTime) -> (u32, Option<SimTime>) {
        self.counters.sent_packets += 1;
        self.counters.sent_bytes += self.packet_bytes as u64;
        self.k += 1;
        let mut next = self.kth_send(self.k);
        while next >= self.on_end {
            // The on period is over: account it, then skip an off period.
            self.counters.on_ns += self.on_end.ns() - self.on_start.ns();
            let Some(p) = &mut self.onoff else {
                return (self.packet_bytes, None);
            };
            let start = SimTime(self.on_end.ns().saturating_add(p.off()));
            if start >= self.stop {
                return (self.packet_bytes, None);
            }
            self.on_start = start;
            self.k = 0;
            self.on_end = self.period_end(start);
            next = start;
        }
        debug_assert!(next >= now);
        (self.packet_bytes, Some(next))
    }
}
