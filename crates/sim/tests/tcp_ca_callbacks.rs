//! The congestion-control callbacks at the kernel's call sites: `cong_control` gets
//! tcp_ack's `flag` in the kernel's FLAG_* bits (net/ipv4/tcp_input.c), `release` runs
//! once when a finite flow's data is all acknowledged.

use std::sync::{Arc, Mutex};

use tcplab_cc::ops::RateSample;
use tcplab_cc::{CcView, CongestionOps};
use tcplab_sim::config::AppConfig;
use tcplab_sim::tcp::SenderIo;
use tcplab_sim::time::SimTime;

mod common;
use common::sender::{ack, sender_with, sent, take, Log};
use common::MS;

/// An algorithm with cong_control that logs its `flag` and `release`, cwnd untouched.
struct Flags {
    log: Log,
}

impl CongestionOps for Flags {
    fn name(&self) -> &'static str {
        "flags"
    }
    fn ssthresh(&mut self, _tp: &CcView) -> u32 {
        2
    }
    fn has_cong_control(&self) -> bool {
        true
    }
    fn cong_control_flag(&mut self, _tp: &mut CcView, _rs: &RateSample, flag: u32) {
        self.log.lock().unwrap().push(format!("flag {flag:#x}"));
    }
    fn release(&mut self, _tp: &mut CcView) {
        self.log.lock().unwrap().push("release".into());
    }
}

fn flags_sender(log: &Log, app: AppConfig) -> tcplab_sim::tcp::sender::Sender {
    sender_with(Box::new(Flags { log: log.clone() }), app)
}

#[test]
fn cumulative_acks_carry_data_acked_and_a_finite_flow_is_released_once() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let mut s = flags_sender(&log, AppConfig::Finite { bytes: 3 * 1448 });
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    assert_eq!(sent(&mut io).len(), 3);
    // An in-order cumulative ACK (the fast path): FLAG_DATA_ACKED 0x4 |
    // FLAG_SND_UNA_ADVANCED 0x400 | FLAG_WIN_UPDATE 0x2 | FLAG_SET_XMIT_TIMER 0x1000.
    s.on_ack(SimTime(100 * MS), &ack(1, None), &mut io);
    assert_eq!(take(&log), vec!["flag 0x1406"]);
    // The last ACK: the same flags, then the socket is done: release.
    s.on_ack(SimTime(101 * MS), &ack(3, None), &mut io);
    assert_eq!(take(&log), vec!["flag 0x1406", "release"]);
    // A late duplicate changes nothing and does not release again.
    s.on_ack(SimTime(102 * MS), &ack(3, None), &mut io);
    assert!(take(&log).is_empty());
}

#[test]
fn a_sack_takes_the_slow_path_and_a_bulk_flow_is_not_released() {
    let log: Log = Arc::new(Mutex::new(Vec::new()));
    let mut s = flags_sender(&log, AppConfig::Bulk);
    let mut io = SenderIo::default();
    s.start(SimTime(0), &mut io);
    sent(&mut io);
    // Segment 0 missing, 1 SACKed: FLAG_DATA_SACKED 0x20 | FLAG_SLOWPATH 0x100 |
    // FLAG_UPDATE_TS_RECENT 0x4000 (tcp_rcv_established's slow path); snd_una and the
    // window do not move, and the SACK's RTT is not longer than the head's age, so
    // no FLAG_SET_XMIT_TIMER.
    s.on_ack(SimTime(100 * MS), &ack(0, Some((1, 2))), &mut io);
    assert_eq!(take(&log), vec!["flag 0x4120"]);
    s.release_cc(SimTime(200 * MS));
    s.release_cc(SimTime(300 * MS));
    assert_eq!(take(&log), vec!["release"]);
}
