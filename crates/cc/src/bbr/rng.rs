//! The randomness behind PROBE_BW's start phase (`bbr_reset_probe_bw_mode` draws
//! `get_random_u32_below(bbr_cycle_rand)` in the kernel).
//!
//! The kernel draws from the system's entropy pool. Ours is SplitMix64 seeded from the
//! algorithm's `seed` parameter, so a run is a pure function of its spec: the same seed
//! gives the same sequence of start phases. Each flow needs its own seed for the flows
//! to be desynchronised as in the kernel; the engine derives one per flow from the run
//! seed (sub-stream named after the flow) when the spec leaves `seed` unset.
//!
//! Deviation: `get_random_u32_below` rejects a small biased sliver of draws; we keep the
//! multiply-high reduction without the rejection (bias below 2^-29 for n = 7).

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and every seed is a good seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CycleRng {
    state: u64,
}

impl CycleRng {
    pub fn new(seed: u64) -> Self {
        CycleRng { state: seed }
    }

    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `get_random_u32`: the high half of the next draw.
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// `get_random_u32_below(n)`: uniform in [0, n).
    pub fn u32_below(&mut self, n: u32) -> u32 {
        let r = self.next_u32();
        ((u64::from(r) * u64::from(n)) >> 32) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_draws_different_seed_different_draws() {
        let draw = |seed| {
            let mut r = CycleRng::new(seed);
            (0..32).map(|_| r.u32_below(7)).collect::<Vec<_>>()
        };
        assert_eq!(draw(1), draw(1));
        assert_ne!(draw(1), draw(2));
        assert!(draw(3).iter().all(|&x| x < 7));
    }

    #[test]
    fn every_phase_offset_is_reachable() {
        let mut r = CycleRng::new(42);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            seen[r.u32_below(7) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }
}
