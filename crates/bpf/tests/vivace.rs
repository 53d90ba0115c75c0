//! bpf/examples/vivace.bpf.c's fixed-point arithmetic run through the VM: built with
//! `-DVIVACE_SELFTEST`, its init writes the helpers' results for hand-computed inputs
//! to `.bss` (`vivace_selftest[16]`, u64 each). The shipped build runs the same helpers.
//! Expected values: x^e x 2^16 from the closed form (the program's comment bounds
//! pow_q16 by 1 + 1e-7 x^e 2^16); the slope and utility cases are the native port's own
//! (crates/cc/src/vivace.rs tests), in Q32 and Q16.

mod common;

use std::collections::BTreeMap;

use common::compile_with;
use tcplab_bpf::{BpfObject, KernelEnv};
use tcplab_cc::ops::CcView;

const SRC: &str = "bpf/examples/vivace.bpf.c";

/// The selftest words after one init on a socket of mss 1000 and srtt 40 ms, and that
/// socket's view.
fn selftest() -> Option<(Vec<u64>, CcView)> {
    let bytes = compile_with(SRC, &["VIVACE_SELFTEST"])?;
    let prog = BpfObject::parse(&bytes)
        .unwrap()
        .load(&BTreeMap::new(), &KernelEnv::default())
        .unwrap();
    let mut ops = prog.instantiate(1);
    let mut tp = CcView::new(1000, 0);
    tp.srtt_us = 40_000;
    ops.init(&mut tp);
    let bss = prog.global_section(".bss").unwrap();
    let words = bss
        .chunks(8)
        .take(16)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    Some((words, tp))
}

#[test]
fn vivace_powers_are_within_the_stated_bound() {
    let Some((w, _)) = selftest() else { return };
    eprintln!("selftest words: {w:?}");
    // (input, exponent, x^e by hand): 10^0.9 = 7.943282347, 20^0.9 = 14.82264, 0.5^0.9
    // = 0.5358867, 1^1.2 = 1, 2^1.2 = 2.297397, 3^1.2 = 3.737193, 1000^0.9 = 501.1872.
    let cases = [
        (0, 10.0f64, 0.9),
        (1, 20.0, 0.9),
        (2, 0.5, 0.9),
        (3, 1.0, 1.2),
        (4, 2.0, 1.2),
        (5, 3.0, 1.2),
        (6, 1000.0, 0.9),
    ];
    for (i, x, e) in cases {
        let want = x.powf(e) * 65536.0;
        let bound = 1.0 + 1e-7 * want;
        let got = w[i] as f64;
        assert!(
            (got - want).abs() <= bound,
            "{x}^{e}: {got} against {want} (bound {bound})"
        );
    }
    // 1^1.2: log2(1) = 0 exactly, so exactly 1.0 (the amplifier of a first step).
    assert_eq!(w[3], 65536);
    // 10^0.9 x 2^16 = 520 570.95: rounded, 520 571.
    assert_eq!(w[0], 520_571);
}

#[test]
fn vivace_rtt_slope_matches_the_ports_cases() {
    let Some((w, _)) = selftest() else { return };
    let q32 = 2f64.powi(32);
    // Rising 1 ms per 10 ms: 0.1 = 429 496 729.6 in Q32; zig-zag 0.02 (kept, RMS error
    // 0.0110 < 0.02) = 85 899 345.92; the flat (slope 0) and falling cases give 0.
    assert!((w[7] as f64 - 0.1 * q32).abs() <= 2.0, "{}", w[7]);
    assert!((w[8] as f64 - 0.02 * q32).abs() <= 2.0, "{}", w[8]);
    assert_eq!(w[9], 0);
    assert_eq!(w[10], 0);
}

#[test]
fn vivace_utility_matches_the_ports_cases() {
    let Some((w, _)) = selftest() else { return };
    // 10 Mbit/s, no slope, 1 % loss: 10^0.9 - 11.35 x 0.01 x 10 = 6.808282 = 446 187.6
    // in Q16; slope 0.01, no loss: 7.943282 - 90 = -82.056718 = -5 377 669.0.
    let u1 = w[11] as i64 as f64;
    let u2 = w[12] as i64 as f64;
    assert!((u1 - 446_187.6).abs() <= 2.0, "{u1}");
    assert!((u2 + 5_377_669.0).abs() <= 2.0, "{u2}");
}

#[test]
fn vivace_paces_at_its_initial_rate_with_twice_the_bdp_of_cwnd() {
    let Some((_, tp)) = selftest() else { return };
    // The port's test: 10 segments of 1000 B per 40 ms = 2 Mbit/s = 250 000 B/s;
    // cwnd 2 x 250 000 x 0.04 / 1000 = 20.
    assert!(tp.pacing_needed);
    assert_eq!(tp.pacing_rate, 250_000);
    assert_eq!(tp.snd_cwnd, 20);
}
