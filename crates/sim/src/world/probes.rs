//! The world's side of latency probes (probe.rs; built with the network,
//! net/network.rs): their send events, forwarding a probe and its echo, and their conservation check. Kept apart from
//! world/mod.rs as sources are (world/sources.rs), so TCP's paths stay as they were; a
//! probe's packets are told apart by their kind (`PacketKind::Probe` on the way out,
//! `ProbeEcho` on the way back), their `flow` being the probe source's index.

use super::{Event, World};
use crate::net::link::{Link, NextHop};
use crate::net::{Packet, PacketKind};
use crate::probe::{Probe, ProbeReport};

impl World {
    #[cold]
    #[inline(never)]
    pub(super) fn probe_send(&mut self, i: u32) {
        let p = &mut self.probes[i as usize];
        let (k, next) = p.send();
        let l = p.sender_access;
        // Payload = wire bytes, header 0: the packet's size is all a link looks at.
        let mut pkt = Packet::data(i, k, p.packet_bytes, 0, false);
        pkt.kind = PacketKind::Probe;
        if let Some(t) = next {
            self.queue.push(t, Event::ProbeSend(i));
        }
        self.offer(l, pkt);
    }

    /// A probe or its echo reached the far end of a link.
    #[cold]
    #[inline(never)]
    pub(super) fn forward_probe(&mut self, mut pkt: Packet, hop: NextHop) {
        let p = &mut self.probes[pkt.flow as usize];
        match hop {
            NextHop::Link(j) => self.offer(j, pkt),
            NextHop::FlowReceiverAccess => {
                let l = p.receiver_access;
                self.offer(l, pkt)
            }
            NextHop::FlowSenderAccess => {
                let l = p.sender_access_rev;
                self.offer(l, pkt)
            }
            NextHop::Receiver => {
                // The echoing host answers at once with a packet of the same size.
                p.report.reached_packets += 1;
                pkt.kind = PacketKind::ProbeEcho;
                let l = p.receiver_access_rev;
                self.offer(l, pkt)
            }
            NextHop::Sender => p.echoed(pkt.seq, self.now),
            NextHop::Route => unreachable!("probes run on the dumbbell only"),
        }
    }
}

/// The probes' reports, each checked: sent = echoed + dropped + in flight.
pub(super) fn finish(
    probes: &[Probe],
    links: &[Link],
    problems: &mut Vec<String>,
) -> Vec<ProbeReport> {
    let mut in_net = vec![0u64; probes.len()];
    if !probes.is_empty() {
        for l in links {
            l.for_each_inside(&mut |p| {
                if p.kind.is_probe() {
                    in_net[p.flow as usize] += 1;
                }
            });
        }
    }
    probes
        .iter()
        .zip(in_net)
        .enumerate()
        .map(|(i, (p, inside))| {
            let mut r = p.report.clone();
            r.in_flight_packets_at_end = inside;
            if r.sent_packets != r.echoed_packets + r.dropped_packets + inside {
                problems.push(format!(
                    "probe {i}: sent {} != echoed {} + dropped {} + in flight {}",
                    r.sent_packets, r.echoed_packets, r.dropped_packets, inside
                ));
            }
            r
        })
        .collect()
}
