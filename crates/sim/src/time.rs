//! Typed units: simulated time as integer nanoseconds, rates in bit/s. No floating-point
//! clock anywhere in the engine; conversions to f64 happen only for recording.

use std::ops::{Add, AddAssign, Sub};

/// A point in simulated time, nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub u64);

pub const NS_PER_US: u64 = 1_000;
pub const NS_PER_MS: u64 = 1_000_000;
pub const NS_PER_S: u64 = 1_000_000_000;

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);
    pub fn ns(self) -> u64 {
        self.0
    }
    /// Microseconds, truncated: the kernel's `tcp_mstamp` granularity.
    pub fn us(self) -> u64 {
        self.0 / NS_PER_US
    }
    pub fn secs_f64(self) -> f64 {
        self.0 as f64 / NS_PER_S as f64
    }
    /// Time elapsed since `earlier` (zero if `earlier` is later).
    pub fn since(self, earlier: SimTime) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
}

impl Dur {
    pub const ZERO: Dur = Dur(0);
    pub const fn from_us(us: u64) -> Dur {
        Dur(us * NS_PER_US)
    }
    pub const fn from_ms(ms: u64) -> Dur {
        Dur(ms * NS_PER_MS)
    }
    /// `j` jiffies of a kernel built with CONFIG_HZ = `hz` (a tick is 1 s / hz).
    pub const fn from_jiffies(j: u64, hz: u32) -> Dur {
        Dur(j * NS_PER_S / hz as u64)
    }
    pub const fn from_secs(s: u64) -> Dur {
        Dur(s * NS_PER_S)
    }
    pub fn ns(self) -> u64 {
        self.0
    }
    pub fn us(self) -> u64 {
        self.0 / NS_PER_US
    }
}

impl Add<Dur> for SimTime {
    type Output = SimTime;
    fn add(self, d: Dur) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Dur> for SimTime {
    fn add_assign(&mut self, d: Dur) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<SimTime> for SimTime {
    type Output = Dur;
    fn sub(self, o: SimTime) -> Dur {
        self.since(o)
    }
}
impl Add for Dur {
    type Output = Dur;
    fn add(self, o: Dur) -> Dur {
        Dur(self.0.saturating_add(o.0))
    }
}

/// A link or pacing rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rate(pub u64);

impl Rate {
    pub fn bps(self) -> u64 {
        self.0
    }
    /// `sk_pacing_rate`-style bytes per second to a Rate.
    pub fn from_bytes_per_sec(bytes_per_sec: u64) -> Rate {
        Rate(bytes_per_sec.saturating_mul(8))
    }
    /// Serialization time of `bytes` at this rate, rounded up to whole nanoseconds so that
    /// a link never transmits faster than its rate.
    pub fn tx_time(self, bytes: u64) -> Dur {
        debug_assert!(self.0 > 0);
        // Every packet takes this path on every link: in 64 bits when the product fits
        // (any `bytes` below 2.3 GB), since a 128-bit division is a library call
        // (`__udivti3`, 2 % of a 2-flow run's time). The same quotient either way.
        match bytes.checked_mul(8 * NS_PER_S) {
            Some(bits) => Dur(bits.div_ceil(self.0)),
            None => Dur((bytes as u128 * 8 * NS_PER_S as u128).div_ceil(self.0 as u128) as u64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_of_a_full_packet_at_10_mbps_is_1_2_ms() {
        // 1500 B * 8 = 12000 bit; 12000 / 10e6 bit/s = 1.2 ms = 1_200_000 ns.
        assert_eq!(Rate(10_000_000).tx_time(1500), Dur(1_200_000));
    }

    #[test]
    fn tx_time_rounds_up() {
        // 1 byte at 3 bit/s = 8/3 s = 2_666_666_666.67 ns -> 2_666_666_667.
        assert_eq!(Rate(3).tx_time(1), Dur(2_666_666_667));
    }

    #[test]
    fn simtime_arithmetic_saturates() {
        assert_eq!(SimTime(5) - SimTime(9), Dur(0));
        assert_eq!(SimTime(u64::MAX) + Dur(1), SimTime(u64::MAX));
        assert_eq!(SimTime(1_500_000).us(), 1_500);
    }
}
