//! `da-bbr`: Delay-Aware BBR (Kim and Cho, "Delay-Aware BBR Congestion Control Algorithm
//! for RTT Fairness Improvement", IEEE Access 8, 2020).
//!
//! Model: BBR's cwnd cap of cwnd_gain x BDP lets each flow keep (cwnd_gain - 1) x bw x
//! RTprop in the bottleneck queue, a share proportional to its RTT, so the long-RTT flow
//! wins. DA-BBR computes a per-flow regulating factor gamma <= 1 that is lower for longer
//! RTTs and scales "the amount of data to be injected to the pipe" with it, which
//! "reduces the buffer" the long flow occupies (BBR-CWS paper Section 2.3); it "reduces the
//! BDP according to the RTT" while keeping a constant cwnd_gain (BBR-ACW paper Sections 2
//! and 4.2).
//!
//! Diff against tcp_bbr.c (the `BbrVariant` hooks used):
//! - `update_gains`: the kernel's gains, then PROBE_BW's cwnd_gain x gamma.
//!
//! Sources: the IEEE Access paper itself could not be read with the search tool; the
//! definition of gamma is therefore ours, built only from the documented properties above
//! (gamma <= 1, decreasing in RTT, shrinking the queue share, constant cwnd_gain).
//!
//! Not found, so chosen (Deviations):
//! - gamma scales the queue part of the cap, not the pipe part, so no flow caps itself
//!   below one BDP: cwnd = cwnd_gain x gamma x BDP with
//!   cwnd_gain x gamma = 1 + (cwnd_gain - 1) x min(1, rtt_ref / RTprop).
//!   Every flow with RTprop >= rtt_ref then keeps (cwnd_gain - 1) x bw x rtt_ref queued:
//!   the same queueing *time* whatever its RTT, which is the fairness the paper targets.
//! - rtt_ref defaults to 1 ms: the kernel's own smallest sending time slice (TSO
//!   autosizing, `sk_pacing_shift` = 10, ~1 ms of data per burst), fixed independently of
//!   any scenario; every flow then queues about 1 ms worth of its rate. An earlier
//!   default of 10 ms equalled the short flow of the BBR-ACW experiment and was dropped for
//!   that reason. The catalogue marks DA-BBR's verdicts "core idea only".
//!   Parameter `rtt_ref_ms`.
//! - Applied wherever BBR uses its PROBE_BW cwnd_gain; STARTUP's high gain is unchanged.

use crate::bbr::BBR_UNIT;

/// Our default reference RTT (us); see module doc.
pub const DA_BBR_RTT_REF_US: u32 = 1_000;

/// The effective cwnd gain cwnd_gain x gamma, in BBR_UNIT:
/// BBR_UNIT + (cwnd_gain - BBR_UNIT) x min(1, rtt_ref / min_rtt).
pub fn da_bbr_cwnd_gain(cwnd_gain: u32, min_rtt_us: u32, rtt_ref_us: u32) -> u32 {
    if cwnd_gain <= BBR_UNIT
        || min_rtt_us == 0
        || min_rtt_us == u32::MAX
        || min_rtt_us <= rtt_ref_us
    {
        return cwnd_gain;
    }
    let excess = u64::from(cwnd_gain - BBR_UNIT);
    BBR_UNIT + (excess * u64::from(rtt_ref_us) / u64::from(min_rtt_us)) as u32
}

/// gamma itself (for `info()`): effective gain / cwnd_gain.
pub fn da_bbr_gamma(cwnd_gain: u32, min_rtt_us: u32, rtt_ref_us: u32) -> f64 {
    f64::from(da_bbr_cwnd_gain(cwnd_gain, min_rtt_us, rtt_ref_us)) / f64::from(cwnd_gain.max(1))
}

// ---------------------------------------------------------------------------------------
// The variant: tcp_bbr.c with PROBE_BW's cwnd_gain scaled by gamma in `bbr_update_gains`.

use crate::bbr::model::bbr_update_gains;
use crate::bbr::{Bbr, BbrConfig, BbrFamily, BbrMode, BbrVariant};
use crate::bbr_param_specs;
use crate::ops::{CcView, InfoField, InfoValue};
use crate::registry::{AlgorithmSpec, ParamKind, ParamSpec, Params};

const RTT_REF_MS: ParamSpec = ParamSpec {
    name: "rtt_ref_ms",
    kind: ParamKind::Float,
    default: DA_BBR_RTT_REF_US as f64 / 1000.0,
    min: 0.1,
    max: 10_000.0,
    doc: "reference RTT of the regulating factor gamma (ms): flows with longer min_rtt \
          queue only (cwnd_gain - 1) x bw x rtt_ref; not found in the DA-BBR paper: 1 ms, \
          the kernel's TSO/pacing time slice (sk_pacing_shift 10), independent of any scenario",
};

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "da-bbr",
    family: crate::registry::Family::Bbr,
    summary: "BBR whose cwnd cap shrinks with the flow's RTT by a regulating factor gamma",
    source: "Kim and Cho, Delay-Aware BBR, IEEE Access 2020 (core idea; gamma chosen, see \
             module doc)",
    params: bbr_param_specs![RTT_REF_MS],
    build: |p: &Params| {
        let rtt_ref_us = (p.get("rtt_ref_ms") * 1000.0).round() as u32;
        Box::new(BbrFamily::new(
            BbrConfig::from_params(p),
            DaBbr { rtt_ref_us },
        ))
    },
};

/// DA-BBR's additions to `struct bbr`.
#[derive(Clone, Copy, Debug)]
pub struct DaBbr {
    pub rtt_ref_us: u32,
}

impl BbrVariant for DaBbr {
    fn name(&self) -> &'static str {
        "da-bbr"
    }

    fn update_gains(&mut self, bbr: &mut Bbr, _tp: &CcView) {
        bbr_update_gains(bbr);
        if bbr.mode == BbrMode::ProbeBw {
            bbr.cwnd_gain = da_bbr_cwnd_gain(bbr.cwnd_gain, bbr.min_rtt_us, self.rtt_ref_us);
        }
    }

    fn info(&self, bbr: &Bbr, out: &mut Vec<InfoField>) {
        let gamma = da_bbr_gamma(bbr.cfg.cwnd_gain, bbr.min_rtt_us, self.rtt_ref_us);
        out.push(("da_gamma", InfoValue::Num(gamma)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn da_bbr_long_rtt_flow_keeps_a_smaller_queue_share() {
        // gain 2 = 512. 50 ms flow, ref 10 ms: 256 + 256 x 10/50 = 256 + 51 = 307
        // (gamma = 307/512 = 0.5996): it queues 0.2 BDP = 10 ms worth, not 1 BDP = 50 ms.
        assert_eq!(da_bbr_cwnd_gain(512, 50_000, 10_000), 307);
        assert!((da_bbr_gamma(512, 50_000, 10_000) - 307.0 / 512.0).abs() < 1e-12);
        // 20 ms flow: 256 + 256 x 10/20 = 384.
        assert_eq!(da_bbr_cwnd_gain(512, 20_000, 10_000), 384);
    }

    #[test]
    fn da_bbr_flow_at_or_below_reference_rtt_is_plain_bbr() {
        assert_eq!(da_bbr_cwnd_gain(512, 10_000, 10_000), 512);
        assert_eq!(da_bbr_cwnd_gain(512, 4_000, 10_000), 512);
        // Unknown min_rtt: no change.
        assert_eq!(da_bbr_cwnd_gain(512, u32::MAX, 10_000), 512);
    }

    #[test]
    fn da_bbr_never_caps_below_one_bdp() {
        // A 10 s RTT: 256 + 256 x 10 ms / 10 s = 256 + 0 = 256 = 1 BDP.
        assert_eq!(da_bbr_cwnd_gain(512, 10_000_000, 10_000), 256);
    }

    // ---- hook-level: driven through cong_control (testkit: min_rtt 40 ms)

    use crate::bbr::KernelBbr;
    use crate::ops::CaState;
    use crate::variants::testkit::Flow;

    #[test]
    fn da_bbr_forty_ms_flow_caps_cwnd_at_one_and_a_quarter_bdp() {
        let mut f = Flow::steady(DaBbr { rtt_ref_us: 10_000 });
        // gain 256 + 256 x 10/40 = 320; target ceil(20971 x 40000 x 1.25 / 2^24)
        // = ceil(62.50) = 63, + 6 = 69, even -> 70; min(100 + 1, 70) = 70.
        assert_eq!(f.ack(45_000, 0, CaState::Open), 70);
        assert_eq!(f.cc.bbr().cwnd_gain(), 320);
        let mut k = Flow::steady(KernelBbr);
        assert_eq!(k.ack(45_000, 0, CaState::Open), 101); // min(101, 106)
    }
}
