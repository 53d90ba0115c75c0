//! Sender behaviours checked against Linux (net/ipv4/tcp_input.c, tcp_output.c,
//! tcp_recovery.c, tcp_timer.c) during the engine review: each test drives the sender
//! with hand-made ACKs and timer expiries and compares with what the kernel's functions
//! compute (arithmetic in the comments). The logged fixture turns F-RTO off (tcp_frto.rs
//! tests it) and every fixture turns tail loss probes off (tcp_tlp.rs tests them), so the
//! kernel meant is one with `tcp_frto = 0` and `tcp_early_retrans = 0`.

use std::sync::{Arc, Mutex};

use tcplab_cc::CaState;
use tcplab_sim::config::AppConfig;
use tcplab_sim::net::Packet;
use tcplab_sim::tcp::sender::Sender;
use tcplab_sim::tcp::SenderIo;
use tcplab_sim::time::SimTime;

mod common;
use common::sender::{ack, sender_with, sent, take, Log, Pacer};
use common::MS;

/// Reno that logs `ssthresh`, `set_state`, `pkts_acked` and `in_ack_event`.
fn logged_sender(log: &Log, app: AppConfig) -> Sender {
    let mut s = common::sender::logged_sender(log, app, true);
    s.frto_enabled = false;
    s
}

#[test]
fn rto_with_rack_spares_segments_sent_within_rack_rtt_and_recounts_lost_retransmissions() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut s = logged_sender(&log, AppConfig::Bulk);
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io); // segments 0..9 at 0, RTO armed for 1 s
    sent(&mut io);

    // 900 ms: segment 9 SACKed. RTT 900 ms (srtt 900, rttvar 450, RTO 900 + 1800 =
    // 2.7 s; the pending RTO at 1 s is not moved: the SACKed segment was not sent before
    // the head's last transmission). rack.rtt = 900 ms. Disorder; in flight 10 - 1 = 9 <
    // cwnd 10: segment 10 goes out at 900 ms.
    s.on_ack(SimTime(900 * MS), &ack(0, Some((9, 10))), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Disorder);
    assert_eq!(sent(&mut io), vec![(10, false)]);

    // RTO at 1 s. tcp_timeout_mark_lost with RACK: the head always; segments 1..8 sent at
    // 0: rack.rtt 900 - age 1000 = -100 ms <= 0: lost; 9 SACKed; 10 sent at 900 ms:
    // 900 - 100 = 800 ms > 0: not marked. lost_out = 9, tp->lost = 9.
    // ssthresh = max(10 / 2, 2) = 5; cwnd = in flight + 1 = (11 - 1 - 9 + 0) + 1 = 2.
    s.on_rto(SimTime(1_000 * MS), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Loss);
    assert_eq!(
        (s.tp.snd_cwnd, s.tp.snd_ssthresh, s.tp.lost_out, s.tp.lost),
        (2, 5, 9, 9)
    );
    assert_eq!(sent(&mut io), vec![(0, true)]);

    // Second RTO (backed off: 1 s + 2 * 2.7 s = 6.4 s). The head is LOST|SACKED_RETRANS:
    // tcp_mark_skb_lost forgets the copy in flight and counts it in tp->lost again (+1);
    // segment 10 (age 5.5 s > 900 ms) is now marked (+1): tp->lost = 9 + 1 + 1 = 11,
    // lost_out = 10. No new reduction (Loss, icsk_retransmits = 1): ssthresh stays 5;
    // cwnd = (11 - 1 - 10 + 0) + 1 = 1.
    s.on_rto(SimTime(6_400 * MS), &mut io);
    assert_eq!(
        (s.tp.snd_cwnd, s.tp.snd_ssthresh, s.tp.lost_out, s.tp.lost),
        (1, 5, 10, 11)
    );
    assert_eq!(sent(&mut io), vec![(0, true)]);
}

#[test]
fn rack_finding_a_lost_retransmission_in_loss_moves_to_recovery_with_a_new_ssthresh() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut s = logged_sender(&log, AppConfig::Bulk);
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    sent(&mut io);
    // 100 ms: ack 1. RTT 100 ms: srtt 100, RTO 100 + max(4 * 50, 200) = 300 ms, re-armed
    // for 400 ms; min_rtt = rack.rtt = 100 ms. Slow start cwnd 11: segments 10, 11.
    s.on_ack(SimTime(100 * MS), &ack(1, None), &mut io);
    assert_eq!(sent(&mut io), vec![(10, false), (11, false)]);
    // RTO at 400 ms: every segment is older than rack.rtt (100 ms): all 11 marked lost.
    // ssthresh = max(11 / 2, 2) = 5, cwnd = 0 + 1 = 1; segment 1 retransmitted.
    s.on_rto(SimTime(400 * MS), &mut io);
    assert_eq!(
        (s.tp.snd_cwnd, s.tp.snd_ssthresh, s.tp.lost_out),
        (1, 5, 11)
    );
    assert_eq!(sent(&mut io), vec![(1, true)]);
    // 500 ms: ack 2 (the retransmission; RTT 100 ms is not below min_rtt, so RACK
    // advances: rack.mstamp = 400 ms). Slow start in Loss: cwnd 2; in flight 0:
    // retransmit 2 and 3.
    s.on_ack(SimTime(500 * MS), &ack(2, None), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Loss);
    assert_eq!(s.tp.snd_cwnd, 2);
    assert_eq!(sent(&mut io), vec![(2, true), (3, true)]);
    take(&log);

    // 600 ms: the retransmission of 3 is SACKed, that of 2 is missing. RACK: mstamp =
    // 500 ms, end_seq 4 (sent after 2's copy by the end_seq tie-break), rtt 100 ms,
    // reo_wnd = 0 (state >= Recovery); for 2: remaining = 100 + 0 - (600 - 500) = 0 <= 0:
    // lost again, retrans_out 1 -> 0 (FLAG_LOST_RETRANS). tcp_fastretrans_alert falls
    // through from Loss: lost_out 9 > 0 -> tcp_enter_recovery: prior_cwnd 2,
    // ssthresh = max(2 / 2, 2) = 2, Recovery.
    // PRR: in flight = 10 - (1 sacked + 9 lost) + 0 = 0; delta = 2 - 0 = 2 >= 0;
    // sndcnt = min(2, max(prr_delivered 1 - prr_out 0, 1)) = 1 (snd_una did not advance);
    // cwnd = 0 + 1 = 1: one retransmission, of 2.
    s.on_ack(SimTime(600 * MS), &ack(2, Some((3, 4))), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    assert_eq!((s.tp.snd_ssthresh, s.tp.snd_cwnd), (2, 1));
    assert_eq!(sent(&mut io), vec![(2, true)]);
    let log = take(&log);
    let hooks: Vec<&String> = log
        .iter()
        .filter(|l| l.starts_with("ssthresh") || l.starts_with("set_state"))
        .collect();
    assert_eq!(
        hooks,
        vec!["ssthresh in Loss", "set_state Loss -> Recovery"]
    );
}

#[test]
fn a_full_window_stopped_by_the_pacing_clock_is_cwnd_limited() {
    // A pacer at one segment per millisecond with the initial cwnd of 10.
    let mut s = sender_with(Box::new(Pacer { cwnd: None }), AppConfig::Bulk);
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    // Ten unpaced segments fill cwnd 10; the loop then stops on the pacing clock
    // (next departure at 1 ms). tcp_write_xmit: is_cwnd_limited |= in flight 10 >= cwnd
    // 10, so tcp_cwnd_validate records a cwnd-limited window of max_packets_out 10.
    assert_eq!(sent(&mut io).len(), 10);
    assert!(s.tp.is_cwnd_limited);
    assert_eq!(s.tp.max_packets_out, 10);
}

#[test]
fn sack_of_data_sent_before_the_head_retransmission_rearms_the_rto() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut s = logged_sender(&log, AppConfig::Bulk);
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    // SACKs of 1, 2, 3 (all sent at 0) at 100, 101, 102 ms: RTT samples 100, 101, 102 ms
    // (tcp_rtt_estimator, us): srtt_us/8 100_000 -> 100_125 -> 100_359 (802_875 / 8);
    // mdev_us 200_000 -> 151_000 -> 115_125, under rttvar_us = rto_min 200_000; so RTO =
    // srtt + 200 ms = 300_359 us -> 301 jiffies (ms, rounded up). None of these moves the
    // RTO (each SACKed segment was sent with the head, not before it). At 102 ms segment 0
    // is lost (Recovery) and retransmitted; retransmitting the head re-arms: 102 + 301 ms.
    s.on_ack(SimTime(100 * MS), &ack(0, Some((1, 2))), &mut io);
    s.on_ack(SimTime(101 * MS), &ack(0, Some((1, 3))), &mut io);
    s.on_ack(SimTime(102 * MS), &ack(0, Some((1, 4))), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    assert_eq!(s.rto_timer.deadline(), Some(SimTime(403 * MS)));
    // 103 ms: SACK of 4, sent at 0, before the head's retransmission at 102 ms:
    // sack_rtt 103 ms > 103 - 102 = 1 ms, so the RTO is re-armed (FLAG_SET_XMIT_TIMER).
    // srtt_us = 802_875 + (103_000 - 100_359) = 805_516, /8 = 100_689; RTO = 300_689 us
    // -> 301 ms; deadline = 103 + 301 = 404 ms.
    s.on_ack(SimTime(103 * MS), &ack(0, Some((1, 5))), &mut io);
    assert_eq!(s.rto_timer.deadline(), Some(SimTime(404 * MS)));
}

#[test]
fn ack_hooks_report_kernel_ack_event_flags() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut s = logged_sender(&log, AppConfig::Bulk);
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    take(&log);
    // CA_ACK_SLOWPATH = 1, CA_ACK_WIN_UPDATE = 2.
    // A cumulative advance carrying SACK (slow path, window update): 1 | 2 = 3.
    s.on_ack(SimTime(100 * MS), &ack(1, Some((2, 3))), &mut io);
    // A duplicate with new SACK (slow path, no update): 1.
    s.on_ack(SimTime(101 * MS), &ack(1, Some((2, 4))), &mut io);
    // A pure cumulative advance (fast path): 2.
    s.on_ack(SimTime(102 * MS), &ack(4, None), &mut io);
    let events: Vec<String> = take(&log)
        .into_iter()
        .filter(|l| l.starts_with("in_ack_event"))
        .collect();
    assert_eq!(
        events,
        vec!["in_ack_event 3", "in_ack_event 1", "in_ack_event 2"]
    );
}

#[test]
fn cong_avoid_stamps_cwnd_even_when_the_application_limits_growth() {
    let log = Arc::new(Mutex::new(Vec::new()));
    // 3 segments of data only: never cwnd-limited (slow start: cwnd 10 >= 2 *
    // max_packets_out 3), so Reno does not grow cwnd; tcp_cong_avoid still sets
    // snd_cwnd_stamp to the ACK's time.
    let mut s = logged_sender(&log, AppConfig::Finite { bytes: 3 * 1448 });
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    assert_eq!(sent(&mut io).len(), 3);
    s.on_ack(SimTime(100 * MS), &ack(2, None), &mut io);
    assert_eq!(s.tp.snd_cwnd, 10);
    assert_eq!(s.tp.snd_cwnd_stamp_us, 100_000);
}

#[test]
fn last_segment_of_a_finite_transfer_is_acked_at_once() {
    use tcplab_sim::tcp::receiver::Receiver;
    // 19 full segments + 104 bytes = 27_616 bytes, delayed ACKs on.
    let total = 19 * 1448 + 104;
    let mut r = Receiver::new(0, 1448, 52, true, Some(total));
    let seg = |seq: u64, len: u32| Packet::data(0, seq, len, 52, false);
    // Segments 0..15: the 16 quick ACKs. 16: delayed (timer); 17: second full segment,
    // ACK; 18: delayed again.
    for s in 0..16 {
        assert!(r.on_data(SimTime(0), &seg(s, 1448)).ack.is_some());
    }
    assert!(r.on_data(SimTime(0), &seg(16, 1448)).ack.is_none());
    assert!(r.on_data(SimTime(0), &seg(17, 1448)).ack.is_some());
    assert!(r.on_data(SimTime(0), &seg(18, 1448)).ack.is_none());
    // 19, the 104-byte tail (PSH): rcv_nxt - rcv_wup = 1448 + 104 > rcv_mss, and the
    // pushed segment is ACKed once read, rather than after the 40 ms timer.
    let a = r.on_data(SimTime(0), &seg(19, 104)).ack;
    assert_eq!(a.map(|p| p.seq), Some(20));
}

#[test]
fn an_ack_with_nothing_outstanding_reaches_no_congestion_hook() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut s = logged_sender(&log, AppConfig::Finite { bytes: 1448 });
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    s.on_ack(SimTime(100 * MS), &ack(1, None), &mut io);
    assert_eq!(take(&log), vec!["pkts_acked 1", "in_ack_event 2"]);
    // A duplicate ACK (e.g. for a spurious retransmission) after everything is acked:
    // tcp_ack jumps to no_queue (prior_packets == 0) before tcp_clean_rtx_queue,
    // tcp_rate_gen and tcp_cong_control.
    s.on_ack(SimTime(101 * MS), &ack(1, None), &mut io);
    assert!(take(&log).is_empty());
}

/// Reno that records the `rtt_us` of every `pkts_acked` (the kernel's `ca_rtt_us`).
struct RttLog(Arc<Mutex<Vec<i64>>>);

impl tcplab_cc::CongestionOps for RttLog {
    fn name(&self) -> &'static str {
        "rtt-log"
    }
    fn ssthresh(&mut self, tp: &tcplab_cc::CcView) -> u32 {
        tcplab_cc::reno::Reno.ssthresh(tp)
    }
    fn cong_avoid(&mut self, tp: &mut tcplab_cc::CcView, ack: u64, acked: u32) {
        tcplab_cc::reno::Reno.cong_avoid(tp, ack, acked)
    }
    fn pkts_acked(&mut self, _tp: &mut tcplab_cc::CcView, s: &tcplab_cc::AckSample) {
        self.0.lock().unwrap().push(s.rtt_us);
    }
}

/// An ACK of everything below `a` echoing `tsecr`.
fn ack_ts(a: u64, tsecr: u32) -> Packet {
    let mut p = ack(a, None);
    p.tsecr = tsecr;
    p
}

#[test]
fn an_ack_of_a_retransmission_samples_rtt_from_the_echoed_timestamp() {
    let rtts = Arc::new(Mutex::new(Vec::new()));
    let mut s = sender_with(Box::new(RttLog(rtts.clone())), AppConfig::Bulk);
    // The timestamp clock ticks 0.6 ms ahead of the run's: TSval = 10^6 + floor((t +
    // 0.6 ms) / 1 ms) (ts_clock's offset of 10^6 keeps 0 out of the TSvals).
    s.set_ts_phase(tcplab_sim::time::Dur(600_000));
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    let first: Vec<u32> = io.out.iter().map(|p| p.tsval).collect();
    assert_eq!(first, vec![1_000_000; 10]); // 0.6 ms -> tick 0
    sent(&mut io);
    // 100 ms: ack 1, a never-retransmitted segment: RTT from the send times, 100 ms
    // (srtt 100 ms, min_rtt 100 ms, RTO 300 ms re-armed for 400 ms). The TSecr is not
    // used: tcp_ack_update_rtt prefers the send times.
    s.on_ack(SimTime(100 * MS), &ack_ts(1, 1_000_000), &mut io);
    assert_eq!((s.tp.srtt_us, s.tp.min_rtt_us), (100_000, 100_000));
    sent(&mut io);
    // RTO at 400 ms: segment 1 is retransmitted with TSval 10^6 + floor(400.6) = 1_000_400.
    s.on_rto(SimTime(400 * MS), &mut io);
    let rtx: Vec<(u64, bool, u32)> = io
        .out
        .iter()
        .map(|p| (p.seq, p.is_retrans, p.tsval))
        .collect();
    assert_eq!(rtx, vec![(1, true, 1_000_400)]);
    sent(&mut io);
    rtts.lock().unwrap().clear();
    // 437.3 ms: a duplicate ACK (snd_una stays 1) echoing the retransmission's TSval
    // gives no sample: the RTTM rule wants an ACK that advances snd_una (FLAG_ACKED).
    s.on_ack(SimTime(437_300_000), &ack_ts(1, 1_000_400), &mut io);
    assert_eq!(s.tp.srtt_us, 100_000);
    // The same moment, ack 2 echoing 1_000_400: Karn's rule forbids a sample from the
    // retransmitted segment's send time, so tcp_rtt_tsopt_us gives (10^6 + floor(437.3 +
    // 0.6) - 1_000_400) ms = 37 ms = 37_000 us, for seq_rtt and ca_rtt alike:
    // tcp_rtt_estimator: srtt_us (8x) = 800_000 + (37_000 - 100_000) = 737_000, srtt =
    // 92_125 us; tcp_update_rtt_min: min_rtt 100 ms -> 37 ms; pkts_acked sees 37_000.
    s.on_ack(SimTime(437_300_000), &ack_ts(2, 1_000_400), &mut io);
    assert_eq!((s.tp.srtt_us, s.tp.min_rtt_us), (92_125, 37_000));
    assert_eq!(s.rtt.latest_us, 37_000);
    assert_eq!(*rtts.lock().unwrap(), vec![-1, 37_000]);
    // Without a TSecr (0: no timestamp option) the same ACK gives no sample at all.
    let mut s = sender_with(Box::new(RttLog(Arc::default())), AppConfig::Bulk);
    s.start(SimTime(0), &mut io);
    s.on_ack(SimTime(100 * MS), &ack(1, None), &mut io);
    s.on_rto(SimTime(400 * MS), &mut io);
    s.on_ack(SimTime(437_300_000), &ack(2, None), &mut io);
    assert_eq!((s.tp.srtt_us, s.tp.min_rtt_us), (100_000, 100_000));
}

/// Reno that records `(in_flight, prior_in_flight)` of every `pkts_acked`.
struct FlightLog(Arc<Mutex<Vec<(u32, u32)>>>);

impl tcplab_cc::CongestionOps for FlightLog {
    fn name(&self) -> &'static str {
        "flight-log"
    }
    fn ssthresh(&mut self, tp: &tcplab_cc::CcView) -> u32 {
        tcplab_cc::reno::Reno.ssthresh(tp)
    }
    fn cong_avoid(&mut self, tp: &mut tcplab_cc::CcView, ack: u64, acked: u32) {
        tcplab_cc::reno::Reno.cong_avoid(tp, ack, acked)
    }
    fn pkts_acked(&mut self, _tp: &mut tcplab_cc::CcView, s: &tcplab_cc::AckSample) {
        self.0
            .lock()
            .unwrap()
            .push((s.in_flight, s.prior_in_flight));
    }
}

/// tcp_clean_rtx_queue's `sample.in_flight = tp->mss_cache * (tp->delivered -
/// sack->rate->prior_delivered)`: bytes delivered since the most recently sent segment
/// this ACK covers was sent; `prior_in_flight` is the seam's packets in flight before it.
#[test]
fn ack_sample_in_flight_is_the_kernels_bytes_delivered_during_the_sampled_rtt() {
    let samples = Arc::new(Mutex::new(Vec::new()));
    let mut s = sender_with(Box::new(FlightLog(samples.clone())), AppConfig::Bulk);
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io); // segments 0..9 at 0, each with tx.delivered 0
    sent(&mut io);
    // 100 ms: ack 1 delivers segment 0 (tx.delivered 0): delivered 1, in_flight =
    // 1448 * (1 - 0) = 1448; 10 in flight before. Slow start cwnd 11: segments 10, 11
    // go out with tx.delivered 1.
    s.on_ack(SimTime(100 * MS), &ack(1, None), &mut io);
    assert_eq!(sent(&mut io), vec![(10, false), (11, false)]);
    // 200 ms: ack 11 delivers segments 1..10; the most recently sent is 10 (at 100 ms,
    // tx.delivered 1): delivered 11, in_flight = 1448 * (11 - 1) = 14480; 9 + 2 = 11
    // in flight before.
    s.on_ack(SimTime(200 * MS), &ack(11, None), &mut io);
    assert_eq!(*samples.lock().unwrap(), vec![(1448, 10), (14_480, 11)]);
}
