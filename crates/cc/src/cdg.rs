//! `cdg`: CAIA Delay-Gradient as Linux runs it (net/ipv4/tcp_cdg.c), with its CWR
//! reduction applied at once (see Deviations).
//!
//! Model (Hayes and Armitage, "Revisiting TCP congestion control using delay
//! gradients", IFIP Networking 2011, Sec. 3-4). Once per RTT CDG takes the smallest and
//! largest RTT of the round and their change from the previous round (the gradients
//! g_min, g_max), summed over a moving window of `window` = 8 rounds (the paper's
//! smoothed gradient times the window). A positive gradient means a queue is growing:
//! CDG then backs off with probability 1 - e^(-g * backoff_factor / 10^6), the backoff
//! being a CWR reduction to cwnd * backoff_beta (0.7071). Otherwise it grows as Reno.
//! Two coexistence heuristics: a "shadow window" remembers the window a delay backoff
//! gave up, so a later loss halves max(shadow, cwnd) rather than the reduced window; and
//! "ineffectual backoff" detection stops backing off after `use_ineff` = 5 backoffs in a
//! row that did not lower the delay (a loss-based competitor fills the queue anyway).
//! Slow start ends by HyStart's ACK-train and delay tests. RTT samples from delayed ACKs
//! are filtered (Hayes' heuristic). The kernel's differences from the paper (its header
//! lists them) are kept: HyStart, PRR, the toggles for shadow window and loss tolerance,
//! backoff_factor = 1000 / (G * window), the shadow window limits and its e^-x table.
//!
//! Kernel functions followed: `nexp_u32`, `tcp_cdg_hystart_update`, `tcp_cdg_grad`,
//! `tcp_cdg_backoff`, `tcp_cdg_cong_avoid`, `tcp_cdg_acked`, `tcp_cdg_ssthresh`,
//! `tcp_cdg_undo_cwnd`, `tcp_cdg_cwnd_event`, `tcp_cdg_init`. The module parameters are
//! `ParamSpec`s with the kernel's defaults (`window` as a choice of the powers of two the
//! module accepts).
//!
//! Deviations:
//! - The backoff calls `tcp_enter_cwr`, a state change the seam cannot request (the
//!   sender owns the CA state; adding it is outside the cc crate). Here the backoff does
//!   what CWR amounts to, inside the algorithm: ssthresh = `tcp_cdg_ssthresh` (cwnd *
//!   beta, remembering cwnd for undo), cwnd = ssthresh at once (the kernel's PRR reaches
//!   ssthresh over the following RTT, where cwnd ends at `tcp_end_cwnd_reduction`),
//!   then no growth and no gradient round until an ACK passes the snd_nxt of the backoff
//!   (the kernel calls no `cong_avoid` in CWR), when the `CA_EVENT_COMPLETE_CWR`
//!   bookkeeping runs. A loss or RTO during that time does not cut ssthresh again (the
//!   kernel does not recompute it inside a reduction). The sender sees no CWR state, so
//!   its ECN CWR flag is not set and the reduction is a window cut, not PRR-paced.
//! - Randomness: `prandom_u32`/`get_random_u32` is a SplitMix64 stream
//!   (`bbr::rng::CycleRng`, as BBR's PROBE_BW phase) seeded by the `seed` parameter,
//!   which the engine fills per flow from the run seed, so runs stay deterministic.
//! - The ACK-train clock (`tp->tcp_mstamp`, us) is `CcView::now_us` truncated to 32
//!   bits, compared with the kernel's wrapping `before`/`after`.
//! - The gradient window is always allocated (the kernel falls back to window = 1 when
//!   `kcalloc` fails, extrapolating by `window`); that fallback is not ported.

use crate::bbr::rng::CycleRng;
use crate::helpers::{after, tcp_in_slow_start, tcp_is_cwnd_limited, tcp_reno_cong_avoid};
use crate::ops::{AckSample, CaEvent, CcView, CongestionOps, InfoField, InfoValue};
use crate::registry::{AlgorithmSpec, ParamChoice, ParamKind, ParamSpec, Params};

/// `HYSTART_ACK_TRAIN`, `HYSTART_DELAY`: the bits of `hystart_detect`.
pub const HYSTART_ACK_TRAIN: u32 = 1;
pub const HYSTART_DELAY: u32 = 2;

/// `nexp_u32`'s table: exp(-x) * 65536 - 1 for x = 0 and 0.000256 * 2^k, k = 0..15.
const NEXP_TABLE: [u16; 17] = [
    65535, 65518, 65501, 65468, 65401, 65267, 65001, 64470, 63422, 61378, 57484, 50423, 38795,
    22965, 8047, 987, 14,
];

static WINDOW_CHOICES: [ParamChoice; 9] = [
    ParamChoice {
        label: "1",
        value: 1.0,
    },
    ParamChoice {
        label: "2",
        value: 2.0,
    },
    ParamChoice {
        label: "4",
        value: 4.0,
    },
    ParamChoice {
        label: "8",
        value: 8.0,
    },
    ParamChoice {
        label: "16",
        value: 16.0,
    },
    ParamChoice {
        label: "32",
        value: 32.0,
    },
    ParamChoice {
        label: "64",
        value: 64.0,
    },
    ParamChoice {
        label: "128",
        value: 128.0,
    },
    ParamChoice {
        label: "256",
        value: 256.0,
    },
];

static PARAMS: [ParamSpec; 8] = [
    ParamSpec {
        name: "window",
        kind: ParamKind::Choice(&WINDOW_CHOICES),
        default: 8.0,
        min: 1.0,
        max: 256.0,
        doc: "gradient window in RTTs, a power of two <= 256 (tcp_cdg.c default 8)",
    },
    ParamSpec {
        name: "backoff_beta",
        kind: ParamKind::Int,
        default: 724.0,
        min: 0.0,
        max: 1024.0,
        doc: "delay backoff: ssthresh = cwnd * backoff_beta / 1024 (tcp_cdg.c default 0.7071 * 1024 = 724)",
    },
    ParamSpec {
        name: "backoff_factor",
        kind: ParamKind::Int,
        default: 42.0,
        min: 0.0,
        max: 4_294_967_295.0,
        doc: "backoff probability scale: P = 1 - exp(-gradient_us * factor / 1e6) (tcp_cdg.c default 42)",
    },
    ParamSpec {
        name: "hystart_detect",
        kind: ParamKind::Int,
        default: 3.0,
        min: 0.0,
        max: 3.0,
        doc: "HyStart: 0 off, 1 ACK train, 2 delay, 3 both (tcp_cdg.c default 3)",
    },
    ParamSpec {
        name: "use_ineff",
        kind: ParamKind::Int,
        default: 5.0,
        min: 0.0,
        max: 65535.0,
        doc: "ineffectual backoffs in a row before CDG stops backing off, 0 off (tcp_cdg.c default 5)",
    },
    ParamSpec {
        name: "use_shadow",
        kind: ParamKind::Bool,
        default: 1.0,
        min: 0.0,
        max: 1.0,
        doc: "shadow window: a loss halves the window delay backoffs gave up (tcp_cdg.c default true)",
    },
    ParamSpec {
        name: "use_tolerance",
        kind: ParamKind::Bool,
        default: 0.0,
        min: 0.0,
        max: 1.0,
        doc: "tolerate losses judged not due to congestion (tcp_cdg.c default false)",
    },
    ParamSpec {
        name: "seed",
        kind: ParamKind::Int,
        default: 0.0,
        min: 0.0,
        max: 9_007_199_254_740_991.0, // 2^53 - 1: exact in an f64
        doc: "seed of the probabilistic backoff (kernel: get_random_u32); the engine fills \
              a per-flow value from the run seed when unset",
    },
];

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "cdg",
    family: crate::registry::Family::LossDelay,
    summary: "CDG: probabilistic backoff on a positive RTT gradient, Reno otherwise",
    source: "Linux net/ipv4/tcp_cdg.c (CWR applied at once); Hayes and Armitage, IFIP Networking 2011, Sec. 3-4",
    params: &PARAMS,
    build: |p: &Params| Box::new(CdgConfig::from_params(p).build()),
};

/// CDG's tunables (the module parameters, and the seed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CdgConfig {
    pub window: u32,
    pub backoff_beta: u32,
    pub backoff_factor: u32,
    pub hystart_detect: u32,
    pub use_ineff: u32,
    pub use_shadow: bool,
    pub use_tolerance: bool,
    pub seed: u64,
}

impl Default for CdgConfig {
    fn default() -> Self {
        CdgConfig {
            window: 8,
            backoff_beta: 724,
            backoff_factor: 42,
            hystart_detect: 3,
            use_ineff: 5,
            use_shadow: true,
            use_tolerance: false,
            seed: 0,
        }
    }
}

impl CdgConfig {
    pub fn from_params(p: &Params) -> Self {
        CdgConfig {
            window: p.get_u32("window"),
            backoff_beta: p.get_u32("backoff_beta"),
            backoff_factor: p.get("backoff_factor") as u32,
            hystart_detect: p.get_u32("hystart_detect"),
            use_ineff: p.get_u32("use_ineff"),
            use_shadow: p.get_bool("use_shadow"),
            use_tolerance: p.get_bool("use_tolerance"),
            seed: p.get("seed") as u64,
        }
    }
    pub fn build(&self) -> Cdg {
        Cdg {
            cfg: *self,
            rng: CycleRng::new(self.seed),
            rtt: MinMax::default(),
            rtt_prev: MinMax::default(),
            gradients: Vec::new(),
            gsum: MinMax::default(),
            gfilled: false,
            tail: 0,
            state: CdgState::Unknown,
            delack: 0,
            rtt_seq: 0,
            undo_cwnd: 0,
            shadow_wnd: 0,
            backoff_cnt: 0,
            sample_cnt: 0,
            delay_min: 0,
            last_ack: 0,
            round_start: 0,
            cwr_high_seq: None,
        }
    }
}

/// `struct minmax` of tcp_cdg.c: an RTT range (us); both 0 = no sample (`v64 == 0`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct MinMax {
    min: i32,
    max: i32,
}

impl MinMax {
    fn is_empty(&self) -> bool {
        self.min == 0 && self.max == 0
    }
}

/// `enum cdg_state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CdgState {
    Unknown,
    NonFull,
    Full,
    Backoff,
}

/// `struct cdg`.
#[derive(Clone, Debug)]
pub struct Cdg {
    cfg: CdgConfig,
    rng: CycleRng,
    /// `rtt`, `rtt_prev`: this round's and the previous round's RTT range.
    rtt: MinMax,
    rtt_prev: MinMax,
    /// `gradients`: the last `window` gradients (ring, `tail` next); `gsum` their sum.
    gradients: Vec<MinMax>,
    gsum: MinMax,
    /// `gfilled`: the ring has been filled once.
    gfilled: bool,
    tail: u32,
    state: CdgState,
    /// `delack`: the delayed-ACK filter's count.
    delack: u8,
    /// `rtt_seq`: the round ends when an ACK passes it.
    rtt_seq: u64,
    /// `undo_cwnd`: cwnd when ssthresh was last computed.
    undo_cwnd: u32,
    /// `shadow_wnd`: the window without delay backoffs.
    shadow_wnd: u32,
    /// `backoff_cnt`: backoffs in a row that did not lower the delay.
    backoff_cnt: u16,
    /// `sample_cnt`: slow-start ACKs this round (HyStart delay test).
    sample_cnt: u16,
    /// `delay_min` (us): the smallest round minimum (HyStart).
    delay_min: i32,
    /// `last_ack`, `round_start` (us, 32-bit): the ACK train.
    last_ack: u32,
    round_start: u32,
    /// Not in the kernel (see Deviations): snd_nxt at a delay backoff while its CWR
    /// reduction lasts.
    cwr_high_seq: Option<u64>,
}

/// `nexp_u32`: e^(-ux / 10^6) * U32_MAX, from the table by the bits of ux >> 8.
fn nexp_u32(ux: u32) -> u32 {
    let mut msb = ux >> 8;
    // Cut off at ux >= 2^24 (the result would be <= 222).
    if msb > u32::from(u16::MAX) {
        return 0;
    }
    // The low eight bits linearly.
    let mut res = u32::MAX - (ux & 0xff) * (u32::MAX / 1_000_000);
    // e^(x + y + ...) = e^x * e^y * ...
    let mut i = 1;
    while msb != 0 {
        if msb & 1 != 0 {
            let y = u64::from(NEXP_TABLE[i]) + 1;
            res = ((u64::from(res) * y) >> 16) as u32;
        }
        i += 1;
        msb >>= 1;
    }
    res
}

/// `min_not_zero`.
fn min_not_zero(a: i32, b: i32) -> i32 {
    match (a, b) {
        (0, b) => b,
        (a, 0) => a,
        (a, b) => a.min(b),
    }
}

/// `DIV_ROUND_CLOSEST` for a signed dividend and a positive divisor.
fn div_round_closest(x: i32, d: i32) -> i32 {
    if x > 0 {
        (x + d / 2) / d
    } else {
        (x - d / 2) / d
    }
}

impl Cdg {
    /// `tcp_cdg_hystart_update`.
    fn tcp_cdg_hystart_update(&mut self, tp: &mut CcView) {
        self.delay_min = min_not_zero(self.delay_min, self.rtt.min);
        if self.delay_min == 0 {
            return;
        }
        if self.cfg.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now_us = tp.now_us as u32;
            if self.last_ack == 0 || !tcp_is_cwnd_limited(tp) {
                self.last_ack = now_us;
                self.round_start = now_us;
            } else if (now_us.wrapping_sub(self.last_ack.wrapping_add(3000)) as i32) < 0 {
                // ACKs closer than 3 ms form a train; it ends slow start once it spans
                // half the minimum delay (at least 125 us).
                let base_owd = (self.delay_min as u32 / 2).max(125);
                self.last_ack = now_us;
                if now_us.wrapping_sub(self.round_start.wrapping_add(base_owd)) as i32 > 0 {
                    tp.snd_ssthresh = tp.snd_cwnd;
                    return;
                }
            }
        }
        if self.cfg.hystart_detect & HYSTART_DELAY != 0 {
            if self.sample_cnt < 8 {
                self.sample_cnt += 1;
            } else {
                // The round's minimum above 9/8 of the smallest (at least 125 us).
                let d = self.delay_min as u32;
                let thresh = (d + d / 8).max(125) as i32;
                if self.rtt.min > thresh {
                    tp.snd_ssthresh = tp.snd_cwnd;
                }
            }
        }
    }

    /// `tcp_cdg_grad`: the window's gradient sum (us), extrapolated while it fills.
    fn tcp_cdg_grad(&mut self) -> i32 {
        let window = self.cfg.window as i32;
        let mut gmin = self.rtt.min.wrapping_sub(self.rtt_prev.min);
        let mut gmax = self.rtt.max.wrapping_sub(self.rtt_prev.max);
        if !self.gradients.is_empty() {
            let t = self.tail as usize;
            self.gsum.min = self.gsum.min.wrapping_add(gmin - self.gradients[t].min);
            self.gsum.max = self.gsum.max.wrapping_add(gmax - self.gradients[t].max);
            self.gradients[t] = MinMax {
                min: gmin,
                max: gmax,
            };
            self.tail = (self.tail + 1) & (self.cfg.window - 1);
            gmin = self.gsum.min;
            gmax = self.gsum.max;
        }
        // The sums stand for (rtt_latest - rtt_oldest); no division by window.
        let mut grad = if gmin > 0 { gmin } else { gmax };
        if !self.gfilled {
            if self.tail == 0 {
                self.gfilled = true;
            } else {
                grad = grad.wrapping_mul(window) / self.tail as i32;
            }
        }
        // A drop of the delay: the last backoff was effectual.
        if gmin <= -32 || gmax <= -32 {
            self.backoff_cnt = 0;
        }
        if self.cfg.use_tolerance {
            let gmin = div_round_closest(gmin, 64);
            let gmax = div_round_closest(gmax, 64);
            if gmin > 0 && gmax <= 0 {
                self.state = CdgState::Full;
            } else if (gmin > 0 && gmax > 0) || gmax < 0 {
                self.state = CdgState::NonFull;
            }
        }
        grad
    }

    /// `tcp_cdg_backoff`, with `rand` the `get_random_u32` draw: back off with
    /// probability 1 - e^(-grad * backoff_factor / 10^6).
    fn tcp_cdg_backoff(&mut self, tp: &mut CcView, grad: u32, rand: u32) -> bool {
        if rand <= nexp_u32(grad.wrapping_mul(self.cfg.backoff_factor)) {
            return false;
        }
        if self.cfg.use_ineff != 0 {
            self.backoff_cnt = self.backoff_cnt.wrapping_add(1);
            if u32::from(self.backoff_cnt) > self.cfg.use_ineff {
                return false;
            }
        }
        self.shadow_wnd = self.shadow_wnd.max(tp.snd_cwnd);
        self.state = CdgState::Backoff;
        self.enter_cwr(tp);
        true
    }

    /// What `tcp_enter_cwr` amounts to (see Deviations): ssthresh from
    /// `tcp_cdg_ssthresh`, cwnd down to it, and no growth until the reduction ends.
    fn enter_cwr(&mut self, tp: &mut CcView) {
        let ssthresh = self.ssthresh(tp);
        tp.snd_ssthresh = ssthresh;
        tp.snd_cwnd_cnt = 0;
        tp.snd_cwnd = tp.snd_cwnd.min(ssthresh);
        self.cwr_high_seq = Some(tp.snd_nxt);
    }

    /// The `CA_EVENT_COMPLETE_CWR` bookkeeping: a fresh round after the reduction.
    fn complete_cwr(&mut self, tp: &CcView) {
        self.state = CdgState::Unknown;
        self.rtt_seq = tp.snd_nxt;
        self.rtt_prev = self.rtt;
        self.rtt = MinMax::default();
        self.cwr_high_seq = None;
    }
}

impl CongestionOps for Cdg {
    fn name(&self) -> &'static str {
        "cdg"
    }

    /// `tcp_cdg_init`.
    fn init(&mut self, tp: &mut CcView) {
        let rng = self.rng.clone();
        *self = self.cfg.build();
        self.rng = rng;
        if self.cfg.window > 1 {
            self.gradients = vec![MinMax::default(); self.cfg.window as usize];
        }
        self.rtt_seq = tp.snd_nxt;
        self.shadow_wnd = tp.snd_cwnd;
    }

    /// `tcp_cdg_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut CcView, ack: u64, acked: u32) {
        // The emulated CWR: the kernel calls no cong_avoid until it ends.
        if let Some(high_seq) = self.cwr_high_seq {
            if !after(ack, high_seq) {
                return;
            }
            self.complete_cwr(tp);
        }
        if tcp_in_slow_start(tp) && self.cfg.hystart_detect != 0 {
            self.tcp_cdg_hystart_update(tp);
        }
        if after(ack, self.rtt_seq) && !self.rtt.is_empty() {
            let mut grad = 0;
            if !self.rtt_prev.is_empty() {
                grad = self.tcp_cdg_grad();
            }
            self.rtt_seq = tp.snd_nxt;
            self.rtt_prev = self.rtt;
            self.rtt = MinMax::default();
            self.last_ack = 0;
            self.sample_cnt = 0;
            if grad > 0 {
                let rand = self.rng.next_u32();
                if self.tcp_cdg_backoff(tp, grad as u32, rand) {
                    return;
                }
            }
        }
        if !tcp_is_cwnd_limited(tp) {
            self.shadow_wnd = self.shadow_wnd.min(tp.snd_cwnd);
            return;
        }
        let prior_snd_cwnd = tp.snd_cwnd;
        tcp_reno_cong_avoid(tp, acked);
        let incr = tp.snd_cwnd - prior_snd_cwnd;
        self.shadow_wnd = self.shadow_wnd.max(self.shadow_wnd.wrapping_add(incr));
    }

    /// `tcp_cdg_acked`: the round's RTT range, with delayed ACKs filtered.
    fn pkts_acked(&mut self, tp: &mut CcView, sample: &AckSample) {
        if sample.rtt_us <= 0 {
            return;
        }
        let rtt_us = sample.rtt_us.min(i64::from(i32::MAX)) as i32;
        if tp.sacked_out == 0 {
            if sample.pkts_acked == 1 && self.delack > 0 {
                // A delayed ACK counts only if provably below a non-zero minimum.
                self.rtt.min = self.rtt.min.min(rtt_us);
                self.delack -= 1;
                return;
            } else if sample.pkts_acked > 1 && self.delack < 5 {
                self.delack += 1;
            }
        }
        self.rtt.min = min_not_zero(self.rtt.min, rtt_us);
        self.rtt.max = self.rtt.max.max(rtt_us);
    }

    /// `tcp_cdg_ssthresh`.
    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        // Inside the emulated CWR the kernel would not recompute ssthresh.
        if self.cwr_high_seq.is_some() {
            return tp.snd_ssthresh;
        }
        let cwnd = tp.snd_cwnd;
        self.undo_cwnd = cwnd;
        if self.state == CdgState::Backoff {
            return ((cwnd * self.cfg.backoff_beta.min(1024)) >> 10).max(2);
        }
        if self.state == CdgState::NonFull && self.cfg.use_tolerance {
            return cwnd;
        }
        self.shadow_wnd = (self.shadow_wnd >> 1).min(cwnd);
        if self.cfg.use_shadow {
            return self.shadow_wnd.max(cwnd >> 1).max(2);
        }
        (cwnd >> 1).max(2)
    }

    /// `tcp_cdg_undo_cwnd`.
    fn undo_cwnd(&mut self, tp: &CcView) -> u32 {
        tp.snd_cwnd.max(self.undo_cwnd)
    }

    /// `tcp_cdg_cwnd_event`.
    fn cwnd_event(&mut self, tp: &mut CcView, ev: CaEvent) {
        match ev {
            CaEvent::CwndRestart => {
                let rng = self.rng.clone();
                let gradients = vec![MinMax::default(); self.gradients.len()];
                *self = self.cfg.build();
                self.rng = rng;
                self.gradients = gradients;
                self.rtt_seq = tp.snd_nxt;
                self.shadow_wnd = tp.snd_cwnd;
            }
            CaEvent::CompleteCwr => self.complete_cwr(tp),
            _ => {}
        }
    }

    fn info(&self) -> Vec<InfoField> {
        let state = match self.state {
            CdgState::Unknown => "unknown",
            CdgState::NonFull => "nonfull",
            CdgState::Full => "full",
            CdgState::Backoff => "backoff",
        };
        vec![
            ("state", InfoValue::Label(state)),
            ("shadow_wnd", InfoValue::Num(self.shadow_wnd as f64)),
            ("gsum_min_us", InfoValue::Num(self.gsum.min as f64)),
            ("gsum_max_us", InfoValue::Num(self.gsum.max as f64)),
            ("backoff_cnt", InfoValue::Num(self.backoff_cnt as f64)),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(cfg: CdgConfig, cwnd: u32) -> (Cdg, CcView) {
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = cwnd;
        tp.snd_ssthresh = 50;
        tp.is_cwnd_limited = true;
        let mut c = cfg.build();
        c.init(&mut tp);
        (c, tp)
    }

    fn sample(c: &mut Cdg, tp: &mut CcView, rtt_us: i64, pkts: u32) {
        c.pkts_acked(
            tp,
            &AckSample {
                pkts_acked: pkts,
                rtt_us,
                in_flight: 100,
                prior_in_flight: 100,
            },
        );
    }

    #[test]
    fn cdg_nexp_follows_the_table() {
        // ux = 0: U32_MAX. ux = 256 * 2^k (one bit of ux >> 8): (2^32 - 1) * (v + 1) >> 16
        // = (v + 1) * 65536 - 1:
        // 256 (k = 0, v[1] = 65518): 65519 * 65536 - 1 = 4293853183 (e^-0.000256 * 2^32
        // = 4293867...); 131072 (k = 9, v[10] = 57484): 57485 * 65536 - 1 = 3767336959
        // (e^-0.131 = 0.8772); 1048576 (k = 12, v[13] = 22965): 22966 * 65536 - 1 =
        // 1505099775 (e^-1.049 = 0.3504).
        assert_eq!(nexp_u32(0), u32::MAX);
        assert_eq!(nexp_u32(256), 4_293_853_183);
        assert_eq!(nexp_u32(131_072), 3_767_336_959);
        assert_eq!(nexp_u32(1_048_576), 1_505_099_775);
        // 768 = 256 * 3: 4293853183 * 65502 >> 16 = 65519 * 65502 - 1 = 4291625537.
        assert_eq!(nexp_u32(768), 4_291_625_537);
        // Low bits linearly: 100 -> U32_MAX - 100 * 4294 = 4294537895.
        assert_eq!(nexp_u32(100), 4_294_537_895);
        // Cut off at 2^24.
        assert_eq!(nexp_u32(1 << 24), 0);
    }

    #[test]
    fn cdg_backs_off_when_the_draw_exceeds_e_to_the_minus_gradient() {
        // backoff_factor 1, gradient 131072 us: nexp = 3767336959, P(backoff) = 12.3 %.
        // A draw equal to it: no backoff; one above: backoff to cwnd * 724 >> 10 =
        // 72400 >> 10 = 70, undo remembers 100, the shadow window 100.
        let cfg = CdgConfig {
            backoff_factor: 1,
            ..CdgConfig::default()
        };
        let (mut c, mut tp) = flow(cfg, 100);
        tp.snd_nxt = 500;
        assert!(!c.tcp_cdg_backoff(&mut tp, 131_072, 3_767_336_959));
        assert_eq!(tp.snd_cwnd, 100);
        assert!(c.tcp_cdg_backoff(&mut tp, 131_072, 3_767_336_960));
        assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (70, 70));
        assert_eq!(
            (c.undo_cwnd, c.shadow_wnd, c.state),
            (100, 100, CdgState::Backoff)
        );
        assert_eq!(c.cwr_high_seq, Some(500));
    }

    #[test]
    fn cdg_gradient_is_extrapolated_while_the_window_fills() {
        // Round 1: RTT 100 ms (prev empty: no gradient). Round 2: 101 ms: g = 1000 us in
        // the sum, tail 1 of 8: grad = 1000 * 8 / 1 = 8000. Round 3: 101.5 ms: sum 1500,
        // tail 2: 1500 * 8 / 2 = 6000.
        let (mut c, mut tp) = flow(CdgConfig::default(), 100);
        sample(&mut c, &mut tp, 100_000, 1);
        c.cong_avoid(&mut tp, 1, 1); // ends round 1 (rtt_seq 0)
        c.rtt = MinMax {
            min: 101_000,
            max: 101_000,
        };
        assert_eq!(c.tcp_cdg_grad(), 8000);
        c.rtt_prev = c.rtt;
        c.rtt = MinMax {
            min: 101_500,
            max: 101_500,
        };
        assert_eq!(c.tcp_cdg_grad(), 6000);
        assert_eq!(
            (c.gsum, c.tail),
            (
                MinMax {
                    min: 1500,
                    max: 1500
                },
                2
            )
        );
    }

    #[test]
    fn cdg_gradient_uses_the_max_when_the_min_does_not_rise() {
        // Full window (gfilled): gmin sum 0, gmax sum 2000: grad = gmax = 2000.
        let (mut c, _) = flow(CdgConfig::default(), 100);
        c.gfilled = true;
        c.rtt_prev = MinMax {
            min: 100_000,
            max: 110_000,
        };
        c.rtt = MinMax {
            min: 100_000,
            max: 112_000,
        };
        assert_eq!(c.tcp_cdg_grad(), 2000);
    }

    #[test]
    fn cdg_falling_delay_marks_the_backoff_effectual() {
        // gmin sum -32 (<= -32): backoff_cnt reset.
        let (mut c, _) = flow(CdgConfig::default(), 100);
        c.gfilled = true;
        c.backoff_cnt = 4;
        c.rtt_prev = MinMax {
            min: 100_032,
            max: 110_000,
        };
        c.rtt = MinMax {
            min: 100_000,
            max: 110_000,
        };
        c.tcp_cdg_grad();
        assert_eq!(c.backoff_cnt, 0);
    }

    #[test]
    fn cdg_stops_backing_off_after_use_ineff_ineffectual_backoffs() {
        // backoff_cnt counts 1..5: backoffs; the 6th (> 5) does not back off.
        let (mut c, mut tp) = flow(CdgConfig::default(), 1000);
        for n in 1..=5 {
            c.cwr_high_seq = None;
            assert!(c.tcp_cdg_backoff(&mut tp, 100_000, u32::MAX), "{n}");
        }
        c.cwr_high_seq = None;
        let cwnd = tp.snd_cwnd;
        assert!(!c.tcp_cdg_backoff(&mut tp, 100_000, u32::MAX));
        assert_eq!((tp.snd_cwnd, c.backoff_cnt), (cwnd, 6));
    }

    #[test]
    fn cdg_holds_growth_until_the_backoff_reduction_ends() {
        // Backoff at snd_nxt 500: ACKs up to 500 do nothing; the ACK past it ends the
        // reduction (state unknown, a fresh round at snd_nxt) and grows as Reno.
        let (mut c, mut tp) = flow(CdgConfig::default(), 100);
        tp.snd_nxt = 500;
        assert!(c.tcp_cdg_backoff(&mut tp, 100_000, u32::MAX));
        assert_eq!(tp.snd_cwnd, 70);
        c.cong_avoid(&mut tp, 500, 70);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (70, 0));
        tp.snd_nxt = 570;
        c.cong_avoid(&mut tp, 501, 70);
        assert_eq!(
            (tp.snd_cwnd, c.state, c.rtt_seq),
            (71, CdgState::Unknown, 570)
        );
        assert_eq!(c.cwr_high_seq, None);
        // A loss inside a reduction would not cut again.
        c.cwr_high_seq = Some(600);
        tp.snd_ssthresh = 70;
        assert_eq!(c.ssthresh(&tp), 70);
    }

    #[test]
    fn cdg_loss_halves_the_shadow_window() {
        // Shadow 200 (a backoff gave up 100), cwnd 100: shadow = min(200 >> 1, 100) = 100;
        // ssthresh = max(2, 100, 100 >> 1) = 100 (Reno would give 50).
        let (mut c, tp) = flow(CdgConfig::default(), 100);
        c.shadow_wnd = 200;
        assert_eq!(c.ssthresh(&tp), 100);
        // Without the shadow window: 50.
        let (mut c, tp) = flow(
            CdgConfig {
                use_shadow: false,
                ..CdgConfig::default()
            },
            100,
        );
        c.shadow_wnd = 200;
        assert_eq!(c.ssthresh(&tp), 50);
    }

    #[test]
    fn cdg_shadow_window_follows_reno_growth() {
        // cwnd 100, shadow 150: 100 acked add one segment to both.
        let (mut c, mut tp) = flow(CdgConfig::default(), 100);
        c.shadow_wnd = 150;
        c.cong_avoid(&mut tp, 0, 100);
        assert_eq!((tp.snd_cwnd, c.shadow_wnd), (101, 151));
    }

    #[test]
    fn cdg_filters_delayed_ack_rtt_samples() {
        // A 2-segment ACK raises delack to 1 and counts (100 ms); the next 1-segment ACK
        // is taken as delayed: only a lower minimum counts (120 ms does not), delack 0.
        let (mut c, mut tp) = flow(CdgConfig::default(), 100);
        sample(&mut c, &mut tp, 100_000, 2);
        assert_eq!(
            (c.rtt, c.delack),
            (
                MinMax {
                    min: 100_000,
                    max: 100_000
                },
                1
            )
        );
        sample(&mut c, &mut tp, 120_000, 1);
        assert_eq!(
            (c.rtt, c.delack),
            (
                MinMax {
                    min: 100_000,
                    max: 100_000
                },
                0
            )
        );
        sample(&mut c, &mut tp, 120_000, 1);
        assert_eq!(
            c.rtt,
            MinMax {
                min: 100_000,
                max: 120_000
            }
        );
    }

    #[test]
    fn cdg_hystart_delay_ends_slow_start_above_nine_eighths_of_the_minimum() {
        // Slow start; delay_min 100 ms; after 8 ACKs of the round, a round minimum of
        // 113 ms > 100000 + 12500 = 112500: ssthresh = cwnd.
        let cfg = CdgConfig {
            hystart_detect: HYSTART_DELAY,
            ..CdgConfig::default()
        };
        let (mut c, mut tp) = flow(cfg, 20);
        tp.snd_ssthresh = u32::MAX;
        c.delay_min = 100_000;
        c.rtt = MinMax {
            min: 113_000,
            max: 113_000,
        };
        c.rtt_seq = 1000; // stay inside the round
        for _ in 0..8 {
            c.tcp_cdg_hystart_update(&mut tp);
        }
        assert_eq!(tp.snd_ssthresh, u32::MAX);
        c.tcp_cdg_hystart_update(&mut tp);
        assert_eq!(tp.snd_ssthresh, 20);
    }

    #[test]
    fn cdg_hystart_ack_train_ends_slow_start_after_half_the_minimum_delay() {
        // delay_min 10 ms: base_owd 5000 us. ACKs 1 ms apart from t = 1 s: the train
        // starts at 1000000; at 1006000 it spans 6000 > 5000: ssthresh = cwnd.
        let cfg = CdgConfig {
            hystart_detect: HYSTART_ACK_TRAIN,
            ..CdgConfig::default()
        };
        let (mut c, mut tp) = flow(cfg, 20);
        tp.snd_ssthresh = u32::MAX;
        c.delay_min = 10_000;
        for i in 0..=5 {
            tp.now_us = 1_000_000 + i * 1000;
            c.tcp_cdg_hystart_update(&mut tp);
        }
        assert_eq!(tp.snd_ssthresh, u32::MAX);
        tp.now_us = 1_006_000;
        c.tcp_cdg_hystart_update(&mut tp);
        assert_eq!(tp.snd_ssthresh, 20);
    }

    #[test]
    fn cdg_with_tolerance_keeps_cwnd_on_a_loss_in_a_non_full_queue() {
        // gmin sum 6400, gmax sum 6400: both > 0 after rounding (100, 100): NONFULL; a
        // loss then keeps ssthresh = cwnd.
        let cfg = CdgConfig {
            use_tolerance: true,
            ..CdgConfig::default()
        };
        let (mut c, tp) = flow(cfg, 100);
        c.gfilled = true;
        c.rtt_prev = MinMax {
            min: 100_000,
            max: 100_000,
        };
        c.rtt = MinMax {
            min: 106_400,
            max: 106_400,
        };
        c.tcp_cdg_grad();
        assert_eq!(c.state, CdgState::NonFull);
        assert_eq!(c.ssthresh(&tp), 100);
    }

    #[test]
    fn cdg_undo_restores_the_window_before_the_cut() {
        let (mut c, mut tp) = flow(CdgConfig::default(), 100);
        c.ssthresh(&tp);
        tp.snd_cwnd = 60;
        assert_eq!(c.undo_cwnd(&tp), 100);
    }

    #[test]
    fn cdg_draws_are_a_function_of_the_seed() {
        // Same seed, same decisions over a run of large gradients; the draws come from
        // the seeded stream only.
        let run = |seed: u64| {
            let (mut c, mut tp) = flow(
                CdgConfig {
                    seed,
                    use_ineff: 0,
                    ..CdgConfig::default()
                },
                1000,
            );
            (0..64)
                .map(|_| {
                    c.cwr_high_seq = None;
                    tp.snd_cwnd = 1000;
                    let r = c.rng.next_u32();
                    c.tcp_cdg_backoff(&mut tp, 20_000, r)
                })
                .collect::<Vec<bool>>()
        };
        assert_eq!(run(3), run(3));
        assert_ne!(run(3), run(4));
    }
}
