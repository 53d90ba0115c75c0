//! The TCP stack under the kernel profiles (`[tcp] kernel`, docs/BBR_KERNELS.md): loss
//! detection before 4.18 (the duplicate-ACK threshold, FACK's form, beside RACK) and
//! before 4.10 (RACK only in Recovery, no reordering timer), against 6.18's RACK-only
//! detection, on one hand-made ACK. Expectations computed by hand from each release's
//! tcp_input.c / tcp_recovery.c (arithmetic in the comments).

use std::sync::{Arc, Mutex};

use tcplab_cc::bbr::kernel::KernelRelease;
use tcplab_cc::CaState;
use tcplab_sim::config::AppConfig;
use tcplab_sim::tcp::sender::Sender;
use tcplab_sim::tcp::{SenderIo, SenderTimer};
use tcplab_sim::time::SimTime;

mod common;
use common::sender::{ack, logged_sender, sent};
use common::MS;

/// A bulk sender under `kernel` that has sent its initial window (segments 0-9 at 0),
/// with that first flight.
fn started(kernel: KernelRelease) -> (Sender, SenderIo, Vec<(u64, bool)>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut s = logged_sender(&log, AppConfig::Bulk, false);
    s.set_kernel(kernel);
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    let flight = sent(&mut io);
    (s, io, flight)
}

/// (CA state, lost_out, what was sent, whether a reordering timer was armed) after the
/// first ACK of an initial window whose segments 0-3 were lost: at 100 ms, SACK of
/// segment 4 alone.
fn one_sack_above_a_four_segment_hole(
    kernel: KernelRelease,
) -> (CaState, u32, Vec<(u64, bool)>, bool) {
    let (mut s, mut io, flight) = started(kernel);
    assert_eq!(flight.len(), 10); // segments 0..9, all sent at 0
    s.on_ack(SimTime(100 * MS), &ack(0, Some((4, 5))), &mut io);
    let reo = io.timers.iter().any(|t| t.1 == SenderTimer::Reo);
    (s.tp.ca_state, s.tp.lost_out, sent(&mut io), reo)
}

#[test]
fn before_4_18_fack_starts_recovery_on_one_sack_three_above_the_hole() {
    // The SACK's RTT sample: min_rtt = srtt = 100 ms; rack.rtt 100 ms, rack.mstamp 0
    // (segment 4, end_seq 5), and segments 0-3 sent at 0 with lower end_seq count as
    // sent before it.
    //
    // 6.18: sacked_out 1 < reordering 3, Open, no reordering seen: reo_wnd =
    // min(min_rtt / 4 = 25 ms, srtt 100 ms) = 25 ms; each of 0-3 waits 100 + 25 - 100
    // = 25 ms more: nothing lost, the reordering timer armed. No duplicate-ACK rule:
    // Disorder, and the SACK frees room for new segment 10 (in flight 9 < cwnd 10).
    assert_eq!(
        one_sack_above_a_four_segment_hole(KernelRelease::V6_18),
        (CaState::Disorder, 0, vec![(10, false)], true)
    );
    // 4.14 / 4.17 (v4.10-v4.17): RACK's reo_wnd = max(min_rtt / 4, 1 ms) = 25 ms (no
    // loss marked yet): the same 25 ms wait, timer armed. But tcp_time_to_recover's
    // classic rule with FACK: fackets_out = 5 (snd_una 0 to segment 4) > reordering 3:
    // Recovery, and tcp_update_scoreboard marks the first 5 - 3 = 2 segments (0, 1)
    // lost. Reno's ssthresh 10 / 2 = 5; PRR: in flight 10 - 1 sacked - 2 lost = 7 > 5,
    // sndcnt = ceil(5 * 1 / 10) - 0 = 1: the fast retransmit of segment 0.
    for k in [KernelRelease::V4_14, KernelRelease::V4_17] {
        assert_eq!(
            one_sack_above_a_four_segment_hole(k),
            (CaState::Recovery, 2, vec![(0, true)], true),
            "{k:?}"
        );
    }
    // 4.9: the same duplicate-ACK rule and marking; RACK does nothing before Recovery
    // (tcp_rack_mark_lost returns in Open) and has no timer.
    assert_eq!(
        one_sack_above_a_four_segment_hole(KernelRelease::V4_9),
        (CaState::Recovery, 2, vec![(0, true)], false)
    );
}

#[test]
fn in_recovery_4_9_rack_marks_by_send_time_gap_beyond_facks_reach() {
    // Continue 4.9's recovery: at 200 ms the retransmission of segment 0 (sent at 100
    // ms) is acked (ack 1) with segments 4-5 SACKed. Its RTT 100 ms is not below
    // min_rtt, so rack.mstamp = 100 ms. v4.9 RACK (in Recovery now), reo_wnd 1 ms (no
    // reordering seen): every unSACKed segment sent at 0 is 100 ms - 0 > 1 ms before
    // it: 1 (already lost), 2, 3, 6, 7, 8, 9 -> lost_out 7. FACK alone would mark only
    // fackets_out 5 - 3 = 2 from snd_una (1, 2).
    let (mut s, mut io, _) = started(KernelRelease::V4_9);
    s.on_ack(SimTime(100 * MS), &ack(0, Some((4, 5))), &mut io);
    assert_eq!(sent(&mut io), vec![(0, true)]);
    s.on_ack(SimTime(200 * MS), &ack(1, Some((4, 6))), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    assert_eq!(s.tp.lost_out, 7);
}

#[test]
fn in_recovery_4_14_rack_still_waits_1_ms_where_6_18_waits_nothing() {
    // 4.14 after the first ACK above (Recovery, 0 and 1 lost, 0 retransmitted at 100
    // ms). At 100.5 ms segment 5 (sent at 0) is SACKed: rack.rtt 100.5 ms. FACK:
    // fackets_out 6 - 3 = 3 marks 0, 1, 2. RACK v4.10-v4.14: something is marked lost
    // and no reordering was seen, so reo_wnd = 1 ms; segment 3 waits 100.5 + 1 - 100.5 =
    // 1 ms more: lost_out 3, the reordering timer armed. (6.18's window is 0 in
    // Recovery: 3 would be lost at once.)
    let (mut s, mut io, _) = started(KernelRelease::V4_14);
    s.on_ack(SimTime(100 * MS), &ack(0, Some((4, 5))), &mut io);
    sent(&mut io);
    s.on_ack(SimTime(100 * MS + MS / 2), &ack(0, Some((4, 6))), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    assert_eq!(s.tp.lost_out, 3);
    assert!(io.timers.iter().any(|t| t.1 == SenderTimer::Reo));
}

#[test]
fn before_4_18_reordering_turns_fack_off_and_sacked_out_counts() {
    // 4.14, Reno. Segment 0 late: SACK of 1 at 100 ms (fackets_out 2 <= 3: Disorder;
    // RACK waits 25 ms); 0 arrives at 110 ms: a never-retransmitted segment below the
    // highest SACK, reordering seen (reord_seen 1; metric 2 keeps tp->reordering 3),
    // which disables FACK (tcp_disable_fack).
    let (mut s, mut io, _) = started(KernelRelease::V4_14);
    s.on_ack(SimTime(100 * MS), &ack(0, Some((1, 2))), &mut io);
    assert_eq!((s.tp.ca_state, s.tp.lost_out), (CaState::Disorder, 0));
    s.on_ack(SimTime(110 * MS), &ack(2, None), &mut io);
    assert_eq!(s.reorder_counts(), (0, 3, 1));
    // At 120 ms segment 6 alone is SACKed. With FACK, fackets_out 7 - 2 = 5 > 3 would
    // start recovery (as in the first test); without it, sacked_out 1 + 1 = 2 <= 3 does
    // not, and RACK (reo_wnd max(min_rtt / 4, 1 ms) = 25 ms since reordering was seen)
    // lets 2-5 wait 120 + 25 - 120 = 25 ms: Disorder, nothing lost.
    s.on_ack(SimTime(120 * MS), &ack(2, Some((6, 7))), &mut io);
    assert_eq!((s.tp.ca_state, s.tp.lost_out), (CaState::Disorder, 0));
}
