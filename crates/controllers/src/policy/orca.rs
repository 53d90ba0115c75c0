//! Orca's mathematics (S. Abbasloo, C.-Y. Yen, H. J. Chao, "Classic Meets Modern: a
//! Pragmatic Learning-Based Congestion Control for the Internet", SIGCOMM 2020; code
//! github.com/Soheil-ab/Orca) as its code computes them: CUBIC runs underneath, and every
//! report period the agent reads the socket's statistics, forms a 7-feature state,
//! stacks the last 10 states, and answers an action a in [-1, 1] that scales CUBIC's
//! window by 4^a; CUBIC continues from the written window. The training environment
//! (through crates/py), the simulator's agents and tcplab.gym's preset all call these.
//!
//! Follows (file: function):
//! - rl-module/envwrapper.py `TCP_Env_Wrapper.get_state`: the state, with
//!   `use_normalizer = false` (rl-module/params.json), so every `*_n_min` value is the raw
//!   one: [thr / max_bw, min(pacing_rate / max_bw, 10), 5 x loss_rate / max_bw, samples /
//!   cwnd, delta_t, min_rtt / srtt, delay_metric] (the first three 0 while max_bw is 0),
//!   where max_bw is the largest thr of the episode and delay_metric = 1.25 min_rtt / srtt
//!   when srtt > 1.25 min_rtt, else 1 (`delay_margin_coef` = 1.25); the reward
//!   (thr - 5 x loss_rate) / max_bw x delay_metric. Units as the server sends them
//!   (src/orca-server-mahimahi.cc `CntThread`): thr, pacing_rate and loss_rate in bytes/s,
//!   delta_t in seconds, min_rtt and srtt in ms (only their ratio is used).
//! - rl-module/d5.py: the policy's input is the last `rec_dim` = 10 states, oldest first,
//!   zeros before the first (`s0_rec_buffer`).
//! - `map_action` (envwrapper.py) and `CntThread`: the action becomes the integer
//!   int(100 x 4^a), the new window int(that x cwnd / 100) (C integer division), at least
//!   `MIN_CWND` = 4.
//! - `CntThread`: the agent is first asked once CUBIC has left slow start
//!   (`snd_ssthresh < cwnd`); reports every `report_period` = 20 ms.
//! - The Linux patch's sampling (linux/linux-4-13-1-orca-0521+c2tcp.patch, its DeepCC
//!   functions): pacing_rate = MTU x max(cwnd, packets_out) / srtt
//!   (`deepcc_update_pacing_rate`), loss = tp->lost since the last report x MSS
//!   (`deepcc_get_info`), samples = the RTT samples since then (`deepcc_pkts_acked`).
//!
//! Deviations:
//! - thr is the interval's delivered bytes over its length; Orca's kernel reports the
//!   mean of the interval's per-ACK delivery-rate samples (`deepcc_get_rate_sample`:
//!   rs->delivered x MSS / rs->interval_us). The engine keeps per-interval counts, not
//!   sums of rate samples; over an interval of several ACKs the two agree to the spread
//!   of the samples.
//! - min_rtt is the socket's windowed minimum (Linux's tcp_min_rtt, a 300 s window, the
//!   handshake's sample included); Orca's is the minimum of its own ACK samples. They
//!   differ only when the handshake's round trip is the shortest or a run is longer
//!   than 300 s.
//! - Every interval is a report. Orca's server, finding no RTT sample since its last read,
//!   polls again 2 ms later; an interval without a sample (a stalled flow) reports here
//!   with samples = 0.
//! - Before its first report Orca's server multiplies cwnd by 1.1 at each poll that
//!   finds a new RTT sample (a user-space loop without a sleep, so its pace is the
//!   machine's); not modelled: CUBIC's slow start runs as it is.
//! - The reward is 0 while max_bw is 0 (no byte delivered yet in the episode), where
//!   Orca's divides by zero.
//! - The window written is capped at [`MAX_CWND`] (an overflow guard; Orca's code
//!   defines `MAX_CWND` 10000 but does not apply it).

use tcplab_sim::{FlowState, IntervalStats};

use super::aurora::{MAX_CWND, MSS};

/// Features of one report (`state_dim`, rl-module/params.json).
pub const ORCA_FEATURES: usize = 7;
/// `delay_margin_coef`: the RTT inflation (over min_rtt) the reward tolerates.
pub const DELAY_MARGIN: f64 = 1.25;
/// The loss weight of the state's third feature and of the reward (envwrapper.py's 5).
pub const LOSS_WEIGHT: f64 = 5.0;
/// The cap of the state's second feature, pacing_rate / max_bw (envwrapper.py's 10).
pub const PACING_CAP: f64 = 10.0;
/// The smallest window Orca writes (orca-server-mahimahi.cc `MIN_CWND`).
pub const ORCA_MIN_CWND: u32 = 4;
/// Orca's report period (orca-server-mahimahi.cc `report_period`), ns.
pub const ORCA_REPORT_NS: u64 = 20_000_000;
/// `tcp_mss_to_mtu` of a 1448-byte MSS with timestamps (1448 + 32 + 20), the bytes per
/// segment `deepcc_update_pacing_rate` paces.
pub const MTU: f64 = 1500.0;

/// Whether Orca's agent acts yet: the flow has an RTT sample and CUBIC has left slow
/// start (`snd_ssthresh < cwnd`, orca-server-mahimahi.cc `slow_start_passed`).
pub fn orca_ready(st: &FlowState) -> bool {
    st.srtt_us > 0 && st.ssthresh_pkts < st.cwnd_pkts
}

/// The percentage Orca scales the window by for action `a`: int(100 x 4^a)
/// (`map_action`). `a` is clamped to [-1, 1] (the actor's tanh range); NaN, from a
/// network that overflowed, keeps the window (100).
pub fn orca_percent(a: f64) -> u64 {
    let a = if a.is_nan() { 0.0 } else { a.clamp(-1.0, 1.0) };
    (100.0 * 4f64.powf(a)) as u64
}

/// The window Orca writes for action `a` on a window of `cwnd` segments:
/// [`orca_percent`] times cwnd, integer-divided by 100, at least [`ORCA_MIN_CWND`].
pub fn orca_cwnd(cwnd: u32, a: f64) -> u32 {
    let target = orca_percent(a) * cwnd as u64 / 100;
    target.clamp(ORCA_MIN_CWND as u64, MAX_CWND as u64) as u32
}

/// Orca's state history and the reward of the last report.
#[derive(Clone, Debug)]
pub struct OrcaObservation {
    history: usize,
    max_bw: f64,
    reward: f64,
    feats: Vec<f32>,
}

impl OrcaObservation {
    pub fn new(history: usize) -> Self {
        OrcaObservation {
            history,
            max_bw: 0.0,
            reward: 0.0,
            feats: vec![0.0; ORCA_FEATURES * history],
        }
    }

    pub fn history(&self) -> usize {
        self.history
    }

    /// The observation as the last `push` left it.
    pub fn current(&self) -> &[f32] {
        &self.feats
    }

    /// The reward of the last pushed report (0 before the first).
    pub fn reward(&self) -> f64 {
        self.reward
    }

    /// The largest throughput of the episode so far (bytes/s).
    pub fn max_bw(&self) -> f64 {
        self.max_bw
    }

    /// Push one report: the interval and the flow's state at its end. Returns the
    /// observation; [`reward`](Self::reward) is the report's reward.
    pub fn push(&mut self, iv: &IntervalStats, st: &FlowState) -> &[f32] {
        let f = self.features(iv, st);
        self.feats.drain(..ORCA_FEATURES);
        self.feats.extend(f.iter().map(|&v| v as f32));
        &self.feats
    }

    fn features(&mut self, iv: &IntervalStats, st: &FlowState) -> [f64; ORCA_FEATURES] {
        let delta_t = iv.duration_us as f64 / 1e6;
        let per_s = |bytes: f64| if delta_t > 0.0 { bytes / delta_t } else { 0.0 };
        let thr = per_s(iv.acked_bytes as f64);
        let loss_rate = per_s(iv.lost_pkts as f64 * MSS);
        let srtt = st.srtt_us as f64;
        let pacing = if srtt > 0.0 {
            MTU * st.cwnd_pkts.max(st.inflight_pkts) as f64 * 1e6 / srtt
        } else {
            0.0
        };
        let min_rtt = if st.min_rtt_us > 0 {
            st.min_rtt_us as f64
        } else {
            srtt
        };
        self.max_bw = self.max_bw.max(thr);
        let delay_metric = if srtt > 0.0 && min_rtt * DELAY_MARGIN < srtt {
            min_rtt * DELAY_MARGIN / srtt
        } else {
            1.0
        };
        let (f0, f1, f2) = if self.max_bw > 0.0 {
            self.reward = (thr - LOSS_WEIGHT * loss_rate) / self.max_bw * delay_metric;
            (
                thr / self.max_bw,
                (pacing / self.max_bw).min(PACING_CAP),
                LOSS_WEIGHT * loss_rate / self.max_bw,
            )
        } else {
            self.reward = 0.0;
            (0.0, 0.0, 0.0)
        };
        let samples = if st.cwnd_pkts > 0 {
            iv.rtt_samples as f64 / st.cwnd_pkts as f64
        } else {
            0.0
        };
        let rtt_ratio = if srtt > 0.0 { min_rtt / srtt } else { 1.0 };
        [f0, f1, f2, samples, delta_t, rtt_ratio, delay_metric]
    }
}
