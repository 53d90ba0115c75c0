//! A token-bucket policer: packets that find too few tokens are dropped, never queued.
//!
//! Model (Linux `net/sched/act_police.c`, `tcf_police_act`, the `tc ... police rate R
//! burst B` that BBR's long-term estimator targets): the bucket holds at most `burst`
//! bytes of tokens and fills at `rate`; it starts full. A packet of `len` wire bytes
//! conforms if the bucket holds at least `len` bytes of tokens, which it then spends;
//! otherwise it exceeds and is dropped (the `drop` action), spending nothing. The policer
//! sits at the entrance of a link, before its queue: a conforming packet is queued as
//! usual, an exceeding one never reaches the queue. tcp_bbr.c's comment on its
//! long-term sampling: "token-bucket traffic policers are common (see 'An Internet-Wide
//! Analysis of Traffic Policing', SIGCOMM 2016)".
//!
//! Tokens are counted exactly in integers: one token unit is 1e-9 bit, so `rate` bit/s adds
//! `rate` units per nanosecond.
//!
//! Deviations from act_police: no peak rate (`peakrate`/`mtu` second bucket), no
//! `conform-exceed` actions other than pass/drop, no per-CPU rate estimator; Linux counts
//! tokens in nanoseconds of transmission time at `rate` (`psched_l2t_ns`), which is the
//! same bucket in another unit.

use serde::{Deserialize, Serialize};

use crate::time::SimTime;

/// A policer's configuration.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicerConfig {
    /// Token rate (bit/s), > 0.
    pub rate_bps: u64,
    /// Bucket depth (wire bytes), at least one full packet.
    pub burst_bytes: u64,
}

const UNITS_PER_BIT: u128 = 1_000_000_000;

#[derive(Clone, Debug)]
pub struct Policer {
    rate_bps: u128,
    depth: u128,
    tokens: u128,
    last: SimTime,
    /// Packets dropped for lack of tokens.
    pub drops: u64,
}

impl Policer {
    /// A full bucket at time 0.
    pub fn new(cfg: &PolicerConfig) -> Policer {
        let depth = u128::from(cfg.burst_bytes) * 8 * UNITS_PER_BIT;
        Policer {
            rate_bps: u128::from(cfg.rate_bps),
            depth,
            tokens: depth,
            last: SimTime::ZERO,
            drops: 0,
        }
    }

    /// Does a packet of `bytes` arriving at `now` conform? Spends its tokens if so.
    #[inline(never)] // out of the unpoliced link's hot path
    pub fn conforms(&mut self, now: SimTime, bytes: u32) -> bool {
        let dt = u128::from(now.ns().saturating_sub(self.last.ns()));
        self.last = now;
        self.tokens = (self.tokens + dt * self.rate_bps).min(self.depth);
        let cost = u128::from(bytes) * 8 * UNITS_PER_BIT;
        if self.tokens >= cost {
            self.tokens -= cost;
            true
        } else {
            self.drops += 1;
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_rate() {
        // 12 Mbit/s = one 1500-byte packet per ms; burst 3000 B = two packets.
        let mut p = Policer::new(&PolicerConfig {
            rate_bps: 12_000_000,
            burst_bytes: 3000,
        });
        let t0 = SimTime(0);
        assert!(p.conforms(t0, 1500));
        assert!(p.conforms(t0, 1500));
        assert!(!p.conforms(t0, 1500)); // bucket empty
                                        // 0.5 ms later: 750 bytes of tokens, not enough.
        assert!(!p.conforms(SimTime(500_000), 1500));
        // 1 ms after the start: exactly 1500 bytes.
        assert!(p.conforms(SimTime(1_000_000), 1500));
        // A long pause refills only to the depth: two packets, not more.
        let t = SimTime(1_000_000_000);
        assert!(p.conforms(t, 1500) && p.conforms(t, 1500) && !p.conforms(t, 1500));
        assert_eq!(p.drops, 3);
    }

    #[test]
    fn long_run_rate_is_the_token_rate() {
        // Offer 1500-byte packets every 0.1 ms (120 Mbit/s) for 1 s to a 12 Mbit/s policer
        // with a 15 000-byte bucket: 1000 packets earned by the rate + 10 in the bucket.
        let mut p = Policer::new(&PolicerConfig {
            rate_bps: 12_000_000,
            burst_bytes: 15_000,
        });
        let passed = (0..10_000u64)
            .filter(|i| p.conforms(SimTime(i * 100_000), 1500))
            .count();
        // Tokens earned over [0, 0.9999 s] = 999.9 packets, + 10 initial -> 1009.
        assert_eq!(passed, 1009);
    }
}
