//! Every example program against its native twin (reno, cubic, dctcp, bbr) on random
//! hook sequences from a small sender model: ACKs with RTT samples, ECN echoes (a CWR
//! reduction), fast-retransmit losses, RTOs, returns to Open, undos, idle restarts and
//! receiver-side CE events, in the order tcp_input.c calls the hooks. After every step
//! the fields the sender reads back must be equal, and the program must not fault.
//! (The engine-level twin runs are crates/controllers/tests/bpf_flows.rs.)

mod common;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use proptest::prelude::*;
use tcplab_bpf::BpfObject;
use tcplab_cc::ops::ack_flags::CA_ACK_ECE;
use tcplab_cc::ops::{AckSample, CaEvent, CaState, CcView, CongestionOps, RateSample};

#[derive(Clone, Debug)]
enum Op {
    Ack {
        segs: u32,
        gap_us: u64,
        queue_us: u32,
        ece: bool,
    },
    Loss {
        lost: u32,
    },
    Rto,
    Open,
    Undo,
    Idle {
        gap_us: u64,
    },
    RxEcn {
        ce: bool,
        pending: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => (1u32..=4, 0u64..=15_000, 0u32..=30_000, prop::bool::weighted(0.1))
            .prop_map(|(segs, gap_us, queue_us, ece)| Op::Ack { segs, gap_us, queue_us, ece }),
        1 => (1u32..=4).prop_map(|lost| Op::Loss { lost }),
        1 => Just(Op::Rto),
        2 => Just(Op::Open),
        1 => Just(Op::Undo),
        1 => (0u64..=3_000_000).prop_map(|gap_us| Op::Idle { gap_us }),
        1 => (any::<bool>(), any::<bool>()).prop_map(|(ce, pending)| Op::RxEcn { ce, pending }),
    ]
}

const BASE_RTT_US: u32 = 20_000;

fn inflight(tp: &CcView) -> u32 {
    (tp.packets_out + tp.retrans_out).saturating_sub(tp.sacked_out + tp.lost_out)
}

/// Fill the window (tcp_write_xmit), with TxStart when leaving idle.
fn send(cc: &mut dyn CongestionOps, tp: &mut CcView) {
    let limit = tp.snd_cwnd.min(2000);
    while inflight(tp) < limit {
        if inflight(tp) == 0 {
            cc.cwnd_event(tp, CaEvent::TxStart);
            tp.lsndtime_us = tp.now_us;
        }
        tp.snd_nxt += 1;
        tp.packets_out += 1;
    }
    tp.is_cwnd_limited = inflight(tp) >= tp.snd_cwnd;
    tp.max_packets_out = tp.max_packets_out.max(tp.packets_out);
}

fn reduce(cc: &mut dyn CongestionOps, tp: &mut CcView, to: CaState) {
    let ss = cc.ssthresh(tp);
    tp.prior_cwnd = tp.snd_cwnd;
    cc.set_state(tp, to);
    tp.ca_state = to;
    tp.snd_ssthresh = ss;
    if !cc.has_cong_control() {
        tp.snd_cwnd = ss.max(1);
    }
}

fn apply(cc: &mut dyn CongestionOps, tp: &mut CcView, op: &Op) {
    tp.send_ack = None;
    tp.ack_now = false;
    match *op {
        Op::Ack {
            segs,
            gap_us,
            queue_us,
            ece,
        } => {
            tp.now_us += gap_us + 1;
            let acked = segs.min(tp.packets_out);
            let prior_in_flight = inflight(tp);
            let prior_delivered = tp.delivered;
            tp.snd_una += u64::from(acked);
            tp.packets_out -= acked;
            tp.lost_out = tp.lost_out.min(tp.packets_out);
            tp.delivered += u64::from(acked);
            if ece {
                tp.delivered_ce += u64::from(acked);
            }
            tp.delivered_mstamp_us = tp.now_us;
            let rtt = BASE_RTT_US + queue_us;
            tp.srtt_us = if tp.srtt_us == 0 {
                rtt
            } else {
                (7 * tp.srtt_us + rtt) / 8
            };
            tp.min_rtt_us = tp.min_rtt_us.min(rtt);
            let sample = AckSample {
                pkts_acked: acked,
                rtt_us: i64::from(rtt),
                in_flight: prior_in_flight,
                prior_in_flight,
            };
            cc.pkts_acked(tp, &sample);
            if ece && tp.ca_state == CaState::Open {
                reduce(cc, tp, CaState::Cwr);
            }
            cc.in_ack_event(tp, if ece { CA_ACK_ECE } else { 0 });
            if cc.has_cong_control() {
                let rs = RateSample {
                    prior_mstamp_us: tp.now_us.saturating_sub(u64::from(rtt)),
                    prior_delivered,
                    delivered: i64::from(acked),
                    interval_us: i64::from(rtt),
                    rtt_us: i64::from(rtt),
                    acked_sacked: acked,
                    prior_in_flight,
                    ..RateSample::default()
                };
                cc.cong_control(tp, &rs);
            } else if tp.ca_state == CaState::Open && acked > 0 {
                let una = tp.snd_una;
                cc.cong_avoid(tp, una, acked);
            }
        }
        Op::Loss { lost } => {
            if tp.ca_state == CaState::Open {
                reduce(cc, tp, CaState::Recovery);
            }
            let lost = lost.min(tp.packets_out);
            tp.lost += u64::from(lost);
            tp.lost_out = (tp.lost_out + lost).min(tp.packets_out);
        }
        Op::Rto => {
            cc.cwnd_event(tp, CaEvent::Loss);
            let ss = cc.ssthresh(tp);
            cc.set_state(tp, CaState::Loss);
            tp.ca_state = CaState::Loss;
            tp.snd_ssthresh = ss;
            tp.snd_cwnd = 1;
            tp.lost += u64::from(tp.packets_out);
            tp.packets_out = 0;
            tp.lost_out = 0;
        }
        Op::Open => {
            if tp.ca_state != CaState::Open {
                cc.set_state(tp, CaState::Open);
                tp.ca_state = CaState::Open;
            }
        }
        Op::Undo => {
            tp.snd_cwnd = cc.undo_cwnd(tp).max(1);
        }
        Op::Idle { gap_us } => {
            tp.snd_una = tp.snd_nxt;
            tp.packets_out = 0;
            tp.lost_out = 0;
            tp.now_us += gap_us;
            tp.app_limited = tp.delivered.max(1);
        }
        Op::RxEcn { ce, pending } => {
            tp.rcv_nxt += 1;
            tp.ack_timer_pending = pending;
            cc.cwnd_event(
                tp,
                if ce {
                    CaEvent::EcnIsCe
                } else {
                    CaEvent::EcnNoCe
                },
            );
        }
    }
    send(cc, tp);
}

type Key = (
    u32,
    u32,
    u32,
    u64,
    bool,
    u64,
    Option<(u64, bool)>,
    bool,
    bool,
);

fn key(tp: &CcView) -> Key {
    (
        tp.snd_cwnd,
        tp.snd_ssthresh,
        tp.snd_cwnd_cnt,
        tp.pacing_rate,
        tp.pacing_needed,
        tp.app_limited,
        tp.send_ack,
        tp.ack_now,
        tp.ecn_demand_cwr,
    )
}

fn object(name: &str) -> Option<BpfObject> {
    static OBJS: OnceLock<Vec<(String, Option<Vec<u8>>)>> = OnceLock::new();
    let objs = OBJS.get_or_init(|| {
        ["reno", "cubic", "dctcp", "bbr"]
            .iter()
            .map(|n| {
                (
                    n.to_string(),
                    common::compile(&format!("bpf/examples/{n}.bpf.c")),
                )
            })
            .collect()
    });
    let bytes = objs.iter().find(|(n, _)| n == name)?.1.as_ref()?;
    Some(BpfObject::parse(bytes).unwrap())
}

fn twins(name: &str, ops: &[Op]) -> Result<(), TestCaseError> {
    let Some(obj) = object(name) else {
        return Ok(());
    };
    let mut bpf = obj.instantiate(&BTreeMap::new()).unwrap();
    let mut native = tcplab_cc::registry::build(name, &BTreeMap::new()).unwrap();
    let mut a = CcView::new(1448, 1_000_000);
    a.ecn_ok = native.needs_ecn();
    let mut b = a.clone();
    bpf.init(&mut a);
    native.init(&mut b);
    send(bpf.as_mut(), &mut a);
    send(native.as_mut(), &mut b);
    prop_assert_eq!(key(&a), key(&b), "{} after init", name);
    for (i, op) in ops.iter().enumerate() {
        apply(bpf.as_mut(), &mut a, op);
        apply(native.as_mut(), &mut b, op);
        prop_assert_eq!(bpf.fault(), None);
        prop_assert_eq!(key(&a), key(&b), "{} step {} {:?}", name, i, op);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn reno_twins(ops in prop::collection::vec(op(), 1..300)) { twins("reno", &ops)?; }

    #[test]
    fn cubic_twins(ops in prop::collection::vec(op(), 1..300)) { twins("cubic", &ops)?; }

    #[test]
    fn dctcp_twins(ops in prop::collection::vec(op(), 1..300)) { twins("dctcp", &ops)?; }

    #[test]
    fn bbr_twins(ops in prop::collection::vec(op(), 1..300)) { twins("bbr", &ops)?; }
}
