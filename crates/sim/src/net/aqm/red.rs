//! RED (Floyd & Jacobson 1993) as Linux runs it: net/sched/sch_red.c, include/net/red.h,
//! with the parameter derivation of iproute2's `tc qdisc add ... red` (tc/q_red.c,
//! tc/tc_red.c).
//!
//! Model: on every arrival the average backlog (bytes) is updated as an EWMA with weight
//! W = 2^-Wlog, kept scaled by 2^Wlog as the kernel does (`red_calc_qavg_no_idle_time`:
//! qavg += backlog - qavg >> Wlog). Below `min` nothing happens (count = -1); at or above
//! `max` the packet is hard-marked (`RED_HARD_MARK`: dropped, or CE-marked with `ecn` and
//! not `harddrop`); in between, with p_b = max_p (avg - min) / (max - min), a packet is
//! marked once count * p_b >= R, R uniform in [0, 1) drawn after every mark
//! (`red_action`, `red_mark_probability`: the "count-based spacing" that makes the gaps
//! between marks uniform on [1, 1/p_b]). A mark that cannot be applied (Not-ECT, or `ecn`
//! off) is a drop. Surviving packets join a byte FIFO under the hard limit (sch_red's
//! bfifo child). Wlog comes from `burst` and `avpkt` as `tc_red_eval_ewma` computes it;
//! tc's defaults: probability 0.02, avpkt 1000 bytes, max = 3 min, burst =
//! (2 min + max) / (3 avpkt).
//!
//! After an idle period (the queue found empty at dequeue, `red_start_of_idle_period`)
//! the average decays as if m = idle / (avpkt / bandwidth) empty-queue arrivals had
//! happened: qavg *= (1 - W)^m (the model `red_calc_qavg_from_idle_time` approximates).
//!
//! Deviations: the idle decay is computed exactly, not from tc's `Stab` table in
//! 2^Scell_log-microsecond cells; R is a double, not the kernel's 32-bit reciprocal
//! scaling; no adaptive RED (`adaptive`) and no `nodrop` flag; the idle decay's clock
//! uses the link rate at build time (tc's `bandwidth`), not later rate changes.

use serde::{Deserialize, Serialize};

use crate::contract::{ConfigError, QueueLimit};
use crate::net::aqm::{set_ce, AqmOut, Qdisc, TimedFifo};
use crate::net::packet::Packet;
use crate::rng::Rng;
use crate::time::{Rate, SimTime};

fn default_probability() -> f64 {
    0.02 // tc/q_red.c: "probability" default 0.02
}
fn default_avpkt() -> u64 {
    1000 // tc/q_red.c: avpkt default 1000 bytes
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    /// Thresholds on the average backlog (bytes).
    pub min_bytes: u64,
    pub max_bytes: u64,
    /// Marking probability reached at `max` (tc `probability`).
    #[serde(default = "default_probability")]
    #[schemars(extend("x-spec" = "probability"))]
    pub max_p: f64,
    /// Average packet size (bytes), for Wlog and the idle decay (tc `avpkt`).
    #[serde(default = "default_avpkt")]
    pub avpkt_bytes: u64,
    /// Burst (packets) the average tolerates (tc `burst`); default (2 min + max) / (3 avpkt).
    #[serde(default)]
    pub burst_pkts: Option<u64>,
    #[serde(default)]
    pub ecn: bool,
    /// Drop rather than mark above `max` even with `ecn` (tc `harddrop`).
    #[serde(default)]
    pub harddrop: bool,
}

impl RedConfig {
    pub fn burst(&self) -> u64 {
        self.burst_pkts
            .unwrap_or((2 * self.min_bytes + self.max_bytes) / (3 * self.avpkt_bytes.max(1)))
    }

    pub(super) fn validate(&self, path: &str) -> Result<(), ConfigError> {
        let e = |f: &str, m: String| {
            Err(ConfigError {
                field: format!("{path}.{f}"),
                message: m,
            })
        };
        if self.max_bytes == 0 || self.max_bytes > 1 << 30 {
            return e(
                "max_bytes",
                format!("{} is outside [1, 2^30] bytes", self.max_bytes),
            );
        }
        if self.min_bytes > self.max_bytes {
            return e(
                "min_bytes",
                format!(
                    "{} must be <= max_bytes ({})",
                    self.min_bytes, self.max_bytes
                ),
            );
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return e("max_p", format!("{} is outside (0, 1]", self.max_p));
        }
        if self.avpkt_bytes == 0 || self.avpkt_bytes > 65_535 {
            return e(
                "avpkt_bytes",
                format!("{} is outside [1, 65535]", self.avpkt_bytes),
            );
        }
        if tc_red_eval_ewma(self.min_bytes, self.burst(), self.avpkt_bytes).is_none() {
            return e(
                "burst_pkts",
                format!(
                    "{} is too small for min {} / avpkt {}: at least {}",
                    self.burst(),
                    self.min_bytes,
                    self.avpkt_bytes,
                    1 + self.min_bytes / self.avpkt_bytes
                ),
            );
        }
        Ok(())
    }
}

/// `tc_red_eval_ewma` (iproute2 tc/tc_red.c): the smallest Wlog such that `burst`
/// back-to-back arrivals of `avpkt` bytes into an empty queue leave the average below
/// `qmin`: burst + 1 - qmin / avpkt <= (1 - (1 - W)^burst) / W. None if burst is too small.
pub fn tc_red_eval_ewma(qmin: u64, burst: u64, avpkt: u64) -> Option<u32> {
    let a = burst as f64 + 1.0 - qmin as f64 / avpkt as f64;
    if a < 1.0 {
        return None;
    }
    let mut w: f64 = 0.5;
    for wlog in 1..32 {
        if a <= (1.0 - (1.0 - w).powf(burst as f64)) / w {
            return Some(wlog);
        }
        w /= 2.0;
    }
    None
}

/// `red_action`'s verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedAction {
    DontMark,
    ProbMark,
    HardMark,
}

/// The RED state machine (`struct red_parms` + `struct red_vars`), without the queue.
#[derive(Clone, Debug)]
pub struct RedState {
    pub wlog: u32,
    qth_min: u64,
    qth_max: u64,
    max_p: f64,
    /// Average backlog scaled by 2^Wlog.
    pub qavg: u64,
    /// Packets since the last mark while between the thresholds; -1 below `min`.
    pub count: i64,
    /// The draw R in [0, 1) the next mark waits for.
    pub r: f64,
    idle_since: Option<SimTime>,
    /// Time to send one `avpkt` at the link rate (ns), the idle decay's clock.
    avpkt_time_ns: f64,
}

impl RedState {
    pub fn new(c: &RedConfig, rate: Rate) -> RedState {
        let wlog = tc_red_eval_ewma(c.min_bytes, c.burst(), c.avpkt_bytes).expect("validated");
        RedState {
            wlog,
            qth_min: c.min_bytes,
            qth_max: c.max_bytes,
            max_p: c.max_p,
            qavg: 0,
            count: -1,
            r: 0.0,
            idle_since: None,
            avpkt_time_ns: rate.tx_time(c.avpkt_bytes).ns().max(1) as f64,
        }
    }

    /// The average backlog in bytes.
    pub fn avg(&self) -> f64 {
        self.qavg as f64 / (1u64 << self.wlog) as f64
    }

    /// `red_calc_qavg` for an arrival finding `backlog` bytes queued, then
    /// `red_end_of_idle_period`.
    pub fn update_avg(&mut self, now: SimTime, backlog: u64) {
        match self.idle_since.take() {
            None => self.qavg = self.qavg + backlog - (self.qavg >> self.wlog),
            Some(t0) => {
                let m = now.ns().saturating_sub(t0.ns()) as f64 / self.avpkt_time_ns;
                let w = 1.0 / (1u64 << self.wlog) as f64;
                self.qavg = (self.qavg as f64 * (1.0 - w).powf(m)) as u64;
            }
        }
    }

    /// `red_start_of_idle_period`.
    pub fn start_idle(&mut self, now: SimTime) {
        if self.idle_since.is_none() {
            self.idle_since = Some(now);
        }
    }

    /// p_b = max_p (avg - min) / (max - min), for the current average.
    pub fn p_b(&self) -> f64 {
        let delta = (self.qth_max - self.qth_min).max(1) as f64;
        self.max_p * (self.avg() - self.qth_min as f64) / delta
    }

    /// `red_action`, drawing R from `draw` when a new one is needed.
    pub fn action(&mut self, mut draw: impl FnMut() -> f64) -> RedAction {
        let avg_s = self.qavg;
        if avg_s < self.qth_min << self.wlog {
            self.count = -1;
            RedAction::DontMark
        } else if avg_s >= self.qth_max << self.wlog {
            self.count = -1;
            RedAction::HardMark
        } else {
            self.count += 1;
            if self.count == 0 {
                self.r = draw();
                return RedAction::DontMark;
            }
            // red_mark_probability: mark unless (avg - min) * count < R (max - min) / max_p.
            if self.count as f64 * self.p_b() >= self.r {
                self.count = 0;
                self.r = draw();
                RedAction::ProbMark
            } else {
                RedAction::DontMark
            }
        }
    }
}

pub struct Red {
    st: RedState,
    ecn: bool,
    harddrop: bool,
    limit: Option<QueueLimit>,
    q: TimedFifo,
    rng: Rng,
}

impl Red {
    pub fn new(c: &RedConfig, limit: Option<QueueLimit>, rate: Rate, rng: Rng) -> Red {
        Red {
            st: RedState::new(c, rate),
            ecn: c.ecn,
            harddrop: c.harddrop,
            limit,
            q: TimedFifo::default(),
            rng,
        }
    }
}

impl Qdisc for Red {
    fn enqueue(&mut self, now: SimTime, mut pkt: Packet, out: &mut AqmOut) -> bool {
        self.st.update_avg(now, self.q.bytes());
        let rng = &mut self.rng;
        match self.st.action(|| rng.next_f64()) {
            RedAction::DontMark => {}
            RedAction::ProbMark => {
                if !(self.ecn && set_ce(&mut pkt)) {
                    return false;
                }
                out.marks += 1;
            }
            RedAction::HardMark => {
                if self.harddrop || !(self.ecn && set_ce(&mut pkt)) {
                    return false;
                }
                out.marks += 1;
            }
        }
        self.q.push_within(self.limit, now, pkt)
    }
    fn dequeue(&mut self, now: SimTime, _out: &mut AqmOut) -> Option<(Packet, SimTime)> {
        let r = self.q.pop().map(|(t, p)| (p, t));
        if r.is_none() {
            self.st.start_idle(now);
        }
        r
    }
    fn for_each_fifo(&self, f: &mut dyn FnMut(&TimedFifo)) {
        f(&self.q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(min: u64, max: u64, max_p: f64, burst: u64) -> RedConfig {
        RedConfig {
            min_bytes: min,
            max_bytes: max,
            max_p,
            avpkt_bytes: 100,
            burst_pkts: Some(burst),
            ecn: true,
            harddrop: false,
        }
    }

    #[test]
    fn wlog_from_burst_as_tc_computes_it() {
        // min 30000, max 90000, avpkt 1000: tc's default burst (2*30000 + 90000)/3000 = 50,
        // a = 50 + 1 - 30 = 21. (1-(15/16)^50)*16 = 15.37 < 21; (1-(31/32)^50)*32 = 25.46 >= 21.
        let c = RedConfig {
            burst_pkts: None,
            avpkt_bytes: 1000,
            ..cfg(30_000, 90_000, 0.02, 0)
        };
        assert_eq!(c.burst(), 50);
        assert_eq!(tc_red_eval_ewma(30_000, 50, 1000), Some(5));
        // burst 20 < min/avpkt = 30: a = -9, rejected as tc does.
        assert_eq!(tc_red_eval_ewma(30_000, 20, 1000), None);
        assert!(RedConfig {
            avpkt_bytes: 1000,
            ..cfg(30_000, 90_000, 0.02, 20)
        }
        .validate("aqm")
        .is_err());
    }

    #[test]
    fn average_is_the_scaled_ewma() {
        // Wlog 2 (W = 1/4), set directly.
        let mut st = RedState::new(&cfg(1000, 3000, 0.1, 50), Rate(10_000_000));
        st.wlog = 2;
        // Two arrivals finding 4000 bytes: avg 0 -> 1000 -> 1750 (avg += (4000 - avg) / 4).
        st.update_avg(SimTime(0), 4000);
        assert_eq!(st.avg(), 1000.0);
        st.update_avg(SimTime(0), 4000);
        assert_eq!(st.avg(), 1750.0);
        // p_b = 0.1 * (1750 - 1000) / (3000 - 1000) = 0.0375.
        assert!((st.p_b() - 0.0375).abs() < 1e-12);
    }

    #[test]
    fn count_based_spacing_marks_when_count_times_pb_reaches_r() {
        let mut st = RedState::new(&cfg(1000, 3000, 0.1, 50), Rate(10_000_000));
        st.wlog = 2;
        st.update_avg(SimTime(0), 4000);
        st.update_avg(SimTime(0), 4000); // avg 1750, p_b 0.0375
                                         // The first packet between the thresholds draws R (0.5) without marking; then
                                         // count 1, 2, ...: marked when count * 0.0375 >= 0.5, i.e. count = 14 (13.33 rounded up).
        let mut actions = Vec::new();
        for _ in 0..15 {
            actions.push(st.action(|| 0.5));
        }
        assert_eq!(
            actions.iter().position(|a| *a == RedAction::ProbMark),
            Some(14)
        );
        assert_eq!(st.count, 0);
        // Above max: hard mark; below min: nothing, count reset.
        st.qavg = 3000 << 2;
        assert_eq!(st.action(|| 0.5), RedAction::HardMark);
        st.qavg = 999 << 2;
        assert_eq!(st.action(|| 0.5), RedAction::DontMark);
        assert_eq!(st.count, -1);
    }

    #[test]
    fn idle_decay_is_one_minus_w_to_the_m() {
        // 10 Mbit/s, avpkt 100 B = 80 us each; 0.8 ms idle = 10 packet times; W = 1/4:
        // avg 1000 * 0.75^10 = 56.31, held scaled by 4 as an integer: floor(4000 * 0.0563)
        // = 225 -> 56.25.
        let mut st = RedState::new(&cfg(1000, 3000, 0.1, 50), Rate(10_000_000));
        st.wlog = 2;
        st.qavg = 1000 << 2;
        st.start_idle(SimTime(0));
        st.update_avg(SimTime(800_000), 0);
        assert_eq!(st.avg(), 56.25);
    }
}
