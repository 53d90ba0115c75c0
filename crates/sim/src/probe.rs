//! Latency probes (`WorldConfig::probes`): ping beside the bulk flows, the RRUL test's
//! latency-under-load measurement.
//!
//! Model: a probe source sends one packet of `packet_bytes` wire bytes every `interval`
//! from `start` (the k-th at `start + k * interval`, computed from the start so rounding
//! never accumulates) while the send time is before `stop`, over its own access links and
//! the bottleneck (sender access -> router A -> bottleneck -> router B -> receiver
//! access). The receiving host echoes each at once, as the kernel answers an ICMP echo
//! request (icmp_echo() in net/ipv4/icmp.c: no timer, no delayed reply), with a packet of
//! the same size back over the reverse directions (receiver access -> bottleneck reverse
//! -> sender access). The probe's round trip is the echo's arrival time minus the
//! request's send time, what iputils `ping` prints as `time=`. Both packets share the
//! bottleneck's queues (each direction) with the TCP flows' packets, so they wait behind
//! the standing queue and can be dropped (drop-tail, random loss, a queue discipline)
//! like any packet: a probe whose request or echo is dropped is lost, and counted so.
//!
//! Follows: Flent's RRUL test (flent/tests/rrul.conf, its "Ping (ms) ICMP" series, run
//! by iputils `ping -i STEP_SIZE`, Flent's default step 0.2 s) and iputils ping's
//! defaults (56 data bytes: an 84-byte IPv4 packet); the spec's defaults come from there
//! (python/tcplab/specs/probes.py).
//!
//! Deviations:
//! - Probes are not ECN-capable (ping sends Not-ECT): a queue discipline that would mark
//!   an ECT packet drops a probe, as it drops Linux's ICMP.
//! - Sizes are wire bytes (IP total length); no ICMP/IP header model beyond the size.
//! - fq_codel hashes a probe into its own queue (index 2^31 - 1 - probe, modulo the
//!   queue count) where Linux hashes the ICMP 5-tuple; the two agree while flows,
//!   sources and probes have distinct queues.
//! - Probes run on the dumbbell only (no `links`/`paths`) and cannot be captured.

use crate::config::ProbeConfig;
use crate::net::dumbbell::{make, reverse_of};
use crate::net::link::{Link, NextHop};
use crate::rng::RunRng;
use crate::time::SimTime;

/// What a probe source reports at the end of a run: its counters and, per probe that
/// came back, its send time and round trip (in the order the echoes arrived).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct ProbeReport {
    pub interval_ns: u64,
    pub packet_bytes: u32,
    pub start_ns: u64,
    pub stop_ns: u64,
    /// Probes sent.
    pub sent_packets: u64,
    /// Probes that reached the echoing host.
    pub reached_packets: u64,
    /// Echoes that came back: round trips measured.
    pub echoed_packets: u64,
    /// Probes or echoes dropped anywhere (each probe counts once: an echo exists only
    /// for a probe that reached the host).
    pub dropped_packets: u64,
    /// Probes or echoes still inside the network when the run ended.
    pub in_flight_packets_at_end: u64,
    /// Per echo, in arrival order: the probe's number, its send time and round trip.
    pub seq: Vec<u64>,
    pub sent_ns: Vec<u64>,
    pub rtt_ns: Vec<u64>,
}

pub struct Probe {
    interval_ns: u64,
    start: SimTime,
    stop: SimTime,
    pub packet_bytes: u32,
    pub sender_access: usize,
    pub sender_access_rev: usize,
    pub receiver_access: usize,
    pub receiver_access_rev: usize,
    pub report: ProbeReport,
}

impl Probe {
    /// Build probe source `i` and its four access-link directions (appended to `links`).
    pub fn build(
        i: usize,
        c: &ProbeConfig,
        duration_ns: u64,
        bottleneck: usize,
        bottleneck_rev: usize,
        links: &mut Vec<Link>,
        rng: &RunRng,
    ) -> Probe {
        let mut add = |name: String, cfg: &crate::config::LinkConfig, next| {
            links.push(make(name, cfg, next, rng));
            links.len() - 1
        };
        let sender_access = add(
            format!("probe{i}.sender_access"),
            &c.sender_access,
            NextHop::Link(bottleneck),
        );
        let sender_access_rev = add(
            format!("probe{i}.sender_access_reverse"),
            &reverse_of(&c.sender_access),
            NextHop::Sender,
        );
        let receiver_access = add(
            format!("probe{i}.receiver_access"),
            &c.receiver_access,
            NextHop::Receiver,
        );
        let receiver_access_rev = add(
            format!("probe{i}.receiver_access_reverse"),
            &reverse_of(&c.receiver_access),
            NextHop::Link(bottleneck_rev),
        );
        let stop = SimTime(c.stop_ns.unwrap_or(duration_ns).min(duration_ns));
        Probe {
            interval_ns: c.interval_ns,
            start: SimTime(c.start_ns),
            stop,
            packet_bytes: c.packet_bytes,
            sender_access,
            sender_access_rev,
            receiver_access,
            receiver_access_rev,
            report: ProbeReport {
                interval_ns: c.interval_ns,
                packet_bytes: c.packet_bytes,
                start_ns: c.start_ns,
                stop_ns: stop.ns(),
                ..Default::default()
            },
        }
    }

    /// The first send time (the probe's start).
    pub fn first_send(&self) -> SimTime {
        self.start
    }

    /// The send time of probe `k`.
    pub fn send_time(&self, k: u64) -> SimTime {
        SimTime(
            self.start
                .ns()
                .saturating_add(k.saturating_mul(self.interval_ns)),
        )
    }

    /// Send the next probe (its number is returned) and the time of the one after it,
    /// if before the stop.
    pub fn send(&mut self) -> (u64, Option<SimTime>) {
        let k = self.report.sent_packets;
        self.report.sent_packets += 1;
        let next = self.send_time(k + 1);
        (k, (next < self.stop).then_some(next))
    }

    /// Probe `k`'s echo is back at `now`.
    pub fn echoed(&mut self, k: u64, now: SimTime) {
        let sent = self.send_time(k);
        let r = &mut self.report;
        r.echoed_packets += 1;
        r.seq.push(k);
        r.sent_ns.push(sent.ns());
        r.rtt_ns.push(now.ns() - sent.ns());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes_leave_at_start_plus_k_intervals_until_the_stop() {
        // start 1 ms, interval 200 ms, stop 601 ms: probes at 1, 201, 401 ms; the one
        // due at 601 ms is not sent (the stop is exclusive).
        let link = crate::config::LinkConfig {
            rate_bps: 1_000_000_000,
            ..Default::default()
        };
        let c = ProbeConfig {
            interval_ns: 200_000_000,
            packet_bytes: 84,
            sender_access: link.clone(),
            receiver_access: link,
            start_ns: 1_000_000,
            stop_ns: Some(601_000_000),
        };
        let mut links = Vec::new();
        let mut p = Probe::build(0, &c, 10_000_000_000, 0, 1, &mut links, &RunRng::new(1));
        assert_eq!(links.len(), 4);
        assert_eq!(p.first_send(), SimTime(1_000_000));
        assert_eq!(p.send(), (0, Some(SimTime(201_000_000))));
        assert_eq!(p.send(), (1, Some(SimTime(401_000_000))));
        assert_eq!(p.send(), (2, None));
        p.echoed(1, SimTime(231_500_000));
        assert_eq!(p.report.rtt_ns, vec![30_500_000]);
        assert_eq!(p.report.sent_ns, vec![201_000_000]);
    }
}
