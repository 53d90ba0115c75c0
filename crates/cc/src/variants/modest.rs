//! `modest-bbr`: Modest BBR (Zhang, Cui and Tso, IEEE ISCC 2018), as the BBR-CWS paper
//! gives it: Section 5.2, Algorithm 2 and Table 1 of `shared/seeds/002_*.txt`.
//!
//! Model: BBR that answers retransmissions the way BIC does (Section 5.2: "binary search
//! phase and linear phase similar to BIC"). The first retransmission starts a binary
//! search: it remembers `last_cwnd`, sets `min_win = cwnd x w_max` and `max_win` to the
//! midpoint of cwnd and min_win, and uses max_win (lines 1-6). Each later round with a
//! retransmission lowers max_win to the midpoint; each round without one raises min_win
//! to the midpoint (lines 7-14). When the bracket is no wider than S_min, the linear phase
//! adds S_min per ACK until cwnd is back at `last_cwnd` (lines 15-24). While either phase
//! runs, Modest's window caps BBR's cwnd; afterwards BBR's own cwnd rules again.
//!
//! Follows: Algorithm 2 lines 1-24 and Table 1 (the BBR-CWS authors' reading; the
//! original paper's pseudo-code was not found with the search tool, and the BBR-CWS
//! authors also "implemented Modest BBR only depending on its pseudo code").
//!
//! Constants: Table 1 names W_min, W_max and S_min but gives no values, and neither
//! source reachable here does. We take BIC's: w_max = 0.8 (Linux `tcp_bic.c`,
//! beta = 819/1024, the multiplicative decrease that `min_win = cwnd x w_max` plays) and
//! S_min = 0.01 packets (Xu, Harfoush and Rhee, BIC, INFOCOM 2004: S_min = 0.01).
//!
//! Diff against tcp_bbr.c (the `BbrVariant` hooks used):
//! - `on_ack`: collects losses per round, runs lines 1-19 at each round start and
//!   lines 20-24 on every ACK.
//! - `cap_cwnd`: Modest's window as the last cap on cwnd.
//!
//! Deviations:
//! - Modest's window is a cap on BBR's cwnd (BBR's own recovery still runs under it);
//!   the paper's pseudo-code sets cwnd directly and does not say how it meets BBR's.
//! - The cap never goes below BBR's 4 packets.
//!
//! Ambiguities resolved:
//! - Line 17 sets `bin_p = 1` on leaving the binary search, which would keep the search
//!   running forever beside the linear phase; we read it as `bin_p = 0` (BIC ends its
//!   binary search there).
//! - W_min (Table 1) appears in no line of Algorithm 2; it is not used.
//! - "retransmission occurs" is judged once per packet-timed round (any ACK of the round
//!   reported a newly lost packet), the cadence at which BIC's search steps; per ACK the
//!   bracket would collapse within a few ACKs.
//! - The linear phase ends (and BBR's cwnd resumes) once cwnd exceeds last_cwnd, where
//!   line 20 stops applying.
//! - Windows are real numbers (S_min = 0.01 packet); the cwnd handed to BBR is rounded
//!   down, at least 1.

/// `min_win = cwnd x w_max` (Algorithm 2 line 4): BIC's multiplicative decrease,
/// Linux tcp_bic.c `beta = 819` / 1024.
pub const MODEST_W_MAX: f64 = 819.0 / 1024.0;
/// S_min, the minimum increase step (Table 1): BIC's S_min = 0.01 packets.
pub const MODEST_S_MIN: f64 = 0.01;

/// Tunables.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModestParams {
    pub w_max: f64,
    pub s_min: f64,
}

impl Default for ModestParams {
    fn default() -> Self {
        ModestParams {
            w_max: MODEST_W_MAX,
            s_min: MODEST_S_MIN,
        }
    }
}

/// Algorithm 2's variables (Table 1).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModestState {
    pub bin_p: bool,
    pub add_p: bool,
    pub last_cwnd: f64,
    pub min_win: f64,
    pub max_win: f64,
    /// Modest's window (packets), the cap on BBR's cwnd while a phase runs.
    pub cwnd: f64,
}

impl ModestState {
    /// True while Modest's window caps BBR's.
    pub fn active(&self) -> bool {
        self.bin_p || self.add_p
    }

    /// Lines 1-19, at the end of a packet-timed round. `retransmitted`: the round saw a
    /// loss; `bbr_cwnd`: BBR's cwnd now (used when a search starts).
    pub fn on_round_end(&mut self, retransmitted: bool, bbr_cwnd: u32, p: &ModestParams) {
        if retransmitted && !self.bin_p {
            // Lines 1-6.
            let cwnd = if self.add_p {
                self.cwnd
            } else {
                f64::from(bbr_cwnd)
            };
            self.bin_p = true;
            self.add_p = false;
            self.last_cwnd = cwnd;
            self.min_win = cwnd * p.w_max;
            self.max_win = (cwnd + self.min_win) / 2.0;
            self.cwnd = self.max_win;
        } else if self.bin_p {
            // Lines 7-14.
            let mid = (self.max_win + self.min_win) / 2.0;
            if retransmitted {
                self.max_win = mid;
                self.cwnd = self.max_win;
            } else {
                self.min_win = mid;
                self.cwnd = self.min_win;
            }
            // Lines 15-18 (line 17 read as bin_p = 0).
            if self.max_win - self.min_win <= p.s_min {
                self.add_p = true;
                self.bin_p = false;
            }
        }
    }

    /// Lines 20-24, on every ACK.
    pub fn on_ack(&mut self, p: &ModestParams) {
        if self.add_p {
            if self.cwnd <= self.last_cwnd {
                self.cwnd += p.s_min;
            } else {
                self.add_p = false;
            }
        }
    }

    /// Modest's cap on BBR's cwnd, if a phase runs.
    pub fn cwnd_cap(&self) -> Option<u32> {
        self.active().then(|| (self.cwnd as u32).max(1))
    }
}

// ---------------------------------------------------------------------------------------
// The variant: tcp_bbr.c with Algorithm 2's window as a last cap on cwnd.

use crate::bbr::{Bbr, BbrConfig, BbrFamily, BbrVariant, BBR_CWND_MIN_TARGET};
use crate::bbr_param_specs;
use crate::ops::{CcView, InfoField, InfoValue, RateSample};
use crate::registry::{AlgorithmSpec, ParamKind, ParamSpec, Params};

const W_MAX: ParamSpec = ParamSpec {
    name: "w_max",
    kind: ParamKind::Float,
    default: MODEST_W_MAX,
    min: 0.01,
    max: 0.99,
    doc: "min_win = cwnd x w_max when a binary search starts (Algorithm 2 line 4); Table 1 \
          gives no value: BIC's beta, Linux tcp_bic.c 819/1024",
};
const S_MIN: ParamSpec = ParamSpec {
    name: "s_min",
    kind: ParamKind::Float,
    default: MODEST_S_MIN,
    min: 0.0001,
    max: 100.0,
    doc: "minimum increase step (packets): search ends when max_win - min_win <= s_min, \
          linear phase adds s_min per ACK (Algorithm 2); Table 1 gives no value: BIC's 0.01",
};

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "modest-bbr",
    family: crate::registry::Family::Bbr,
    summary: "BBR that answers retransmissions with a BIC-like binary search on cwnd",
    source: "Zhang, Cui and Tso, Modest BBR, ISCC 2018, as given in BBR-CWS (Electronics 2020) \
             Section 5.2, Algorithm 2, Table 1",
    params: bbr_param_specs![W_MAX, S_MIN],
    build: |p: &Params| {
        let params = ModestParams {
            w_max: p.get("w_max"),
            s_min: p.get("s_min"),
        };
        Box::new(BbrFamily::new(
            BbrConfig::from_params(p),
            ModestBbr::new(params),
        ))
    },
};

/// Modest BBR's additions to `struct bbr`.
#[derive(Clone, Debug)]
pub struct ModestBbr {
    pub params: ModestParams,
    pub state: ModestState,
    /// A loss was reported in the current round.
    pub round_loss: bool,
}

impl ModestBbr {
    pub fn new(params: ModestParams) -> Self {
        ModestBbr {
            params,
            state: ModestState::default(),
            round_loss: false,
        }
    }
}

impl BbrVariant for ModestBbr {
    fn name(&self) -> &'static str {
        "modest-bbr"
    }

    /// Lines 1-19 at each round end (this ACK's losses count in the ending round), lines
    /// 20-24 on every ACK.
    fn on_ack(&mut self, bbr: &Bbr, tp: &CcView, rs: &RateSample) {
        self.round_loss |= rs.losses > 0;
        if bbr.round_start {
            self.state
                .on_round_end(self.round_loss, tp.snd_cwnd, &self.params);
            self.round_loss = false;
        }
        self.state.on_ack(&self.params);
    }

    /// Modest's window caps BBR's while a phase runs (never below BBR's 4 packets).
    fn cap_cwnd(&mut self, _bbr: &Bbr, _tp: &CcView, cwnd: u32) -> u32 {
        match self.state.cwnd_cap() {
            Some(cap) => cwnd.min(cap.max(BBR_CWND_MIN_TARGET)),
            None => cwnd,
        }
    }

    fn info(&self, _bbr: &Bbr, out: &mut Vec<InfoField>) {
        let s = &self.state;
        let phase = if s.bin_p {
            "binary"
        } else if s.add_p {
            "linear"
        } else {
            "bbr"
        };
        out.push(("modest_phase", InfoValue::Label(phase)));
        let w = |x: f64| InfoValue::Num(if s.active() { x } else { f64::NAN });
        out.push(("modest_cwnd_pkts", w(s.cwnd)));
        out.push(("modest_min_win_pkts", w(s.min_win)));
        out.push(("modest_max_win_pkts", w(s.max_win)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approx(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    const P: ModestParams = ModestParams {
        w_max: 0.8,
        s_min: 0.01,
    };

    #[test]
    fn modest_first_retransmission_starts_binary_search_at_midpoint() {
        let mut m = ModestState::default();
        m.on_round_end(true, 100, &P);
        // min_win = 100 x 0.8 = 80; max_win = (100 + 80) / 2 = 90; cwnd = 90.
        assert!(m.bin_p && !m.add_p);
        assert!(approx(m.last_cwnd, 100.0) && approx(m.min_win, 80.0) && approx(m.max_win, 90.0));
        assert_eq!(m.cwnd_cap(), Some(90));
    }

    #[test]
    fn modest_binary_search_halves_the_bracket_each_round() {
        let mut m = ModestState::default();
        m.on_round_end(true, 100, &P); // [80, 90]
        m.on_round_end(true, 100, &P); // loss: max = 85, cwnd 85
        assert!(approx(m.max_win, 85.0) && approx(m.cwnd, 85.0));
        m.on_round_end(false, 100, &P); // no loss: min = 82.5, cwnd 82.5
        assert!(approx(m.min_win, 82.5) && approx(m.cwnd, 82.5));
        assert_eq!(m.cwnd_cap(), Some(82));
    }

    #[test]
    fn modest_bracket_below_s_min_switches_to_linear_phase() {
        let mut m = ModestState::default();
        m.on_round_end(true, 100, &P); // width 10
                                       // Widths after each loss-free round: 5, 2.5, 1.25, 0.625, 0.3125, 0.15625,
                                       // 0.078125, 0.0390625, 0.01953125, 0.009765625 <= 0.01: 10 rounds.
        for _ in 0..9 {
            m.on_round_end(false, 100, &P);
            assert!(m.bin_p);
        }
        m.on_round_end(false, 100, &P);
        assert!(!m.bin_p && m.add_p);
        // min_win climbed to 90 - 0.009765625 = 89.990234375.
        assert!(approx(m.cwnd, 90.0 - 0.009_765_625));
        // Linear phase: +0.01 per ACK.
        m.on_ack(&P);
        assert!(approx(m.cwnd, 90.0 - 0.009_765_625 + 0.01));
    }

    #[test]
    fn modest_linear_phase_ends_above_last_cwnd() {
        let mut m = ModestState {
            add_p: true,
            last_cwnd: 10.0,
            cwnd: 9.995,
            ..Default::default()
        };
        m.on_ack(&P); // 9.995 <= 10: +0.01 = 10.005
        assert!(m.add_p && approx(m.cwnd, 10.005));
        m.on_ack(&P); // 10.005 > 10: done, BBR rules again
        assert!(!m.active());
        assert_eq!(m.cwnd_cap(), None);
    }

    #[test]
    fn modest_loss_during_linear_phase_restarts_search_from_its_window() {
        let mut m = ModestState {
            add_p: true,
            last_cwnd: 100.0,
            cwnd: 95.0,
            ..Default::default()
        };
        m.on_round_end(true, 300, &P);
        // Starts from Modest's 95, not BBR's 300: min 76, max 85.5.
        assert!(approx(m.min_win, 76.0) && approx(m.max_win, 85.5) && approx(m.last_cwnd, 95.0));
    }

    #[test]
    fn modest_without_retransmission_stays_inactive() {
        let mut m = ModestState::default();
        m.on_round_end(false, 100, &P);
        m.on_ack(&P);
        assert!(!m.active());
    }

    // ---- hook-level: driven through cong_control (testkit: target 106 at gain 2)

    use crate::bbr::KernelBbr;
    use crate::ops::CaState;
    use crate::variants::testkit::Flow;

    #[test]
    fn modest_round_with_a_loss_caps_cwnd_at_the_search_midpoint() {
        let mut f = Flow::steady(ModestBbr::new(P));
        // A loss mid-round: BBR gives 100 - 1 = 99, min(99 + 1, 106) = 100.
        assert_eq!(f.ack(45_000, 1, CaState::Open), 100);
        // Round ends: search from cwnd 100: min 80, max 90; BBR's min(100 + 1, 106) = 101
        // is capped at 90.
        assert_eq!(f.ack_full(45_000, 1, 0, CaState::Open, true), 90);
        assert!(f.cc.variant().state.bin_p);
        // Loss-free round: min_win = (90 + 80) / 2 = 85 becomes the cap.
        assert_eq!(f.ack_full(45_000, 1, 0, CaState::Open, true), 85);
        let mut k = Flow::steady(KernelBbr);
        k.ack(45_000, 1, CaState::Open);
        assert_eq!(k.ack_full(45_000, 1, 0, CaState::Open, true), 101);
    }

    #[test]
    fn modest_loss_free_flow_is_plain_bbr() {
        let mut f = Flow::steady(ModestBbr::new(P));
        assert_eq!(f.ack_full(45_000, 1, 0, CaState::Open, true), 101);
        assert!(!f.cc.variant().state.active());
    }
}
