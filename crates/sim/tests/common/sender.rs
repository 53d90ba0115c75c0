//! Fixtures for the tests that drive one `Sender` with hand-made ACKs and timer expiries
//! (tcp_sender.rs, tcp_sender_linux.rs): a Reno that logs its hooks, a fixed-rate
//! pacer, ACK packets, and draining what the sender emitted.

use std::sync::{Arc, Mutex};

use tcplab_cc::reno::Reno;
use tcplab_cc::{AckSample, CaState, CcView, CongestionOps};
use tcplab_sim::app::App;
use tcplab_sim::config::AppConfig;
use tcplab_sim::net::{Packet, SackBlock};
use tcplab_sim::tcp::sender::Sender;
use tcplab_sim::tcp::SenderIo;
use tcplab_sim::time::SimTime;

/// The hooks a `Logged` algorithm saw, one line each.
pub type Log = Arc<Mutex<Vec<String>>>;

/// Reno that logs `ssthresh` (with the state the sender shows at the time) and
/// `set_state`; with `ack_hooks`, also `pkts_acked` and `in_ack_event`.
pub struct Logged {
    pub log: Log,
    pub ack_hooks: bool,
}

impl CongestionOps for Logged {
    fn name(&self) -> &'static str {
        "logged-reno"
    }
    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        self.log
            .lock()
            .unwrap()
            .push(format!("ssthresh in {}", tp.ca_state.name()));
        Reno.ssthresh(tp)
    }
    fn cong_avoid(&mut self, tp: &mut CcView, ack: u64, acked: u32) {
        Reno.cong_avoid(tp, ack, acked)
    }
    fn set_state(&mut self, tp: &mut CcView, new_state: CaState) {
        self.log.lock().unwrap().push(format!(
            "set_state {} -> {}",
            tp.ca_state.name(),
            new_state.name()
        ));
    }
    fn pkts_acked(&mut self, _tp: &mut CcView, s: &AckSample) {
        if self.ack_hooks {
            self.log
                .lock()
                .unwrap()
                .push(format!("pkts_acked {}", s.pkts_acked));
        }
    }
    fn in_ack_event(&mut self, _tp: &mut CcView, flags: u32) {
        if self.ack_hooks {
            self.log
                .lock()
                .unwrap()
                .push(format!("in_ack_event {flags}"));
        }
    }
}

/// A pacer at 1,448,000 B/s: one 1448-byte segment per millisecond. `cwnd`, if given,
/// replaces the initial window of 10.
pub struct Pacer {
    pub cwnd: Option<u32>,
}

impl CongestionOps for Pacer {
    fn name(&self) -> &'static str {
        "pacer"
    }
    fn init(&mut self, tp: &mut CcView) {
        tp.pacing_needed = true;
        tp.pacing_rate = 1_448_000;
        if let Some(cwnd) = self.cwnd {
            tp.snd_cwnd = cwnd;
        }
    }
    fn ssthresh(&mut self, _tp: &CcView) -> u32 {
        2
    }
}

/// Flow 0 with `cc`: MSS 1448, 52-byte headers, initial cwnd 10, `app` from time 0, and
/// no tail loss probe (the kernel with `tcp_early_retrans` = 0), so that a test's
/// `on_rto` is the RTO; tcp_tlp.rs turns probes on.
pub fn sender_with(cc: Box<dyn CongestionOps>, app: AppConfig) -> Sender {
    let app = App {
        kind: app,
        start: SimTime(0),
        stop: SimTime(u64::MAX),
    };
    let mut s = Sender::new(0, cc, 1448, 52, 10, app);
    s.tlp_enabled = false;
    s
}

/// A sender whose algorithm is a `Logged` Reno writing to `log`.
pub fn logged_sender(log: &Log, app: AppConfig, ack_hooks: bool) -> Sender {
    sender_with(
        Box::new(Logged {
            log: log.clone(),
            ack_hooks,
        }),
        app,
    )
}

/// An ACK of everything below `a` carrying the SACK blocks `sacks` (start, end).
pub fn ack_blocks(a: u64, sacks: &[(u64, u64)]) -> Packet {
    let blocks: Vec<SackBlock> = sacks
        .iter()
        .map(|&(start, end)| SackBlock { start, end })
        .collect();
    Packet::ack(0, a, &blocks, 52)
}

/// An ACK of everything below `a` with at most one SACK block.
pub fn ack(a: u64, sack: Option<(u64, u64)>) -> Packet {
    ack_blocks(a, sack.as_slice())
}

/// The segments sent since the last call, as (seq, is_retrans); forgets the timers set.
pub fn sent(io: &mut SenderIo) -> Vec<(u64, bool)> {
    io.timers.clear();
    io.out.drain(..).map(|p| (p.seq, p.is_retrans)).collect()
}

/// The hooks logged since the last call.
pub fn take(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}
