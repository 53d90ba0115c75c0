//! A flow's handshake, and the SYN a full queue drops.
//!
//! The SYN and SYN-ACK are not packets here (crates/sim/src/tcp/mod.rs, "Deviations"):
//! a connection opened at `now` takes the path's header-only round trip plus the wait
//! behind what each queue of the round trip holds at `now` ([`Handshake::rtt`]). What a
//! Linux client meets when its SYN is lost is modelled since 0.12.0, because the kernel
//! backend showed it decides who gets the link when flows join a full drop-tail queue
//! (docs/FIDELITY.md, finding 30: 9 of f19's 50 flows waited a second or more for their
//! first RTT sample; the simulator had none):
//!
//! - The SYN (or SYN-ACK) is lost when a link of the round trip would refuse a
//!   header-only segment at `now` ([`Link::refuses`]: its drop-tail limit, or the queue
//!   discipline's hard limit, is reached) or its random loss strikes (a draw from the
//!   flow's own stream, `syn/<flow>`, so no other draw of the run moves).
//! - The client retransmits the SYN when its timer expires (`tcp_retransmit_timer`):
//!   `TCP_TIMEOUT_INIT` (1 s), kept for the first `tcp_syn_linear_timeouts` (4)
//!   timeouts and doubled after each later one (Linux 6.5, "tcp: make the first N SYN
//!   RTO backoffs linear"; before 6.5, i.e. for the 4.x kernel profiles, doubled from
//!   the first). `tcp_write_timeout` gives up after `tcp_syn_retries` (6) plus the
//!   linear ones retransmissions: the flow then never sends, as a failed `connect()`.
//!   The kernel backend's runs show the linear timers: flows that lost two SYNs had
//!   their first RTT sample 2.2 s after their start (finding 30).
//! - Each timeout runs `tcp_enter_loss` on the socket, which in SYN_SENT has the
//!   algorithm assigned but not initialised; the sender keeps what survives into the
//!   connection (`Sender::on_syn_timeout`: the first timeout's ssthresh, and cwnd 1
//!   after two or more retransmissions, `tcp_init_transfer`).
//!
//! Deviations: the SYN does not take a place in the queue, and its fate is read from the
//! queues as they are when it is sent, not when it would reach each one (the same
//! instant the round trip's wait is read at). Early drops and marks of a queue
//! discipline (RED's probability, CoDel's sojourn test) and a policer's are not applied
//! to it; only the hard limit is. A SYN-ACK lost on the way back is handled as a lost
//! SYN (the client's timer fires either way; Linux's server would also retransmit the
//! SYN-ACK after its own 1 s, which can only shorten the wait by the path's one-way
//! delay).

use tcplab_cc::bbr::kernel::KernelRelease;

use crate::net::link::Link;
use crate::rng::Rng;
use crate::time::{Dur, SimTime};

/// `TCP_TIMEOUT_INIT` (include/net/tcp.h): the SYN's first retransmission timeout.
pub const TCP_TIMEOUT_INIT: Dur = Dur(1_000_000_000);
/// `TCP_RTO_MAX` (include/net/tcp.h): the backed-off timer's bound.
const TCP_RTO_MAX: Dur = Dur(120_000_000_000);
/// `sysctl_tcp_syn_retries` default (`TCP_SYN_RETRIES`, include/net/tcp.h).
pub const TCP_SYN_RETRIES: u32 = 6;

/// `sysctl_tcp_syn_linear_timeouts` for a kernel profile: 4 (its default, `tcp_sk_init`)
/// from Linux 6.5, which added it; none before.
pub fn syn_linear_timeouts(kernel: KernelRelease) -> u32 {
    if kernel >= KernelRelease::V6_18 {
        4
    } else {
        0
    }
}

/// A flow's handshake: the round trip's links, the SYN's wire size, and its timer's
/// rules. The count of SYN timeouts is the socket's (`Sender::syn_timeouts`, as
/// `tp->total_rto` is), so the methods below take it.
pub(super) struct Handshake {
    pub path: Vec<usize>,
    /// The SYN's and SYN-ACK's size on the wire (`tcp.header_bytes`).
    pub header: u32,
    /// The flow's draws for the SYN's random loss (stream `syn/<flow>`).
    pub rng: Rng,
    /// See [`syn_linear_timeouts`].
    pub linear_timeouts: u32,
}

impl Handshake {
    /// The SYN-ACK's round trip for a connection opened at `now`. On a link with a trace
    /// the segment is not serialized at a rate: it leaves at a delivery opportunity of
    /// the trace (`Link::trace_departure`), found by walking the path in time from
    /// `now`, so the first RTT sample holds the opportunities' waits a real SYN and
    /// SYN-ACK meet (until 0.7.0 it counted the trace's mean rate, and so read the bare
    /// propagation delay: 30.2 ms on experiments/kernel-spec/k05 where the kernel's first
    /// sample is 35.6-39.2 ms).
    pub fn rtt(&self, links: &[Link], now: SimTime) -> Dur {
        let mut t = now;
        for &l in &self.path {
            let link = &links[l];
            let sent = match link.trace_departure(now, t, self.header) {
                Some(at) => at,
                None if link.rate.0 == 0 => t,
                None => {
                    let header = link.rate.tx_time(u64::from(self.header));
                    t + header + link.rate.tx_time(link.backlog_bytes())
                }
            };
            t = sent + link.delay;
        }
        t - now
    }

    /// Whether a SYN sent now (or its SYN-ACK) is lost on the round trip. Draws once per
    /// link with random loss, in path order, whatever the queues say, so the stream's
    /// use does not depend on them.
    pub fn lost(&mut self, links: &[Link]) -> bool {
        let mut lost = false;
        for &l in &self.path {
            let link = &links[l];
            if link.loss > 0.0 {
                lost |= self.rng.bernoulli(link.loss);
            }
            lost |= link.refuses(self.header);
        }
        lost
    }

    /// The retransmission timer of the SYN sent after `timeouts` timeouts: 1 s for the
    /// first SYN and the first `linear_timeouts` retransmissions, then doubled per
    /// timeout, at most `TCP_RTO_MAX` (2^7 s already exceeds it, hence the shift's bound).
    pub fn timer(&self, timeouts: u32) -> Dur {
        let doublings = timeouts.saturating_sub(self.linear_timeouts).min(7);
        Dur((TCP_TIMEOUT_INIT.0 << doublings).min(TCP_RTO_MAX.0))
    }

    /// After the `timeouts`-th timeout: true if the SYN is sent again, false if
    /// `connect()` gives up (the retransmissions allowed have all timed out).
    pub fn retransmits_after(&self, timeouts: u32) -> bool {
        timeouts <= TCP_SYN_RETRIES + self.linear_timeouts
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RunRng;

    fn hs(kernel: KernelRelease) -> Handshake {
        Handshake {
            path: vec![],
            header: 52,
            rng: RunRng::new(1).stream("syn/0"),
            linear_timeouts: syn_linear_timeouts(kernel),
        }
    }

    /// The SYN's timers, in seconds, until `connect()` gives up.
    fn timers(kernel: KernelRelease) -> Vec<u64> {
        let h = hs(kernel);
        let mut timeouts = 0;
        let mut waits = vec![h.timer(timeouts).0 / 1_000_000_000];
        timeouts += 1;
        while h.retransmits_after(timeouts) {
            waits.push(h.timer(timeouts).0 / 1_000_000_000);
            timeouts += 1;
        }
        waits
    }

    #[test]
    fn linux_6_keeps_the_first_four_syn_timers_at_one_second() {
        // SYNs at 0, 1, 2, 3, 4, 5, 7, 11, 19, 35 and 67 s; the 10th retransmission
        // (6 + 4) times out at 131 s and connect() fails.
        assert_eq!(
            timers(KernelRelease::V6_18),
            [1, 1, 1, 1, 1, 2, 4, 8, 16, 32, 64]
        );
    }

    #[test]
    fn linux_4_doubles_the_syn_timer_from_the_first_timeout() {
        // SYNs at 0, 1, 3, 7, 15, 31, 63 s; connect() fails at 127 s (tcp(7)).
        assert_eq!(timers(KernelRelease::V4_9), [1, 2, 4, 8, 16, 32, 64]);
    }
}
