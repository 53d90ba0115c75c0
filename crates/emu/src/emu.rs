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
//! leaves the last link is written to the other namespace's device. The whole network
//! (the bottleneck's queue discipline `bottleneck.aqm`, the links' traces and policers
//! `shaping`, named links and per-flow paths `net::topology`, sources' and probes' links)
//! is built by the simulator's own builder, `net::network::build`, which `World::new`
//! calls too, from the same config and RNG streams; a link whose next hop is `Route`
//! hands the packet to the next link of its flow's route. Packet captures (`capture`) are
//! refused (`Emulator::new`; why in net/network.rs).
//!
//! ECN: the model packet carries the real packet's ECN field (read from the IP header);
//! a CE mark a qdisc sets on it is written into the real packet (`ip::set_ce`, checksum
//! recomputed) when it leaves the network, so the receiving kernel sees CE and echoes ECE.
//! The emulator counts from the wire what the simulator counts inside its TCP: data
//! segments reaching the receiver with CE, ACKs reaching the sender with ECE, and data
//! segments the sender sent with CWR (its reductions).
//!
//! RTT samples (`Series::rtt_ms`, the simulator's `rtt_ms`, the latest sample at each
//! sample time) are taken on the wire as the sender's `ca_rtt_us` would be (rtt.rs).
//! Constant-rate sources (`sources`) run here as in the simulator (`source::Source`): their
//! packets exist in the model only and are never written to a namespace. Latency probes
//! (`probes`) are real: the kernel backend runs iputils ping in the sender's namespace
//! with ICMP identifier `base_port + probe`; its echo requests enter the probe's links
//! (`probe::Probe`, built with the network) and are written to the receiver's
//! namespace, whose kernel answers; the replies cross the reverse links back. The
//! emulator counts them (`Report::probes`); ping measures the round trips.
//!
//! Link times are kept in model time (each event is handled at its scheduled time,
//! however late the process wakes up), so a late wake-up delays the packet's delivery to
//! the kernel but never shifts the queue's schedule; how late we wake up is measured
//! (`Lateness`). A packet enters the model at the clock reading taken when it is read
//! from its device, after the model has been brought up to that time: never before it
//! existed, so no round trip is shorter than the path (up to 0.10.0 a whole read batch
//! took the loop's earlier reading, `Report::read_after_clock`).
//!
//! Deviations from the simulator: packets are real IP packets, so their sizes are the
//! kernel's (1500 bytes for a full segment with timestamps, 52 + SACK options for an
//! ACK, plus the handshake and FIN); delivery to the kernel is late by the wake-up
//! latency; loss, jitter and reorder draws use the same named RNG streams but see a
//! different packet sequence, so they differ from the simulator's run with the same seed.
//! RTT samples: see rtt.rs (the sender host's own delays are not in them).
//! Packets a qdisc drops when dequeuing are counted per flow at the end of the run
//! (`Link::qdisc_data_drops`); their bytes are released at the next sample (`release`).

use std::collections::HashMap;
use std::os::fd::OwnedFd;

use serde::Serialize;
use tcplab_sim::config::{ConfigError, WorldConfig};
use tcplab_sim::net::dumbbell::Dumbbell;
use tcplab_sim::net::link::{Link, NextHop, Offer};
use tcplab_sim::net::network::Network;
use tcplab_sim::net::topology::Routes;
use tcplab_sim::net::{Ecn, Packet, PacketKind};
use tcplab_sim::probe::{Probe, ProbeReport};
use tcplab_sim::record::{LinkReport, QueueReport};
use tcplab_sim::rng::RunRng;
use tcplab_sim::source::{Source, SourceCounters};
use tcplab_sim::time::SimTime;

use crate::clock;
use crate::ip::{self, Side};
use crate::rtt::{AckInfo, RttTrack};
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
    /// ECN seen on the wire: data segments that reached the receiver's namespace with CE,
    /// ACKs with ECE that reached the sender's, data segments the sender sent with CWR.
    pub ce_packets: u64,
    pub ece_acks: u64,
    pub cwr_packets: u64,
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
    /// rtt_ms[flow][row]: the flow's latest RTT sample (see the module docs), None before
    /// the first.
    pub rtt_ms: Vec<Vec<Option<f64>>>,
    /// With a queue discipline on the bottleneck (else empty), as the simulator's queue
    /// table: CE marks during the interval and the mean sojourn (ms) of the packets
    /// dequeued in it (None if none).
    pub marks: Vec<u64>,
    pub sojourn_ms: Vec<Option<f64>>,
}

/// Everything the emulator reports at the end.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Report {
    pub flows: Vec<FlowNet>,
    pub queues: Vec<QueueReport>,
    pub series: Series,
    pub bottleneck_packets: u64,
    pub lateness: Lateness,
    /// How long after the loop's clock reading each packet was read from a device: what
    /// stamping packets with that reading, as the emulator did up to 0.10.0, backdated
    /// them by (FIDELITY-gaps.md).
    pub read_after_clock: Lateness,
    /// Largest IP packet read from a device (1500 unless offloads leaked through).
    pub max_packet_bytes: u64,
    /// Packets read that belong to none of our flows (dropped), and failed writes.
    pub foreign_packets: u64,
    pub write_errors: u64,
    pub packets_forwarded: u64,
    /// CPU time the emulator used (user + system, s): how much of a core it needs.
    pub cpu_s: f64,
    /// Constant-rate sources' counters (the simulator's `sources`).
    pub sources: Vec<SourceCounters>,
    /// Latency probes' counters (ping's echoes; the round trips are ping's own).
    pub probes: Vec<ProbeReport>,
    /// The links it emulated, as the simulator's `RunOutput::links` (net/network.rs).
    pub links: Vec<LinkReport>,
}

pub struct Emulator {
    cfg: WorldConfig,
    net: Dumbbell,
    /// Per link: end of the current serialization, arrival time of the pipe's head.
    tx_end: Vec<Option<SimTime>>,
    arrival: Vec<Option<SimTime>>,
    /// Packet bytes by id (the model's `Packet::seq` carries the id), with the side they
    /// were read from: a route's direction is the side's (a SYN or FIN from the sender
    /// carries no payload, so the model's kind would say ACK).
    bytes: HashMap<u64, (Side, Vec<u8>)>,
    next_id: u64,
    next_event: usize,
    next_sample: SimTime,
    last_bn_drops: u64,
    /// Bottleneck marks, sojourn sum (ns) and count at the last sample.
    last_aqm: (u64, u64, u64),
    /// All links' drops when `release` last ran.
    last_release: u64,
    rtt: Vec<RttTrack>,
    /// Per-flow routes when the config gives paths (net/topology.rs), as in World.
    routes: Option<Routes>,
    /// Constant-rate sources (`sources`) and each one's next send time.
    sources: Vec<Source>,
    source_next: Vec<Option<SimTime>>,
    /// Latency probes' links and counters (`probes`).
    probes: Vec<Probe>,
    base_port: u16,
    /// Packets that left their last link, with the side to write them to and their model
    /// delivery time; `run` writes them out after each round of events.
    pub out: Vec<(Side, SimTime, Vec<u8>)>,
    pub report: Report,
}

/// Each flow's off periods `(off_from, on_again)` (ns from time zero; empty for a flow
/// without `onoff`), drawn as the simulator draws them (`world/onoff.rs`: the RNG stream
/// `onoff/flow<i>`, an on period from the flow's start, then off and on in turn until the
/// flow's stop), for the sending agent, which stops writing during them.
pub fn onoff_schedule(cfg: &WorldConfig) -> Vec<Vec<(u64, u64)>> {
    let rng = RunRng::new(cfg.seed);
    cfg.flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let Some(o) = f.onoff else {
                return Vec::new();
            };
            let mut p = tcplab_sim::onoff::Periods::new(o, rng.stream(&format!("onoff/flow{i}")));
            let stop = f.stop_ns.unwrap_or(cfg.duration_ns).min(cfg.duration_ns);
            let mut out = Vec::new();
            let mut t = f.start_ns;
            loop {
                let off = t.saturating_add(p.on());
                if off >= stop {
                    break;
                }
                let on = off.saturating_add(p.off());
                out.push((off, on));
                if on >= stop {
                    break;
                }
                t = on;
            }
            out
        })
        .collect()
}

enum Due {
    TxDone(usize),
    Arrive(usize),
    LinkChange(usize),
    Sample,
    SourceSend(usize),
}

impl Emulator {
    /// Check `cfg` (the network's fields: the kernel runs the flows' algorithms) and
    /// build its network as the simulator does (`net::network::build`). A config with a
    /// feature the emulator cannot carry is refused, naming the field.
    pub fn new(cfg: WorldConfig, base_port: u16) -> Result<Emulator, ConfigError> {
        cfg.validate_network()?;
        if !cfg.capture.is_empty() {
            // Not dropped silently: a kernel run would lack what its simulated twin has.
            return Err(ConfigError {
                field: "capture".into(),
                message: "packet captures are recorded by the simulator only: the \
                          emulator's model packets carry an id, not the TCP sequence, and \
                          the real packets are the kernel's (capture them with tcpdump in \
                          a namespace); leave out capture"
                    .into(),
            });
        }
        let rng = RunRng::new(cfg.seed);
        let Network {
            dumbbell: net,
            routes,
            sources,
            probes,
            links,
        } = tcplab_sim::net::network::build(&cfg, &rng);
        let source_next = sources.iter().map(|s| Some(s.first_send())).collect();
        let n = net.links.len();
        let flows = cfg.flows.len();
        let interval = cfg.sample_interval_ns;
        Ok(Emulator {
            cfg,
            net,
            tx_end: vec![None; n],
            arrival: vec![None; n],
            bytes: HashMap::new(),
            next_id: 0,
            next_event: 0,
            next_sample: SimTime(if interval > 0 { interval } else { u64::MAX }),
            last_bn_drops: 0,
            last_aqm: (0, 0, 0),
            last_release: 0,
            rtt: (0..flows).map(|_| RttTrack::default()).collect(),
            routes,
            sources,
            source_next,
            probes,
            base_port,
            out: Vec::new(),
            report: Report {
                flows: vec![FlowNet::default(); flows],
                series: Series {
                    received_bytes: vec![Vec::new(); flows],
                    rtt_ms: vec![Vec::new(); flows],
                    ..Default::default()
                },
                links,
                ..Default::default()
            },
        })
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
        for (i, t) in self.source_next.iter().enumerate() {
            if let Some(t) = t {
                consider(*t, Due::SourceSend(i));
            }
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
                    let hop = match (self.net.links[l].next, &self.routes) {
                        (NextHop::Route, Some(r)) => {
                            let forward = self
                                .bytes
                                .get(&pkt.seq)
                                .map_or(pkt.kind == PacketKind::Data, |(side, _)| {
                                    *side == Side::Sender
                                });
                            r.next(pkt.flow as usize, forward, l)
                        }
                        (hop, _) => hop,
                    };
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
                Due::SourceSend(i) => {
                    // As World::source_send: payload = wire bytes, header 0.
                    let src = &mut self.sources[i];
                    let (bytes, next) = src.send(t);
                    self.source_next[i] = next;
                    let id = src.counters.sent_packets - 1;
                    let mut pkt = Packet::data(i as u32, id, bytes, 0, false);
                    pkt.kind = PacketKind::Datagram;
                    let l = src.sender_access;
                    self.offer(l, t, pkt);
                }
            }
        }
    }

    /// Release the bytes of packets a qdisc dropped when dequeuing (the link reports them
    /// as counts only): keep those of packets still inside a link. Only with a qdisc, and
    /// only when it dropped something since the last call.
    fn release(&mut self) {
        // Every drop, the qdisc's included (Link::note_aqm), counts in `dropped`.
        let dropped: u64 = self.net.links.iter().map(|l| l.counters.dropped).sum();
        if dropped == self.last_release {
            return;
        }
        self.last_release = dropped;
        let mut inside = std::collections::HashSet::with_capacity(self.bytes.len());
        for l in &self.net.links {
            l.for_each_inside(&mut |p| {
                if p.kind != PacketKind::Datagram {
                    inside.insert(p.seq);
                }
            });
        }
        self.bytes.retain(|id, _| inside.contains(id));
    }

    fn sample(&mut self, t: SimTime) {
        if self.net.links[self.net.bottleneck].has_qdisc() {
            self.release();
        }
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
        for (col, r) in s.rtt_ms.iter_mut().zip(&self.rtt) {
            col.push(r.latest_ns.map(|ns| ns as f64 / 1e6));
        }
        if bn.has_qdisc() {
            // As the simulator's Recorder::queue_aqm.
            let c = &bn.counters;
            let (m0, s0, n0) = self.last_aqm;
            s.marks.push(c.marked - m0);
            let n = c.sojourn_count - n0;
            s.sojourn_ms
                .push((n > 0).then(|| (c.sojourn_sum_ns - s0) as f64 / n as f64 / 1e6));
            self.last_aqm = (c.marked, c.sojourn_sum_ns, c.sojourn_count);
        }
    }

    fn forward(&mut self, t: SimTime, pkt: Packet, hop: NextHop) {
        let f = pkt.flow as usize;
        if pkt.kind.is_probe() {
            return self.forward_probe(t, pkt, hop);
        }
        if pkt.kind == PacketKind::Datagram {
            // A source's packet: model only, never written to a namespace (as
            // World::forward_datagram; sources run on the dumbbell only).
            let src = &mut self.sources[f];
            match hop {
                NextHop::Link(j) => self.offer(j, t, pkt),
                NextHop::FlowReceiverAccess => {
                    let l = src.receiver_access;
                    self.offer(l, t, pkt);
                }
                _ => {
                    src.counters.received_packets += 1;
                    src.counters.received_bytes += u64::from(pkt.wire_bytes);
                }
            }
            return;
        }
        match hop {
            NextHop::Link(j) => self.offer(j, t, pkt),
            NextHop::FlowReceiverAccess => self.offer(self.net.flows[f].receiver_access, t, pkt),
            NextHop::FlowSenderAccess => self.offer(self.net.flows[f].sender_access_rev, t, pkt),
            // Resolved on arrival (run_due), as World::forward_routed does.
            NextHop::Route => unreachable!("routes are resolved on arrival"),
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
                let Some((_, mut b)) = self.bytes.remove(&pkt.seq) else {
                    return;
                };
                if pkt.ecn() == Ecn::Ce {
                    if b[1] & 0b11 != 0b11 {
                        ip::set_ce(&mut b);
                    }
                    if pkt.kind == PacketKind::Data {
                        self.report.flows[f].ce_packets += 1;
                    }
                }
                if to == Side::Sender {
                    if ip::tcp_flags(&b) & ip::ECE != 0 {
                        self.report.flows[f].ece_acks += 1;
                    }
                    let o = ip::tcp_options(&b);
                    let ack = AckInfo {
                        ack: ip::ack_number(&b),
                        sacks: &o.sacks[..o.n_sacks],
                        tsecr: o.ts.map(|(_, e)| e),
                    };
                    self.rtt[f].acked(ack, t);
                }
                self.out.push((to, t, b));
            }
        }
    }

    /// A ping request or reply reached the far end of a link: on along its probe's
    /// links, or written to the namespace it is for.
    fn forward_probe(&mut self, t: SimTime, pkt: Packet, hop: NextHop) {
        let p = &mut self.probes[pkt.flow as usize];
        let to = match hop {
            NextHop::Link(j) => return self.offer(j, t, pkt),
            NextHop::FlowReceiverAccess => {
                let l = p.receiver_access;
                return self.offer(l, t, pkt);
            }
            NextHop::FlowSenderAccess => {
                let l = p.sender_access_rev;
                return self.offer(l, t, pkt);
            }
            NextHop::Receiver => {
                p.report.reached_packets += 1;
                Side::Receiver
            }
            NextHop::Sender => {
                p.report.echoed_packets += 1;
                Side::Sender
            }
            NextHop::Route => unreachable!("probes run on the dumbbell only"),
        };
        if let Some((_, b)) = self.bytes.remove(&pkt.seq) {
            self.out.push((to, t, b));
        }
    }

    fn offer(&mut self, link: usize, t: SimTime, pkt: Packet) {
        match self.net.links[link].offer(t, pkt) {
            Offer::Dropped { .. } => match pkt.kind {
                // A datagram's seq is the source's count, not a key of `bytes`.
                PacketKind::Datagram => {
                    self.sources[pkt.flow as usize].counters.dropped_packets += 1;
                }
                kind => {
                    self.bytes.remove(&pkt.seq);
                    if kind == PacketKind::Data {
                        self.report.flows[pkt.flow as usize].dropped_packets += 1;
                    } else if kind.is_probe() {
                        self.probes[pkt.flow as usize].report.dropped_packets += 1;
                    }
                }
            },
            Offer::Queued => {}
            Offer::Transmitting(end) => self.tx_end[link] = Some(end),
            Offer::Sent(_) | Offer::QueuedBehind(_) => {
                unreachable!("the emulator's links are not lazy (Link::set_lazy)")
            }
        }
    }

    /// A packet read from a device at `now` enters its flow's first link.
    pub fn inject(&mut self, now: SimTime, side: Side, data: &[u8]) {
        self.report.max_packet_bytes = self.report.max_packet_bytes.max(data.len() as u64);
        let n_probes = self.probes.len() as u32;
        if let Some((probe, wire, ecn)) = ip::classify_echo(data, side, self.base_port, n_probes) {
            return self.inject_echo(now, side, data, (probe, wire, ecn));
        }
        let Some(c) = ip::classify(data, side, self.base_port, self.cfg.flows.len() as u32) else {
            self.report.foreign_packets += 1;
            return;
        };
        let id = self.next_id;
        self.next_id += 1;
        self.bytes.insert(id, (side, data.to_vec()));
        // The model's copy of the real packet: its size, kind and ECN field are what the
        // links need (a qdisc marks or drops by the ECN field).
        let mut pkt = if c.payload > 0 {
            Packet::data(c.flow, id, c.payload, c.wire_bytes - c.payload, false)
        } else {
            Packet::ack(c.flow, id, &[], c.wire_bytes)
        };
        pkt.set_ecn(match c.ecn {
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            0b11 => Ecn::Ce,
            _ => Ecn::NotEct,
        });
        if side == Side::Sender && c.payload > 0 {
            let f = &mut self.report.flows[c.flow as usize];
            f.cwr_packets += u64::from(c.flags & ip::CWR != 0);
            let tsval = ip::tcp_options(data).ts.map(|(v, _)| v);
            let end = c.seq.wrapping_add(c.payload);
            self.rtt[c.flow as usize].sent(c.seq, end, tsval, now);
        }
        let links = self.net.flows[c.flow as usize];
        let first = if side == Side::Sender {
            links.sender_access
        } else {
            links.receiver_access_rev
        };
        self.offer(first, now, pkt);
    }

    /// A ping request (sender side) or reply (receiver side) of probe `probe` enters the
    /// probe's first link, as the simulator's probe packets do (world/probes.rs).
    fn inject_echo(&mut self, now: SimTime, side: Side, data: &[u8], echo: (u32, u32, u8)) {
        let (probe, wire, ecn) = echo;
        let id = self.next_id;
        self.next_id += 1;
        self.bytes.insert(id, (side, data.to_vec()));
        let mut pkt = Packet::data(probe, id, wire, 0, false);
        pkt.set_ecn(if ecn == 0b11 { Ecn::Ce } else { Ecn::NotEct });
        let p = &mut self.probes[probe as usize];
        let (kind, first) = if side == Side::Sender {
            p.report.sent_packets += 1;
            (PacketKind::Probe, p.sender_access)
        } else {
            (PacketKind::ProbeEcho, p.receiver_access_rev)
        };
        pkt.kind = kind;
        self.offer(first, now, pkt);
    }

    /// Close the run: final counters, what is still inside the links.
    pub fn finish(mut self) -> Report {
        for l in &self.net.links {
            let flows = &mut self.report.flows;
            // Data segments a qdisc dropped when dequeuing (refused arrivals were counted
            // at the offer).
            for (f, n) in l.qdisc_data_drops().iter().enumerate() {
                flows[f].dropped_packets += n;
            }
            for (k, n) in l.qdisc_datagram_drops().iter().enumerate() {
                self.sources[k].counters.dropped_packets += n;
            }
            for (k, n) in l.qdisc_probe_drops().iter().enumerate() {
                self.probes[k].report.dropped_packets += n;
            }
            let probes = &mut self.probes;
            l.for_each_inside(&mut |p| {
                if p.kind.is_probe() {
                    probes[p.flow as usize].report.in_flight_packets_at_end += 1;
                }
            });
            let sources = &mut self.sources;
            l.for_each_inside(&mut |p| {
                if p.kind == PacketKind::Datagram {
                    sources[p.flow as usize].counters.in_flight_packets_at_end += 1;
                }
            });
            l.for_each_inside(&mut |p| {
                if p.kind == PacketKind::Data {
                    flows[p.flow as usize].in_flight_packets_at_end += 1;
                }
            });
        }
        self.report.queues = self.net.links.iter().map(Link::report).collect();
        self.report.sources = self.sources.iter().map(|s| s.counters.clone()).collect();
        self.report.probes = self.probes.iter().map(|p| p.report.clone()).collect();
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
                // Stamped when read, not with `now`: the packets our own writes made the
                // kernels send (an ACK for the data just written, data the ACK released)
                // and those sent while we were held up were not there at `now`, and
                // stamped with it they crossed the path early (FIDELITY-gaps.md).
                let t = SimTime(clock::now_ns().saturating_sub(t0_ns));
                emu.report.read_after_clock.add(t.0.saturating_sub(now.0));
                emu.run_due(t);
                emu.inject(t, side, &buf[..n]);
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
                bpf_state: None,
            }],
            events,
            shaping: Default::default(),
            capture: vec![],
            links: Default::default(),
            paths: Default::default(),
            sources: Default::default(),
            probes: Default::default(),
            agents: Default::default(),
        }
    }

    #[test]
    fn a_ping_request_crosses_the_probe_links_and_its_reply_comes_back() {
        // One probe with the flow's access links (1.2 Gbit/s; 0 ms, 15 ms): an 84-byte
        // request read at 0 reaches the receiver after 0 + 5 + 15 ms of propagation plus
        // 84 B at 1.2 Gbit/s (560 ns, twice) and 12 Mbit/s (56 us): 20_057_120 ns. The
        // reply, read at 30 ms, is back at 50_057_120 ns.
        let mut w = world(vec![]);
        w.probes = vec![tcplab_sim::config::ProbeConfig {
            interval_ns: 200_000_000,
            packet_bytes: 84,
            sender_access: w.flows[0].sender_access.clone(),
            receiver_access: w.flows[0].receiver_access.clone(),
            start_ns: 0,
            stop_ns: None,
        }];
        let mut e = Emulator::new(w, 5000).unwrap();
        let echo = |kind: u8| {
            let mut p = vec![0u8; 84];
            p[0] = 0x45;
            p[2..4].copy_from_slice(&84u16.to_be_bytes());
            p[9] = 1;
            p[20] = kind;
            p[24..26].copy_from_slice(&5000u16.to_be_bytes());
            p
        };
        e.inject(SimTime(0), Side::Sender, &echo(8));
        e.run_due(SimTime(20_057_119));
        assert!(e.out.is_empty());
        e.run_due(SimTime(20_057_120));
        assert_eq!(e.out.len(), 1);
        assert_eq!(
            (e.out[0].0, e.out[0].1),
            (Side::Receiver, SimTime(20_057_120))
        );
        e.out.clear();
        e.inject(SimTime(30_000_000), Side::Receiver, &echo(0));
        e.run_due(SimTime(50_057_120));
        assert_eq!(
            (e.out[0].0, e.out[0].1),
            (Side::Sender, SimTime(50_057_120))
        );
        let rep = e.finish();
        let p = &rep.probes[0];
        assert_eq!(
            (p.sent_packets, p.reached_packets, p.echoed_packets),
            (1, 1, 1)
        );
        assert_eq!((p.dropped_packets, rep.foreign_packets), (0, 0));
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
        let mut e = Emulator::new(world(vec![]), 5000).unwrap();
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
        let mut e = Emulator::new(world(vec![]), 5000).unwrap();
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
        let mut e = Emulator::new(world(vec![ev]), 5000).unwrap();
        e.run_due(SimTime(600_000_000));
        e.inject(SimTime(600_000_000), Side::Sender, &segment(1));
        e.run_due(SimTime(700_000_000));
        assert_eq!(
            e.out[0].1,
            SimTime(600_000_000 + 10_000 + 2_000_000 + 5_000_000 + 10_000 + 15_000_000)
        );
    }

    #[test]
    fn the_report_names_the_links_it_emulated_with_their_events() {
        // world(): bottleneck 12 Mbit/s, 5 ms; its reverse the same (dumbbell default);
        // access links 1.2 Gbit/s, 0 ms (sender) and 15 ms (receiver); one event at 0.5 s.
        let ev = LinkEvent {
            at_ns: 500_000_000,
            rate_bps: Some(6_000_000),
            delay_ns: None,
            loss: None,
        };
        let rep = Emulator::new(world(vec![ev.clone()]), 5000)
            .unwrap()
            .finish();
        let got: Vec<(&str, u64, u64)> = (rep.links.iter())
            .map(|l| (l.name.as_str(), l.rate_bps, l.delay_ns))
            .collect();
        assert_eq!(
            got,
            [
                ("bottleneck", 12_000_000, 5_000_000),
                ("bottleneck_reverse", 12_000_000, 5_000_000),
                ("flow0.sender_access", 1_200_000_000, 0),
                ("flow0.sender_access_reverse", 1_200_000_000, 0),
                ("flow0.receiver_access", 1_200_000_000, 15_000_000),
                ("flow0.receiver_access_reverse", 1_200_000_000, 15_000_000),
            ]
        );
        assert_eq!(rep.links[0].events, [ev]);
        assert!(rep.links[1..].iter().all(|l| l.events.is_empty()));
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
        let mut e = Emulator::new(w, 5000).unwrap();
        e.inject(SimTime(0), Side::Sender, &segment(0));
        e.inject(SimTime(0), Side::Sender, &segment(1));
        e.run_due(SimTime(100_000_000));
        let got: Vec<(u64, u8)> = e.out.iter().map(|(_, t, b)| (t.0, b[100])).collect();
        assert_eq!(got, vec![(17_020_000, 1), (21_020_000, 0)]);
    }

    #[test]
    fn foreign_packets_are_counted_and_dropped() {
        let mut e = Emulator::new(world(vec![]), 5000).unwrap();
        let mut p = segment(0);
        p[22..24].copy_from_slice(&6000u16.to_be_bytes());
        e.inject(SimTime(0), Side::Sender, &p);
        e.run_due(SimTime(100_000_000));
        assert!(e.out.is_empty());
        assert_eq!(e.report.foreign_packets, 1);
    }

    /// `segment` with sequence number `seq` and ECN field `ecn`.
    fn ect_segment(seq: u32, ecn: u8) -> Vec<u8> {
        let mut p = segment(0);
        p[24..28].copy_from_slice(&seq.to_be_bytes());
        p[1] = ecn;
        p
    }

    /// RFC 1071: a header with a valid checksum sums (ones' complement) to 0xffff.
    fn header_sum(p: &[u8]) -> u32 {
        let mut sum: u32 = p[..20]
            .chunks_exact(2)
            .map(|w| u32::from(u16::from_be_bytes([w[0], w[1]])))
            .sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        sum
    }

    /// A 52-byte ACK from the receiver (source port 5000) acknowledging `ack`, with ECE.
    fn ack_packet(ack: u32, ece: bool) -> Vec<u8> {
        let mut p = vec![0u8; 52];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&52u16.to_be_bytes());
        p[9] = 6;
        p[20..22].copy_from_slice(&5000u16.to_be_bytes());
        p[28..32].copy_from_slice(&ack.to_be_bytes());
        p[32] = 8 << 4;
        p[33] = 0x10 | if ece { ip::ECE } else { 0 };
        p
    }

    #[test]
    fn a_step_marker_marks_the_real_packet_and_fixes_its_checksum() {
        use tcplab_sim::net::aqm::AqmConfig;
        // Step marking at K = 1 waiting packet: of three ECT(0) segments arriving together,
        // the first is serialized at once, the second waits alone (0 waiting before it: not
        // marked), the third finds 1 waiting: marked CE. A Not-ECT fourth would be dropped.
        let mut w = world(vec![]);
        w.bottleneck.buffer = Some(QueueLimit::Packets(10));
        w.bottleneck.aqm = Some(AqmConfig::Step {
            k_pkts: 1,
            ecn: true,
        });
        let mut e = Emulator::new(w, 5000).unwrap();
        for i in 0..3 {
            e.inject(SimTime(0), Side::Sender, &ect_segment(i * 1448, 0b10));
        }
        e.inject(SimTime(0), Side::Sender, &ect_segment(3 * 1448, 0b00));
        e.run_due(SimTime(100_000_000));
        let ecn: Vec<u8> = e.out.iter().map(|(_, _, b)| b[1] & 0b11).collect();
        assert_eq!(ecn, vec![0b10, 0b10, 0b11]);
        // The marked packet's header checksum is valid; nothing else changed.
        assert_eq!(header_sum(&e.out[2].2), 0xffff);
        let mut rest = e.out[2].2.clone();
        rest[1] = 0b10;
        rest[10..12].copy_from_slice(&[0, 0]);
        assert_eq!(rest, ect_segment(2 * 1448, 0b10));
        assert_eq!(e.report.flows[0].ce_packets, 1);
        let rep = e.finish();
        let bn = rep.queues.iter().find(|q| q.name == "bottleneck").unwrap();
        assert_eq!((bn.marked, bn.dropped), (1, 1));
        assert_eq!(rep.flows[0].dropped_packets, 1);
        assert_eq!(rep.series.marks, vec![1]); // the sample at 0.1 s
    }

    #[test]
    fn a_capture_is_refused_naming_the_field_not_dropped() {
        let mut w = world(vec![]);
        w.capture = vec!["bottleneck".into()];
        let e = Emulator::new(w, 5000).err().expect("refused");
        assert_eq!(e.field, "capture");
        // What the simulator would refuse too is named as it names it.
        let mut w = world(vec![]);
        w.capture = vec!["bottlenek".into()];
        let e = Emulator::new(w, 5000).err().expect("refused");
        assert_eq!(e.field, "capture[0]");
    }

    #[test]
    fn a_policer_drops_what_exceeds_its_bucket() {
        use tcplab_sim::net::policer::PolicerConfig;
        use tcplab_sim::net::shaping::Shaping;
        // A 3000-byte bucket at 1.2 Mbit/s (1500 B per 10 ms) on the sender's access link:
        // of five segments at once, two conform, three are dropped.
        let mut w = world(vec![]);
        w.shaping.insert(
            "flow0.sender_access".into(),
            Shaping {
                trace: None,
                policer: Some(PolicerConfig {
                    rate_bps: 1_200_000,
                    burst_bytes: 3000,
                }),
            },
        );
        let mut e = Emulator::new(w, 5000).unwrap();
        for i in 0..5 {
            e.inject(SimTime(0), Side::Sender, &segment(i));
        }
        e.run_due(SimTime(100_000_000));
        assert_eq!(e.out.len(), 2);
        assert_eq!(e.report.flows[0].dropped_packets, 3);
    }

    #[test]
    fn the_latest_rtt_sample_is_the_newest_acked_segment_never_retransmitted() {
        let mut e = Emulator::new(world(vec![]), 5000).unwrap();
        // Two segments read at 0 and 1 ms; the ACK of both is read at 30 ms and reaches
        // the sender after 15 ms (receiver access reverse), 5 ms
        // (bottleneck reverse at 12 Mbit/s), 0 ms (sender access reverse): the newest
        // segment (read at 1 ms) gives the sample.
        e.inject(SimTime(0), Side::Sender, &ect_segment(1000, 0));
        e.inject(SimTime(1_000_000), Side::Sender, &ect_segment(2448, 0));
        e.run_due(SimTime(30_000_000));
        e.inject(SimTime(30_000_000), Side::Receiver, &ack_packet(3896, true));
        e.run_due(SimTime(99_000_000));
        let delivered = e.out.last().unwrap().1 .0;
        // 52 B at 1.2 Gbit/s = 346.7 ns (x2 access links), at 12 Mbit/s = 34_666.7 ns,
        // each rounded up to whole nanoseconds (Rate::tx_time).
        assert_eq!(
            delivered,
            30_000_000 + 347 + 15_000_000 + 34_667 + 5_000_000 + 347
        );
        assert_eq!(e.rtt[0].latest_ns, Some(delivered - 1_000_000));
        assert_eq!(e.report.flows[0].ece_acks, 1);
        // A retransmission of the first segment of a new pair: its ACK gives no sample.
        e.inject(SimTime(100_000_000), Side::Sender, &ect_segment(3896, 0));
        e.inject(SimTime(100_000_000), Side::Sender, &ect_segment(3896, 0));
        e.inject(
            SimTime(130_000_000),
            Side::Receiver,
            &ack_packet(3896 + 1448, false),
        );
        e.run_due(SimTime(199_000_000));
        assert_eq!(e.rtt[0].latest_ns, Some(delivered - 1_000_000));
        e.run_due(SimTime(200_000_000)); // the sample at 0.1 s and 0.2 s
        let ms = (delivered - 1_000_000) as f64 / 1e6;
        assert_eq!(e.report.series.rtt_ms[0], vec![Some(ms), Some(ms)]);
    }

    #[test]
    fn the_ack_direction_runs_the_bottleneck_reverse_settings() {
        // bottleneck.reverse at 1.2 Mbit/s: a 52-byte ACK serializes in 346.7 us there
        // (34.7 us at the forward 12 Mbit/s), rounded up to 346_667 ns.
        let mut w = world(vec![]);
        w.bottleneck_reverse = Some(link(1_200_000, 5_000_000, None));
        let mut e = Emulator::new(w, 5000).unwrap();
        e.inject(SimTime(0), Side::Receiver, &ack_packet(1, false));
        e.run_due(SimTime(99_000_000));
        assert_eq!(
            e.out[0].1,
            SimTime(347 + 15_000_000 + 346_667 + 5_000_000 + 347)
        );
    }

    #[test]
    fn a_flow_routed_over_two_bottlenecks_crosses_both() {
        use tcplab_sim::config::NamedLink;
        // A second named link l2 (6 Mbit/s, 2 ms: 1500 B in 2 ms) after the bottleneck:
        // 10 us + 1 ms + 5 ms (bottleneck) + 2 ms + 2 ms (l2) + 10 us + 15 ms. Its ACK comes
        // back over l2_reverse (6 Mbit/s, 2 ms: 52 B in 69.4 us) and bottleneck_reverse.
        let mut w = world(vec![]);
        w.links = vec![NamedLink {
            name: "l2".into(),
            forward: link(6_000_000, 2_000_000, None),
            reverse: None,
        }];
        w.paths = vec![vec!["bottleneck".into(), "l2".into()]];
        let mut e = Emulator::new(w, 5000).unwrap();
        e.inject(SimTime(0), Side::Sender, &segment(1));
        e.run_due(SimTime(50_000_000));
        assert_eq!(
            e.out[0].1,
            SimTime(10_000 + 1_000_000 + 5_000_000 + 2_000_000 + 2_000_000 + 10_000 + 15_000_000)
        );
        e.inject(SimTime(50_000_000), Side::Receiver, &ack_packet(1, false));
        e.run_due(SimTime(99_000_000));
        // 52 B: 347 ns per access link, 69_334 ns on l2_reverse, 34_667 ns on the
        // bottleneck's reverse (each rounded up).
        assert_eq!(
            e.out[1].1,
            SimTime(50_000_000 + 347 + 15_000_000 + 69_334 + 2_000_000 + 34_667 + 5_000_000 + 347)
        );
        // A SYN (no payload) from the sender takes the data route, not the ACK route.
        let mut syn = ack_packet(0, false);
        syn[20..22].copy_from_slice(&40000u16.to_be_bytes());
        syn[22..24].copy_from_slice(&5000u16.to_be_bytes());
        e.inject(SimTime(100_000_000), Side::Sender, &syn);
        e.run_due(SimTime(199_000_000));
        assert_eq!(e.out[2].0, Side::Receiver);
        let rep = e.finish();
        let l2 = rep.queues.iter().find(|q| q.name == "l2").unwrap();
        assert_eq!(l2.departed, 2);
    }

    #[test]
    fn a_constant_rate_source_loads_the_bottleneck_and_is_counted() {
        use tcplab_sim::config::SourceConfig;
        // A 9 Mbit/s source of 1500-byte packets (one every 1.333 ms) until 100 ms into a
        // 12 Mbit/s bottleneck (1 ms per packet) with 2 waiting places: it never fills
        // them, so all 75 packets (k * 1.333 ms < 100 ms for k = 0..74) arrive, each
        // after 10 us + 1 ms + 5 ms + 10 us + 15 ms.
        let mut w = world(vec![]);
        w.sources = vec![SourceConfig {
            rate_bps: 9_000_000,
            packet_bytes: 1500,
            sender_access: link(1_200_000_000, 0, None),
            receiver_access: link(1_200_000_000, 15_000_000, None),
            start_ns: 0,
            stop_ns: Some(100_000_000),
            onoff: None,
        }];
        let mut e = Emulator::new(w, 5000).unwrap();
        // A TCP segment at 50 ms shares the queue with the source's packets: it waits
        // behind at most one, so it arrives at most 1 ms later than alone.
        e.run_due(SimTime(50_000_000));
        e.inject(SimTime(50_000_000), Side::Sender, &segment(1));
        e.run_due(SimTime(200_000_000));
        assert_eq!(e.out.len(), 1); // datagrams are never written to a namespace
        let alone = 50_000_000 + 21_020_000;
        assert!(e.out[0].1 .0 >= alone && e.out[0].1 .0 <= alone + 1_000_000);
        let rep = e.finish();
        let c = &rep.sources[0];
        assert_eq!(
            (c.sent_packets, c.received_packets, c.dropped_packets),
            (75, 75, 0)
        );
        assert_eq!(c.received_bytes, 75 * 1500);
        let bn = rep.queues.iter().find(|q| q.name == "bottleneck").unwrap();
        assert_eq!(bn.departed, 76);
    }

    #[test]
    fn the_on_off_schedule_alternates_from_the_start_to_the_stop() {
        use tcplab_sim::config::OnOffConfig;
        // Fixed periods, on 300 ms, off 200 ms, from 100 ms to the 1 s run's end: on
        // 100-400, off 400-600, on 600-900, off 900-1100 (the run ends at 1000).
        let mut w = world(vec![]);
        w.flows[0].start_ns = 100_000_000;
        w.flows[0].onoff = Some(OnOffConfig {
            on_ns: 300_000_000,
            off_ns: 200_000_000,
            exponential: false,
        });
        assert_eq!(
            onoff_schedule(&w),
            vec![vec![
                (400_000_000, 600_000_000),
                (900_000_000, 1_100_000_000)
            ]]
        );
    }

    #[test]
    fn bytes_of_packets_codel_drops_when_dequeuing_are_released() {
        use tcplab_sim::net::aqm::codel::CodelConfig;
        use tcplab_sim::net::aqm::AqmConfig;
        // 200 Not-ECT segments at once into CoDel (target 5 ms, interval 100 ms) at 12
        // Mbit/s: the head's sojourn passes 5 ms after 5 packets and stays above for 100
        // ms, so CoDel drops at dequeue from then on. Afterwards every segment was either
        // written out or dropped, and the byte table holds none of them.
        let mut w = world(vec![]);
        w.bottleneck.buffer = Some(QueueLimit::Packets(1000));
        w.bottleneck.aqm = Some(AqmConfig::Codel(CodelConfig {
            target_ns: 5_000_000,
            interval_ns: 100_000_000,
            ecn: false,
        }));
        let mut e = Emulator::new(w, 5000).unwrap();
        for i in 0..200u32 {
            e.inject(SimTime(0), Side::Sender, &ect_segment(i * 1448, 0));
        }
        e.run_due(SimTime(500_000_000)); // samples at 0.1 .. 0.5 s
        let dropped = e.net.links[e.net.bottleneck].qdisc_data_drops()[0];
        assert!(dropped > 0);
        assert_eq!(e.out.len() as u64 + dropped, 200);
        assert!(e.bytes.is_empty(), "{} left", e.bytes.len());
        assert_eq!(e.finish().flows[0].dropped_packets, dropped);
    }
}
