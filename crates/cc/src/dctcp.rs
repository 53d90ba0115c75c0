//! `dctcp`: Data Center TCP as Linux runs it (net/ipv4/tcp_dctcp.c, tcp_dctcp.h);
//! Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010; RFC 8257.
//!
//! Model: the sender keeps alpha, an EWMA of the fraction of delivered segments whose
//! ACKs echoed CE, updated once per window of data (when snd_una passes the snd_nxt
//! recorded at the previous update, `dctcp_update_alpha` from `in_ack_event`):
//! alpha <- (1 - g) alpha + g F with g = 1/16 (`dctcp_shift_g` = 4), alpha kept in units
//! of 1/1024 (`DCTCP_MAX_ALPHA`) and starting at 1024 (`dctcp_alpha_on_init`: "full").
//! F = delivered_ce / delivered over the window (`tp->delivered_ce`, counted by the
//! sender on ECE ACKs). On an ECN echo the sender's CWR reduction asks `ssthresh`,
//! which DCTCP answers with cwnd (1 - alpha / 2) (`dctcp_ssthresh`: cwnd - cwnd alpha >>
//! 11, at least 2); growth is Reno's (`tcp_reno_cong_avoid`). A loss halves instead
//! (`dctcp_react_to_loss` on entering Recovery from `set_state`, and on
//! `CaEvent::Loss` for an RTO); undo restores max(cwnd, cwnd before the last cut).
//!
//! Receiver side (`dctcp_ece_ack_update`, raised through `cwnd_event` with
//! `EcnIsCe` / `EcnNoCe` by the receiving host's `tcp_ecn_check_ce`): the receiver keeps
//! the CE state of the last data segment and echoes it exactly, ECE on each ACK iff the
//! segments it covers carried CE. When the state flips while a delayed ACK is pending,
//! that ACK goes out first for the data before this segment with the old state, and the
//! new state is ACKed at once (RFC 8257 Sec. 3.2's two-state machine).
//!
//! The flag `needs_ecn` (`TCP_CONG_NEEDS_ECN`) makes the sender negotiate ECN. Without
//! ECN (`tp.ecn_ok` false at init) DCTCP falls back to Reno, as `dctcp_init` switches to
//! `dctcp_reno`.
//!
//! Deviations: no PLB (protective load balancing, `tcp_plb_*`: there are no paths to
//! rehash to).

use crate::helpers::{tcp_reno_cong_avoid, tcp_reno_ssthresh};
use crate::ops::{CaEvent, CaState, CcView, CongestionOps, InfoField, InfoValue};
use crate::registry::{AlgorithmSpec, ParamKind, ParamSpec, Params};

/// `DCTCP_MAX_ALPHA` (tcp_dctcp.c): alpha's scale, 1.0 = 1024.
pub const DCTCP_MAX_ALPHA: u32 = 1024;

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "dctcp",
    family: crate::registry::Family::Ecn,
    summary: "DCTCP: ECN-fraction EWMA alpha, cwnd cut by alpha/2 per window with marks",
    source: "Linux net/ipv4/tcp_dctcp.c; Alizadeh et al. SIGCOMM 2010; RFC 8257",
    params: &[
        ParamSpec {
            name: "shift_g",
            kind: ParamKind::Int,
            default: 4.0,
            min: 0.0,
            max: 10.0,
            doc: "EWMA gain g = 1/2^shift_g for alpha (tcp_dctcp.c dctcp_shift_g = 4; RFC 8257 Sec. 3.3 suggests g = 1/16)",
        },
        ParamSpec {
            name: "alpha_on_init",
            kind: ParamKind::Int,
            default: 1024.0,
            min: 0.0,
            max: 1024.0,
            doc: "initial alpha in 1/1024 (tcp_dctcp.c dctcp_alpha_on_init = DCTCP_MAX_ALPHA: the first reduction halves)",
        },
    ],
    build: |p: &Params| Box::new(Dctcp::new(p.get_u32("shift_g"), p.get_u32("alpha_on_init"))),
};

#[derive(Debug, Clone)]
pub struct Dctcp {
    shift_g: u32,
    alpha_on_init: u32,
    old_delivered: u64,
    old_delivered_ce: u64,
    prior_rcv_nxt: u64,
    /// alpha in 1/1024.
    pub alpha: u32,
    next_seq: u64,
    /// Receiver: CE state of the last data segment (0 or 1).
    pub ce_state: u32,
    loss_cwnd: u32,
    /// ECN was not negotiated: behave as `dctcp_reno`.
    reno_fallback: bool,
}

impl Dctcp {
    pub fn new(shift_g: u32, alpha_on_init: u32) -> Dctcp {
        Dctcp {
            shift_g,
            alpha_on_init,
            old_delivered: 0,
            old_delivered_ce: 0,
            prior_rcv_nxt: 0,
            alpha: 0,
            next_seq: 0,
            ce_state: 0,
            loss_cwnd: 0,
            reno_fallback: false,
        }
    }

    /// `dctcp_reset`: start a new observation window.
    fn reset(&mut self, tp: &CcView) {
        self.next_seq = tp.snd_nxt;
        self.old_delivered = tp.delivered;
        self.old_delivered_ce = tp.delivered_ce;
    }

    /// `dctcp_react_to_loss`.
    fn react_to_loss(&mut self, tp: &mut CcView) {
        self.loss_cwnd = tp.snd_cwnd;
        tp.snd_ssthresh = (tp.snd_cwnd >> 1).max(2);
    }

    /// `dctcp_ece_ack_cwr`.
    fn ece_ack_cwr(tp: &mut CcView, ce_state: u32) {
        tp.ecn_demand_cwr = ce_state == 1;
    }

    /// `dctcp_ece_ack_update`.
    fn ece_ack_update(&mut self, tp: &mut CcView, ev: CaEvent) {
        let new_ce_state = u32::from(ev == CaEvent::EcnIsCe);
        if self.ce_state != new_ce_state {
            // The CE state changed: ACK at once to reflect it, and if an ACK was being
            // delayed, send that one first with the prior state.
            if tp.ack_timer_pending {
                Self::ece_ack_cwr(tp, self.ce_state);
                tp.send_ack = Some((self.prior_rcv_nxt, tp.ecn_demand_cwr));
            }
            tp.ack_now = true;
        }
        self.prior_rcv_nxt = tp.rcv_nxt;
        self.ce_state = new_ce_state;
        Self::ece_ack_cwr(tp, new_ce_state);
    }
}

impl CongestionOps for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn needs_ecn(&self) -> bool {
        true
    }

    fn init(&mut self, tp: &mut CcView) {
        if !tp.ecn_ok {
            self.reno_fallback = true;
            return;
        }
        self.prior_rcv_nxt = tp.rcv_nxt;
        self.alpha = self.alpha_on_init.min(DCTCP_MAX_ALPHA);
        self.loss_cwnd = 0;
        self.ce_state = 0;
        self.reset(tp);
    }

    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        if self.reno_fallback {
            return tcp_reno_ssthresh(tp);
        }
        self.loss_cwnd = tp.snd_cwnd;
        let cut = ((tp.snd_cwnd as u64 * self.alpha as u64) >> 11) as u32;
        (tp.snd_cwnd - cut).max(2)
    }

    fn cong_avoid(&mut self, tp: &mut CcView, _ack: u64, acked: u32) {
        tcp_reno_cong_avoid(tp, acked);
    }

    fn in_ack_event(&mut self, tp: &mut CcView, _flags: u32) {
        if self.reno_fallback || tp.snd_una < self.next_seq {
            return;
        }
        // dctcp_update_alpha: the observation window ended.
        let delivered = tp.delivered - self.old_delivered;
        let mut delivered_ce = tp.delivered_ce - self.old_delivered_ce;
        let mut alpha = self.alpha;
        // alpha = (1 - g) alpha: min_not_zero(alpha, alpha >> g), so a small alpha
        // (below 2^g) decays to 0 at once.
        let dec = alpha >> self.shift_g;
        alpha -= if dec == 0 { alpha } else { dec.min(alpha) };
        if delivered_ce > 0 {
            // + g F in 1/1024: (delivered_ce << (10 - g)) / delivered.
            delivered_ce <<= 10 - self.shift_g;
            delivered_ce /= delivered.max(1);
            alpha = (alpha as u64 + delivered_ce).min(DCTCP_MAX_ALPHA as u64) as u32;
        }
        self.alpha = alpha;
        self.reset(tp);
    }

    fn set_state(&mut self, tp: &mut CcView, new_state: CaState) {
        if !self.reno_fallback && new_state == CaState::Recovery && new_state != tp.ca_state {
            self.react_to_loss(tp);
        }
    }

    fn cwnd_event(&mut self, tp: &mut CcView, ev: CaEvent) {
        if self.reno_fallback {
            return;
        }
        match ev {
            CaEvent::EcnIsCe | CaEvent::EcnNoCe => self.ece_ack_update(tp, ev),
            CaEvent::Loss => self.react_to_loss(tp),
            _ => {}
        }
    }

    fn undo_cwnd(&mut self, tp: &CcView) -> u32 {
        if self.reno_fallback {
            return tp.snd_cwnd.max(tp.prior_cwnd);
        }
        tp.snd_cwnd.max(self.loss_cwnd)
    }

    fn info(&self) -> Vec<InfoField> {
        vec![(
            "alpha",
            InfoValue::Num(self.alpha as f64 / DCTCP_MAX_ALPHA as f64),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> CcView {
        let mut tp = CcView::new(1448, 0);
        tp.ecn_ok = true;
        tp
    }

    /// One window: `delivered` segments acked of which `ce` with ECE; snd_una reaches
    /// the window's end.
    fn window(d: &mut Dctcp, tp: &mut CcView, delivered: u64, ce: u64) {
        tp.snd_nxt += delivered;
        tp.snd_una = d.next_seq.max(tp.snd_una);
        tp.delivered += delivered;
        tp.delivered_ce += ce;
        d.in_ack_event(tp, 0);
    }

    #[test]
    fn alpha_update_once_per_window() {
        let mut tp = view();
        let mut d = Dctcp::new(4, 1024);
        d.init(&mut tp);
        assert_eq!(d.alpha, 1024);
        // 10 delivered, 5 with CE: alpha = 1024 - 1024/16 + (5 << 6) / 10 = 960 + 32 = 992
        // ((1 - 1/16) * 1 + 1/16 * 0.5 = 0.96875 = 992/1024).
        window(&mut d, &mut tp, 10, 5);
        assert_eq!(d.alpha, 992);
        // No marks: 992 - 62 = 930.
        window(&mut d, &mut tp, 10, 0);
        assert_eq!(d.alpha, 930);
        // An ACK before snd_una reaches next_seq changes nothing.
        tp.snd_nxt += 10;
        tp.delivered += 3;
        tp.delivered_ce += 3;
        d.in_ack_event(&mut tp, 0);
        assert_eq!(d.alpha, 930);
    }

    #[test]
    fn alpha_from_zero_and_small_alpha_decays_to_zero() {
        let mut tp = view();
        let mut d = Dctcp::new(4, 0);
        d.init(&mut tp);
        // All 20 marked: F = 1, alpha = g * 1024 = 64.
        window(&mut d, &mut tp, 20, 20);
        assert_eq!(d.alpha, 64);
        // alpha 10 < 16: min_not_zero(10, 0) = 10 -> 0.
        d.alpha = 10;
        window(&mut d, &mut tp, 20, 0);
        assert_eq!(d.alpha, 0);
    }

    #[test]
    fn ssthresh_cuts_by_alpha_over_two_and_loss_halves() {
        let mut tp = view();
        let mut d = Dctcp::new(4, 1024);
        d.init(&mut tp);
        tp.snd_cwnd = 100;
        // alpha 1024: 100 - 100 * 1024 / 2048 = 50.
        assert_eq!(d.ssthresh(&tp), 50);
        // alpha 992: 100 - (99200 >> 11 = 48) = 52.
        d.alpha = 992;
        assert_eq!(d.ssthresh(&tp), 52);
        // alpha 64 (6.25 %): 100 - (6400 >> 11 = 3) = 97.
        d.alpha = 64;
        assert_eq!(d.ssthresh(&tp), 97);
        // Entering Recovery overrides with half the window.
        tp.snd_ssthresh = 97;
        d.set_state(&mut tp, CaState::Recovery);
        assert_eq!(tp.snd_ssthresh, 50);
        // Undo returns to the cwnd before the cut.
        tp.snd_cwnd = 50;
        assert_eq!(d.undo_cwnd(&tp), 100);
        // Never below 2.
        tp.snd_cwnd = 2;
        d.alpha = 1024;
        assert_eq!(d.ssthresh(&tp), 2);
    }

    #[test]
    fn receiver_ce_state_flush_and_immediate_ack() {
        let mut tp = view();
        let mut d = Dctcp::new(4, 1024);
        d.init(&mut tp);
        // Segment 0 (no CE) arrives: rcv_nxt 1, state stays 0, no immediate ACK.
        tp.rcv_nxt = 1;
        d.cwnd_event(&mut tp, CaEvent::EcnNoCe);
        assert_eq!(
            (tp.ack_now, tp.send_ack, tp.ecn_demand_cwr),
            (false, None, false)
        );
        // Segment 1 with CE while the delayed ACK for segment 0 is pending: that ACK goes
        // first (ack 1, no ECE), then the CE state is ACKed at once with ECE.
        tp.ack_timer_pending = true;
        tp.rcv_nxt = 2;
        d.cwnd_event(&mut tp, CaEvent::EcnIsCe);
        assert_eq!(tp.send_ack, Some((1, false)));
        assert!(tp.ack_now && tp.ecn_demand_cwr);
        // Segment 2 with CE again: no change, no forced ACK.
        tp.send_ack = None;
        tp.ack_now = false;
        tp.ack_timer_pending = false;
        tp.rcv_nxt = 3;
        d.cwnd_event(&mut tp, CaEvent::EcnIsCe);
        assert_eq!(
            (tp.ack_now, tp.send_ack, tp.ecn_demand_cwr),
            (false, None, true)
        );
        // Segment 3 without CE, nothing pending: immediate ACK, ECE off, no flush.
        tp.rcv_nxt = 4;
        d.cwnd_event(&mut tp, CaEvent::EcnNoCe);
        assert_eq!(
            (tp.ack_now, tp.send_ack, tp.ecn_demand_cwr),
            (true, None, false)
        );
    }

    #[test]
    fn without_ecn_it_is_reno() {
        let mut tp = CcView::new(1448, 0);
        let mut d = Dctcp::new(4, 1024);
        d.init(&mut tp);
        tp.snd_cwnd = 100;
        assert_eq!(d.ssthresh(&tp), 50);
        d.cwnd_event(&mut tp, CaEvent::EcnIsCe);
        assert!(!tp.ecn_demand_cwr);
    }
}
