//! Windowed min/max filter: Kathleen Nichols' algorithm as in Linux lib/win_minmax.c
//! (`struct minmax`, `minmax_reset`, `minmax_get`, `minmax_running_max`,
//! `minmax_running_min`, and the shared `minmax_subwin_update`).
//!
//! Keeps the best, second-best and third-best samples of the window, with the
//! invariant that the n-th best is no older than the (n-1)-th. A new best forgets
//! everything older; as time passes without a new best, the choices move up so the
//! estimate expires once it is more than `win` time units old. Constant space and time.
//!
//! Time is whatever the caller counts in: BBR's bandwidth filter passes its packet-timed
//! round count (`rtt_cnt`, window `bbr_bw_rtts` rounds, `running_max`); the simulator's
//! `tcp_update_rtt_min` passes jiffies (window `tcp_min_rtt_wlen`, `running_min`). Times
//! and values are `u32` with the kernel's wrapping subtraction.
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

/// `struct minmax` (include/linux/win_minmax.h): the three choices, best first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Minmax {
    pub s: [MinmaxSample; 3],
}

impl Minmax {
    /// A filter holding only (t, v): `minmax_reset` on a fresh `struct minmax`.
    pub fn new(t: u32, v: u32) -> Minmax {
        Minmax {
            s: [MinmaxSample { t, v }; 3],
        }
    }

    /// `minmax_get`: the current windowed best.
    pub fn get(&self) -> u32 {
        self.s[0].v
    }

    /// `minmax_reset`: forget everything, keep only (t, meas).
    pub fn reset(&mut self, t: u32, meas: u32) -> u32 {
        *self = Minmax::new(t, meas);
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

    /// `minmax_running_min`: add a measurement taken at `t`; returns the windowed min
    /// over the last `win` time units.
    pub fn running_min(&mut self, win: u32, t: u32, meas: u32) -> u32 {
        let val = MinmaxSample { t, v: meas };
        // A new min, or nothing left in the window: forget earlier samples.
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
        assert_eq!(
            (m.s[1], m.s[2]),
            (MinmaxSample { t: 3, v: 50 }, MinmaxSample { t: 6, v: 40 })
        );
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

    #[test]
    fn min_rtt_tracks_the_minimum_and_forgets_it_after_the_window() {
        // win = 10_000. 50 at t = 0 replaces the initial u32::MAX (<= s[0].v: reset).
        // 70 at t = 100: dt 100 <= win / 4 = 2500, nothing moves. 60 at t = 3000:
        // dt > 2500 and s[1].t == s[0].t: (3000, 60) is the 2nd and 3rd choice.
        // 65 at t = 6000: dt > win / 2 = 5000 and s[2].t == s[1].t: the 3rd choice.
        let mut m = Minmax::new(0, u32::MAX);
        let w = 10_000;
        assert_eq!(m.running_min(w, 0, 50), 50);
        assert_eq!(m.running_min(w, 100, 70), 50);
        assert_eq!(m.running_min(w, 3000, 60), 50);
        assert_eq!(m.running_min(w, 6000, 65), 50);
        // At t = 10_200 the sample from t = 0 is older than the window (dt 10_200 >
        // 10_000): the 2nd choice (3000, 60) becomes the best, 7200 old, inside.
        assert_eq!(m.running_min(w, 10_200, 80), 60);
        assert_eq!(
            m.s,
            [
                MinmaxSample { t: 3000, v: 60 },
                MinmaxSample { t: 6000, v: 65 },
                MinmaxSample { t: 10_200, v: 80 }
            ]
        );
    }

    #[test]
    fn min_filter_promotes_twice_when_the_second_choice_is_stale_too() {
        // win = 10. Min 10 at t = 0; 20 at t = 3 (> win / 4 = 2: 2nd and 3rd choice);
        // 30 at t = 9 (> win / 2 = 5, s[2].t == s[1].t: 3rd choice).
        let mut m = Minmax::new(0, u32::MAX);
        m.running_min(10, 0, 10);
        assert_eq!(m.running_min(10, 3, 20), 10);
        assert_eq!(m.running_min(10, 9, 30), 10);
        // t = 14, 40: 14 - s[2].t 9 = 5 <= 10, no reset; 40 is not <= any choice.
        // dt = 14 > 10: s = [(3,20), (9,30), (14,40)]; 14 - 3 = 11 > 10 again:
        // s = [(9,30), (14,40), (14,40)]. The min is 30.
        assert_eq!(m.running_min(10, 14, 40), 30);
        assert_eq!(
            m.s,
            [
                MinmaxSample { t: 9, v: 30 },
                MinmaxSample { t: 14, v: 40 },
                MinmaxSample { t: 14, v: 40 }
            ]
        );
    }

    #[test]
    fn min_filter_new_sample_at_or_below_the_min_resets_it() {
        // win = 10. 10 at t = 0, 20 at t = 3 (2nd and 3rd choice); 10 again at t = 5:
        // val <= s[0].v restarts the filter at (5, 10), dropping the 20.
        let mut m = Minmax::new(0, u32::MAX);
        m.running_min(10, 0, 10);
        m.running_min(10, 3, 20);
        assert_eq!(m.running_min(10, 5, 10), 10);
        assert_eq!(m.s, [MinmaxSample { t: 5, v: 10 }; 3]);
        // Time wraps as in the kernel: t = 2 after s[2].t = 5 gives 2 - 5 = 2^32 - 3 >
        // win, so the filter forgets everything and keeps even a larger value.
        assert_eq!(m.running_min(10, 2, 99), 99);
    }
}
