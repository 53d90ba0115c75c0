//! `bbr-acd`: BBR with Advanced Congestion Detection (Mahmud, Kim, Lubna and Cho,
//! Electronics 9(1):136, 2020; `shared/seeds/000_*.txt`).
//!
//! Model: BBR as the kernel runs it, except for how it answers a loss. On every ACK
//! `bbr_probe_congestion` (Section 4.1, Figure 6) decides whether the path is actually
//! congested: either the RTT has stayed within +-alpha of the previous sample for three
//! consecutive ACKs while above min_rtt (the "identical-RTT" state: the buffer is full, so
//! the RTT stops changing, operating point B of Figure 1), or the RTT exceeds twice
//! min_rtt (Hock et al.'s 1.5x queueing delay, rounded up by the authors). When the
//! sender enters Recovery while congestion is detected, the modified
//! `bbr_set_cwnd_to_recover_or_restore` (Section 4.2, Figure 7) starts packet
//! conservation with cwnd = min(cwnd / 2, target cwnd at gain 1); on leaving Recovery
//! cwnd is restored to max(cwnd, prior cwnd). A loss without detected congestion only
//! subtracts the lost packets, as the kernel does, and does not start packet
//! conservation (the kernel would set cwnd = inflight + acked).
//!
//! Follows: Figure 6 (`bbr_probe_congestion`) and Figure 7
//! (`bbr_set_cwnd_to_recover_or_restore`) line by line; the flow chart of Figure 8.
//! Constants: alpha = 1000 us (Figure 6 caption; Table 3 also tries 500 and 1500 us);
//! "three consecutive ACKs" = `count_if_steady_rtt >= 2` (Figure 6, Section 4.1).
//!
//! Diff against tcp_bbr.c (the `BbrVariant` hooks used):
//! - `set_cwnd_to_recover_or_restore`: Figure 7 replaces the kernel function; it calls
//!   `bbr_probe_congestion` first, as Figure 7 does, so the detector sees every ACK that
//!   acked something. Everything else is the kernel's.
//!
//! Deviations:
//! - The paper patched Linux 4.17; our port follows a newer tcp_bbr.c, so the "target
//!   cwnd at gain 1" includes the ACK-aggregation allowance (`extra_acked`, off with the
//!   `extra_acked` parameter) besides the quantization budget.
//!
//! Ambiguities resolved:
//! - Figure 7 halves cwnd on *every* ACK while `packet_conservation` is set: each call
//!   starts from the current `snd_cwnd`, and the kernel clears `packet_conservation` only
//!   at the next round start. Section 4.2's prose speaks of halving the cwnd once. We
//!   follow the code (the paper says it is the implementation) and offer the prose
//!   reading as parameter `halve_once` (default false).
//! - An ACK without an RTT sample (`rtt_us < 0`) is, as in the C code, "not above
//!   min_rtt": it resets the steady count and becomes the saved last RTT.
//! - Before the first RTT sample (min_rtt unknown) no congestion is reported; the C code
//!   would compare against 2 * ~0U, which wraps.

use crate::ops::CaState;

/// alpha: how much the RTT may move and still count as "almost identical" (us).
/// Figure 6 (`saved_last_rtt +- 1000`); Section 5.2, Table 3 picks 1000 us over 500/1500.
pub const ACD_ALPHA_US: u32 = 1000;

/// `count_if_steady_rtt >= 2`: the second and third of three ACKs each matched the
/// previous RTT (Section 4.1: "the first two ... create an event of identical-RTT for the
/// first time, and the last two ... confirm the first event").
pub const ACD_STEADY_RTT_COUNT: u32 = 2;

/// The per-flow state of `bbr_probe_congestion` (Figure 6).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CongestionProbe {
    /// Consecutive ACKs whose RTT stayed within +-alpha of the previous one, above min_rtt.
    pub count_if_steady_rtt: u32,
    /// The previous ACK's RTT (us; negative if it had none).
    pub saved_last_rtt_us: i64,
}

impl CongestionProbe {
    /// Figure 6: update the steady-RTT count with this ACK's RTT and report whether the
    /// path is actually congested.
    pub fn bbr_probe_congestion(&mut self, rtt_us: i64, min_rtt_us: u32, alpha_us: u32) -> bool {
        let min_rtt = i64::from(min_rtt_us);
        let alpha = i64::from(alpha_us);
        let known_min = min_rtt_us != u32::MAX;
        if known_min && rtt_us > min_rtt {
            let last = self.saved_last_rtt_us;
            if rtt_us >= last - alpha && rtt_us <= last + alpha {
                self.count_if_steady_rtt += 1;
            } else {
                self.count_if_steady_rtt = 0;
            }
        } else {
            self.count_if_steady_rtt = 0;
        }
        self.saved_last_rtt_us = rtt_us;
        self.count_if_steady_rtt >= ACD_STEADY_RTT_COUNT || (known_min && rtt_us > 2 * min_rtt)
    }
}

/// What Figure 7 decided for this ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecoverDecision {
    /// The cwnd to use (before BBR's clamp and PROBE_RTT cap).
    pub cwnd: u32,
    /// True if packet conservation holds cwnd (`bbr_set_cwnd` then skips growth).
    pub conserving: bool,
    /// True if this ACK started packet conservation: BBR restarts its round here
    /// (`next_rtt_delivered = tp->delivered`).
    pub started: bool,
}

/// The recovery state Figure 7 reads and writes (BBR's `prev_ca_state` and
/// `packet_conservation`; BBR clears the latter at each round start).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecoverState {
    pub prev_ca_state: CaState,
    pub packet_conservation: bool,
}

impl Default for RecoverState {
    fn default() -> Self {
        RecoverState {
            prev_ca_state: CaState::Open,
            packet_conservation: false,
        }
    }
}

/// Inputs of Figure 7 for one ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecoverInput {
    pub snd_cwnd: u32,
    pub losses: u32,
    pub ca_state: CaState,
    /// `bbr->prior_cwnd`, saved by BBR when the reduction started.
    pub prior_cwnd: u32,
    /// `bbr_target_cwnd(sk, bw, BBR_UNIT)`: one BDP plus the kernel's quantization budget.
    pub target_cwnd_unit_gain: u32,
    /// `bbr_probe_congestion()` for this ACK.
    pub congested: bool,
    /// `bbr_cwnd_min_target` (4).
    pub cwnd_min_target: u32,
    /// Halve only on the ACK that starts conservation (the prose reading; see module doc).
    pub halve_once: bool,
}

/// Figure 7: the modified `bbr_set_cwnd_to_recover_or_restore`.
pub fn acd_set_cwnd_to_recover_or_restore(
    st: &mut RecoverState,
    inp: &RecoverInput,
) -> RecoverDecision {
    let prev_state = st.prev_ca_state;
    let state = inp.ca_state;
    let mut cwnd = inp.snd_cwnd;
    let mut started = false;
    if inp.losses > 0 {
        cwnd = (i64::from(cwnd) - i64::from(inp.losses)).max(1) as u32;
    }
    if inp.congested && state == CaState::Recovery && prev_state != CaState::Recovery {
        st.packet_conservation = true;
        started = true;
    } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
        cwnd = cwnd.max(inp.prior_cwnd);
        st.packet_conservation = false;
    }
    st.prev_ca_state = state;
    if st.packet_conservation {
        if started || !inp.halve_once {
            cwnd = (cwnd / 2).min(inp.target_cwnd_unit_gain);
        }
        return RecoverDecision {
            cwnd: cwnd.max(inp.cwnd_min_target),
            conserving: true,
            started,
        };
    }
    RecoverDecision {
        cwnd,
        conserving: false,
        started,
    }
}

// ---------------------------------------------------------------------------------------
// The variant: tcp_bbr.c with `bbr_set_cwnd_to_recover_or_restore` replaced by Figure 7.

use crate::bbr::bw::bbr_bw;
use crate::bbr::cwnd::bbr_target_cwnd;
use crate::bbr::{
    Bbr, BbrConfig, BbrFamily, BbrVariant, RecoverOrRestore, BBR_CWND_MIN_TARGET, BBR_UNIT,
};
use crate::bbr_param_specs;
use crate::ops::{CcView, InfoField, InfoValue, RateSample};
use crate::registry::{AlgorithmSpec, ParamKind, ParamSpec, Params};

const ALPHA_US: ParamSpec = ParamSpec {
    name: "alpha_us",
    kind: ParamKind::Int,
    default: ACD_ALPHA_US as f64,
    min: 0.0,
    max: 1_000_000.0,
    doc: "RTT band (+-us) for an 'almost identical' RTT; BBR-ACD Figure 6 (1000 us), \
          Table 3 also 500 and 1500",
};
const HALVE_ONCE: ParamSpec = ParamSpec {
    name: "halve_once",
    kind: ParamKind::Bool,
    default: 0.0,
    min: 0.0,
    max: 1.0,
    doc: "halve cwnd only on the ACK entering recovery (Section 4.2 prose) instead of on \
          every ACK of the conservation round (Figure 7 code, default)",
};

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "bbr-acd",
    family: crate::registry::Family::Bbr,
    summary: "BBR that halves cwnd on loss only when the RTT shows actual congestion",
    source: "Mahmud et al., BBR-ACD, Electronics 2020, Section 4, Figures 6-8",
    params: bbr_param_specs![ALPHA_US, HALVE_ONCE],
    build: |p: &Params| {
        Box::new(BbrFamily::new(
            BbrConfig::from_params(p),
            BbrAcd::new(p.get_u32("alpha_us"), p.get_bool("halve_once")),
        ))
    },
};

/// BBR-ACD's additions to `struct bbr`.
#[derive(Clone, Debug, Default)]
pub struct BbrAcd {
    pub alpha_us: u32,
    pub halve_once: bool,
    pub probe: CongestionProbe,
    /// The last `bbr_probe_congestion()` result.
    pub congested: bool,
}

impl BbrAcd {
    pub fn new(alpha_us: u32, halve_once: bool) -> Self {
        BbrAcd {
            alpha_us,
            halve_once,
            ..Default::default()
        }
    }
}

impl BbrVariant for BbrAcd {
    fn name(&self) -> &'static str {
        "bbr-acd"
    }

    /// Figure 7 (called, as in the kernel, only on ACKs that acked something).
    fn set_cwnd_to_recover_or_restore(
        &mut self,
        bbr: &mut Bbr,
        tp: &CcView,
        rs: &RateSample,
        _acked: u32,
    ) -> RecoverOrRestore {
        // `bbr_probe_congestion(sk, rs) && ...`: evaluated first, so on every call.
        self.congested = self
            .probe
            .bbr_probe_congestion(rs.rtt_us, bbr.min_rtt_us, self.alpha_us);
        let mut st = RecoverState {
            prev_ca_state: bbr.prev_ca_state,
            packet_conservation: bbr.packet_conservation,
        };
        let d = acd_set_cwnd_to_recover_or_restore(
            &mut st,
            &RecoverInput {
                snd_cwnd: tp.snd_cwnd,
                losses: rs.losses,
                ca_state: tp.ca_state,
                prior_cwnd: bbr.prior_cwnd,
                target_cwnd_unit_gain: bbr_target_cwnd(bbr, tp, bbr_bw(bbr), BBR_UNIT),
                congested: self.congested,
                cwnd_min_target: BBR_CWND_MIN_TARGET,
                halve_once: self.halve_once,
            },
        );
        bbr.prev_ca_state = st.prev_ca_state;
        bbr.packet_conservation = st.packet_conservation;
        if d.started {
            bbr.next_rtt_delivered = tp.delivered; // start a round now
        }
        RecoverOrRestore {
            cwnd: d.cwnd,
            conserving: d.conserving,
        }
    }

    fn info(&self, _bbr: &Bbr, out: &mut Vec<InfoField>) {
        out.push((
            "acd_congested",
            InfoValue::Num(f64::from(u8::from(self.congested))),
        ));
        out.push((
            "acd_steady_rtt_count",
            InfoValue::Num(f64::from(self.probe.count_if_steady_rtt)),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe_all(rtts_us: &[i64], min_rtt_us: u32) -> (bool, CongestionProbe) {
        let mut p = CongestionProbe::default();
        let mut last = false;
        for &r in rtts_us {
            last = p.bbr_probe_congestion(r, min_rtt_us, ACD_ALPHA_US);
        }
        (last, p)
    }

    #[test]
    fn acd_three_steady_acks_above_min_rtt_signal_congestion() {
        // min_rtt 40 ms. 50.0 ms: first sample, |50000 - 0| > 1000, count 0.
        // 50.4: within 50.0 +- 1.0 -> count 1. 50.8: within 50.4 +- 1.0 -> count 2 >= 2.
        let (c, p) = probe_all(&[50_000, 50_400, 50_800], 40_000);
        assert!(c);
        assert_eq!(p.count_if_steady_rtt, 2);
    }

    #[test]
    fn acd_two_steady_acks_are_not_enough() {
        let (c, p) = probe_all(&[50_000, 50_400], 40_000);
        assert!(!c);
        assert_eq!(p.count_if_steady_rtt, 1);
    }

    #[test]
    fn acd_rtt_spread_above_alpha_below_twice_min_rtt_is_not_congestion() {
        // Steps of 1.5 ms > alpha 1 ms reset the count; 53 ms < 2 * 40 ms.
        let (c, p) = probe_all(&[50_000, 51_500, 53_000], 40_000);
        assert!(!c);
        assert_eq!(p.count_if_steady_rtt, 0);
    }

    #[test]
    fn acd_rtt_above_twice_min_rtt_is_congestion_on_first_sample() {
        // 80.001 ms > 2 * 40 ms; 80.000 ms is not (strict >).
        assert!(probe_all(&[80_001], 40_000).0);
        assert!(!probe_all(&[80_000], 40_000).0);
    }

    #[test]
    fn acd_steady_rtt_at_min_rtt_is_not_congestion() {
        // RTT equal to min_rtt is not "above min_rtt": the count never starts.
        let (c, p) = probe_all(&[40_000, 40_000, 40_000, 40_000], 40_000);
        assert!(!c);
        assert_eq!(p.count_if_steady_rtt, 0);
    }

    #[test]
    fn acd_ack_without_rtt_sample_resets_the_count() {
        let (c, p) = probe_all(&[50_000, 50_400, -1, 50_800], 40_000);
        assert!(!c);
        assert_eq!(p.count_if_steady_rtt, 0);
    }

    #[test]
    fn acd_smaller_alpha_rejects_a_400us_step() {
        let mut p = CongestionProbe::default();
        for r in [50_000, 50_400, 50_800] {
            assert!(!p.bbr_probe_congestion(r, 40_000, 300));
        }
    }

    fn input(cwnd: u32, losses: u32, state: CaState, congested: bool) -> RecoverInput {
        RecoverInput {
            snd_cwnd: cwnd,
            losses,
            ca_state: state,
            prior_cwnd: 80,
            target_cwnd_unit_gain: 50,
            congested,
            cwnd_min_target: 4,
            halve_once: false,
        }
    }

    #[test]
    fn acd_congested_loss_halves_cwnd_capped_at_one_bdp() {
        let mut st = RecoverState::default();
        // cwnd 80, 2 losses -> 78; halved 39; min(39, target 50) = 39.
        let d = acd_set_cwnd_to_recover_or_restore(&mut st, &input(80, 2, CaState::Recovery, true));
        assert_eq!(
            d,
            RecoverDecision {
                cwnd: 39,
                conserving: true,
                started: true
            }
        );
        // cwnd 120 -> 60 halved, capped by target 50.
        let mut st = RecoverState::default();
        let d =
            acd_set_cwnd_to_recover_or_restore(&mut st, &input(120, 0, CaState::Recovery, true));
        assert_eq!(d.cwnd, 50);
    }

    #[test]
    fn acd_uncongested_loss_only_subtracts_losses() {
        let mut st = RecoverState::default();
        // Not congested: 80 - 2 = 78, no packet conservation (the kernel would set
        // inflight + acked here).
        let d =
            acd_set_cwnd_to_recover_or_restore(&mut st, &input(80, 2, CaState::Recovery, false));
        assert_eq!(
            d,
            RecoverDecision {
                cwnd: 78,
                conserving: false,
                started: false
            }
        );
        assert!(!st.packet_conservation);
    }

    #[test]
    fn acd_figure7_halves_again_on_each_ack_of_the_conservation_round() {
        let mut st = RecoverState::default();
        let d1 =
            acd_set_cwnd_to_recover_or_restore(&mut st, &input(80, 0, CaState::Recovery, true));
        assert_eq!(d1.cwnd, 40);
        // Next ACK, still Recovery, same round: 40 / 2 = 20, then 10, then floor 4 after 5.
        let d2 = acd_set_cwnd_to_recover_or_restore(
            &mut st,
            &input(d1.cwnd, 0, CaState::Recovery, true),
        );
        assert_eq!((d2.cwnd, d2.started), (20, false));
        let d3 =
            acd_set_cwnd_to_recover_or_restore(&mut st, &input(5, 0, CaState::Recovery, false));
        assert_eq!(d3.cwnd, 4);
    }

    #[test]
    fn acd_halve_once_holds_cwnd_after_the_first_cut() {
        let mut st = RecoverState::default();
        let mut inp = input(80, 0, CaState::Recovery, true);
        inp.halve_once = true;
        assert_eq!(acd_set_cwnd_to_recover_or_restore(&mut st, &inp).cwnd, 40);
        inp.snd_cwnd = 40;
        assert_eq!(acd_set_cwnd_to_recover_or_restore(&mut st, &inp).cwnd, 40);
    }

    #[test]
    fn acd_leaving_recovery_restores_prior_cwnd() {
        let mut st = RecoverState {
            prev_ca_state: CaState::Recovery,
            packet_conservation: true,
        };
        // Back to Open: max(30, prior 80) = 80, conservation ends.
        let d = acd_set_cwnd_to_recover_or_restore(&mut st, &input(30, 0, CaState::Open, false));
        assert_eq!(
            d,
            RecoverDecision {
                cwnd: 80,
                conserving: false,
                started: false
            }
        );
    }

    // ---- hook-level: driven through cong_control (testkit: target 106 at gain 2, 56 at gain 1)

    use crate::bbr::KernelBbr;
    use crate::ops::CongestionOps;
    use crate::variants::testkit::Flow;

    #[test]
    fn acd_loss_after_three_steady_rtts_halves_cwnd() {
        let mut f = Flow::steady(BbrAcd::new(ACD_ALPHA_US, false));
        // Open, one packet each: cwnd 100 -> 101 -> 102 -> 103 (toward target 106).
        assert_eq!(f.ack(50_000, 0, CaState::Open), 101);
        assert_eq!(f.ack(50_400, 0, CaState::Open), 102);
        assert_eq!(f.ack(50_800, 0, CaState::Open), 103);
        assert!(f.cc.variant().congested);
        // Enter Recovery, 2 lost, RTT 51.2 ms (count 3): 103 - 2 = 101; min(101/2, 56) = 50.
        assert_eq!(f.ack(51_200, 2, CaState::Recovery), 50);
        assert!(f.cc.bbr().packet_conservation);
        // Kernel BBR on the same ACKs: inflight + acked = 100 + 1 = 101 (prior_in_flight
        // 100, no packets leave the pipe in this fixture).
        let mut k = Flow::steady(KernelBbr);
        for r in [50_000, 50_400, 50_800] {
            k.ack(r, 0, CaState::Open);
        }
        assert_eq!(k.ack(51_200, 2, CaState::Recovery), 101);
    }

    #[test]
    fn acd_loss_with_spread_rtt_below_twice_min_rtt_does_not_cut() {
        let mut f = Flow::steady(BbrAcd::new(ACD_ALPHA_US, false));
        for r in [50_000, 51_500, 53_000] {
            f.ack(r, 0, CaState::Open);
        }
        // 54.5 ms: step 1.5 ms > alpha, 54.5 < 80: not congested. 103 - 2 = 101, no
        // conservation, then min(101 + 1, 106) = 102.
        assert_eq!(f.ack(54_500, 2, CaState::Recovery), 102);
        assert!(!f.cc.variant().congested && !f.cc.bbr().packet_conservation);
    }

    #[test]
    fn acd_loss_with_rtt_above_twice_min_rtt_halves_cwnd() {
        let mut f = Flow::steady(BbrAcd::new(ACD_ALPHA_US, false));
        // 80.1 ms > 2 x 40 ms on the recovery ACK itself: 100 - 0 = 100; min(50, 56) = 50.
        assert_eq!(f.ack(80_100, 0, CaState::Recovery), 50);
    }

    #[test]
    fn acd_restores_prior_cwnd_when_recovery_ends() {
        let mut f = Flow::steady(BbrAcd::new(ACD_ALPHA_US, true));
        f.cc.ssthresh(&f.tp); // bbr_save_cwnd: prior_cwnd = 100
        assert_eq!(f.ack(80_100, 0, CaState::Recovery), 50);
        // halve_once: the next ACK of the round holds 50 (Figure 7 would give 25).
        assert_eq!(f.ack(80_100, 0, CaState::Recovery), 50);
        // Back to Open: max(50, prior 100) = 100, then min(100 + 1, 106) = 101.
        assert_eq!(f.ack(45_000, 0, CaState::Open), 101);
        let info = f.cc.info();
        assert!(info.iter().any(|(k, _)| *k == "acd_steady_rtt_count"));
    }
}
