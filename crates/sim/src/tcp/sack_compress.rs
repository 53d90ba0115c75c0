//! SACK compression at the receiver, after Linux (added in 4.18, commit 5d9f4262b7ea
//! "tcp: add SACK compression"; the duplicate-ACK counter and `TCP_SACK_BLOCKS_EXPECTED`
//! as in current mainline): `__tcp_ack_snd_check`, `tcp_sack_compress_send_ack` and
//! `tcp_sack_new_ofo_skb` (net/ipv4/tcp_input.c), `tcp_compressed_ack_kick`
//! (net/ipv4/tcp_timer.c), `tcp_event_ack_sent` (net/ipv4/tcp_output.c).
//!
//! When an ACK would go out only because out-of-order data is held (the segment did not
//! complete a second full segment, quick-ACK mode is over, no hole was closed):
//! - if `compressed_ack >= tcp_comp_sack_nr` (44) the ACK goes now;
//! - else, if `rcv_nxt` moved since the last such decision (`compressed_ack_rcv_nxt`),
//!   `dup_ack_counter` restarts at 0; while it is below `TCP_FASTRETRANS_THRESH` (3) it
//!   is incremented and the ACK goes now, so the sender sees its three duplicate ACKs
//!   promptly;
//! - otherwise the ACK is withheld (`compressed_ack += 1`) and, unless the compressed-ACK
//!   timer is already running, the timer is started for
//!   `min(tcp_comp_sack_delay_ns, rtt / 20)` (5 % of the RTT, at most 1 ms), where `rtt`
//!   is `min(rcv_rtt_est, srtt)` of the receiving socket.
//! - Any ACK sent (`tcp_event_ack_sent`) clears `compressed_ack` and cancels the timer;
//!   `dup_ack_counter` is only reset by a change of `rcv_nxt`. The timer sends one ACK
//!   if `compressed_ack` is still non-zero.
//! - `tcp_sack_new_ofo_skb`: before an out-of-order segment changes the SACK list, if it
//!   extends a block at position >= `TCP_SACK_BLOCKS_EXPECTED` (2) or starts a new block
//!   while >= 2 blocks are listed, a pending compressed ACK is sent first (with the list
//!   as it was), so no block is pushed beyond the first two without having been reported.
//!
//! Deviations: the timer fires exactly at its delay (the kernel's hrtimer may fire up to
//! `tcp_comp_sack_slack_ns` = 100 us later, to batch wakeups); the RTT is a fixed estimate
//! given at construction (see `Receiver::enable_sack_compression`), not the kernel's
//! per-socket `rcv_rtt_est` / `srtt_us`. A net-next series of November 2025 (after 6.18)
//! replaces the 5 % by `tcp_comp_sack_rtt_percent` (33 %) and the slack by 10 us; we
//! follow the rule that held from 4.18 through 6.18.

use crate::sched::Timer;
use crate::time::{Dur, SimTime};

/// `sysctl_tcp_comp_sack_nr` default (tcp_sk_init, net/ipv4/tcp_ipv4.c): 44 ACKs.
pub const TCP_COMP_SACK_NR: u32 = 44;
/// `sysctl_tcp_comp_sack_delay_ns` default: NSEC_PER_MSEC = 1 ms.
pub const TCP_COMP_SACK_DELAY: Dur = Dur::from_ms(1);
/// `sysctl_tcp_comp_sack_slack_ns` default: 100 us (documented; not modelled, see above).
pub const TCP_COMP_SACK_SLACK: Dur = Dur::from_us(100);
/// `TCP_FASTRETRANS_THRESH` (include/net/tcp.h): immediate duplicate ACKs per `rcv_nxt`.
pub const TCP_FASTRETRANS_THRESH: u32 = 3;
/// `TCP_SACK_BLOCKS_EXPECTED` (net/ipv4/tcp_input.c): SACK blocks assumed to reach the
/// sender in one ACK.
pub const TCP_SACK_BLOCKS_EXPECTED: usize = 2;

/// What `__tcp_ack_snd_check` decided for an ACK owed only to out-of-order data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompDecision {
    /// `goto send_now`.
    SendNow,
    /// Withheld; maybe a new timer entry (time, generation) to schedule.
    Compressed(Option<(SimTime, u32)>),
}

/// The compression state of one receiving socket (`tp->compressed_ack`,
/// `tp->compressed_ack_rcv_nxt`, `tp->dup_ack_counter`, `tp->compressed_ack_timer`).
#[derive(Clone, Debug)]
pub struct SackCompress {
    /// `tcp_comp_sack_nr`; 0 disables compression (as the sysctl does).
    comp_sack_nr: u32,
    /// The RTT estimate the delay is derived from (us).
    rtt_us: u64,
    pub compressed_ack: u32,
    compressed_ack_rcv_nxt: u64,
    dup_ack_counter: u32,
    pub timer: Timer,
}

impl SackCompress {
    /// Compression off: every out-of-order ACK goes at once.
    pub fn disabled() -> SackCompress {
        SackCompress::new(0, Dur(0))
    }

    pub fn new(comp_sack_nr: u32, rtt: Dur) -> SackCompress {
        SackCompress {
            comp_sack_nr,
            rtt_us: rtt.us(),
            compressed_ack: 0,
            compressed_ack_rcv_nxt: 0,
            dup_ack_counter: 0,
            timer: Timer::default(),
        }
    }

    /// The RTT estimate behind the delay (us).
    pub fn rtt_us(&self) -> u64 {
        self.rtt_us
    }

    /// The timer delay: min(tcp_comp_sack_delay_ns, rtt * (NSEC_PER_USEC >> 3) / 20) with
    /// the kernel's rtt in us << 3, i.e. 5 % of the RTT, at most 1 ms.
    pub fn delay(&self) -> Dur {
        let rtt_scaled = self.rtt_us << 3;
        Dur(TCP_COMP_SACK_DELAY.ns().min(rtt_scaled * (1000 >> 3) / 20))
    }

    /// The tail of `__tcp_ack_snd_check`, reached when out-of-order data is held and no
    /// earlier rule sent the ACK.
    pub fn check(&mut self, now: SimTime, rcv_nxt: u64) -> CompDecision {
        if self.compressed_ack >= self.comp_sack_nr {
            return CompDecision::SendNow;
        }
        if self.compressed_ack_rcv_nxt != rcv_nxt {
            self.compressed_ack_rcv_nxt = rcv_nxt;
            self.dup_ack_counter = 0;
        }
        if self.dup_ack_counter < TCP_FASTRETRANS_THRESH {
            self.dup_ack_counter += 1;
            return CompDecision::SendNow;
        }
        self.compressed_ack += 1;
        if self.timer.is_armed() {
            return CompDecision::Compressed(None);
        }
        CompDecision::Compressed(self.timer.arm(now + self.delay()))
    }

    /// `tcp_event_ack_sent`: an ACK left; returns how many ACKs it replaced
    /// (LINUX_MIB_TCPACKCOMPRESSED) and clears the state.
    pub fn on_ack_sent(&mut self) -> u32 {
        let n = self.compressed_ack;
        self.compressed_ack = 0;
        self.timer.cancel();
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delay_is_five_percent_of_the_rtt_capped_at_one_ms() {
        // rtt * (NSEC_PER_USEC >> 3) / 20 with rtt in us << 3 = rtt_ns / 20.
        // 10 ms -> 500 us; 1 ms -> 50 us; 40 ms -> 2 ms, capped at 1 ms.
        assert_eq!(
            SackCompress::new(44, Dur::from_ms(10)).delay(),
            Dur::from_us(500)
        );
        assert_eq!(
            SackCompress::new(44, Dur::from_ms(1)).delay(),
            Dur::from_us(50)
        );
        assert_eq!(
            SackCompress::new(44, Dur::from_ms(40)).delay(),
            Dur::from_ms(1)
        );
        // 20_001 ns: the kernel's us granularity truncates to 20 us -> 1000 ns.
        assert_eq!(SackCompress::new(44, Dur(20_001)).delay(), Dur(1_000));
    }

    #[test]
    fn comp_sack_nr_zero_always_sends_now() {
        let mut c = SackCompress::disabled();
        for _ in 0..10 {
            assert_eq!(c.check(SimTime(0), 5), CompDecision::SendNow);
        }
    }
}
