//! `westwood`: TCP Westwood+ as Linux runs it (net/ipv4/tcp_westwood.c).
//!
//! Model (Mascolo, Casetti, Gerla, Sanadidi and Wang, "TCP Westwood: Bandwidth
//! Estimation for Enhanced Transport over Wireless Links", ACM MobiCom 2001, Sec. 2-3;
//! Westwood+ as in Grieco and Mascolo, "Performance evaluation and comparison of
//! Westwood+, New Reno, and Vegas TCP congestion control", ACM SIGCOMM CCR 34(2), 2004).
//! The sender estimates the bandwidth it gets from the rate of returning ACKs: once per
//! RTT (at least 50 ms) the bytes acknowledged in that window over its length give a
//! sample, smoothed twice by a 7/8 low-pass filter (`bw_ns_est`, then `bw_est`). After a
//! loss the window is set to what that bandwidth needs on an empty path, bw_est *
//! RTTmin, instead of blindly halving ("faster recovery"): Reno's ssthresh is kept for
//! fast recovery and replaced by bw_est * RTTmin / MSS when it completes (cwnd =
//! ssthresh = that), and on an RTO ssthresh is bw_est * RTTmin / MSS at once. Duplicate
//! ACKs count one MSS each, and a cumulative ACK after them only what they did not
//! already count, so the estimate does not double-count. Growth is Reno's.
//!
//! Kernel functions followed: `tcp_westwood_init`, `westwood_do_filter`,
//! `westwood_filter`, `tcp_westwood_pkts_acked`, `westwood_update_window`,
//! `update_rtt_min`, `westwood_fast_bw`, `westwood_acked_count`,
//! `tcp_westwood_bw_rttmin`, `tcp_westwood_ack`, `tcp_westwood_event`; `ssthresh`,
//! `cong_avoid` and `undo_cwnd` are Reno's.
//!
//! Deviations:
//! - Sequence numbers count segments here (ops.rs); the kernel's byte counts are
//!   `snd_una * mss_cache`, kept as wrapping u32 as the kernel's are, which is exact
//!   because every segment is one MSS.
//! - Jiffies run at `CcView::hz` and start at 0 (ops.rs).
//! - The kernel's u32 product `bw_est * rtt_min` is kept (wrapping): before the first RTT
//!   sample rtt_min is 20 s, where it wraps above ~215 kB per jiffy.

use crate::helpers::{tcp_reno_cong_avoid, tcp_reno_ssthresh};
use crate::ops::{
    ack_flags::CA_ACK_SLOWPATH, usecs_to_jiffies, AckSample, CaEvent, CcView, CongestionOps,
    InfoField, InfoValue,
};
use crate::registry::{AlgorithmSpec, Params};

/// `TCP_WESTWOOD_RTT_MIN` = HZ / 20: the shortest bandwidth-sampling window, 50 ms.
pub fn tcp_westwood_rtt_min(hz: u32) -> u32 {
    hz / 20
}

/// `TCP_WESTWOOD_INIT_RTT` = 20 * HZ: the RTT assumed before the first sample (20 s,
/// "maybe too conservative?!"), so the first window is closed by a real RTT.
pub fn tcp_westwood_init_rtt(hz: u32) -> u32 {
    20 * hz
}

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "westwood",
    family: crate::registry::Family::Loss,
    summary: "Westwood+: after a loss, cwnd = ACK-rate bandwidth estimate * RTTmin",
    source:
        "Linux net/ipv4/tcp_westwood.c; Mascolo et al., MobiCom 2001; Grieco and Mascolo, CCR 2004",
    params: &[],
    build: |_: &Params| Box::new(Westwood::default()),
};

/// `struct westwood`. Bytes, jiffies, and bytes per jiffy.
#[derive(Clone, Debug, Default)]
pub struct Westwood {
    /// `bw_ns_est`: the first, lightly smoothed bandwidth estimate.
    bw_ns_est: u32,
    /// `bw_est`: the bandwidth estimate (bytes per jiffy).
    bw_est: u32,
    /// `rtt_win_sx` (jiffies): start of the current sampling window.
    rtt_win_sx: u32,
    /// `bk`: bytes acknowledged in the current window.
    bk: u32,
    /// `snd_una` (bytes, wrapping): snd_una when last seen.
    snd_una: u32,
    /// `cumul_ack`, `accounted` (bytes): the duplicate-ACK bookkeeping.
    cumul_ack: u32,
    accounted: u32,
    /// `rtt`, `rtt_min` (jiffies): the last RTT sample and the smallest since the
    /// last reset.
    rtt: u32,
    rtt_min: u32,
    /// `first_ack`: the next ACK only sets `snd_una`.
    first_ack: bool,
    /// `reset_rtt_min`: the next ACK restarts `rtt_min` from the last sample.
    reset_rtt_min: bool,
}

/// `westwood_do_filter`: a 7/8 low-pass filter.
fn westwood_do_filter(a: u32, b: u32) -> u32 {
    (7u32.wrapping_mul(a).wrapping_add(b)) >> 3
}

/// `snd_una` in bytes, as the kernel's 32-bit sequence space holds it.
fn snd_una_bytes(tp: &CcView) -> u32 {
    tp.snd_una.wrapping_mul(u64::from(tp.mss_cache)) as u32
}

impl Westwood {
    /// `westwood_filter`: one bandwidth sample, `bk` over `delta` jiffies.
    fn westwood_filter(&mut self, delta: u32) {
        if self.bw_ns_est == 0 && self.bw_est == 0 {
            // An empty filter takes the first sample as it is.
            self.bw_ns_est = self.bk / delta;
            self.bw_est = self.bw_ns_est;
        } else {
            self.bw_ns_est = westwood_do_filter(self.bw_ns_est, self.bk / delta);
            self.bw_est = westwood_do_filter(self.bw_est, self.bw_ns_est);
        }
    }

    /// `westwood_update_window`: close the sampling window once it spans an RTT (at
    /// least 50 ms).
    fn westwood_update_window(&mut self, tp: &CcView) {
        let now = tp.jiffies32();
        // The kernel's s32 delta meets a u32 bound, so C compares them as u32.
        let delta = now.wrapping_sub(self.rtt_win_sx);
        // The first ACK only anchors snd_una, so the first sample counts from it.
        if self.first_ack {
            self.snd_una = snd_una_bytes(tp);
            self.first_ack = false;
        }
        let span = self.rtt.max(tcp_westwood_rtt_min(tp.hz));
        if self.rtt != 0 && delta > span {
            self.westwood_filter(delta);
            self.bk = 0;
            self.rtt_win_sx = now;
        }
    }

    /// `update_rtt_min`.
    fn update_rtt_min(&mut self) {
        if self.reset_rtt_min {
            self.rtt_min = self.rtt;
            self.reset_rtt_min = false;
        } else {
            self.rtt_min = self.rtt_min.min(self.rtt);
        }
    }

    /// `westwood_fast_bw`: a pure cumulative ACK counts what it acknowledged.
    fn westwood_fast_bw(&mut self, tp: &CcView) {
        self.westwood_update_window(tp);
        let una = snd_una_bytes(tp);
        self.bk = self.bk.wrapping_add(una.wrapping_sub(self.snd_una));
        self.snd_una = una;
        self.update_rtt_min();
    }

    /// `westwood_acked_count`: the bytes a slow-path ACK stands for.
    fn westwood_acked_count(&mut self, tp: &CcView) -> u32 {
        let una = snd_una_bytes(tp);
        let mss = tp.mss_cache;
        self.cumul_ack = una.wrapping_sub(self.snd_una);
        // A duplicate ACK: one segment left the network; remember it was counted.
        if self.cumul_ack == 0 {
            self.accounted = self.accounted.wrapping_add(mss);
            self.cumul_ack = mss;
        }
        // A cumulative ACK after duplicates: only what they did not count already.
        if self.cumul_ack > mss {
            if self.accounted >= self.cumul_ack {
                self.accounted -= self.cumul_ack;
                self.cumul_ack = mss;
            } else {
                self.cumul_ack -= self.accounted;
                self.accounted = 0;
            }
        }
        self.snd_una = una;
        self.cumul_ack
    }

    /// `tcp_westwood_bw_rttmin`: the window bw_est * RTTmin in segments, at least 2.
    fn tcp_westwood_bw_rttmin(&self, tp: &CcView) -> u32 {
        (self.bw_est.wrapping_mul(self.rtt_min) / tp.mss_cache).max(2)
    }
}

impl CongestionOps for Westwood {
    fn name(&self) -> &'static str {
        "westwood"
    }

    /// `tcp_westwood_init`.
    fn init(&mut self, tp: &mut CcView) {
        let init_rtt = tcp_westwood_init_rtt(tp.hz);
        *self = Westwood {
            rtt: init_rtt,
            rtt_min: init_rtt,
            reset_rtt_min: true,
            rtt_win_sx: tp.jiffies32(),
            snd_una: snd_una_bytes(tp),
            first_ack: true,
            ..Westwood::default()
        };
    }

    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        tcp_reno_ssthresh(tp)
    }

    fn cong_avoid(&mut self, tp: &mut CcView, _ack: u64, acked: u32) {
        tcp_reno_cong_avoid(tp, acked);
    }

    /// `tcp_westwood_pkts_acked`: keep the last RTT sample.
    fn pkts_acked(&mut self, tp: &mut CcView, sample: &AckSample) {
        if sample.rtt_us > 0 {
            self.rtt = usecs_to_jiffies(sample.rtt_us as u64, tp.hz) as u32;
        }
    }

    /// `tcp_westwood_ack`.
    fn in_ack_event(&mut self, tp: &mut CcView, flags: u32) {
        if flags & CA_ACK_SLOWPATH != 0 {
            self.westwood_update_window(tp);
            let acked = self.westwood_acked_count(tp);
            self.bk = self.bk.wrapping_add(acked);
            self.update_rtt_min();
            return;
        }
        self.westwood_fast_bw(tp);
    }

    /// `tcp_westwood_event`: the window after a loss is bw_est * RTTmin.
    fn cwnd_event(&mut self, tp: &mut CcView, ev: CaEvent) {
        match ev {
            CaEvent::CompleteCwr => {
                tp.snd_ssthresh = self.tcp_westwood_bw_rttmin(tp);
                tp.snd_cwnd = tp.snd_ssthresh;
            }
            CaEvent::Loss => {
                tp.snd_ssthresh = self.tcp_westwood_bw_rttmin(tp);
                // RTTmin restarts from the next ACK's RTT.
                self.reset_rtt_min = true;
            }
            _ => {}
        }
    }

    fn info(&self) -> Vec<InfoField> {
        vec![
            ("bw_est_bytes_per_jiffy", InfoValue::Num(self.bw_est as f64)),
            ("rtt_jiffies", InfoValue::Num(self.rtt as f64)),
            ("rtt_min_jiffies", InfoValue::Num(self.rtt_min as f64)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::ack_flags::CA_ACK_WIN_UPDATE;

    const MSS: u32 = 1448;

    /// A flow started at t = 0 (HZ 1000: a jiffy is 1 ms), snd_una 0.
    fn flow() -> (Westwood, CcView) {
        let mut tp = CcView::new(MSS, 0);
        tp.snd_cwnd = 100;
        tp.snd_ssthresh = 50;
        let mut c = Westwood::default();
        c.init(&mut tp);
        (c, tp)
    }

    /// A cumulative ACK at `t_ms` moving snd_una to `una`, with an RTT of `rtt_ms`, as
    /// the sender calls the hooks: pkts_acked, then in_ack_event.
    fn ack(c: &mut Westwood, tp: &mut CcView, t_ms: u64, una: u64, rtt_ms: i64, flags: u32) {
        tp.now_us = t_ms * 1000;
        let acked = (una - tp.snd_una) as u32;
        tp.snd_una = una;
        c.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: acked,
                rtt_us: rtt_ms * 1000,
                in_flight: 100,
                prior_in_flight: 100,
            },
        );
        c.in_ack_event(tp, flags);
    }

    /// Two sampling windows of 101 ms at RTT 100 ms: 50 segments, then 250.
    fn two_windows() -> (Westwood, CcView) {
        let (mut c, mut tp) = flow();
        let fast = CA_ACK_WIN_UPDATE;
        ack(&mut c, &mut tp, 10, 10, 100, fast); // first ACK: anchors snd_una, bk 0
        ack(&mut c, &mut tp, 50, 60, 100, fast); // bk = 50 * 1448 = 72400
        ack(&mut c, &mut tp, 101, 110, 100, fast); // window 1 closes, then bk = 72400
        ack(&mut c, &mut tp, 150, 310, 100, fast); // bk = 72400 + 289600 = 362000
        ack(&mut c, &mut tp, 202, 320, 100, fast); // window 2 closes
        (c, tp)
    }

    #[test]
    fn westwood_first_ack_only_anchors_snd_una() {
        let (mut c, mut tp) = flow();
        ack(&mut c, &mut tp, 10, 10, 100, CA_ACK_WIN_UPDATE);
        // snd_una 10 segments = 14480 bytes, nothing counted; RTTmin restarts at 100.
        assert_eq!((c.snd_una, c.bk, c.rtt, c.rtt_min), (14_480, 0, 100, 100));
    }

    #[test]
    fn westwood_bandwidth_filter_takes_the_first_sample_then_smooths_by_seven_eighths() {
        let (c, _) = two_windows();
        // Window 1 (t = 0..101, delta 101 > max(rtt 100, 50)): 72400 / 101 = 716 bytes per
        // jiffy; the empty filter takes it: bw_ns_est = bw_est = 716.
        // Window 2 (t = 101..202, delta 101): 362000 / 101 = 3584;
        // bw_ns_est = (7 * 716 + 3584) >> 3 = 8596 >> 3 = 1074;
        // bw_est = (7 * 716 + 1074) >> 3 = 6086 >> 3 = 760.
        assert_eq!((c.bw_ns_est, c.bw_est), (1074, 760));
        // The closing ACK (10 segments) starts window 3.
        assert_eq!((c.bk, c.rtt_win_sx), (14_480, 202));
    }

    #[test]
    fn westwood_window_spans_at_least_50_ms() {
        // RTT 20 ms: the window closes after max(20, 50) = 50 jiffies, strictly more.
        let (mut c, mut tp) = flow();
        let fast = CA_ACK_WIN_UPDATE;
        ack(&mut c, &mut tp, 1, 1, 20, fast);
        ack(&mut c, &mut tp, 30, 51, 20, fast); // bk = 50 * 1448 = 72400
        ack(&mut c, &mut tp, 50, 52, 20, fast); // delta 50: not yet; bk = 73848
        assert_eq!((c.bw_est, c.bk), (0, 73_848));
        ack(&mut c, &mut tp, 51, 53, 20, fast); // delta 51: 73848 / 51 = 1448
        assert_eq!((c.bw_est, c.bk), (1448, 1448));
    }

    #[test]
    fn westwood_rto_sets_ssthresh_to_bw_est_times_rtt_min() {
        // bw_est 760 bytes/jiffy, RTTmin 100 jiffies: 76000 / 1448 = 52.5 -> 52.
        let (mut c, mut tp) = two_windows();
        c.cwnd_event(&mut tp, CaEvent::Loss);
        assert_eq!(tp.snd_ssthresh, 52);
        assert!(c.reset_rtt_min);
        // The next ACK's RTT (120 ms) becomes RTTmin even though it is larger.
        ack(&mut c, &mut tp, 300, 330, 120, CA_ACK_WIN_UPDATE);
        assert_eq!(c.rtt_min, 120);
    }

    #[test]
    fn westwood_recovery_ends_at_cwnd_equal_to_bw_est_times_rtt_min() {
        let (mut c, mut tp) = two_windows();
        tp.snd_ssthresh = 50; // Reno's half during recovery
        c.cwnd_event(&mut tp, CaEvent::CompleteCwr);
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (52, 52));
    }

    #[test]
    fn westwood_bw_rttmin_is_at_least_two() {
        // No sample yet: bw_est 0 -> max(0, 2) = 2.
        let (mut c, mut tp) = flow();
        c.cwnd_event(&mut tp, CaEvent::Loss);
        assert_eq!(tp.snd_ssthresh, 2);
    }

    #[test]
    fn westwood_counts_duplicate_acks_once() {
        let (mut c, mut tp) = flow();
        ack(&mut c, &mut tp, 1, 1, 100, CA_ACK_WIN_UPDATE); // anchor at 1448
        let slow = CA_ACK_SLOWPATH;
        // Two duplicate ACKs: one MSS each, 2896 accounted.
        ack(&mut c, &mut tp, 2, 1, 100, slow);
        ack(&mut c, &mut tp, 3, 1, 100, slow);
        assert_eq!((c.bk, c.accounted), (2896, 2896));
        // The cumulative ACK of 3 segments (4344 bytes) counts 4344 - 2896 = 1448 more:
        // three segments in all.
        ack(&mut c, &mut tp, 4, 4, 100, slow | CA_ACK_WIN_UPDATE);
        assert_eq!((c.bk, c.accounted), (4344, 0));
    }

    #[test]
    fn westwood_delayed_ack_after_more_duplicates_than_it_covers_counts_one_mss() {
        let (mut c, mut tp) = flow();
        ack(&mut c, &mut tp, 1, 1, 100, CA_ACK_WIN_UPDATE);
        let slow = CA_ACK_SLOWPATH;
        for t in 2..5 {
            ack(&mut c, &mut tp, t, 1, 100, slow); // three duplicates: 4344 accounted
        }
        // ACK of 2 segments (2896 <= 4344 accounted): counts one MSS, 1448 stay accounted.
        ack(&mut c, &mut tp, 5, 3, 100, slow);
        assert_eq!((c.bk, c.accounted), (4344 + 1448, 1448));
    }
}
