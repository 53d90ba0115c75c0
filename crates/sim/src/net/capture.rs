//! Packet capture on named links, for pcap output: every packet that finishes crossing a
//! captured link's serializer (the view of `tcpdump` on the sending interface, after the
//! queue: dropped packets are not seen), with the time it left.
//!
//! A captured link holds a [`Capture`] in its extras (net/shaping.rs). The engine only records packets; `python/tcplab/storage/pcap.py` turns them
//! into Ethernet / IPv4 / TCP frames. At most [`MAX_CAPTURED`] packets are kept per link;
//! beyond that the capture stops and counts what it missed, so a long run cannot exhaust
//! memory (about 100 bytes per record).

use crate::net::packet::{Packet, PacketKind, MAX_SACK_BLOCKS};
use crate::record::{Column, Table};
use crate::time::SimTime;

/// Records kept per captured link.
pub const MAX_CAPTURED: usize = 20_000_000;

#[derive(Debug, Default)]
pub struct Capture {
    records: Vec<(u64, Packet)>,
    /// Departures not recorded because the limit was reached.
    pub missed: u64,
}

impl Capture {
    /// The link has just sent `pkt` at `now`.
    #[inline(never)] // out of the uncaptured link's hot path
    pub fn record(&mut self, now: SimTime, pkt: &Packet) {
        if self.records.len() >= MAX_CAPTURED {
            self.missed += 1;
        } else {
            self.records.push((now.ns(), *pkt));
        }
    }

    /// time_ns, flow, is_ack, seq (data: segment number; ACK: cumulative ACK in
    /// segments), payload, wire_bytes, is_retrans, n_sacks and sack{0,1,2}_{start,end}
    /// (segments), is_datagram, wnd (an ACK's advertised receive window in bytes beyond
    /// the byte it acknowledges, `Packet::wnd`; `NO_WINDOW` for no limit and on data).
    pub fn table(&self) -> Table {
        let recs = &self.records;
        let col =
            |f: &dyn Fn(&Packet) -> u64| Column::U64(recs.iter().map(|(_, p)| f(p)).collect());
        let mut cols = vec![
            (
                "time_ns".to_string(),
                Column::U64(recs.iter().map(|(t, _)| *t).collect()),
            ),
            ("flow".to_string(), col(&|p| u64::from(p.flow))),
            (
                "is_ack".to_string(),
                col(&|p| u64::from(p.kind == PacketKind::Ack)),
            ),
            ("seq".to_string(), col(&|p| p.seq)),
            ("payload".to_string(), col(&|p| u64::from(p.payload))),
            ("wire_bytes".to_string(), col(&|p| u64::from(p.wire_bytes))),
            ("is_retrans".to_string(), col(&|p| u64::from(p.is_retrans))),
            ("n_sacks".to_string(), col(&|p| u64::from(p.n_sacks))),
            // A constant-rate source's packet (source.rs): `flow` is the source's index.
            (
                "is_datagram".to_string(),
                col(&|p| u64::from(p.kind == PacketKind::Datagram)),
            ),
        ];
        for b in 0..MAX_SACK_BLOCKS {
            cols.push((format!("sack{b}_start"), col(&|p| p.sack(b).start)));
            cols.push((format!("sack{b}_end"), col(&|p| p.sack(b).end)));
        }
        cols.push(("wnd".to_string(), col(&|p| u64::from(p.wnd))));
        Table { columns: cols }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::NO_WINDOW;

    #[test]
    fn records_up_to_the_limit_then_counts_misses() {
        let mut c = Capture::default();
        let p = Packet::data(3, 7, 1448, 52, true);
        c.record(SimTime(5), &p);
        let t = c.table();
        assert_eq!(t.get("time_ns").unwrap().as_u64().unwrap(), &[5]);
        assert_eq!(t.get("flow").unwrap().as_u64().unwrap(), &[3]);
        assert_eq!(t.get("seq").unwrap().as_u64().unwrap(), &[7]);
        assert_eq!(t.get("is_retrans").unwrap().as_u64().unwrap(), &[1]);
        assert_eq!(
            t.get("wnd").unwrap().as_u64().unwrap(),
            &[u64::from(NO_WINDOW)]
        );
        c.records.resize(MAX_CAPTURED, (0, p));
        c.record(SimTime(6), &p);
        assert_eq!((c.records.len(), c.missed), (MAX_CAPTURED, 1));
    }
}
