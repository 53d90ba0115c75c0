//! One seeded RNG per run with independent named sub-streams: a component asks for
//! `stream("loss/bottleneck")` and gets a generator seeded from (run seed, stable hash of
//! the name), so adding a random draw in one component never shifts another's sequence.
//!
//! The generator is xoshiro256++ (Blackman & Vigna), seeded through SplitMix64; the name
//! hash is 64-bit FNV-1a, which is stable across platforms and Rust versions (unlike
//! `std::hash`). Not cryptographic, and need not be: it only has to be fast, well mixed and
//! reproducible.

/// 64-bit FNV-1a of `s`.
pub fn stable_hash(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The run's root: hands out named streams.
#[derive(Clone, Copy, Debug)]
pub struct RunRng {
    seed: u64,
}

impl RunRng {
    pub fn new(seed: u64) -> Self {
        RunRng { seed }
    }
    /// The independent stream called `name`.
    pub fn stream(&self, name: &str) -> Rng {
        let mut sm = self.seed ^ stable_hash(name).rotate_left(17);
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Rng { s }
    }
}

/// xoshiro256++.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }
    /// Uniform in [0, 1) with 53 bits of precision.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// A Bernoulli draw with probability `p`. `p == 0` draws nothing, so a lossless link
    /// consumes no randomness.
    pub fn bernoulli(&mut self, p: f64) -> bool {
        p > 0.0 && self.next_f64() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_reference_values() {
        // Published FNV-1a 64 test vectors: "" and "a".
        assert_eq!(stable_hash(""), 0xcbf29ce484222325);
        assert_eq!(stable_hash("a"), 0xaf63dc4c8601ec8c);
    }

    #[test]
    fn same_seed_and_name_give_the_same_stream() {
        let r = RunRng::new(7);
        let a: Vec<u64> = (0..5)
            .map({
                let mut s = r.stream("x");
                move |_| s.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..5)
            .map({
                let mut s = r.stream("x");
                move |_| s.next_u64()
            })
            .collect();
        assert_eq!(a, b);
    }

    #[test]
    fn different_names_and_seeds_give_different_streams() {
        let r = RunRng::new(7);
        assert_ne!(r.stream("x").next_u64(), r.stream("y").next_u64());
        assert_ne!(
            RunRng::new(8).stream("x").next_u64(),
            r.stream("x").next_u64()
        );
    }

    #[test]
    fn bernoulli_frequency_is_close_to_p() {
        let mut s = RunRng::new(1).stream("loss");
        let n = 100_000;
        let hits = (0..n).filter(|_| s.bernoulli(0.01)).count();
        // Expect 1000, std dev sqrt(n p (1-p)) = 31.5; allow 5 sigma.
        assert!((hits as i64 - 1000).abs() < 160, "{hits}");
    }
}
