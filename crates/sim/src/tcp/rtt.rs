//! RTT estimation and the retransmission timeout as Linux computes them
//! (`tcp_rtt_estimator`, `tcp_set_rto` / `__tcp_set_rto` / `tcp_bound_rto` in
//! net/ipv4/tcp_input.c), exponential backoff, and the windowed minimum RTT
//! (`tcp_min_rtt`).
//!
//! - Jacobson/Karels smoothing in integer microseconds with the kernel's scalings:
//!   `srtt_us` holds 8 * SRTT, `mdev_us` 4 * mean deviation (gains 1/8 and 1/4, as RFC
//!   6298), except that a sample *below* SRTT whose error exceeds the deviation only
//!   moves it by 1/32 of the excess (the kernel's Eifel-like damping).
//! - The variance term of the RTO, `rttvar_us` (4 * RTTVAR), is the largest `mdev_us`
//!   seen in the current round trip (`mdev_max_us`, reset to `TCP_RTO_MIN` = 200 ms once
//!   per RTT, when snd_una passes `rtt_seq`), raised at once and decayed by a quarter of
//!   the gap per round trip: so RTO = SRTT + max(200 ms, ~4 * recent max deviation).
//! - First sample m: SRTT = m, mdev = 2m (4 * m/2), rttvar = max(2m, 200 ms) (RFC 6298
//!   (2.2) with Linux's floor). Before any sample RTO = `TCP_TIMEOUT_INIT` = 1 s.
//! - `icsk_rto` is kept in jiffies of the simulated CONFIG_HZ (`[tcp] hz`): the RTO is
//!   rounded up to whole jiffies (`usecs_to_jiffies`) and capped at `TCP_RTO_MAX` = 120 s.
//! - Backoff doubles the RTO per expiry (`tcp_retransmit_timer`) and is reset by the
//!   next valid RTT sample (`tcp_ack_update_rtt`).
//! - Timestamp samples (`tcp_rtt_tsopt_us`): the echoed TSecr against this host's
//!   millisecond clock, for ACKs of retransmitted data ([`super::input`]).
//! - min_rtt: Kathleen Nichols' windowed min-filter (lib/win_minmax.c
//!   `minmax_running_min`, in `tcplab_cc::minmax`, shared with BBR's max filter) over
//!   `tcp_min_rtt_wlen` = 300 s in jiffies, as `tcp_update_rtt_min` does.

use tcplab_cc::minmax::Minmax;
use tcplab_cc::ops::{jiffies_to_usecs, usecs_to_jiffies};

use crate::time::{Dur, NS_PER_S};

/// `TCP_RTO_MIN` (include/net/tcp.h): HZ / 5.
pub const TCP_RTO_MIN: Dur = Dur(crate::contract::TCP_RTO_MIN_NS);
/// `TCP_RTO_MAX`: 120 s.
pub const TCP_RTO_MAX: Dur = Dur(120 * NS_PER_S);
/// `TCP_TIMEOUT_INIT`: 1 s (RFC 6298 (2.1)).
pub const TCP_TIMEOUT_INIT: Dur = Dur(NS_PER_S);
/// `sysctl_tcp_min_rtt_wlen`: 300 s (`tcp_update_rtt_min` multiplies it by HZ).
pub const MIN_RTT_WLEN_SECS: u32 = 300;

/// `TCP_TS_HZ`: the timestamp clock ticks in milliseconds.
pub const TCP_TS_HZ: u32 = 1000;

/// `tcp_rtt_tsopt_us(tp, min_delta)` (6.18): the RTT an echoed `tsecr` gives at
/// timestamp-clock reading `now_ts`, in us: whole milliseconds, a delta of 0 counted as
/// `min_delta` ms (1 for the sender's samples, 0 for the receiver's since "tcp: fix
/// zero RTT samples" in 6.16); -1 for a delta too large to be an RTT (a TSecr from the
/// future or from ~25 days ago).
pub fn tcp_rtt_tsopt_us(now_ts: u32, tsecr: u32, min_delta: u32) -> i64 {
    let mut delta = now_ts.wrapping_sub(tsecr);
    let us_per_tick = 1_000_000 / TCP_TS_HZ;
    if delta < i32::MAX as u32 / us_per_tick {
        if delta == 0 {
            delta = min_delta;
        }
        return i64::from(delta * us_per_tick);
    }
    -1
}

#[derive(Clone, Debug)]
pub struct RttEstimator {
    /// `tcp_rto_min_us()`: the floor of rttvar, so RTO >= srtt + rto_min.
    rto_min_us: u64,
    /// `tp->srtt_us`: 8 * smoothed RTT (us); 0 before the first sample.
    srtt8_us: u64,
    /// `tp->mdev_us`: 4 * mean deviation (us).
    mdev4_us: u64,
    /// `tp->mdev_max_us`: the largest `mdev_us` in the current round trip.
    mdev_max_us: u64,
    /// `tp->rttvar_us`: the RTO's variance term (4 * RTTVAR, us).
    rttvar4_us: u64,
    /// `tp->rtt_seq`: snd_nxt when the current round trip began.
    rtt_seq: u64,
    /// `icsk_rto`: the current RTO before backoff (whole milliseconds).
    rto: Dur,
    /// `icsk_backoff`: consecutive expiries since the last valid sample.
    pub backoff: u32,
    /// The latest RTT sample (us), -1 before the first.
    pub latest_us: i64,
    pub min_rtt: Minmax,
    /// The simulated CONFIG_HZ (`[tcp] hz`): the RTO is whole jiffies of it.
    pub hz: u32,
    /// The RTT samples since the stepping engine last read them (world/stepping.rs);
    /// recording only, read by nothing in the stack.
    pub samples: RttSamples,
}

/// Sum, count and minimum of RTT samples (us) over an interval, for the stepping
/// engine's per-interval statistics (three additions per sample, no Python per packet).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RttSamples {
    pub sum_us: u64,
    pub count: u64,
    pub min_us: u64,
}

impl Default for RttSamples {
    fn default() -> Self {
        RttSamples {
            sum_us: 0,
            count: 0,
            min_us: u64::MAX,
        }
    }
}

impl RttSamples {
    pub fn add(&mut self, us: u64) {
        self.sum_us += us;
        self.count += 1;
        self.min_us = self.min_us.min(us);
    }
}

impl Default for RttEstimator {
    fn default() -> Self {
        Self::new()
    }
}

impl RttEstimator {
    /// An estimator with Linux's default `TCP_RTO_MIN`.
    pub fn new() -> Self {
        Self::with_rto_min(TCP_RTO_MIN)
    }

    /// An estimator whose `tcp_rto_min_us()` is `rto_min` (the per-route `rto_min` of
    /// `ip route`, which Linux reads in `tcp_rto_min`; default `TCP_RTO_MIN`).
    pub fn with_rto_min(rto_min: Dur) -> Self {
        RttEstimator {
            rto_min_us: rto_min.0 / 1000,
            srtt8_us: 0,
            mdev4_us: 0,
            mdev_max_us: 0,
            rttvar4_us: 0,
            rtt_seq: 0,
            rto: TCP_TIMEOUT_INIT,
            backoff: 0,
            latest_us: -1,
            min_rtt: Minmax::new(0, u32::MAX),
            hz: tcplab_cc::ops::DEFAULT_HZ,
            samples: RttSamples::default(),
        }
    }

    /// A valid RTT sample `rtt` taken on an ACK that left snd_una and snd_nxt (in
    /// segments) as given: `tcp_rtt_estimator`, then `tcp_set_rto`, and the backoff
    /// reset of `tcp_ack_update_rtt`.
    pub fn on_sample(&mut self, rtt: Dur, snd_una: u64, snd_nxt: u64) {
        let mut m = rtt.us() as i64;
        let mut srtt = self.srtt8_us as i64;
        if srtt != 0 {
            m -= srtt >> 3; // m is now the error in the rtt estimate
            srtt += m; // srtt = 7/8 srtt + 1/8 new
            if m < 0 {
                m = -m; // |error|
                m -= (self.mdev4_us >> 2) as i64;
                // A falling RTT moves mdev with the finer gain 1/32 (alpha * beta).
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= (self.mdev4_us >> 2) as i64;
            }
            self.mdev4_us = (self.mdev4_us as i64 + m) as u64; // mdev = 3/4 mdev + 1/4 new
            if self.mdev4_us > self.mdev_max_us {
                self.mdev_max_us = self.mdev4_us;
                if self.mdev_max_us > self.rttvar4_us {
                    self.rttvar4_us = self.mdev_max_us;
                }
            }
            // Once per round trip: decay rttvar toward the round's maximum deviation.
            if snd_una > self.rtt_seq {
                if self.mdev_max_us < self.rttvar4_us {
                    self.rttvar4_us -= (self.rttvar4_us - self.mdev_max_us) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max_us = self.rto_min_us;
            }
        } else {
            // No previous measure: rto = 3 * rtt unless the floor is larger.
            srtt = m << 3;
            self.mdev4_us = (m << 1) as u64;
            self.rttvar4_us = self.mdev4_us.max(self.rto_min_us);
            self.mdev_max_us = self.rttvar4_us;
            self.rtt_seq = snd_nxt;
        }
        self.srtt8_us = srtt.max(1) as u64;
        // __tcp_set_rto: usecs_to_jiffies((srtt_us >> 3) + rttvar_us); tcp_bound_rto.
        let rto_us = (self.srtt8_us >> 3) + self.rttvar4_us;
        let rto = Dur::from_jiffies(usecs_to_jiffies(rto_us, self.hz), self.hz);
        self.rto = rto.min(TCP_RTO_MAX);
        self.backoff = 0;
    }

    /// `tcp_update_rtt_min`: feed the windowed min filter (`now_jiffies`: `tcp_jiffies32`
    /// at `hz`); the window is `sysctl_tcp_min_rtt_wlen * HZ` jiffies.
    pub fn update_min_rtt(&mut self, now_jiffies: u32, rtt_us: u32) {
        // A zero sample is stored as jiffies_to_usecs(1) (1000 us at HZ = 1000), as the
        // kernel does.
        let v = if rtt_us == 0 {
            jiffies_to_usecs(1, self.hz) as u32
        } else {
            rtt_us
        };
        self.min_rtt
            .running_min(MIN_RTT_WLEN_SECS * self.hz, now_jiffies, v);
    }

    /// The RTO with backoff applied: `min(rto << backoff, TCP_RTO_MAX)`.
    pub fn rto(&self) -> Dur {
        let shifted = self
            .rto
            .ns()
            .checked_shl(self.backoff.min(40))
            .unwrap_or(u64::MAX);
        Dur(shifted.min(TCP_RTO_MAX.ns()))
    }
    /// An RTO expired: back off (RFC 6298 (5.5)).
    pub fn on_timeout(&mut self) {
        self.backoff += 1;
    }
    /// `tcp_rto_min_us()`.
    pub fn rto_min_us(&self) -> u64 {
        self.rto_min_us
    }
    /// Smoothed RTT in us (`tp->srtt_us >> 3`).
    pub fn srtt_us(&self) -> u32 {
        (self.srtt8_us >> 3).min(u32::MAX as u64) as u32
    }
    /// Smoothed RTT in ns (8 * SRTT us * 1000 / 8).
    pub fn srtt_ns(&self) -> u64 {
        self.srtt8_us * 125
    }
    /// The RTO's variance term as an RTTVAR in ns (`rttvar_us` / 4).
    pub fn rttvar_ns(&self) -> u64 {
        self.rttvar4_us * 250
    }
    /// The mean deviation in ns (`mdev_us` / 4).
    pub fn mdev_ns(&self) -> u64 {
        self.mdev4_us * 250
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_and_second_samples_as_tcp_rtt_estimator() {
        let mut e = RttEstimator::new();
        assert_eq!(e.rto(), Dur::from_secs(1)); // TCP_TIMEOUT_INIT before any sample
        e.on_sample(Dur::from_ms(100), 1, 10);
        // srtt_us = 8 * 100_000; mdev_us = 2 * 100_000 = 200_000 (4 * 50 ms);
        // rttvar_us = max(200_000, rto_min 200_000); RTO = 100 + 200 = 300 ms.
        assert_eq!(
            (e.srtt_ns(), e.mdev_ns(), e.rttvar_ns()),
            (100_000_000, 50_000_000, 50_000_000)
        );
        assert_eq!(e.rto(), Dur::from_ms(300));
        e.on_sample(Dur::from_ms(60), 2, 10);
        // m = 60_000 - 100_000 = -40_000: srtt_us = 800_000 - 40_000 = 760_000 (95 ms);
        // |m| - mdev/4 = 40_000 - 50_000 = -10_000 (not > 0: no damping);
        // mdev_us = 200_000 - 10_000 = 190_000 (47.5 ms, as RFC 6298's RTTVAR);
        // rttvar_us stays 200_000 (= mdev_max); RTO = 95 + 200 = 295 ms.
        assert_eq!(
            (e.srtt_ns(), e.mdev_ns(), e.rttvar_ns()),
            (95_000_000, 47_500_000, 50_000_000)
        );
        assert_eq!(e.rto(), Dur::from_ms(295));
    }

    #[test]
    fn a_route_rto_min_floors_the_variance_term() {
        // rto_min 1 s (ns-3's MinRto default, as `ip route ... rto_min 1000`): first
        // sample 100 ms gives mdev_us 200_000 < 1_000_000, so rttvar_us = 1_000_000 and
        // RTO = 100 + 1000 = 1100 ms (Linux's default floor gives 300 ms above).
        let mut e = RttEstimator::with_rto_min(Dur::from_secs(1));
        e.on_sample(Dur::from_ms(100), 1, 10);
        assert_eq!(e.rto(), Dur::from_ms(1100));
    }

    #[test]
    fn rto_uses_variance_when_above_the_linux_floor() {
        let mut e = RttEstimator::new();
        e.on_sample(Dur::from_ms(400), 1, 10);
        // srtt 400 ms, mdev_us = 800_000 > rto_min: RTO = 400 + 800 = 1200 ms.
        assert_eq!(e.rto(), Dur::from_ms(1200));
    }

    #[test]
    fn a_falling_rtt_moves_the_deviation_by_one_thirty_second() {
        let mut e = RttEstimator::new();
        e.on_sample(Dur::from_ms(100), 1, 10); // srtt_us 800_000, mdev_us 200_000
        e.on_sample(Dur::from_ms(20), 2, 10);
        // m = 20_000 - 100_000 = -80_000: srtt_us = 720_000 (90 ms); |m| - mdev/4 =
        // 80_000 - 50_000 = 30_000 > 0, >> 3 = 3_750: mdev_us = 203_750 (RFC 6298 would
        // give 4 * (37.5 + 20) = 230 ms). It exceeds mdev_max 200_000, so rttvar_us =
        // 203_750; RTO = 90_000 + 203_750 = 293_750 us -> 294 jiffies (ms, rounded up).
        assert_eq!(e.mdev_ns(), 50_937_500);
        assert_eq!(e.rto(), Dur::from_ms(294));
    }

    #[test]
    fn rttvar_holds_the_round_maximum_and_decays_a_quarter_per_round() {
        let mut e = RttEstimator::new();
        e.on_sample(Dur::from_ms(100), 1, 10); // rtt_seq = 10
        e.on_sample(Dur::from_ms(300), 2, 11);
        // m = 300_000 - 100_000 = 200_000: srtt_us = 1_000_000 (125 ms);
        // mdev_us = 200_000 + (200_000 - 50_000) = 350_000 -> mdev_max, rttvar_us 350_000;
        // RTO = 125 + 350 = 475 ms.
        assert_eq!(e.rto(), Dur::from_ms(475));
        e.on_sample(Dur::from_ms(125), 11, 20);
        // m = 0: mdev_us = 350_000 - 87_500 = 262_500 (RFC 6298 would now give RTO
        // 125 + 262.5 = 387.5 ms). snd_una 11 > rtt_seq 10 ends the round: mdev_max
        // 350_000 is not below rttvar_us 350_000, no decay; mdev_max = 200_000,
        // rtt_seq = 20. RTO stays 125 + 350 = 475 ms.
        assert_eq!(e.rto(), Dur::from_ms(475));
        e.on_sample(Dur::from_ms(125), 21, 30);
        // mdev_us = 262_500 - 65_625 = 196_875; the round ends again: rttvar_us -=
        // (350_000 - 200_000) >> 2 = 37_500 -> 312_500; RTO = 125_000 + 312_500 =
        // 437_500 us -> 438 ms.
        assert_eq!(e.rttvar_ns(), 78_125_000);
        assert_eq!(e.rto(), Dur::from_ms(438));
    }

    /// The RTO is whole jiffies of the simulated CONFIG_HZ. A first sample of 41 ms:
    /// srtt 41 ms, rttvar max(2 x 41, 200) = 200 ms, RTO 241 000 us. HZ = 1000: 241
    /// jiffies = 241 ms. HZ = 250: ceil(241 000 x 250 / 10^6) = ceil(60.25) = 61 jiffies
    /// of 4 ms = 244 ms. HZ = 300: ceil(72.3) = 73 jiffies = 73 x 10^9 / 300 ns.
    #[test]
    fn rto_is_rounded_up_to_jiffies_of_the_simulated_hz() {
        for (hz, want) in [
            (1000, Dur::from_ms(241)),
            (250, Dur::from_ms(244)),
            (300, Dur(243_333_333)),
        ] {
            let mut e = RttEstimator::new();
            e.hz = hz;
            e.on_sample(Dur::from_ms(41), 1, 10);
            assert_eq!(e.rto(), want, "hz {hz}");
        }
        // A zero sample enters the min filter as jiffies_to_usecs(1): 4 ms at 250 Hz.
        let mut e = RttEstimator::new();
        e.hz = 250;
        e.update_min_rtt(0, 0);
        assert_eq!(e.min_rtt.get(), 4_000);
    }

    #[test]
    fn backoff_doubles_until_a_new_sample_and_caps_at_120_s() {
        let mut e = RttEstimator::new();
        e.on_sample(Dur::from_ms(40), 1, 10); // RTO = 40 + 200 = 240 ms
        e.on_timeout();
        e.on_timeout();
        assert_eq!(e.rto(), Dur::from_ms(960)); // 240 * 4
        for _ in 0..20 {
            e.on_timeout();
        }
        assert_eq!(e.rto(), TCP_RTO_MAX);
        e.on_sample(Dur::from_ms(40), 2, 10);
        // m = 0: mdev_us = 80_000 - 20_000 = 60_000 < rttvar_us 200_000: RTO = 240 ms.
        assert_eq!(e.rto(), Dur::from_ms(240));
    }

    #[test]
    fn timestamp_samples_are_whole_milliseconds_and_at_least_min_delta() {
        // Sent at clock 1_000_040, echoed back read at 1_000_083: 43 ms.
        assert_eq!(tcp_rtt_tsopt_us(1_000_083, 1_000_040, 1), 43_000);
        // Same millisecond: 0 ms counts as min_delta.
        assert_eq!(tcp_rtt_tsopt_us(1_000_040, 1_000_040, 1), 1_000);
        assert_eq!(tcp_rtt_tsopt_us(1_000_040, 1_000_040, 0), 0);
        // A TSecr one tick ahead of the clock wraps to ~2^32 ms: no sample.
        assert_eq!(tcp_rtt_tsopt_us(1_000_040, 1_000_041, 1), -1);
        // The bound INT_MAX / 1000 = 2_147_483 ms.
        assert_eq!(tcp_rtt_tsopt_us(2_147_482, 0, 1), 2_147_482_000);
        assert_eq!(tcp_rtt_tsopt_us(2_147_483, 0, 1), -1);
    }

    #[test]
    fn min_rtt_keeps_the_minimum_and_stores_a_zero_sample_as_one_jiffy() {
        let mut e = RttEstimator::new();
        // Before any sample the filter holds ~0U (tcp_init_sock's minmax_reset).
        assert_eq!(e.min_rtt.get(), u32::MAX);
        e.update_min_rtt(0, 40_000);
        e.update_min_rtt(100, 50_000); // larger, inside the 300 s window: 40 ms stays
        assert_eq!(e.min_rtt.get(), 40_000);
        // A 0 us sample is taken as jiffies_to_usecs(1) = 1000 us, a new minimum.
        e.update_min_rtt(200, 0);
        assert_eq!(e.min_rtt.get(), 1000);
    }
}
