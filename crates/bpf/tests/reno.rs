//! bpf/examples/reno.bpf.c in the interpreter: hand-computed windows, then step by step
//! against the native `reno` on the same hook sequence.

mod common;

use std::collections::BTreeMap;

use common::{compile, view};
use tcplab_bpf::BpfObject;
use tcplab_cc::ops::{CaState, CongestionOps};
use tcplab_cc::reno::Reno;

fn reno() -> Option<Box<dyn CongestionOps>> {
    let obj = BpfObject::parse(&compile("bpf/examples/reno.bpf.c")?).unwrap();
    assert_eq!(obj.name(), "bpf_reno");
    Some(obj.instantiate(&BTreeMap::new()).unwrap())
}

#[test]
fn slow_start_doubles_the_window_in_one_round() {
    let Some(mut cc) = reno() else { return };
    let mut tp = view(10, u32::MAX >> 1);
    cc.init(&mut tp);
    // Ten ACKs of one segment each: 10 -> 20.
    for ack in 1..=10 {
        cc.cong_avoid(&mut tp, ack, 1);
    }
    assert_eq!(tp.snd_cwnd, 20);
    assert_eq!(tp.snd_cwnd_cnt, 0);
}

#[test]
fn congestion_avoidance_adds_one_segment_per_window() {
    let Some(mut cc) = reno() else { return };
    let mut tp = view(30, 20);
    // 29 ACKs: the counter reaches 29 of 30; the 30th makes it 31 and resets the counter.
    for ack in 1..=29 {
        cc.cong_avoid(&mut tp, ack, 1);
    }
    assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (30, 29));
    cc.cong_avoid(&mut tp, 30, 1);
    assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (31, 0));
    // A stretch ACK of 64 segments at cwnd 31: 2 segments, 2 left in the counter.
    cc.cong_avoid(&mut tp, 94, 64);
    assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (33, 2));
}

#[test]
fn slow_start_hands_the_rest_to_congestion_avoidance() {
    let Some(mut cc) = reno() else { return };
    // cwnd 18, ssthresh 20, 5 acked: slow start to 20, the 3 left go to the counter.
    let mut tp = view(18, 20);
    cc.cong_avoid(&mut tp, 5, 5);
    assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (20, 3));
}

#[test]
fn not_cwnd_limited_means_no_growth() {
    let Some(mut cc) = reno() else { return };
    let mut tp = view(30, 20);
    tp.is_cwnd_limited = false;
    cc.cong_avoid(&mut tp, 1, 10);
    assert_eq!(tp.snd_cwnd, 30);
    // In slow start, growth continues while cwnd < 2 * max_packets_out.
    let mut tp = view(10, 100);
    tp.is_cwnd_limited = false;
    tp.max_packets_out = 6;
    cc.cong_avoid(&mut tp, 1, 1);
    assert_eq!(tp.snd_cwnd, 11);
    tp.max_packets_out = 5; // 11 >= 10: no longer limited
    cc.cong_avoid(&mut tp, 2, 1);
    assert_eq!(tp.snd_cwnd, 11);
}

#[test]
fn ssthresh_halves_and_undo_restores() {
    let Some(mut cc) = reno() else { return };
    let mut tp = view(31, 20);
    assert_eq!(cc.ssthresh(&tp), 15);
    tp.snd_cwnd = 3;
    assert_eq!(cc.ssthresh(&tp), 2);
    tp.snd_cwnd = 12;
    tp.prior_cwnd = 40;
    assert_eq!(cc.undo_cwnd(&tp), 40);
    tp.prior_cwnd = 4;
    assert_eq!(cc.undo_cwnd(&tp), 12);
}

/// A deterministic pseudo-random hook sequence (xorshift), the same for both.
#[test]
fn matches_native_reno_step_by_step() {
    let Some(mut bpf) = reno() else { return };
    let mut native = Reno;
    let mut a = view(10, 0x7fff_ffff);
    let mut b = a.clone();
    bpf.init(&mut a);
    native.init(&mut b);
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut ack = 0u64;
    for step in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let acked = (x % 4) as u32 + 1;
        ack += u64::from(acked);
        let limited = !x.is_multiple_of(11);
        a.is_cwnd_limited = limited;
        b.is_cwnd_limited = limited;
        a.max_packets_out = (x >> 20) as u32 % 64;
        b.max_packets_out = a.max_packets_out;
        if x.is_multiple_of(97) {
            // A loss: ssthresh from the algorithm, cwnd to it (what PRR ends with).
            let (sa, sb) = (bpf.ssthresh(&a), native.ssthresh(&b));
            assert_eq!(sa, sb, "ssthresh at step {step}");
            a.prior_cwnd = a.snd_cwnd;
            b.prior_cwnd = b.snd_cwnd;
            bpf.set_state(&mut a, CaState::Recovery);
            native.set_state(&mut b, CaState::Recovery);
            a.snd_ssthresh = sa;
            a.snd_cwnd = sa;
            b.snd_ssthresh = sb;
            b.snd_cwnd = sb;
        } else if x.is_multiple_of(331) {
            let (ua, ub) = (bpf.undo_cwnd(&a), native.undo_cwnd(&b));
            assert_eq!(ua, ub, "undo at step {step}");
        } else {
            bpf.cong_avoid(&mut a, ack, acked);
            native.cong_avoid(&mut b, ack, acked);
        }
        assert_eq!(
            (a.snd_cwnd, a.snd_ssthresh, a.snd_cwnd_cnt),
            (b.snd_cwnd, b.snd_ssthresh, b.snd_cwnd_cnt),
            "step {step}"
        );
    }
    assert!(bpf.fault().is_none());
    assert!(a.snd_cwnd > 2);
}
