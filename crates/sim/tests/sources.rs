//! Constant-rate and on/off sources (src/source.rs): scenario outcomes with
//! hand-computed expectations.

mod common;

use common::{dumbbell, link, MS, S};
use tcplab_sim::config::{OnOffConfig, QueueLimit, SourceConfig, WorldConfig};
use tcplab_sim::net::aqm::fq_codel::FqCodelConfig;
use tcplab_sim::net::aqm::AqmConfig;
use tcplab_sim::world::World;
use tcplab_sim::NativeCc;

fn cbr(rate_bps: u64, onoff: Option<OnOffConfig>) -> SourceConfig {
    SourceConfig {
        rate_bps,
        packet_bytes: 1500,
        sender_access: link(1_000_000_000, 5 * MS),
        receiver_access: link(1_000_000_000, 5 * MS),
        start_ns: 0,
        stop_ns: None,
        onoff,
    }
}

/// A 10 Mbit/s, 40 ms RTT dumbbell (1 BDP buffer) with `sources` and no TCP flow.
fn sources_only(sources: Vec<SourceConfig>, duration_ns: u64) -> WorldConfig {
    let mut cfg = dumbbell("cubic", 1, 10_000_000, 40 * MS, 1.0, duration_ns);
    cfg.flows.clear();
    cfg.sources = sources;
    cfg
}

#[test]
fn a_cbr_source_below_the_link_rate_delivers_its_rate_without_drops() {
    // 6 Mbit/s of 1500-byte packets: one every 12000 bit / 6e6 bit/s = 2 ms exactly, so
    // [0, 10 s) holds exactly 5000 sends. One-way path: 5 + 10 + 5 ms propagation plus
    // 12 us + 1.2 ms + 12 us serialization = 21.224 ms; none dropped (the link is
    // faster than the source, so no queue ever builds beyond the packet in service).
    // Sends at 9.980 ... 9.998 s (the last 21.2 ms) are still in flight at the end: 10
    // packets, so 4990 received. (The send at 9.978 s arrives at 9.9992 s.)
    let out =
        World::run_config(&sources_only(vec![cbr(6_000_000, None)], 10 * S), &NativeCc).unwrap();
    let s = &out.sources[0];
    assert_eq!(s.sent_packets, 5000);
    assert_eq!(s.dropped_packets, 0);
    assert_eq!(s.received_packets, 4990);
    assert_eq!(s.in_flight_packets_at_end, 10);
    // Delivered rate over the run: 4990 * 12000 bit / 10 s = 5.987 Mbit/s, within 0.25 %
    // of 6 Mbit/s (the 10 packets in flight).
    let rate = s.received_bytes as f64 * 8.0 / 10.0;
    assert!((rate / 6e6 - 1.0).abs() < 0.0025, "delivered {rate} bit/s");
    assert!(out.flows.is_empty());
    assert_eq!(
        out.bottleneck_packets, 0,
        "bottleneck_packets counts TCP data only"
    );
}

#[test]
fn a_cbr_source_above_the_link_rate_is_cut_to_the_link_rate_by_drops() {
    // 15 Mbit/s offered to 10 Mbit/s: the link carries 10 Mbit/s, so about 1/3 of the
    // packets are dropped once the 1-BDP buffer (50 000 B, 33 packets) is full. Over 10 s:
    // 12 500 sends (one every 0.8 ms); drops = sent - departed - backlog, with about
    // 10e6 * 10 / 12000 = 8333 departures: 4167 - 33 +- a few.
    let out = World::run_config(
        &sources_only(vec![cbr(15_000_000, None)], 10 * S),
        &NativeCc,
    )
    .unwrap();
    let s = &out.sources[0];
    assert_eq!(s.sent_packets, 12_500);
    let dropped_share = s.dropped_packets as f64 / s.sent_packets as f64;
    eprintln!("overload: dropped share {dropped_share:.4}");
    assert!(
        (dropped_share - 1.0 / 3.0).abs() < 0.01,
        "dropped {dropped_share}"
    );
    let rate = s.received_bytes as f64 * 8.0 / 10.0;
    assert!((rate / 10e6 - 1.0).abs() < 0.01, "delivered {rate} bit/s");
}

#[test]
fn a_cbr_source_at_half_the_link_leaves_cubic_the_other_half() {
    // 20 Mbit/s bottleneck, 40 ms RTT, 1 BDP buffer (100 000 B); a 10 Mbit/s CBR source
    // and one CUBIC flow for 30 s. The source is unresponsive, so CUBIC can have at most
    // the wire rate the source leaves (20 Mbit/s - what the source delivers), of which
    // 1448 / 1500 is goodput. The buffer is 2 BDP of CUBIC's share, more than CUBIC's
    // 30 % back-off (tcp_cubic.c beta = 717/1024) needs to keep the link busy, so CUBIC
    // should get at least 85 % of that ceiling over the whole run (slow start included):
    // 0.85 * 9.65 = 8.2 Mbit/s at the least, "about the other half". The source loses
    // only the packets that find the queue full at CUBIC's loss episodes (< 2 %).
    let mut cfg = dumbbell("cubic", 1, 20_000_000, 40 * MS, 1.0, 30 * S);
    cfg.sources = vec![cbr(10_000_000, None)];
    let out = World::run_config(&cfg, &NativeCc).unwrap();
    let cubic = out.flows[0].delivered_bytes as f64 * 8.0 / 30.0;
    let source = out.sources[0].received_bytes as f64 * 8.0 / 30.0;
    let ceiling = (20e6 - source) * 1448.0 / 1500.0;
    eprintln!(
        "cubic {cubic:.0} bit/s, source {source:.0} bit/s, source drops {}",
        out.sources[0].dropped_packets
    );
    assert!(
        cubic <= ceiling && cubic >= 0.85 * ceiling,
        "CUBIC goodput {cubic} bit/s (ceiling {ceiling})"
    );
    assert!(
        (cubic / 20e6 - 0.5).abs() < 0.1,
        "CUBIC share {}",
        cubic / 20e6
    );
    let s = &out.sources[0];
    assert_eq!(s.sent_packets, 25_000); // 30 s / 1.2 ms
    let loss = s.dropped_packets as f64 / s.sent_packets as f64;
    assert!(loss < 0.02, "source loss {loss}");
}

#[test]
fn a_fixed_on_off_source_sends_exactly_in_its_on_periods() {
    // on = off = 100 ms over 20 s: 100 on periods of 100 ms, each 50 sends at 6 Mbit/s
    // (2 ms apart): 5000 packets, half of the 10 000 a plain source sends; on time 10 s.
    let on = OnOffConfig {
        on_ns: 100 * MS,
        off_ns: 100 * MS,
        exponential: false,
    };
    let out = World::run_config(
        &sources_only(vec![cbr(6_000_000, Some(on))], 20 * S),
        &NativeCc,
    )
    .unwrap();
    let s = &out.sources[0];
    assert_eq!(s.sent_packets, 5000);
    assert_eq!(s.on_ns, 10 * S);
    assert_eq!(s.dropped_packets, 0);
}

#[test]
fn an_exponential_on_off_source_delivers_about_half_its_rate() {
    // Means on = off = 50 ms over 60 s: about n = 600 on/off cycles. The on fraction
    // X / (X + Y) of sums of n exponentials has standard deviation
    // sqrt(2) / (4 sqrt(n)) = 0.0144 (delta method); we allow 3 sd = 0.043.
    let on = OnOffConfig {
        on_ns: 50 * MS,
        off_ns: 50 * MS,
        exponential: true,
    };
    let out = World::run_config(
        &sources_only(vec![cbr(6_000_000, Some(on))], 60 * S),
        &NativeCc,
    )
    .unwrap();
    let s = &out.sources[0];
    let full = 60 * S / (2 * MS); // 30 000 sends if always on
    let share = s.sent_packets as f64 / full as f64;
    eprintln!("on/off share {share:.4}, on time {} ns", s.on_ns);
    assert!((share - 0.5).abs() < 0.043, "sent share {share}");
    let delivered = s.received_bytes as f64 * 8.0 / 60.0 / 6e6;
    assert!(
        (delivered - 0.5).abs() < 0.043,
        "delivered share {delivered}"
    );
    // Within each on period the source sends ceil(on / 2 ms) packets, so the count
    // matches the on time to within one packet per period (at most ~ 2n = 1200 periods
    // counted generously).
    let by_time = s.on_ns as f64 / (2 * MS) as f64;
    assert!(
        (s.sent_packets as f64 - by_time).abs() <= 1200.0,
        "sent {} vs on time {}",
        s.sent_packets,
        by_time
    );
    assert!(s.sent_packets as f64 >= by_time);
}

#[test]
fn sources_are_deterministic_per_seed() {
    let on = OnOffConfig {
        on_ns: 50 * MS,
        off_ns: 50 * MS,
        exponential: true,
    };
    let mut cfg = dumbbell("cubic", 1, 20_000_000, 40 * MS, 1.0, 5 * S);
    cfg.sources = vec![cbr(10_000_000, Some(on)), cbr(5_000_000, None)];
    let a = World::run_config(&cfg, &NativeCc).unwrap();
    let b = World::run_config(&cfg, &NativeCc).unwrap();
    assert_eq!(a, b);
    cfg.seed = 2;
    let c = World::run_config(&cfg, &NativeCc).unwrap();
    assert_ne!(
        a.sources[0].sent_packets, c.sources[0].sent_packets,
        "the on/off draws follow the seed"
    );
}

#[test]
fn bad_sources_are_rejected_naming_the_field() {
    let check = |f: &dyn Fn(&mut WorldConfig), field: &str| {
        let mut cfg = sources_only(vec![cbr(6_000_000, None)], S);
        f(&mut cfg);
        let e = World::new(&cfg, &NativeCc).err().expect("rejected");
        assert_eq!(e.field, field, "{e}");
    };
    check(&|c| c.sources[0].rate_bps = 0, "sources[0].rate_bps");
    check(
        &|c| c.sources[0].packet_bytes = 0,
        "sources[0].packet_bytes",
    );
    check(&|c| c.sources[0].start_ns = S, "sources[0].start_ns");
    check(&|c| c.sources[0].stop_ns = Some(0), "sources[0].stop_ns");
    check(
        &|c| {
            c.sources[0].onoff = Some(OnOffConfig {
                on_ns: 0,
                off_ns: 1,
                exponential: false,
            })
        },
        "sources[0].onoff.on_ns",
    );
    check(
        &|c| {
            c.sources[0].onoff = Some(OnOffConfig {
                on_ns: 1,
                off_ns: 0,
                exponential: true,
            })
        },
        "sources[0].onoff.off_ns",
    );
    check(
        &|c| c.sources[0].sender_access.rate_bps = 0,
        "sources[0].sender_access.rate_bps",
    );
    check(&|c| c.paths = vec![vec!["bottleneck".into()]], "sources");
    check(&|c| c.sources.clear(), "flows");
}

#[test]
fn an_on_off_cubic_flow_sends_only_in_its_on_periods() {
    // One CUBIC flow, 10 Mbit/s, 40 ms RTT, 1 BDP buffer, on = off = 1 s (fixed) for 20 s:
    // 10 on periods. Alone, a bulk flow gets close to the goodput ceiling
    // 10 Mbit/s * 1448 / 1500 = 9.65 Mbit/s; on half of the time, about half of it.
    // Upper bound: 0.5 x 9.65 Mbit/s plus what is in flight when an off period starts
    // (at most cwnd <= BDP + buffer = 100 kB per period: 10 x 100 kB x 8 / 20 s =
    // 0.4 Mbit/s): 5.23 Mbit/s. Lower bound: 85 % of half the ceiling, 4.10 Mbit/s
    // (the first slow start and each period's restart cost a few RTTs of 1 s).
    let mut cfg = dumbbell("cubic", 1, 10_000_000, 40 * MS, 1.0, 20 * S);
    cfg.flows[0].onoff = Some(OnOffConfig {
        on_ns: S,
        off_ns: S,
        exponential: false,
    });
    let out = World::run_config(&cfg, &NativeCc).unwrap();
    let goodput = out.flows[0].delivered_bytes as f64 * 8.0 / 20.0;
    eprintln!("on/off cubic goodput {goodput:.0} bit/s");
    assert!((4.10e6..=5.23e6).contains(&goodput), "goodput {goodput}");
    // In the second half of each off period (after the in-flight data and any recovery:
    // 40 ms RTT, RTO >= 200 ms + srtt) nothing is sent: the 100 ms samples at
    // 2k + 1.6 ... 2k + 2.0 s show a sending rate of 0; mid-on-period ones do not.
    let t = common::u64_col(&out, "time_ns");
    let rate = common::f64_col(&out, "sending_rate_bps");
    let at = |ns: u64| rate[t.iter().position(|&x| x == ns).unwrap()];
    for k in 0..9 {
        for ms in [1600, 1700, 1800, 1900, 2000] {
            assert_eq!(at(2 * k * S + ms * MS), 0.0, "off period {k}, {ms} ms");
        }
        assert!(at(2 * k * S + 500 * MS) > 0.0, "on period {k}");
    }
    // No idle restart (tcp_cwnd_restart is not modelled, world/onoff.rs): cwnd at the end
    // of an off period is what it was halfway through it.
    let cwnd = common::f64_col(&out, "cwnd_pkts");
    let cw = |ns: u64| cwnd[t.iter().position(|&x| x == ns).unwrap()];
    assert_eq!(cw(1600 * MS), cw(2000 * MS));
    // Same seed, same run; exponential periods follow the seed.
    assert_eq!(World::run_config(&cfg, &NativeCc).unwrap(), out);
}

#[test]
fn flows_without_onoff_serialize_as_before() {
    // Configs of existing specs have no "onoff" or "sources" key and build the same world.
    let cfg = dumbbell("cubic", 2, 10_000_000, 40 * MS, 1.0, S);
    let text = serde_json::to_string(&cfg).unwrap();
    assert!(!text.contains("onoff") && !text.contains("sources"));
}

#[test]
fn fq_codel_isolates_cubic_from_an_overloading_cbr_source() {
    // 10 Mbit/s, 40 ms RTT; a CBR source offering 15 Mbit/s and one CUBIC flow, 30 s,
    // fq_codel (Linux defaults: target 5 ms, interval 100 ms, quantum 1514, 1024 queues,
    // limit 10240). DRR gives each backlogged queue an equal byte share, so CUBIC may
    // have 5 Mbit/s of wire rate = 4.83 Mbit/s of goodput; the source is always
    // backlogged. CoDel keeps CUBIC's own queue short, so CUBIC is not always backlogged;
    // we require at least 80 % of its share, at most the share itself plus 2 % (DRR's
    // quantum rounding).
    let mut cfg = dumbbell("cubic", 1, 10_000_000, 40 * MS, 1.0, 30 * S);
    cfg.bottleneck.buffer = Some(QueueLimit::Packets(10240));
    cfg.bottleneck.aqm = Some(AqmConfig::FqCodel(FqCodelConfig {
        target_ns: 5 * MS,
        interval_ns: 100 * MS,
        quantum_bytes: 1514,
        flows: 1024,
        ecn: false,
    }));
    cfg.sources = vec![cbr(15_000_000, None)];
    let out = World::run_config(&cfg, &NativeCc).unwrap();
    let cubic = out.flows[0].delivered_bytes as f64 * 8.0 / 30.0;
    eprintln!(
        "fq_codel: cubic {cubic:.0} bit/s, source delivered {:.0} bit/s",
        out.sources[0].received_bytes as f64 * 8.0 / 30.0
    );
    let share = 5e6 * 1448.0 / 1500.0;
    assert!(
        cubic >= 0.8 * share && cubic <= 1.02 * share,
        "CUBIC goodput {cubic}"
    );
}

#[test]
fn random_worlds_with_sources_and_on_off_flows_conserve_packets() {
    // Conservation (sent = received + dropped + in flight, per flow, per source, per
    // queue) is checked by World::finish; run it on 40 random mixes: small buffers (drops),
    // random loss, fq_codel or drop-tail, on/off flows and sources of random periods.
    let algs = ["cubic", "reno", "bbr", "bbr3"];
    for seed in 0..40u64 {
        let mut r = tcplab_sim::rng::RunRng::new(seed).stream("test/random_sources");
        let mut pick = |n: u64| r.next_u64() % n;
        let n_flows = pick(3) as usize;
        let mut cfg = dumbbell(
            algs[pick(4) as usize],
            n_flows.max(1),
            5_000_000 + pick(20) * 1_000_000,
            (10 + pick(60)) * MS,
            0.2 + pick(20) as f64 / 10.0,
            3 * S,
        );
        if n_flows == 0 {
            cfg.flows.clear();
        }
        cfg.seed = seed;
        cfg.bottleneck.loss = if pick(3) == 0 { 0.01 } else { 0.0 };
        if pick(3) == 0 {
            cfg.bottleneck.buffer = Some(QueueLimit::Packets(1 + pick(200)));
            cfg.bottleneck.aqm = Some(AqmConfig::FqCodel(FqCodelConfig {
                target_ns: 5 * MS,
                interval_ns: 100 * MS,
                quantum_bytes: 1514,
                flows: 1024,
                ecn: false,
            }));
        }
        for f in cfg.flows.iter_mut() {
            f.start_ns = pick(1000) * MS;
            if pick(2) == 0 {
                f.onoff = Some(OnOffConfig {
                    on_ns: (1 + pick(500)) * MS,
                    off_ns: (1 + pick(500)) * MS,
                    exponential: pick(2) == 0,
                });
            }
        }
        for _ in 0..1 + pick(3) {
            let mut s = cbr(1_000_000 + pick(20) * 1_000_000, None);
            s.packet_bytes = 64 + pick(1437) as u32;
            s.start_ns = pick(2000) * MS;
            s.stop_ns = (pick(2) == 0).then(|| s.start_ns + (1 + pick(1000)) * MS);
            if pick(2) == 0 {
                s.onoff = Some(OnOffConfig {
                    on_ns: (1 + pick(300)) * MS,
                    off_ns: (1 + pick(300)) * MS,
                    exponential: pick(2) == 0,
                });
            }
            cfg.sources.push(s);
        }
        let out = World::run_config(&cfg, &NativeCc).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        for s in &out.sources {
            assert!(
                s.sent_packets > 0,
                "seed {seed}: a source that starts before the end sends"
            );
        }
    }
}
