//! bpf/examples/dctcp.bpf.c: alpha and the cut worked by hand, the receiver's CE echo,
//! the Reno fallback without ECN, and step by step against the native `dctcp`.

mod common;

use std::collections::BTreeMap;

use common::{compile, view};
use tcplab_bpf::BpfObject;
use tcplab_cc::dctcp::Dctcp;
use tcplab_cc::ops::{CaEvent, CaState, CcView, CongestionOps};

fn dctcp() -> Option<Box<dyn CongestionOps>> {
    let obj = BpfObject::parse(&compile("bpf/examples/dctcp.bpf.c")?).unwrap();
    assert_eq!(obj.name(), "bpf_dctcp");
    Some(obj.instantiate(&BTreeMap::new()).unwrap())
}

fn ecn_view() -> CcView {
    let mut tp = view(100, 0x7fff_ffff);
    tp.ecn_ok = true;
    tp
}

#[test]
fn alpha_after_a_window_with_half_marked_and_the_cut() {
    let Some(mut cc) = dctcp() else { return };
    assert!(cc.needs_ecn());
    let mut tp = ecn_view();
    tp.snd_nxt = 10;
    cc.init(&mut tp); // next_seq = 10, old delivered 0/0
                      // The window ends: 10 delivered, 5 with CE. alpha = 1024 - 1024 >> 4 = 960, plus
                      // (5 << 6) / 10 = 32 -> 992. The cut: 100 - (100 * 992 >> 11) = 100 - 48 = 52.
    tp.snd_una = 10;
    tp.delivered = 10;
    tp.delivered_ce = 5;
    cc.in_ack_event(&mut tp, 0);
    assert_eq!(cc.ssthresh(&tp), 52);
    // Undo restores the cwnd before the cut.
    tp.snd_cwnd = 52;
    assert_eq!(cc.undo_cwnd(&tp), 100);
    // Entering Recovery halves: ssthresh written by set_state.
    cc.set_state(&mut tp, CaState::Recovery);
    assert_eq!(tp.snd_ssthresh, 26);
}

#[test]
fn receiver_echoes_a_ce_flip_with_the_delayed_ack_first() {
    let Some(mut cc) = dctcp() else { return };
    let mut tp = ecn_view();
    tp.rcv_nxt = 7;
    cc.init(&mut tp); // prior_rcv_nxt = 7, ce_state 0
                      // A CE segment arrives (rcv_nxt now 8) while a delayed ACK is pending: that ACK goes
                      // out for 7 without ECE, this one at once, and ECE is demanded from now on.
    tp.rcv_nxt = 8;
    tp.ack_timer_pending = true;
    cc.cwnd_event(&mut tp, CaEvent::EcnIsCe);
    assert_eq!(tp.send_ack, Some((7, false)));
    assert!(tp.ack_now && tp.ecn_demand_cwr);
    // Another CE segment: no flip, nothing sent early.
    tp.send_ack = None;
    tp.ack_now = false;
    tp.rcv_nxt = 9;
    cc.cwnd_event(&mut tp, CaEvent::EcnIsCe);
    assert_eq!(
        (tp.send_ack, tp.ack_now, tp.ecn_demand_cwr),
        (None, false, true)
    );
    // Back to no CE, delayed ACK pending: the ACK for 9 goes with ECE first.
    tp.rcv_nxt = 10;
    cc.cwnd_event(&mut tp, CaEvent::EcnNoCe);
    assert_eq!(tp.send_ack, Some((9, true)));
    assert!(tp.ack_now && !tp.ecn_demand_cwr);
}

#[test]
fn without_ecn_it_is_reno() {
    let Some(mut cc) = dctcp() else { return };
    let mut tp = view(100, 0x7fff_ffff);
    cc.init(&mut tp);
    assert_eq!(cc.ssthresh(&tp), 50);
    cc.set_state(&mut tp, CaState::Recovery);
    assert_eq!(tp.snd_ssthresh, 0x7fff_ffff);
}

#[test]
fn matches_native_dctcp_step_by_step() {
    let Some(mut bpf) = dctcp() else { return };
    let mut native = Dctcp::new(4, 1024);
    let mut a = ecn_view();
    a.snd_cwnd = 10;
    let mut b = a.clone();
    bpf.init(&mut a);
    native.init(&mut b);
    let mut x: u64 = 0x5eed_1234_abcd_0001;
    for step in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let r = x % 100;
        let acked = (x >> 20) % 3 + 1;
        let ce = (x >> 30).is_multiple_of(4);
        for tp in [&mut a, &mut b] {
            tp.snd_una += acked;
            tp.snd_nxt = tp.snd_una + u64::from(tp.snd_cwnd);
            tp.delivered += acked;
            tp.delivered_ce += if ce { acked } else { 0 };
            tp.rcv_nxt += 1;
            tp.ack_timer_pending = (x >> 40).is_multiple_of(2);
            tp.send_ack = None;
            tp.ack_now = false;
        }
        for (cc, tp) in [
            (&mut *bpf, &mut a),
            (&mut native as &mut dyn CongestionOps, &mut b),
        ] {
            cc.in_ack_event(tp, 0);
            let una = tp.snd_una;
            if r < 2 {
                let s = cc.ssthresh(tp);
                tp.prior_cwnd = tp.snd_cwnd;
                cc.set_state(tp, CaState::Cwr);
                tp.snd_ssthresh = s;
                tp.snd_cwnd = s;
                tp.ca_state = CaState::Open;
            } else if r == 2 {
                cc.set_state(tp, CaState::Recovery);
                tp.ca_state = CaState::Recovery;
                tp.snd_cwnd = tp.snd_ssthresh;
                cc.set_state(tp, CaState::Open);
                tp.ca_state = CaState::Open;
            } else if r == 3 {
                let u = cc.undo_cwnd(tp);
                tp.snd_cwnd = u;
            } else {
                cc.cong_avoid(tp, una, acked as u32);
            }
            cc.cwnd_event(
                tp,
                if ce {
                    CaEvent::EcnIsCe
                } else {
                    CaEvent::EcnNoCe
                },
            );
        }
        let key = |t: &CcView| {
            (
                t.snd_cwnd,
                t.snd_ssthresh,
                t.snd_cwnd_cnt,
                t.send_ack,
                t.ack_now,
                t.ecn_demand_cwr,
            )
        };
        assert_eq!(key(&a), key(&b), "step {step}");
    }
    assert_eq!(bpf.fault(), None);
}
