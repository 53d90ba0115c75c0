//! The sender driven by hand-made ACKs: recovery entry, PRR, recovery exit, RTO and
//! Loss, and internal pacing, with expectations computed by hand from the kernel's
//! formulas (arithmetic in the comments).

use std::sync::{Arc, Mutex};

use tcplab_cc::reno::Reno;
use tcplab_cc::CaState;
use tcplab_sim::config::AppConfig;
use tcplab_sim::sched::Fire;
use tcplab_sim::tcp::sender::Sender;
use tcplab_sim::tcp::{SenderIo, SenderTimer};
use tcplab_sim::time::SimTime;

mod common;
use common::sender::{ack, ack_blocks, logged_sender, sender_with, sent, Log, Pacer};
use common::MS;

/// Reno logging `ssthresh` and `set_state` with the state the sender shows at the time.
fn sender(log: &Log) -> Sender {
    logged_sender(log, AppConfig::Bulk, false)
}

#[test]
fn three_sacks_enter_recovery_and_prr_paces_the_reduction() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut s = sender(&log);
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    assert_eq!(sent(&mut io).len(), 10); // initial window, segments 0..9

    // Segment 0 is lost; 1, 2 arrive: Disorder, and each SACK frees room for one new
    // segment (in flight = 10 - sacked < cwnd 10).
    s.on_ack(SimTime(100 * MS), &ack(0, Some((1, 2))), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Disorder);
    assert_eq!(sent(&mut io), vec![(10, false)]);
    s.on_ack(SimTime(101 * MS), &ack(0, Some((1, 3))), &mut io);
    assert_eq!(sent(&mut io), vec![(11, false)]);

    // Third SACK: IsLost(0) (3 segments above it SACKed) -> Recovery. ssthresh = 10/2 = 5.
    // PRR: in flight = packets_out 12 - sacked 3 - lost 1 = 8 > ssthresh, so
    // sndcnt = ceil(5 * prr_delivered 1 / prior_cwnd 10) - prr_out 0 = 1; cwnd = 8 + 1 = 9:
    // exactly the fast retransmit of segment 0.
    s.on_ack(SimTime(102 * MS), &ack(0, Some((1, 4))), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    assert_eq!((s.tp.snd_ssthresh, s.tp.snd_cwnd), (5, 9));
    assert_eq!(sent(&mut io), vec![(0, true)]);

    // Next SACK: in flight = 12 - 4 - 1 + 1 = 8; prr_delivered 2: ceil(10/10) - 1 = 0;
    // cwnd = 8, nothing sent.
    s.on_ack(SimTime(103 * MS), &ack(0, Some((1, 5))), &mut io);
    assert_eq!(s.tp.snd_cwnd, 8);
    assert!(sent(&mut io).is_empty());

    // Next: in flight = 12 - 5 - 1 + 1 = 7; prr_delivered 3: ceil(15/10) - 1 = 1; cwnd 8:
    // one new segment.
    s.on_ack(SimTime(104 * MS), &ack(0, Some((1, 6))), &mut io);
    assert_eq!(s.tp.snd_cwnd, 8);
    assert_eq!(sent(&mut io), vec![(12, false)]);

    // The retransmission arrives: ack 6. snd_una 6 < high_seq 12: still Recovery.
    // In flight = 13 - 6 = 7; prr_delivered 4: ceil(20/10) - prr_out 2 = 0; cwnd 7.
    s.on_ack(SimTime(150 * MS), &ack(6, None), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    assert_eq!(s.tp.snd_cwnd, 7);
    sent(&mut io);

    // Everything acked: Recovery ends with cwnd = ssthresh = 5, then Reno's congestion
    // avoidance on the 7 newly acked segments: cnt 7 >= w 5 -> cwnd 6, cnt 2.
    s.on_ack(SimTime(160 * MS), &ack(13, None), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Open);
    assert_eq!((s.tp.snd_cwnd, s.tp.snd_cwnd_cnt), (6, 2));
    assert_eq!(s.stats.retransmitted_packets, 1);

    // The algorithm saw each state change before it happened, and ssthresh was asked
    // while still in Disorder, before the announcement of Recovery.
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log,
        vec![
            "set_state Open -> Disorder",
            "ssthresh in Disorder",
            "set_state Disorder -> Recovery",
            "set_state Recovery -> Open"
        ]
    );
}

/// With `tcp.frto = false` (`tcp_frto = 0`): the conventional RTO recovery, the model
/// before 0.5.1 (tcp_frto.rs has F-RTO's sequence for the same start).
#[test]
fn rto_enters_loss_with_cwnd_one_and_slow_starts_the_retransmissions() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut s = sender(&log);
    s.frto_enabled = false;
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    // The RTO was armed at 0 + TCP_TIMEOUT_INIT = 1 s.
    let (t, kind, gen) = io.timers[0];
    assert_eq!((t, kind), (SimTime(1_000 * MS), SenderTimer::Rto));
    sent(&mut io);
    assert_eq!(s.rto_timer.on_fire(t, gen), Fire::Expired);
    s.on_rto(t, &mut io);
    // Loss: all 10 marked lost, ssthresh = 10/2 = 5, cwnd = in flight 0 + 1; the head is
    // retransmitted; the RTO doubles to 2 s.
    assert_eq!(s.tp.ca_state, CaState::Loss);
    assert_eq!(
        (s.tp.snd_cwnd, s.tp.snd_ssthresh, s.tp.lost_out),
        (1, 5, 10)
    );
    assert_eq!(io.timers[0].0, SimTime(3_000 * MS));
    assert_eq!(s.rto_timer.deadline(), Some(SimTime(3_000 * MS)));
    assert_eq!(sent(&mut io), vec![(0, true)]);

    // Its ACK: slow start 1 -> 2 (Linux grows cwnd in Loss), two more retransmissions.
    s.on_ack(SimTime(1_050 * MS), &ack(1, None), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Loss);
    assert_eq!(s.tp.snd_cwnd, 2);
    assert_eq!(sent(&mut io), vec![(1, true), (2, true)]);
    let log = log.lock().unwrap().clone();
    assert_eq!(log, vec!["ssthresh in Open", "set_state Open -> Loss"]);
}

#[test]
fn internal_pacing_spaces_departures_by_size_over_rate_after_ten_segments() {
    // A pacer at one segment per millisecond with cwnd 100.
    let mut s = sender_with(Box::new(Pacer { cwnd: Some(100) }), AppConfig::Bulk);
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    // Segments 1-9 are not paced (data_segs_out < 10); the 10th sets the next departure
    // to 0 + 1448 / 1_448_000 s = 1 ms.
    assert_eq!(io.out.len(), 10);
    let pacing: Vec<_> = io
        .timers
        .iter()
        .filter(|t| t.1 == SenderTimer::Pacing)
        .cloned()
        .collect();
    assert_eq!(pacing.len(), 1);
    let (t, _, gen) = pacing[0];
    assert_eq!(t, SimTime(MS));
    io.out.clear();
    io.timers.clear();
    assert_eq!(s.pacing_timer.on_fire(t, gen), Fire::Expired);
    s.try_send(t, &mut io);
    // One segment per millisecond: exactly one now, the next at 2 ms.
    assert_eq!(io.out.len(), 1);
    let next: Vec<_> = io
        .timers
        .iter()
        .filter(|t| t.1 == SenderTimer::Pacing)
        .map(|t| t.0)
        .collect();
    assert_eq!(next, vec![SimTime(2 * MS)]);
}

fn reno_sender(rack: bool) -> Sender {
    let mut s = sender_with(Box::new(Reno), AppConfig::Bulk);
    s.rack_enabled = rack;
    s
}

/// Segment 0 lost; SACKs for 1..3 put the sender in Recovery and segment 0 is
/// retransmitted at 102 ms (as in the PRR test above), then segment 12 is sent at 104 ms.
fn into_recovery(s: &mut Sender, io: &mut SenderIo) {
    s.start(SimTime(0), io);
    s.on_ack(SimTime(100 * MS), &ack(0, Some((1, 2))), io);
    s.on_ack(SimTime(101 * MS), &ack(0, Some((1, 3))), io);
    s.on_ack(SimTime(102 * MS), &ack(0, Some((1, 4))), io);
    s.on_ack(SimTime(103 * MS), &ack(0, Some((1, 5))), io);
    s.on_ack(SimTime(104 * MS), &ack(0, Some((1, 6))), io);
    sent(io);
}

#[test]
fn rack_detects_a_lost_retransmission_without_waiting_for_the_rto() {
    let mut s = reno_sender(true);
    let mut io = SenderIo::default();
    into_recovery(&mut s, &mut io);
    assert_eq!(s.stats.retransmitted_packets, 1);
    // The retransmission of 0 (sent at 102 ms) is lost too; segment 12, sent at 104 ms,
    // is SACKed at 204 ms. RACK: rack.mstamp = 104 ms, rack.rtt = 100 ms, reo_wnd = 0 in
    // Recovery; for the copy of 0: remaining = 100 + 0 - (204 - 102) = -2 ms <= 0: lost
    // again, and retransmitted first (lowest lost sequence) at once. (Segments 6..11,
    // sent before 12 and unSACKed for >= 100 ms, are marked lost by the same rule.)
    s.on_ack(SimTime(204 * MS), &ack(0, Some((12, 13))), &mut io);
    assert_eq!(sent(&mut io).first(), Some(&(0, true)));
    assert_eq!(s.stats.rto_count, 0);
}

#[test]
fn without_rack_a_lost_retransmission_waits_for_the_rto() {
    let mut s = reno_sender(false);
    let mut io = SenderIo::default();
    into_recovery(&mut s, &mut io);
    s.on_ack(SimTime(204 * MS), &ack(0, Some((12, 13))), &mut io);
    // RFC 6675 marks each hole once; segment 0 is already marked and retransmitted.
    assert!(!sent(&mut io).contains(&(0, true)));
    assert_eq!(s.stats.retransmitted_packets, 1);
}

#[test]
fn rack_reordering_timer_marks_the_hole_after_a_quarter_min_rtt() {
    let mut s = reno_sender(true);
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    sent(&mut io);
    // One SACK at 100 ms (all sent at 0): srtt = min_rtt = rack.rtt = 100 ms; Open with
    // sacked_out 1 < 3, so reo_wnd = min(min_rtt / 4, srtt) = 25 ms; for segment 0:
    // remaining = 100 + 25 - 100 = 25 ms -> timer at 100 + 25 + TCP_TIMEOUT_MIN 2 = 127 ms.
    s.on_ack(SimTime(100 * MS), &ack(0, Some((1, 2))), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Disorder);
    let reo: Vec<_> = io
        .timers
        .iter()
        .filter(|t| t.1 == SenderTimer::Reo)
        .cloned()
        .collect();
    assert_eq!(reo.len(), 1);
    assert_eq!(reo[0].0, SimTime(127 * MS));
    assert_eq!(sent(&mut io), vec![(10, false)]);
    assert_eq!(s.reo_timer.on_fire(reo[0].0, reo[0].2), Fire::Expired);
    // At 127 ms: remaining = 100 + 25 - 127 < 0: segment 0 lost, Recovery, ssthresh 5.
    // PRR with 1 delivered: in flight = 11 - 1 - 1 = 9 > 5, sndcnt = ceil(5 * 1 / 10) = 1,
    // cwnd = 9 + 1 = 10: the retransmission of 0.
    s.on_reo_timer(SimTime(127 * MS), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    assert_eq!((s.tp.snd_ssthresh, s.tp.snd_cwnd), (5, 10));
    assert_eq!(sent(&mut io), vec![(0, true)]);
}

#[test]
fn sack_blocks_that_grow_and_merge_tag_every_segment_once() {
    let mut s = reno_sender(true);
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io); // segments 0..9 out
                                  // [2,4): 2 SACKed. Then [2,6): 4 and 5 added. Then [8,9) before [2,6): 8 added. Then
                                  // 6 and 7 arrive and the blocks merge into [2,9): 6 and 7 added. 0 and 1 never.
    let steps: [(&[(u64, u64)], u32); 4] = [
        (&[(2, 4)], 2),
        (&[(2, 6)], 4),
        (&[(8, 9), (2, 6)], 5),
        (&[(2, 9)], 7),
    ];
    for (k, (b, sacked)) in steps.iter().enumerate() {
        s.on_ack(SimTime((100 + k as u64) * MS), &ack_blocks(0, b), &mut io);
        assert_eq!(s.tp.sacked_out, *sacked, "step {k}");
    }
    // delivered counts each SACKed segment once.
    assert_eq!(s.tp.delivered, 7);
}

/// Reno with an initial window of 100 segments, so that the receiver's window, not
/// cwnd, bounds the first flights.
fn wide_reno() -> Sender {
    let app = tcplab_sim::app::App {
        kind: AppConfig::Bulk,
        start: SimTime(0),
        stop: SimTime(u64::MAX),
    };
    let mut s = Sender::new(0, Box::new(Reno), 1448, 52, 100, app);
    s.tlp_enabled = false;
    s
}

#[test]
fn new_data_stays_inside_the_receivers_window() {
    let mut s = wide_reno();
    let mut io = SenderIo::default();
    // The SYN-ACK's 65160 bytes: segment k ends at (k + 1) x 1448, so 45 segments fit.
    s.set_peer_window(65_160);
    s.start(SimTime(0), &mut io);
    assert_eq!(sent(&mut io).len(), 45);
    // ACK of 10 offering 64512 bytes: the edge moves to 10 x 1448 + 64512 = 78992;
    // (k + 1) x 1448 <= 78992 for k <= 53: segments 45..=53.
    let mut a = ack(10, None);
    a.wnd = 64_512;
    s.on_ack(SimTime(100 * MS), &a, &mut io);
    let out: Vec<u64> = sent(&mut io).iter().map(|p| p.0).collect();
    assert_eq!(out, (45..54).collect::<Vec<_>>());
    // An ACK of everything sent with room for 200 segments: the sender fills cwnd. Reno
    // did not grow it: a window-limited sender is not cwnd-limited (tcp_is_cwnd_limited
    // in slow start: cwnd 100 < 2 x max_packets_out = 90 fails), so cwnd stays 100 and
    // 100 new segments go, all inside the edge 54 + 200 = 254.
    let mut a = ack(54, None);
    a.wnd = 200 * 1448;
    s.on_ack(SimTime(200 * MS), &a, &mut io);
    assert_eq!(s.tp.snd_cwnd, 100);
    assert_eq!(sent(&mut io).len(), 100);
    // Window-limited from 0 to 200 ms (the ACK at 100 ms left it limited again); at 200 ms
    // cwnd, not the window, stopped the sender.
    assert_eq!(s.rwnd_limited_ns(SimTime(300 * MS)), 200 * MS);
}

#[test]
fn without_a_peer_window_the_sender_is_never_window_limited() {
    let mut s = wide_reno();
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    assert_eq!(sent(&mut io).len(), 100);
    assert_eq!(s.rwnd_limited_ns(SimTime(MS)), 0);
}
