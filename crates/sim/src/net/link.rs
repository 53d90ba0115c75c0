//! One direction of a point-to-point link: a drop-tail queue at the sending side, a
//! serializer at the line rate, and a propagation pipe.
//!
//! Model:
//! - A packet offered to the link first meets the Bernoulli random loss (like netem's
//!   `loss`, drawn on enqueue from the link's own RNG stream), then the drop-tail limit
//!   (packets or wire bytes). The packet being serialized has left the queue and does
//!   not count against the limit, as in a Linux qdisc feeding a NIC.
//! - Serialization takes wire_bytes * 8 / rate; a rate change applies from the next
//!   packet that starts serializing.
//! - Propagation: packets in flight on the wire sit in a FIFO pipe, so the event queue
//!   holds one arrival event per link, not one per packet. A delay change applies to
//!   packets that leave the serializer afterwards; a shorter delay never lets a packet
//!   overtake one sent before it (arrival = max(tx_end + delay, previous arrival)): a
//!   link without jitter or reordering does not reorder.
//! - Jitter and reordering (net/netem.rs, netem's `delay D J` and `reorder P gap G`):
//!   each packet leaving the serializer draws its own propagation delay, and the pipe
//!   is kept in arrival-time order (netem's tfifo), so packets overtake each other. The
//!   pipe's head can then change under a pending arrival event: the link remembers the
//!   event it asked for (`Netem::armed`), asks for an earlier one when a packet becomes
//!   the new head, and [`Link::arrive`] ignores an event that is no longer the one
//!   armed (it returns `None`). Without netem nothing of this runs.
//!
//! - With a queue discipline (`aqm`, [`crate::net::aqm`]) the qdisc holds the waiting
//!   packets instead of the FIFO: it decides on each arrival (drop, mark, queue) and picks
//!   the next packet whenever the serializer frees up (possibly dropping some first).
//!   The data segments it drops other than a refused arrival are counted per flow here
//!   (`qdisc_data_drops`), for the engine's conservation check at the end of the run, so
//!   the engine never looks after an offer or a departure. Without one, nothing of this
//!   runs.
//!
//! - Optional (net/shaping.rs): a token-bucket policer at the entrance (policer.rs), after
//!   the random loss, dropping what exceeds it; a Mahimahi trace (trace.rs) in place of
//!   the line rate; a capture of departures (capture.rs). They compose with a qdisc: the
//!   policer admits, the qdisc (or FIFO) holds, the trace (or line rate) serializes.
//!
//! - Departures without events ([`Link::set_lazy`], plain links only): a packet that
//!   starts serializing with nothing queued behind it enters the pipe at once, with the
//!   arrival time its departure would give it, and no departure event is scheduled; the
//!   link remembers when its serialization ends (`Sending`) and counts the departure
//!   when next looked at. A packet offered before then queues as before and asks for
//!   one departure event at that end. Timing, order and counters are those of a
//!   departure event per packet; what changes is only the number of events and so the
//!   order of events due at the same nanosecond (benches/RESULTS.md, "ninth step").
//!   Not for links whose delay changes during the run (a scheduled `[[events]]` delay
//!   would apply to a packet already in the pipe) nor the emulator's links.
//!
//! - Hand-over at departure ([`Link::set_handover`]; the engine's two bottlenecks when
//!   every flow's next link is lazy): a TCP segment or ACK whose far-end arrival falls
//!   before the run's end does not wait in this link's pipe for an arrival event; it is
//!   put aside with its arrival time when it leaves the serializer, and the engine offers
//!   it at once to the next link *at that arrival time* (`World::hand_over`). That next
//!   link is the flow's own access link, fed by nothing else, so it sees the same packets
//!   at the same times in the same order, and one event per packet is saved. Arrival
//!   times are those of the pipe (never before the packet ahead). Only when nothing can
//!   happen to that link before the arrival: this link's pipe is empty (no packet for it
//!   still propagating, which must be offered first) and the next link has no queue (so
//!   no departure event of its own is pending, which must run first); otherwise the
//!   packet propagates as before. Without jitter only. Since 0.16.0. It changes one
//!   thing besides the event count: the access link's arrival is now scheduled when
//!   the packet leaves the bottleneck, before events scheduled while it propagates, so
//!   among events due at the same nanosecond it runs earlier than it did (the queue
//!   breaks ties by insertion; docs/CHANGELOG.md 0.16.0 measures what that moved).
//!
//! Counters (see [`QueueCounters`]): `enqueued` counts every packet offered,
//! `dropped` every packet lost here (tail drops plus random losses, the latter also
//! counted in `random_loss`), `departed` every packet that finished serializing, and
//! `backlog` what is queued or serializing; enqueued = departed + dropped + backlog.
//! `marked` counts CE marks set by the qdisc.

use std::collections::VecDeque;

use crate::contract::LinkEvent;
use crate::contract::QueueLimit;
use crate::net::aqm::{AqmOut, Qdisc};
use crate::net::capture::Capture;
use crate::net::netem::Netem;
use crate::net::packet::{Packet, PacketKind};
use crate::net::policer::Policer;
use crate::net::trace::TraceServer;
use crate::record::QueueReport;
use crate::rng::Rng;
use crate::time::{Dur, Rate, SimTime};

/// Where a packet goes when it reaches the far end of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextHop {
    /// Another link (a router forwarding onto a shared link).
    Link(usize),
    /// Router B: onto the packet's flow's receiver access link.
    FlowReceiverAccess,
    /// Router A: onto the packet's flow's sender access link (reverse direction).
    FlowSenderAccess,
    /// The flow's receiving host.
    Receiver,
    /// The flow's sending host.
    Sender,
    /// The next link of the packet's flow's route (net/topology.rs).
    Route,
}

/// Exact per-queue counters, in packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueCounters {
    pub enqueued: u64,
    pub departed: u64,
    /// Tail drops plus random losses.
    pub dropped: u64,
    pub random_loss: u64,
    /// Data segments that finished serializing (for the bottleneck: the benchmark figure).
    pub data_departed: u64,
    /// Packets marked CE by the queue discipline.
    pub marked: u64,
    /// Sum (ns) and count of the queueing delays of packets the qdisc handed to the
    /// serializer (arrival to start of serialization); only with a qdisc.
    pub sojourn_sum_ns: u64,
    pub sojourn_count: u64,
}

/// What happened to an offered packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Lost: random loss (`true`) or tail drop (`false`).
    Dropped {
        random: bool,
    },
    Queued,
    /// The link was idle: serialization started and ends at this time (schedule TxDone).
    Transmitting(SimTime),
    /// A lazy link was idle: the packet is in the pipe already; schedule its arrival at
    /// this time if given (the pipe was empty). No departure event.
    Sent(Option<SimTime>),
    /// Queued first behind a packet a lazy link sent without a departure event: schedule
    /// a departure event at this time, the end of that packet's serialization.
    QueuedBehind(SimTime),
}

/// A packet a lazy link is serializing without a departure event: when it ends, and
/// what its departure will count.
#[derive(Clone, Copy, Debug)]
struct Sending {
    until: SimTime,
    bytes: u32,
    data: bool,
}

pub struct Link {
    pub name: String,
    pub rate: Rate,
    pub delay: Dur,
    pub loss: f64,
    pub limit: Option<QueueLimit>,
    pub next: NextHop,
    queue: VecDeque<Packet>,
    queue_bytes: u64,
    in_tx: Option<Packet>,
    pipe: VecDeque<(SimTime, Packet)>,
    last_arrival: SimTime,
    rng: Rng,
    pub counters: QueueCounters,
    /// The queue discipline, if any (else the drop-tail FIFO above); boxed with its
    /// output so that a link without one stays small.
    aqm: Option<Box<AqmSlot>>,
    /// A trace, a policer or a capture (net/shaping.rs); attach through
    /// [`Link::extras_mut`]. Boxed, so that a plain link stays small.
    pub extras: Option<Box<LinkExtras>>,
    /// Jitter and reordering (net/netem.rs); boxed, so that a plain link stays small.
    pub netem: Option<Box<Netem>>,
    /// A qdisc or extras is attached: `offer` and `tx_done` take their out-of-line slow
    /// paths. One flag tested once per offer and once per departure, so that a plain link
    /// runs the code it ran before qdiscs and extras existed.
    slow: bool,
    /// Departures without events (see the module's notes; [`Link::set_lazy`]).
    lazy: bool,
    sending: Option<Sending>,
    /// Hand-over at departure (module notes): packets arriving before this time are put
    /// in `handover` instead of the pipe. `None`: off.
    handover_before: Option<SimTime>,
    handover: VecDeque<(SimTime, Packet)>,
}

/// A link's queue discipline, its output buffer, and the data segments it dropped
/// (besides refused arrivals) per flow.
pub struct AqmSlot {
    qdisc: Box<dyn Qdisc>,
    out: AqmOut,
    /// Indexed by flow; grown on demand.
    data_drops: Vec<u64>,
    /// The same for constant-rate sources' datagrams, indexed by source.
    datagram_drops: Vec<u64>,
    /// The same for latency probes and their echoes, indexed by probe source.
    probe_drops: Vec<u64>,
}

impl Link {
    pub fn new(
        name: String,
        rate: Rate,
        delay: Dur,
        loss: f64,
        limit: Option<QueueLimit>,
        next: NextHop,
        rng: Rng,
    ) -> Link {
        Link {
            name,
            rate,
            delay,
            loss,
            limit,
            next,
            // Empty, grown on demand: a ring's pushes walk its whole capacity, so 64
            // entries reserved on each of a 1000-flow world's 4000 access links were some
            // 35 MiB walked for a few packets each (benches/RESULTS.md, "fifteenth step").
            queue: VecDeque::new(),
            queue_bytes: 0,
            in_tx: None,
            pipe: VecDeque::new(),
            last_arrival: SimTime::ZERO,
            rng,
            counters: QueueCounters::default(),
            aqm: None,
            extras: None,
            netem: None,
            slow: false,
            lazy: false,
            sending: None,
            handover_before: None,
            handover: VecDeque::new(),
        }
    }

    /// Hand TCP packets that arrive before `before` to the next link at departure (the
    /// module's notes); not on a link with jitter or reordering. The caller vouches that
    /// the next link of every such packet is fed by this link alone and is lazy.
    pub fn set_handover(&mut self, before: SimTime) {
        if self.netem.is_none() {
            self.handover_before = Some(before);
        }
    }

    /// Whether the link sends without departure events ([`Link::set_lazy`]).
    pub fn is_lazy(&self) -> bool {
        self.lazy
    }

    /// Whether packets wait to be handed over (`World::hand_over`), cheaply.
    #[inline(always)]
    pub fn has_handover(&self) -> bool {
        !self.handover.is_empty()
    }

    /// The next packet to hand over, with its arrival time at the far end.
    #[inline(always)]
    pub fn next_handover(&mut self) -> Option<(SimTime, Packet)> {
        self.handover.pop_front()
    }

    /// Into the pipe with its arrival time (also a packet put aside for hand-over that
    /// must propagate after all: the engine found its next link busy). Returns the
    /// arrival to schedule if the pipe was empty.
    #[inline(always)]
    pub fn into_pipe(&mut self, arrival: SimTime, pkt: Packet) -> Option<SimTime> {
        let was_empty = self.pipe.is_empty();
        self.pipe.push_back((arrival, pkt));
        was_empty.then_some(arrival)
    }

    /// Whether the pipe holds packets still propagating.
    pub fn pipe_is_empty(&self) -> bool {
        self.pipe.is_empty()
    }

    /// Whether nothing waits behind the packet serializing (so that no departure event
    /// of this link is pending on a plain lazy link).
    pub fn queue_is_empty(&self) -> bool {
        self.queue.is_empty() && self.aqm.is_none()
    }

    /// Send packets that nothing queues behind without a departure event (the module's
    /// notes). Only a plain link qualifies (no qdisc, extras or netem): on any other this
    /// does nothing. Call before the first packet.
    pub fn set_lazy(&mut self) {
        self.lazy = !self.slow && self.netem.is_none();
    }

    /// Count the departure of a packet sent without a departure event.
    #[inline(always)]
    fn depart(&mut self, s: Sending) {
        self.counters.departed += 1;
        self.counters.data_departed += s.data as u64;
    }

    /// Count a lazily sent packet whose serialization ended before `t` as departed, as
    /// its departure event would have been by then (every event before `t` has run).
    pub fn settle_before(&mut self, t: SimTime) {
        if let Some(s) = self.sending.filter(|s| s.until < t) {
            self.depart(s);
            self.sending = None;
        }
    }

    /// A packet starts serializing on a lazy link at `end - its serialization time`
    /// with nothing queued behind it: into the pipe now, where its departure event at
    /// `end` would have put it. Returns the arrival to schedule if the pipe was empty.
    #[inline(always)]
    fn send_lazily(&mut self, end: SimTime, pkt: Packet) -> Option<SimTime> {
        self.sending = Some(Sending {
            until: end,
            bytes: pkt.wire_bytes,
            data: pkt.kind == PacketKind::Data,
        });
        self.enter_pipe(end, pkt)
    }

    /// A packet leaves the serializer at `now` into a pipe without jitter: arrival after
    /// the delay, never before the packet ahead. Returns the arrival to schedule if the
    /// pipe was empty.
    #[inline(always)]
    fn enter_pipe(&mut self, now: SimTime, pkt: Packet) -> Option<SimTime> {
        let arrival = (now + self.delay).max(self.last_arrival);
        self.last_arrival = arrival;
        if let Some(before) = self.handover_before {
            // Only into an empty pipe: a packet may not pass one still propagating.
            let tcp = matches!(pkt.kind, PacketKind::Data | PacketKind::Ack);
            if arrival < before && tcp && self.pipe.is_empty() {
                self.handover.push_back((arrival, pkt));
                return None;
            }
        }
        self.into_pipe(arrival, pkt)
    }

    /// `offer` on an idle-or-lazily-sending lazy link.
    #[inline(always)]
    fn offer_lazy(&mut self, now: SimTime, pkt: Packet) -> Offer {
        if let Some(s) = self.sending {
            // Still serializing, or a departure event is due for the queue behind it
            // (possibly at this very instant): queue, as behind any packet.
            if s.until > now || !self.queue.is_empty() {
                let first = self.queue.is_empty();
                return match self.enqueue(pkt) {
                    Offer::Queued if first => Offer::QueuedBehind(s.until),
                    o => o,
                };
            }
            self.depart(s);
            self.sending = None;
        }
        let end = now + self.rate.tx_time(pkt.wire_bytes as u64);
        Offer::Sent(self.send_lazily(end, pkt))
    }

    /// Give the link jitter and reordering: per-packet delays, arrivals in time order.
    pub fn set_netem(&mut self, netem: Netem) {
        self.netem = Some(Box::new(netem));
    }

    /// The link's extras (net/shaping.rs), created empty if absent; the link takes its
    /// slow paths from now on.
    pub fn extras_mut(&mut self) -> &mut LinkExtras {
        self.slow = true;
        self.extras.get_or_insert_with(Box::default)
    }

    /// Run the waiting room as `qdisc` instead of the drop-tail FIFO.
    pub fn set_qdisc(&mut self, qdisc: Box<dyn Qdisc>) {
        self.aqm = Some(Box::new(AqmSlot {
            qdisc,
            out: AqmOut::default(),
            data_drops: Vec::new(),
            datagram_drops: Vec::new(),
            probe_drops: Vec::new(),
        }));
        self.slow = true;
    }

    /// Data segments of each flow (index) the qdisc dropped other than refused arrivals
    /// (those the engine counts from [`Offer::Dropped`]); flows past the end dropped none.
    pub fn qdisc_data_drops(&self) -> &[u64] {
        self.aqm.as_ref().map_or(&[], |a| &a.data_drops)
    }
    /// The same for constant-rate sources' datagrams (index: source).
    pub fn qdisc_datagram_drops(&self) -> &[u64] {
        self.aqm.as_ref().map_or(&[], |a| &a.datagram_drops)
    }
    /// The same for latency probes and their echoes (index: probe source).
    pub fn qdisc_probe_drops(&self) -> &[u64] {
        self.aqm.as_ref().map_or(&[], |a| &a.probe_drops)
    }
    pub fn has_qdisc(&self) -> bool {
        self.aqm.is_some()
    }

    /// Fold what the qdisc reported into the counters and the per-flow data drops.
    fn note_aqm(counters: &mut QueueCounters, a: &mut AqmSlot) {
        counters.dropped += a.out.dropped.len() as u64;
        counters.marked += std::mem::take(&mut a.out.marks);
        for p in a.out.dropped.drain(..) {
            let per = match p.kind {
                PacketKind::Data => &mut a.data_drops,
                PacketKind::Datagram => &mut a.datagram_drops,
                PacketKind::Probe | PacketKind::ProbeEcho => &mut a.probe_drops,
                PacketKind::Ack => continue,
            };
            let f = p.flow as usize;
            if per.len() <= f {
                per.resize(f + 1, 0);
            }
            per[f] += 1;
        }
    }

    /// The next packet from the qdisc, its sojourn recorded. (Out of line, as `offer_aqm`:
    /// the drop-tail path's code stays as small as without qdiscs.)
    #[inline(never)]
    fn dequeue_aqm(&mut self, now: SimTime) -> Option<Packet> {
        let a = self.aqm.as_mut().expect("qdisc present");
        let next = a.qdisc.dequeue(now, &mut a.out);
        Self::note_aqm(&mut self.counters, a);
        let (pkt, t) = next?;
        self.counters.sojourn_sum_ns += now.ns() - t.ns();
        self.counters.sojourn_count += 1;
        Some(pkt)
    }

    /// `offer` on a link with a qdisc or extras (out of line, so that a plain drop-tail
    /// link runs the code it ran before): the policer first, then the waiting room (the
    /// qdisc, or the drop-tail FIFO), serialization at the trace's schedule or the line
    /// rate.
    #[inline(never)]
    fn offer_slow(&mut self, now: SimTime, pkt: Packet) -> Offer {
        if let Some(x) = self.extras.as_deref_mut() {
            if !x.admits(now, pkt.wire_bytes) {
                self.counters.dropped += 1;
                return Offer::Dropped { random: false };
            }
        }
        let Some(a) = self.aqm.as_mut() else {
            if self.in_tx.is_none() {
                self.in_tx = Some(pkt);
                return Offer::Transmitting(self.service_end(now, pkt.wire_bytes, true));
            }
            return self.enqueue(pkt);
        };
        let accepted = a.qdisc.enqueue(now, pkt, &mut a.out);
        Self::note_aqm(&mut self.counters, a);
        if !accepted {
            self.counters.dropped += 1;
            return Offer::Dropped { random: false };
        }
        if self.in_tx.is_some() {
            return Offer::Queued;
        }
        match self.dequeue_aqm(now) {
            Some(p) => {
                self.in_tx = Some(p);
                Offer::Transmitting(self.service_end(now, p.wire_bytes, true))
            }
            None => Offer::Queued,
        }
    }

    /// When a packet of `bytes` starting service at `now` has been sent: on the trace's
    /// schedule, or at the line rate (`fresh`: the link was idle).
    fn service_end(&mut self, now: SimTime, bytes: u32, fresh: bool) -> SimTime {
        match self.extras.as_deref_mut() {
            Some(x) => x.service_end(now, bytes, fresh, self.rate),
            None => now + self.rate.tx_time(u64::from(bytes)),
        }
    }

    /// `tx_done` on a link with a qdisc or extras: capture the departure, take the next
    /// packet from the waiting room, start it on the trace's schedule (using the surplus
    /// of the opportunity that sent `sent`) or at the line rate.
    #[inline(never)]
    fn next_slow(&mut self, now: SimTime, sent: &Packet) -> Option<SimTime> {
        if let Some(c) = self.extras.as_deref_mut().and_then(|x| x.capture.as_mut()) {
            c.record(now, sent);
        }
        let next = if self.aqm.is_some() {
            self.dequeue_aqm(now)?
        } else {
            let next = self.queue.pop_front()?;
            self.queue_bytes -= next.wire_bytes as u64;
            next
        };
        self.in_tx = Some(next);
        Some(self.service_end(now, next.wire_bytes, false))
    }

    /// Offer a packet at `now`.
    pub fn offer(&mut self, now: SimTime, pkt: Packet) -> Offer {
        self.counters.enqueued += 1;
        if self.rng.bernoulli(self.loss) {
            self.counters.dropped += 1;
            self.counters.random_loss += 1;
            return Offer::Dropped { random: true };
        }
        if self.slow {
            return self.offer_slow(now, pkt);
        }
        if self.in_tx.is_none() {
            if self.lazy {
                return self.offer_lazy(now, pkt);
            }
            debug_assert!(self.queue.is_empty());
            self.in_tx = Some(pkt);
            return Offer::Transmitting(now + self.rate.tx_time(pkt.wire_bytes as u64));
        }
        self.enqueue(pkt)
    }

    /// Queue a packet behind the one serializing, or tail-drop it.
    #[inline(always)]
    fn enqueue(&mut self, pkt: Packet) -> Offer {
        let full = match self.limit {
            None => false,
            Some(QueueLimit::Packets(n)) => self.queue.len() as u64 >= n,
            Some(QueueLimit::Bytes(b)) => self.queue_bytes + pkt.wire_bytes as u64 > b,
        };
        if full {
            self.counters.dropped += 1;
            return Offer::Dropped { random: false };
        }
        self.queue_bytes += pkt.wire_bytes as u64;
        self.queue.push_back(pkt);
        Offer::Queued
    }

    /// The packet being serialized has finished at `now`: it enters the pipe.
    /// Returns (end of the next serialization if one starts, arrival time to schedule if
    /// the pipe was empty).
    pub fn tx_done(&mut self, now: SimTime) -> (Option<SimTime>, Option<SimTime>) {
        let Some(pkt) = self.in_tx.take() else {
            return self.tx_done_lazy(now);
        };
        self.counters.departed += 1;
        if pkt.kind == PacketKind::Data {
            self.counters.data_departed += 1;
        }
        let arm = if self.netem.is_some() {
            self.enter_pipe_netem(now, pkt)
        } else {
            self.enter_pipe(now, pkt)
        };
        if self.slow {
            return (self.next_slow(now, &pkt), arm);
        }
        let (next_tx, next_arm) = self.start_next(now);
        (next_tx, arm.or(next_arm))
    }

    /// The departure event of a lazy link at the end of a packet it sent without one
    /// (asked for by the packet queued behind it): count it, start the next.
    #[inline(never)]
    fn tx_done_lazy(&mut self, now: SimTime) -> (Option<SimTime>, Option<SimTime>) {
        let s = self.sending.take().expect("tx_done on an idle link");
        debug_assert_eq!(s.until, now);
        self.depart(s);
        let (next, arm) = self.start_next(now);
        debug_assert!(next.is_some() || self.sending.is_some());
        (next, arm)
    }

    /// Start the queue's head serializing at `now` on a plain link, if there is one.
    /// Returns the end of its serialization if it needs a departure event, and the
    /// arrival to schedule if it entered an empty pipe: on a lazy link the queue's last
    /// packet is sent without a departure event, and the packet ahead of it may have
    /// arrived already (a link without delay delivers it at the instant it leaves).
    #[inline(always)]
    fn start_next(&mut self, now: SimTime) -> (Option<SimTime>, Option<SimTime>) {
        let Some(next) = self.queue.pop_front() else {
            return (None, None);
        };
        self.queue_bytes -= next.wire_bytes as u64;
        let end = now + self.rate.tx_time(next.wire_bytes as u64);
        if self.lazy && self.queue.is_empty() {
            return (None, self.send_lazily(end, next));
        }
        self.in_tx = Some(next);
        (Some(end), None)
    }

    /// A packet enters a pipe with jitter or reordering: its own delay, its place in
    /// time order (after packets due at the same time). Returns the arrival event to
    /// schedule if it became the pipe's head.
    #[inline(never)]
    fn enter_pipe_netem(&mut self, now: SimTime, pkt: Packet) -> Option<SimTime> {
        let n = self.netem.as_mut().expect("netem present");
        let arrival = now + n.delay(self.delay);
        let at = self.pipe.partition_point(|(t, _)| *t <= arrival);
        self.pipe.insert(at, (arrival, pkt));
        if n.armed.is_some_and(|a| a <= arrival) {
            return None;
        }
        n.armed = Some(arrival);
        Some(arrival)
    }

    /// An arrival event at `now`: the pipe's head arrives at the far end. Returns it
    /// and the next arrival time to schedule, or `None` for an event superseded by an
    /// earlier one (only with jitter or reordering, where a later packet can overtake
    /// the head).
    pub fn arrive(&mut self, now: SimTime) -> Option<(Packet, Option<SimTime>)> {
        if let Some(n) = self.netem.as_mut() {
            if n.armed != Some(now) {
                return None;
            }
            let (_, pkt) = self.pipe.pop_front().expect("arrival on an empty pipe");
            n.armed = self.pipe.front().map(|(t, _)| *t);
            return Some((pkt, n.armed));
        }
        let (_, pkt) = self.pipe.pop_front().expect("arrival on an empty pipe");
        Some((pkt, self.pipe.front().map(|(t, _)| *t)))
    }

    /// Prefetch the pipe's head, which the next arrival reads (see `World::prefetch_next`).
    #[inline(always)]
    pub fn prefetch_arrival(&self) {
        if let Some(e) = self.pipe.front() {
            crate::prefetch::prefetch(e);
        }
    }

    /// Prefetch the queue's head, which the next departure starts serializing.
    #[inline(always)]
    pub fn prefetch_departure(&self) {
        if let Some(p) = self.queue.front() {
            crate::prefetch::prefetch(p);
        }
    }

    /// Packets the link holds in memory: queued, serializing and propagating.
    pub fn packets_held(&self) -> u64 {
        // A lazily sent packet is in the pipe already (`backlog_pkts` counts it too).
        self.backlog_pkts() - self.sending.is_some() as u64 + self.pipe.len() as u64
    }

    /// Packets queued or serializing (not those propagating).
    pub fn backlog_pkts(&self) -> u64 {
        let waiting = self
            .aqm
            .as_ref()
            .map_or(self.queue.len() as u64, |a| a.qdisc.len_pkts());
        waiting + self.in_tx.is_some() as u64 + self.sending.is_some() as u64
    }
    pub fn backlog_bytes(&self) -> u64 {
        self.waiting_bytes()
            + self.in_tx.map_or(0, |p| p.wire_bytes as u64)
            + self.sending.map_or(0, |s| s.bytes as u64)
    }
    /// Whether a packet of `bytes` offered now would be refused for want of room: the
    /// drop-tail limit, or the queue discipline's hard limit (not its early drops). For
    /// the handshake's SYN, which is not sent as a packet (world/handshake.rs).
    pub fn refuses(&self, bytes: u32) -> bool {
        if self.in_tx.is_none() && self.sending.is_none() && self.aqm.is_none() {
            return false; // an idle link takes it at once (`offer`)
        }
        let (pkts, held) = match &self.aqm {
            Some(a) => (a.qdisc.len_pkts(), a.qdisc.len_bytes()),
            None => (self.queue.len() as u64, self.queue_bytes),
        };
        crate::net::aqm::over_limit(self.limit, pkts, held, u64::from(bytes))
    }
    /// Bytes waiting behind the packet in transmission (in the qdisc or the FIFO).
    fn waiting_bytes(&self) -> u64 {
        self.aqm
            .as_ref()
            .map_or(self.queue_bytes, |a| a.qdisc.len_bytes())
    }

    /// When a header-only segment of `bytes` reaching this link at `arrival` would have
    /// left it, with the queue as it is at `now` (`now` <= `arrival`), for a link with a
    /// trace; None for a line-rate link (the handshake there is the line rate's
    /// serialization behind the backlog, world/mod.rs). On a trace the segment waits for a
    /// delivery opportunity as a real SYN or SYN-ACK does: behind the backlog's
    /// opportunities, or, if the backlog has left by `arrival`, for the first opportunity
    /// after it. A copy of the schedule is used; the link is not changed. The packet in
    /// transmission is counted from `now`, not from its own start (its opportunities are
    /// taken already, so this errs by at most the surplus of one opportunity).
    pub fn trace_departure(&self, now: SimTime, arrival: SimTime, bytes: u32) -> Option<SimTime> {
        let mut tr = self.extras.as_deref()?.trace.clone()?;
        let waiting = u32::try_from(self.waiting_bytes()).unwrap_or(u32::MAX);
        // With nothing waiting this is `now` (no bytes to serve).
        let drained = tr.service_end(now, waiting, false);
        Some(if drained <= arrival {
            tr.service_end(arrival, bytes, true)
        } else {
            tr.service_end(drained, bytes, false)
        })
    }

    /// A scheduled change (`[[events]]`): new rate, delay or random-loss probability,
    /// each only if given. Shared by the engine and the kernel backend's emulator.
    pub fn apply_event(&mut self, e: &LinkEvent) {
        if let Some(r) = e.rate_bps {
            self.rate = Rate(r);
        }
        if let Some(d) = e.delay_ns {
            self.delay = Dur(d);
        }
        if let Some(p) = e.loss {
            self.loss = p;
        }
    }

    /// The link's exact queue counters at the end of a run.
    pub fn report(&self) -> QueueReport {
        QueueReport {
            name: self.name.clone(),
            enqueued: self.counters.enqueued,
            departed: self.counters.departed,
            dropped: self.counters.dropped,
            random_loss: self.counters.random_loss,
            marked: self.counters.marked,
            backlog_pkts: self.backlog_pkts(),
            backlog_bytes: self.backlog_bytes(),
        }
    }

    /// Visit every packet still inside this link (queued, serializing or propagating).
    pub fn for_each_inside(&self, f: &mut dyn FnMut(&Packet)) {
        if let Some(a) = &self.aqm {
            a.qdisc.for_each(f);
        }
        self.queue
            .iter()
            .chain(self.in_tx.iter())
            .chain(self.pipe.iter().map(|(_, p)| p))
            .for_each(f);
    }
}

/// What a link may have beyond rate, delay, loss and drop-tail: a trace, a policer, a
/// capture. `Link` holds it boxed and takes a separate path when it is present.
#[derive(Debug, Default)]
pub struct LinkExtras {
    pub trace: Option<TraceServer>,
    pub policer: Option<Policer>,
    pub capture: Option<Capture>,
}

impl LinkExtras {
    /// Does a packet of `bytes` arriving at `now` pass the policer (if any)?
    pub fn admits(&mut self, now: SimTime, bytes: u32) -> bool {
        self.policer.as_mut().is_none_or(|p| p.conforms(now, bytes))
    }

    /// When a packet of `bytes` starting service at `now` has been sent: on the trace's
    /// schedule, or at the line rate without one (`fresh`: the link was idle).
    pub fn service_end(&mut self, now: SimTime, bytes: u32, fresh: bool, rate: Rate) -> SimTime {
        match &mut self.trace {
            Some(t) => t.service_end(now, bytes, fresh),
            None => now + rate.tx_time(u64::from(bytes)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RunRng;

    fn link(limit: Option<QueueLimit>, loss: f64) -> Link {
        Link::new(
            "l".into(),
            Rate(12_000_000),
            Dur(5_000),
            loss,
            limit,
            NextHop::Receiver,
            RunRng::new(1).stream("l"),
        )
    }
    fn pkt(seq: u64) -> Packet {
        Packet::data(0, seq, 1448, 52, false)
    }

    /// Departures without events, by hand: 1500-byte packets serialize in 1 ms at 12
    /// Mbit/s, the pipe takes 5 us. A at 0 (idle: on the wire at once, arriving at
    /// 1.005 ms), B at 0.5 ms (queued behind A: one departure event, at 1 ms, which
    /// sends B, the queue's last, without one: arrival 2.005 ms), C at 3 ms and D at
    /// exactly C's end, 4 ms (idle again each time). The departure event the old link
    /// would have had at 2 ms has not run before a sample at 2 ms, and has after.
    #[test]
    fn a_lazy_link_sends_what_nothing_queues_behind_without_a_departure_event() {
        const US: u64 = 1_000;
        let mut l = link(None, 0.0);
        l.set_lazy();
        assert_eq!(
            l.offer(SimTime(0), pkt(0)),
            Offer::Sent(Some(SimTime(1005 * US)))
        );
        assert_eq!(
            (l.backlog_pkts(), l.backlog_bytes(), l.packets_held()),
            (1, 1500, 1)
        );
        assert_eq!(
            l.offer(SimTime(500 * US), pkt(1)),
            Offer::QueuedBehind(SimTime(1000 * US))
        );
        assert_eq!((l.backlog_pkts(), l.packets_held()), (2, 2));
        assert_eq!(l.tx_done(SimTime(1000 * US)), (None, None));
        assert_eq!(
            (l.counters.departed, l.backlog_pkts(), l.packets_held()),
            (1, 1, 2)
        );
        let (a, next) = l.arrive(SimTime(1005 * US)).expect("A arrives");
        assert_eq!((a.seq, next), (0, Some(SimTime(2005 * US))));
        l.settle_before(SimTime(2000 * US));
        assert_eq!((l.counters.departed, l.backlog_pkts()), (1, 1));
        l.settle_before(SimTime(2000 * US + 1));
        assert_eq!(
            (l.counters.departed, l.backlog_pkts(), l.packets_held()),
            (2, 0, 1)
        );
        let (b, next) = l.arrive(SimTime(2005 * US)).expect("B arrives");
        assert_eq!((b.seq, next), (1, None));
        assert_eq!(
            l.offer(SimTime(3000 * US), pkt(2)),
            Offer::Sent(Some(SimTime(4005 * US)))
        );
        assert_eq!(l.offer(SimTime(4000 * US), pkt(3)), Offer::Sent(None));
        assert_eq!((l.counters.departed, l.counters.data_departed), (3, 3));
        let (c, next) = l.arrive(SimTime(4005 * US)).expect("C arrives");
        assert_eq!((c.seq, next), (2, Some(SimTime(5005 * US))));
        l.settle_before(SimTime(6000 * US));
        let r = l.report();
        assert_eq!(
            (r.enqueued, r.departed, r.dropped, r.backlog_pkts),
            (4, 4, 0, 0)
        );
    }

    /// A link with a queue discipline keeps its departure events (`set_lazy` is a no-op).
    #[test]
    fn a_link_with_a_qdisc_is_never_lazy() {
        use crate::net::aqm::AqmConfig;
        let mut l = link(None, 0.0);
        let step = AqmConfig::Step {
            k_pkts: 5,
            ecn: false,
        };
        l.set_qdisc(step.build(None, l.rate, RunRng::new(1).stream("q")));
        l.set_lazy();
        assert_eq!(
            l.offer(SimTime(0), pkt(0)),
            Offer::Transmitting(SimTime(1_000_000))
        );
    }

    #[test]
    fn a_handshake_segment_leaves_a_trace_link_at_an_opportunity() {
        use crate::net::trace::{TraceConfig, TraceServer};
        const MS: u64 = 1_000_000;
        let mut l = link(None, 0.0);
        assert_eq!(l.trace_departure(SimTime(0), SimTime(MS), 52), None);
        // Opportunities at 2, 5, 9 ms, then 11, 14, 18 ms (period 9 ms).
        l.extras_mut().trace = Some(TraceServer::new(&TraceConfig {
            name: String::new(),
            opportunities_ms: vec![2, 5, 9],
        }));
        // Idle: the first opportunity after the arrival (strictly after, as Mahimahi).
        assert_eq!(
            l.trace_departure(SimTime(0), SimTime(MS / 2), 52),
            Some(SimTime(2 * MS))
        );
        assert_eq!(
            l.trace_departure(SimTime(0), SimTime(5 * MS), 52),
            Some(SimTime(9 * MS))
        );
        // Three full packets offered at 0: the first takes the 2 ms opportunity, the two
        // waiting take 5 and 9 ms; a SYN arriving at 1 ms waits behind them for 11 ms.
        assert_eq!(
            l.offer(SimTime(0), pkt(0)),
            Offer::Transmitting(SimTime(2 * MS))
        );
        assert_eq!(l.offer(SimTime(0), pkt(1)), Offer::Queued);
        assert_eq!(l.offer(SimTime(0), pkt(2)), Offer::Queued);
        assert_eq!(
            l.trace_departure(SimTime(0), SimTime(MS), 52),
            Some(SimTime(11 * MS))
        );
        // Arriving at 12 ms, after the backlog has left at 9 ms: 11 ms has passed, 14 ms.
        assert_eq!(
            l.trace_departure(SimTime(0), SimTime(12 * MS), 52),
            Some(SimTime(14 * MS))
        );
        // The link itself is unchanged: it still holds the three packets.
        assert_eq!(l.backlog_bytes(), 4500);
    }

    #[test]
    fn drop_tail_in_packets_keeps_limit_waiting_plus_one_serializing() {
        let mut l = link(Some(QueueLimit::Packets(2)), 0.0);
        // 1500 B at 12 Mbit/s = 1 ms.
        assert_eq!(
            l.offer(SimTime(0), pkt(0)),
            Offer::Transmitting(SimTime(1_000_000))
        );
        assert_eq!(l.offer(SimTime(0), pkt(1)), Offer::Queued);
        assert_eq!(l.offer(SimTime(0), pkt(2)), Offer::Queued);
        assert_eq!(
            l.offer(SimTime(0), pkt(3)),
            Offer::Dropped { random: false }
        );
        assert_eq!(l.backlog_pkts(), 3);
        let c = l.counters;
        assert_eq!(c.enqueued, c.departed + c.dropped + l.backlog_pkts());
    }

    #[test]
    fn drop_tail_in_bytes_counts_wire_bytes() {
        // 3000 bytes of waiting room hold exactly two 1500-byte packets.
        let mut l = link(Some(QueueLimit::Bytes(3000)), 0.0);
        l.offer(SimTime(0), pkt(0));
        assert_eq!(l.offer(SimTime(0), pkt(1)), Offer::Queued);
        assert_eq!(l.offer(SimTime(0), pkt(2)), Offer::Queued);
        assert_eq!(
            l.offer(SimTime(0), pkt(3)),
            Offer::Dropped { random: false }
        );
        assert_eq!(l.backlog_bytes(), 4500);
    }

    #[test]
    fn fifo_serialization_then_propagation() {
        let mut l = link(None, 0.0);
        l.offer(SimTime(0), pkt(0));
        l.offer(SimTime(0), pkt(1));
        let (next, arr) = l.tx_done(SimTime(1_000_000));
        assert_eq!(next, Some(SimTime(2_000_000)));
        assert_eq!(arr, Some(SimTime(1_005_000))); // + 5 us propagation
        let (_, arr2) = l.tx_done(SimTime(2_000_000));
        assert_eq!(arr2, None); // pipe not empty: its head's event is already pending
        let (p, next_arr) = l.arrive(SimTime(1_005_000)).unwrap();
        assert_eq!((p.seq, next_arr), (0, Some(SimTime(2_005_000))));
        assert_eq!(l.counters.departed, 2);
    }

    #[test]
    fn shorter_delay_never_reorders() {
        let mut l = link(None, 0.0);
        l.offer(SimTime(0), pkt(0));
        l.tx_done(SimTime(1_000_000)); // arrives 1_005_000
        l.delay = Dur(0);
        l.offer(SimTime(1_000_000), pkt(1));
        l.tx_done(SimTime(1_000_001));
        l.arrive(SimTime(1_005_000));
        assert_eq!(l.pipe.front().unwrap().0, SimTime(1_005_000));
    }

    #[test]
    fn a_reordered_packet_overtakes_and_the_superseded_event_is_ignored() {
        use crate::net::netem::{Netem, NetemConfig};
        // reorder 100% gap 2: packet 0 is delayed 5 ms, packet 1 skips the delay.
        let mut l = link(None, 0.0);
        l.delay = Dur::from_ms(5);
        l.set_netem(Netem::new(
            &NetemConfig {
                reorder: 1.0,
                reorder_gap: 2,
                ..Default::default()
            },
            RunRng::new(1).stream("n"),
        ));
        l.offer(SimTime(0), pkt(0));
        l.offer(SimTime(0), pkt(1));
        let (_, arr0) = l.tx_done(SimTime(1_000_000));
        assert_eq!(arr0, Some(SimTime(6_000_000)));
        let (_, arr1) = l.tx_done(SimTime(2_000_000));
        // Packet 1 arrives at once, before packet 0: a new, earlier event.
        assert_eq!(arr1, Some(SimTime(2_000_000)));
        let (p, next) = l.arrive(SimTime(2_000_000)).unwrap();
        assert_eq!((p.seq, next), (1, Some(SimTime(6_000_000))));
        // Two events are now due at 6 ms (the first one, and the one just asked for):
        // the first delivers packet 0, the second finds nothing armed.
        let (p, next) = l.arrive(SimTime(6_000_000)).unwrap();
        assert_eq!((p.seq, next), (0, None));
        assert!(l.arrive(SimTime(6_000_000)).is_none());
        assert_eq!(l.netem.as_ref().unwrap().reordered, 1);
    }

    #[test]
    fn jitter_wider_than_the_spacing_reorders_in_time_order() {
        use crate::net::netem::{Netem, NetemConfig};
        // Packets 1 ms apart, delay 5 ms +- 4 ms: arrivals leave in time order, and some
        // leave out of send order.
        let mut l = link(None, 0.0);
        l.delay = Dur::from_ms(5);
        l.set_netem(Netem::new(
            &NetemConfig {
                jitter_ns: 4_000_000,
                ..Default::default()
            },
            RunRng::new(1).stream("n"),
        ));
        // The engine's event queue, in miniature: (time, order) of arrival events.
        let mut events = std::collections::BinaryHeap::new();
        for i in 0..200u64 {
            l.offer(SimTime(i * 1_000_000), pkt(i));
            if let (_, Some(t)) = l.tx_done(SimTime(i * 1_000_000 + 1_000_000)) {
                events.push(std::cmp::Reverse(t));
            }
        }
        let mut got = Vec::new();
        while let Some(std::cmp::Reverse(t)) = events.pop() {
            if let Some((p, next)) = l.arrive(t) {
                got.push((t, p.seq));
                if let Some(n) = next {
                    events.push(std::cmp::Reverse(n));
                }
            }
        }
        // Every packet once, at non-decreasing times, each within [4, 9) ms of its
        // departure at (seq + 1) ms; and with 1 ms spacing and +-4 ms, out of send order.
        assert_eq!(got.len(), 200);
        assert!(got.windows(2).all(|w| w[0].0 <= w[1].0));
        for &(t, seq) in &got {
            let sent = (seq + 1) * 1_000_000;
            assert!(
                t.0 >= sent + 1_000_000 && t.0 < sent + 9_000_000,
                "{seq} {t:?}"
            );
        }
        let mut seqs: Vec<u64> = got.iter().map(|g| g.1).collect();
        assert!(seqs.windows(2).any(|w| w[0] > w[1]));
        seqs.sort();
        assert_eq!(seqs, (0..200).collect::<Vec<_>>());
    }

    #[test]
    fn random_loss_counts_as_drop_and_random() {
        let mut l = link(None, 0.5);
        for i in 0..1000 {
            l.offer(SimTime(0), pkt(i));
        }
        let c = l.counters;
        assert_eq!(c.dropped, c.random_loss);
        assert!(
            c.random_loss > 400 && c.random_loss < 600,
            "{}",
            c.random_loss
        );
        assert_eq!(c.enqueued, c.departed + c.dropped + l.backlog_pkts());
    }
}
