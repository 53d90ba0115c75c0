//! ECN in the TCP model, hand-driven: the sender's reaction to ECE (tcp_input.c
//! `tcp_try_to_open` -> `tcp_enter_cwr`, PRR, `tcp_end_cwnd_reduction`, tcp_output.c
//! `tcp_ecn_send`) and the receiver's echo, RFC 3168 (`tcp_ecn_check_ce`,
//! `tcp_ecn_accept_cwr`) and DCTCP's (`dctcp_ece_ack_update`). Expected values are
//! worked out in the comments.

use std::sync::{Arc, Mutex};

use tcplab_cc::CaState;
use tcplab_sim::config::AppConfig;
use tcplab_sim::net::{Ecn, Packet};
use tcplab_sim::tcp::receiver::Receiver;
use tcplab_sim::tcp::SenderIo;
use tcplab_sim::time::SimTime;

mod common;
use common::sender::{ack, logged_sender, take};
use common::MS;

fn ece(mut p: Packet) -> Packet {
    p.set_ece(true);
    p
}

#[test]
fn ece_enters_cwr_once_reduces_by_prr_sends_cwr_and_leaves_after_high_seq() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut s = logged_sender(&log, AppConfig::Bulk, true);
    s.ecn = true;
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    // Segments 0..9: new data, ECT(0), no CWR.
    assert!(io.out.iter().all(|p| p.ecn() == Ecn::Ect0 && !p.cwr()));
    io.out.clear();
    take(&log);

    // ACK of 0..2 with ECE at 100 ms. pkts_acked 2; in_ack_event CA_ACK_WIN_UPDATE (2) |
    // CA_ACK_ECE (4) = 6; delivered_ce += 2; then tcp_try_to_open -> tcp_enter_cwr:
    // ssthresh (Reno: 10 / 2 = 5) asked in Open, then Open -> CWR.
    s.on_ack(SimTime(100 * MS), &ece(ack(2, None)), &mut io);
    assert_eq!(
        take(&log),
        vec![
            "pkts_acked 2",
            "in_ack_event 6",
            "ssthresh in Open",
            "set_state Open -> CWR"
        ]
    );
    assert_eq!(s.tp.ca_state, CaState::Cwr);
    assert_eq!(
        (s.tp.snd_ssthresh, s.tp.prior_ssthresh, s.tp.delivered_ce),
        (5, 0, 2)
    );
    // PRR (tcp_cwnd_reduction): in flight 8 > ssthresh 5: sndcnt = ceil(2 * 5 / 10) - 0 =
    // 1, cwnd = 8 + 1 = 9: one new segment, 10, carrying CWR (tcp_ecn_queue_cwr).
    assert_eq!(s.tp.snd_cwnd, 9);
    let out: Vec<(u64, bool, Ecn)> = io
        .out
        .drain(..)
        .map(|p| (p.seq, p.cwr(), p.ecn()))
        .collect();
    assert_eq!(out, vec![(10, true, Ecn::Ect0)]);

    // A second ECE ACK in CWR starts no new reduction (no ssthresh call, no state change).
    s.on_ack(SimTime(101 * MS), &ece(ack(4, None)), &mut io);
    assert_eq!(take(&log), vec!["pkts_acked 2", "in_ack_event 6"]);
    assert_eq!(s.tp.delivered_ce, 4);
    assert!(io.out.iter().all(|p| !p.cwr()));
    io.out.clear();

    // CWR holds until an ACK passes high_seq (snd_nxt at entry, 10): ACK 10 keeps it ...
    s.on_ack(SimTime(102 * MS), &ack(10, None), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Cwr);
    take(&log);
    // ... ACK 11 ends it: tcp_end_cwnd_reduction sets cwnd = ssthresh = 5, then Open.
    s.on_ack(SimTime(103 * MS), &ack(11, None), &mut io);
    assert_eq!(s.tp.ca_state, CaState::Open);
    assert!(take(&log).contains(&"set_state CWR -> Open".to_string()));
    // cong_avoid then runs on this ACK (snd_una advanced, Open): Reno below ssthresh? No:
    // cwnd 5 = ssthresh 5 -> congestion avoidance, +1 per 5 acked: 1 acked, cwnd stays 5.
    assert_eq!(s.tp.snd_cwnd, 5);
}

fn seg(seq: u64, ecn: Ecn, cwr: bool) -> Packet {
    let mut p = Packet::data(0, seq, 1448, 52, false);
    p.set_ecn(ecn);
    p.set_cwr(cwr);
    p
}

/// A receiver with ECN on, past its 16 initial quick ACKs (segments 0..16 acked).
fn warm(rx_cc: Option<Box<dyn tcplab_cc::CongestionOps>>) -> Receiver {
    let mut r = Receiver::new(0, 1448, 52, true, None);
    r.enable_ecn(rx_cc, tcplab_cc::ops::DEFAULT_HZ);
    for s in 0..16 {
        assert!(r
            .on_data(SimTime(0), &seg(s, Ecn::Ect0, false))
            .ack
            .is_some());
    }
    r
}

/// (ack number, ECE) of the ACKs a segment produced: the flushed one first.
fn acks(out: tcplab_sim::tcp::receiver::RxOut) -> Vec<(u64, bool)> {
    [out.flush, out.ack]
        .into_iter()
        .flatten()
        .map(|a| (a.seq, a.ece()))
        .collect()
}

#[test]
fn rfc3168_receiver_echoes_ece_until_cwr_and_acks_ce_quickly() {
    let mut r = warm(None);
    let t = SimTime(0);
    // 16: ECT, past the quick ACKs: delayed.
    assert_eq!(acks(r.on_data(t, &seg(16, Ecn::Ect0, false))), vec![]);
    // 17: CE: TCP_ECN_DEMAND_CWR and quick-ACK mode (2): ACKed at once with ECE.
    assert_eq!(
        acks(r.on_data(t, &seg(17, Ecn::Ce, false))),
        vec![(18, true)]
    );
    // 18: ECT: the second quick ACK, still ECE (demanded until CWR).
    assert_eq!(
        acks(r.on_data(t, &seg(18, Ecn::Ect0, false))),
        vec![(19, true)]
    );
    // 19: ECT with CWR: demand cleared, ACKed at once (tcp_ecn_accept_cwr), no ECE.
    assert_eq!(
        acks(r.on_data(t, &seg(19, Ecn::Ect0, true))),
        vec![(20, false)]
    );
    // 20: back to delayed ACKs.
    assert_eq!(acks(r.on_data(t, &seg(20, Ecn::Ect0, false))), vec![]);
    assert_eq!(r.stats.ce_packets, 1);
}

#[test]
fn dctcp_receiver_echoes_each_segments_ce_state_with_an_ack_on_every_change() {
    let dctcp = tcplab_cc::registry::build("dctcp", &Default::default()).unwrap();
    let mut r = warm(Some(dctcp));
    let t = SimTime(0);
    // 16: no CE, delayed ACK pending.
    assert_eq!(acks(r.on_data(t, &seg(16, Ecn::Ect0, false))), vec![]);
    // 17: CE, a change with a delayed ACK pending: that ACK goes first for 16 (ack 17, no
    // ECE), then 17 is ACKed at once with ECE.
    assert_eq!(
        acks(r.on_data(t, &seg(17, Ecn::Ce, false))),
        vec![(17, false), (18, true)]
    );
    // 18: CE again, no change: delayed.
    assert_eq!(acks(r.on_data(t, &seg(18, Ecn::Ce, false))), vec![]);
    // 19: CE, no change; the second full segment: ACKed (ack 20) with ECE.
    assert_eq!(
        acks(r.on_data(t, &seg(19, Ecn::Ce, false))),
        vec![(20, true)]
    );
    // 20: no CE, nothing pending: ACKed at once, ECE off.
    assert_eq!(
        acks(r.on_data(t, &seg(20, Ecn::Ect0, false))),
        vec![(21, false)]
    );
    // 21: no CE; 22: CE with 21's ACK delayed: flush (22, no ECE), then (23, ECE).
    assert_eq!(acks(r.on_data(t, &seg(21, Ecn::Ect0, false))), vec![]);
    assert_eq!(
        acks(r.on_data(t, &seg(22, Ecn::Ce, false))),
        vec![(22, false), (23, true)]
    );
}
