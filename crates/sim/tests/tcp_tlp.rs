//! Tail loss probe (net/ipv4/tcp_output.c `tcp_schedule_loss_probe`,
//! `tcp_send_loss_probe`; tcp_input.c `tcp_process_tlp_ack`), driven with hand-made ACKs
//! and timer expiries; the arithmetic of the kernel functions is in the comments.

use tcplab_cc::reno::Reno;
use tcplab_cc::CaState;
use tcplab_sim::config::AppConfig;
use tcplab_sim::tcp::sender::Sender;
use tcplab_sim::tcp::SenderIo;
use tcplab_sim::time::SimTime;

mod common;
use common::sender::{ack, sender_with, sent};
use common::MS;

fn reno(app: AppConfig, tlp: bool) -> Sender {
    let mut s = sender_with(Box::new(Reno), app);
    s.tlp_enabled = tlp;
    s
}

fn deadline_ms(s: &Sender) -> u64 {
    s.rto_timer.deadline().expect("armed").ns() / MS
}

#[test]
fn a_lone_tail_loss_is_probed_instead_of_timing_out() {
    // Ten segments (0..9) at 0; the last is lost. With no RTT sample the PTO is
    // TCP_TIMEOUT_INIT = 1 s, capped by the RTO delta (1 s).
    let mut s = reno(AppConfig::Finite { bytes: 10 * 1448 }, true);
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    assert_eq!(sent(&mut io).len(), 10);
    assert!(s.probe_pending());
    assert_eq!(deadline_ms(&s), 1_000);
    // 100 ms: ACK of 0..8. srtt 100 ms, RTO = 100 + max(2 x 100, 200) = 300 ms. One
    // packet out: PTO = 2 x 100 + rto_min 200 = 400 ms, capped by the full RTO (an ACK
    // advances the RTO) = 300 ms: the probe is due at 400 ms.
    s.on_ack(SimTime(100 * MS), &ack(9, None), &mut io);
    assert!(s.probe_pending());
    assert_eq!(deadline_ms(&s), 400);
    // 400 ms: the slot fires as a probe. No new data: the last segment (9) is
    // retransmitted; no RTO, no Loss state, cwnd kept; the RTO restarts: 400 + 300 = 700.
    let cwnd = s.tp.snd_cwnd;
    s.on_rto(SimTime(400 * MS), &mut io);
    assert_eq!(sent(&mut io), vec![(9, true)]);
    assert_eq!(
        (
            s.stats.tlp_probes,
            s.stats.rto_count,
            s.stats.retransmitted_packets
        ),
        (1, 0, 1)
    );
    assert_eq!((s.tp.ca_state, s.tp.snd_cwnd), (CaState::Open, cwnd));
    assert!(!s.probe_pending());
    assert_eq!(deadline_ms(&s), 700);
    // 500 ms: the probe is acknowledged; everything is delivered.
    s.on_ack(SimTime(500 * MS), &ack(10, None), &mut io);
    assert!(s.all_acked());

    // Without TLP the same loss costs an RTO at 400 ms: Loss, segment 9 marked lost, cwnd =
    // in flight + 1 = (1 - 1 + 0) + 1 = 1.
    let mut k = reno(AppConfig::Finite { bytes: 10 * 1448 }, false);
    k.start(SimTime(0), &mut io);
    k.on_ack(SimTime(100 * MS), &ack(9, None), &mut io);
    sent(&mut io);
    assert_eq!(deadline_ms(&k), 400);
    k.on_rto(SimTime(400 * MS), &mut io);
    assert_eq!(
        (k.stats.rto_count, k.tp.ca_state, k.tp.snd_cwnd),
        (1, CaState::Loss, 1)
    );
}

#[test]
fn two_packets_out_are_probed_after_two_srtt_plus_two_ms() {
    // 100 ms: ACK of 0..7; 8 and 9 out. PTO = 2 x 100 + TCP_TIMEOUT_MIN 2 = 202 ms
    // (below the 300 ms RTO): due at 302 ms. The probe retransmits the last segment (9),
    // not the head.
    let mut s = reno(AppConfig::Finite { bytes: 10 * 1448 }, true);
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    s.on_ack(SimTime(100 * MS), &ack(8, None), &mut io);
    sent(&mut io);
    assert_eq!(deadline_ms(&s), 302);
    s.on_rto(SimTime(302 * MS), &mut io);
    assert_eq!(sent(&mut io), vec![(9, true)]);
    // 402 ms: the probe arrives, the receiver SACKs it: RACK finds 8 lost (sent at 0,
    // long before the probe's 302 ms), Recovery retransmits it; the reduction
    // (tcp_init_cwnd_reduction) forgets the probe.
    s.on_ack(
        SimTime(402 * MS),
        &common::sender::ack(8, Some((9, 10))),
        &mut io,
    );
    assert_eq!(s.tp.ca_state, CaState::Recovery);
    assert_eq!(sent(&mut io), vec![(8, true)]);
    assert_eq!((s.stats.tlp_probes, s.stats.rto_count), (1, 0));
}

#[test]
fn a_probe_sends_new_data_beyond_cwnd_when_there_is_some() {
    // Bulk: cwnd 10 full at 0, nothing acked; the probe at 1 s (TCP_TIMEOUT_INIT) sends
    // the next new segment (10) although cwnd is full (tcp_write_xmit push_one = 2). No
    // retransmission; the RTO restarts: 1 s + 1 s.
    let mut s = reno(AppConfig::Bulk, true);
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    sent(&mut io);
    s.on_rto(SimTime(1_000 * MS), &mut io);
    assert_eq!(sent(&mut io), vec![(10, false)]);
    assert_eq!(
        (
            s.stats.tlp_probes,
            s.stats.retransmitted_packets,
            s.stats.rto_count
        ),
        (1, 0, 0)
    );
    assert_eq!(deadline_ms(&s), 2_000);
    // The slot now holds the RTO: when it fires, it is one.
    s.on_rto(SimTime(2_000 * MS), &mut io);
    assert_eq!((s.stats.rto_count, s.tp.ca_state), (1, CaState::Loss));
}
