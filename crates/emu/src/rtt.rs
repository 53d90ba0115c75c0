//! The latest RTT sample of a flow, taken on the wire (the simulator's `rtt_ms`, which
//! `TCP_INFO` does not export): what the sender's `ca_rtt_us` would be at each ACK.
//!
//! Model (follows `tcp_clean_rtx_queue`, `tcp_sacktag_one` and `tcp_ack_update_rtt`,
//! net/ipv4/tcp_input.c): every data segment is remembered with the time it was read
//! from the sender's device, whether it was sent more than once and whether it was
//! SACKed. When an ACK reaches the sender (at its model delivery time):
//! - segments it newly SACKs and that were never retransmitted give the sample, from the
//!   one with the highest sequence (`last_sackt`);
//! - else, if it advances the cumulative ACK over no retransmitted segment, the newest
//!   segment it acknowledges that was not SACKed before gives it (`last_ackt`; with a
//!   retransmitted one among them, `FLAG_RETRANS_DATA_ACKED`, none: Karn's rule);
//! - else, if it advances the cumulative ACK and echoes a timestamp, the time since that
//!   TSval was first sent, in whole milliseconds and at least 1 (`tcp_rtt_tsopt_us` with
//!   the millisecond TCP timestamp clock).
//!
//! Deviations: the sample ends when the ACK leaves the emulated network, not when the
//! sender's stack processes it, and starts when the segment reached the sender's device,
//! not when `tcp_transmit_skb` stamped it (the host's own delays are outside); a segment
//! counts as SACKed when a block covers its end; a timestamp sample is measured from the
//! first segment read with that TSval, where the kernel subtracts its millisecond clock.

use std::collections::VecDeque;

use tcplab_sim::time::SimTime;

/// `a` is after `b` in sequence (or timestamp) space, modulo 2^32 (the kernel's `after()`).
pub fn after(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

#[derive(Clone, Copy, Debug)]
struct Seg {
    end: u32,
    sent: SimTime,
    retrans: bool,
    sacked: bool,
}

/// What the ACK said that matters here.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckInfo<'a> {
    pub ack: u32,
    /// SACK blocks `[left, right)`.
    pub sacks: &'a [(u32, u32)],
    /// The echoed timestamp (TSecr), 0 or absent if none.
    pub tsecr: Option<u32>,
}

/// One flow's segments in flight, TSvals sent, and latest sample.
#[derive(Default)]
pub struct RttTrack {
    segs: VecDeque<Seg>,
    snd_nxt: Option<u32>,
    /// (TSval, when first read), in sending order; pruned to the last `STAMPS_KEPT_NS`.
    stamps: VecDeque<(u32, SimTime)>,
    pub latest_ns: Option<u64>,
}

const STAMPS_KEPT_NS: u64 = 10_000_000_000;

impl RttTrack {
    /// A data segment `[seq, end)` was read from the sender's device at `t`.
    pub fn sent(&mut self, seq: u32, end: u32, tsval: Option<u32>, t: SimTime) {
        if let Some(ts) = tsval {
            if self.stamps.back().is_none_or(|&(last, _)| after(ts, last)) {
                self.stamps.push_back((ts, t));
            }
            while self
                .stamps
                .front()
                .is_some_and(|&(_, s)| s.0 + STAMPS_KEPT_NS < t.0)
            {
                self.stamps.pop_front();
            }
        }
        match self.snd_nxt {
            Some(nxt) if !after(end, nxt) => {
                for s in self.segs.iter_mut() {
                    if after(s.end, seq) && !after(s.end, end) {
                        s.retrans = true;
                    }
                }
            }
            _ => {
                self.segs.push_back(Seg {
                    end,
                    sent: t,
                    retrans: false,
                    sacked: false,
                });
                self.snd_nxt = Some(end);
            }
        }
    }

    /// An ACK reached the sender at `t`: update the latest sample if it gives one.
    pub fn acked(&mut self, a: AckInfo, t: SimTime) {
        let (mut ackt, mut retrans, mut advanced) = (None, false, false);
        while let Some(s) = self.segs.front() {
            if after(s.end, a.ack) {
                break;
            }
            advanced = true;
            if s.retrans {
                retrans = true;
            } else if !s.sacked {
                ackt = Some(s.sent);
            }
            self.segs.pop_front();
        }
        let mut sackt: Option<(u32, SimTime)> = None;
        for &(left, right) in a.sacks {
            // Segments are in sequence order: the ones whose end lies in (left, right].
            let from = self.segs.partition_point(|s| !after(s.end, left));
            for s in self.segs.iter_mut().skip(from) {
                if after(s.end, right) {
                    break;
                }
                if !s.sacked {
                    s.sacked = true;
                    if !s.retrans && sackt.is_none_or(|(e, _)| after(s.end, e)) {
                        sackt = Some((s.end, s.sent));
                    }
                }
            }
        }
        let sample = match (sackt, ackt, retrans) {
            (Some((_, sent)), _, _) => Some(t.0 - sent.0),
            (None, Some(sent), false) => Some(t.0 - sent.0),
            _ if advanced => a
                .tsecr
                .filter(|&e| e != 0)
                .and_then(|e| self.ts_sample(e, t)),
            _ => None,
        };
        if sample.is_some() {
            self.latest_ns = sample;
        }
    }

    fn ts_sample(&self, tsecr: u32, t: SimTime) -> Option<u64> {
        let i = self.stamps.partition_point(|&(ts, _)| after(tsecr, ts));
        let &(ts, sent) = self.stamps.get(i)?;
        (ts == tsecr).then(|| ((t.0 - sent.0) / 1_000_000).max(1) * 1_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    /// Four segments of 1000 bytes from sequence 0, sent at 0, 1, 2, 3 ms (TSvals 100-103).
    fn four() -> RttTrack {
        let mut r = RttTrack::default();
        for k in 0..4u32 {
            r.sent(k * 1000, (k + 1) * 1000, Some(100 + k), ms(u64::from(k)));
        }
        r
    }

    #[test]
    fn a_cumulative_ack_samples_its_newest_segment() {
        let mut r = four();
        r.acked(
            AckInfo {
                ack: 2000,
                ..Default::default()
            },
            ms(41),
        );
        assert_eq!(r.latest_ns, Some(40_000_000)); // segment 2 (sent at 1 ms)
    }

    #[test]
    fn a_sack_samples_the_highest_newly_sacked_segment() {
        // Segment 1 lost: the ACK of 1000 SACKs [2000, 4000): segment 4 (sent at 3 ms).
        let mut r = four();
        let sacks = [(2000, 4000)];
        r.acked(
            AckInfo {
                ack: 1000,
                sacks: &sacks,
                tsecr: None,
            },
            ms(45),
        );
        assert_eq!(r.latest_ns, Some(42_000_000));
        // The same block again SACKs nothing new: no new sample.
        r.acked(
            AckInfo {
                ack: 1000,
                sacks: &sacks,
                tsecr: None,
            },
            ms(50),
        );
        assert_eq!(r.latest_ns, Some(42_000_000));
    }

    #[test]
    fn acking_a_retransmission_samples_the_echoed_timestamp() {
        // Segment 2 ([1000, 2000)) retransmitted at 60 ms with TSval 160; the ACK of 4000
        // at 101.5 ms covers it (Karn: no sequence sample); segments 3 and 4 were SACKed
        // before. Its TSecr 160 was first sent at 60 ms: 41.5 ms, in whole ms: 41 ms.
        let mut r = four();
        r.acked(
            AckInfo {
                ack: 1000,
                ..Default::default()
            },
            ms(40),
        );
        let sacks = [(2000, 4000)];
        r.acked(
            AckInfo {
                ack: 1000,
                sacks: &sacks,
                tsecr: None,
            },
            ms(45),
        );
        r.sent(1000, 2000, Some(160), ms(60));
        r.acked(
            AckInfo {
                ack: 4000,
                sacks: &[],
                tsecr: Some(160),
            },
            SimTime(101_500_000),
        );
        assert_eq!(r.latest_ns, Some(41_000_000));
        // Without a timestamp: no sample, the latest stays.
        let mut r = four();
        r.sent(0, 1000, None, ms(60));
        r.acked(
            AckInfo {
                ack: 1000,
                ..Default::default()
            },
            ms(101),
        );
        assert_eq!(r.latest_ns, None);
    }

    #[test]
    fn sequence_numbers_wrap() {
        let mut r = RttTrack::default();
        r.sent(u32::MAX - 499, 500, None, ms(0));
        r.acked(
            AckInfo {
                ack: 500,
                ..Default::default()
            },
            ms(30),
        );
        assert_eq!(r.latest_ns, Some(30_000_000));
    }
}
