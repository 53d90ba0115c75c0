//! bpf/examples/bbr.bpf.c outside the engine: values worked by hand. (The engine test
//! crates/controllers/tests/bpf_flows.rs runs it against the native bbr, bit for bit.)

mod common;

use std::collections::BTreeMap;

use common::{compile, view};
use tcplab_bpf::{BpfCongestionOps, BpfObject};
use tcplab_cc::ops::{CaState, CongestionOps, RateSample};
use tcplab_cc::ParamValue;

fn bbr(params: &[(&str, f64)]) -> Option<BpfCongestionOps> {
    let obj = BpfObject::parse(&compile("bpf/examples/bbr.bpf.c")?).unwrap();
    assert_eq!(obj.name(), "bpf_bbr");
    let p: BTreeMap<String, ParamValue> = params
        .iter()
        .map(|(k, v)| (k.to_string(), ParamValue::Num(*v)))
        .collect();
    Some(obj.instantiate_ops(&p).unwrap())
}

#[test]
fn init_paces_at_high_gain_times_the_initial_window_per_nominal_rtt() {
    let Some(mut cc) = bbr(&[]) else { return };
    assert!(cc.has_cong_control());
    let mut tp = view(10, 100);
    cc.init(&mut tp);
    // No RTT yet: 1 ms nominal. bw = 10 << 24 / 1000 = 167772; rate = 167772 * 1448 *
    // 739 >> 8 = 701281717, * 990000 >> 24 = 41381651 bytes/s (high_gain 739/256, 1 %
    // margin).
    assert_eq!(tp.pacing_rate, 41_381_651);
    assert!(tp.pacing_needed, "SK_PACING_NEEDED");
    assert_eq!(tp.snd_ssthresh, 0x7fff_ffff);
    assert_eq!(cc.sndbuf_expand(&tp), Some(3));
    // min_tso_segs: 2 above bbr_min_tso_rate / 8 = 150000 bytes/s, else 1.
    assert_eq!(cc.min_tso_segs(&tp), Some(2));
    tp.pacing_rate = 149_999;
    assert_eq!(cc.min_tso_segs(&tp), Some(1));
}

#[test]
fn ssthresh_saves_cwnd_and_keeps_the_sockets_threshold() {
    let Some(mut cc) = bbr(&[]) else { return };
    let mut tp = view(40, 0x7fff_ffff);
    cc.init(&mut tp);
    tp.snd_cwnd = 40;
    assert_eq!(cc.ssthresh(&tp), 0x7fff_ffff);
    // prior_cwnd (offset 72 of struct bbr: 3 u32, the 24-byte filter, 2 u32, 4 bytes of
    // padding, a u64, 4 u32) is the cwnd at the loss.
    let prior = u32::from_le_bytes(cc.ca_priv()[72..76].try_into().unwrap());
    assert_eq!(prior, 40);
    // First ACK in Recovery: packet conservation, cwnd = in flight + acked.
    tp.ca_state = CaState::Recovery;
    tp.packets_out = 30;
    tp.srtt_us = 10_000;
    tp.min_rtt_us = 10_000;
    let rs = RateSample {
        delivered: 2,
        interval_us: 10_000,
        rtt_us: 10_000,
        acked_sacked: 2,
        prior_in_flight: 32,
        ..RateSample::default()
    };
    cc.cong_control(&mut tp, &rs);
    assert_eq!(tp.snd_cwnd, 32);
    assert_eq!(cc.fault(), None);
}

#[test]
fn high_gain_parameter_sets_the_startup_rate() {
    let Some(mut cc) = bbr(&[("high_gain", 512.0)]) else {
        return;
    };
    let mut tp = view(10, 100);
    cc.init(&mut tp);
    // As above with gain 512: 167772 * 1448 * 512 >> 8 = 485867712, * 990000 >> 24.
    assert_eq!(tp.pacing_rate, (485_867_712u64 * 990_000) >> 24);
}
