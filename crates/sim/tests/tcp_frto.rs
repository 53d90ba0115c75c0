//! F-RTO and the undo of a spurious retransmission timeout (RFC 5682 Sec. 3.1, the
//! SACK-enhanced version Linux 6.18 runs with `tcp_frto` = 2: tcp_input.c
//! `tcp_enter_loss`, `tcp_process_loss`, `tcp_try_undo_loss`, `tcp_xmit_recovery`),
//! driven with hand-made ACKs. Expectations are computed by hand from the kernel's
//! functions (arithmetic in the comments). tcp_sender.rs keeps the sequence with
//! `tcp.frto = false`.
//!
//! Every test starts alike: Reno, segments 0..9 at 0 ms (TSval 1_000_000: the clock is
//! 1_000_000 + ms); at 100 ms ack 1 echoing 1_000_000: RTT 100 ms (srtt 100, rttvar 50,
//! RTO 100 + max(4 x 50, 200) = 300 ms, re-armed for 400 ms; min_rtt = rack.rtt = 100
//! ms); slow start cwnd 11 sends 10 and 11. At 400 ms the RTO fires: segments 1..11 are
//! all older than rack.rtt, so all 11 are marked lost; prior_ssthresh =
//! tcp_current_ssthresh = max(infinite, ...) = infinite, prior_cwnd = 11, ssthresh =
//! max(11 / 2, 2) = 5, cwnd = in flight 0 + 1 = 1, high_seq = 12, F-RTO armed (the state
//! was Open); segment 1 is retransmitted with TSval 1_000_400 (retrans_stamp).

use tcplab_cc::ops::TCP_INFINITE_SSTHRESH;
use tcplab_cc::reno::Reno;
use tcplab_cc::CaState;
use tcplab_sim::config::AppConfig;
use tcplab_sim::net::Packet;
use tcplab_sim::tcp::sender::Sender;
use tcplab_sim::tcp::SenderIo;
use tcplab_sim::time::SimTime;

mod common;
use common::sender::{ack, ack_blocks, sender_with, sent};
use common::MS;

/// The TSval the sender stamps at `ms` (tcp_sender's clock with phase 0).
fn ts(ms: u64) -> u32 {
    1_000_000 + ms as u32
}

/// An ACK echoing `tsecr`.
fn echo(mut p: Packet, tsecr: u32) -> Packet {
    p.tsecr = tsecr;
    p
}

/// The common start (module doc), up to just after the RTO at 400 ms.
fn after_rto() -> (Sender, SenderIo) {
    let mut s = sender_with(Box::new(Reno), AppConfig::Bulk);
    assert!(s.frto_enabled, "F-RTO is on by default (tcp_frto = 2)");
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    sent(&mut io);
    s.on_ack(SimTime(100 * MS), &echo(ack(1, None), ts(0)), &mut io);
    assert_eq!(sent(&mut io), vec![(10, false), (11, false)]);
    assert_eq!(s.tp.snd_cwnd, 11);
    s.on_rto(SimTime(400 * MS), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Loss);
    assert_eq!(
        (s.tp.snd_cwnd, s.tp.snd_ssthresh, s.tp.lost_out),
        (1, 5, 11)
    );
    assert_eq!(sent(&mut io), vec![(1, true)]);
    (s, io)
}

/// (undos, spurious RTOs).
fn undos(s: &Sender) -> (u64, u64) {
    (s.reorder_counts().0, s.stats.spurious_rtos)
}

#[test]
fn the_late_original_s_ack_undoes_a_spurious_rto_by_its_timestamp() {
    let (mut s, mut io) = after_rto();
    // 450 ms: a delay spike held the originals; ack 3 echoes their TSval 1_000_000, older
    // than retrans_stamp 1_000_400: snd_una advanced and tcp_may_undo (Eifel,
    // tcp_packet_delayed) -> tcp_try_undo_loss(false): lost marks cleared (lost_out 0),
    // cwnd = undo_cwnd = max(1, prior_cwnd 11) = 11, ssthresh = prior_ssthresh
    // (infinite > 5), Open. Then Reno's slow start on the 2 acked (cwnd 11 < 2 x
    // max_packets_out 11: cwnd-limited): 13. In flight = 12 - 3 = 9: new 12..15, and no
    // retransmission.
    s.on_ack(SimTime(450 * MS), &echo(ack(3, None), ts(0)), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Open);
    assert_eq!(s.tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
    assert_eq!((s.tp.snd_cwnd, s.tp.lost_out), (13, 0));
    assert_eq!(undos(&s), (1, 0));
    assert_eq!(
        sent(&mut io),
        vec![(12, false), (13, false), (14, false), (15, false)]
    );
    // The rest of the window arrives: nothing is retransmitted, ever.
    s.on_ack(SimTime(460 * MS), &echo(ack(12, None), ts(100)), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Open);
    assert_eq!((s.stats.rto_count, s.stats.retransmitted_packets), (1, 1));
    assert!(sent(&mut io).iter().all(|&(_, retrans)| !retrans));
}

#[test]
fn the_original_s_late_ack_does_not_advance_rack_by_the_retransmission() {
    let (mut s, mut io) = after_rto();
    // 600 ms, after a 600 ms outage: ack 2 echoes the originals' TSval 1_000_000. It
    // covers segment 1 alone, whose latest copy (TSval 1_000_400) left 200 ms ago, more
    // than min_rtt 100 ms, so tcp_rack_advance's ambiguity test would take it (rack.rtt
    // 200 ms, rack.mstamp 400 ms), and segments 2..9, sent at 0 ms, 600 ms ago, more
    // than 200 ms + reo_wnd, would be marked lost again once the RTO is undone, and
    // resent in a new Recovery. But the echo is older than that copy
    // (tcp_skb_spurious_retrans), so tcp_clean_rtx_queue does not advance RACK with it:
    // nothing is delivered for RACK, nothing is marked. The RTO is undone as at 450 ms
    // above: cwnd max(1, prior_cwnd 11) = 11, Reno's slow start on one acked: 12, Open;
    // in flight 12 - 2 = 10, so two new segments, 12 and 13.
    s.on_ack(SimTime(600 * MS), &echo(ack(2, None), ts(0)), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Open);
    assert_eq!((s.tp.snd_cwnd, s.tp.lost_out), (12, 0));
    assert_eq!(undos(&s), (1, 0));
    assert_eq!(sent(&mut io), vec![(12, false), (13, false)]);
    // The rest of the window arrives: nothing is retransmitted, ever.
    s.on_ack(SimTime(610 * MS), &echo(ack(12, None), ts(0)), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Open);
    assert_eq!(s.stats.retransmitted_packets, 1);
    assert!(sent(&mut io).iter().all(|&(_, retrans)| !retrans));
}

#[test]
fn a_sack_of_never_retransmitted_data_undoes_the_rto_by_frto_step_3b() {
    let (mut s, mut io) = after_rto();
    // 450 ms: a SACK of original segment 5 (5 < high_seq 12, never retransmitted:
    // FLAG_ORIG_SACK_ACKED), no timestamp echo (so no Eifel test): F-RTO step 3.b ->
    // tcp_try_undo_loss(true): cwnd = max(1, 11) = 11, ssthresh infinite, lost_out 0,
    // TCPSPURIOUSRTOS + 1. Then tcp_try_to_open: SACKed data and a retransmission out ->
    // Disorder. No data acked, so no slow start: in flight = 11 - 1 sacked + 1 retrans =
    // 11 = cwnd: nothing sent.
    s.on_ack(SimTime(450 * MS), &ack(1, Some((5, 6))), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Disorder);
    assert_eq!(
        (s.tp.snd_cwnd, s.tp.snd_ssthresh, s.tp.lost_out),
        (11, TCP_INFINITE_SSTHRESH, 0)
    );
    assert_eq!(undos(&s), (1, 1));
    assert!(sent(&mut io).is_empty());
    // Everything acked: Open, one retransmission in all (the timeout's).
    s.on_ack(SimTime(460 * MS), &ack(12, None), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Open);
    assert_eq!(s.stats.retransmitted_packets, 1);
}

#[test]
fn a_real_loss_rto_sends_new_data_first_then_the_sack_proves_it_and_recovery_goes_on() {
    let (mut s, mut io) = after_rto();
    // 500 ms: ack 2, the retransmission of 1 (echoes its TSval 1_000_400, not older than
    // retrans_stamp: no undo). F-RTO step 2.b: snd_nxt 12 = high_seq, snd_una advanced
    // short of it -> high_seq = 12, REXMIT_NEW. Slow start in Loss: cwnd 1 -> 2; in flight
    // = 10 - 10 lost + 0 = 0: two NEW segments, 12 and 13, instead of retransmitting 2, 3.
    s.on_ack(SimTime(500 * MS), &echo(ack(2, None), ts(400)), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Loss);
    assert_eq!(s.tp.snd_cwnd, 2);
    assert_eq!(sent(&mut io), vec![(12, false), (13, false)]);

    // 600 ms: a duplicate ACK SACKing 12 and 13 (sent after high_seq, so not
    // FLAG_ORIG_SACK_ACKED): step 3.a, the loss was real, F-RTO ends; REXMIT_LOST. No
    // data acked: cwnd stays 2; in flight = 12 - 2 sacked - 10 lost + 0 = 0: the
    // conventional recovery retransmits 2 and 3.
    s.on_ack(
        SimTime(600 * MS),
        &echo(ack_blocks(2, &[(12, 14)]), ts(500)),
        &mut io,
    );
    assert_eq!(s.tp.ca_state, CaState::Loss);
    assert_eq!(s.tp.snd_cwnd, 2);
    assert_eq!(sent(&mut io), vec![(2, true), (3, true)]);

    // 700 ms: ack 4 (both retransmissions): slow start min(2 + 2, ssthresh 5) = 4; in
    // flight = 10 - 2 - 8 + 0 = 0: retransmit 4..7. Nothing was undone.
    s.on_ack(
        SimTime(700 * MS),
        &echo(ack_blocks(4, &[(12, 14)]), ts(600)),
        &mut io,
    );
    assert_eq!((s.tp.ca_state, s.tp.snd_cwnd), (CaState::Loss, 4));
    assert_eq!(
        sent(&mut io),
        vec![(4, true), (5, true), (6, true), (7, true)]
    );
    assert_eq!(s.tp.snd_ssthresh, 5);
    assert_eq!(undos(&s), (0, 0));
}

#[test]
fn without_frto_the_first_ack_after_a_real_loss_rto_retransmits() {
    let mut s = sender_with(Box::new(Reno), AppConfig::Bulk);
    s.frto_enabled = false;
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    sent(&mut io);
    s.on_ack(SimTime(100 * MS), &echo(ack(1, None), ts(0)), &mut io);
    sent(&mut io);
    s.on_rto(SimTime(400 * MS), &mut io);
    assert_eq!(sent(&mut io), vec![(1, true)]);
    // tcp_frto = 0: the same ACK as above retransmits 2 and 3 (cwnd 2, in flight 0).
    s.on_ack(SimTime(500 * MS), &echo(ack(2, None), ts(400)), &mut io);
    assert_eq!(s.tp.snd_cwnd, 2);
    assert_eq!(sent(&mut io), vec![(2, true), (3, true)]);
}
