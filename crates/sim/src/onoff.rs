//! On/off periods, shared by constant-rate sources (source.rs) and on/off TCP flows
//! (world/onoff.rs): on and off periods alternate, starting with an on period; their
//! lengths are fixed, or exponential with the configured means (as ns-3's
//! `OnOffApplication` with `ExponentialRandomVariable` on/off times), drawn from one named
//! RNG stream per source or flow so that a run stays a function of (config, seed).
//!
//! Deviations: an exponential draw is rounded to whole ns and at least 1 ns.

use crate::contract::OnOffConfig;
use crate::rng::Rng;

pub struct Periods {
    cfg: OnOffConfig,
    rng: Rng,
}

impl Periods {
    pub fn new(cfg: OnOffConfig, rng: Rng) -> Periods {
        Periods { cfg, rng }
    }

    fn draw(&mut self, mean: u64) -> u64 {
        if !self.cfg.exponential {
            return mean;
        }
        // Inverse transform: -mean * ln(1 - U), U in [0, 1).
        let u = self.rng.next_f64();
        ((-(1.0 - u).ln()) * mean as f64).round().max(1.0) as u64
    }

    /// The length (ns) of the next on period.
    pub fn on(&mut self) -> u64 {
        self.draw(self.cfg.on_ns)
    }

    /// The length (ns) of the next off period.
    pub fn off(&mut self) -> u64 {
        self.draw(self.cfg.off_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RunRng;

    #[test]
    fn exponential_periods_have_the_configured_means() {
        // 100 000 draws of mean 1 ms: the sample mean's sd is 1 ms / sqrt(1e5) = 0.32 %,
        // so within 1.5 % (4.7 sd).
        let cfg = OnOffConfig {
            on_ns: 1_000_000,
            off_ns: 3_000_000,
            exponential: true,
        };
        let mut p = Periods::new(cfg, RunRng::new(7).stream("test"));
        let n = 100_000;
        let (mut on, mut off) = (0u64, 0u64);
        for _ in 0..n {
            on += p.on();
            off += p.off();
        }
        assert!((on as f64 / n as f64 / 1e6 - 1.0).abs() < 0.015);
        assert!((off as f64 / n as f64 / 3e6 - 1.0).abs() < 0.015);
        let mut fixed = Periods::new(
            OnOffConfig {
                exponential: false,
                ..cfg
            },
            RunRng::new(7).stream("test"),
        );
        assert_eq!((fixed.on(), fixed.off()), (1_000_000, 3_000_000));
    }
}
