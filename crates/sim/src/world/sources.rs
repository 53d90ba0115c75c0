//! The world's side of constant-rate sources (source.rs; built with the network,
//! net/network.rs): their send events, delivering their packets, and their conservation check. Kept apart from
//! world/mod.rs so that TCP's paths stay as they were; a source's packet is told apart by
//! its kind (`PacketKind::Datagram`), its `flow` being the source's index.

use super::{Event, World};
use crate::net::link::{Link, NextHop};
use crate::net::{Packet, PacketKind};
use crate::source::{Source, SourceCounters};

impl World {
    #[cold]
    #[inline(never)]
    pub(super) fn source_send(&mut self, i: u32) {
        let now = self.now;
        let src = &mut self.sources[i as usize];
        let (bytes, next) = src.send(now);
        let l = src.sender_access;
        // Payload = wire bytes, header 0: the packet's size is all a link looks at.
        let mut pkt = Packet::data(i, src.counters.sent_packets - 1, bytes, 0, false);
        pkt.kind = PacketKind::Datagram;
        if let Some(t) = next {
            self.queue.push(t, Event::SourceSend(i));
        }
        self.offer(l, pkt);
    }

    /// A source's packet reached the far end of a link.
    #[cold]
    #[inline(never)]
    pub(super) fn forward_datagram(&mut self, pkt: Packet, hop: NextHop) {
        let src = &mut self.sources[pkt.flow as usize];
        match hop {
            NextHop::Link(j) => self.offer(j, pkt),
            NextHop::FlowReceiverAccess => {
                let l = src.receiver_access;
                self.offer(l, pkt)
            }
            NextHop::Receiver => {
                src.counters.received_packets += 1;
                src.counters.received_bytes += pkt.wire_bytes as u64;
            }
            other => unreachable!(
                "a source's packet only travels forward on the dumbbell, not to {other:?}"
            ),
        }
    }
}

/// The sources' counters, each checked: sent = received + dropped + in flight.
pub(super) fn finish(
    sources: &[Source],
    links: &[Link],
    problems: &mut Vec<String>,
) -> Vec<SourceCounters> {
    let mut in_net = vec![0u64; sources.len()];
    if !sources.is_empty() {
        for l in links {
            l.for_each_inside(&mut |p| {
                if p.kind == PacketKind::Datagram {
                    in_net[p.flow as usize] += 1;
                }
            });
        }
    }
    sources
        .iter()
        .zip(in_net)
        .enumerate()
        .map(|(i, (s, inside))| {
            let mut c = s.counters.clone();
            c.in_flight_packets_at_end = inside;
            if c.sent_packets != c.received_packets + c.dropped_packets + inside {
                problems.push(format!(
                    "source {i}: sent {} != received {} + dropped {} + in flight {}",
                    c.sent_packets, c.received_packets, c.dropped_packets, inside
                ));
            }
            c
        })
        .collect()
}
