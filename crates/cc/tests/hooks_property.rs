//! Property test over every registered algorithm (`registry::ALGORITHMS`, so algorithms
//! added later are covered without touching this file): a small sender model drives the
//! hooks with random sequences of ACKs, duplicate ACKs, losses, RTOs, returns to Open,
//! undos and idle periods, in the order Linux calls them (tcp_input.c, tcp_output.c,
//! tcp_timer.c), plus ECN: ACKs echoing CE (ECE: a CWR reduction as `tcp_enter_cwr`, then
//! `in_ack_event` with `CA_ACK_ECE`, `delivered_ce` and `is_ece` in the rate sample) and
//! the receiver-side `EcnIsCe` / `EcnNoCe` events; ECN is negotiated when the algorithm
//! needs it (`needs_ecn`) or the case says so. It checks after every step:
//! - no panic (arithmetic overflow included: tests build with debug assertions);
//! - cwnd >= 1, and >= the algorithm's documented floor (`CWND_FLOORS`) right after its
//!   own growth hook (`cong_avoid` / `cong_control`) ran;
//! - every value `ssthresh()` returns is >= 2;
//! - pacing: the rate stays <= `max_pacing_rate` (it is a u64 in bytes per second, so
//!   "finite" holds by type), and is nonzero whenever the algorithm asked for pacing
//!   (a zero rate would stall a paced sender);
//! - `info()` values are never infinite (NaN is allowed as "not known yet").
//!
//! The sender model is deliberately simple (one MSS per segment, no scoreboard): it only
//! has to keep the socket fields consistent (packets_out, sacked_out, lost_out,
//! snd_una/snd_nxt, delivered, times increasing) so that the samples are plausible.

use proptest::prelude::*;
use tcplab_cc::helpers::{tcp_current_ssthresh, tcp_packets_in_flight};
use tcplab_cc::ops::{ack_flags, TCP_INFINITE_SSTHRESH};
use tcplab_cc::registry::{AlgorithmSpec, ALGORITHMS};
use tcplab_cc::{
    AckSample, CaEvent, CaState, CcView, CongestionOps, InfoValue, LostSkb, RateSample,
};

/// Documented cwnd floors above 1, applied after the algorithm's own growth hook. An
/// algorithm with a floor lists it here with the place its module doc states it.
const CWND_FLOORS: &[(&str, u32)] = &[];

/// Largest flight the model keeps out, so a runaway cwnd does not make a case slow.
const MAX_FLIGHT: u32 = 4000;

#[derive(Clone, Debug)]
enum Op {
    /// A cumulative ACK of `segs` segments after `gap_us`, with an RTT sample (or none)
    /// of the base RTT plus `queue_pct` percent of queueing delay.
    Ack {
        segs: u32,
        gap_us: u64,
        queue_pct: Option<u32>,
        app_limited: bool,
        delayed: bool,
    },
    /// A duplicate ACK carrying one SACKed segment.
    DupAck { gap_us: u64 },
    /// Fast retransmit: `lost` segments marked lost, Recovery entered.
    Loss { lost: u32 },
    /// Retransmission timeout.
    Rto { gap_us: u64 },
    /// Recovery / Loss completed: back to Open.
    Open,
    /// The reduction proved spurious: undo.
    Undo,
    /// Everything acked, then an idle period before the next send.
    Idle { gap_us: u64 },
    /// A cumulative ACK of `segs` segments echoing CE (ECE).
    EceAck { segs: u32, gap_us: u64 },
    /// A data segment reached this host's receiving side with (or without) CE.
    RxEcn { ce: bool, delayed_ack_pending: bool },
}

/// One step; `ack_weight` against a total weight of 7 for the other kinds sets how
/// eventful a case is (calm cases let windows grow large enough for HyStart, the
/// TCP-friendly region and Illinois's adaptive alpha/beta, which need cwnd >= 15-16).
fn op(ack_weight: u32) -> impl Strategy<Value = Op> {
    prop_oneof![
        ack_weight => (1u32..=4, 0u64..=20_000, prop::option::weighted(0.9, 0u32..=300), prop::bool::weighted(0.1), any::<bool>())
            .prop_map(|(segs, gap_us, queue_pct, app_limited, delayed)| Op::Ack { segs, gap_us, queue_pct, app_limited, delayed }),
        2 => (0u64..=5_000).prop_map(|gap_us| Op::DupAck { gap_us }),
        1 => (1u32..=5).prop_map(|lost| Op::Loss { lost }),
        1 => (200_000u64..=3_000_000).prop_map(|gap_us| Op::Rto { gap_us }),
        1 => Just(Op::Open),
        1 => Just(Op::Undo),
        1 => (0u64..=5_000_000).prop_map(|gap_us| Op::Idle { gap_us }),
        2 => (1u32..=4, 0u64..=20_000).prop_map(|(segs, gap_us)| Op::EceAck { segs, gap_us }),
        1 => (any::<bool>(), any::<bool>()).prop_map(|(ce, delayed_ack_pending)| Op::RxEcn { ce, delayed_ack_pending }),
    ]
}

/// One flow: the socket view, its algorithm and the sender state the view summarises.
struct Flow {
    name: &'static str,
    tp: CcView,
    cc: Box<dyn CongestionOps>,
    /// Losses marked since the last ACK, reported in the next rate sample.
    pending_losses: u32,
    app_limited: bool,
    /// Propagation RTT of this case (us); samples add queueing delay on top.
    base_rtt_us: u32,
}

impl Flow {
    fn new(spec: &AlgorithmSpec, base_rtt_us: u32, ecn: bool) -> Flow {
        let cc = (spec.build)(&spec.default_params());
        let mut tp = CcView::new(1448, 1_000_000);
        tp.ecn_ok = ecn || cc.needs_ecn();
        let mut flow = Flow {
            name: spec.name,
            tp,
            cc,
            pending_losses: 0,
            app_limited: false,
            base_rtt_us,
        };
        flow.cc.init(&mut flow.tp);
        flow.check("init");
        flow.send();
        flow
    }

    fn floor(&self) -> u32 {
        CWND_FLOORS
            .iter()
            .find(|(n, _)| *n == self.name)
            .map_or(1, |(_, f)| *f)
    }

    fn check(&self, at: &str) {
        let tp = &self.tp;
        assert!(
            tp.snd_cwnd >= 1,
            "{}: cwnd {} < 1 after {at}",
            self.name,
            tp.snd_cwnd
        );
        assert!(
            tp.pacing_rate <= tp.max_pacing_rate,
            "{}: pacing rate above max after {at}",
            self.name
        );
        if tp.pacing_needed {
            assert!(
                tp.pacing_rate > 0,
                "{}: pacing needed but rate 0 after {at}",
                self.name
            );
        }
        for (key, value) in self.cc.info() {
            if let InfoValue::Num(x) = value {
                assert!(
                    !x.is_infinite(),
                    "{}: info {key} = {x} after {at}",
                    self.name
                );
            }
        }
    }

    fn check_floor(&self, at: &str) {
        let floor = self.floor();
        assert!(
            self.tp.snd_cwnd >= floor,
            "{}: cwnd {} below floor {floor} after {at}",
            self.name,
            self.tp.snd_cwnd
        );
    }

    fn call_ssthresh(&mut self) {
        let ss = self.cc.ssthresh(&self.tp);
        assert!(ss >= 2, "{}: ssthresh() returned {ss}", self.name);
        self.tp.snd_ssthresh = ss;
    }

    fn inflight(&self) -> u32 {
        tcp_packets_in_flight(&self.tp)
    }

    /// Fill the window (tcp_write_xmit), announcing TxStart when leaving idle
    /// (tcp_event_data_sent) and keeping lsndtime.
    fn send(&mut self) {
        let limit = if self.app_limited {
            (self.tp.snd_cwnd / 2).max(1)
        } else {
            self.tp.snd_cwnd
        };
        let limit = limit.min(MAX_FLIGHT);
        let mut sent = false;
        while self.inflight() < limit {
            if self.inflight() == 0 {
                self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
                self.check("cwnd_event(TxStart)");
            }
            self.tp.snd_nxt += 1;
            self.tp.packets_out += 1;
            sent = true;
        }
        if sent {
            self.tp.lsndtime_us = self.tp.now_us;
        }
        self.tp.is_cwnd_limited = self.inflight() >= self.tp.snd_cwnd;
        self.tp.max_packets_out = self.tp.max_packets_out.max(self.tp.packets_out);
    }

    fn advance(&mut self, gap_us: u64) {
        self.tp.now_us += gap_us;
    }

    /// tcp_ack: pkts_acked (from tcp_clean_rtx_queue), in_ack_event, then cong_control or
    /// the sender's own path (cong_avoid outside CWR/Recovery, reduction inside).
    fn ack(
        &mut self,
        newly_acked: u32,
        sacked: u32,
        rtt_us: Option<u32>,
        app_limited: bool,
        delayed: bool,
    ) {
        self.ack_ecn(newly_acked, sacked, rtt_us, app_limited, delayed, false);
    }

    /// `ece`: the ACK echoes CE on an ECN connection (FLAG_ECE).
    fn ack_ecn(
        &mut self,
        newly_acked: u32,
        sacked: u32,
        rtt_us: Option<u32>,
        app_limited: bool,
        delayed: bool,
        ece: bool,
    ) {
        let ece = ece && self.tp.ecn_ok;
        let prior_in_flight = self.inflight();
        let prior_delivered = self.tp.delivered;
        let prior_delivered_ce = self.tp.delivered_ce;
        let tp = &mut self.tp;
        let acked = newly_acked.min(tp.packets_out);
        tp.packets_out -= acked;
        tp.snd_una += acked as u64;
        let sacked = sacked.min(tp.packets_out.saturating_sub(tp.sacked_out + tp.lost_out));
        tp.sacked_out += sacked;
        tp.sacked_out = tp.sacked_out.min(tp.packets_out);
        tp.lost_out = tp.lost_out.min(tp.packets_out - tp.sacked_out);
        let delivered = acked + sacked;
        tp.delivered += delivered as u64;
        if ece {
            tp.delivered_ce += delivered as u64; // tcp_count_delivered
        }
        if delivered > 0 {
            tp.delivered_mstamp_us = tp.now_us;
        }
        if let Some(rtt) = rtt_us {
            tp.srtt_us = if tp.srtt_us == 0 {
                rtt
            } else {
                (7 * (tp.srtt_us as u64) / 8 + rtt as u64 / 8) as u32
            };
            tp.min_rtt_us = tp.min_rtt_us.min(rtt);
        }
        self.app_limited = app_limited;
        tp.app_limited = if app_limited {
            (tp.delivered + prior_in_flight as u64).max(1)
        } else {
            0
        };

        let rtt = rtt_us.map_or(-1, |r| r as i64);
        let sample = AckSample {
            pkts_acked: acked,
            rtt_us: rtt,
            in_flight: prior_in_flight,
            prior_in_flight,
        };
        self.cc.pkts_acked(&mut self.tp, &sample);
        self.check("pkts_acked");
        let mut flags = if acked == 0 {
            ack_flags::CA_ACK_SLOWPATH
        } else {
            0
        };
        if ece {
            flags |= ack_flags::CA_ACK_ECE;
        }
        self.cc.in_ack_event(&mut self.tp, flags);
        self.check("in_ack_event");
        if ece && matches!(self.tp.ca_state, CaState::Open | CaState::Disorder) {
            // tcp_fastretrans_alert -> tcp_try_to_open -> tcp_enter_cwr.
            self.tp.prior_ssthresh = 0;
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            self.call_ssthresh();
            self.set_state(CaState::Cwr);
        }

        if self.cc.has_cong_control() {
            // A rate sample over roughly one flight: delivered prior_in_flight (at least
            // this ACK's) over one RTT; invalid without an RTT sample.
            let (rs_delivered, interval) = match rtt_us {
                Some(r) => (prior_in_flight.max(delivered) as i64, r as i64),
                None => (-1, -1),
            };
            let losses = std::mem::take(&mut self.pending_losses);
            let rs = RateSample {
                prior_mstamp_us: self.tp.now_us.saturating_sub(interval.max(0) as u64),
                prior_delivered: prior_delivered.saturating_sub(prior_in_flight as u64),
                delivered: rs_delivered,
                interval_us: interval,
                snd_interval_us: interval.max(0) as u32,
                rcv_interval_us: interval.max(0) as u32,
                rtt_us: rtt,
                losses,
                // The BBRv2/v3 fields: the flight this sample's packet left in, the
                // losses marked since, and the CE-echoed deliveries.
                prior_delivered_ce,
                delivered_ce: if rs_delivered >= 0 {
                    (self.tp.delivered_ce - prior_delivered_ce) as i64
                } else {
                    0
                },
                is_ece: ece,
                tx_in_flight: prior_in_flight.max(1),
                lost: losses as i64,
                acked_sacked: delivered,
                prior_in_flight,
                is_app_limited: app_limited,
                is_retrans: false,
                is_ack_delayed: delayed,
                ..RateSample::default()
            };
            self.cc.cong_control(&mut self.tp, &rs);
            self.check("cong_control");
            self.check_floor("cong_control");
        } else if matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery) {
            // Reduction (PRR ends at ssthresh): never above ssthresh while reducing.
            self.pending_losses = 0;
            let target = self.tp.snd_ssthresh.min(self.tp.snd_cwnd).max(1);
            self.tp.snd_cwnd = target;
        } else if delivered > 0 {
            self.pending_losses = 0;
            let ack = self.tp.snd_una;
            self.cc.cong_avoid(&mut self.tp, ack, delivered);
            self.check("cong_avoid");
            self.check_floor("cong_avoid");
        }
        self.send();
    }

    fn set_state(&mut self, new_state: CaState) {
        self.cc.set_state(&mut self.tp, new_state);
        self.tp.ca_state = new_state;
        self.check("set_state");
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Ack {
                segs,
                gap_us,
                queue_pct,
                app_limited,
                delayed,
            } => {
                self.advance(gap_us);
                let base = self.base_rtt_us as u64;
                let rtt_us = queue_pct.map(|q| (base + base * q as u64 / 100) as u32);
                self.ack(segs, 0, rtt_us, app_limited, delayed);
            }
            Op::EceAck { segs, gap_us } => {
                self.advance(gap_us);
                let rtt_us = Some(self.base_rtt_us + self.base_rtt_us / 2);
                self.ack_ecn(segs, 0, rtt_us, false, false, true);
            }
            Op::RxEcn {
                ce,
                delayed_ack_pending,
            } => {
                if !self.tp.ecn_ok {
                    return;
                }
                // tcp_ecn_check_ce on the receiving side of this socket.
                self.tp.rcv_nxt += 1;
                self.tp.ack_timer_pending = delayed_ack_pending;
                self.tp.ack_now = false;
                self.tp.send_ack = None;
                let ev = if ce {
                    CaEvent::EcnIsCe
                } else {
                    CaEvent::EcnNoCe
                };
                self.cc.cwnd_event(&mut self.tp, ev);
                self.check("cwnd_event(Ecn)");
                if let Some((ack, _)) = self.tp.send_ack {
                    assert!(
                        ack <= self.tp.rcv_nxt,
                        "{}: special ACK {ack} beyond rcv_nxt",
                        self.name
                    );
                }
            }
            Op::DupAck { gap_us } => {
                self.advance(gap_us);
                if self.tp.ca_state == CaState::Open && self.tp.packets_out > 1 {
                    self.set_state(CaState::Disorder);
                }
                self.ack(0, 1, None, false, false);
            }
            Op::Loss { lost } => {
                let state = self.tp.ca_state;
                if self.tp.packets_out == 0 || state == CaState::Loss {
                    return;
                }
                let room = self.tp.packets_out - self.tp.sacked_out - self.tp.lost_out;
                let lost = lost.min(room);
                self.tp.lost_out += lost;
                // tcp_mark_skb_lost, one segment at a time, each announced through
                // skb_marked_lost after tp.lost counted it (BBRv2/v3 kernels). The model
                // keeps no per-segment snapshot: each was sent with the current flight
                // out, before the losses of this event.
                let tx_lost = self.tp.lost;
                for _ in 0..lost {
                    self.tp.lost += 1;
                    let skb = LostSkb {
                        tx_in_flight: self.tp.packets_out,
                        tx_lost,
                        tx_is_app_limited: false,
                        tx_valid: true,
                        pcount: 1,
                    };
                    self.cc.skb_marked_lost(&self.tp, &skb);
                }
                self.pending_losses += lost;
                if state != CaState::Recovery {
                    // tcp_enter_recovery -> tcp_init_cwnd_reduction: prior values, then
                    // ssthresh(), then the state change.
                    self.tp.prior_ssthresh = tcp_current_ssthresh(&self.tp);
                    self.tp.prior_cwnd = self.tp.snd_cwnd;
                    self.call_ssthresh();
                    self.set_state(CaState::Recovery);
                    if !self.cc.has_cong_control() {
                        self.tp.snd_cwnd = self.tp.snd_cwnd.min(self.tp.snd_ssthresh).max(1);
                    }
                }
                self.check("loss");
            }
            Op::Rto { gap_us } => {
                self.advance(gap_us);
                // tcp_enter_loss: everything outstanding is lost.
                self.tp.lost_out = self.tp.packets_out - self.tp.sacked_out;
                self.pending_losses += self.tp.lost_out;
                if self.tp.ca_state != CaState::Loss {
                    self.tp.prior_ssthresh = tcp_current_ssthresh(&self.tp);
                    self.tp.prior_cwnd = self.tp.snd_cwnd;
                    self.call_ssthresh();
                    self.cc.cwnd_event(&mut self.tp, CaEvent::Loss);
                    self.check("cwnd_event(Loss)");
                }
                self.tp.snd_cwnd = self.inflight() + 1;
                self.tp.snd_cwnd_cnt = 0;
                self.set_state(CaState::Loss);
                self.send();
            }
            Op::Open => {
                let state = self.tp.ca_state;
                if state == CaState::Open {
                    return;
                }
                if matches!(state, CaState::Cwr | CaState::Recovery) {
                    // tcp_end_cwnd_reduction (not for cong_control algorithms).
                    if !self.cc.has_cong_control() && self.tp.snd_ssthresh < TCP_INFINITE_SSTHRESH {
                        self.tp.snd_cwnd = self.tp.snd_ssthresh.max(1);
                    }
                    self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
                    self.check("cwnd_event(CompleteCwr)");
                }
                self.tp.lost_out = 0;
                self.tp.sacked_out = 0;
                self.set_state(CaState::Open);
                self.send();
            }
            Op::Undo => {
                if !matches!(self.tp.ca_state, CaState::Recovery | CaState::Loss)
                    || self.tp.prior_ssthresh == 0
                {
                    return;
                }
                // tcp_undo_cwnd_reduction, then back to Open.
                self.tp.snd_cwnd = self.cc.undo_cwnd(&self.tp);
                self.check("undo_cwnd");
                self.tp.snd_ssthresh = self.tp.snd_ssthresh.max(self.tp.prior_ssthresh);
                self.tp.lost_out = 0;
                self.tp.sacked_out = 0;
                self.set_state(CaState::Open);
                self.send();
            }
            Op::Idle { gap_us } => {
                let all = self.tp.packets_out;
                self.ack(all, 0, Some(self.base_rtt_us), true, false);
                // Stop sending: ack what is out, then wait.
                let left = self.tp.packets_out;
                self.tp.packets_out = 0;
                self.tp.snd_una += left as u64;
                self.tp.sacked_out = 0;
                self.tp.lost_out = 0;
                self.advance(gap_us);
                if gap_us > 200_000 {
                    // tcp_cwnd_restart (RFC 2861) after more than an RTO of idleness.
                    self.cc.cwnd_event(&mut self.tp, CaEvent::CwndRestart);
                    self.check("cwnd_event(CwndRestart)");
                    self.tp.snd_ssthresh = tcp_current_ssthresh(&self.tp);
                    self.tp.snd_cwnd = (self.tp.snd_cwnd >> 1).max(self.tp.snd_cwnd.min(10));
                }
                self.app_limited = false;
                self.send();
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn every_algorithm_keeps_its_invariants_under_random_acks_losses_and_timeouts(
        base_rtt_us in 1_000u32..=200_000,
        ecn in any::<bool>(),
        ops in prop_oneof![prop::collection::vec(op(12), 1..400), prop::collection::vec(op(150), 1..1500)]
    ) {
        for spec in ALGORITHMS {
            let mut flow = Flow::new(spec, base_rtt_us, ecn);
            for op in &ops {
                flow.apply(op);
            }
        }
    }
}
