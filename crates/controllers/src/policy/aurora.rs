//! Aurora's mathematics (Jay et al., ICML 2019; PCCproject/PCC-RL src/gym/network_sim.py)
//! as tcplab.gym's preset models it (python/tcplab/gym/presets.py lists the deviations
//! from PCC-RL): the observation history of (latency gradient, latency ratio, sending
//! ratio), the reward, the rate change per action, and the absolute bounds a deployed
//! sender keeps (see the `policy` module's docs for why they are absolute). The training
//! environment (through crates/py), the simulator's agents and the kernel backend's agent
//! all call these, so a policy sees and does the same everywhere.
//!
//! Deviations from PCC-RL: the bounds scale with srtt (PCC-RL's MIN_RATE = 40 and
//! MAX_RATE = 1000 packets/s are absolute rates for links of 100-500 packets/s), and a
//! window (2 x rate x srtt) is written beside the rate so that it never binds below it.

use tcplab_sim::IntervalStats;

/// Segment payload the Aurora preset sizes windows with (python MSS).
pub const MSS: f64 = 1448.0;
/// PCC-RL `config.DELTA_SCALE`.
pub const DELTA_SCALE: f64 = 0.025;
/// PCC-RL sender_obs bounds of (latency gradient, latency ratio, sending ratio).
pub const FEATURE_LOW: [f64; 3] = [-1.0, 1.0, 0.0];
pub const FEATURE_HIGH: [f64; 3] = [10.0, 10000.0, 1000.0];
/// TCP's initial window (segments; RFC 6928, Linux `TCP_INIT_CWND`): what a policy's flow
/// sends before its first RTT sample, and its start rate per that round trip.
pub const INIT_CWND: u32 = 10;
/// The rate's floor in segments per srtt. 4: BBR's smallest window (tcp_bbr.c
/// `bbr_cwnd_min_target`: "a sliding window protocol ACKing every other packet needs at
/// least 4 packets in flight"; PCC-RL's `MIN_CWND` is 4 too): below it delayed ACKs
/// stall the ACK clock the observation is made of.
pub const MIN_PKTS_PER_RTT: f64 = 4.0;
/// The largest cwnd a policy writes (segments), and so its rate's cap (the rate whose
/// window, 2 x rate x srtt, is this). 1 000 000: the largest cwnd an `external` flow
/// takes as a parameter (crates/cc/src/external.rs), 1.45 GB: the window of a rate of
/// 10 Gbit/s at an srtt of 0.58 s, or 100 Gbit/s at 58 ms. It binds only on paths with
/// larger bandwidth-delay products (the engine's rates reach 2.97 Tbit/s) and keeps a
/// policy that only ever raises its rate from overflowing the rate's float.
pub const MAX_CWND: u32 = 1_000_000;
/// Aurora's observation: the last `history` intervals' (latency gradient, latency ratio,
/// sending ratio), oldest first, as float32 (what the policy saw in training).
#[derive(Clone, Debug)]
pub struct AuroraObservation {
    history: usize,
    min_rtt_us: f64,
    prev_rtt_us: Option<f64>,
    feats: Vec<f32>,
}

impl AuroraObservation {
    pub fn new(history: usize) -> Self {
        let mut feats = Vec::with_capacity(3 * history);
        for _ in 0..history {
            feats.extend_from_slice(&[0.0, 1.0, 1.0]);
        }
        AuroraObservation {
            history,
            min_rtt_us: f64::INFINITY,
            prev_rtt_us: None,
            feats,
        }
    }

    pub fn history(&self) -> usize {
        self.history
    }

    /// The observation as the last `push` left it.
    pub fn current(&self) -> &[f32] {
        &self.feats
    }

    /// The interval's latency (us): its mean RTT sample, srtt when it had none.
    pub fn latency_us(iv: &IntervalStats, srtt_us: f64) -> f64 {
        if iv.rtt_samples > 0 {
            iv.rtt_mean_us
        } else {
            srtt_us
        }
    }

    /// Push one interval; returns the observation.
    pub fn push(&mut self, iv: &IntervalStats, srtt_us: f64) -> &[f32] {
        let lat = Self::latency_us(iv, srtt_us);
        if iv.rtt_samples > 0 {
            self.min_rtt_us = self.min_rtt_us.min(iv.rtt_min_us as f64);
        }
        let dur = iv.duration_us as f64;
        let gradient = match self.prev_rtt_us {
            Some(prev) if lat > 0.0 && dur > 0.0 => (lat - prev) / dur,
            _ => 0.0,
        };
        if lat > 0.0 {
            self.prev_rtt_us = Some(lat);
        }
        let ratio = if lat > 0.0 && self.min_rtt_us.is_finite() {
            lat / self.min_rtt_us
        } else {
            1.0
        };
        let send_ratio = if iv.acked_bytes > 0 {
            iv.sent_bytes as f64 / iv.acked_bytes as f64
        } else {
            1.0
        };
        self.feats.drain(..3);
        for (k, v) in [gradient, ratio, send_ratio].into_iter().enumerate() {
            self.feats
                .push(v.max(FEATURE_LOW[k]).min(FEATURE_HIGH[k]) as f32);
        }
        &self.feats
    }
}

/// Aurora's reward (PCC-RL): (10 x throughput in 1500-byte packets/s - 1000 x latency
/// (s) - 2000 x loss ratio) x 0.001.
pub fn aurora_reward(iv: &IntervalStats, srtt_us: f64) -> f64 {
    let dur_s = iv.duration_us as f64 / 1e6;
    if dur_s <= 0.0 {
        return 0.0;
    }
    let throughput_pps = iv.acked_bytes as f64 / 1500.0 / dur_s;
    let latency_s = AuroraObservation::latency_us(iv, srtt_us) / 1e6;
    let acked_pkts = iv.acked_bytes as f64 / MSS;
    let lost = iv.lost_pkts as f64;
    let loss = if acked_pkts + lost > 0.0 {
        lost / (acked_pkts + lost)
    } else {
        0.0
    };
    (10.0 * throughput_pps - 1e3 * latency_s - 2e3 * loss) * 0.001
}

/// Aurora's rate change for action `a` (clamped to [-10, 10]; NaN, from a network that
/// overflowed, changes nothing): x (1 + 0.025 a) or / (1 - 0.025 a).
pub fn aurora_rate(rate_bps: f64, a: f64) -> f64 {
    let a = if a.is_nan() {
        0.0
    } else {
        a.clamp(-10.0, 10.0)
    };
    let d = a * DELTA_SCALE;
    if d >= 0.0 {
        rate_bps * (1.0 + d)
    } else {
        rate_bps / (1.0 - d)
    }
}

/// The rate's bounds at `srtt_us` (bit/s): [`MIN_PKTS_PER_RTT`] segments per srtt, and
/// the rate whose window (2 x rate x srtt) is [`MAX_CWND`] segments.
pub fn aurora_bounds(srtt_us: f64) -> (f64, f64) {
    let srtt_us = srtt_us.max(1.0);
    (
        MIN_PKTS_PER_RTT * MSS * 8e6 / srtt_us,
        MAX_CWND as f64 * MSS * 8e6 / (2.0 * srtt_us),
    )
}

/// What Aurora writes for a rate at `srtt_us` (> 0: a policy writes only once its flow
/// has an RTT sample): the rate within [`aurora_bounds`], and a window of 2 x rate x srtt
/// rounded up (at least 10 segments, at most [`MAX_CWND`]) so that the window never binds
/// below the rate. The rounding forgives 1e-12 of float error, so that a window of
/// exactly 20 segments (the start's) is 20, not 21. Returns (rate bit/s, cwnd segments).
pub fn aurora_write(rate_bps: f64, srtt_us: f64) -> (f64, u32) {
    let (floor, cap) = aurora_bounds(srtt_us);
    let rate = rate_bps.max(floor).min(cap);
    let window = 2.0 * rate * srtt_us.max(1.0) / (8e6 * MSS);
    let cwnd = (window * (1.0 - 1e-12)).ceil();
    (rate, cwnd.clamp(10.0, MAX_CWND as f64) as u32)
}

/// The start, as TCP starts: the initial window over the first round trip,
/// `INIT_CWND x MSS x 8 / srtt` bit/s, written as [`aurora_write`] writes any rate.
pub fn aurora_start(srtt_us: f64) -> (f64, u32) {
    aurora_write(INIT_CWND as f64 * MSS * 8e6 / srtt_us.max(1.0), srtt_us)
}
