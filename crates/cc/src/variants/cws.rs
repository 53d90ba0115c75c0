//! `bbr-cws`: BBR Congestion Window Scaling (Song, Kim and Cho, Electronics 9(5):862,
//! 2020; `shared/seeds/002_*.txt`).
//!
//! Model: BBR treats a loss as a sign that its operating point is wrong. On entering
//! Recovery (Algorithm 1 lines 1-8) it sets `upper_cwnd` to the current inflight and
//! cuts cwnd to one third of it, with packet conservation until Recovery ends (lines
//! 9-11); unlike the kernel it does not restore the prior cwnd afterwards. Outside
//! conservation, cwnd grows by `acked` up to `upper_cwnd = target_cwnd x
//! upper_scaling_factor` (lines 18-21). `bbr_set_upper_scaling_factor` (lines 22-37),
//! run after `bbr_set_cwnd` on every ACK, then judges the loss: if no lower RTprop was
//! measured within 3 RTTs of it, the buffer is shallow and BBR was sending more than the
//! link holds, so the factor is multiplied by beta = 0.9 (floor 0.2); if a lower RTprop
//! was seen, the new RTprop alone fixes the cap (Section 4.2 (1)). After 3 RTTs without
//! any loss action the factor grows by delta = 0.01, capped at 1 (Section 4.2 (2)).
//!
//! Follows: Algorithm 1 lines 1-45, Sections 4.1 and 4.2. Constants: beta 0.9 and delta
//! 0.01 (Section 4.2), floor 0.2 and cap 1 (Algorithm 1 lines 28-29, 35-36), the 3-RTT
//! wait (lines 24, 33).
//!
//! Ambiguities resolved:
//! - Section 4.2 (1) says the factor is *reset to 1* when a lower RTprop arrives within
//!   the 3 RTTs; Algorithm 1 leaves it unchanged in that case. We follow the prose by
//!   default (parameter `reset_on_lower_rtprop`, default true).
//! - "current_rtt" (lines 24, 33) is taken as the smoothed RTT (`srtt_us`); the latest
//!   sample is missing on some ACKs.
//! - `is_rtt_min_updated` is set when an RTT sample is strictly below the min_rtt
//!   estimate ("a lower RTprop", Section 4.2), not when the 10 s filter merely expires.
//! - The cut (lines 5-8) sits inside `if loss_detected_time == 0`: a second Recovery
//!   entry while a loss is still being judged neither cuts nor conserves.
//! - Floating-point factors: the paper gives real numbers (0.9, 0.01, 0.2) and no
//!   fixed-point representation; `upper_cwnd` is rounded down to whole packets.

/// beta: multiplicative decrease of upper_scaling_factor (Section 4.2 (1), "default: 0.9").
pub const CWS_BETA: f64 = 0.9;
/// delta: additive increase after 3 loss-free RTTs (Section 4.2 (2): "set to 0.01").
pub const CWS_DELTA: f64 = 0.01;
/// Floor of upper_scaling_factor (Algorithm 1 lines 28-29).
pub const CWS_MIN_FACTOR: f64 = 0.2;
/// Cap of upper_scaling_factor (Algorithm 1 lines 35-36; Section 4.2: "fixed to 1").
pub const CWS_MAX_FACTOR: f64 = 1.0;
/// RTTs to wait for a lower RTprop after a loss, and between increases (lines 24, 33).
pub const CWS_WAIT_RTTS: u64 = 3;
/// cwnd on entering Recovery is inflight / 3 (line 7; Section 4.1: "by more than half").
pub const CWS_CUT_DIVISOR: u32 = 3;

/// Tunables (Section 4.2 defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CwsParams {
    pub beta: f64,
    pub delta: f64,
    pub min_factor: f64,
    pub reset_on_lower_rtprop: bool,
}

impl Default for CwsParams {
    fn default() -> Self {
        CwsParams { beta: CWS_BETA, delta: CWS_DELTA, min_factor: CWS_MIN_FACTOR, reset_on_lower_rtprop: true }
    }
}

/// The variables Algorithm 1 adds to BBR.
#[derive(Clone, Debug, PartialEq)]
pub struct UpperScaling {
    pub upper_scaling_factor: f64,
    /// `loss_detected_time` (us); None stands for the paper's 0.
    pub loss_detected_us: Option<u64>,
    pub is_rtt_min_updated: bool,
    /// `last_action_time` (us).
    pub last_action_us: u64,
    /// `upper_cwnd` (packets): inflight at the loss during conservation, else
    /// target_cwnd x factor.
    pub upper_cwnd: u32,
}

impl Default for UpperScaling {
    fn default() -> Self {
        UpperScaling {
            upper_scaling_factor: CWS_MAX_FACTOR,
            loss_detected_us: None,
            is_rtt_min_updated: false,
            last_action_us: 0,
            upper_cwnd: u32::MAX,
        }
    }
}

impl UpperScaling {
    /// Algorithm 1 lines 2-8, on the ACK where the CA state becomes Recovery. Returns the
    /// new cwnd (inflight / 3) if this loss starts a new judgement, None otherwise.
    pub fn on_enter_recovery(&mut self, now_us: u64, inflight: u32) -> Option<u32> {
        if self.loss_detected_us.is_some() {
            return None;
        }
        self.loss_detected_us = Some(now_us);
        self.upper_cwnd = inflight;
        Some(inflight / CWS_CUT_DIVISOR)
    }

    /// Line 45: BBR measured an RTT below its min_rtt estimate.
    pub fn on_lower_rtprop(&mut self) {
        self.is_rtt_min_updated = true;
    }

    /// Line 19: `upper_cwnd = target_cwnd x upper_scaling_factor` (outside conservation).
    pub fn set_upper_cwnd(&mut self, target_cwnd: u32) -> u32 {
        self.upper_cwnd = (f64::from(target_cwnd) * self.upper_scaling_factor) as u32;
        self.upper_cwnd
    }

    /// Lines 22-37: `bbr_set_upper_scaling_factor`, once per ACK after `bbr_set_cwnd`.
    pub fn bbr_set_upper_scaling_factor(&mut self, now_us: u64, current_rtt_us: u64, p: &CwsParams) {
        let wait = CWS_WAIT_RTTS * current_rtt_us;
        if let Some(loss_us) = self.loss_detected_us {
            if now_us > loss_us + wait {
                if !self.is_rtt_min_updated {
                    self.upper_scaling_factor = (self.upper_scaling_factor * p.beta).max(p.min_factor);
                    self.last_action_us = now_us;
                } else if p.reset_on_lower_rtprop {
                    self.upper_scaling_factor = CWS_MAX_FACTOR;
                }
                self.loss_detected_us = None;
                self.is_rtt_min_updated = false;
            }
        } else if now_us > self.last_action_us + wait {
            self.upper_scaling_factor = (self.upper_scaling_factor + p.delta).min(CWS_MAX_FACTOR);
            self.last_action_us = now_us;
        }
    }
}

/// Line 21: `cwnd = min(cwnd + acked, upper_cwnd)`.
pub fn cws_grow_cwnd(cwnd: u32, acked: u32, upper_cwnd: u32) -> u32 {
    cwnd.saturating_add(acked).min(upper_cwnd)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTT: u64 = 10_000; // 10 ms: the 3-RTT wait is 30 ms

    fn approx(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn cws_recovery_entry_cuts_cwnd_to_a_third_of_inflight() {
        let mut u = UpperScaling::default();
        // inflight 90 -> cwnd 30, upper_cwnd 90 while conserving.
        assert_eq!(u.on_enter_recovery(1_000, 90), Some(30));
        assert_eq!(u.upper_cwnd, 90);
        // A second Recovery entry during the 3-RTT judgement does nothing.
        assert_eq!(u.on_enter_recovery(2_000, 60), None);
        assert_eq!(u.loss_detected_us, Some(1_000));
        // Conservation growth: 30 + 1 acked, capped by 90.
        assert_eq!(cws_grow_cwnd(30, 1, u.upper_cwnd), 31);
        assert_eq!(cws_grow_cwnd(90, 2, u.upper_cwnd), 90);
    }

    #[test]
    fn cws_no_lower_rtprop_within_three_rtts_scales_factor_by_beta() {
        let mut u = UpperScaling::default();
        let p = CwsParams::default();
        u.on_enter_recovery(100_000, 90);
        // At loss + 30 ms exactly: not yet (strict >).
        u.bbr_set_upper_scaling_factor(130_000, RTT, &p);
        assert!(approx(u.upper_scaling_factor, 1.0));
        // 1 us later: 1.0 x 0.9 = 0.9, judgement cleared, last action now.
        u.bbr_set_upper_scaling_factor(130_001, RTT, &p);
        assert!(approx(u.upper_scaling_factor, 0.9));
        assert_eq!((u.loss_detected_us, u.last_action_us), (None, 130_001));
        // upper_cwnd = target 100 x 0.9 = 90.
        assert_eq!(u.set_upper_cwnd(100), 90);
    }

    #[test]
    fn cws_factor_never_drops_below_point_two() {
        let mut u = UpperScaling { upper_scaling_factor: 0.21, ..Default::default() };
        let p = CwsParams::default();
        u.on_enter_recovery(0, 50);
        // 0.21 x 0.9 = 0.189 -> floor 0.2.
        u.bbr_set_upper_scaling_factor(40_000, RTT, &p);
        assert!(approx(u.upper_scaling_factor, 0.2));
    }

    #[test]
    fn cws_lower_rtprop_within_three_rtts_resets_factor_to_one() {
        let mut u = UpperScaling { upper_scaling_factor: 0.5, ..Default::default() };
        let p = CwsParams::default();
        u.on_enter_recovery(0, 50);
        u.on_lower_rtprop();
        u.bbr_set_upper_scaling_factor(40_000, RTT, &p);
        assert!(approx(u.upper_scaling_factor, 1.0));
        // Algorithm 1 read literally leaves it at 0.5.
        let mut lit = UpperScaling { upper_scaling_factor: 0.5, ..Default::default() };
        let p_lit = CwsParams { reset_on_lower_rtprop: false, ..CwsParams::default() };
        lit.on_enter_recovery(0, 50);
        lit.on_lower_rtprop();
        lit.bbr_set_upper_scaling_factor(40_000, RTT, &p_lit);
        assert!(approx(lit.upper_scaling_factor, 0.5));
        assert!(!lit.is_rtt_min_updated && lit.loss_detected_us.is_none());
    }

    #[test]
    fn cws_three_loss_free_rtts_add_delta_up_to_one() {
        let mut u = UpperScaling { upper_scaling_factor: 0.9, last_action_us: 0, ..Default::default() };
        let p = CwsParams::default();
        u.bbr_set_upper_scaling_factor(30_000, RTT, &p); // not > 30 ms
        assert!(approx(u.upper_scaling_factor, 0.9));
        u.bbr_set_upper_scaling_factor(30_001, RTT, &p); // 0.9 + 0.01
        assert!(approx(u.upper_scaling_factor, 0.91));
        u.bbr_set_upper_scaling_factor(45_000, RTT, &p); // only 15 ms since: no change
        assert!(approx(u.upper_scaling_factor, 0.91));
        u.bbr_set_upper_scaling_factor(60_002, RTT, &p); // 0.92
        assert!(approx(u.upper_scaling_factor, 0.92));
        let mut top = UpperScaling { upper_scaling_factor: 0.995, ..Default::default() };
        top.bbr_set_upper_scaling_factor(30_001, RTT, &p); // 1.005 capped at 1
        assert!(approx(top.upper_scaling_factor, 1.0));
    }
}
