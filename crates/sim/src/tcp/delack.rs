//! The receiver's delayed-ACK timing as Linux keeps it in `icsk_ack`: the adaptive ACK
//! timeout `ato`, the quick-ACK re-entry after a long gap, the delayed-ACK timer's
//! deadline and its inflation on expiry. Kernel functions followed (Linux 6.x):
//! `tcp_event_data_recv`, `tcp_enter_quickack_mode` (net/ipv4/tcp_input.c),
//! `tcp_send_delayed_ack` / `tcp_delack_max` (net/ipv4/tcp_output.c),
//! `tcp_delack_timer_handler` (net/ipv4/tcp_timer.c); constants from include/net/tcp.h.
//!
//! - The first in-order data segment sets `ato = TCP_ATO_MIN` (40 ms) and arms the
//!   quick ACKs (the receiver does that part).
//! - Every later in-order data segment, `m` after the previous one (`lrcvtime`):
//!   `m <= TCP_ATO_MIN / 2` -> `ato = ato / 2 + TCP_ATO_MIN / 2` (bulk data keeps ato
//!   at 40 ms); `m < ato` -> `ato = min(ato / 2 + m, rto)`; `m > rto` -> "Too long gap.
//!   Apparently sender failed to restart window": quick-ACK mode again
//!   (`tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)`); otherwise ato is kept.
//! - `tcp_enter_quickack_mode` (a duplicate segment, a CE mark) resets ato to
//!   `TCP_ATO_MIN` and leaves pingpong mode; so does the ACK that ends quick-ACK mode
//!   (`tcp_dec_quickack_mode`: "Leaving quickack mode we deflate ATO").
//! - The timer's delay (`tcp_send_delayed_ack`): ato, except that an ato above
//!   `TCP_DELACK_MIN` is bounded by `max_ato` = HZ / 2 (500 ms; `TCP_DELACK_MAX` =
//!   200 ms in pingpong mode or for a pushed segment) and by the receiver's smoothed RTT
//!   (not below `TCP_DELACK_MIN`); then by `tcp_delack_max` (`TCP_DELACK_MAX`). If the
//!   timer is already pending and due within ato / 4 the ACK goes now; otherwise the
//!   earlier of the two deadlines is kept.
//! - Expiry with an ACK owed (`tcp_delack_timer_handler`), not in pingpong mode: "Delayed
//!   ACK missed: inflate ATO", `ato = min(2 ato, rto)`.
//! - Pingpong mode (`inet_csk_in_pingpong_mode`) is entered by a host that sends data
//!   within ato of receiving (`tcp_event_data_sent`); tcplab's receiver sends only ACKs,
//!   so it is never in it and its pingpong branches are not modelled.
//!
//! `rto` and `srtt` are the receiving socket's own `icsk_rto` and `srtt_us`. A receiver
//! that sends no data takes no RTT sample after the handshake, so both come from the
//! one sample its SYN-ACK gave (`tcp_synack_rtt_meas`): the engine passes the flow's
//! handshake round trip through [`crate::tcp::rtt::RttEstimator`], giving srtt = that
//! RTT and rto = RTT + max(2 RTT, rto_min) in whole jiffies, as for the sender's first
//! sample.
//!
//! Deviations: times are kept in nanoseconds, not jiffies, so `m` and `ato` are not
//! rounded to whole jiffies (the kernel compares and halves whole jiffies, 1 ms at
//! HZ = 1000; the constants are the same in every HZ); the timer fires exactly at its
//! deadline (the kernel's timer wheel may fire later). The receiver's RTT estimate is
//! the handshake's path RTT (propagation plus serialization) even when `tcp.handshake`
//! is off. `tcp_delack_max`'s cap by a locked route `rto_min` and the BPF
//! `TCP_BPF_DELACK_MAX` are not modelled.

use crate::time::{Dur, SimTime};

/// `TCP_ATO_MIN` (include/net/tcp.h): HZ / 25 = 40 ms.
pub const TCP_ATO_MIN: Dur = Dur::from_ms(40);
/// `TCP_DELACK_MIN` (include/net/tcp.h): HZ / 25 = 40 ms.
pub const TCP_DELACK_MIN: Dur = Dur::from_ms(40);
/// `TCP_DELACK_MAX` (include/net/tcp.h): HZ / 5 = 200 ms (`icsk_delack_max` default).
pub const TCP_DELACK_MAX: Dur = Dur::from_ms(200);
/// `max_ato` outside pingpong mode in `tcp_send_delayed_ack`: HZ / 2 = 500 ms.
pub const MAX_ATO_BULK: Dur = Dur::from_ms(500);
/// `TCP_TIMEOUT_INIT`: `icsk_rto` before any RTT sample (1 s).
const RTO_INIT: Dur = Dur::from_secs(1);

/// The receiver's `icsk_ack.ato`, `icsk_ack.lrcvtime` and the RTT state they use.
#[derive(Clone, Copy, Debug)]
pub struct AckTiming {
    /// `icsk_ack.ato`; zero until the first in-order data segment.
    ato: Dur,
    /// `icsk_ack.lrcvtime`: when the last in-order data segment arrived.
    lrcvtime: SimTime,
    /// The receiving socket's `icsk_rto`.
    rto: Dur,
    /// The receiving socket's smoothed RTT (`srtt_us >> 3`, whole jiffies); zero if none.
    srtt: Dur,
}

impl Default for AckTiming {
    fn default() -> Self {
        AckTiming {
            ato: Dur::ZERO,
            lrcvtime: SimTime(0),
            rto: RTO_INIT,
            srtt: Dur::ZERO,
        }
    }
}

impl AckTiming {
    /// The receiving socket's RTO and smoothed RTT (see the module comment).
    pub fn set_rtt(&mut self, rto: Dur, srtt: Dur) {
        self.rto = rto;
        self.srtt = srtt;
    }

    /// The current `ato` (zero before any data).
    pub fn ato(&self) -> Dur {
        self.ato
    }

    /// The receiver's RTO estimate.
    pub fn rto(&self) -> Dur {
        self.rto
    }

    /// `tcp_event_data_recv`'s ato update for an in-order data segment arriving at
    /// `now`. Returns true when the segment should (re-)arm quick-ACK mode
    /// (`tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)`): the first segment, or one after a
    /// gap longer than the RTO.
    pub fn on_data(&mut self, now: SimTime) -> bool {
        let quick = if self.ato == Dur::ZERO {
            // "The _first_ data packet received, initialize delayed ACK engine."
            self.ato = TCP_ATO_MIN;
            true
        } else {
            let m = now.since(self.lrcvtime);
            if m <= Dur(TCP_ATO_MIN.0 / 2) {
                // "The fastest case is the first."
                self.ato = Dur(self.ato.0 / 2 + TCP_ATO_MIN.0 / 2);
                false
            } else if m < self.ato {
                self.ato = Dur(self.ato.0 / 2 + m.0).min(self.rto);
                false
            } else {
                // "Too long gap. Apparently sender failed to restart window, so that
                // we send ACKs quickly."
                m > self.rto
            }
        };
        self.lrcvtime = now;
        quick
    }

    /// `tcp_enter_quickack_mode`'s ato reset (pingpong mode is never on here), also
    /// `tcp_dec_quickack_mode`'s when the last quick ACK goes.
    pub fn enter_quickack_mode(&mut self) {
        self.ato = TCP_ATO_MIN;
    }

    /// `tcp_send_delayed_ack`'s delay: ato bounded as the module comment says. Not in
    /// pingpong mode and (tcplab ACKs a pushed segment at once) not pushed, so
    /// `max_ato` starts at HZ / 2.
    pub fn delay(&self) -> Dur {
        let mut ato = self.ato;
        if ato > TCP_DELACK_MIN {
            let mut max_ato = MAX_ATO_BULK;
            if self.srtt > Dur::ZERO {
                // "If some rtt estimate is known, use it to bound delayed ack."
                let rtt = self.srtt.max(TCP_DELACK_MIN);
                max_ato = max_ato.min(rtt);
            }
            ato = ato.min(max_ato);
        }
        ato.min(TCP_DELACK_MAX)
    }

    /// The delayed-ACK deadline for a segment at `now` with the timer's current
    /// deadline `pending` (`tcp_send_delayed_ack`): `None` means send the ACK now (the
    /// pending timer is due within ato / 4), else the deadline to arm (the earlier one).
    pub fn deadline(&self, now: SimTime, pending: Option<SimTime>) -> Option<SimTime> {
        let ato = self.delay();
        let timeout = now + ato;
        match pending {
            Some(p) if p <= now + Dur(ato.0 >> 2) => None,
            Some(p) => Some(p.min(timeout)),
            None => Some(timeout),
        }
    }

    /// The delayed-ACK timer expired with an ACK owed: "Delayed ACK missed: inflate
    /// ATO" (`tcp_delack_timer_handler`, not in pingpong mode).
    pub fn on_timer_ack(&mut self) {
        self.ato = Dur(self.ato.0 << 1).min(self.rto);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    fn at(ms: u64) -> SimTime {
        SimTime(ms * MS)
    }
    fn ms(ms: u64) -> Dur {
        Dur::from_ms(ms)
    }
    /// Timing with the receiver RTO of a 41 ms handshake (41 + 200 = 241 ms) and srtt 41 ms.
    fn timing() -> AckTiming {
        let mut t = AckTiming::default();
        t.set_rtt(ms(241), ms(41));
        t
    }

    #[test]
    fn ato_follows_the_arrival_gaps() {
        let mut t = timing();
        // First segment: ato = TCP_ATO_MIN, quick ACKs armed.
        assert!(t.on_data(at(0)));
        assert_eq!(t.ato(), ms(40));
        // m = 10 ms <= 20 ms: 40 / 2 + 20 = 40.
        assert!(!t.on_data(at(10)));
        assert_eq!(t.ato(), ms(40));
        // m = 30 ms < 40: 40 / 2 + 30 = 50.
        assert!(!t.on_data(at(40)));
        assert_eq!(t.ato(), ms(50));
        // m = 45 ms < 50: 25 + 45 = 70.
        t.on_data(at(85));
        assert_eq!(t.ato(), ms(70));
        // m = 70 ms, not below ato 70 and not above the RTO: unchanged.
        assert!(!t.on_data(at(155)));
        assert_eq!(t.ato(), ms(70));
        // Back-to-back data (m = 0) halves the excess over 20 ms each time:
        // 70 -> 55 -> 47.5 -> 43.75.
        for want in [55_000_000, 47_500_000, 43_750_000] {
            t.on_data(at(155));
            assert_eq!(t.ato(), Dur(want));
        }
    }

    #[test]
    fn ato_from_a_gap_is_capped_at_the_rto() {
        let mut t = AckTiming::default();
        t.set_rtt(ms(60), ms(10));
        t.on_data(at(0));
        t.on_timer_ack(); // min(2 x 40, RTO 60) = 60
        assert_eq!(t.ato(), ms(60));
        t.on_timer_ack();
        assert_eq!(t.ato(), ms(60));
        // m = 50 ms < 60: 30 + 50 = 80, capped at the RTO 60.
        t.on_data(at(50));
        assert_eq!(t.ato(), ms(60));
    }

    #[test]
    fn a_gap_longer_than_the_rto_re_arms_quick_acks() {
        let mut t = timing();
        t.on_data(at(0));
        // A gap of exactly the RTO (241 ms) is not "too long"; 242 ms is.
        assert!(!t.on_data(at(241)));
        assert!(t.on_data(at(241 + 242)));
        // The gap rule leaves ato alone.
        assert_eq!(t.ato(), ms(40));
        // Before any RTT is known the RTO is TCP_TIMEOUT_INIT (1 s).
        let mut t = AckTiming::default();
        t.on_data(at(0));
        assert!(!t.on_data(at(1000)));
        assert!(t.on_data(at(2001)));
    }

    #[test]
    fn the_delay_is_ato_bounded_by_srtt_and_delack_max() {
        let mut t = timing();
        t.on_data(at(0));
        // ato 40 = TCP_DELACK_MIN: no bound applies.
        assert_eq!(t.delay(), ms(40));
        // ato 80, srtt 41 ms: max_ato = min(500, max(41, 40)) = 41.
        t.on_timer_ack();
        assert_eq!((t.ato(), t.delay()), (ms(80), ms(41)));
        // srtt 100 ms, RTO 300: ato 80 stands.
        t.set_rtt(ms(300), ms(100));
        assert_eq!(t.delay(), ms(80));
        // ato 160 -> 100 (srtt).
        t.on_timer_ack();
        assert_eq!((t.ato(), t.delay()), (ms(160), ms(100)));
        // srtt 400 ms, RTO 1 s: ato 320 -> min(320, 400, 500) = 320, then TCP_DELACK_MAX.
        t.set_rtt(ms(1000), ms(400));
        t.on_timer_ack();
        assert_eq!((t.ato(), t.delay()), (ms(320), ms(200)));
        // A srtt below TCP_DELACK_MIN bounds at TCP_DELACK_MIN (max(5, 40) = 40).
        t.set_rtt(ms(1000), ms(5));
        assert_eq!(t.delay(), ms(40));
        // No srtt: only HZ / 2 and TCP_DELACK_MAX: min(320, 500) -> 200.
        t.set_rtt(ms(1000), Dur::ZERO);
        assert_eq!(t.delay(), ms(200));
    }

    #[test]
    fn a_pending_timer_due_within_a_quarter_ato_sends_now_else_the_earlier_deadline_stays() {
        let mut t = timing();
        t.on_data(at(0)); // ato 40: ato / 4 = 10 ms
        assert_eq!(t.deadline(at(100), None), Some(at(140)));
        // Pending at 110 <= 100 + 10: send now.
        assert_eq!(t.deadline(at(100), Some(at(110))), None);
        // Pending at 111: kept (earlier than 140).
        assert_eq!(t.deadline(at(100), Some(at(111))), Some(at(111)));
        // Pending later than the new deadline: the new one.
        assert_eq!(t.deadline(at(100), Some(at(150))), Some(at(140)));
    }

    #[test]
    fn timer_expiry_doubles_ato_up_to_the_rto_and_quickack_mode_resets_it() {
        let mut t = timing();
        t.on_data(at(0));
        let mut seen = vec![];
        for _ in 0..4 {
            t.on_timer_ack();
            seen.push(t.ato());
        }
        // 40 -> 80 -> 160 -> min(320, 241) -> 241.
        assert_eq!(seen, vec![ms(80), ms(160), ms(241), ms(241)]);
        t.enter_quickack_mode();
        assert_eq!(t.ato(), ms(40));
    }
}
