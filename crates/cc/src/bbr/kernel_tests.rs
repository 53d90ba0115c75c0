//! One test per behaviour the kernel profiles (`kernel`) change, with the expectation
//! computed by hand from that release's tcp_bbr.c. Common model as in `tests`: MSS
//! 1448, min_rtt 40 ms, bw 8388 (20 packets per 40 ms), bdp(2) = 40, tso_segs_goal 2
//! (quantization budget 3 * 2 = 6).

use super::pacing::{bbr_rate_bytes_per_sec, bbr_set_pacing_rate};
use super::tests::{Ack, Flow};
use super::*;
use crate::ops::{CaEvent, CongestionOps};
use crate::registry::ParamValue;
use std::collections::BTreeMap;

/// `Flow::in_probe_bw` on another release.
fn probe_bw_on(kernel: KernelRelease, cycle_idx: u32) -> Flow {
    let mut f = Flow::in_probe_bw(cycle_idx);
    f.cc.bbr.cfg.kernel = kernel;
    f
}

/// Two ACKs at the same instant (1 then 10 packets) in the 1.25 phase: on 6.18 an
/// aggregation epoch of 11 packets; the target cwnd after them.
fn target_after_burst(kernel: KernelRelease) -> (u32, u16) {
    let mut f = probe_bw_on(kernel, 0);
    for acked in [1, 10] {
        f.ack(Ack {
            at_us: 1_010_000,
            acked,
            ..Ack::default()
        });
    }
    // 10 ms of a 40 ms phase: still the 1.25 phase.
    assert_eq!(f.bbr().cycle_idx, 0);
    (
        f.bbr().target_cwnd,
        ack_aggregation::bbr_extra_acked(f.bbr()),
    )
}

#[test]
fn target_cwnd_is_2_bdp_plus_quanta_before_5_1_and_adds_aggregation_and_probe_quanta_on_6_18() {
    // 4.9 / 4.14 / 4.17: bdp(2) 40 + 3 * tso_segs_goal 6 = 46, already even; no
    // extra_acked (v5.1) and no +2 in the 1.25 phase (v4.18 / v5.4).
    for k in [
        KernelRelease::V4_9,
        KernelRelease::V4_14,
        KernelRelease::V4_17,
    ] {
        assert_eq!(target_after_burst(k), (46, 0), "{k:?}");
    }
    // 6.18: 40 + extra_acked 11 (below the 100 ms cap of 49) + 6 = 57 -> even 58, + 2
    // in the 1.25 phase = 60.
    assert_eq!(target_after_burst(KernelRelease::V6_18), (60, 11));
}

#[test]
fn pacing_has_no_margin_before_4_20() {
    // Gain 1, bw 8388: 8388 * 1448 = 12145824 * 1e6 >> 24 = 723947 bytes/s (4.9), and
    // * 990000 >> 24 = 716708 with 6.18's 1 % margin.
    let old = probe_bw_on(KernelRelease::V4_17, 2);
    assert_eq!(
        bbr_rate_bytes_per_sec(old.bbr(), &old.tp, 8388, 256),
        723_947
    );
    let new = probe_bw_on(KernelRelease::V6_18, 2);
    assert_eq!(
        bbr_rate_bytes_per_sec(new.bbr(), &new.tp, 8388, 256),
        716_708
    );
}

#[test]
fn drain_phase_reads_plain_inflight_before_4_20() {
    // 0.75 phase, 10 ms in, prior_in_flight 27, next departure 2.5 ms away. 6.18
    // subtracts what the path delivers by then (8388 * 2500 >> 24 = 1): 26 <=
    // bbr_inflight(bw, 1) = 20 + 6 = 26, the phase ends. 4.17 compares 27 > 26: stays.
    for (k, want) in [(KernelRelease::V4_17, 1), (KernelRelease::V6_18, 2)] {
        let mut f = probe_bw_on(k, 1);
        f.tp.tcp_wstamp_ns = 1_012_500_000;
        f.ack(Ack {
            at_us: 1_010_000,
            prior_in_flight: Some(27),
            ..Ack::default()
        });
        assert_eq!(f.bbr().cycle_idx, want, "{k:?}");
    }
}

#[test]
fn equal_rtt_sample_postpones_probe_rtt_before_5_10() {
    // min_rtt 40 ms stamped at 0. A 40 ms sample at 5 s: 4.9 (`<=`) restamps at 5000
    // jiffies, so at 10.001 s the window (5000 + 10000) has not expired; 6.18 (`<`)
    // keeps stamp 0 and enters PROBE_RTT.
    for (k, stamp, mode) in [
        (KernelRelease::V4_9, 5_000, BbrMode::ProbeBw),
        (KernelRelease::V6_18, 10_001, BbrMode::ProbeRtt),
    ] {
        let mut f = probe_bw_on(k, 2);
        f.ack(Ack {
            at_us: 5_000_000,
            rtt_us: 40_000,
            ..Ack::default()
        });
        f.ack(Ack {
            at_us: 10_001_000,
            rtt_us: 41_000,
            ..Ack::default()
        });
        assert_eq!(
            (f.bbr().min_rtt_stamp, f.bbr().mode),
            (stamp, mode),
            "{k:?}"
        );
    }
}

#[test]
fn probe_rtt_cap_waits_for_an_acked_packet_before_4_19() {
    // At 10.001 s the min_rtt window expires on an ACK that acks nothing new: PROBE_RTT.
    // 6.18 caps cwnd at 4 at once; 4.17's bbr_set_cwnd returns early (`if (!acked)`).
    for (k, cwnd) in [(KernelRelease::V4_17, 30), (KernelRelease::V6_18, 4)] {
        let mut f = probe_bw_on(k, 2);
        f.tp.snd_cwnd = 30;
        f.ack(Ack {
            at_us: 10_001_000,
            acked: 0,
            rtt_us: 41_000,
            in_flight: 30,
            ..Ack::default()
        });
        assert_eq!(
            (f.bbr().mode, f.tp.snd_cwnd),
            (BbrMode::ProbeRtt, cwnd),
            "{k:?}"
        );
    }
}

/// A flow in PROBE_RTT whose 200 ms and round are done at 10.250 s, cwnd 4,
/// prior_cwnd 31.
fn probe_rtt_done_on(kernel: KernelRelease) -> Flow {
    let mut f = probe_bw_on(kernel, 2);
    let b = &mut f.cc.bbr;
    b.mode = BbrMode::ProbeRtt;
    b.probe_rtt_done_stamp = 10_250;
    b.probe_rtt_round_done = true;
    b.prior_cwnd = 31;
    f.tp.snd_cwnd = 4;
    f.tp.now_us = 10_251_000;
    f
}

#[test]
fn idle_restart_ends_a_finished_probe_rtt_only_since_4_19() {
    // An app-limited restart at 10.251 s: 6.18 runs bbr_check_probe_rtt_done (after
    // 10250): PROBE_BW and cwnd max(4, 31) = 31. 4.17 leaves it to the next ACK.
    for (k, mode, cwnd) in [
        (KernelRelease::V4_17, BbrMode::ProbeRtt, 4),
        (KernelRelease::V6_18, BbrMode::ProbeBw, 31),
    ] {
        let mut f = probe_rtt_done_on(k);
        f.tp.app_limited = 1234;
        f.cc.cwnd_event(&mut f.tp, CaEvent::TxStart);
        assert_eq!((f.bbr().mode, f.tp.snd_cwnd), (mode, cwnd), "{k:?}");
    }
}

#[test]
fn probe_rtt_exit_restores_cwnd_on_the_next_acking_ack_before_4_19() {
    // 4.9: the ACK that ends PROBE_RTT sets restore_cwnd; its own bbr_set_cwnd restores
    // max(4, 31) = 31 and grows toward the target: min(31 + 1, 46) = 32, the same cwnd
    // 6.18 reaches by restoring at once. An ACK acking nothing restores nothing yet.
    let mut f = probe_rtt_done_on(KernelRelease::V4_9);
    f.ack(Ack {
        at_us: 10_251_000,
        acked: 0,
        in_flight: 4,
        ..Ack::default()
    });
    assert_eq!((f.bbr().mode, f.tp.snd_cwnd), (BbrMode::ProbeBw, 4));
    assert!(f.bbr().restore_cwnd);
    f.ack(Ack {
        at_us: 10_252_000,
        acked: 1,
        in_flight: 4,
        ..Ack::default()
    });
    assert_eq!(f.tp.snd_cwnd, 32);
    assert!(!f.bbr().restore_cwnd);
}

#[test]
fn undo_restarts_full_pipe_detection_only_since_4_15() {
    for (k, want) in [
        (KernelRelease::V4_14, (9000, 2)),
        (KernelRelease::V4_17, (0, 0)),
    ] {
        let mut f = probe_bw_on(k, 2);
        f.cc.bbr.full_bw = 9000;
        f.cc.bbr.full_bw_cnt = 2;
        f.tp.snd_cwnd = 33;
        assert_eq!(f.cc.undo_cwnd(&f.tp), 33);
        assert_eq!((f.bbr().full_bw, f.bbr().full_bw_cnt), want, "{k:?}");
    }
}

#[test]
fn pacing_rate_falls_outside_startup_on_4_9_but_only_with_a_full_pipe_since_4_13() {
    // PROBE_RTT entered from STARTUP (pipe not yet full), pacing at 2 MB/s; the new
    // rate for bw 8388 at gain 1 is 723947 (no margin). 4.9 lowers it (mode !=
    // STARTUP); 4.14 keeps 2 MB/s (full_bw_reached is false).
    for (k, want) in [
        (KernelRelease::V4_9, 723_947),
        (KernelRelease::V4_14, 2_000_000),
    ] {
        let mut f = probe_bw_on(k, 2);
        f.cc.bbr.mode = BbrMode::ProbeRtt;
        f.cc.bbr.full_bw_reached = false;
        f.tp.pacing_rate = 2_000_000;
        bbr_set_pacing_rate(&mut f.cc.bbr, &mut f.tp, 8388, BBR_UNIT);
        assert_eq!(f.tp.pacing_rate, want, "{k:?}");
    }
}

#[test]
fn kernel_parameter_takes_only_profiled_releases_and_gates_features() {
    let given = |x: f64| BTreeMap::from([("kernel".to_string(), ParamValue::Num(x))]);
    let err = SPEC.validate(&given(500.0)).unwrap_err().to_string();
    assert!(
        err.contains("'kernel'") && err.contains("409 (4.9)") && err.contains("618 (6.18)"),
        "{err}"
    );
    let p = SPEC.validate(&given(409.0)).unwrap();
    let cfg = BbrConfig::from_params(&p);
    assert_eq!(cfg.kernel, KernelRelease::V4_9);
    // extra_acked and the margin did not exist in 4.9, whatever their defaults say.
    assert_eq!((cfg.extra_acked_gain, cfg.pacing_margin_percent), (0, 0));
    // The default is today's kernel, bit for bit the pre-profile configuration.
    let cfg = BbrConfig::from_params(&SPEC.default_params());
    assert_eq!(cfg, BbrConfig::default());
}
