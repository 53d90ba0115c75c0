//! The sender under reordering, driven by hand-made ACKs (tcp::reorder, tcp::rack): a
//! segment delayed within RACK's reordering window is not marked lost, a segment
//! displaced by more than `tp->reordering` raises it, and a fast retransmission proven
//! spurious by D-SACK is undone. Expectations computed by hand from the kernel's rules
//! (arithmetic in the comments).

use tcplab_cc::reno::Reno;
use tcplab_cc::CaState;
use tcplab_sim::config::AppConfig;
use tcplab_sim::tcp::sender::Sender;
use tcplab_sim::tcp::SenderIo;
use tcplab_sim::time::SimTime;

mod common;
use common::sender::{ack, ack_blocks, sender_with, sent};
use common::MS;

fn reno() -> Sender {
    let mut s = sender_with(Box::new(Reno), AppConfig::Bulk);
    s.rack_enabled = true;
    s
}

#[test]
fn a_delayed_segment_within_the_reordering_window_is_not_lost_and_raises_reordering() {
    let mut s = reno();
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    assert_eq!(sent(&mut io).len(), 10); // segments 0..9 at t = 0

    // Segment 0 is late; 1 is SACKed at 100 ms. RTT sample 100 ms (min_rtt = srtt =
    // 100 ms). No reordering seen yet, sacked_out 1 < reordering 3, Disorder: reo_wnd =
    // min(min_rtt / 4, srtt) = 25 ms. RACK for 0: remaining = rack.rtt 100 + 25 -
    // (100 - 0) = 25 ms > 0: not lost, the reordering timer waits.
    s.on_ack(SimTime(100 * MS), &ack(0, Some((1, 2))), &mut io);
    assert_eq!(s.tp.lost_out, 0);
    assert!(sent(&mut io).iter().all(|&(_, r)| !r));

    // 0 arrives 10 ms later: the cumulative ACK covers a never-retransmitted segment
    // below the highest SACKed (prior fack 2): tcp_check_sack_reordering(0): fack = snd_una
    // 2 (nothing SACKed any more), metric 2 <= 3: reordering stays 3, reord_seen 1.
    s.on_ack(SimTime(110 * MS), &ack(2, None), &mut io);
    assert_eq!(s.reorder_counts(), (0, 3, 1));
    assert_eq!(s.tp.ca_state, CaState::Open);

    // Now segment 2 (sent at 0) is displaced by 4: 3..6 are SACKed at 120 ms. Reordering
    // has been seen, so reo_wnd = 25 ms even with sacked_out 4 >= 3: remaining for 2 =
    // rack.rtt (120 - 0) + 25 - 120 = 25 ms: still not lost.
    s.on_ack(SimTime(120 * MS), &ack(2, Some((3, 7))), &mut io);
    assert_eq!(s.tp.lost_out, 0);
    assert_eq!(s.tp.ca_state, CaState::Disorder);

    // 2 arrives: cumulative ACK to 7, reord = 2 < prior fack 7; after the ACK nothing is
    // SACKed, fack = snd_una = 7, metric 5 > 3: tp->reordering = 5, reord_seen 2.
    s.on_ack(SimTime(125 * MS), &ack(7, None), &mut io);
    assert_eq!(s.reorder_counts(), (0, 5, 2));
    assert_eq!(s.stats.retransmitted_packets, 0);
    assert_eq!(s.stats.recoveries, 0);
}

#[test]
fn reordering_is_capped_at_tcp_max_reordering() {
    // Segment 0 delayed past 400 SACKed segments would give metric 401; the cap is
    // sysctl_tcp_max_reordering = 300. A large initial window: 500 segments at t = 0.
    let mut s = sender_with(Box::new(Reno), AppConfig::Bulk);
    s.rack_enabled = true;
    s.tp.snd_cwnd = 500;
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    s.tp.snd_cwnd = 500;
    s.try_send(SimTime(0), &mut io);
    assert!(s.tp.snd_nxt >= 402);
    // One reordering event first, so that RACK gives 0 its window (see above).
    s.on_ack(SimTime(100 * MS), &ack(0, Some((1, 2))), &mut io);
    s.on_ack(SimTime(101 * MS), &ack(2, None), &mut io);
    s.on_ack(SimTime(110 * MS), &ack(2, Some((3, 403))), &mut io);
    s.on_ack(SimTime(111 * MS), &ack(403, None), &mut io);
    assert_eq!(s.reorder_counts().1, 300);
}

/// Segment 0 "lost": SACKs of 1..5 at 100..104 ms put the sender in Recovery and
/// retransmit 0 at 102 ms (tcp_sender.rs's PRR case): ssthresh 10 / 2 = 5.
fn spurious_recovery(s: &mut Sender, io: &mut SenderIo) {
    s.start(SimTime(0), io);
    for k in 0..5u64 {
        s.on_ack(SimTime((100 + k) * MS), &ack(0, Some((1, 2 + k))), io);
    }
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    assert_eq!(s.tp.snd_ssthresh, 5);
    assert_eq!(s.stats.retransmitted_packets, 1);
    sent(io);
}

#[test]
fn a_dsack_for_the_only_retransmission_undoes_the_recovery() {
    let mut s = reno();
    let mut io = SenderIo::default();
    spurious_recovery(&mut s, &mut io);
    // The original 0 arrives (late, not lost): cumulative ACK to 6, still below high_seq
    // (snd_nxt at entry), so still Recovery.
    s.on_ack(SimTime(105 * MS), &ack(6, None), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    // Then its retransmission: the receiver reports it with a D-SACK block [0, 1) below
    // the cumulative ACK. undo_retrans: -1 at entry (nothing retransmitted), 1 after the
    // retransmission, 0 after this D-SACK (end 1 <= snd_una 6, > undo_marker 0):
    // tcp_try_undo_dsack. cwnd = Reno's undo_cwnd = max(cwnd, prior_cwnd 10) >= 10, and
    // ssthresh back to prior_ssthresh = tcp_current_ssthresh at entry = max(infinite,
    // 3/4 * 10) = infinite.
    s.on_ack(SimTime(202 * MS), &ack_blocks(6, &[(0, 1)]), &mut io);
    assert_ne!(s.tp.ca_state, CaState::Recovery);
    assert!(s.tp.snd_cwnd >= 10, "cwnd {}", s.tp.snd_cwnd);
    assert!(s.tp.snd_ssthresh > 5, "ssthresh {}", s.tp.snd_ssthresh);
    assert_eq!(s.stats.dsack_segments, 1);
    assert_eq!(s.reorder_counts().0, 1);
}

#[test]
fn a_dsack_the_sender_cannot_explain_is_ignored() {
    // No retransmission was sent: a duplicate the network made (tcp_dsack_seen: dsack_dups
    // > total_retrans) counts nothing.
    let mut s = reno();
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    s.on_ack(SimTime(100 * MS), &ack(2, None), &mut io);
    s.on_ack(SimTime(101 * MS), &ack_blocks(2, &[(0, 1)]), &mut io);
    assert_eq!(s.stats.dsack_segments, 0);
}

#[test]
fn without_dsack_the_recovery_keeps_its_reduction() {
    let mut s = reno();
    let mut io = SenderIo::default();
    spurious_recovery(&mut s, &mut io);
    // Everything acked through high_seq, no D-SACK, no timestamp echo: no undo; cwnd =
    // ssthresh 5 when Recovery ends.
    let high = s.tp.snd_nxt;
    s.on_ack(SimTime(210 * MS), &ack(high, None), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Open);
    assert_eq!(s.tp.snd_ssthresh, 5);
    assert_eq!(s.reorder_counts().0, 0);
}
