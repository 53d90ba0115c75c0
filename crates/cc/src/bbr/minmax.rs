//! Windowed max filter: Kathleen Nichols' algorithm as in Linux lib/win_minmax.c
//! (`struct minmax`, `minmax_running_max`, `minmax_reset`, `minmax_get`).
//!
//! Keeps the best, second-best and third-best samples of the window, with the
//! invariant that the n-th best is no older than the (n-1)-th. A new maximum forgets
//! everything older; as time passes without a new maximum, the choices move up so the
//! estimate expires once it is more than `win` time units old. Constant space and time.
//!
//! Time here is whatever the caller counts in: BBR passes its packet-timed round count
//! (`rtt_cnt`), so the window is `bbr_bw_rtts` rounds. Times and values are `u32` with
//! the kernel's wrapping subtraction.
//!
//! Deviations: none.

/// One measurement: `struct minmax_sample`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinmaxSample {
    /// Time the measurement was taken.
    pub t: u32,
    /// Value measured.
    pub v: u32,
}

/// `struct minmax`: the three choices, best first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Minmax {
    pub s: [MinmaxSample; 3],
}

impl Minmax {
    /// `minmax_get`: the current windowed best.
    pub fn get(&self) -> u32 {
        self.s[0].v
    }

    /// `minmax_reset`: forget everything, keep only (t, meas).
    pub fn reset(&mut self, t: u32, meas: u32) -> u32 {
        let val = MinmaxSample { t, v: meas };
        self.s = [val; 3];
        self.s[0].v
    }

    /// `minmax_running_max`: add a measurement taken at `t`; returns the windowed max
    /// over the last `win` time units.
    pub fn running_max(&mut self, win: u32, t: u32, meas: u32) -> u32 {
        let val = MinmaxSample { t, v: meas };
        // A new max, or nothing left in the window: forget earlier samples.
        if val.v >= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, meas);
        }
        if val.v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// `minmax_subwin_update`: as time advances, promote the 2nd and 3rd choices.
    fn subwin_update(&mut self, win: u32, val: MinmaxSample) -> u32 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // A whole window passed without a new best: the 2nd choice becomes the best,
            // the 3rd the 2nd, the new value the 3rd. The 2nd may also be out of the
            // window (the 3rd was checked on entry), so this may happen twice.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter window without a new best: take a 2nd choice from the 2nd quarter.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half a window without a new best: take a 3rd choice from the last half.
            self.s[2] = val;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minmax_new_max_replaces_everything() {
        let mut m = Minmax::default();
        m.reset(0, 100);
        assert_eq!(m.running_max(10, 1, 150), 150);
        assert_eq!(m.s, [MinmaxSample { t: 1, v: 150 }; 3]);
    }

    #[test]
    fn minmax_keeps_max_for_win_rounds_then_falls_to_later_choices() {
        // win = 10. Max 100 at t=0, then 50 at t=3 (> win/4 = 2, so it becomes the 2nd
        // and 3rd choice), then 40 at t=6 (> win/2 = 5 and s[2].t == s[1].t: 3rd choice).
        let mut m = Minmax::default();
        m.reset(0, 100);
        assert_eq!(m.running_max(10, 3, 50), 100);
        assert_eq!(m.running_max(10, 6, 40), 100);
        assert_eq!((m.s[1], m.s[2]), (MinmaxSample { t: 3, v: 50 }, MinmaxSample { t: 6, v: 40 }));
        // t = 10: dt = 10, not > 10, so 100 still counts (the window holds t-10..t).
        assert_eq!(m.running_max(10, 10, 30), 100);
        // t = 11: dt = 11 > 10, 100 expires; 50 (t=3) is 8 old, inside: it is the max.
        assert_eq!(m.running_max(10, 11, 30), 50);
    }

    #[test]
    fn minmax_resets_when_even_third_choice_is_stale() {
        let mut m = Minmax::default();
        m.reset(0, 100);
        // t = 20: 20 - s[2].t(0) = 20 > 10: everything is forgotten, 7 is the max.
        assert_eq!(m.running_max(10, 20, 7), 7);
    }

    #[test]
    fn minmax_equal_value_refreshes_timestamp() {
        let mut m = Minmax::default();
        m.reset(0, 100);
        // val >= s[0].v restarts the window at t=9, so at t=15 the 100 is still valid.
        m.running_max(10, 9, 100);
        assert_eq!(m.running_max(10, 15, 1), 100);
    }
}
