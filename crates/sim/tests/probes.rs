//! Latency probes (src/probe.rs): round trips with hand-computed expectations.

mod common;

use common::{dumbbell, link, MS, S};
use tcplab_sim::config::{ProbeConfig, QueueLimit, WorldConfig};
use tcplab_sim::net::aqm::fq_codel::FqCodelConfig;
use tcplab_sim::net::aqm::AqmConfig;
use tcplab_sim::world::World;
use tcplab_sim::NativeCc;

/// An 84-byte probe (iputils ping's default packet) every `interval_ns` over access
/// links of 1 Gbit/s and 2.5 ms each way.
fn ping(interval_ns: u64) -> ProbeConfig {
    ProbeConfig {
        interval_ns,
        packet_bytes: 84,
        sender_access: link(1_000_000_000, 2_500_000),
        receiver_access: link(1_000_000_000, 2_500_000),
        start_ns: 0,
        stop_ns: None,
    }
}

/// A 10 Mbit/s dumbbell whose bottleneck has 5 ms each way (the probe's path: 20 ms of
/// propagation per round trip), 1 BDP of buffer, `flows` CUBIC flows and one probe.
fn world(flows: usize, duration_ns: u64) -> WorldConfig {
    let mut cfg = dumbbell("cubic", flows.max(1), 10_000_000, 20 * MS, 1.0, duration_ns);
    if flows == 0 {
        cfg.flows.clear();
    }
    cfg.probes = vec![ping(100 * MS)];
    cfg
}

#[test]
fn a_probe_over_an_empty_path_takes_propagation_plus_serialization() {
    // 84 bytes = 672 bits. Serialization: 67_200 ns at 10 Mbit/s (bottleneck, each way)
    // and 672 ns at 1 Gbit/s (four access-link directions). Propagation: 2 x (2.5 + 5 +
    // 2.5) ms = 20 ms. RTT = 20_000_000 + 2 x 67_200 + 4 x 672 = 20_137_088 ns, for
    // every probe (nothing else queues). Probes at 0, 100, ..., 900 ms: 10, all back
    // before 1 s.
    let out = World::run_config(&world(0, S), &NativeCc).unwrap();
    let p = &out.probes[0];
    assert_eq!(p.sent_packets, 10);
    assert_eq!((p.echoed_packets, p.dropped_packets), (10, 0));
    assert_eq!(p.in_flight_packets_at_end, 0);
    assert_eq!(p.rtt_ns, vec![20_137_088; 10]);
    assert_eq!(p.seq, (0..10).collect::<Vec<u64>>());
    assert_eq!(
        p.sent_ns,
        (0..10).map(|k| k * 100 * MS).collect::<Vec<u64>>()
    );
}

#[test]
fn a_probe_beside_a_cubic_flow_sees_the_standing_queue() {
    // One CUBIC flow fills a 1 BDP buffer (25 kB = 20 ms at 10 Mbit/s). Hand-derived:
    // at a loss the window is 2 BDP (pipe + full buffer) and CUBIC cuts it to 0.7 of
    // that, 1.4 BDP, leaving 0.4 BDP queued; it then climbs back to 2 BDP, spending most
    // of the epoch near the old maximum (the cubic's plateau). So the queue a probe
    // meets lies between 0.4 and 1 BDP, 8 to 20 ms at the bottleneck, and its median
    // more than half-way: median RTT - 20.14 ms in [8, 20.2] ms (20.2: a full buffer
    // plus one packet in service, 1.2 ms, less the probe's own share). Measured after
    // slow start (probes from 5 s).
    let mut cfg = world(1, 30 * S);
    cfg.probes[0].start_ns = 5 * S;
    let out = World::run_config(&cfg, &NativeCc).unwrap();
    let p = &out.probes[0];
    assert_eq!(p.sent_packets, 250);
    let mut rtts = p.rtt_ns.clone();
    rtts.sort_unstable();
    let median_ms = rtts[rtts.len() / 2] as f64 / 1e6;
    let excess = median_ms - 20.137;
    assert!((8.0..=21.4).contains(&excess), "median {median_ms} ms");
    assert!(
        rtts[0] >= 20_137_088,
        "no probe is faster than the empty path"
    );
}

#[test]
fn fq_codel_gives_the_probe_its_own_queue_and_it_skips_cubics() {
    // fq_codel (sch_fq_codel.c defaults: 5 ms target, 100 ms interval, quantum 1514, 1024
    // queues) hashes the probe apart from the CUBIC flow; the probe's queue is empty when
    // it arrives, so it joins the new flows and leaves after the 1500-byte packet in
    // service (up to 1.2 ms at 10 Mbit/s) and, when CUBIC's queue has just emptied and
    // refilled (new again, RFC 8290 Sec. 4.1), one quantum of CUBIC's ahead of it (1.2 ms
    // more). Its echo meets at most an ACK in service on the reverse direction (under
    // 0.06 ms). So every RTT lies in [20.137, 20.137 + 2.46] ms however long CUBIC's own
    // queue grows, and the median waits about half a packet (at most 1.2 ms).
    let mut cfg = world(1, 20 * S);
    cfg.bottleneck.buffer = Some(QueueLimit::Packets(10240));
    cfg.bottleneck.aqm = Some(AqmConfig::FqCodel(FqCodelConfig {
        target_ns: 5 * MS,
        interval_ns: 100 * MS,
        quantum_bytes: 1514,
        flows: 1024,
        ecn: false,
    }));
    cfg.probes[0].start_ns = 2 * S;
    let out = World::run_config(&cfg, &NativeCc).unwrap();
    let p = &out.probes[0];
    assert_eq!((p.sent_packets, p.echoed_packets), (180, 180));
    let mut rtts = p.rtt_ns.clone();
    rtts.sort_unstable();
    let (lo, med, hi) = (rtts[0], rtts[rtts.len() / 2], rtts[rtts.len() - 1]);
    assert!(
        lo >= 20_137_088 && hi <= 20_137_088 + 2_460_000,
        "{lo} {hi}"
    );
    assert!(med <= 20_137_088 + 1_200_000, "median {med}");
}

#[test]
fn lost_probes_are_counted_and_runs_repeat_bit_for_bit() {
    // 20 % random loss on the bottleneck (data direction): about a fifth of the probes
    // are lost on the way out (echoes cross the lossless reverse direction). The
    // accounting sent = echoed + dropped + in flight is checked by the engine (a run
    // that broke it would fail); here: losses happen, each probe is counted once, and
    // the same config and seed give the same output.
    let mut cfg = world(0, 20 * S);
    cfg.bottleneck.loss = 0.2;
    let a = World::run_config(&cfg, &NativeCc).unwrap();
    let p = &a.probes[0];
    assert_eq!(p.sent_packets, 200);
    assert!(
        (20..=60).contains(&p.dropped_packets),
        "{}",
        p.dropped_packets
    );
    assert_eq!(p.echoed_packets + p.dropped_packets, 200);
    assert_eq!(p.rtt_ns.len() as u64, p.echoed_packets);
    let b = World::run_config(&cfg, &NativeCc).unwrap();
    assert_eq!(a, b);
}

#[test]
fn probes_are_refused_with_a_named_field() {
    let mut cfg = world(0, S);
    cfg.probes[0].interval_ns = 0;
    let e = World::new(&cfg, &NativeCc).err().unwrap();
    assert_eq!(e.field, "probes[0].interval_ns");
    let mut cfg = world(0, S);
    cfg.probes[0].packet_bytes = 70_000;
    let e = World::new(&cfg, &NativeCc).err().unwrap();
    assert_eq!(e.field, "probes[0].packet_bytes");
    let mut cfg = world(0, S);
    cfg.probes[0].stop_ns = Some(0);
    let e = World::new(&cfg, &NativeCc).err().unwrap();
    assert_eq!(e.field, "probes[0].stop_ns");
}
