//! The emulated dumbbell: the simulator's own links (`tcplab_sim::net`, built by
//! `dumbbell::build` from the same `WorldConfig` the simulator runs) driven in real time.
//!
//! Model: every packet read from a TUN device enters the flow's first link at the
//! moment it was read (sender side: `flowI.sender_access`; receiver side:
//! `flowI.receiver_access_reverse`) and then moves exactly as in the simulator: drop-tail
//! queue and random loss on enqueue, serialization at the link's rate, propagation (with
//! the link's jitter and reordering, net/netem.rs: arrivals in time order), next
//! hop (`NextHop`), the bottleneck in the middle, the scheduled `[[events]]` applied to
//! the bottleneck at their time (as `World::dispatch` does for `LinkChange`). A packet that
//! leaves the last link is written to the other namespace's device. Link times are kept
//! in model time (each event is handled at its scheduled time, however late the process
//! wakes up), so a late wake-up delays the packet's delivery to the kernel but never
//! shifts the queue's schedule; how late we wake up is measured (`Lateness`).
//!
//! Deviations from the simulator: packets are real IP packets, so their sizes are the
//! kernel's (1500 bytes for a full segment with timestamps, 52 + SACK options for an
//! ACK, plus the handshake and FIN); delivery to the kernel is late by the wake-up
//! latency; loss, jitter and reorder draws use the same named RNG streams but see a
//! different packet sequence, so they differ from the simulator's run with the same seed.

use std::collections::HashMap;
use std::os::fd::OwnedFd;

use serde::Serialize;
use tcplab_sim::config::WorldConfig;
use tcplab_sim::net::dumbbell::{self, Dumbbell};
use tcplab_sim::net::link::{Link, NextHop, Offer};
use tcplab_sim::net::{Packet, PacketKind};
use tcplab_sim::record::QueueReport;
use tcplab_sim::rng::RunRng;
use tcplab_sim::time::SimTime;

use crate::clock;
use crate::ip::{self, Side};
use crate::tun;

/// How late events were handled, relative to their model time (ns).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Lateness {
    pub events: u64,
    pub mean_ns: f64,
    pub max_ns: u64,
    /// Events handled more than 100 us / 1 ms after their time.
    pub over_100us: u64,
    pub over_1ms: u64,
    #[serde(skip)]
    sum_ns: f64,
}

impl Lateness {
    fn add(&mut self, late_ns: u64) {
        self.events += 1;
        self.sum_ns += late_ns as f64;
        self.mean_ns = self.sum_ns / self.events as f64;
        self.max_ns = self.max_ns.max(late_ns);
        self.over_100us += u64::from(late_ns > 100_000);
        self.over_1ms += u64::from(late_ns > 1_000_000);
    }
}

/// Per-flow counters of what the network did (data segments only, as the simulator's
/// `FlowCounters`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowNet {
    /// Data segments and their payload bytes that reached the receiver's namespace.
    pub received_packets: u64,
    pub received_bytes: u64,
    /// Data segments lost in the network (all links).
    pub dropped_packets: u64,
    /// Data segments still inside the links at the end.
    pub in_flight_packets_at_end: u64,
}

/// Sampled series: the bottleneck queue and each flow's received bytes (cumulative).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Series {
    pub time_ns: Vec<u64>,
    pub backlog_pkts: Vec<u64>,
    pub backlog_bytes: Vec<u64>,
    /// Bottleneck drops during the interval ending at the row's time.
    pub drops: Vec<u64>,
    /// received_bytes[flow][row].
    pub received_bytes: Vec<Vec<u64>>,
}

/// Everything the emulator reports at the end.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    pub flows: Vec<FlowNet>,
    pub queues: Vec<QueueReport>,
    pub series: Series,
    pub bottleneck_packets: u64,
    pub lateness: Lateness,
    /// Largest IP packet read from a device (1500 unless offloads leaked through).
    pub max_packet_bytes: u64,
    /// Packets read that belong to none of our flows (dropped), and failed writes.
    pub foreign_packets: u64,
    pub write_errors: u64,
    pub packets_forwarded: u64,
    /// CPU time the emulator used (user + system, s): how much of a core it needs.
    pub cpu_s: f64,
}

pub struct Emulator {
    cfg: WorldConfig,
    net: Dumbbell,
    /// Per link: end of the current serialization, arrival time of the pipe's head.
    tx_end: Vec<Option<SimTime>>,
    arrival: Vec<Option<SimTime>>,
    /// Packet bytes by id (the model's `Packet::seq` carries the id).
    bytes: HashMap<u64, Vec<u8>>,
    next_id: u64,
    next_event: usize,
    next_sample: SimTime,
    last_bn_drops: u64,
    base_port: u16,
    /// Packets that left their last link, with the side to write them to and their model
    /// delivery time; `run` writes them out after each round of events.
    pub out: Vec<(Side, SimTime, Vec<u8>)>,
    pub report: Report,
}

enum Due {
    TxDone(usize),
    Arrive(usize),
    LinkChange(usize),
    Sample,
}

impl Emulator {
    pub fn new(cfg: WorldConfig, base_port: u16) -> Emulator {
        let net = dumbbell::build(&cfg, &RunRng::new(cfg.seed));
        let n = net.links.len();
        let flows = cfg.flows.len();
        let interval = cfg.sample_interval_ns;
        Emulator {
            cfg,
            net,
            tx_end: vec![None; n],
            arrival: vec![None; n],
            bytes: HashMap::new(),
            next_id: 0,
            next_event: 0,
            next_sample: SimTime(if interval > 0 { interval } else { u64::MAX }),
            last_bn_drops: 0,
            base_port,
            out: Vec::new(),
            report: Report {
                flows: vec![FlowNet::default(); flows],
                series: Series {
                    received_bytes: vec![Vec::new(); flows],
                    ..Default::default()
                },
                ..Default::default()
            },
        }
    }

    /// The earliest pending model event.
    fn next_due(&self) -> Option<(SimTime, Due)> {
        let mut best: Option<(SimTime, Due)> = None;
        let mut consider = |t: SimTime, d: Due| {
            if !matches!(&best, Some((b, _)) if *b <= t) {
                best = Some((t, d));
            }
        };
        for (l, t) in self.tx_end.iter().enumerate() {
            if let Some(t) = t {
                consider(*t, Due::TxDone(l));
            }
        }
        for (l, t) in self.arrival.iter().enumerate() {
            if let Some(t) = t {
                consider(*t, Due::Arrive(l));
            }
        }
        if let Some(e) = self.cfg.events.get(self.next_event) {
            consider(SimTime(e.at_ns), Due::LinkChange(self.next_event));
        }
        if self.next_sample.0 <= self.cfg.duration_ns {
            consider(self.next_sample, Due::Sample);
        }
        best
    }

    /// Nanoseconds from `now` to the next model event (capped at 100 ms).
    pub fn timeout_ns(&self, now: SimTime) -> u64 {
        self.next_due()
            .map_or(100_000_000, |(t, _)| t.0.saturating_sub(now.0))
            .min(100_000_000)
    }

    /// Handle every model event due at or before `now`, in time order.
    pub fn run_due(&mut self, now: SimTime) {
        while let Some((t, due)) = self.next_due() {
            if t > now {
                break;
            }
            self.report.lateness.add(now.0 - t.0);
            match due {
                Due::TxDone(l) => {
                    let (next_tx, arrival) = self.net.links[l].tx_done(t);
                    self.tx_end[l] = next_tx;
                    if arrival.is_some() {
                        self.arrival[l] = arrival;
                    }
                }
                Due::Arrive(l) => {
                    // One pending arrival per link here, always the armed one.
                    let Some((pkt, next)) = self.net.links[l].arrive(t) else {
                        self.arrival[l] = None;
                        continue;
                    };
                    self.arrival[l] = next;
                    let hop = self.net.links[l].next;
                    self.forward(t, pkt, hop);
                }
                Due::LinkChange(i) => {
                    // As the engine's Event::LinkChange: the bottleneck's rate, delay, loss.
                    self.net.links[self.net.bottleneck].apply_event(&self.cfg.events[i]);
                    self.next_event += 1;
                }
                Due::Sample => {
                    self.sample(t);
                    self.next_sample = SimTime(t.0 + self.cfg.sample_interval_ns);
                }
            }
        }
    }

    fn sample(&mut self, t: SimTime) {
        let bn = &self.net.links[self.net.bottleneck];
        let s = &mut self.report.series;
        s.time_ns.push(t.0);
        s.backlog_pkts.push(bn.backlog_pkts());
        s.backlog_bytes.push(bn.backlog_bytes());
        s.drops.push(bn.counters.dropped - self.last_bn_drops);
        self.last_bn_drops = bn.counters.dropped;
        for (f, col) in s.received_bytes.iter_mut().enumerate() {
            col.push(self.report.flows[f].received_bytes);
        }
    }

    fn forward(&mut self, t: SimTime, pkt: Packet, hop: NextHop) {
        let f = pkt.flow as usize;
        match hop {
            NextHop::Link(j) => self.offer(j, t, pkt),
            NextHop::FlowReceiverAccess => self.offer(self.net.flows[f].receiver_access, t, pkt),
            NextHop::FlowSenderAccess => self.offer(self.net.flows[f].sender_access_rev, t, pkt),
            // Per-flow paths ([[links]]) are built by net::topology, which the emulator does
            // not run: the kernel backend refuses such specs before starting it.
            NextHop::Route => unreachable!("the emulator forwards over the dumbbell only"),
            NextHop::Receiver | NextHop::Sender => {
                let to = if hop == NextHop::Receiver {
                    Side::Receiver
                } else {
                    Side::Sender
                };
                if to == Side::Receiver && pkt.kind == PacketKind::Data {
                    self.report.flows[f].received_packets += 1;
                    self.report.flows[f].received_bytes += u64::from(pkt.payload);
                }
                if let Some(b) = self.bytes.remove(&pkt.seq) {
                    self.out.push((to, t, b));
                }
            }
        }
    }

    fn offer(&mut self, link: usize, t: SimTime, pkt: Packet) {
        match self.net.links[link].offer(t, pkt) {
            Offer::Dropped { .. } => {
                self.bytes.remove(&pkt.seq);
                if pkt.kind == PacketKind::Data {
                    self.report.flows[pkt.flow as usize].dropped_packets += 1;
                }
            }
            Offer::Queued => {}
            Offer::Transmitting(end) => self.tx_end[link] = Some(end),
        }
    }

    /// A packet read from a device at `now` enters its flow's first link.
    pub fn inject(&mut self, now: SimTime, side: Side, data: &[u8]) {
        self.report.max_packet_bytes = self.report.max_packet_bytes.max(data.len() as u64);
        let Some(c) = ip::classify(data, side, self.base_port, self.cfg.flows.len() as u32) else {
            self.report.foreign_packets += 1;
            return;
        };
        let id = self.next_id;
        self.next_id += 1;
        self.bytes.insert(id, data.to_vec());
        // The model's copy of the real packet: its size and kind are what the links need;
        // it carries no ECN (qdisc marks would not reach the real bytes, so none run here).
        let pkt = if c.payload > 0 {
            Packet::data(c.flow, id, c.payload, c.wire_bytes - c.payload, false)
        } else {
            Packet::ack(c.flow, id, &[], c.wire_bytes)
        };
        let links = self.net.flows[c.flow as usize];
        let first = if side == Side::Sender {
            links.sender_access
        } else {
            links.receiver_access_rev
        };
        self.offer(first, now, pkt);
    }

    /// Close the run: final counters, what is still inside the links.
    pub fn finish(mut self) -> Report {
        for l in &self.net.links {
            let flows = &mut self.report.flows;
            l.for_each_inside(&mut |p| {
                if p.kind == PacketKind::Data {
                    flows[p.flow as usize].in_flight_packets_at_end += 1;
                }
            });
        }
        self.report.queues = self.net.links.iter().map(Link::report).collect();
        self.report.bottleneck_packets = self.net.links[self.net.bottleneck].counters.data_departed;
        self.report
    }

    pub fn duration(&self) -> SimTime {
        SimTime(self.cfg.duration_ns)
    }
}

/// Write the packets that left the network into their namespaces.
fn flush(emu: &mut Emulator, snd: &OwnedFd, rcv: &OwnedFd) {
    for (side, _, b) in emu.out.drain(..) {
        emu.report.packets_forwarded += 1;
        let fd = if side == Side::Receiver { rcv } else { snd };
        if tun::write_packet(fd, &b).is_err() {
            emu.report.write_errors += 1;
        }
    }
}

/// Run the emulation from `t0_ns` (CLOCK_MONOTONIC) for the configured duration.
pub fn run(mut emu: Emulator, t0_ns: u64, snd: &OwnedFd, rcv: &OwnedFd) -> Report {
    let mut buf = vec![0u8; 65_536];
    let end = emu.duration();
    loop {
        let now = SimTime(clock::now_ns().saturating_sub(t0_ns));
        emu.run_due(now);
        flush(&mut emu, snd, rcv);
        if now >= end {
            break;
        }
        for (fd, side) in [(snd, Side::Sender), (rcv, Side::Receiver)] {
            while let Ok(Some(n)) = tun::read_packet(fd, &mut buf) {
                emu.inject(now, side, &buf[..n]);
            }
        }
        let now = SimTime(clock::now_ns().saturating_sub(t0_ns));
        emu.run_due(now);
        flush(&mut emu, snd, rcv);
        let timeout = emu.timeout_ns(now).min(end.0.saturating_sub(now.0));
        if timeout > 0 {
            clock::wait_readable(&[snd, rcv], timeout);
        }
    }
    let mut report = emu.finish();
    report.cpu_s = clock::cpu_seconds();
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_sim::config::{AppConfig, FlowConfig, LinkConfig, LinkEvent, QueueLimit, TcpConfig};

    fn link(rate_bps: u64, delay_ns: u64, buffer: Option<QueueLimit>) -> LinkConfig {
        LinkConfig {
            rate_bps,
            delay_ns,
            buffer,
            loss: 0.0,
            aqm: None,
            ..Default::default()
        }
    }

    /// 12 Mbit/s bottleneck (1500 B = 1 ms), 5 ms; one flow with 1.2 Gbit/s access links
    /// (1500 B = 10 us), sender access 0 ms, receiver access 15 ms; buffer 2 packets.
    fn world(events: Vec<LinkEvent>) -> WorldConfig {
        WorldConfig {
            duration_ns: 1_000_000_000,
            seed: 1,
            sample_interval_ns: 100_000_000,
            tcp: TcpConfig::default(),
            bottleneck: link(12_000_000, 5_000_000, Some(QueueLimit::Packets(2))),
            bottleneck_reverse: None,
            flows: vec![FlowConfig {
                cc: "cubic".into(),
                params: Default::default(),
                sender_access: link(1_200_000_000, 0, None),
                receiver_access: link(1_200_000_000, 15_000_000, None),
                start_ns: 0,
                stop_ns: None,
                app: AppConfig::Bulk,
                ecn: None,
                onoff: None,
                bpf_object: None,
            }],
            events,
            shaping: Default::default(),
            capture: vec![],
            links: Default::default(),
            paths: Default::default(),
            sources: Default::default(),
            agents: Default::default(),
        }
    }

    /// A 1500-byte IPv4 TCP segment to port 5000 (flow 0) with 1448 payload bytes.
    fn segment(tag: u8) -> Vec<u8> {
        let mut p = vec![0u8; 1500];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&1500u16.to_be_bytes());
        p[9] = 6;
        p[22..24].copy_from_slice(&5000u16.to_be_bytes());
        p[32] = 8 << 4;
        p[100] = tag;
        p
    }

    #[test]
    fn a_segment_takes_serializations_plus_propagation_and_arrives_unchanged() {
        let mut e = Emulator::new(world(vec![]), 5000);
        e.inject(SimTime(0), Side::Sender, &segment(7));
        e.run_due(SimTime(100_000_000));
        // 10 us (sender access) + 1 ms + 5 ms (bottleneck) + 10 us + 15 ms (receiver access).
        assert_eq!(e.out.len(), 1);
        let (side, t, bytes) = &e.out[0];
        assert_eq!((*side, *t), (Side::Receiver, SimTime(21_020_000)));
        assert_eq!(bytes, &segment(7));
        assert_eq!(e.report.flows[0].received_bytes, 1448);
    }

    #[test]
    fn a_burst_is_paced_by_the_bottleneck_and_tail_dropped_beyond_its_buffer() {
        let mut e = Emulator::new(world(vec![]), 5000);
        for i in 0..5 {
            e.inject(SimTime(0), Side::Sender, &segment(i));
        }
        e.run_due(SimTime(100_000_000));
        // Access link serializes them 10 us apart; the bottleneck holds one serializing plus
        // two waiting: packets 0, 1 and 2 pass, packet 3 finds the queue full (it arrives at
        // 40 us, while 1 and 2 wait), and so does 4.
        let times: Vec<u64> = e.out.iter().map(|(_, t, _)| t.0).collect();
        assert_eq!(times, vec![21_020_000, 22_020_000, 23_020_000]);
        let rep = e.finish();
        assert_eq!(rep.flows[0].dropped_packets, 2);
        let bn = rep.queues.iter().find(|q| q.name == "bottleneck").unwrap();
        assert_eq!((bn.enqueued, bn.departed, bn.dropped), (5, 3, 2));
    }

    #[test]
    fn a_rate_event_applies_from_its_time() {
        // At 0.5 s the bottleneck drops to 6 Mbit/s: a segment then takes 2 ms to serialize.
        let ev = LinkEvent {
            at_ns: 500_000_000,
            rate_bps: Some(6_000_000),
            delay_ns: None,
            loss: None,
        };
        let mut e = Emulator::new(world(vec![ev]), 5000);
        e.run_due(SimTime(600_000_000));
        e.inject(SimTime(600_000_000), Side::Sender, &segment(1));
        e.run_due(SimTime(700_000_000));
        assert_eq!(
            e.out[0].1,
            SimTime(600_000_000 + 10_000 + 2_000_000 + 5_000_000 + 10_000 + 15_000_000)
        );
    }

    #[test]
    fn a_reordered_segment_overtakes_as_in_the_simulator() {
        // The bottleneck with reorder 100 % gap 2 (netem's `reorder 100% gap 2`): of two
        // segments, the first is delayed 5 ms, the second skips the delay. Bottleneck
        // departures at 1.01 and 2.01 ms: segment 0 arrives at the receiver at 1.01 + 5 +
        // 0.01 + 15 = 21.02 ms, segment 1 at 2.01 + 0 + 0.01 + 15 = 17.02 ms, first.
        let mut w = world(vec![]);
        w.bottleneck.reorder = 1.0;
        w.bottleneck.reorder_gap = 2;
        let mut e = Emulator::new(w, 5000);
        e.inject(SimTime(0), Side::Sender, &segment(0));
        e.inject(SimTime(0), Side::Sender, &segment(1));
        e.run_due(SimTime(100_000_000));
        let got: Vec<(u64, u8)> = e.out.iter().map(|(_, t, b)| (t.0, b[100])).collect();
        assert_eq!(got, vec![(17_020_000, 1), (21_020_000, 0)]);
    }

    #[test]
    fn foreign_packets_are_counted_and_dropped() {
        let mut e = Emulator::new(world(vec![]), 5000);
        let mut p = segment(0);
        p[22..24].copy_from_slice(&6000u16.to_be_bytes());
        e.inject(SimTime(0), Side::Sender, &p);
        e.run_due(SimTime(100_000_000));
        assert!(e.out.is_empty());
        assert_eq!(e.report.foreign_packets, 1);
    }
}
