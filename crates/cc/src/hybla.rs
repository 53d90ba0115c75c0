//! `hybla`: TCP Hybla as Linux runs it (net/ipv4/tcp_hybla.c).
//!
//! Model (Caini and Firrincieli, "TCP Hybla: a TCP enhancement for heterogeneous
//! networks", Int. J. Satellite Communications and Networking 22(5), 2004, Sec. 3).
//! Standard TCP's window grows per RTT, so a long-RTT (satellite) flow grows as many
//! times slower as its RTT is longer. Hybla removes that bias by scaling the increase
//! with rho = RTT / RTT0 against a reference RTT0 = 25 ms (rho >= 1): per ACK, slow start
//! adds 2^rho - 1 segments and congestion avoidance rho^2 / cwnd (Eq. 6), so a flow of
//! any RTT grows in time as one of RTT0 would. The kernel takes rho from the smoothed
//! RTT, recomputed whenever it falls to a new minimum, keeps it with 3 fraction bits
//! (`rho_3ls`), computes 2^rho as 2^int(rho) times a table of 2^(k/8) << 7, and carries
//! fractions of a segment in 1/128 (`snd_cwnd_cents`). Outside the Open state it is Reno;
//! losses are Reno's.
//!
//! Kernel functions followed: `hybla_recalc_param`, `hybla_init`, `hybla_state`,
//! `hybla_fraction`, `hybla_cong_avoid`; `ssthresh` is `tcp_reno_ssthresh`, `undo_cwnd`
//! `tcp_reno_undo_cwnd`. The kernel's choices are kept: the increase is per ACK, not per
//! acked segment; `snd_cwnd_clamp` is set to 65535.
//!
//! Deviations:
//! - The simulator has no handshake, so `init` runs before any RTT sample, where the
//!   kernel's runs after the SYN/SYN-ACK one (`tcp_init_transfer`) and sets cwnd = rho.
//!   With no srtt yet, `init` leaves cwnd at the initial window and rho unmeasured
//!   (0, with the minimum srtt unknown); the first `cong_avoid` then measures it from
//!   the first srtt (the kernel's own `rho == 0` and new-minimum paths). With an srtt
//!   (a restart), `init` is the kernel's.
//! - `CcView::srtt_us` is plain microseconds; the kernel's `srtt_us` holds 8 times that
//!   with 3 fraction bits, so `rho_3ls = (srtt_us << 3) / (rtt0 * 1000)` here may come
//!   out below the kernel's by those fraction bits (under 1 us of srtt).

use crate::helpers::{
    tcp_in_slow_start, tcp_is_cwnd_limited, tcp_reno_cong_avoid, tcp_reno_ssthresh,
};
use crate::ops::{CaState, CcView, CongestionOps, InfoField, InfoValue};
use crate::registry::{AlgorithmSpec, ParamKind, ParamSpec, Params};

/// The clamp `hybla_init` sets on cwnd.
pub const HYBLA_CWND_CLAMP: u32 = 65535;

/// `hybla_fraction`'s table: 2^(k/8) << 7 for k = 0..7.
pub const HYBLA_FRACTIONS: [u32; 8] = [128, 139, 152, 165, 181, 197, 215, 234];

static PARAMS: [ParamSpec; 1] = [ParamSpec {
    name: "rtt0",
    kind: ParamKind::Int,
    default: 25.0,
    min: 1.0,
    max: 100_000.0,
    doc: "reference RTT (ms): flows grow as one of this RTT would (tcp_hybla.c default 25)",
}];

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "hybla",
    family: crate::registry::Family::Loss,
    summary: "Hybla: Reno's increase scaled by rho = RTT / 25 ms, for long-RTT paths",
    source: "Linux net/ipv4/tcp_hybla.c; Caini and Firrincieli, IJSCN 2004, Sec. 3",
    params: &PARAMS,
    build: |p: &Params| Box::new(HyblaConfig::from_params(p).build()),
};

/// Hybla's tunables (the module parameters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HyblaConfig {
    /// `rtt0` (ms).
    pub rtt0: u32,
}

impl Default for HyblaConfig {
    fn default() -> Self {
        HyblaConfig { rtt0: 25 }
    }
}

impl HyblaConfig {
    pub fn from_params(p: &Params) -> Self {
        HyblaConfig {
            rtt0: p.get_u32("rtt0"),
        }
    }
    pub fn build(&self) -> Hybla {
        Hybla {
            cfg: *self,
            hybla_en: true,
            snd_cwnd_cents: 0,
            rho: 0,
            rho2: 0,
            rho_3ls: 0,
            rho2_7ls: 0,
            minrtt_us: u32::MAX,
        }
    }
}

/// `struct hybla`.
#[derive(Clone, Debug)]
pub struct Hybla {
    cfg: HyblaConfig,
    /// `hybla_en`: Hybla's rules in Open, Reno's elsewhere.
    hybla_en: bool,
    /// `snd_cwnd_cents`: fractions of a segment of increase, in 1/128.
    snd_cwnd_cents: u32,
    /// `rho`, `rho2`: integer parts of rho and rho^2.
    rho: u32,
    rho2: u32,
    /// `rho_3ls`: rho << 3; `rho2_7ls`: rho^2 << 7.
    rho_3ls: u32,
    rho2_7ls: u32,
    /// `minrtt_us`: the smallest srtt seen (us); `u32::MAX` before the first.
    minrtt_us: u32,
}

/// `hybla_fraction`: 2^(odds/8) << 7.
fn hybla_fraction(odds: u32) -> u32 {
    HYBLA_FRACTIONS.get(odds as usize).copied().unwrap_or(128)
}

impl Hybla {
    /// `hybla_recalc_param`: rho from the smoothed RTT, at least 1.
    fn hybla_recalc_param(&mut self, tp: &CcView) {
        let srtt8_us = u64::from(tp.srtt_us) << 3;
        let rho_3ls = srtt8_us / (u64::from(self.cfg.rtt0) * 1000);
        self.rho_3ls = (rho_3ls.min(u64::from(u32::MAX)) as u32).max(8);
        self.rho = self.rho_3ls >> 3;
        self.rho2_7ls = self.rho_3ls.wrapping_mul(self.rho_3ls) << 1;
        self.rho2 = self.rho2_7ls >> 7;
    }
}

impl CongestionOps for Hybla {
    fn name(&self) -> &'static str {
        "hybla"
    }

    /// `hybla_init` (see Deviations for a flow without an RTT yet).
    fn init(&mut self, tp: &mut CcView) {
        *self = self.cfg.build();
        tp.snd_cwnd_clamp = HYBLA_CWND_CLAMP;
        if tp.srtt_us == 0 {
            return;
        }
        self.hybla_recalc_param(tp);
        self.minrtt_us = tp.srtt_us;
        tp.snd_cwnd = self.rho;
    }

    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        tcp_reno_ssthresh(tp)
    }

    /// `hybla_state`.
    fn set_state(&mut self, _tp: &mut CcView, new_state: CaState) {
        self.hybla_en = new_state == CaState::Open;
    }

    /// `hybla_cong_avoid`.
    fn cong_avoid(&mut self, tp: &mut CcView, _ack: u64, acked: u32) {
        // rho follows the smallest srtt.
        if tp.srtt_us < self.minrtt_us {
            self.hybla_recalc_param(tp);
            self.minrtt_us = tp.srtt_us;
        }
        if !tcp_is_cwnd_limited(tp) {
            return;
        }
        if !self.hybla_en {
            tcp_reno_cong_avoid(tp, acked);
            return;
        }
        if self.rho == 0 {
            self.hybla_recalc_param(tp);
        }
        let rho_fractions = self.rho_3ls - (self.rho << 3);
        let is_slowstart = tcp_in_slow_start(tp);
        let increment = if is_slowstart {
            // 2^rho - 1 segments (<< 7): 2^int(rho) * 2^frac(rho) - 1.
            ((1u32 << self.rho.min(16)) * hybla_fraction(rho_fractions)) - 128
        } else {
            // rho^2 / cwnd segments (<< 7).
            let inc = self.rho2_7ls / tp.snd_cwnd;
            if inc < 128 {
                tp.snd_cwnd_cnt += 1;
            }
            inc
        };
        let odd = increment % 128;
        tp.snd_cwnd += increment >> 7;
        self.snd_cwnd_cents += odd;
        // Whole segments out of the accumulated fractions.
        while self.snd_cwnd_cents >= 128 {
            tp.snd_cwnd += 1;
            self.snd_cwnd_cents -= 128;
            tp.snd_cwnd_cnt = 0;
        }
        // An increment below 1/128: one segment per window of ACKs, as Reno.
        if increment == 0 && odd == 0 && tp.snd_cwnd_cnt >= tp.snd_cwnd {
            tp.snd_cwnd += 1;
            tp.snd_cwnd_cnt = 0;
        }
        if is_slowstart {
            tp.snd_cwnd = tp.snd_cwnd.min(tp.snd_ssthresh);
        }
        tp.snd_cwnd = tp.snd_cwnd.min(tp.snd_cwnd_clamp);
    }

    fn info(&self) -> Vec<InfoField> {
        vec![
            ("rho", InfoValue::Num(self.rho_3ls as f64 / 8.0)),
            ("rho2", InfoValue::Num(self.rho2 as f64)),
            (
                "enabled",
                InfoValue::Num(if self.hybla_en { 1.0 } else { 0.0 }),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::TCP_INFINITE_SSTHRESH;

    /// A flow whose srtt is `srtt_ms`, built and initialised with it, then set to
    /// cwnd `cwnd` and ssthresh `ssthresh`, cwnd-limited.
    fn flow(srtt_ms: u32, cwnd: u32, ssthresh: u32) -> (Hybla, CcView) {
        let mut tp = CcView::new(1448, 0);
        tp.srtt_us = srtt_ms * 1000;
        let mut c = HyblaConfig::default().build();
        c.init(&mut tp);
        tp.snd_cwnd = cwnd;
        tp.snd_ssthresh = ssthresh;
        tp.is_cwnd_limited = true;
        (c, tp)
    }

    #[test]
    fn hybla_rho_is_srtt_over_rtt0_with_three_fraction_bits() {
        // 100 ms: rho_3ls = 800000 / 25000 = 32, rho = 4, rho2_7ls = 32 * 32 << 1 = 2048,
        // rho2 = 16.
        let (c, _) = flow(100, 10, TCP_INFINITE_SSTHRESH);
        assert_eq!((c.rho_3ls, c.rho, c.rho2_7ls, c.rho2), (32, 4, 2048, 16));
        // 60 ms: 480000 / 25000 = 19.2 -> 19 (rho 2 + 3/8).
        let (c, _) = flow(60, 10, TCP_INFINITE_SSTHRESH);
        assert_eq!((c.rho_3ls, c.rho), (19, 2));
        // 10 ms: 80000 / 25000 = 3 -> at least 8: rho 1 (Reno).
        let (c, _) = flow(10, 10, TCP_INFINITE_SSTHRESH);
        assert_eq!((c.rho_3ls, c.rho), (8, 1));
    }

    #[test]
    fn hybla_init_with_an_rtt_sets_cwnd_to_rho_and_clamps() {
        // srtt 600 ms (a GEO satellite): rho_3ls = 4800000 / 25000 = 192, rho 24.
        let mut tp = CcView::new(1448, 0);
        tp.srtt_us = 600_000;
        let mut c = HyblaConfig::default().build();
        c.init(&mut tp);
        assert_eq!(
            (tp.snd_cwnd, tp.snd_cwnd_clamp, c.minrtt_us),
            (24, 65535, 600_000)
        );
    }

    #[test]
    fn hybla_init_without_an_rtt_waits_for_the_first_srtt() {
        let mut tp = CcView::new(1448, 0);
        let mut c = HyblaConfig::default().build();
        c.init(&mut tp);
        assert_eq!((tp.snd_cwnd, c.rho, c.minrtt_us), (10, 0, u32::MAX));
        // The first ACK with srtt 100 ms measures rho 4 and slow start adds 15.
        tp.srtt_us = 100_000;
        tp.is_cwnd_limited = true;
        c.cong_avoid(&mut tp, 1, 1);
        assert_eq!((c.rho, c.minrtt_us, tp.snd_cwnd), (4, 100_000, 25));
    }

    #[test]
    fn hybla_slow_start_adds_two_to_the_rho_minus_one_per_ack() {
        // rho 4 (100 ms): increment = 16 * 128 - 128 = 1920 = 15 segments, no fraction.
        let (mut c, mut tp) = flow(100, 10, TCP_INFINITE_SSTHRESH);
        c.cong_avoid(&mut tp, 1, 1);
        assert_eq!((tp.snd_cwnd, c.snd_cwnd_cents), (25, 0));
        // The same per ACK whatever it acknowledged.
        c.cong_avoid(&mut tp, 5, 4);
        assert_eq!(tp.snd_cwnd, 40);
    }

    #[test]
    fn hybla_slow_start_uses_the_fraction_table_for_fractional_rho() {
        // rho 2 + 3/8 (60 ms): increment = 4 * hybla_fraction(3) = 4 * 165 - 128 = 532:
        // 532 >> 7 = 4 segments and 532 % 128 = 20 cents per ACK (2^2.375 - 1 = 4.19).
        let (mut c, mut tp) = flow(60, 10, TCP_INFINITE_SSTHRESH);
        for _ in 0..6 {
            c.cong_avoid(&mut tp, 1, 1);
        }
        // 6 ACKs: 10 + 24 = 34, cents 120.
        assert_eq!((tp.snd_cwnd, c.snd_cwnd_cents), (34, 120));
        // 7th: +4, cents 140 >= 128: +1 more, cents 12.
        c.cong_avoid(&mut tp, 1, 1);
        assert_eq!((tp.snd_cwnd, c.snd_cwnd_cents), (39, 12));
    }

    #[test]
    fn hybla_slow_start_stops_at_ssthresh() {
        // rho 4: 10 + 15 = 25, clamped to ssthresh 20.
        let (mut c, mut tp) = flow(100, 10, 20);
        c.cong_avoid(&mut tp, 1, 1);
        assert_eq!(tp.snd_cwnd, 20);
    }

    #[test]
    fn hybla_congestion_avoidance_adds_rho_squared_over_cwnd_per_ack() {
        // rho 4, cwnd 100: increment = 2048 / 100 = 20 (0.16 segment); 6 ACKs make 120
        // cents; the 7th 140: cwnd 101, cents 12, snd_cwnd_cnt reset.
        let (mut c, mut tp) = flow(100, 100, 50);
        for _ in 0..6 {
            c.cong_avoid(&mut tp, 1, 1);
        }
        assert_eq!(
            (tp.snd_cwnd, c.snd_cwnd_cents, tp.snd_cwnd_cnt),
            (100, 120, 6)
        );
        c.cong_avoid(&mut tp, 1, 1);
        assert_eq!(
            (tp.snd_cwnd, c.snd_cwnd_cents, tp.snd_cwnd_cnt),
            (101, 12, 0)
        );
    }

    #[test]
    fn hybla_with_rho_one_and_a_large_window_adds_one_segment_per_window() {
        // rho 1 (10 ms), cwnd 200: increment = 128 / 200 = 0, so only snd_cwnd_cnt counts;
        // the 200th ACK makes it 200 >= 200: cwnd 201.
        let (mut c, mut tp) = flow(10, 200, 50);
        for _ in 0..199 {
            c.cong_avoid(&mut tp, 1, 1);
        }
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (200, 199));
        c.cong_avoid(&mut tp, 1, 1);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (201, 0));
    }

    #[test]
    fn hybla_recomputes_rho_when_srtt_reaches_a_new_minimum() {
        // Initialised at 100 ms (rho 4); srtt falls to 50 ms: rho_3ls = 400000 / 25000 = 16,
        // rho 2; rising back to 100 ms keeps rho 2.
        let (mut c, mut tp) = flow(100, 100, 50);
        tp.srtt_us = 50_000;
        c.cong_avoid(&mut tp, 1, 1);
        assert_eq!((c.rho, c.minrtt_us), (2, 50_000));
        tp.srtt_us = 100_000;
        c.cong_avoid(&mut tp, 2, 1);
        assert_eq!(c.rho, 2);
    }

    #[test]
    fn hybla_is_reno_outside_open() {
        // Disorder: Reno's CA at cwnd 100, one ACK only counts (cnt 1), no cents.
        let (mut c, mut tp) = flow(100, 100, 50);
        c.set_state(&mut tp, CaState::Disorder);
        c.cong_avoid(&mut tp, 1, 1);
        assert_eq!(
            (tp.snd_cwnd, tp.snd_cwnd_cnt, c.snd_cwnd_cents),
            (100, 1, 0)
        );
        c.set_state(&mut tp, CaState::Open);
        assert!(c.hybla_en);
    }

    #[test]
    fn hybla_rtt0_is_a_parameter() {
        // rtt0 50 ms, srtt 100 ms: rho_3ls = 800000 / 50000 = 16, rho 2.
        let mut tp = CcView::new(1448, 0);
        tp.srtt_us = 100_000;
        let mut c = HyblaConfig { rtt0: 50 }.build();
        c.init(&mut tp);
        assert_eq!((c.rho, tp.snd_cwnd), (2, 2));
    }
}
