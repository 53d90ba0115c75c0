//! PIE (RFC 8033) as Linux runs it: net/sched/sch_pie.c with include/net/pie.h and
//! net/sched/sch_pie.c's shared helpers (`pie_drop_early`, `pie_process_dequeue`,
//! `pie_calculate_probability`), in the default mode that measures queueing delay from
//! per-packet timestamps (`dq_rate_estimator` off).
//!
//! Model: every `tupdate` (15 ms; the first update 500 ms after the qdisc is created, as
//! `pie_init` arms its timer at HZ/2) the drop probability p moves by
//! alpha (qdelay - target) + beta (qdelay - qdelay_old), with alpha = 2/16 and beta =
//! 20/16 per second, both scaled down while p is small (halved below 10 %, then divided
//! by 4 per further decade below 1 %, 0.1 %, ...), increases capped at 2 % per update once
//! p >= 10 %, +2 % more whenever qdelay > 250 ms, and p decaying by 1/64 per update after
//! two updates with zero delay. qdelay is the sojourn time of the last dequeued packet
//! (0 when the queue emptied). An arrival is dropped early (`pie_drop_early`) unless the
//! burst allowance (150 ms, used up by dequeue time, restored when delay and p have been
//! low for two updates) remains, delay is below target / 2 with p < 20 %, or less than two
//! MTUs are queued; otherwise the "de-randomised" accumulated probability decides:
//! never below 0.85, always at 8.5, else with probability p. With `ecn`, an ECN-capable
//! packet is marked instead while p <= 10 %. Tail drop at `limit` (1000 packets).
//!
//! The timer is evaluated lazily: before each enqueue or dequeue every update due at or
//! before that time runs, with the state as it then is (nothing it reads changes between
//! packets), so no simulator events are needed.
//!
//! Deviations: probabilities as the kernel's fixed point (MAX_PROB = 2^56 - 1) but time
//! in exact 64 ns psched ticks from nanoseconds; no `bytemode`, no dq-rate estimator.

use serde::{Deserialize, Serialize};

use crate::contract::{ConfigError, QueueLimit};
use crate::net::aqm::{check_time, set_ce, AqmOut, Qdisc, TimedFifo, PSCHED_MTU};
use crate::net::packet::Packet;
use crate::rng::Rng;
use crate::time::SimTime;

fn default_target() -> u64 {
    15_000_000 // pie_params_init: target = PSCHED_NS2TICKS(15 * NSEC_PER_MSEC)
}
fn default_tupdate() -> u64 {
    15_000_000 // pie_params_init: tupdate = usecs_to_jiffies(15 * USEC_PER_MSEC)
}
fn default_alpha() -> u32 {
    2 // pie_params_init: alpha = 2 (units of 1/16)
}
fn default_beta() -> u32 {
    20 // pie_params_init: beta = 20 (units of 1/16)
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PieConfig {
    #[serde(default = "default_target")]
    pub target_ns: u64,
    #[serde(default = "default_tupdate")]
    pub tupdate_ns: u64,
    /// In units of 1/16 (tc `alpha`, 0..32).
    #[serde(default = "default_alpha")]
    pub alpha: u32,
    #[serde(default = "default_beta")]
    pub beta: u32,
    #[serde(default)]
    pub ecn: bool,
}

impl PieConfig {
    pub(super) fn validate(&self, path: &str) -> Result<(), ConfigError> {
        check_time(format!("{path}.target_ns"), self.target_ns)?;
        check_time(format!("{path}.tupdate_ns"), self.tupdate_ns)?;
        // pie_change: alpha, beta <= 32.
        for (name, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if v > 32 {
                return Err(ConfigError {
                    field: format!("{path}.{name}"),
                    message: format!("{v} is outside [0, 32] (units of 1/16)"),
                });
            }
        }
        Ok(())
    }
}

/// `MAX_PROB` (include/net/pie.h): U64_MAX >> BITS_PER_BYTE.
pub const MAX_PROB: u64 = u64::MAX >> 8;
/// psched ticks per second: 64 ns ticks (PSCHED_SHIFT 6).
const PSCHED_TICKS_PER_SEC: u64 = 1_000_000_000 >> 6;
/// `pie_vars_init`: burst_time = 150 ms.
const MAX_BURST_TICKS: u64 = 150_000_000 >> 6;
/// `pie_init`: the first probability update HZ/2 after creation.
const FIRST_UPDATE_NS: u64 = 500_000_000;

fn ticks(ns: u64) -> u64 {
    ns >> 6
}

/// `struct pie_vars` (timestamp mode).
#[derive(Clone, Debug)]
pub struct PieVars {
    pub prob: u64,
    pub accu_prob: u64,
    /// psched ticks.
    pub qdelay: u64,
    pub qdelay_old: u64,
    pub burst_time: u64,
    dq_tstamp: Option<u64>,
}

impl PieVars {
    fn init(&mut self) {
        self.burst_time = MAX_BURST_TICKS;
        self.dq_tstamp = None;
        self.accu_prob = 0;
    }
}

pub struct Pie {
    target: u64,
    tupdate_ns: u64,
    alpha: u64,
    beta: u64,
    ecn: bool,
    limit: Option<QueueLimit>,
    pub vars: PieVars,
    next_update_ns: u64,
    q: TimedFifo,
    rng: Rng,
}

impl Pie {
    pub fn new(c: &PieConfig, limit: Option<QueueLimit>, rng: Rng) -> Pie {
        let mut vars = PieVars {
            prob: 0,
            accu_prob: 0,
            qdelay: 0,
            qdelay_old: 0,
            burst_time: 0,
            dq_tstamp: None,
        };
        vars.init();
        Pie {
            target: ticks(c.target_ns),
            tupdate_ns: c.tupdate_ns,
            alpha: c.alpha as u64,
            beta: c.beta as u64,
            ecn: c.ecn,
            limit,
            vars,
            next_update_ns: FIRST_UPDATE_NS,
            q: TimedFifo::default(),
            rng,
        }
    }

    /// Run the timer's updates due at or before `now`.
    fn catch_up(&mut self, now: SimTime) {
        while self.next_update_ns <= now.ns() {
            self.calculate_probability(self.q.bytes());
            self.next_update_ns += self.tupdate_ns;
        }
    }

    /// `pie_calculate_probability` (timestamp mode).
    pub fn calculate_probability(&mut self, backlog: u64) {
        let v = &mut self.vars;
        let qdelay = v.qdelay;
        let qdelay_old = v.qdelay_old;
        let mut update_prob = !(qdelay == 0 && backlog != 0);
        let mut alpha = (self.alpha * (MAX_PROB / PSCHED_TICKS_PER_SEC)) >> 4;
        let mut beta = (self.beta * (MAX_PROB / PSCHED_TICKS_PER_SEC)) >> 4;
        // Scale alpha and beta down while the probability is low (RFC 8033 Sec. 4.2).
        if v.prob < MAX_PROB / 10 {
            alpha >>= 1;
            beta >>= 1;
            let mut power = 100u64;
            while v.prob < MAX_PROB / power && power <= 1_000_000 {
                alpha >>= 2;
                beta >>= 2;
                power *= 10;
            }
        }
        let mut delta: i64 = (alpha as i64).wrapping_mul(qdelay as i64 - self.target as i64);
        delta = delta.wrapping_add((beta as i64).wrapping_mul(qdelay as i64 - qdelay_old as i64));
        let oldprob = v.prob;
        // Increase by at most 2 % per update once p >= 10 %.
        if delta > (MAX_PROB / (100 / 2)) as i64 && v.prob >= MAX_PROB / 10 {
            delta = ((MAX_PROB / 100) * 2) as i64;
        }
        // Non-linear drop: +2 % while the delay exceeds 250 ms.
        if qdelay > ticks(250_000_000) {
            delta += (MAX_PROB / (100 / 2)) as i64;
        }
        v.prob = v.prob.wrapping_add(delta as u64);
        if delta > 0 {
            if v.prob < oldprob {
                v.prob = MAX_PROB;
                update_prob = false;
            }
        } else if v.prob > oldprob {
            v.prob = 0;
        }
        // Two updates with no delay: decay to 98.4 %.
        if qdelay == 0 && qdelay_old == 0 && update_prob {
            v.prob -= v.prob / 64;
        }
        v.qdelay = qdelay;
        if v.qdelay < self.target / 2 && v.qdelay_old < self.target / 2 && v.prob == 0 {
            v.init();
        }
        v.qdelay_old = qdelay;
    }

    /// `pie_drop_early`.
    fn drop_early(&mut self, backlog: u64) -> bool {
        let v = &mut self.vars;
        if v.burst_time > 0 {
            return false;
        }
        if v.qdelay < self.target / 2 && v.prob < MAX_PROB / 5 {
            return false;
        }
        if backlog < 2 * PSCHED_MTU {
            return false;
        }
        let local_prob = v.prob;
        if local_prob == 0 {
            v.accu_prob = 0;
        } else {
            v.accu_prob = v.accu_prob.saturating_add(local_prob);
        }
        if v.accu_prob < (MAX_PROB / 100) * 85 {
            return false;
        }
        if v.accu_prob >= (MAX_PROB / 2) * 17 {
            return true;
        }
        if (self.rng.next_u64() >> 8) < local_prob {
            v.accu_prob = 0;
            return true;
        }
        false
    }
}

impl Qdisc for Pie {
    fn enqueue(&mut self, now: SimTime, mut pkt: Packet, out: &mut AqmOut) -> bool {
        self.catch_up(now);
        if !self.q.admits(self.limit, &pkt) {
            self.vars.accu_prob = 0;
            return false;
        }
        let enqueue = if !self.drop_early(self.q.bytes()) {
            true
        } else if self.ecn && self.vars.prob <= MAX_PROB / 10 && set_ce(&mut pkt) {
            out.marks += 1;
            true
        } else {
            false
        };
        if !enqueue {
            self.vars.accu_prob = 0;
            return false;
        }
        self.q.push(now, pkt);
        true
    }

    fn dequeue(&mut self, now: SimTime, _out: &mut AqmOut) -> Option<(Packet, SimTime)> {
        self.catch_up(now);
        let (t, p) = self.q.pop()?;
        // pie_process_dequeue, timestamp mode.
        let now_t = ticks(now.ns());
        let v = &mut self.vars;
        v.qdelay = now_t - ticks(t.ns());
        let dtime = v.dq_tstamp.map_or(0, |d| now_t - d);
        v.dq_tstamp = Some(now_t);
        if self.q.bytes() == 0 {
            v.qdelay = 0;
        }
        if dtime > 0 {
            v.burst_time = v.burst_time.saturating_sub(dtime);
        }
        Some((p, t))
    }

    fn for_each_fifo(&self, f: &mut dyn FnMut(&TimedFifo)) {
        f(&self.q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RunRng;

    fn pie() -> Pie {
        let c = PieConfig {
            target_ns: 15_000_000,
            tupdate_ns: 15_000_000,
            alpha: 2,
            beta: 20,
            ecn: false,
        };
        Pie::new(&c, None, RunRng::new(1).stream("pie"))
    }

    #[test]
    fn probability_update_from_zero_uses_the_scaled_down_gains() {
        // p = 0 < 1 %: alpha, beta halved, then divided by 4 for each decade while
        // p < MAX_PROB / power for power = 100 .. 1e6 (5 times): alpha = 2/16 / 2 / 4^5
        // per second. qdelay 30 ms, qdelay_old 30 ms (no beta term), target 15 ms:
        // delta = alpha * 15 ms = (2/16 / 2048) * 0.015 = 9.155e-7 of MAX_PROB.
        let mut p = pie();
        p.vars.qdelay = ticks(30_000_000);
        p.vars.qdelay_old = ticks(30_000_000);
        p.calculate_probability(100_000);
        let prob = p.vars.prob as f64 / MAX_PROB as f64;
        assert!((prob - 9.155e-7).abs() < 1e-9, "{prob}");
    }

    #[test]
    fn probability_increase_capped_at_2_percent_above_10_percent() {
        let mut p = pie();
        p.vars.prob = MAX_PROB / 5; // 20 %
        p.vars.qdelay = ticks(200_000_000);
        p.vars.qdelay_old = ticks(100_000_000);
        p.calculate_probability(100_000);
        let prob = p.vars.prob as f64 / MAX_PROB as f64;
        assert!((prob - 0.22).abs() < 1e-6, "{prob}");
    }
}
