//! Delay jitter and reordering on a link, as Linux's netem qdisc
//! (net/sched/sch_netem.c) and its configuration tool (iproute2 tc/q_netem.c) define
//! them: `delay D J [C] distribution DIST reorder P [C] gap G`.
//!
//! Model, per packet leaving the link's serializer at `t` (propagation delay `D`):
//! - Reorder (`netem_enqueue`'s else-branch): with `gap` G >= 1 and `reorder` P > 0, once
//!   G - 1 packets have been delayed since the last reordered one (`q->counter`), a packet
//!   skips the delay with probability P (`q->reorder >= get_crandom(&q->reorder_cor)`):
//!   it arrives at `t`, ahead of everything still propagating, and the count restarts.
//!   tc sets G = 1 when only P is given, so every packet is a candidate.
//! - Otherwise its delay is `tabledist(D, J, &q->delay_cor, dist)`: uniform on
//!   [D - J, D + J) without a table (`rnd % 2J + D - J`), else `D + J * table[rnd % 4096]
//!   / 8192` with the rounding `tabledist` does (NETEM_DIST_SCALE = 8192); a negative
//!   delay is 0 (netem's `time_to_send` in the past: sent at once).
//! - Arrival order is the time order (netem's tfifo: an rbtree on `time_to_send`), so a
//!   jitter wider than the packets' spacing reorders them, as netem does without a
//!   `rate` or a pfifo child. We keep that (it is what `tc qdisc add ... netem delay
//!   10ms 5ms` does to a researcher's packets); equal times keep their send order.
//! - Correlation (`get_crandom`): the 32-bit draw is mixed with the previous one,
//!   `(v * (2^32 - rho) + last * rho) >> 32` with rho = C * 2^32 + 1, separately for the
//!   delay and the reorder draws, as netem's `delay_cor` and `reorder_cor`.
//! - Distribution tables: iproute2's netem/normal.c, pareto.c and paretonormal.c
//!   (4096 entries, NETEM_DIST_SCALE = 8192, pareto a = 3), computed here by the same
//!   loops (erf from the `libm` crate); a test compares them with the tables tc installs.
//!
//! Random draws come from the link's own named stream (`netem/<link>`), separate from
//! its random loss, so turning jitter on never moves another component's draws, and a
//! link without jitter or reordering draws nothing: its run is bit-identical to before.
//!
//! Deviations: netem is a qdisc in front of the device; here jitter and reordering act on
//! the propagation stage, after the link's own queue and serializer (the queue and its
//! drops are those of the link's rate, and a reordered packet skips only the propagation
//! delay). netem's `rate`, `slot`, duplication, corruption and loss models are not
//! modelled (random loss is the link's `loss`). Jitter is capped at i32::MAX ns as
//! netem's `q->jitter` is (tabledist's s32 sigma).

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::rng::Rng;
use crate::time::{Dur, SimTime};

/// `NETEM_DIST_SCALE` (include/uapi/linux/pkt_sched.h).
pub const NETEM_DIST_SCALE: i64 = 8192;
/// iproute2 netem/*.c `TABLESIZE` (16384), of which every 4th entry is written.
const TABLESIZE: usize = 16384;

/// `distribution` of `tc qdisc ... netem delay D J distribution DIST`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum JitterDistribution {
    /// No table: netem's default, uniform on [D - J, D + J).
    #[default]
    Uniform,
    Normal,
    Pareto,
    Paretonormal,
}

/// A link's netem-like settings (all off by default): the `LinkConfig` fields of the
/// same names (config.rs), gathered.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NetemConfig {
    /// netem's jitter J (ns), at most i32::MAX.
    pub jitter_ns: u64,
    pub jitter_distribution: JitterDistribution,
    /// Correlation of successive delay draws, in [0, 1].
    pub jitter_correlation: f64,
    /// Probability that a packet skips the delay, in [0, 1].
    pub reorder: f64,
    /// netem's gap (>= 1): packets delayed before the next may be reordered.
    pub reorder_gap: u32,
    /// Correlation of successive reorder draws, in [0, 1].
    pub reorder_correlation: f64,
}

impl Default for NetemConfig {
    fn default() -> Self {
        NetemConfig {
            jitter_ns: 0,
            jitter_distribution: JitterDistribution::Uniform,
            jitter_correlation: 0.0,
            reorder: 0.0,
            reorder_gap: 1,
            reorder_correlation: 0.0,
        }
    }
}

impl NetemConfig {
    /// Anything to do (a config with jitter 0 and reorder 0 changes nothing).
    pub fn active(&self) -> bool {
        self.jitter_ns > 0 || self.reorder > 0.0
    }
}

/// iproute2's `get_percent` -> netem's u32 probability: P * UINT32_MAX.
fn prob_u32(p: f64) -> u32 {
    (p * u32::MAX as f64).round() as u32
}

/// `struct crndstate`: a correlated 32-bit uniform stream.
struct Crnd {
    rho: u32,
    last: u64,
}

impl Crnd {
    /// `get_crandom`.
    fn next(&mut self, rng: &mut Rng) -> u32 {
        let value = rng.next_u64() >> 32;
        if self.rho == 0 {
            return value as u32;
        }
        let rho = self.rho as u64 + 1;
        let answer = ((value as u128 * ((1u128 << 32) - rho as u128)
            + self.last as u128 * rho as u128)
            >> 32) as u64;
        self.last = answer;
        answer as u32
    }
}

/// A link's jitter and reorder state.
pub struct Netem {
    delay_cor: Crnd,
    reorder_cor: Crnd,
    jitter: i64,
    table: Option<&'static [i16]>,
    reorder: u32,
    gap: u32,
    /// `q->counter`: packets delayed since the last reordered one.
    counter: u32,
    rng: Rng,
    /// Packets that skipped the delay (netem's `requeues`).
    pub reordered: u64,
    /// The arrival event the link has asked for (the pipe's head time), if any.
    pub(crate) armed: Option<SimTime>,
}

impl Netem {
    pub fn new(cfg: &NetemConfig, rng: Rng) -> Netem {
        Netem {
            delay_cor: Crnd {
                rho: prob_u32(cfg.jitter_correlation),
                last: 0,
            },
            reorder_cor: Crnd {
                rho: prob_u32(cfg.reorder_correlation),
                last: 0,
            },
            jitter: cfg.jitter_ns.min(i32::MAX as u64) as i64,
            table: table(cfg.jitter_distribution),
            reorder: prob_u32(cfg.reorder),
            gap: if cfg.reorder > 0.0 {
                cfg.reorder_gap.max(1)
            } else {
                0
            },
            counter: 0,
            rng,
            reordered: 0,
            armed: None,
        }
    }

    /// The delay of the next packet given the link's propagation delay (`netem_enqueue`).
    pub fn delay(&mut self, base: Dur) -> Dur {
        if self.gap == 0
            || self.counter < self.gap - 1
            || self.reorder < self.reorder_cor.next(&mut self.rng)
        {
            self.counter = self.counter.saturating_add(1);
            let d = self.tabledist(base.0 as i64);
            return Dur(d.max(0) as u64);
        }
        self.counter = 0;
        self.reordered += 1;
        Dur(0)
    }

    /// `tabledist(mu, sigma, &q->delay_cor, q->delay_dist)` (ns).
    fn tabledist(&mut self, mu: i64) -> i64 {
        let sigma = self.jitter;
        if sigma == 0 {
            return mu;
        }
        let rnd = self.delay_cor.next(&mut self.rng);
        let Some(table) = self.table else {
            return (rnd % (2 * sigma as u32)) as i64 + mu - sigma;
        };
        let t = table[rnd as usize % table.len()] as i64;
        let mut x = (sigma % NETEM_DIST_SCALE) * t;
        if x >= 0 {
            x += NETEM_DIST_SCALE / 2;
        } else {
            x -= NETEM_DIST_SCALE / 2;
        }
        x / NETEM_DIST_SCALE + (sigma / NETEM_DIST_SCALE) * t + mu
    }
}

/// The table behind a distribution (None: uniform).
pub fn table(d: JitterDistribution) -> Option<&'static [i16]> {
    static NORMAL: OnceLock<Vec<i16>> = OnceLock::new();
    static PARETO: OnceLock<Vec<i16>> = OnceLock::new();
    static PARETONORMAL: OnceLock<Vec<i16>> = OnceLock::new();
    match d {
        JitterDistribution::Uniform => None,
        JitterDistribution::Normal => Some(NORMAL.get_or_init(normal_table)),
        JitterDistribution::Pareto => Some(PARETO.get_or_init(pareto_table)),
        JitterDistribution::Paretonormal => Some(PARETONORMAL.get_or_init(paretonormal_table)),
    }
}

/// netem/normal.c's inverse CDF: for each bin i of 16384, the last x on the grid
/// -10, -10 + 5e-5, ... whose CDF rounds to i.
fn normal_inverse() -> Vec<f64> {
    let mut table = vec![0.0; TABLESIZE + 1];
    let mut x = -10.0f64;
    while x < 10.05 {
        let cdf = 0.5 + 0.5 * libm::erf(x / std::f64::consts::SQRT_2);
        let i = (TABLESIZE as f64 * cdf).round_ties_even() as usize;
        table[i] = x;
        x += 0.00005;
    }
    table
}

fn clamp_i16(v: i64) -> i16 {
    v.clamp(i16::MIN as i64, i16::MAX as i64) as i16
}

/// netem/normal.c.
fn normal_table() -> Vec<i16> {
    let inv = normal_inverse();
    (0..TABLESIZE)
        .step_by(4)
        .map(|i| clamp_i16((inv[i] * NETEM_DIST_SCALE as f64).round_ties_even() as i64))
        .collect()
}

/// netem/pareto.c's value for `i` in 65536 .. 0 step 16 (a = 3, shifted by -1.5, scaled
/// by 4/3 so that the mean is 0 and the deviation about 1).
fn pareto_value(i: i64) -> i64 {
    let a = 3.0f64;
    let mut d = i as f64 / 65536.0;
    d = 1.0 / d.powf(1.0 / a);
    d -= 1.5;
    d *= (4.0 / 3.0) * NETEM_DIST_SCALE as f64;
    d.min(32767.0).round_ties_even() as i64
}

/// netem/pareto.c.
fn pareto_table() -> Vec<i16> {
    (0..TABLESIZE / 4)
        .map(|k| pareto_value(65536 - 16 * k as i64) as i16)
        .collect()
}

/// netem/paretonormal.c: (normal + 3 * pareto) / 4, C integer division.
fn paretonormal_table() -> Vec<i16> {
    let inv = normal_inverse();
    (0..TABLESIZE)
        .step_by(4)
        .map(|i| {
            let norm = (inv[i] * NETEM_DIST_SCALE as f64).round_ties_even() as i64;
            // paretovalue(i): 65536 - 4 i
            let par = pareto_value(65536 - 4 * i as i64);
            clamp_i16((norm + 3 * par) / 4)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::RunRng;

    fn netem(cfg: NetemConfig) -> Netem {
        Netem::new(&cfg, RunRng::new(3).stream("netem/test"))
    }

    fn moments(xs: &[f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let m = xs.iter().sum::<f64>() / n;
        let v = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n;
        (m, v.sqrt())
    }

    /// Tables as tc installs them (Debian: /usr/lib/x86_64-linux-gnu/tc), if present.
    fn installed(name: &str) -> Option<Vec<i64>> {
        for dir in [
            "/usr/lib/x86_64-linux-gnu/tc",
            "/usr/lib/tc",
            "/usr/lib64/tc",
        ] {
            if let Ok(s) = std::fs::read_to_string(format!("{dir}/{name}.dist")) {
                return Some(
                    s.lines()
                        .filter(|l| !l.starts_with('#'))
                        .flat_map(|l| l.split_whitespace().map(|w| w.parse().unwrap()))
                        .collect(),
                );
            }
        }
        None
    }

    #[test]
    fn tables_match_the_ones_tc_installs() {
        for (name, d) in [
            ("normal", JitterDistribution::Normal),
            ("pareto", JitterDistribution::Pareto),
            ("paretonormal", JitterDistribution::Paretonormal),
        ] {
            let ours = table(d).unwrap();
            assert_eq!(ours.len(), 4096, "{name}");
            let Some(theirs) = installed(name) else {
                eprintln!("skipped: no {name}.dist installed (iproute2)");
                continue;
            };
            assert_eq!(theirs.len(), 4096, "{name}");
            // The same loops; erf may differ from glibc's in the last bit, which can move
            // a bin edge by one grid step (5e-5 * 8192 = 0.4): allow 1 either way.
            let worst = ours
                .iter()
                .zip(&theirs)
                .map(|(a, b)| (*a as i64 - b).abs())
                .max()
                .unwrap();
            assert!(worst <= 1, "{name}: largest difference {worst}");
        }
    }

    #[test]
    fn the_tables_have_mean_zero_and_unit_deviation_in_scale_units() {
        // The moments of the tables iproute2 6.1 installs, computed from
        // /usr/lib/x86_64-linux-gnu/tc/{normal,pareto,paretonormal}.dist (in units of J):
        // normal -0.0008 / 1.0001 (N(0, 1) clamped at -4), pareto -0.0335 / 0.8197
        // (a = 3 shifted by 1.5 and scaled by 4/3, clipped at 4), paretonormal
        // -0.0253 / 0.8339. Tolerance 0.002.
        for (d, mean, std, tol) in [
            (JitterDistribution::Normal, -0.0008, 1.0001, 0.002),
            (JitterDistribution::Pareto, -0.0335, 0.8197, 0.002),
            (JitterDistribution::Paretonormal, -0.0253, 0.8339, 0.002),
        ] {
            let xs: Vec<f64> = table(d)
                .unwrap()
                .iter()
                .map(|&v| v as f64 / NETEM_DIST_SCALE as f64)
                .collect();
            let (m, s) = moments(&xs);
            assert!((m - mean).abs() < tol, "{d:?} mean {m}");
            assert!((s - std).abs() < tol, "{d:?} std {s}");
        }
    }

    #[test]
    fn uniform_jitter_draws_have_netems_mean_and_deviation() {
        // Uniform on [D - J, D + J): mean D, std J / sqrt(3). 200k draws: the standard
        // error of the mean is J/sqrt(3)/sqrt(2e5) = 0.0013 J; allow 0.01 J.
        let (d, j) = (10_000_000u64, 4_000_000u64);
        let mut n = netem(NetemConfig {
            jitter_ns: j,
            ..Default::default()
        });
        let xs: Vec<f64> = (0..200_000).map(|_| n.delay(Dur(d)).0 as f64).collect();
        let (m, s) = moments(&xs);
        assert!((m - d as f64).abs() < 0.01 * j as f64, "mean {m}");
        assert!(
            (s - j as f64 / 3f64.sqrt()).abs() < 0.01 * j as f64,
            "std {s}"
        );
        assert!(xs
            .iter()
            .all(|&x| x >= (d - j) as f64 && x < (d + j) as f64));
    }

    #[test]
    fn table_jitter_draws_have_the_tables_mean_and_deviation() {
        // D = 50 ms, J = 5 ms: no draw goes negative (the tables stop at -4 J), so the
        // samples' moments are the table's, times J, plus D. Tolerance 0.02 J.
        for dist in [JitterDistribution::Normal, JitterDistribution::Paretonormal] {
            let (d, j) = (50_000_000u64, 5_000_000u64);
            let mut n = netem(NetemConfig {
                jitter_ns: j,
                jitter_distribution: dist,
                ..Default::default()
            });
            let xs: Vec<f64> = (0..200_000).map(|_| n.delay(Dur(d)).0 as f64).collect();
            let t: Vec<f64> = table(dist)
                .unwrap()
                .iter()
                .map(|&v| v as f64 / NETEM_DIST_SCALE as f64)
                .collect();
            let (tm, ts) = moments(&t);
            let (m, s) = moments(&xs);
            assert!(
                (m - (d as f64 + tm * j as f64)).abs() < 0.02 * j as f64,
                "{dist:?} {m}"
            );
            assert!((s - ts * j as f64).abs() < 0.02 * j as f64, "{dist:?} {s}");
        }
    }

    #[test]
    fn reorder_with_gap_reorders_one_in_gap_at_probability_one() {
        // reorder 100% gap 5: packets 5, 10, 15, ... (1-based) skip the delay.
        let mut n = netem(NetemConfig {
            reorder: 1.0,
            reorder_gap: 5,
            ..Default::default()
        });
        let skipped: Vec<usize> = (1..=20).filter(|_| n.delay(Dur(1000)) == Dur(0)).collect();
        assert_eq!(skipped, vec![5, 10, 15, 20]);
    }

    #[test]
    fn reorder_probability_is_the_share_of_packets_skipping_the_delay() {
        // gap 1: each packet independently with P = 0.05; 100k draws: expect 5000,
        // std 69; allow 5 sigma.
        let mut n = netem(NetemConfig {
            reorder: 0.05,
            ..Default::default()
        });
        let k = (0..100_000)
            .filter(|_| n.delay(Dur(1000)) == Dur(0))
            .count();
        assert!((k as i64 - 5000).abs() < 350, "{k}");
    }

    #[test]
    fn negative_delays_are_zero() {
        let mut n = netem(NetemConfig {
            jitter_ns: 1_000_000,
            ..Default::default()
        });
        assert!((0..10_000).all(|_| n.delay(Dur(100)).0 < 1_000_100));
    }

    #[test]
    fn full_correlation_repeats_the_first_draw() {
        // rho = 2^32 - 1 + 1 = 2^32: answer = last, and last starts at 0: every draw is 0,
        // i.e. D - J, as netem with 100% correlation.
        let mut n = netem(NetemConfig {
            jitter_ns: 1000,
            jitter_correlation: 1.0,
            ..Default::default()
        });
        assert!((0..100).all(|_| n.delay(Dur(5000)) == Dur(4000)));
    }
}
