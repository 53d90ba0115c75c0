//! The `tcp_congestion_ops` of v3 tcp_bbr.c: `bbr_init`, `bbr_main` (cong_control),
//! `bbr_ssthresh`, `bbr_undo_cwnd`, `bbr_cwnd_event`, `bbr_set_state`,
//! `bbr_skb_marked_lost`, `bbr_get_info`.
//!
//! Undo: entering recovery saves bw_lo, inflight_lo and inflight_hi; a spurious
//! recovery restores each to at least its saved value, resets the plateau detector and
//! returns the saved cwnd. An RTO (Loss) resets the plateau detector and, outside bw
//! probing, starts inflight_lo at the pre-RTO cwnd so the next loss round cuts from it;
//! leaving Loss restores the saved cwnd.
//!
//! Deviations: `info()` reports more than `bbr_get_info` (phase label, ECN state,
//! probe wait); the ECN CE-state branch of `bbr_cwnd_event` is not modelled (module
//! doc of `bbr3`).

use super::ack_aggregation::bbr_extra_acked;
use super::bw::{bbr_bw, bbr_max_bw};
use super::cwnd::bbr_save_cwnd;
use super::loss::{bbr_exit_loss_recovery, bbr_run_loss_probe_recovery, bbr_skb_marked_lost};
use super::lower_bounds::bbr_reset_congestion_signals;
use super::model::bbr_main;
use super::pacing::{bbr_init_pacing_rate_from_rtt, bbr_set_pacing_rate};
use super::probe_bw::bbr_is_probing_bandwidth;
use super::probe_rtt::bbr_check_probe_rtt_done;
use super::startup::bbr_reset_full_bw;
use super::variant::{Bbr3Variant, KernelBbr3};
use super::{AckPhase, Bbr3, Bbr3Config, Mode, Phase, Version, BBR_UNIT, UNSET};
use crate::bbr::family::bw_to_bps;
use crate::ops::{
    CaEvent, CaState, CcView, CongestionOps, InfoField, InfoValue, LostSkb, RateSample,
    TCP_INFINITE_SSTHRESH,
};

/// BBRv3 behind the seam, with a variant's hooks (`KernelBbr3`: none).
#[derive(Clone, Debug)]
pub struct Bbr3Ops<V: Bbr3Variant = KernelBbr3> {
    pub(crate) bbr: Bbr3,
    pub(crate) variant: V,
}

impl Bbr3Ops<KernelBbr3> {
    /// Plain BBRv3.
    pub fn new(cfg: Bbr3Config) -> Self {
        Bbr3Ops::with_variant(cfg, KernelBbr3)
    }
}

impl<V: Bbr3Variant> Bbr3Ops<V> {
    pub fn with_variant(cfg: Bbr3Config, variant: V) -> Self {
        Bbr3Ops {
            bbr: Bbr3::new(cfg),
            variant,
        }
    }
    /// The state, read-only (tests, recording).
    pub fn bbr(&self) -> &Bbr3 {
        &self.bbr
    }
    pub fn variant(&self) -> &V {
        &self.variant
    }
}

/// `bbr_init`.
pub fn bbr_init(bbr: &mut Bbr3, tp: &mut CcView) {
    bbr.initialized = true;
    bbr.init_cwnd = tp.snd_cwnd.min(0x7F);
    bbr.prior_cwnd = tp.prior_cwnd;
    tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
    // v3 starts the first round at tp->delivered; v2's shared bbr_init at 0 (v1's code
    // before 5.14; equal here, where init runs with nothing delivered).
    bbr.next_rtt_delivered = match bbr.cfg.version {
        Version::V2 => 0,
        Version::V3 => tp.delivered,
    };
    bbr.prev_ca_state = CaState::Open;

    bbr.probe_rtt_done_stamp = 0;
    bbr.probe_rtt_round_done = false;
    bbr.probe_rtt_min_us = tp.min_rtt_us; // tcp_min_rtt: u32::MAX if no sample
    bbr.probe_rtt_min_stamp = tp.jiffies32();
    bbr.min_rtt_us = tp.min_rtt_us;
    bbr.min_rtt_stamp = tp.jiffies32();

    bbr.has_seen_rtt = false;
    bbr_init_pacing_rate_from_rtt(bbr, tp);

    bbr.round_start = false;
    bbr.idle_restart = false;
    bbr.full_bw_reached = false;
    bbr.full_bw = 0;
    bbr.full_bw_cnt = 0;
    bbr.cycle_mstamp = 0;
    bbr.cycle_idx = Phase::Up; // 0
    bbr.mode = Mode::Startup; // bbr_reset_startup_mode

    bbr.ack_epoch_mstamp = tp.now_us;
    bbr.ack_epoch_acked = 0;
    bbr.extra_acked_win_rtts = 0;
    bbr.extra_acked_win_idx = 0;
    bbr.extra_acked = [0, 0];

    bbr.try_fast_path = false;
    tp.pacing_needed = true; // SK_PACING_NEEDED

    // Start sampling the ECN mark rate after the first full flight is acked.
    bbr.loss_round_delivered = tp.delivered + 1;
    bbr.loss_round_start = false;
    bbr.undo_bw_lo = 0;
    bbr.undo_inflight_lo = 0;
    bbr.undo_inflight_hi = 0;
    bbr.loss_events_in_round = 0;
    bbr.startup_ecn_rounds = 0;
    bbr_reset_congestion_signals(bbr);
    bbr.bw_lo = UNSET;
    bbr.bw_hi = [0, 0];
    bbr.inflight_lo = UNSET;
    bbr.inflight_hi = UNSET;
    bbr_reset_full_bw(bbr);
    bbr.bw_probe_up_cnt = UNSET;
    bbr.bw_probe_up_acks = 0;
    bbr.bw_probe_up_rounds = 0;
    bbr.probe_wait_us = 0;
    bbr.stopped_risky_probe = false;
    bbr.ack_phase = AckPhase::Init;
    bbr.rounds_since_probe = 0;
    bbr.bw_probe_samples = false;
    bbr.prev_probe_too_high = false;
    bbr.ecn_eligible = false;
    bbr.ecn_alpha = bbr.cfg.ecn_alpha_init;
    bbr.alpha_last_delivered = 0;
    bbr.alpha_last_delivered_ce = 0;
    bbr.v2_bw_hi = UNSET;
    bbr.got_ok_bw_probe_sample = false;
    bbr.mss = tp.mss_cache;
}

fn num(x: u32) -> InfoValue {
    InfoValue::Num(f64::from(x))
}

/// A packet count, NaN when unset (`~0U`).
fn pkts_or_nan(x: u32) -> InfoValue {
    if x == UNSET {
        InfoValue::Num(f64::NAN)
    } else {
        num(x)
    }
}

impl<V: Bbr3Variant> CongestionOps for Bbr3Ops<V> {
    fn name(&self) -> &'static str {
        self.variant.name()
    }

    fn init(&mut self, tp: &mut CcView) {
        bbr_init(&mut self.bbr, tp);
    }

    /// `bbr_ssthresh`: entering recovery; save cwnd and the loss-adapted bounds for
    /// undo. ssthresh itself is left as is.
    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        let bbr = &mut self.bbr;
        bbr_save_cwnd(bbr, tp);
        bbr.undo_bw_lo = bbr.bw_lo;
        bbr.undo_inflight_lo = bbr.inflight_lo;
        bbr.undo_inflight_hi = bbr.inflight_hi;
        tp.snd_ssthresh
    }

    /// `bbr_set_state`.
    fn set_state(&mut self, tp: &mut CcView, new_state: CaState) {
        let bbr = &mut self.bbr;
        if new_state == CaState::Loss {
            bbr.prev_ca_state = CaState::Loss;
            // (tcp_plb_update_state_upon_rto: PLB not modelled.) The RTO may have
            // repathed the flow: re-learn (v2: only full_bw = 0).
            match bbr.cfg.version {
                Version::V2 => bbr.full_bw = 0,
                Version::V3 => bbr_reset_full_bw(bbr),
            }
            if !bbr_is_probing_bandwidth(bbr) && bbr.inflight_lo == UNSET {
                // bbr_adapt_lower_bounds needs the cwnd before the RTO (v2: the saved
                // cwnd alone).
                bbr.inflight_lo = match bbr.cfg.version {
                    Version::V2 => bbr.prior_cwnd,
                    Version::V3 => tp.snd_cwnd.max(bbr.prior_cwnd),
                };
            }
        } else if bbr.prev_ca_state == CaState::Loss {
            bbr_exit_loss_recovery(bbr, tp);
        }
    }

    /// `bbr_cwnd_event`.
    fn cwnd_event(&mut self, tp: &mut CcView, ev: CaEvent) {
        let bbr = &mut self.bbr;
        match ev {
            CaEvent::TxStart if tp.app_limited != 0 => {
                bbr.idle_restart = true;
                bbr.ack_epoch_mstamp = tp.now_us;
                bbr.ack_epoch_acked = 0;
                // Restarting app-limited from idle: pace at the estimate.
                if bbr.mode == Mode::ProbeBw {
                    let bw = bbr_bw(bbr);
                    bbr_set_pacing_rate(bbr, tp, bw, BBR_UNIT);
                } else if bbr.mode == Mode::ProbeRtt {
                    bbr_check_probe_rtt_done(bbr, tp);
                }
            }
            CaEvent::TlpRecovery if bbr.cfg.loss_probe_recovery => {
                bbr_run_loss_probe_recovery(bbr, tp)
            }
            _ => {}
        }
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn cong_control(&mut self, tp: &mut CcView, rs: &RateSample) {
        self.bbr.mss = tp.mss_cache;
        bbr_main(&mut self.bbr, &mut self.variant, tp, rs);
    }

    fn skb_marked_lost(&mut self, tp: &CcView, skb: &LostSkb) {
        bbr_skb_marked_lost(&mut self.bbr, tp, skb);
    }

    /// `bbr_undo_cwnd`: revert the short-term model after a spurious recovery.
    fn undo_cwnd(&mut self, tp: &CcView) -> u32 {
        let bbr = &mut self.bbr;
        if bbr.cfg.version == Version::V2 {
            // bbr2_undo_cwnd: reset full-pipe detection; revert only with bbr_undo.
            bbr.full_bw = 0;
            bbr.full_bw_cnt = 0;
            bbr.loss_in_round = false;
            if !bbr.cfg.undo {
                return tp.snd_cwnd;
            }
            bbr.bw_lo = bbr.bw_lo.max(bbr.undo_bw_lo);
            bbr.inflight_lo = bbr.inflight_lo.max(bbr.undo_inflight_lo);
            bbr.inflight_hi = bbr.inflight_hi.max(bbr.undo_inflight_hi);
            return bbr.prior_cwnd;
        }
        bbr_reset_full_bw(bbr); // spurious slow-down
        bbr.loss_in_round = false;
        bbr.bw_lo = bbr.bw_lo.max(bbr.undo_bw_lo);
        bbr.inflight_lo = bbr.inflight_lo.max(bbr.undo_inflight_lo);
        bbr.inflight_hi = bbr.inflight_hi.max(bbr.undo_inflight_hi);
        bbr.try_fast_path = false; // slow path to set cwnd and pacing
        bbr.prior_cwnd
    }

    /// `bbr_get_info` and more.
    fn info(&self) -> Vec<InfoField> {
        let bbr = &self.bbr;
        let unit = f64::from(BBR_UNIT);
        let bps = |bw: u32| {
            if bw == UNSET {
                InfoValue::Num(f64::NAN)
            } else {
                InfoValue::Num(bw_to_bps(bw, bbr.mss))
            }
        };
        let min_rtt_ms = if bbr.min_rtt_us == UNSET {
            f64::NAN
        } else {
            f64::from(bbr.min_rtt_us) / 1000.0
        };
        let phase = if bbr.mode == Mode::ProbeBw {
            bbr.cycle_idx.label()
        } else {
            "-"
        };
        let mut out = vec![
            ("mode", InfoValue::Label(bbr.mode.label())),
            ("phase", InfoValue::Label(phase)),
            ("btlbw_bps", bps(bbr_max_bw(bbr))),
            ("bw_bps", bps(bbr_bw(bbr))),
            ("bw_lo_bps", bps(bbr.bw_lo)),
            ("bw_latest_bps", bps(bbr.bw_latest)),
            ("inflight_lo_pkts", pkts_or_nan(bbr.inflight_lo)),
            ("inflight_hi_pkts", pkts_or_nan(bbr.inflight_hi)),
            ("inflight_latest_pkts", num(bbr.inflight_latest)),
            ("min_rtt_ms", InfoValue::Num(min_rtt_ms)),
            (
                "pacing_gain",
                InfoValue::Num(f64::from(bbr.pacing_gain) / unit),
            ),
            ("cwnd_gain", InfoValue::Num(f64::from(bbr.cwnd_gain) / unit)),
            ("full_bw_reached", num(u32::from(bbr.full_bw_reached))),
            ("ecn_eligible", num(u32::from(bbr.ecn_eligible))),
            ("ecn_alpha", InfoValue::Num(f64::from(bbr.ecn_alpha) / unit)),
            ("rounds_since_probe", num(bbr.rounds_since_probe)),
            (
                "probe_wait_ms",
                InfoValue::Num(f64::from(bbr.probe_wait_us) / 1000.0),
            ),
            ("extra_acked_pkts", num(u32::from(bbr_extra_acked(bbr)))),
            ("prior_cwnd_pkts", num(bbr.prior_cwnd)),
        ];
        self.variant.info(bbr, &mut out);
        out
    }
}
