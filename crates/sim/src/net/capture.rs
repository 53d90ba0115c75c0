//! Packet capture on named links, for pcap output: every packet that finishes crossing a
//! captured link's serializer (the view of `tcpdump` on the sending interface, after the
//! queue: dropped packets are not seen), with the time it left.
//!
//! The engine only records packets; `python/tcplab/pcap.py` turns them into Ethernet /
//! IPv4 / TCP frames. At most [`MAX_CAPTURED`] packets are kept over all captured links;
//! beyond that the capture stops and counts what it missed, so a long run cannot exhaust
//! memory (about 100 bytes per record).

use crate::net::link::Link;
use crate::net::packet::{Packet, PacketKind};
use crate::record::{Column, Table};
use crate::time::SimTime;

/// Records kept over all captured links of a run.
pub const MAX_CAPTURED: usize = 20_000_000;

pub struct Capture {
    /// Per link: its slot in `records`, or `usize::MAX` when not captured.
    slot: Vec<usize>,
    names: Vec<String>,
    records: Vec<Vec<(u64, Packet)>>,
    kept: usize,
    /// Packets not recorded because the limit was reached.
    pub missed: u64,
}

impl Capture {
    /// Capture the links named in `names` (validated: each names a link).
    pub fn new(names: &[String], links: &[Link]) -> Capture {
        let mut slot = vec![usize::MAX; links.len()];
        for (k, name) in names.iter().enumerate() {
            if let Some(i) = links.iter().position(|l| &l.name == name) {
                slot[i] = k;
            }
        }
        Capture { slot, names: names.to_vec(), records: vec![Vec::new(); names.len()], kept: 0, missed: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Link `link` has just sent `pkt` at `now`.
    #[inline]
    pub fn record(&mut self, link: usize, now: SimTime, pkt: &Packet) {
        let k = self.slot[link];
        if k == usize::MAX {
            return;
        }
        if self.kept >= MAX_CAPTURED {
            self.missed += 1;
            return;
        }
        self.kept += 1;
        self.records[k].push((now.ns(), *pkt));
    }

    /// One table per captured link: time_ns, flow, is_ack, seq (data: segment number;
    /// ACK: cumulative ACK in segments), payload, wire_bytes, is_retrans, n_sacks and
    /// sack{0,1,2}_{start,end} (segments).
    pub fn finish(self) -> Vec<(String, Table)> {
        self.names
            .into_iter()
            .zip(self.records)
            .map(|(name, recs)| {
                let col = |f: &dyn Fn(&Packet) -> u64| Column::U64(recs.iter().map(|(_, p)| f(p)).collect());
                let mut cols = vec![
                    ("time_ns".to_string(), Column::U64(recs.iter().map(|(t, _)| *t).collect())),
                    ("flow".to_string(), col(&|p| u64::from(p.flow))),
                    ("is_ack".to_string(), col(&|p| u64::from(p.kind == PacketKind::Ack))),
                    ("seq".to_string(), col(&|p| p.seq)),
                    ("payload".to_string(), col(&|p| u64::from(p.payload))),
                    ("wire_bytes".to_string(), col(&|p| u64::from(p.wire_bytes))),
                    ("is_retrans".to_string(), col(&|p| u64::from(p.is_retrans))),
                    ("n_sacks".to_string(), col(&|p| u64::from(p.n_sacks))),
                ];
                for b in 0..crate::net::packet::MAX_SACK_BLOCKS {
                    cols.push((format!("sack{b}_start"), col(&|p| p.sacks[b].start)));
                    cols.push((format!("sack{b}_end"), col(&|p| p.sacks[b].end)));
                }
                (name, Table { columns: cols })
            })
            .collect()
    }
}
