//! `bbr-acw`: Adaptive Congestion Window of BBR (Electronics 10(5):615, 2021, "Improved
//! RTT Fairness of BBR Congestion Control Algorithm Based on Adaptive Congestion Window";
//! `shared/seeds/001_*.txt`).
//!
//! Model: in PROBE_BW, BBR's fixed cwnd_gain of 2 lets the longer-RTT flow keep the larger
//! share of a standing queue (Section 4.1). BBR-ACW recomputes cwnd_gain per flow from its
//! delivery rate d_i, its RTT T_i = q_i + p_i and its min RTT p_i (Section 4.2): with
//! I_i = d_i T_i (what it keeps in flight) and Q_i = d_i p_i (what the pipe holds), a
//! flow whose I_i <= 1.25 Q_i but which has not seen its RTTmin again within 3 rounds
//! (a standing queue) scales the gain by alpha >= 1 (Eq. 1), more for the flow with the
//! higher delivery rate relative to its own range; a flow with I_i > 1.25 Q_i that sees
//! loss scales it by beta = T_i / (T_i + p_i) < 1 (Eq. 2), smaller for longer-RTT flows;
//! otherwise the gain stays 2 (Algorithm 1).
//!
//! Follows: Section 4.2, Algorithm 1 lines 1-16, Equations 1 and 2. Constants: base gain
//! 2 (Algorithm 1 lines 3, 9, 14; BBR's cwnd_gain), the 1.25 high-load threshold (lines 5,
//! 11), the 3-round min-RTT window (line 4).
//!
//! Diff against tcp_bbr.c (the `BbrVariant` hooks used):
//! - `on_ack`: keeps d_i, d_min, d_max, the 3-round min RTT and runs Algorithm 1.
//! - `update_gains`: the kernel's gains, then Algorithm 1's cwnd_gain in PROBE_BW.
//!
//! Deviations:
//! - The gain is rounded to BBR_UNIT (1/256). It may reach 4.0 (1024/256), one step
//!   more than the kernel's 10-bit `cwnd_gain` field holds; we do not clamp it (the
//!   paper's NS-3 implementation has no such field).
//!
//! Ambiguities resolved:
//! - d_max and d_min ("the maximum and minimum of delivery rate estimated observing under
//!   high load", Eq. 1) are not defined further; a flow cannot see other flows' rates. We
//!   take them per flow as the max and min of its own non-app-limited delivery-rate
//!   samples over the last `d_window_rounds` packet-timed rounds (default 10, BBR's
//!   bandwidth-filter length, so d_max = D_i, "the maximal delivery rate within 10 RTTs").
//!   If d_max <= d_min, alpha = 1.
//! - d_i is the latest delivery-rate sample, T_i the latest RTT sample, p_i BBR's min_rtt
//!   (RTTmin), "min_rtt" of line 4 the min RTT sample over the last 3 rounds. Since
//!   I_i / Q_i = T_i / p_i, the load test reduces to T_i <= 1.25 p_i; I_i and Q_i are
//!   still computed for `info()`.
//! - When: Section 4.2 sets cwnd_gain "to adjust the number of packets sent in next
//!   cycle", and Section 3.2 calls each ProbeBW gain phase (one RTTmin) a "cycle". So
//!   Algorithm 1 runs once at each gain-phase boundary, on the inputs of the phase that
//!   ended, and its gain holds for the whole next phase. (Applied per ACK, the gain would
//!   flip back to 2 on the next ACK and the cap would barely move.)
//! - has_loss: a loss was reported, or the flow was in Recovery / Loss, during the phase.
//! - d_i and T_i are the latest delivery-rate and RTT samples at the boundary.
//! - PROBE_BW only (the paper changes "the cwnd_gain in the ProbeBW"); other modes keep
//!   BBR's gains, and entering PROBE_BW starts from gain 2.

/// BBR's cwnd_gain in PROBE_BW, the base Algorithm 1 scales (lines 3, 9, 14).
pub const ACW_BASE_GAIN: f64 = 2.0;
/// I_i > 1.25 Q_i: the bottleneck is under high load (Section 4.2, lines 5 and 11).
pub const ACW_HIGH_LOAD_RATIO: f64 = 1.25;
/// "windowed_min(RTTmin, 3RTTs)" (Algorithm 1 line 4).
pub const ACW_MIN_RTT_WIN_ROUNDS: u32 = 3;
/// Rounds over which d_max / d_min are taken (our choice; see module doc).
pub const ACW_D_WINDOW_ROUNDS: u32 = 10;

/// Eq. 1: alpha = max[1, (d_i - d_min) / (d_max - d_min) x 2].
pub fn acw_alpha(d: f64, d_min: f64, d_max: f64) -> f64 {
    if d_max <= d_min {
        return 1.0;
    }
    ((d - d_min) / (d_max - d_min) * 2.0).max(1.0)
}

/// Eq. 2: beta = T_i / (T_i + p_i).
pub fn acw_beta(t_us: f64, p_us: f64) -> f64 {
    if t_us + p_us <= 0.0 {
        return 1.0;
    }
    t_us / (t_us + p_us)
}

/// Which line of Algorithm 1 chose the gain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AcwBranch {
    /// Line 7: light load but a standing queue: 2 x alpha.
    Alpha,
    /// Line 12: high load with loss: 2 x beta.
    Beta,
    /// Lines 9 / 14: 2.
    Default,
}

/// Inputs of Algorithm 1 for one ACK. Rates in packets per second, times in us.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AcwInput {
    pub d: f64,
    pub d_min: f64,
    pub d_max: f64,
    /// T_i = q_i + p_i: this ACK's RTT.
    pub rtt_us: f64,
    /// p_i: BBR's min_rtt (RTTmin).
    pub min_rtt_us: f64,
    /// Line 4: the min RTT sample over the last 3 rounds.
    pub min_rtt_3rounds_us: f64,
    pub has_loss: bool,
}

/// Algorithm 1's output with the intermediate values `info()` reports.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AcwDecision {
    pub cwnd_gain: f64,
    pub alpha: f64,
    pub beta: f64,
    /// I_i = d_i x T_i (packets).
    pub i_pkts: f64,
    /// Q_i = d_i x p_i (packets).
    pub q_pkts: f64,
    pub branch: AcwBranch,
}

/// Algorithm 1, lines 4-16.
pub fn acw_cwnd_gain(inp: &AcwInput) -> AcwDecision {
    let i_pkts = inp.d * inp.rtt_us / 1e6;
    let q_pkts = inp.d * inp.min_rtt_us / 1e6;
    let alpha = acw_alpha(inp.d, inp.d_min, inp.d_max);
    let beta = acw_beta(inp.rtt_us, inp.min_rtt_us);
    // I_i <= 1.25 Q_i, compared as T_i <= 1.25 p_i so that d_i = 0 cannot flip it.
    let light = inp.rtt_us <= ACW_HIGH_LOAD_RATIO * inp.min_rtt_us;
    let branch = if light {
        if inp.min_rtt_3rounds_us > inp.min_rtt_us {
            AcwBranch::Alpha
        } else {
            AcwBranch::Default
        }
    } else if inp.has_loss {
        AcwBranch::Beta
    } else {
        AcwBranch::Default
    };
    let cwnd_gain = match branch {
        AcwBranch::Alpha => ACW_BASE_GAIN * alpha,
        AcwBranch::Beta => ACW_BASE_GAIN * beta,
        AcwBranch::Default => ACW_BASE_GAIN,
    };
    AcwDecision {
        cwnd_gain,
        alpha,
        beta,
        i_pkts,
        q_pkts,
        branch,
    }
}

// ---------------------------------------------------------------------------------------
// The variant: tcp_bbr.c with `bbr_update_gains` setting PROBE_BW's cwnd_gain from
// Algorithm 1, and an observer that keeps Algorithm 1's inputs.

use super::window::{Extreme, RoundWindow};
use crate::bbr::model::bbr_update_gains;
use crate::bbr::{gain_to_unit, Bbr, BbrConfig, BbrFamily, BbrMode, BbrVariant};
use crate::bbr_param_specs;
use crate::ops::{CaState, CcView, InfoField, InfoValue, RateSample};
use crate::registry::{AlgorithmSpec, ParamKind, ParamSpec, Params};

const D_WINDOW_ROUNDS: ParamSpec = ParamSpec {
    name: "d_window_rounds",
    kind: ParamKind::Int,
    default: ACW_D_WINDOW_ROUNDS as f64,
    min: 1.0,
    max: 1000.0,
    doc: "rounds over which d_max / d_min of Eq. 1 are taken from this flow's own \
          delivery-rate samples (the paper leaves them loose; 10 = BBR's bw filter, so \
          d_max = D_i)",
};

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "bbr-acw",
    family: crate::registry::Family::Bbr,
    summary: "BBR whose PROBE_BW cwnd_gain adapts per flow to delivery rate, queue and loss",
    source: "Electronics 10(5):615 (2021), BBR-ACW, Section 4.2, Algorithm 1, Equations 1-2",
    params: bbr_param_specs![D_WINDOW_ROUNDS],
    build: |p: &Params| {
        Box::new(BbrFamily::new(
            BbrConfig::from_params(p),
            BbrAcw::new(p.get_u32("d_window_rounds")),
        ))
    },
};

/// BBR-ACW's additions to `struct bbr`.
#[derive(Clone, Debug)]
pub struct BbrAcw {
    /// Line 4: min RTT sample over the last 3 rounds (us).
    pub min_rtt_3rounds: RoundWindow,
    /// Eq. 1's d_min and d_max (packets per second).
    pub d_min: RoundWindow,
    pub d_max: RoundWindow,
    /// d_i: the latest delivery-rate sample (packets per second).
    pub d: Option<f64>,
    /// T_i: the latest RTT sample (us).
    pub rtt_us: Option<f64>,
    /// A loss was seen during the current gain phase.
    pub phase_loss: bool,
    /// `cycle_mstamp` of the current gain phase (None outside PROBE_BW).
    pub phase_mstamp: Option<u64>,
    /// Algorithm 1's decision at the last phase boundary, held for the current phase.
    pub decision: Option<AcwDecision>,
}

impl BbrAcw {
    pub fn new(d_window_rounds: u32) -> Self {
        BbrAcw {
            min_rtt_3rounds: RoundWindow::new(Extreme::Min, ACW_MIN_RTT_WIN_ROUNDS),
            d_min: RoundWindow::new(Extreme::Min, d_window_rounds),
            d_max: RoundWindow::new(Extreme::Max, d_window_rounds),
            d: None,
            rtt_us: None,
            phase_loss: false,
            phase_mstamp: None,
            decision: None,
        }
    }
}

impl BbrAcw {
    /// Algorithm 1 on the inputs gathered so far; None until every input exists.
    fn algorithm_1(&self, bbr: &Bbr) -> Option<AcwDecision> {
        if bbr.min_rtt_us == u32::MAX {
            return None;
        }
        Some(acw_cwnd_gain(&AcwInput {
            d: self.d?,
            d_min: self.d_min.get()?,
            d_max: self.d_max.get()?,
            rtt_us: self.rtt_us?,
            min_rtt_us: f64::from(bbr.min_rtt_us),
            min_rtt_3rounds_us: self.min_rtt_3rounds.get()?,
            has_loss: self.phase_loss,
        }))
    }
}

impl BbrVariant for BbrAcw {
    fn name(&self) -> &'static str {
        "bbr-acw"
    }

    /// Keep d_i, d_min, d_max, T_i, the 3-round min RTT and the phase's loss flag; at a
    /// gain-phase boundary run Algorithm 1 on them for the next phase.
    fn on_ack(&mut self, bbr: &Bbr, tp: &CcView, rs: &RateSample) {
        let round = u64::from(bbr.rtt_cnt);
        if rs.delivered > 0 && rs.interval_us > 0 && !rs.is_app_limited {
            let d = rs.delivered as f64 * 1e6 / rs.interval_us as f64;
            self.d = Some(d);
            self.d_min.update(round, d);
            self.d_max.update(round, d);
        }
        self.d_min.expire(round);
        self.d_max.expire(round);
        if rs.rtt_us >= 0 {
            self.rtt_us = Some(rs.rtt_us as f64);
            self.min_rtt_3rounds.update(round, rs.rtt_us as f64);
        }
        self.min_rtt_3rounds.expire(round);

        if bbr.mode != BbrMode::ProbeBw {
            self.phase_mstamp = None;
            self.decision = None;
            self.phase_loss = false;
            return;
        }
        let boundary = self.phase_mstamp.is_some_and(|m| m != bbr.cycle_mstamp);
        if self.phase_mstamp.is_none() || boundary {
            if boundary {
                self.decision = self.algorithm_1(bbr);
            }
            self.phase_mstamp = Some(bbr.cycle_mstamp);
            self.phase_loss = false;
        }
        // This ACK belongs to the phase now running.
        self.phase_loss |= rs.losses > 0 || tp.ca_state >= CaState::Recovery;
    }

    /// `bbr_update_gains`, then Algorithm 1's cwnd_gain in PROBE_BW.
    fn update_gains(&mut self, bbr: &mut Bbr, _tp: &CcView) {
        bbr_update_gains(bbr);
        if let (BbrMode::ProbeBw, Some(d)) = (bbr.mode, self.decision) {
            bbr.cwnd_gain = gain_to_unit(d.cwnd_gain);
        }
    }

    fn info(&self, _bbr: &Bbr, out: &mut Vec<InfoField>) {
        let d = self.decision;
        let num = |f: fn(&AcwDecision) -> f64| InfoValue::Num(d.as_ref().map_or(f64::NAN, f));
        out.push(("acw_alpha", num(|d| d.alpha)));
        out.push(("acw_beta", num(|d| d.beta)));
        out.push(("acw_i_pkts", num(|d| d.i_pkts)));
        out.push(("acw_q_pkts", num(|d| d.q_pkts)));
        let label = match d.map(|d| d.branch) {
            Some(AcwBranch::Alpha) => "alpha",
            Some(AcwBranch::Beta) => "beta",
            Some(AcwBranch::Default) => "default",
            None => "none",
        };
        out.push(("acw_branch", InfoValue::Label(label)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approx(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn acw_alpha_eq1_is_at_least_one_and_at_most_two() {
        // (80 - 40) / (100 - 40) x 2 = 40/60 x 2 = 1.3333
        assert!(approx(acw_alpha(80.0, 40.0, 100.0), 4.0 / 3.0));
        // (50 - 40) / 60 x 2 = 0.333 -> max(1, .) = 1
        assert!(approx(acw_alpha(50.0, 40.0, 100.0), 1.0));
        // d = d_max -> 2
        assert!(approx(acw_alpha(100.0, 40.0, 100.0), 2.0));
        // degenerate range -> 1
        assert!(approx(acw_alpha(70.0, 70.0, 70.0), 1.0));
    }

    #[test]
    fn acw_beta_eq2_is_smaller_for_the_longer_rtt_flow() {
        // Same 10 ms queueing delay. 10 ms flow: T = 20, p = 10 -> 20/30 = 0.6667.
        // 50 ms flow: T = 60, p = 50 -> 60/110 = 0.5455.
        let short = acw_beta(20_000.0, 10_000.0);
        let long = acw_beta(60_000.0, 50_000.0);
        assert!(approx(short, 2.0 / 3.0));
        assert!(approx(long, 6.0 / 11.0));
    }

    fn inp(rtt: f64, min3: f64, loss: bool) -> AcwInput {
        AcwInput {
            d: 8_000.0,
            d_min: 4_000.0,
            d_max: 10_000.0,
            rtt_us: rtt,
            min_rtt_us: 10_000.0,
            min_rtt_3rounds_us: min3,
            has_loss: loss,
        }
    }

    #[test]
    fn acw_light_load_with_standing_queue_scales_gain_by_alpha() {
        // T = 11 ms <= 1.25 x 10 ms; 3-round min 10.5 ms > 10 ms.
        // alpha = (8000 - 4000) / 6000 x 2 = 1.3333 -> gain 2.6667.
        let d = acw_cwnd_gain(&inp(11_000.0, 10_500.0, false));
        assert_eq!(d.branch, AcwBranch::Alpha);
        assert!(approx(d.cwnd_gain, 8.0 / 3.0));
        // I = 8000 pkt/s x 0.011 s = 88 packets, Q = 8000 x 0.010 = 80.
        assert!(approx(d.i_pkts, 88.0) && approx(d.q_pkts, 80.0));
    }

    #[test]
    fn acw_light_load_having_seen_rtt_min_keeps_gain_two() {
        let d = acw_cwnd_gain(&inp(11_000.0, 10_000.0, false));
        assert_eq!((d.branch, d.cwnd_gain), (AcwBranch::Default, 2.0));
    }

    #[test]
    fn acw_high_load_with_loss_scales_gain_by_beta() {
        // T = 15 ms > 12.5 ms, loss: beta = 15 / 25 = 0.6 -> gain 1.2.
        let d = acw_cwnd_gain(&inp(15_000.0, 10_500.0, true));
        assert_eq!(d.branch, AcwBranch::Beta);
        assert!(approx(d.cwnd_gain, 1.2));
    }

    #[test]
    fn acw_high_load_without_loss_keeps_gain_two() {
        let d = acw_cwnd_gain(&inp(15_000.0, 10_500.0, false));
        assert_eq!((d.branch, d.cwnd_gain), (AcwBranch::Default, 2.0));
    }

    #[test]
    fn acw_load_boundary_is_inclusive_at_one_point_two_five() {
        // T = 12.5 ms exactly: I = 1.25 Q is still light load (line 5 uses <=).
        let d = acw_cwnd_gain(&inp(12_500.0, 10_500.0, true));
        assert_eq!(d.branch, AcwBranch::Alpha);
    }

    // ---- hook-level: driven through cong_control (testkit: min_rtt 40 ms, 2 BDP = 100)

    use crate::bbr::KernelBbr;
    use crate::variants::testkit::Flow;

    #[test]
    fn acw_standing_queue_raises_next_phase_cwnd_gain_by_alpha() {
        let mut f = Flow::steady(BbrAcw::new(ACW_D_WINDOW_ROUNDS));
        // RTT 45 ms <= 1.25 x 40 = 50 and no sample at 40 ms in 3 rounds: alpha branch.
        // Samples of 1 and 4 packets per 40 ms in this phase: d = 25, 100 pkt/s; the
        // gain holds at 2 until the phase ends.
        f.ack_full(45_000, 1, 0, CaState::Open, false);
        f.ack_full(45_000, 4, 0, CaState::Open, false);
        assert_eq!(f.cc.bbr().cwnd_gain(), 512);
        // The phase ends (40.001 ms > min_rtt) on an ACK of 3 packets: d = 75,
        // (75 - 25) / (100 - 25) x 2 = 1.3333, gain 2.6667 x 256 = 682.67 -> 683.
        f.advance_cycle_clock(40_001);
        f.ack_full(45_000, 3, 0, CaState::Open, false);
        assert_eq!(f.cc.bbr().cycle_idx(), 3);
        assert_eq!(f.cc.bbr().cwnd_gain(), 683);
        // It holds through the phase, whatever the next samples say.
        f.ack_full(60_000, 1, 0, CaState::Open, false);
        assert_eq!(f.cc.bbr().cwnd_gain(), 683);
    }

    #[test]
    fn acw_loss_under_high_load_lowers_next_phase_cwnd_and_bbr_does_not() {
        let mut f = Flow::steady(BbrAcw::new(ACW_D_WINDOW_ROUNDS));
        // A loss at RTT 60 ms: this phase keeps gain 2: 100 - 1 = 99, min(99 + 1, 106).
        assert_eq!(f.ack(60_000, 1, CaState::Open), 100);
        // Phase boundary at RTT 60 ms > 50 ms with the phase's loss: beta = 60 / (60 + 40)
        // = 0.6, gain 1.2 -> 307. Target ceil(20971 x 40000 x 307/256 / 2^24)
        // = ceil(59.96) = 60, + 6 = 66; cwnd min(100 + 1, 66) = 66.
        f.advance_cycle_clock(40_001);
        assert_eq!(f.ack(60_000, 0, CaState::Open), 66);
        assert_eq!(f.cc.bbr().cwnd_gain(), 307);
        let mut k = Flow::steady(KernelBbr);
        k.ack(60_000, 1, CaState::Open);
        k.advance_cycle_clock(40_001);
        assert_eq!(k.ack(60_000, 0, CaState::Open), 101); // min(100 + 1, 106)
    }

    #[test]
    fn acw_high_load_without_loss_keeps_bbr_gain() {
        let mut f = Flow::steady(BbrAcw::new(ACW_D_WINDOW_ROUNDS));
        f.ack(60_000, 0, CaState::Open);
        f.advance_cycle_clock(40_001);
        f.ack(60_000, 0, CaState::Open);
        assert_eq!(f.cc.bbr().cwnd_gain(), 512);
        assert_eq!(
            f.cc.variant().decision.map(|d| d.branch),
            Some(AcwBranch::Default)
        );
    }
}
