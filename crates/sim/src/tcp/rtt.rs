//! RTT estimation and the retransmission timeout: RFC 6298 smoothing with Linux's
//! timeout floor, exponential backoff, and the windowed minimum RTT (`tcp_min_rtt`).
//!
//! - SRTT/RTTVAR follow RFC 6298 (2.2) and (2.3) exactly (alpha = 1/8, beta = 1/4,
//!   RTTVAR updated first with the old SRTT), kept in nanoseconds so the shifts do not
//!   truncate.
//! - RTO = SRTT + max(4 * RTTVAR, 200 ms): Linux floors the variance term at
//!   `TCP_RTO_MIN` (its `mdev_max_us` never drops below `tcp_rto_min_us`, see
//!   `tcp_rtt_estimator` / `__tcp_set_rto` in net/ipv4/tcp_input.c) rather than the whole
//!   RTO at RFC 6298's 1 s; capped at `TCP_RTO_MAX` = 120 s. Before the first sample the
//!   RTO is `TCP_TIMEOUT_INIT` = 1 s (RFC 6298 (2.1)).
//! - Backoff doubles the RTO per expiry (RFC 6298 (5.5)) and is reset by the next valid
//!   RTT sample (`tcp_ack_update_rtt`).
//! - min_rtt: Kathleen Nichols' windowed min-filter (lib/minmax.c,
//!   `minmax_running_min`) over `tcp_min_rtt_wlen` = 300 s in jiffies, as
//!   `tcp_update_rtt_min` does.
//!
//! Deviation: Linux's mdev tracking (`tcp_rtt_estimator`) damps decreases of the
//! variance and keeps a per-window maximum (`mdev_max_us`); we use RFC 6298's RTTVAR.

use crate::time::{Dur, NS_PER_MS, NS_PER_S};

/// `TCP_RTO_MIN` (include/net/tcp.h): HZ / 5.
pub const TCP_RTO_MIN: Dur = Dur(200 * NS_PER_MS);
/// `TCP_RTO_MAX`: 120 s.
pub const TCP_RTO_MAX: Dur = Dur(120 * NS_PER_S);
/// `TCP_TIMEOUT_INIT`: 1 s (RFC 6298 (2.1)).
pub const TCP_TIMEOUT_INIT: Dur = Dur(NS_PER_S);
/// `sysctl_tcp_min_rtt_wlen`: 300 s, in jiffies (HZ = 1000).
pub const MIN_RTT_WLEN_JIFFIES: u32 = 300 * 1000;

#[derive(Clone, Copy, Debug, Default)]
struct MinmaxSample {
    t: u32,
    v: u32,
}

/// `struct minmax` (include/linux/win_minmax.h): the best, 2nd best and 3rd best
/// samples of a sliding window.
#[derive(Clone, Copy, Debug)]
pub struct Minmax {
    s: [MinmaxSample; 3],
}

impl Minmax {
    pub fn new(t: u32, v: u32) -> Minmax {
        let s = MinmaxSample { t, v };
        Minmax { s: [s; 3] }
    }
    pub fn get(&self) -> u32 {
        self.s[0].v
    }
    fn reset(&mut self, t: u32, v: u32) -> u32 {
        *self = Minmax::new(t, v);
        v
    }
    fn subwin_update(&mut self, win: u32, val: MinmaxSample) -> u32 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // The best sample left the window: promote the 2nd and 3rd.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window passed with no 2nd choice: take one from the
            // 2nd quarter.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].v
    }
    /// `minmax_running_min`.
    pub fn running_min(&mut self, win: u32, t: u32, meas: u32) -> u32 {
        let val = MinmaxSample { t, v: meas };
        if val.v <= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, meas);
        }
        if val.v <= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v <= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }
}

#[derive(Clone, Debug)]
pub struct RttEstimator {
    /// Smoothed RTT (ns); 0 before the first sample.
    srtt_ns: u64,
    rttvar_ns: u64,
    /// The current RTO before backoff.
    rto: Dur,
    /// `icsk_backoff`: consecutive expiries since the last valid sample.
    pub backoff: u32,
    /// The latest RTT sample (us), -1 before the first.
    pub latest_us: i64,
    pub min_rtt: Minmax,
}

impl Default for RttEstimator {
    fn default() -> Self {
        Self::new()
    }
}

impl RttEstimator {
    pub fn new() -> Self {
        RttEstimator {
            srtt_ns: 0,
            rttvar_ns: 0,
            rto: TCP_TIMEOUT_INIT,
            backoff: 0,
            latest_us: -1,
            min_rtt: Minmax::new(0, u32::MAX),
        }
    }

    /// A valid RTT sample (`tcp_rtt_estimator` + `tcp_set_rto`): RFC 6298 (2.2)/(2.3).
    pub fn on_sample(&mut self, rtt: Dur) {
        let r = rtt.ns().max(1);
        if self.srtt_ns == 0 {
            // (2.2) SRTT <- R, RTTVAR <- R/2
            self.srtt_ns = r;
            self.rttvar_ns = r / 2;
        } else {
            // (2.3) RTTVAR <- (1 - 1/4) RTTVAR + 1/4 |SRTT - R'|, then
            //       SRTT <- (1 - 1/8) SRTT + 1/8 R'
            let err = self.srtt_ns.abs_diff(r);
            self.rttvar_ns = (3 * self.rttvar_ns + err) / 4;
            self.srtt_ns = (7 * self.srtt_ns + r) / 8;
        }
        let var = (4 * self.rttvar_ns).max(TCP_RTO_MIN.ns());
        self.rto = Dur((self.srtt_ns + var).min(TCP_RTO_MAX.ns()));
        self.backoff = 0;
    }

    /// `tcp_update_rtt_min`: feed the windowed min filter (`now_jiffies` at HZ = 1000).
    pub fn update_min_rtt(&mut self, now_jiffies: u32, rtt_us: u32) {
        // A zero sample is stored as jiffies_to_usecs(1) = 1000 us, as the kernel does.
        let v = if rtt_us == 0 { 1000 } else { rtt_us };
        self.min_rtt.running_min(MIN_RTT_WLEN_JIFFIES, now_jiffies, v);
    }

    /// The RTO with backoff applied: `min(rto << backoff, TCP_RTO_MAX)`.
    pub fn rto(&self) -> Dur {
        let shifted = self.rto.ns().checked_shl(self.backoff.min(40)).unwrap_or(u64::MAX);
        Dur(shifted.min(TCP_RTO_MAX.ns()))
    }
    /// An RTO expired: back off (RFC 6298 (5.5)).
    pub fn on_timeout(&mut self) {
        self.backoff += 1;
    }
    pub fn srtt_us(&self) -> u32 {
        (self.srtt_ns / 1000).min(u32::MAX as u64) as u32
    }
    pub fn srtt_ns(&self) -> u64 {
        self.srtt_ns
    }
    pub fn rttvar_ns(&self) -> u64 {
        self.rttvar_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc6298_first_and_second_samples() {
        let mut e = RttEstimator::new();
        assert_eq!(e.rto(), Dur::from_secs(1)); // (2.1) before any sample
        e.on_sample(Dur::from_ms(100));
        // (2.2) SRTT = 100 ms, RTTVAR = 50 ms; 4*RTTVAR = 200 ms = floor; RTO = 300 ms.
        assert_eq!((e.srtt_ns(), e.rttvar_ns()), (100_000_000, 50_000_000));
        assert_eq!(e.rto(), Dur::from_ms(300));
        e.on_sample(Dur::from_ms(60));
        // (2.3) RTTVAR = 3/4*50 + 1/4*|100-60| = 37.5 + 10 = 47.5 ms;
        //       SRTT = 7/8*100 + 1/8*60 = 87.5 + 7.5 = 95 ms;
        //       RTO = 95 + max(4*47.5 = 190, 200) = 295 ms.
        assert_eq!((e.srtt_ns(), e.rttvar_ns()), (95_000_000, 47_500_000));
        assert_eq!(e.rto(), Dur::from_ms(295));
    }

    #[test]
    fn rto_uses_variance_when_above_the_linux_floor() {
        let mut e = RttEstimator::new();
        e.on_sample(Dur::from_ms(400));
        // SRTT 400, RTTVAR 200, 4*RTTVAR = 800 > 200: RTO = 1200 ms.
        assert_eq!(e.rto(), Dur::from_ms(1200));
    }

    #[test]
    fn backoff_doubles_until_a_new_sample_and_caps_at_120_s() {
        let mut e = RttEstimator::new();
        e.on_sample(Dur::from_ms(40)); // RTO = 40 + 200 = 240 ms
        e.on_timeout();
        e.on_timeout();
        assert_eq!(e.rto(), Dur::from_ms(960)); // 240 * 4
        for _ in 0..20 {
            e.on_timeout();
        }
        assert_eq!(e.rto(), TCP_RTO_MAX);
        e.on_sample(Dur::from_ms(40));
        // RTTVAR = 3/4*20 + 0 = 15 ms; 4*15 = 60 < 200: RTO = 40 + 200 = 240 ms.
        assert_eq!(e.rto(), Dur::from_ms(240));
    }

    #[test]
    fn min_rtt_tracks_the_minimum_and_forgets_it_after_the_window() {
        let mut m = Minmax::new(0, u32::MAX);
        let w = 10_000;
        assert_eq!(m.running_min(w, 0, 50), 50);
        assert_eq!(m.running_min(w, 100, 70), 50);
        assert_eq!(m.running_min(w, 3000, 60), 50);
        assert_eq!(m.running_min(w, 6000, 65), 50);
        // At t = 10_200 the sample from t = 0 is older than the window: the best
        // remaining is 60 (t = 3000).
        assert_eq!(m.running_min(w, 10_200, 80), 60);
    }
}
