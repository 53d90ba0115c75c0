//! `vivace`: PCC Vivace (Dong et al., "PCC Vivace: Online-Learning Congestion
//! Control", NSDI 2018), with PCCproject/PCC-Uspace's QUIC-side sender as the
//! implementation reference (src/pcc/pcc_vivace_sender.cpp for the rate control,
//! pcc_sender.cpp for the monitor intervals, pcc_utility_manager.cpp for the utility).
//!
//! Model. Vivace is rate-based and learns online: it sends at a rate for a monitor
//! interval (MI), observes what that rate earned, u(x) = x^0.9 - 900 x dRTT/dT -
//! 11.35 x L (x the MI's sending rate in 10^6 bit/s, dRTT/dT the RTT's slope over the MI,
//! L its loss rate; `CalculateUtilityVivace`), and moves the rate by gradient
//! ascent on u. Start-up doubles the rate every MI while u grows and halves it back
//! when u falls. Probing sends two pairs of MIs at r(1 + eps) and r(1 - eps)
//! (eps = 0.05) and decides only if both pairs agree which is better. Moving
//! (`DECISION_MADE`) then steps the rate by theta * gamma, gamma the utility gradient
//! measured by the probing pairs, then by each MI against the previous one, theta growing with the number of consecutive steps in
//! one direction (the confidence amplifier, ((tau + 1) / 2)^1.2 with integer
//! halving) and bounded by omega * r, omega = 0.05 + 0.05 k growing by one step each
//! time the bound binds and shrinking by one when it does not (the dynamic change
//! boundary). When u stops rising in the direction of motion, the rate steps
//! back once and probing starts again. Because the loss term is linear in x with
//! coefficient 11.35, u'(x) = 0.9 x^-0.1 - 11.35 L stays positive below the link
//! rate up to L ~ 6 % at 10 Mbit/s: random loss alone does not make Vivace slow down
//! (the paper's loss resilience); the RTT term (slope 900) does above the link rate.
//!
//! Followed: `PccVivaceSender::OnUtilityAvailable`, `CanMakeDecision`,
//! `SetRateChangeDirection`, `EnterProbing`, `EnterDecisionMade`, `ComputeRateChange`;
//! `PccSender::EnterProbing` (start-up's halving), `ComputeMonitorDuration`,
//! `OnCongestionEvent` (start-up's early exit on RTT inflation), `GetCongestionWindow`;
//! `PccUtilityManager::CalculateUtilityProportional`, `ComputeSimpleMetrics`,
//! `ComputeRttGradient`, `ComputeRttGradientError`, `DetermineToleranceGeneral`.
//! `cong_control` owns the pacing rate and cwnd, as BBR's module does.
//! The paper's text was not at hand for this port: the model above is its utility and
//! rate-control rules as the reference code implements them, every constant is the
//! code's (named beside it), and no section numbers are cited.
//!
//! Deviations:
//! - MIs are delimited by sequence numbers: an MI's send
//!   phase runs from snd_nxt at its start to snd_nxt when its duration has passed
//!   (checked on ACKs, the seam has no per-packet send hook), and its packets' fates
//!   are the ACKs (acked, SACKed, newly marked lost) that arrive while snd_una is in
//!   its range; SACKs of later MIs during a recovery count for the MI holding snd_una.
//!   PCC-Uspace tracks each packet by number.
//! - The RTT slope regresses each ACK's RTT sample on its send time (ACK time - RTT);
//!   the reference regresses on the packet number times the packet's transfer time at
//!   the MI's rate. The tolerance rule is the reference's general one (the slope counts
//!   only when the regression's relative error is below it; negative slopes count as
//!   0); its trending-gradient and deviation filters over the last 6 MIs are not built.
//! - Probing's order within each pair is fixed (up-down, then down-up), not random, so
//!   that runs are reproducible without a per-flow seed.
//! - cwnd is 2 x rate x srtt (at least 4 segments): the reference's
//!   `GetCongestionWindow` is rate x srtt, which the seam's ACK clock would make bind
//!   before the pacing rate does whenever a queue forms; the factor 2 is BBR's
//!   cwnd_gain, named here as CWND_GAIN.
//! - Before any RTT sample the initial rate is 10 segments per handshake RTT, or per
//!   QUIC's default initial RTT of 100 ms without one (the reference's
//!   `initial_rtt_us`), with the MSS in place of its fixed 1400 B.
//! - x counts payload (segments x MSS), not the packets' bytes on the wire.
//! - A useful MI in which nothing was sent (the application had no data) restarts the
//!   round; the reference never meets this case, as a sent packet opens its intervals
//!   (`PccSender::OnPacketSent`).

use std::collections::VecDeque;

use crate::ops::{CaEvent, CcView, CongestionOps, InfoField, InfoValue, RateSample};
use crate::registry::{AlgorithmSpec, Params};

/// The utility's exponent on the sending rate (pcc_utility_manager.cpp
/// `kSendingRateExponent` 0.9, the paper's t).
pub const RATE_EXPONENT: f64 = 0.9;
/// The latency term's coefficient (`kLatencyCoefficient` 900, the paper's b).
pub const LATENCY_COEFFICIENT: f64 = 900.0;
/// The loss term's coefficient (`kVivaceLossCoefficient` 11.35, the paper's c).
pub const LOSS_COEFFICIENT: f64 = 11.35;
/// The utility's rate unit: `actual_sending_rate_mbps` is bytes x 8 / us, i.e. 10^6
/// bit/s.
pub const UTILITY_MBPS: f64 = 1e6;
/// The rate controller's megabit, `kMegabit` = 1024 x 1024 bits (pcc_vivace_sender.cpp):
/// gradients are per such megabit per second and rate changes are in them.
pub const MEGABIT: f64 = 1024.0 * 1024.0;
/// Probing's rate step (`kProbingStepSize` 0.05).
pub const PROBING_STEP: f64 = 0.05;
/// MI pairs per probing round (pcc_sender.cpp `kNumIntervalGroupsInProbing` 2).
pub const PROBING_PAIRS: usize = 2;
/// Rate change per utility gradient, megabits per second per (utility per megabit per
/// second) (`kUtilityGradientToRateChangeFactor` 1, the paper's theta_0).
pub const GRADIENT_TO_RATE: f64 = 1.0;
/// The confidence amplifier's exponent (`kRateChangeAmplifyExponent` 1.2).
pub const AMPLIFY_EXPONENT: f64 = 1.2;
/// The dynamic change boundary's initial value and step, as proportions of the rate
/// (`kInitialMaxStepSize` 0.05, `kIncrementalStepSize` 0.05).
pub const CHANGE_BOUND_INITIAL: f64 = 0.05;
pub const CHANGE_BOUND_STEP: f64 = 0.05;
/// The smallest rate change and the smallest rate, bit/s (`kMinRateChange`,
/// `kMinSendingRate`: 500 kbit/s each).
pub const MIN_RATE_CHANGE_BPS: f64 = 500_000.0;
pub const MIN_RATE_BPS: f64 = 500_000.0;
/// An MI lasts at least this many smoothed RTTs (`ComputeMonitorDuration`: 1.5 rtt) ...
pub const MI_RTTS: f64 = 1.5;
/// ... and at least this many packets at its rate (`kMinimumPacketsPerInterval` 10).
pub const MI_MIN_PACKETS: f64 = 10.0;
/// Start-up leaves for probing once the smoothed RTT exceeds the MI's starting RTT by
/// this proportion (`FLAGS_max_rtt_fluctuation_tolerance_ratio_in_starting` 0.3).
pub const STARTING_RTT_TOLERANCE: f64 = 0.3;
/// QUIC's initial RTT before any sample, us (`kInitialRttMs` 100).
pub const INITIAL_RTT_US: u32 = 100_000;
/// Segments per RTT of the initial rate (the initial congestion window, 10).
pub const INITIAL_WINDOW: f64 = 10.0;
/// cwnd = CWND_GAIN x rate x srtt (see Deviations; BBR's cwnd_gain 2).
pub const CWND_GAIN: f64 = 2.0;
/// The smallest cwnd, segments (BBR's `bbr_cwnd_min_target` 4).
pub const MIN_CWND: u32 = 4;

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "vivace",
    // Its utility weighs both loss and delay; the registry has no rate-based family.
    family: crate::registry::Family::LossDelay,
    summary: "PCC Vivace: online gradient ascent on a rate/latency/loss utility over monitor intervals, paced",
    source: "Dong et al., NSDI 2018; PCCproject/PCC-Uspace pcc_vivace_sender.cpp, pcc_utility_manager.cpp",
    params: &[],
    build: |_: &Params| Box::new(Vivace::new()),
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Starting,
    Probing,
    DecisionMade,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    Increase,
    Decrease,
}

/// `UtilityInfo`: an MI's target rate (bit/s) and the utility it earned.
#[derive(Clone, Copy, Debug, PartialEq)]
struct UtilityInfo {
    rate: f64,
    utility: f64,
}

/// One monitor interval: its send phase and what came back for it.
#[derive(Clone, Debug)]
struct Mi {
    /// Target sending rate, bit/s.
    rate: f64,
    /// Counted by the rate controller (else sent at the central rate while waiting).
    useful: bool,
    start_us: u64,
    /// The send phase's deadline while sending; when it ended once it has.
    end_us: u64,
    seq_start: u64,
    /// snd_nxt when the send phase ended; None while sending.
    seq_end: Option<u64>,
    /// srtt when it started (start-up's inflation test).
    rtt_on_start_us: u32,
    acked: u64,
    lost: u64,
    /// (send time us, RTT us) per ACK with an RTT sample.
    rtts: Vec<(f64, f64)>,
}

/// What an MI measured (`interval_stats_`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MiStats {
    /// Sending rate, 10^6 bit/s (`actual_sending_rate_mbps`).
    pub rate_mbps: f64,
    /// RTT slope, us per us, after the tolerance rule.
    pub rtt_gradient: f64,
    /// Lost over sent packets.
    pub loss_rate: f64,
}

#[derive(Clone, Debug)]
pub struct Vivace {
    mode: Mode,
    /// `sending_rate_`, bit/s: the central rate.
    rate: f64,
    direction: Direction,
    rounds: u32,
    latest: UtilityInfo,
    /// `incremental_rate_change_step_allowance_`: k of the change boundary.
    allowance: u32,
    mis: VecDeque<Mi>,
    /// Utilities of this round's useful MIs, in order.
    results: Vec<UtilityInfo>,
    /// Useful MIs started this round.
    useful_started: usize,
    last_utility: f64,
}

impl Default for Vivace {
    fn default() -> Self {
        Self::new()
    }
}

/// The Vivace utility of a rate (10^6 bit/s), RTT slope and loss rate
/// (`CalculateUtilityProportional` with Vivace's coefficients).
pub fn utility(s: &MiStats) -> f64 {
    s.rate_mbps.powf(RATE_EXPONENT)
        - LATENCY_COEFFICIENT * s.rtt_gradient * s.rate_mbps
        - LOSS_COEFFICIENT * s.loss_rate * s.rate_mbps
}

/// The RTT slope of (send time, RTT) samples by least squares, kept only when the
/// fit's relative RMS error is below its magnitude and the slope is positive
/// (`ComputeRttGradient`, `ComputeRttGradientError`, `DetermineToleranceGeneral`).
pub fn rtt_gradient(samples: &[(f64, f64)]) -> f64 {
    if samples.len() < 2 {
        return 0.0;
    }
    let n = samples.len() as f64;
    let xm = samples.iter().map(|s| s.0).sum::<f64>() / n;
    let ym = samples.iter().map(|s| s.1).sum::<f64>() / n;
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for &(x, y) in samples {
        sxx += (x - xm) * (x - xm);
        sxy += (x - xm) * (y - ym);
    }
    if sxx == 0.0 {
        return 0.0;
    }
    let g = sxy / sxx;
    let cut = ym - g * xm;
    let sq: f64 = samples
        .iter()
        .map(|&(x, y)| (y - (g * x + cut)).powi(2))
        .sum();
    let error = (sq / n).sqrt() / ym;
    if error < g.abs() && g > 0.0 {
        g
    } else {
        0.0
    }
}

/// The better-rate direction of an MI pair: the higher rate earned more
/// (`increase_i` in `CanMakeDecision`).
fn pair_says_increase(a: &UtilityInfo, b: &UtilityInfo) -> bool {
    if a.utility > b.utility {
        a.rate > b.rate
    } else {
        a.rate < b.rate
    }
}

impl Vivace {
    pub fn new() -> Self {
        Vivace {
            mode: Mode::Starting,
            rate: 0.0,
            direction: Direction::Increase,
            rounds: 1,
            latest: UtilityInfo {
                rate: 0.0,
                utility: 0.0,
            },
            allowance: 0,
            mis: VecDeque::new(),
            results: Vec::new(),
            useful_started: 0,
            last_utility: 0.0,
        }
    }

    /// Useful MIs a round of the current mode needs (`CreateUsefulInterval`).
    fn useful_needed(&self) -> usize {
        match self.mode {
            Mode::Probing => 2 * PROBING_PAIRS,
            _ => 1,
        }
    }

    /// The rate of the `k`-th useful MI of a round: the central rate, or in probing
    /// r(1 + eps), r(1 - eps), r(1 - eps), r(1 + eps).
    fn useful_rate(&self, k: usize) -> f64 {
        if self.mode != Mode::Probing {
            return self.rate;
        }
        let up = k == 0 || k == 3;
        if up {
            self.rate * (1.0 + PROBING_STEP)
        } else {
            self.rate * (1.0 - PROBING_STEP)
        }
    }

    /// `ComputeMonitorDuration`: max(1.5 srtt, 10 packets at the rate), us.
    fn mi_duration_us(&self, srtt_us: u32, mss: u32) -> u64 {
        let by_rtt = MI_RTTS * f64::from(srtt_us);
        let by_packets = MI_MIN_PACKETS * f64::from(mss) * 8.0 * 1e6 / self.rate;
        by_rtt.max(by_packets).ceil() as u64
    }

    /// Ends the current send phase if its time is up and starts the next MI.
    fn maybe_start_mi(&mut self, tp: &CcView) {
        if let Some(cur) = self.mis.back() {
            if cur.seq_end.is_none() && tp.now_us < cur.end_us {
                return;
            }
        }
        if let Some(cur) = self.mis.back_mut() {
            if cur.seq_end.is_none() {
                // The send phase ends now (the first ACK past its deadline): its
                // length is from here (`last_packet_sent_time`), not the deadline.
                cur.seq_end = Some(tp.snd_nxt);
                cur.end_us = tp.now_us;
            }
        }
        let useful = self.useful_started < self.useful_needed();
        let rate = if useful {
            self.useful_rate(self.useful_started)
        } else {
            self.rate
        };
        if useful {
            self.useful_started += 1;
        }
        let mut mi = Mi {
            rate,
            useful,
            start_us: tp.now_us,
            end_us: 0,
            seq_start: tp.snd_nxt,
            seq_end: None,
            rtt_on_start_us: tp.srtt_us,
            acked: 0,
            lost: 0,
            rtts: Vec::new(),
        };
        let save = self.rate;
        self.rate = rate;
        mi.end_us = tp.now_us + self.mi_duration_us(tp.srtt_us, tp.mss_cache);
        self.rate = save;
        self.mis.push_back(mi);
    }

    /// What MI `mi` measured, with packets of `mss` bytes.
    fn stats(mi: &Mi, mss: u32) -> Option<MiStats> {
        let sent = mi.seq_end?.saturating_sub(mi.seq_start);
        if sent == 0 {
            return None;
        }
        // ComputeSimpleMetrics: the send phase plus one packet's transfer time.
        let dur_us = mi.end_us.saturating_sub(mi.start_us) as f64
            + f64::from(mss) * 8.0 * 1e6 / mi.rate.max(1.0);
        Some(MiStats {
            rate_mbps: (sent * u64::from(mss)) as f64 * 8.0 / dur_us * (1e6 / UTILITY_MBPS),
            rtt_gradient: rtt_gradient(&mi.rtts),
            loss_rate: (mi.lost as f64 / sent as f64).min(1.0),
        })
    }

    /// An ACK's fates and RTT go to the MI holding snd_una; MIs snd_una has passed are
    /// finished, and a finished useful MI's utility goes to the rate controller.
    fn account(&mut self, tp: &CcView, rs: &RateSample) {
        if let Some(front) = self.mis.front_mut() {
            front.acked += u64::from(rs.acked_sacked);
            front.lost += u64::from(rs.losses);
            if rs.rtt_us > 0 {
                let rtt = rs.rtt_us as f64;
                front.rtts.push((tp.now_us as f64 - rtt, rtt));
            }
        }
        while let Some(front) = self.mis.front() {
            match front.seq_end {
                Some(end) if tp.snd_una >= end => {}
                _ => break,
            }
            let mi = self.mis.pop_front().unwrap();
            if !mi.useful {
                continue;
            }
            let Some(s) = Self::stats(&mi, tp.mss_cache) else {
                // Nothing sent in it (application-limited): no utility to compare, so
                // the round starts over with fresh useful MIs.
                self.new_round();
                continue;
            };
            let u = utility(&s);
            self.last_utility = u;
            self.results.push(UtilityInfo {
                rate: mi.rate,
                utility: u,
            });
            if self.results.len() == self.useful_needed() {
                let infos = std::mem::take(&mut self.results);
                self.on_utility_available(&infos);
            }
        }
    }

    /// A new round: the useful MIs still in the queue no longer count.
    fn new_round(&mut self) {
        for mi in &mut self.mis {
            mi.useful = false;
        }
        self.results.clear();
        self.useful_started = 0;
    }

    /// `PccVivaceSender::OnUtilityAvailable`.
    fn on_utility_available(&mut self, u: &[UtilityInfo]) {
        match self.mode {
            Mode::Starting => {
                if u[0].utility > self.latest.utility {
                    self.rate *= 2.0;
                    self.latest = u[0];
                    self.rounds += 1;
                } else {
                    self.enter_probing_from_start();
                }
            }
            Mode::Probing => {
                if self.can_make_decision(u) {
                    self.set_rate_change_direction(u);
                    self.enter_decision_made(u);
                } else {
                    self.mode = Mode::Probing;
                }
                if self.rate <= MIN_RATE_BPS {
                    self.rate = MIN_RATE_BPS;
                    self.allowance = 0;
                    self.rounds = 1;
                    self.mode = Mode::Starting;
                }
            }
            Mode::DecisionMade => {
                let (x, l) = (u[0], self.latest);
                let up = x.utility > l.utility;
                let down = x.utility < l.utility;
                let keep = match self.direction {
                    Direction::Increase => (up && x.rate > l.rate) || (down && x.rate < l.rate),
                    Direction::Decrease => (up && x.rate < l.rate) || (down && x.rate > l.rate),
                };
                if keep {
                    self.enter_decision_made(u);
                    self.latest = x;
                } else {
                    self.enter_probing_from_decision(u);
                }
            }
        }
        self.new_round();
    }

    /// `PccSender::EnterProbing` from start-up: the rate whose MI lost utility was
    /// twice the last good one; probe around half of it.
    fn enter_probing_from_start(&mut self) {
        self.rate *= 0.5;
        self.mode = Mode::Probing;
    }

    /// `CanMakeDecision`: more than half of the pairs say increase, or all decrease.
    fn can_make_decision(&self, u: &[UtilityInfo]) -> bool {
        let inc = (0..PROBING_PAIRS)
            .filter(|&i| pair_says_increase(&u[2 * i], &u[2 * i + 1]))
            .count();
        inc > PROBING_PAIRS / 2 || inc == 0
    }

    /// `SetRateChangeDirection`, remembering the better MI of an agreeing pair.
    fn set_rate_change_direction(&mut self, u: &[UtilityInfo]) {
        let inc = (0..PROBING_PAIRS)
            .filter(|&i| pair_says_increase(&u[2 * i], &u[2 * i + 1]))
            .count();
        self.direction = if inc > PROBING_PAIRS - inc {
            Direction::Increase
        } else {
            Direction::Decrease
        };
        for i in 0..PROBING_PAIRS {
            let (a, b) = (u[2 * i], u[2 * i + 1]);
            if pair_says_increase(&a, &b) == (self.direction == Direction::Increase) {
                self.latest = if a.utility > b.utility { a } else { b };
            }
        }
    }

    /// `EnterDecisionMade`.
    fn enter_decision_made(&mut self, u: &[UtilityInfo]) {
        if self.mode == Mode::Probing {
            self.rate *= match self.direction {
                Direction::Increase => 1.0 + PROBING_STEP,
                Direction::Decrease => 1.0 - PROBING_STEP,
            };
        }
        self.rounds = if self.mode == Mode::Probing {
            1
        } else {
            self.rounds + 1
        };
        let change = self.compute_rate_change(u);
        match self.direction {
            Direction::Increase => self.rate += change,
            Direction::Decrease => self.rate -= change,
        }
        if self.rate < MIN_RATE_BPS {
            self.rate = MIN_RATE_BPS;
            self.mode = Mode::Probing;
            self.rounds = 1;
            self.allowance = 0;
        } else {
            self.mode = Mode::DecisionMade;
        }
    }

    /// `PccVivaceSender::EnterProbing`: the last step did not pay; step back once.
    fn enter_probing_from_decision(&mut self, u: &[UtilityInfo]) {
        self.rounds = 1;
        let change = self.compute_rate_change(u);
        match self.direction {
            Direction::Increase => self.rate -= change,
            Direction::Decrease => self.rate += change,
        }
        if self.rate < MIN_RATE_BPS {
            self.rate = MIN_RATE_BPS;
            self.allowance = 0;
        }
        self.mode = Mode::Probing;
    }

    /// `ComputeRateChange` (bit/s): gradient x theta_0, amplified by the rounds in one
    /// direction, bounded by the dynamic change boundary, at least 500 kbit/s.
    fn compute_rate_change(&mut self, u: &[UtilityInfo]) -> f64 {
        let (d_rate, d_util) = if self.mode == Mode::Probing {
            let d_rate = (u[0].rate - u[1].rate).abs();
            let mut d_util = 0.0;
            for i in 0..PROBING_PAIRS {
                let (a, b) = (u[2 * i], u[2 * i + 1]);
                if pair_says_increase(&a, &b) != (self.direction == Direction::Increase) {
                    continue;
                }
                d_util += (a.utility - b.utility).abs();
            }
            (d_rate, d_util / PROBING_PAIRS as f64)
        } else {
            (
                (u[0].rate - self.latest.rate).abs(),
                (u[0].utility - self.latest.utility).abs(),
            )
        };
        // utility per megabit/s, then megabits/s of change
        let gradient = if d_rate > 0.0 {
            MEGABIT * d_util / d_rate
        } else {
            0.0
        };
        let mut change = gradient * MEGABIT * GRADIENT_TO_RATE;
        if self.mode == Mode::DecisionMade {
            // pow(static_cast<float>((rounds_ + 1) / 2), 1.2): the integer (rounds + 1) / 2
            // is rounds / 2 rounded up.
            change *= f64::from(self.rounds.div_ceil(2)).powf(AMPLIFY_EXPONENT);
        } else {
            self.allowance = 0;
        }
        let bound =
            self.rate * (CHANGE_BOUND_INITIAL + CHANGE_BOUND_STEP * f64::from(self.allowance));
        if change > bound {
            change = bound;
            self.allowance += 1;
        } else if self.allowance > 0 {
            self.allowance -= 1;
        }
        change.max(MIN_RATE_CHANGE_BPS)
    }

    /// The rate the current MI sends at, bit/s.
    fn sending_rate(&self) -> f64 {
        self.mis.back().map_or(self.rate, |m| m.rate)
    }

    /// Pacing at the MI's rate; cwnd CWND_GAIN x rate x srtt.
    fn write(&self, tp: &mut CcView) {
        let rate_bytes = self.sending_rate() / 8.0;
        tp.pacing_rate = (rate_bytes.round() as u64).clamp(1, tp.max_pacing_rate.max(1));
        let rtt_us = if tp.srtt_us > 0 {
            tp.srtt_us
        } else {
            INITIAL_RTT_US
        };
        let cwnd = CWND_GAIN * rate_bytes * f64::from(rtt_us) / 1e6 / f64::from(tp.mss_cache);
        tp.snd_cwnd = (cwnd.ceil() as u32).clamp(MIN_CWND, tp.snd_cwnd_clamp.max(MIN_CWND));
    }
}

impl CongestionOps for Vivace {
    fn name(&self) -> &'static str {
        "vivace"
    }

    fn init(&mut self, tp: &mut CcView) {
        *self = Vivace::new();
        let rtt_us = if tp.srtt_us > 0 {
            tp.srtt_us
        } else {
            INITIAL_RTT_US
        };
        self.rate = INITIAL_WINDOW * f64::from(tp.mss_cache) * 8.0 * 1e6 / f64::from(rtt_us);
        tp.pacing_needed = true; // SK_PACING_NEEDED, as BBR
        self.write(tp);
    }

    /// Not used to set cwnd (Vivace owns it); the kernel's value is kept.
    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        tp.snd_ssthresh
    }

    fn undo_cwnd(&mut self, tp: &CcView) -> u32 {
        tp.snd_cwnd
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn cong_control(&mut self, tp: &mut CcView, rs: &RateSample) {
        // No MI before the first RTT sample (pcc_sender.cpp: a latest RTT is needed).
        if tp.srtt_us > 0 {
            self.account(tp, rs);
            // OnCongestionEvent: start-up leaves at once on 30 % RTT inflation.
            if self.mode == Mode::Starting {
                let inflated = self.mis.back().is_some_and(|m| {
                    m.rtt_on_start_us > 0
                        && f64::from(tp.srtt_us)
                            > (1.0 + STARTING_RTT_TOLERANCE) * f64::from(m.rtt_on_start_us)
                });
                if inflated {
                    self.enter_probing_from_start();
                    self.new_round();
                }
            }
            self.maybe_start_mi(tp);
        }
        self.write(tp);
    }

    /// An RTO: the reference has none (QUIC); the rate is kept, cwnd rewritten.
    fn cwnd_event(&mut self, tp: &mut CcView, ev: CaEvent) {
        if ev == CaEvent::Loss {
            self.write(tp);
        }
    }

    fn info(&self) -> Vec<InfoField> {
        vec![
            ("rate_mbps", InfoValue::Num(self.rate / 1e6)),
            ("utility", InfoValue::Num(self.last_utility)),
            (
                "mode",
                InfoValue::Label(match self.mode {
                    Mode::Starting => "starting",
                    Mode::Probing => "probing",
                    Mode::DecisionMade => "moving",
                }),
            ),
            ("rounds", InfoValue::Num(f64::from(self.rounds))),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(rate: f64, utility: f64) -> UtilityInfo {
        UtilityInfo { rate, utility }
    }

    #[test]
    fn vivace_utility_is_the_papers_formula() {
        // 10 Mbit/s, no RTT slope, 1 % loss: 10^0.9 - 11.35 * 0.01 * 10 = 7.943282 -
        // 1.135 = 6.808282.
        let u = utility(&MiStats {
            rate_mbps: 10.0,
            rtt_gradient: 0.0,
            loss_rate: 0.01,
        });
        assert!((u - 6.808_282).abs() < 1e-6, "{u}");
        // A queue growing at 1 % of the time (dRTT/dT = 0.01): 900 * 0.01 * 10 = 90 off.
        let u = utility(&MiStats {
            rate_mbps: 10.0,
            rtt_gradient: 0.01,
            loss_rate: 0.0,
        });
        assert!((u - (7.943_282 - 90.0)).abs() < 1e-6, "{u}");
    }

    #[test]
    fn vivace_rtt_gradient_is_a_least_squares_slope_kept_above_its_error() {
        // RTT rising 1 ms per 10 ms of send time: slope 0.1, a perfect fit.
        let rising = [(0.0, 40_000.0), (10_000.0, 41_000.0), (20_000.0, 42_000.0)];
        assert!((rtt_gradient(&rising) - 0.1).abs() < 1e-12);
        // Falling: counts as 0.
        let falling = [(0.0, 42_000.0), (10_000.0, 41_000.0)];
        assert_eq!(rtt_gradient(&falling), 0.0);
        // Zig-zag 40/41/40/41 ms at 0/10/20/30 ms: slope 1e7 / 5e8 = 0.02; residuals
        // -200, 600, -600, 200 us: RMS sqrt(2e5) = 447.2 us, / mean 40 500 us = 0.0110
        // < 0.02: kept.
        let zig = [
            (0.0, 40_000.0),
            (10_000.0, 41_000.0),
            (20_000.0, 40_000.0),
            (30_000.0, 41_000.0),
        ];
        assert!((rtt_gradient(&zig) - 0.02).abs() < 1e-12);
        // 40/42/40 ms: slope 0, so never above its error.
        let flat = [(0.0, 40_000.0), (10_000.0, 42_000.0), (20_000.0, 40_000.0)];
        assert_eq!(rtt_gradient(&flat), 0.0);
        // One sample: no slope.
        assert_eq!(rtt_gradient(&rising[..1]), 0.0);
    }

    #[test]
    fn vivace_starting_doubles_while_utility_grows_then_halves() {
        let mut v = Vivace::new();
        v.rate = 4e6;
        v.on_utility_available(&[info(4e6, 3.0)]);
        assert_eq!((v.mode, v.rate), (Mode::Starting, 8e6));
        v.on_utility_available(&[info(8e6, 5.0)]);
        assert_eq!(v.rate, 16e6);
        // 16 Mbit/s earned less than 8: probe around half of it.
        v.on_utility_available(&[info(16e6, 4.0)]);
        assert_eq!((v.mode, v.rate), (Mode::Probing, 8e6));
    }

    #[test]
    fn vivace_probing_decides_only_when_both_pairs_agree() {
        let mut v = Vivace::new();
        v.mode = Mode::Probing;
        v.rate = 10e6;
        // Pair 1 says up (10.5 beat 9.5), pair 2 says down (9.5 beat 10.5): no decision.
        let split = [
            info(10.5e6, 8.0),
            info(9.5e6, 7.0),
            info(9.5e6, 8.0),
            info(10.5e6, 7.0),
        ];
        v.on_utility_available(&split);
        assert_eq!((v.mode, v.rate), (Mode::Probing, 10e6));
    }

    #[test]
    fn vivace_probing_steps_by_the_gradient_within_the_change_bound() {
        let mut v = Vivace::new();
        v.mode = Mode::Probing;
        v.rate = 10e6;
        // Both pairs: the higher rate earned 0.5 more. Rates differ by 1e6 bit/s:
        // gradient 2^20 * 0.5 / 1e6 = 0.524288 per megabit/s, change 0.524288 * 2^20 =
        // 549 756 bit/s. The rate first moves to the better probe, 10.5e6 (as
        // EnterDecisionMade does before ComputeRateChange), so the bound is 0.05 *
        // 10.5e6 = 525 000: bounded, k -> 1. Rate 10.5e6 + 525 000 = 11.025e6.
        let up = [
            info(10.5e6, 8.5),
            info(9.5e6, 8.0),
            info(9.5e6, 8.0),
            info(10.5e6, 8.5),
        ];
        v.on_utility_available(&up);
        assert_eq!(v.mode, Mode::DecisionMade);
        assert_eq!(v.direction, Direction::Increase);
        assert!((v.rate - 11.025e6).abs() < 1e-6, "{}", v.rate);
        assert_eq!((v.allowance, v.rounds), (1, 1));
        assert_eq!(v.latest, info(10.5e6, 8.5));
    }

    #[test]
    fn vivace_moving_amplifies_with_rounds_and_steps_back_when_utility_falls() {
        let mut v = Vivace::new();
        v.mode = Mode::DecisionMade;
        v.direction = Direction::Increase;
        v.rate = 20e6;
        v.rounds = 2;
        v.allowance = 0;
        v.latest = info(19e6, 10.0);
        // 20 Mbit/s earned 0.1 more than 19: gradient 2^20 * 0.1 / 1e6 = 0.1048576,
        // change 0.1048576 * 2^20 = 109 951 bit/s; rounds 3: x ((3 + 1) / 2)^1.2 =
        // 2^1.2 = 2.297397: 252 602 bit/s, under the bound (1e6) but under the
        // minimum change: 500 000. Rate 20.5e6.
        v.on_utility_available(&[info(20e6, 10.1)]);
        assert_eq!((v.mode, v.rounds), (Mode::DecisionMade, 3));
        assert!((v.rate - 20.5e6).abs() < 1e-6, "{}", v.rate);
        // Now 20.5 earned less than 20 (by 1): gradient 2^20 / 0.5e6 = 2.097152, change
        // 2.097152 * 2^20 = 2.199e6, rounds reset to 1 (x 1), bound 0.05 * 20.5e6 =
        // 1.025e6: step back by 1.025e6 to 19.475e6 and probe.
        v.on_utility_available(&[info(20.5e6, 9.1)]);
        assert_eq!(v.mode, Mode::Probing);
        assert!((v.rate - 19.475e6).abs() < 1e-6, "{}", v.rate);
    }

    #[test]
    fn vivace_never_goes_below_its_minimum_rate() {
        let mut v = Vivace::new();
        v.mode = Mode::Probing;
        v.rate = 0.6e6;
        let down = [
            info(0.63e6, 1.0),
            info(0.57e6, 2.0),
            info(0.57e6, 2.0),
            info(0.63e6, 1.0),
        ];
        // Decrease: 0.57e6 - max(change, 0.5e6) < 0.5e6: clamped, back to start-up.
        v.on_utility_available(&down);
        assert_eq!((v.mode, v.rate), (Mode::Starting, MIN_RATE_BPS));
    }

    #[test]
    fn vivace_paces_at_its_rate_with_twice_the_bdp_of_cwnd() {
        let mut tp = CcView::new(1000, 0);
        tp.srtt_us = 40_000;
        let mut v = Vivace::new();
        v.init(&mut tp);
        // 10 segments of 1000 B per 40 ms: 2 Mbit/s = 250 000 B/s; cwnd 2 * 250 000 *
        // 0.04 / 1000 = 20.
        assert!(tp.pacing_needed);
        assert_eq!(tp.pacing_rate, 250_000);
        assert_eq!(tp.snd_cwnd, 20);
    }
}
