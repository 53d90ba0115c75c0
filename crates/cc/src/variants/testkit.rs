//! A BBR flow parked in steady PROBE_BW, for hook-level tests that drive a variant
//! through `cong_control` with hand-built `RateSample`s.
//!
//! The state, chosen so the arithmetic is easy to do by hand:
//! - min_rtt 40 ms; bw = 20971 packets/us << 24, so one BDP = ceil(20971 x 40000 / 2^24)
//!   = ceil(49.998) = 50 packets and 2 BDP = ceil(99.997) = 100;
//! - pacing rate ~1.79 MB/s, so `bbr_tso_segs_goal` = max(1767 B / 1448 B, 2) = 2 and the
//!   quantization budget adds 3 x 2 = 6: target at gain 2 = 106, at gain 1 = 56;
//! - pipe full, cycle phase 2 (gain 1.0), cwnd 100, 100 packets out, extra_acked and the
//!   long-term estimator off;
//! - `ack` advances `now` by 100 us but not the delivered clock, so the gain cycle does
//!   not move unless a test moves it (`advance_cycle_clock`); samples carry 1-4 packets
//!   per 40 ms, far below the max filter, and end no round unless asked.

use crate::bbr::{BbrConfig, BbrFamily, BbrMode, BbrVariant, BBR_UNIT};
use crate::ops::{CaState, CcView, CongestionOps, RateSample};

pub const BW: u32 = 20_971;
pub const MIN_RTT_US: u32 = 40_000;
pub const START_US: u64 = 1_000_000;

pub struct Flow<V: BbrVariant> {
    pub cc: BbrFamily<V>,
    pub tp: CcView,
}

impl<V: BbrVariant> Flow<V> {
    pub fn steady(variant: V) -> Self {
        let cfg = BbrConfig {
            extra_acked_gain: 0,
            lt_bw: false,
            ..BbrConfig::default()
        };
        let mut tp = CcView::new(1448, START_US);
        let mut cc = BbrFamily::new(cfg, variant);
        cc.init(&mut tp);
        let b = &mut cc.bbr;
        b.mode = BbrMode::ProbeBw;
        b.full_bw_reached = true;
        b.min_rtt_us = MIN_RTT_US;
        b.min_rtt_stamp = tp.jiffies32();
        b.bw.reset(b.rtt_cnt, BW);
        b.cycle_idx = 2;
        b.cycle_mstamp = START_US;
        b.pacing_gain = BBR_UNIT;
        b.cwnd_gain = 2 * BBR_UNIT;
        b.has_seen_rtt = true;
        tp.snd_cwnd = 100;
        tp.packets_out = 100;
        tp.delivered = 10_000;
        tp.delivered_mstamp_us = START_US;
        tp.srtt_us = 50_000;
        tp.pacing_rate = 1_790_000;
        b.next_rtt_delivered = u64::MAX; // no round ends unless a test asks
        Flow { cc, tp }
    }

    /// Put the flow at gain-cycle phase `idx` starting now.
    pub fn at_phase(mut self, idx: u32, pacing_gain: u32) -> Self {
        self.cc.bbr.cycle_idx = idx;
        self.cc.bbr.pacing_gain = pacing_gain;
        self.cc.bbr.cycle_mstamp = self.tp.delivered_mstamp_us;
        self
    }

    /// Move the delivered clock (which times the gain-cycle phases) by `us`.
    pub fn advance_cycle_clock(&mut self, us: u64) {
        self.tp.delivered_mstamp_us += us;
    }

    /// Let `us` pass on the wall clock only.
    pub fn wait(&mut self, us: u64) {
        self.tp.now_us += us;
    }

    /// One ACK: `delivered` packets newly delivered (also the rate sample over 40 ms),
    /// this RTT sample (us, -1 for none), `losses` newly lost, the CA state after it.
    /// `round_end` makes it end a packet-timed round. Returns snd_cwnd afterwards.
    pub fn ack_full(
        &mut self,
        rtt_us: i64,
        delivered: u32,
        losses: u32,
        state: CaState,
        round_end: bool,
    ) -> u32 {
        self.tp.now_us += 100;
        let prior_in_flight = crate::helpers::tcp_packets_in_flight(&self.tp);
        self.tp.delivered += u64::from(delivered);
        self.tp.ca_state = state;
        if round_end {
            self.cc.bbr.next_rtt_delivered = self.tp.delivered - 100;
        }
        let rs = RateSample {
            prior_delivered: self.tp.delivered - 100,
            delivered: i64::from(delivered),
            interval_us: 40_000,
            rtt_us,
            losses,
            acked_sacked: delivered,
            prior_in_flight,
            ..RateSample::default()
        };
        self.cc.cong_control(&mut self.tp, &rs);
        if round_end {
            self.cc.bbr.next_rtt_delivered = u64::MAX;
        }
        self.tp.snd_cwnd
    }

    /// An ordinary ACK of one packet.
    pub fn ack(&mut self, rtt_us: i64, losses: u32, state: CaState) -> u32 {
        self.ack_full(rtt_us, 1, losses, state, false)
    }
}
