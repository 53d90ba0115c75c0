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
//!   link does not reorder.
//!
//! - Optional (net/shaping.rs): a token-bucket policer at the entrance (policer.rs), after
//!   the random loss, dropping what exceeds it; a Mahimahi trace (trace.rs) in place of
//!   the line rate.
//!
//! Counters (see [`QueueCounters`]): `enqueued` counts every packet offered,
//! `dropped` every packet lost here (tail drops plus random losses, the latter also
//! counted in `random_loss`), `departed` every packet that finished serializing, and
//! `backlog` what is queued or serializing; enqueued = departed + dropped + backlog.

use std::collections::VecDeque;

use crate::config::QueueLimit;
use crate::net::packet::{Packet, PacketKind};
use crate::net::shaping::LinkExtras;
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
}

/// What happened to an offered packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Lost: random loss (`true`) or tail drop (`false`).
    Dropped { random: bool },
    Queued,
    /// The link was idle: serialization started and ends at this time (schedule TxDone).
    Transmitting(SimTime),
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
    /// A trace, a policer or a capture (net/shaping.rs). Boxed and tested once per offer
    /// and once per departure, so that a plain link runs the code it ran before.
    pub extras: Option<Box<LinkExtras>>,
}

impl Link {
    pub fn new(name: String, rate: Rate, delay: Dur, loss: f64, limit: Option<QueueLimit>, next: NextHop, rng: Rng) -> Link {
        Link {
            name,
            rate,
            delay,
            loss,
            limit,
            next,
            queue: VecDeque::with_capacity(64),
            queue_bytes: 0,
            in_tx: None,
            pipe: VecDeque::with_capacity(64),
            last_arrival: SimTime::ZERO,
            rng,
            counters: QueueCounters::default(),
            extras: None,
        }
    }

    /// Offer a packet at `now`.
    pub fn offer(&mut self, now: SimTime, pkt: Packet) -> Offer {
        self.counters.enqueued += 1;
        if self.rng.bernoulli(self.loss) {
            self.counters.dropped += 1;
            self.counters.random_loss += 1;
            return Offer::Dropped { random: true };
        }
        if self.extras.is_some() {
            return self.offer_shaped(now, pkt);
        }
        if self.in_tx.is_none() {
            debug_assert!(self.queue.is_empty());
            self.in_tx = Some(pkt);
            return Offer::Transmitting(now + self.rate.tx_time(pkt.wire_bytes as u64));
        }
        self.enqueue(pkt)
    }

    /// `offer` on a link with extras: the policer first, then the trace's schedule.
    #[inline(never)]
    fn offer_shaped(&mut self, now: SimTime, pkt: Packet) -> Offer {
        let x = self.extras.as_deref_mut().expect("a shaped link");
        if !x.admits(now, pkt.wire_bytes) {
            self.counters.dropped += 1;
            return Offer::Dropped { random: false };
        }
        if self.in_tx.is_none() {
            self.in_tx = Some(pkt);
            return Offer::Transmitting(x.service_end(now, pkt.wire_bytes, true, self.rate));
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
        let pkt = self.in_tx.take().expect("tx_done on an idle link");
        self.counters.departed += 1;
        if pkt.kind == PacketKind::Data {
            self.counters.data_departed += 1;
        }
        let arrival = (now + self.delay).max(self.last_arrival);
        self.last_arrival = arrival;
        let was_empty = self.pipe.is_empty();
        self.pipe.push_back((arrival, pkt));
        let next_tx = if self.extras.is_some() {
            self.next_shaped(now, &pkt)
        } else {
            self.queue.pop_front().map(|next| {
                self.queue_bytes -= next.wire_bytes as u64;
                self.in_tx = Some(next);
                now + self.rate.tx_time(next.wire_bytes as u64)
            })
        };
        (next_tx, if was_empty { Some(arrival) } else { None })
    }

    /// `tx_done` on a link with extras: capture the departure, start the next packet on
    /// the trace's schedule (using the surplus of the opportunity that sent `sent`).
    #[inline(never)]
    fn next_shaped(&mut self, now: SimTime, sent: &Packet) -> Option<SimTime> {
        let x = self.extras.as_deref_mut().expect("a shaped link");
        if let Some(c) = &mut x.capture {
            c.record(now, sent);
        }
        let next = self.queue.pop_front()?;
        self.queue_bytes -= next.wire_bytes as u64;
        self.in_tx = Some(next);
        Some(x.service_end(now, next.wire_bytes, false, self.rate))
    }

    /// The pipe's head arrives at the far end. Returns it and the next arrival time.
    pub fn arrive(&mut self) -> (Packet, Option<SimTime>) {
        let (_, pkt) = self.pipe.pop_front().expect("arrival on an empty pipe");
        (pkt, self.pipe.front().map(|(t, _)| *t))
    }

    /// Packets queued or serializing (not those propagating).
    pub fn backlog_pkts(&self) -> u64 {
        self.queue.len() as u64 + self.in_tx.is_some() as u64
    }
    pub fn backlog_bytes(&self) -> u64 {
        self.queue_bytes + self.in_tx.map_or(0, |p| p.wire_bytes as u64)
    }

    /// Every packet still inside this link (queued, serializing or propagating).
    pub fn packets_inside(&self) -> impl Iterator<Item = &Packet> {
        self.queue.iter().chain(self.in_tx.iter()).chain(self.pipe.iter().map(|(_, p)| p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RunRng;

    fn link(limit: Option<QueueLimit>, loss: f64) -> Link {
        Link::new("l".into(), Rate(12_000_000), Dur(5_000), loss, limit, NextHop::Receiver, RunRng::new(1).stream("l"))
    }
    fn pkt(seq: u64) -> Packet {
        Packet::data(0, seq, 1448, 52, false)
    }

    #[test]
    fn drop_tail_in_packets_keeps_limit_waiting_plus_one_serializing() {
        let mut l = link(Some(QueueLimit::Packets(2)), 0.0);
        // 1500 B at 12 Mbit/s = 1 ms.
        assert_eq!(l.offer(SimTime(0), pkt(0)), Offer::Transmitting(SimTime(1_000_000)));
        assert_eq!(l.offer(SimTime(0), pkt(1)), Offer::Queued);
        assert_eq!(l.offer(SimTime(0), pkt(2)), Offer::Queued);
        assert_eq!(l.offer(SimTime(0), pkt(3)), Offer::Dropped { random: false });
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
        assert_eq!(l.offer(SimTime(0), pkt(3)), Offer::Dropped { random: false });
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
        let (p, next_arr) = l.arrive();
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
        l.arrive();
        assert_eq!(l.pipe.front().unwrap().0, SimTime(1_005_000));
    }

    #[test]
    fn random_loss_counts_as_drop_and_random() {
        let mut l = link(None, 0.5);
        for i in 0..1000 {
            l.offer(SimTime(0), pkt(i));
        }
        let c = l.counters;
        assert_eq!(c.dropped, c.random_loss);
        assert!(c.random_loss > 400 && c.random_loss < 600, "{}", c.random_loss);
        assert_eq!(c.enqueued, c.departed + c.dropped + l.backlog_pkts());
    }
}
