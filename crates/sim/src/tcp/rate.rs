//! Delivery-rate estimation, as Linux net/ipv4/tcp_rate.c.
//!
//! Each transmission snapshots the connection's delivery state (`tcp_rate_skb_sent`);
//! each newly (s)acked segment offers its snapshot to the ACK's sample, which keeps the
//! most recently sent one (`tcp_rate_skb_delivered`); after the ACK is processed
//! `tcp_rate_gen` turns it into a `RateSample`: delivered packets over the longer of the
//! send phase and the ACK phase. App-limited periods are marked by
//! `tcp_rate_check_app_limited` and end once their bubble is delivered.
//!
//! `is_ack_delayed` (`FLAG_ACK_MAYBE_DELAYED`) stays false: the kernel sets it only when
//! a single runt segment (less than one MSS) is acked, and every segment here but the
//! last one of a finite flow is a full MSS.
//!
//! Kernel profiles (`[tcp] kernel`): before Linux 5.18 ("tcp: ensure to use the most
//! recently sent skb when filling the rate sample", b253a0680cea) the sample took, of
//! the segments one ACK (s)acks, the first whose `tx.delivered` is higher than the
//! sample's so far; segments sent between the same two ACKs share `tx.delivered`, so
//! the first one (s)acked wins (`RateState::pre_5_18`). Everything else here is the
//! same from 4.9 to 6.18 for what the simulator models (4.16's SACK-reneging check has
//! nothing to act on: the receiver never reneges).
//!
//! Deviation: the kernel marks "no snapshot" with a zero timestamp and "no sample yet in
//! this ACK" with `rs->prior_delivered == 0`; simulated time starts at 0, so we carry
//! explicit flags instead. (The kernel therefore re-takes the sample for every acked
//! packet while `prior_delivered` is still 0 at the very start of a connection; we take
//! the most recently sent one from the first ACK on.)

use tcplab_cc::{CcView, RateSample};

use tcplab_cc::helpers::tcp_packets_in_flight;

/// The per-transmission snapshot (`TCP_SKB_CB(skb)->tx`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxSnapshot {
    pub first_tx_mstamp_us: u64,
    pub delivered_mstamp_us: u64,
    pub delivered: u64,
    /// `tx.delivered_ce` and `tx.lost` (BBRv2/v3 kernels): the counters at send time.
    pub delivered_ce: u64,
    pub lost: u64,
    /// `tx.in_flight` (`tcp_set_tx_in_flight`): packets in flight after this send.
    pub in_flight: u32,
    pub is_app_limited: bool,
    /// False once the segment was SACKed and its snapshot used (kernel: mstamp = 0).
    pub valid: bool,
}

/// Connection-level rate state (fields of `struct tcp_sock`).
#[derive(Clone, Copy, Debug, Default)]
pub struct RateState {
    /// `tp->first_tx_mstamp`: send time of the packet that starts the current window.
    pub first_tx_mstamp_us: u64,
    /// `tp->rate_delivered`, `tp->rate_interval_us`, `tp->rate_app_limited`: the last
    /// recorded sample (what `tcpi_delivery_rate` reports).
    pub rate_delivered: u64,
    pub rate_interval_us: u64,
    pub rate_app_limited: bool,
    /// Linux before 5.18 (`KernelRelease::rate_sample_by_send_time` false): of the
    /// segments one ACK delivers, the sample takes the first with a higher
    /// `tx.delivered`, not the one sent last.
    pub pre_5_18: bool,
}

/// A sample being assembled during one ACK (`struct rate_sample` plus the state
/// `tcp_rate_skb_delivered` keeps in it).
#[derive(Clone, Copy, Debug, Default)]
pub struct RateAcc {
    pub rs: RateSample,
    have_prior: bool,
    last_end_seq: u64,
}

impl RateState {
    /// `tcp_rate_skb_sent` (with the BBRv2/v3 kernels' `tcp_set_tx_in_flight`): snapshot
    /// at transmission. Called before the sender counts the packet in `packets_out` (new
    /// data) or `retrans_out` (a retransmission), so in flight after the send is
    /// `tcp_packets_in_flight + 1` either way.
    pub fn skb_sent(&mut self, tp: &mut CcView, tx_us: u64) -> TxSnapshot {
        if tp.packets_out == 0 {
            // Start the window from now: ACKs after this measure only this flight.
            self.first_tx_mstamp_us = tx_us;
            tp.delivered_mstamp_us = tx_us;
        }
        TxSnapshot {
            first_tx_mstamp_us: self.first_tx_mstamp_us,
            delivered_mstamp_us: tp.delivered_mstamp_us,
            delivered: tp.delivered,
            delivered_ce: tp.delivered_ce,
            lost: tp.lost,
            in_flight: tcp_packets_in_flight(tp) + 1,
            is_app_limited: tp.app_limited != 0,
            valid: true,
        }
    }

    /// `tcp_rate_skb_delivered`: a segment (`end_seq` = seq + 1, sent at `tx_us`) was
    /// newly acked or sacked. Returns whether the snapshot stays valid (it is consumed
    /// when the segment was sacked, so a later cumulative ACK does not reuse it).
    pub fn skb_delivered(
        &mut self,
        acc: &mut RateAcc,
        snap: &TxSnapshot,
        tx_us: u64,
        end_seq: u64,
        is_retrans: bool,
        sacked: bool,
    ) -> bool {
        if !snap.valid {
            return false;
        }
        // 5.18+: tcp_skb_sent_after(tx, first_tx, end_seq, last_end_seq); before:
        // after(scb->tx.delivered, rs->prior_delivered).
        let newer = if self.pre_5_18 {
            snap.delivered > acc.rs.prior_delivered
        } else {
            tx_us > self.first_tx_mstamp_us
                || (tx_us == self.first_tx_mstamp_us && end_seq > acc.last_end_seq)
        };
        if !acc.have_prior || newer {
            acc.have_prior = true;
            acc.rs.prior_delivered = snap.delivered;
            acc.rs.prior_delivered_ce = snap.delivered_ce;
            acc.rs.prior_lost = snap.lost;
            acc.rs.tx_in_flight = snap.in_flight;
            acc.rs.prior_mstamp_us = snap.delivered_mstamp_us;
            acc.rs.is_app_limited = snap.is_app_limited;
            acc.rs.is_retrans = is_retrans;
            acc.last_end_seq = end_seq;
            // Send time of the most recently acked packet starts the next window.
            self.first_tx_mstamp_us = tx_us;
            // The send phase of this window.
            acc.rs.interval_us = tx_us.saturating_sub(snap.first_tx_mstamp_us) as i64;
        }
        !sacked
    }

    /// `tcp_rate_gen`: finish the sample after the ACK (`delivered` packets newly acked
    /// or sacked, `lost` newly marked lost).
    pub fn rate_gen(
        &mut self,
        tp: &mut CcView,
        acc: &mut RateAcc,
        delivered: u32,
        lost: u32,
    ) -> RateSample {
        // Clear app-limited once the bubble is acked and gone.
        if tp.app_limited != 0 && tp.delivered > tp.app_limited {
            tp.app_limited = 0;
        }
        if delivered > 0 {
            tp.delivered_mstamp_us = tp.now_us;
        }
        let rs = &mut acc.rs;
        rs.acked_sacked = delivered;
        rs.losses = lost;
        if !acc.have_prior {
            rs.delivered = -1;
            rs.interval_us = -1;
            return *rs;
        }
        rs.delivered = (tp.delivered - rs.prior_delivered) as i64;
        rs.delivered_ce = (tp.delivered_ce - rs.prior_delivered_ce) as i64;
        rs.lost = (tp.lost - rs.prior_lost) as i64;
        // Sending and ACKing are separate pipeline phases; use the longer one.
        let snd_us = rs.interval_us.max(0) as u64;
        let ack_us = tp.now_us.saturating_sub(rs.prior_mstamp_us);
        rs.interval_us = snd_us.max(ack_us) as i64;
        rs.snd_interval_us = snd_us.min(u32::MAX as u64) as u32;
        rs.rcv_interval_us = ack_us.min(u32::MAX as u64) as u32;
        // Normally interval >= min_rtt; shorter intervals (ACK compression, spurious
        // retransmissions) would overestimate the rate.
        if rs.interval_us < tp.min_rtt_us as i64 {
            rs.interval_us = -1;
            return *rs;
        }
        // Record the last non-app-limited or the highest app-limited bw.
        if !rs.is_app_limited
            || (rs.delivered as u64) * self.rate_interval_us
                >= self.rate_delivered * rs.interval_us as u64
        {
            self.rate_delivered = rs.delivered as u64;
            self.rate_interval_us = rs.interval_us as u64;
            self.rate_app_limited = rs.is_app_limited;
        }
        *rs
    }

    /// The last recorded delivery rate in bits per second (as `tcpi_delivery_rate`).
    pub fn delivery_rate_bps(&self, mss: u32) -> f64 {
        if self.rate_interval_us == 0 {
            return 0.0;
        }
        self.rate_delivered as f64 * mss as f64 * 8.0 * 1e6 / self.rate_interval_us as f64
    }
}

/// `tcp_rate_check_app_limited`: called when the application has nothing more to send.
/// (The kernel's qdisc/NIC-queue test has no counterpart: the sender hands packets
/// straight to its access link.)
pub fn tcp_rate_check_app_limited(tp: &mut CcView, has_data: bool) {
    let in_flight = tcp_packets_in_flight(tp);
    if !has_data && in_flight < tp.snd_cwnd && tp.lost_out <= tp.retrans_out {
        let v = tp.delivered + in_flight as u64;
        tp.app_limited = if v == 0 { 1 } else { v };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-made sequence: 4 segments sent 1 ms apart starting at t = 10 ms from an
    /// idle connection; ACKs come back 50 ms after each send; the sample of the 4th ACK
    /// must cover the interval from the first send.
    #[test]
    fn rate_sample_on_a_hand_made_sequence() {
        let mut tp = CcView::new(1448, 0);
        tp.min_rtt_us = 40_000;
        let mut st = RateState::default();
        let mut snaps = Vec::new();
        for i in 0..4u64 {
            let tx = 10_000 + 1_000 * i;
            tp.now_us = tx;
            snaps.push((st.skb_sent(&mut tp, tx), tx));
            tp.packets_out += 1;
        }
        // All four share first_tx = delivered_mstamp = 10_000 (sent from idle), delivered 0.
        assert!(snaps
            .iter()
            .all(|(s, _)| s.first_tx_mstamp_us == 10_000 && s.delivered == 0));

        // ACK of segments 0..3 at 60_000..63_000: one sample per ACK.
        let mut last = RateSample::default();
        for (i, (snap, tx)) in snaps.iter().enumerate() {
            tp.now_us = 60_000 + 1_000 * i as u64;
            let mut acc = RateAcc::default();
            tp.delivered += 1;
            tp.packets_out -= 1;
            st.skb_delivered(&mut acc, snap, *tx, i as u64 + 1, false, false);
            last = st.rate_gen(&mut tp, &mut acc, 1, 0);
            if i == 0 {
                // delivered 1; send phase 10_000 - 10_000 = 0; ack phase 60_000 - 10_000
                // = 50_000 us; interval = 50_000.
                assert_eq!((last.delivered, last.interval_us), (1, 50_000));
            }
        }
        // 4th ACK at 63_000: delivered = 4 - 0 = 4; send phase = 13_000 - 10_000 =
        // 3_000; ack phase = 63_000 - 10_000 = 53_000; interval = 53_000 us.
        assert_eq!((last.delivered, last.interval_us), (4, 53_000));
        assert_eq!(
            (last.snd_interval_us, last.rcv_interval_us),
            (3_000, 53_000)
        );
        assert_eq!((st.rate_delivered, st.rate_interval_us), (4, 53_000));
    }

    /// BBRv2/v3 fields: three segments sent back to back from idle carry in_flight 1, 2,
    /// 3; two segments are marked lost and one CE mark is counted before the third is
    /// acked, so its sample reports tx_in_flight 3, lost 2, delivered_ce 1.
    #[test]
    fn rate_sample_carries_tx_in_flight_lost_and_delivered_ce() {
        let mut tp = CcView::new(1448, 0);
        tp.min_rtt_us = 1_000;
        let mut st = RateState::default();
        let snaps: Vec<_> = (0..3u64)
            .map(|_| {
                let s = st.skb_sent(&mut tp, 0);
                tp.packets_out += 1;
                s
            })
            .collect();
        assert_eq!(
            snaps.iter().map(|s| s.in_flight).collect::<Vec<_>>(),
            vec![1, 2, 3]
        );
        // Segments 0 and 1 lost (RACK/RFC 6675 marking), segment 2 acked with CE.
        tp.lost = 2;
        tp.lost_out = 2;
        tp.delivered = 1;
        tp.delivered_ce = 1;
        tp.now_us = 50_000;
        let mut acc = RateAcc::default();
        st.skb_delivered(&mut acc, &snaps[2], 0, 3, false, false);
        let rs = st.rate_gen(&mut tp, &mut acc, 1, 2);
        assert_eq!(
            (rs.tx_in_flight, rs.lost, rs.delivered_ce, rs.losses),
            (3, 2, 1, 2)
        );
    }

    /// Two segments sent between the same two ACKs (equal `tx.delivered`) and acked by
    /// one ACK: 5.18+ samples the one sent last, earlier kernels the first.
    fn sample_of_one_ack_over_segments_sent_51_and_90_ms(pre_5_18: bool) -> (RateSample, u64) {
        let mut tp = CcView::new(1448, 0);
        tp.min_rtt_us = 10_000;
        let mut st = RateState {
            pre_5_18,
            ..RateState::default()
        };
        // Segments 0 and 1 at 0 from idle: first_tx = delivered_mstamp = 0, delivered 0.
        let s0 = st.skb_sent(&mut tp, 0);
        tp.packets_out = 1;
        let s1 = st.skb_sent(&mut tp, 0);
        tp.packets_out = 2;
        // Segment 0 acked at 50 ms: delivered 1, delivered_mstamp 50 ms, first_tx 0.
        tp.now_us = 50_000;
        tp.delivered = 1;
        tp.packets_out = 1;
        let mut acc = RateAcc::default();
        st.skb_delivered(&mut acc, &s0, 0, 1, false, false);
        st.rate_gen(&mut tp, &mut acc, 1, 0);
        // Segments 2 and 3 at 51 and 90 ms: both snapshot delivered 1, first_tx 0.
        let s2 = st.skb_sent(&mut tp, 51_000);
        let s3 = st.skb_sent(&mut tp, 90_000);
        assert_eq!((s2.delivered, s3.delivered), (1, 1));
        // One ACK at 100 ms for 1, 2, 3.
        tp.now_us = 100_000;
        tp.delivered = 4;
        tp.packets_out = 0;
        let mut acc = RateAcc::default();
        st.skb_delivered(&mut acc, &s1, 0, 2, false, false);
        st.skb_delivered(&mut acc, &s2, 51_000, 3, false, false);
        st.skb_delivered(&mut acc, &s3, 90_000, 4, false, false);
        (st.rate_gen(&mut tp, &mut acc, 3, 0), st.first_tx_mstamp_us)
    }

    #[test]
    fn before_5_18_the_sample_takes_the_first_of_segments_sent_between_two_acks() {
        // 6.18: segment 3 (sent last): send phase 90 - 0 = 90 ms; ack phase 100 - 50 =
        // 50 ms; interval 90 ms, delivered 4 - 1 = 3; the next window starts at 90 ms.
        let (rs, first_tx) = sample_of_one_ack_over_segments_sent_51_and_90_ms(false);
        assert_eq!(
            (rs.delivered, rs.interval_us, first_tx),
            (3, 90_000, 90_000)
        );
        // 4.9-5.17: segment 2 (tx.delivered 1 > 0; segment 3's 1 is not higher): send
        // phase 51 ms > ack phase 50 ms: interval 51 ms; the next window starts at 51 ms.
        let (rs, first_tx) = sample_of_one_ack_over_segments_sent_51_and_90_ms(true);
        assert_eq!(
            (rs.delivered, rs.interval_us, first_tx),
            (3, 51_000, 51_000)
        );
    }

    #[test]
    fn sample_shorter_than_min_rtt_is_invalid() {
        let mut tp = CcView::new(1448, 0);
        tp.min_rtt_us = 40_000;
        let mut st = RateState::default();
        let snap = st.skb_sent(&mut tp, 0);
        tp.packets_out = 1;
        tp.now_us = 10_000; // 10 ms < min_rtt 40 ms
        tp.delivered = 1;
        let mut acc = RateAcc::default();
        st.skb_delivered(&mut acc, &snap, 0, 1, false, false);
        let rs = st.rate_gen(&mut tp, &mut acc, 1, 0);
        assert_eq!(rs.interval_us, -1);
        assert_eq!(rs.delivered, 1);
    }

    #[test]
    fn ack_without_delivered_snapshot_gives_invalid_sample() {
        let mut tp = CcView::new(1448, 0);
        let mut st = RateState::default();
        let mut acc = RateAcc::default();
        let rs = st.rate_gen(&mut tp, &mut acc, 0, 0);
        assert_eq!((rs.delivered, rs.interval_us), (-1, -1));
    }

    #[test]
    fn app_limited_marks_bubble_and_clears_after_it_is_delivered() {
        let mut tp = CcView::new(1448, 0);
        tp.delivered = 100;
        tp.packets_out = 5;
        tcp_rate_check_app_limited(&mut tp, false);
        assert_eq!(tp.app_limited, 105);
        let mut st = RateState::default();
        tp.delivered = 106;
        let mut acc = RateAcc::default();
        st.rate_gen(&mut tp, &mut acc, 1, 0);
        assert_eq!(tp.app_limited, 0);
    }
}
