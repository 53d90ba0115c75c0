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
//! Diff against tcp_bbr.c (the `BbrVariant` hooks used):
//! - `set_cwnd_to_recover_or_restore`: lines 1-14 (cut to inflight / 3, no restore).
//! - `cap_cwnd`: the `done:` label, line 21's cap by `upper_cwnd`, then line 43
//!   (`bbr_set_upper_scaling_factor` runs after `bbr_set_cwnd`).
//! - `on_ack`: line 45, noticing that `bbr_update_model` lowered RTprop.
//!
//! Deviations:
//! - The paper patched Linux 4.14; our port's target also holds the ACK-aggregation
//!   allowance (parameter `extra_acked`).
//! - cwnd never goes below BBR's 4 packets (`bbr_cwnd_min_target`), even when
//!   target x factor would.
//! - The paper also changed "the amount of reduction in ProbeRTT phase" without saying
//!   how; PROBE_RTT is the kernel's (cwnd 4).
//! - The kernel's `cwnd - losses` and the round-start end of packet conservation are
//!   kept: Algorithm 1 is pseudo-code of a "slightly modified" kernel function.
//!
//! Ambiguities resolved:
//! - Section 4.2 (1) says the factor is *reset to 1* when a lower RTprop arrives within
//!   the 3 RTTs; Algorithm 1 leaves it unchanged in that case. We follow the prose by
//!   default (parameter `reset_on_lower_rtprop`, default true).
//! - "current_rtt" (lines 24, 33) is taken as the smoothed RTT (`srtt_us`); the latest
//!   sample is missing on some ACKs.
//! - `is_rtt_min_updated` is set when an RTT sample is strictly below the min_rtt
//!   estimate ("a lower RTprop", Section 4.2), not when the 10 s filter merely expires.
//! - A lower RTprop counts only while a loss is being judged; one seen before the loss
//!   does not excuse it.
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
        CwsParams {
            beta: CWS_BETA,
            delta: CWS_DELTA,
            min_factor: CWS_MIN_FACTOR,
            reset_on_lower_rtprop: true,
        }
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

    /// Line 45: BBR measured an RTT below its min_rtt estimate. Counted only while a
    /// loss is being judged (Section 4.2 (1): "waits for the lower RTprop measured
    /// during up to 3 RTT"); line 31 clears it when the judgement ends.
    pub fn on_lower_rtprop(&mut self) {
        if self.loss_detected_us.is_some() {
            self.is_rtt_min_updated = true;
        }
    }

    /// Line 19: `upper_cwnd = target_cwnd x upper_scaling_factor` (outside conservation).
    pub fn set_upper_cwnd(&mut self, target_cwnd: u32) -> u32 {
        self.upper_cwnd = (f64::from(target_cwnd) * self.upper_scaling_factor) as u32;
        self.upper_cwnd
    }

    /// Lines 22-37: `bbr_set_upper_scaling_factor`, once per ACK after `bbr_set_cwnd`.
    pub fn bbr_set_upper_scaling_factor(
        &mut self,
        now_us: u64,
        current_rtt_us: u64,
        p: &CwsParams,
    ) {
        let wait = CWS_WAIT_RTTS * current_rtt_us;
        if let Some(loss_us) = self.loss_detected_us {
            if now_us > loss_us + wait {
                if !self.is_rtt_min_updated {
                    self.upper_scaling_factor =
                        (self.upper_scaling_factor * p.beta).max(p.min_factor);
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

// ---------------------------------------------------------------------------------------
// The variant: tcp_bbr.c with Algorithm 1's recovery (lines 1-14), the upper_cwnd cap
// (lines 18-21) and `bbr_set_upper_scaling_factor` after `bbr_set_cwnd` (line 43).

use crate::bbr::recovery::{bbr_deduct_losses, bbr_start_packet_conservation};
use crate::bbr::{Bbr, BbrConfig, BbrFamily, BbrVariant, RecoverOrRestore, BBR_CWND_MIN_TARGET};
use crate::bbr_param_specs;
use crate::helpers::tcp_packets_in_flight;
use crate::ops::{CaState, CcView, InfoField, InfoValue, RateSample};
use crate::registry::{AlgorithmSpec, ParamKind, ParamSpec, Params};

const BETA: ParamSpec = ParamSpec {
    name: "beta",
    kind: ParamKind::Float,
    default: CWS_BETA,
    min: 0.01,
    max: 1.0,
    doc: "factor on upper_scaling_factor when no lower RTprop follows a loss within 3 RTTs; \
          BBR-CWS Section 4.2 (1), default 0.9",
};
const DELTA: ParamSpec = ParamSpec {
    name: "delta",
    kind: ParamKind::Float,
    default: CWS_DELTA,
    min: 0.0,
    max: 1.0,
    doc: "increase of upper_scaling_factor after 3 loss-free RTTs; BBR-CWS Section 4.2 (2), 0.01",
};
const MIN_FACTOR: ParamSpec = ParamSpec {
    name: "min_factor",
    kind: ParamKind::Float,
    default: CWS_MIN_FACTOR,
    min: 0.01,
    max: 1.0,
    doc: "floor of upper_scaling_factor; BBR-CWS Algorithm 1 lines 28-29, 0.2",
};
const RESET_ON_LOWER_RTPROP: ParamSpec = ParamSpec {
    name: "reset_on_lower_rtprop",
    kind: ParamKind::Bool,
    default: 1.0,
    min: 0.0,
    max: 1.0,
    doc: "reset upper_scaling_factor to 1 when a lower RTprop follows a loss (Section 4.2 (1) \
          prose; Algorithm 1 leaves it unchanged)",
};

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "bbr-cws",
    family: crate::registry::Family::Bbr,
    summary: "BBR that cuts cwnd to inflight/3 on loss and scales its cwnd cap by loss history",
    source: "Song, Kim and Cho, BBR-CWS, Electronics 2020, Section 4, Algorithm 1",
    params: bbr_param_specs![BETA, DELTA, MIN_FACTOR, RESET_ON_LOWER_RTPROP],
    build: |p: &Params| {
        let params = CwsParams {
            beta: p.get("beta"),
            delta: p.get("delta"),
            min_factor: p.get("min_factor"),
            reset_on_lower_rtprop: p.get_bool("reset_on_lower_rtprop"),
        };
        Box::new(BbrFamily::new(
            BbrConfig::from_params(p),
            BbrCws::new(params),
        ))
    },
};

/// BBR-CWS's additions to `struct bbr`.
#[derive(Clone, Debug)]
pub struct BbrCws {
    pub params: CwsParams,
    pub scaling: UpperScaling,
    /// BBR's min_rtt on the previous ACK, to see it drop (line 45).
    pub last_min_rtt_us: u32,
    /// The last recovery decision held cwnd by packet conservation.
    pub conserving: bool,
}

impl BbrCws {
    pub fn new(params: CwsParams) -> Self {
        BbrCws {
            params,
            scaling: UpperScaling::default(),
            last_min_rtt_us: u32::MAX,
            conserving: false,
        }
    }
}

impl BbrVariant for BbrCws {
    fn name(&self) -> &'static str {
        "bbr-cws"
    }

    /// Line 45: `is_rtt_min_updated` when `bbr_update_model` lowered RTprop.
    fn on_ack(&mut self, bbr: &Bbr, _tp: &CcView, _rs: &RateSample) {
        if bbr.min_rtt_us < self.last_min_rtt_us && self.last_min_rtt_us != u32::MAX {
            self.scaling.on_lower_rtprop();
        }
        self.last_min_rtt_us = bbr.min_rtt_us;
    }

    /// Lines 1-14 (and line 21 while conserving).
    fn set_cwnd_to_recover_or_restore(
        &mut self,
        bbr: &mut Bbr,
        tp: &CcView,
        rs: &RateSample,
        acked: u32,
    ) -> RecoverOrRestore {
        let prev_state = bbr.prev_ca_state;
        let state = tp.ca_state;
        let mut cwnd = bbr_deduct_losses(tp.snd_cwnd, rs); // kernel, kept
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            if let Some(cut) = self
                .scaling
                .on_enter_recovery(tp.now_us, tcp_packets_in_flight(tp))
            {
                cwnd = cut; // inflight / 3
                bbr_start_packet_conservation(bbr, tp);
            }
        } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
            bbr.packet_conservation = false; // and no restore of prior_cwnd
        }
        bbr.prev_ca_state = state;
        self.conserving = bbr.packet_conservation;
        if self.conserving {
            // goto done: cwnd = min(cwnd + acked, upper_cwnd), upper_cwnd = inflight at loss.
            return RecoverOrRestore {
                cwnd: cws_grow_cwnd(cwnd, acked, self.scaling.upper_cwnd),
                conserving: true,
            };
        }
        RecoverOrRestore {
            cwnd,
            conserving: false,
        }
    }

    /// Lines 19-21 outside conservation (BBR already took min(cwnd + acked, target)),
    /// then line 43.
    fn cap_cwnd(&mut self, bbr: &Bbr, tp: &CcView, cwnd: u32) -> u32 {
        let upper = if self.conserving {
            self.scaling.upper_cwnd
        } else {
            self.scaling.set_upper_cwnd(bbr.target_cwnd)
        };
        let cwnd = cwnd.min(upper).max(BBR_CWND_MIN_TARGET);
        let rtt_us = if tp.srtt_us > 0 {
            u64::from(tp.srtt_us)
        } else {
            u64::from(bbr.min_rtt_us.min(1_000_000))
        };
        self.scaling
            .bbr_set_upper_scaling_factor(tp.now_us, rtt_us, &self.params);
        cwnd
    }

    fn info(&self, _bbr: &Bbr, out: &mut Vec<InfoField>) {
        out.push((
            "cws_upper_scaling_factor",
            InfoValue::Num(self.scaling.upper_scaling_factor),
        ));
        let upper = if self.scaling.upper_cwnd == u32::MAX {
            f64::NAN
        } else {
            f64::from(self.scaling.upper_cwnd)
        };
        out.push(("cws_upper_cwnd_pkts", InfoValue::Num(upper)));
        out.push((
            "cws_loss_pending",
            InfoValue::Num(f64::from(u8::from(self.scaling.loss_detected_us.is_some()))),
        ));
    }
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
        let mut u = UpperScaling {
            upper_scaling_factor: 0.21,
            ..Default::default()
        };
        let p = CwsParams::default();
        u.on_enter_recovery(0, 50);
        // 0.21 x 0.9 = 0.189 -> floor 0.2.
        u.bbr_set_upper_scaling_factor(40_000, RTT, &p);
        assert!(approx(u.upper_scaling_factor, 0.2));
    }

    #[test]
    fn cws_lower_rtprop_within_three_rtts_resets_factor_to_one() {
        let mut u = UpperScaling {
            upper_scaling_factor: 0.5,
            ..Default::default()
        };
        let p = CwsParams::default();
        u.on_enter_recovery(0, 50);
        u.on_lower_rtprop();
        u.bbr_set_upper_scaling_factor(40_000, RTT, &p);
        assert!(approx(u.upper_scaling_factor, 1.0));
        // Algorithm 1 read literally leaves it at 0.5.
        let mut lit = UpperScaling {
            upper_scaling_factor: 0.5,
            ..Default::default()
        };
        let p_lit = CwsParams {
            reset_on_lower_rtprop: false,
            ..CwsParams::default()
        };
        lit.on_enter_recovery(0, 50);
        lit.on_lower_rtprop();
        lit.bbr_set_upper_scaling_factor(40_000, RTT, &p_lit);
        assert!(approx(lit.upper_scaling_factor, 0.5));
        assert!(!lit.is_rtt_min_updated && lit.loss_detected_us.is_none());
    }

    #[test]
    fn cws_lower_rtprop_before_the_loss_does_not_count() {
        let mut u = UpperScaling::default();
        u.on_lower_rtprop();
        assert!(!u.is_rtt_min_updated);
        u.on_enter_recovery(0, 50);
        u.bbr_set_upper_scaling_factor(40_000, RTT, &CwsParams::default());
        assert!(approx(u.upper_scaling_factor, 0.9));
    }

    #[test]
    fn cws_three_loss_free_rtts_add_delta_up_to_one() {
        let mut u = UpperScaling {
            upper_scaling_factor: 0.9,
            last_action_us: 0,
            ..Default::default()
        };
        let p = CwsParams::default();
        u.bbr_set_upper_scaling_factor(30_000, RTT, &p); // not > 30 ms
        assert!(approx(u.upper_scaling_factor, 0.9));
        u.bbr_set_upper_scaling_factor(30_001, RTT, &p); // 0.9 + 0.01
        assert!(approx(u.upper_scaling_factor, 0.91));
        u.bbr_set_upper_scaling_factor(45_000, RTT, &p); // only 15 ms since: no change
        assert!(approx(u.upper_scaling_factor, 0.91));
        u.bbr_set_upper_scaling_factor(60_002, RTT, &p); // 0.92
        assert!(approx(u.upper_scaling_factor, 0.92));
        let mut top = UpperScaling {
            upper_scaling_factor: 0.995,
            ..Default::default()
        };
        top.bbr_set_upper_scaling_factor(30_001, RTT, &p); // 1.005 capped at 1
        assert!(approx(top.upper_scaling_factor, 1.0));
    }

    // ---- hook-level: driven through cong_control (testkit: target 106 at gain 2)

    use crate::variants::testkit::Flow;

    #[test]
    fn cws_recovery_cuts_cwnd_to_a_third_of_inflight_and_does_not_restore() {
        let mut f = Flow::steady(BbrCws::new(CwsParams::default()));
        // 100 in flight: cwnd 100 / 3 = 33, then line 21: min(33 + 1, 100) = 34.
        assert_eq!(f.ack(45_000, 0, CaState::Recovery), 34);
        // Conserving: +1 per packet acked, capped at the 100 in flight at the loss.
        assert_eq!(f.ack(45_000, 0, CaState::Recovery), 35);
        // Recovery ends: no restore to prior cwnd; BBR's min(35 + 1, 106) = 36, under the
        // cap 106 x 1.0.
        assert_eq!(f.ack(45_000, 0, CaState::Open), 36);
    }

    #[test]
    fn cws_no_lower_rtprop_after_loss_scales_the_cap_by_beta() {
        let mut f = Flow::steady(BbrCws::new(CwsParams::default()));
        f.ack(45_000, 0, CaState::Recovery); // loss judged from now
        f.ack(45_000, 0, CaState::Open);
        // srtt 50 ms: the judgement ends after 150 ms with no RTT below 40 ms.
        f.wait(150_000);
        f.ack(45_000, 0, CaState::Open);
        assert!((f.cc.variant().scaling.upper_scaling_factor - 0.9).abs() < 1e-12);
        // Next ACK: cap = floor(106 x 0.9) = 95; with cwnd 100 BBR gives min(101, 106),
        // CWS caps it at 95.
        f.tp.snd_cwnd = 100;
        assert_eq!(f.ack(45_000, 0, CaState::Open), 95);
    }

    #[test]
    fn cws_lower_rtprop_after_loss_keeps_the_cap_at_one() {
        let mut f = Flow::steady(BbrCws::new(CwsParams::default()));
        f.ack(45_000, 0, CaState::Recovery);
        f.ack(38_000, 0, CaState::Open); // RTT below min_rtt 40 ms: lower RTprop
        f.wait(150_000);
        f.ack(45_000, 0, CaState::Open);
        assert!((f.cc.variant().scaling.upper_scaling_factor - 1.0).abs() < 1e-12);
        f.tp.snd_cwnd = 100;
        // BBR's target with min_rtt 38 ms: 20971 x 38000 x 2 / 2^24 = 95.0 -> 95, + 6 = 101,
        // even -> 102; min(101, 102) = 101, cap 102 x 1.0.
        assert_eq!(f.ack(45_000, 0, CaState::Open), 101);
    }
}
