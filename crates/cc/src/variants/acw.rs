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
//! - has_loss: this ACK reported losses, or the flow is in Recovery / Loss.
//! - The rule is applied on every ACK with an RTT sample, in PROBE_BW only (the paper
//!   changes "the cwnd_gain in the ProbeBW"); other modes keep BBR's gains.

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
    AcwDecision { cwnd_gain, alpha, beta, i_pkts, q_pkts, branch }
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
}
