//! The `tcp_congestion_ops` of BBR and every variant: tcp_bbr.c `bbr_init`,
//! `bbr_main` (cong_control), `bbr_ssthresh`, `bbr_undo_cwnd`, `bbr_cwnd_event`,
//! `bbr_set_state`, `bbr_get_info`.
//!
//! Deviations: `info()` reports more than `bbr_get_info` (mode, cycle index, full-pipe
//! flag, long-term estimator, target cwnd, rounds, extra_acked) for recording.

use super::ack_aggregation::bbr_extra_acked;
use super::bw::{bbr_bw, bbr_max_bw};
use super::cwnd::bbr_save_cwnd;
use super::lt_bw::{bbr_lt_bw_sampling, bbr_reset_lt_bw_sampling};
use super::model::bbr_main;
use super::pacing::{bbr_init_pacing_rate_from_rtt, bbr_set_pacing_rate};
use super::probe_rtt::bbr_check_probe_rtt_done;
use super::startup::bbr_reset_startup_mode;
use super::variant::BbrVariant;
use super::{Bbr, BbrConfig, BbrMode, BBR_UNIT, BW_SCALE};
use crate::ops::{
    CaEvent, CaState, CcView, CongestionOps, InfoField, InfoValue, RateSample,
    TCP_INFINITE_SSTHRESH,
};

/// A BBR flavour: the kernel's state plus a variant's own.
#[derive(Clone, Debug)]
pub struct BbrFamily<V: BbrVariant> {
    pub(crate) bbr: Bbr,
    pub(crate) variant: V,
}

impl<V: BbrVariant> BbrFamily<V> {
    pub fn new(cfg: BbrConfig, variant: V) -> Self {
        BbrFamily {
            bbr: Bbr::new(cfg),
            variant,
        }
    }
    /// The BBR state, read-only (tests, recording).
    pub fn bbr(&self) -> &Bbr {
        &self.bbr
    }
    pub fn variant(&self) -> &V {
        &self.variant
    }
}

/// A bandwidth in packets/us << BW_SCALE as bits per second (`bbr_get_info`'s
/// conversion to bytes/s, times 8).
pub fn bw_to_bps(bw: u32, mss: u32) -> f64 {
    let bytes_per_sec = (u64::from(bw) * u64::from(mss) * 1_000_000) >> BW_SCALE;
    bytes_per_sec as f64 * 8.0
}

impl<V: BbrVariant> CongestionOps for BbrFamily<V> {
    fn name(&self) -> &'static str {
        self.variant.name()
    }

    /// `bbr_init`.
    fn init(&mut self, tp: &mut CcView) {
        let bbr = &mut self.bbr;
        bbr.prior_cwnd = 0;
        bbr.restore_cwnd = false;
        tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
        bbr.rtt_cnt = 0;
        // Upstream 6de035fec045 (v5.14): the first round ends at the first ACK of data
        // sent after init, also when init runs with packets already delivered.
        bbr.next_rtt_delivered = if bbr.cfg.kernel.first_round_at_delivered() {
            tp.delivered
        } else {
            0
        };
        bbr.prev_ca_state = CaState::Open;
        bbr.packet_conservation = false;

        bbr.probe_rtt_done_stamp = 0;
        bbr.probe_rtt_round_done = false;
        bbr.min_rtt_us = tp.min_rtt_us; // tcp_min_rtt(tp): u32::MAX if no sample
        bbr.min_rtt_stamp = tp.jiffies32();

        let t = bbr.rtt_cnt;
        bbr.bw.reset(t, 0); // max bw starts at 0

        bbr.has_seen_rtt = false;
        bbr_init_pacing_rate_from_rtt(bbr, tp);

        bbr.round_start = false;
        bbr.idle_restart = false;
        bbr.full_bw_reached = false;
        bbr.full_bw = 0;
        bbr.full_bw_cnt = 0;
        bbr.cycle_mstamp = 0;
        bbr.cycle_idx = 0;
        // The kernel's private area is zeroed before init: no gains until the first ACK.
        bbr.pacing_gain = 0;
        bbr.cwnd_gain = 0;
        bbr_reset_lt_bw_sampling(bbr, tp);
        bbr_reset_startup_mode(bbr);

        bbr.ack_epoch_mstamp = tp.now_us;
        bbr.ack_epoch_acked = 0;
        bbr.extra_acked_win_rtts = 0;
        bbr.extra_acked_win_idx = 0;
        bbr.extra_acked = [0, 0];

        bbr.mss = tp.mss_cache;
        tp.pacing_needed = true; // SK_PACING_NEEDED
    }

    /// `bbr_ssthresh`: entering loss recovery; save cwnd for when we exit or undo it.
    /// ssthresh itself is left as is (BBR does not use it).
    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        bbr_save_cwnd(&mut self.bbr, tp);
        tp.snd_ssthresh
    }

    /// `bbr_set_state`: an RTO counts as the end of a round with a loss.
    fn set_state(&mut self, tp: &mut CcView, new_state: CaState) {
        if new_state == CaState::Loss {
            let rs = RateSample {
                losses: 1,
                ..RateSample::default()
            };
            let bbr = &mut self.bbr;
            bbr.prev_ca_state = CaState::Loss;
            bbr.full_bw = 0;
            bbr.round_start = true; // treat the RTO like the end of a round
            bbr_lt_bw_sampling(bbr, tp, &rs);
        }
    }

    /// `bbr_cwnd_event`: restarting from idle while app-limited.
    fn cwnd_event(&mut self, tp: &mut CcView, ev: CaEvent) {
        let bbr = &mut self.bbr;
        if ev == CaEvent::TxStart && tp.app_limited != 0 {
            bbr.idle_restart = true;
            bbr.ack_epoch_mstamp = tp.now_us;
            bbr.ack_epoch_acked = 0;
            // No need for more speed: pace at the estimate to avoid needless overflow.
            if bbr.mode == BbrMode::ProbeBw {
                let bw = bbr_bw(bbr);
                bbr_set_pacing_rate(bbr, tp, bw, BBR_UNIT);
            } else if bbr.mode == BbrMode::ProbeRtt && bbr.cfg.kernel.probe_rtt_v419() {
                bbr_check_probe_rtt_done(bbr, tp);
            }
        }
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    /// `bbr_main`.
    fn cong_control(&mut self, tp: &mut CcView, rs: &RateSample) {
        self.bbr.mss = tp.mss_cache;
        bbr_main(&mut self.bbr, &mut self.variant, tp, rs);
    }

    /// `bbr_undo_cwnd`: a spurious slow-down; restart full-pipe detection and the
    /// long-term estimator, keep cwnd.
    fn undo_cwnd(&mut self, tp: &CcView) -> u32 {
        let bbr = &mut self.bbr;
        if bbr.cfg.kernel.undo_resets_estimators() {
            // v4.15: "reset full pipe detection / long-term bandwidth sampling on loss
            // recovery undo"; before, undo only kept cwnd.
            bbr.full_bw = 0;
            bbr.full_bw_cnt = 0;
            bbr_reset_lt_bw_sampling(bbr, tp);
        }
        tp.snd_cwnd
    }

    /// `bbr_get_info` and more.
    fn info(&self) -> Vec<InfoField> {
        let bbr = &self.bbr;
        let unit = f64::from(BBR_UNIT);
        let min_rtt_ms = if bbr.min_rtt_us == u32::MAX {
            f64::NAN
        } else {
            f64::from(bbr.min_rtt_us) / 1000.0
        };
        let mut out = vec![
            ("mode", InfoValue::Label(bbr.mode.label())),
            (
                "btlbw_bps",
                InfoValue::Num(bw_to_bps(bbr_max_bw(bbr), bbr.mss)),
            ),
            ("bw_bps", InfoValue::Num(bw_to_bps(bbr_bw(bbr), bbr.mss))),
            ("min_rtt_ms", InfoValue::Num(min_rtt_ms)),
            (
                "pacing_gain",
                InfoValue::Num(f64::from(bbr.pacing_gain) / unit),
            ),
            ("cwnd_gain", InfoValue::Num(f64::from(bbr.cwnd_gain) / unit)),
            ("cycle_idx", InfoValue::Num(f64::from(bbr.cycle_idx))),
            (
                "full_bw_reached",
                InfoValue::Num(f64::from(u8::from(bbr.full_bw_reached))),
            ),
            (
                "lt_use_bw",
                InfoValue::Num(f64::from(u8::from(bbr.lt_use_bw))),
            ),
            ("lt_bw_bps", InfoValue::Num(bw_to_bps(bbr.lt_bw, bbr.mss))),
            (
                "target_cwnd_pkts",
                InfoValue::Num(f64::from(bbr.target_cwnd)),
            ),
            ("prior_cwnd_pkts", InfoValue::Num(f64::from(bbr.prior_cwnd))),
            ("round_count", InfoValue::Num(f64::from(bbr.rtt_cnt))),
            (
                "extra_acked_pkts",
                InfoValue::Num(f64::from(bbr_extra_acked(bbr))),
            ),
            (
                "packet_conservation",
                InfoValue::Num(f64::from(u8::from(bbr.packet_conservation))),
            ),
        ];
        self.variant.info(bbr, &mut out);
        out
    }
}
