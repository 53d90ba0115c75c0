//! The kernel's own algorithms' kfuncs (tests/progs/kfuncs.bpf.c) bound to the native
//! ports: a program made of cubictcp_* calls is CUBIC, hook for hook.

mod common;

use std::collections::BTreeMap;

use common::{compile_with, view};
use tcplab_bpf::{BpfObject, KernelEnv};
use tcplab_cc::ops::{AckSample, CaState, CongestionOps, RateSample};

const SRC: &str = "crates/bpf/tests/progs/kfuncs.bpf.c";

fn ops(name: &str) -> Option<Box<dyn CongestionOps>> {
    let bytes = compile_with(SRC, &[])?;
    let obj = BpfObject::parse_named(&bytes, Some(name)).unwrap();
    let p = obj.load(&BTreeMap::new(), &KernelEnv::default()).unwrap();
    Some(p.instantiate(0))
}

#[test]
fn cubictcp_recalc_ssthresh_is_cubics_beta() {
    let Some(mut cc) = ops("kf_cubic") else {
        return;
    };
    let mut tp = view(100, 50);
    cc.init(&mut tp);
    // tcp_cubic.c: first loss, no fast convergence yet: 100 * 717 / 1024 = 70.
    assert_eq!(cc.ssthresh(&tp), 70);
    assert_eq!(cc.fault(), None);
}

#[test]
fn a_program_of_cubictcp_kfuncs_is_cubic() {
    let Some(mut bpf) = ops("kf_cubic") else {
        return;
    };
    let mut native = tcplab_cc::registry::build("cubic", &BTreeMap::new()).unwrap();
    let mut a = view(10, 40);
    let mut b = a.clone();
    bpf.init(&mut a);
    native.init(&mut b);
    for step in 0..400u64 {
        for tp in [&mut a, &mut b] {
            tp.now_us += 2_000;
            tp.snd_una += 1;
            tp.snd_nxt = tp.snd_una + u64::from(tp.snd_cwnd);
            tp.delivered += 1;
        }
        let s = AckSample {
            pkts_acked: 1,
            rtt_us: 40_000 + (step as i64 % 7) * 1_000,
            in_flight: a.snd_cwnd,
            prior_in_flight: a.snd_cwnd,
        };
        bpf.pkts_acked(&mut a, &s);
        native.pkts_acked(&mut b, &s);
        let una = a.snd_una;
        bpf.cong_avoid(&mut a, una, 1);
        native.cong_avoid(&mut b, una, 1);
        if step == 250 {
            let (sa, sb) = (bpf.ssthresh(&a), native.ssthresh(&b));
            assert_eq!(sa, sb);
            bpf.set_state(&mut a, CaState::Recovery);
            native.set_state(&mut b, CaState::Recovery);
            for (tp, ss) in [(&mut a, sa), (&mut b, sb)] {
                tp.snd_ssthresh = ss;
                tp.snd_cwnd = ss;
                tp.ca_state = CaState::Open;
            }
        }
        assert_eq!(
            (a.snd_cwnd, a.snd_ssthresh, a.snd_cwnd_cnt),
            (b.snd_cwnd, b.snd_ssthresh, b.snd_cwnd_cnt),
            "step {step}"
        );
    }
    assert_eq!(bpf.fault(), None);
}

#[test]
fn bbr_kfuncs_run_bbr() {
    let Some(mut bpf) = ops("kf_bbr") else { return };
    let mut native = tcplab_cc::registry::build("bbr", &BTreeMap::new()).unwrap();
    let mut a = view(10, tcplab_cc::ops::TCP_INFINITE_SSTHRESH);
    a.srtt_us = 40_000;
    let mut b = a.clone();
    bpf.init(&mut a);
    native.init(&mut b);
    assert_eq!(
        (a.pacing_rate, a.pacing_needed),
        (b.pacing_rate, b.pacing_needed)
    );
    for step in 1..200u64 {
        for tp in [&mut a, &mut b] {
            tp.now_us += 1_000;
            tp.delivered += 2;
            tp.snd_una += 2;
        }
        let rs = RateSample {
            delivered: 20,
            interval_us: 40_000,
            rtt_us: 40_000,
            acked_sacked: 2,
            prior_in_flight: a.snd_cwnd,
            prior_delivered: a.delivered.saturating_sub(20),
            ..RateSample::default()
        };
        bpf.cong_control_flag(&mut a, &rs, 0x404);
        native.cong_control_flag(&mut b, &rs, 0x404);
        assert_eq!(
            (a.snd_cwnd, a.pacing_rate),
            (b.snd_cwnd, b.pacing_rate),
            "step {step}"
        );
    }
    assert_eq!(bpf.fault(), None);
    // bbr_sndbuf_expand is 3; bbr_min_tso_segs is 2 above 150 kB/s (1.2 Mbit/s).
    a.pacing_rate = 1_000_000;
    assert_eq!(bpf.undo_cwnd(&a), 3 + 20);
    a.pacing_rate = 100_000;
    assert_eq!(bpf.undo_cwnd(&a), 3 + 10);
}
