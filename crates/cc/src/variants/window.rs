//! An exact windowed extreme over the last N packet-timed rounds, for the variants that
//! need a "min RTT over 3 RTTs" (BBR-ACW Algorithm 1 line 4) or "max / min delivery rate"
//! (BBR-ACW Eq. 1) window. The kernel's `minmax` keeps three samples and approximates;
//! the papers define exact windows, so this keeps one extreme per round.

use std::collections::VecDeque;

/// Which extreme the window keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extreme {
    Min,
    Max,
}

/// The min or max of the samples taken in the last `rounds` rounds (the current one
/// included).
#[derive(Clone, Debug, PartialEq)]
pub struct RoundWindow {
    extreme: Extreme,
    rounds: u64,
    /// (round, best sample of that round), oldest first.
    per_round: VecDeque<(u64, f64)>,
}

impl RoundWindow {
    pub fn new(extreme: Extreme, rounds: u32) -> Self {
        RoundWindow {
            extreme,
            rounds: u64::from(rounds.max(1)),
            per_round: VecDeque::new(),
        }
    }

    fn better(&self, a: f64, b: f64) -> bool {
        match self.extreme {
            Extreme::Min => a < b,
            Extreme::Max => a > b,
        }
    }

    /// Add `value` observed in packet-timed round `round` (rounds never go backwards).
    pub fn update(&mut self, round: u64, value: f64) {
        match self.per_round.back_mut() {
            Some((r, best)) if *r == round => {
                if self.extreme == Extreme::Min && value < *best
                    || self.extreme == Extreme::Max && value > *best
                {
                    *best = value;
                }
            }
            _ => self.per_round.push_back((round, value)),
        }
        self.expire(round);
    }

    /// Forget rounds older than the window as seen from `round`.
    pub fn expire(&mut self, round: u64) {
        while let Some(&(r, _)) = self.per_round.front() {
            if r + self.rounds <= round {
                self.per_round.pop_front();
            } else {
                break;
            }
        }
    }

    /// The extreme over the window, or None if no sample is in it.
    pub fn get(&self) -> Option<f64> {
        let mut it = self.per_round.iter().map(|&(_, v)| v);
        let first = it.next()?;
        Some(it.fold(first, |acc, v| if self.better(v, acc) { v } else { acc }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_window_forgets_rounds_older_than_three() {
        let mut w = RoundWindow::new(Extreme::Min, 3);
        w.update(1, 10.0);
        w.update(2, 12.0);
        w.update(3, 11.0);
        assert_eq!(w.get(), Some(10.0));
        // Round 4: rounds 2, 3, 4 remain; round 1's 10.0 is gone.
        w.update(4, 13.0);
        assert_eq!(w.get(), Some(11.0));
    }

    #[test]
    fn max_window_keeps_best_sample_within_a_round() {
        let mut w = RoundWindow::new(Extreme::Max, 10);
        w.update(5, 3.0);
        w.update(5, 7.0);
        w.update(5, 4.0);
        assert_eq!(w.get(), Some(7.0));
        assert_eq!(RoundWindow::new(Extreme::Max, 10).get(), None);
    }
}
