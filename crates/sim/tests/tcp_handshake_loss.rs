//! A SYN lost to a full queue (world/handshake.rs): the retransmission timers, and what
//! the lost SYNs leave in the connection (`Sender::on_syn_timeout`).

mod common;
use common::sender::sender_with;
use common::*;

use tcplab_cc::ops::TCP_INFINITE_SSTHRESH;
use tcplab_sim::app::App;
use tcplab_sim::config::{AppConfig, LinkEvent};
use tcplab_sim::tcp::sender::Sender;
use tcplab_sim::tcp::SenderIo;
use tcplab_sim::time::{Dur, SimTime};
use tcplab_sim::NativeCc;
use tcplab_sim::World;

fn started_after_syn_timeouts(cc: &str, timeouts: u32) -> (u32, u32) {
    let cc = tcplab_cc::registry::build(cc, &Default::default()).unwrap();
    start_after(sender_with(cc, AppConfig::Bulk), timeouts)
}

fn start_after(mut s: Sender, timeouts: u32) -> (u32, u32) {
    for _ in 0..timeouts {
        s.on_syn_timeout();
    }
    s.set_handshake_rtt(Dur::from_ms(40));
    s.start(SimTime(0), &mut SenderIo::default());
    (s.tp.snd_cwnd, s.tp.snd_ssthresh)
}

#[test]
fn one_lost_syn_leaves_the_algorithms_ssthresh_of_the_initial_window() {
    // tcp_enter_loss in SYN_SENT with cwnd TCP_INIT_CWND = 10: CUBIC 10 x 717 / 1024 = 7,
    // Reno 10 / 2 = 5; BBR's init sets it infinite again. One retransmission keeps
    // cwnd 10 (tcp_init_transfer cuts it only after more than one).
    assert_eq!(started_after_syn_timeouts("cubic", 1), (10, 7));
    assert_eq!(started_after_syn_timeouts("reno", 1), (10, 5));
    assert_eq!(
        started_after_syn_timeouts("bbr", 1),
        (10, TCP_INFINITE_SSTHRESH)
    );
    // Without a lost SYN, nothing changes.
    assert_eq!(
        started_after_syn_timeouts("cubic", 0),
        (10, TCP_INFINITE_SSTHRESH)
    );
}

#[test]
fn two_lost_syns_start_the_connection_at_cwnd_one() {
    // The second timeout finds the socket in Loss: the ssthresh stays the first one's.
    assert_eq!(started_after_syn_timeouts("cubic", 2), (1, 7));
    assert_eq!(started_after_syn_timeouts("cubic", 3), (1, 7));
}

#[test]
fn every_algorithm_starts_after_lost_syns() {
    // The kernel calls ssthresh() on the algorithm before its init; none may fail on
    // that, and each whose init leaves the initial window alone (all but the
    // rate-based ones that set their own, e.g. Vivace) starts at cwnd 1 after two.
    // (A route's initial window of 13, which no algorithm sets, tells them apart.)
    let mut cut = 0;
    for spec in tcplab_cc::registry::ALGORITHMS {
        let sender = || {
            let cc = tcplab_cc::registry::build(spec.name, &Default::default()).unwrap();
            let app = App {
                kind: AppConfig::Bulk,
                start: SimTime(0),
                stop: SimTime(u64::MAX),
            };
            Sender::new(0, cc, 1448, 52, 13, app)
        };
        let (cwnd, _) = start_after(sender(), 2);
        if start_after(sender(), 0).0 == 13 {
            assert_eq!(cwnd, 1, "{}", spec.name);
            cut += 1;
        }
    }
    assert!(cut >= 20, "only {cut} algorithms keep the initial window");
}

/// Two CUBIC flows over 10 Mbit/s and 40 ms; from 1 s to 3 s the bottleneck loses
/// (almost) every packet (`loss` below 1, as configs must have it: a SYN gets through
/// with probability 10^-6 per try); flow 1 opens at 1.5 s.
fn lossy_world() -> tcplab_sim::config::WorldConfig {
    let mut cfg = dumbbell("cubic", 2, 10_000_000, 40 * MS, 1.0, 5 * S);
    cfg.flows[1].start_ns = 1_500 * MS;
    let change = |at, loss| LinkEvent {
        at_ns: at,
        rate_bps: None,
        delay_ns: None,
        loss: Some(loss),
    };
    cfg.events = vec![change(S, 0.999_999), change(3 * S, 0.0)];
    cfg
}

/// The time of flow `f`'s first series sample with an RTT, and its cwnd there.
fn first_rtt_sample(out: &tcplab_sim::record::RunOutput, f: u64) -> (u64, f64) {
    let t = u64_col(out, "time_ns");
    let flow = u64_col(out, "flow");
    let srtt = f64_col(out, "srtt_ms");
    let cwnd = f64_col(out, "cwnd_pkts");
    let i = (0..t.len())
        .find(|&i| flow[i] == f && srtt[i] > 0.0)
        .expect("the flow connects");
    (t[i], cwnd[i])
}

#[test]
fn a_lost_syn_is_sent_again_each_second() {
    // SYNs at 1.5 s and 2.5 s are lost; the one at 3.5 s gets through (nothing has
    // entered the queue since 1 s, so nothing waits in it) and the connection is
    // established one round trip (~40.1 ms) later, at ~3.54 s. So flow 1's first sample
    // with an RTT is the 3.6 s one. After two lost SYNs it started at cwnd 1; its first
    // ACK is back one round trip later (~3.58 s, a quick ACK), so there cwnd is 2.
    let out = World::run_config(&lossy_world(), &NativeCc).unwrap();
    assert_eq!(first_rtt_sample(&out, 1), (3_600 * MS, 2.0));
}

#[test]
fn a_syn_into_an_empty_path_goes_through_at_once() {
    // The same world without the lossy period and with flow 0 starting at 4.9 s: established at
    // ~1.54 s, first sample 1.6 s, cwnd 10 (no ACK back yet at 1.6 s: 1.54 + 0.04 +
    // serialization of ten segments).
    let mut cfg = lossy_world();
    cfg.events.clear();
    cfg.flows[0].start_ns = 4_900 * MS;
    let out = World::run_config(&cfg, &NativeCc).unwrap();
    assert_eq!(first_rtt_sample(&out, 1).0, 1_600 * MS);
}
