//! Scenario tests of topologies (net/topology.rs): a two-bottleneck parking lot
//! and traffic in the reverse direction. Figures printed with
//! `cargo test -p tcplab-sim --release --test topology_scenarios -- --nocapture`.

mod common;
use common::*;

use tcplab_sim::config::{LinkConfig, QueueLimit, WorldConfig};
use tcplab_sim::net::topology::NamedLink;
use tcplab_sim::record::RunOutput;
use tcplab_sim::NativeCc;
use tcplab_sim::World;

/// Payload share of a wire rate: 1448 of every 1500 bytes.
const PAYLOAD: f64 = 1448.0 / 1500.0;

fn mbps(out: &RunOutput, flow: usize, from_s: u64) -> f64 {
    flow_mean(
        out,
        "throughput_bps",
        flow as u64,
        from_s * S,
        out.duration_ns,
    ) / 1e6
}

/// Three CUBIC flows of 40 ms base RTT: flow 0 over `paths[0]`, ... Links of 10 Mbit/s,
/// 5 ms, drop-tail 50 000 bytes (1 BDP at 10 Mbit/s x 40 ms).
fn world(paths: Vec<Vec<&str>>, second_link: bool, duration_s: u64) -> WorldConfig {
    let n = paths.len();
    let mut cfg = dumbbell("cubic", n, 10_000_000, 40 * MS, 1.0, duration_s * S);
    cfg.bottleneck.delay_ns = 5 * MS;
    let bn = cfg.bottleneck.clone();
    if second_link {
        cfg.links.push(NamedLink {
            name: "l2".into(),
            forward: bn.clone(),
            reverse: None,
        });
    }
    for (f, p) in cfg.flows.iter_mut().zip(&paths) {
        // One-way 20 ms = 5 ms per link crossed + the access links (5 ms sender side).
        f.sender_access.delay_ns = 5 * MS;
        f.receiver_access.delay_ns = 15 * MS - 5 * MS * p.len() as u64;
    }
    cfg.paths = paths
        .into_iter()
        .map(|p| p.into_iter().map(String::from).collect())
        .collect();
    cfg
}

#[test]
fn parking_lot_long_flow_gets_less_and_the_links_are_shared_max_min() {
    // Flow 0 crosses both bottlenecks, flow 1 only the first, flow 2 only the second.
    let cfg = world(
        vec![vec!["bottleneck", "l2"], vec!["bottleneck"], vec!["l2"]],
        true,
        60,
    );
    let out = World::run_config(&cfg, &NativeCc).unwrap();
    let x: Vec<f64> = (0..3).map(|i| mbps(&out, i, 10)).collect();
    let (l1, l2) = (x[0] + x[1], x[0] + x[2]);
    println!("throughput after 10 s: long {:.3}, short (l1) {:.3}, short (l2) {:.3} Mbit/s; link 1 {l1:.3}, link 2 {l2:.3}; total {:.3}", x[0], x[1], x[2], x[0] + x[1] + x[2]);
    // The long flow meets congestion at two queues and a longer queueing delay: less than
    // each short flow (the classic parking-lot result; max-min would give each 5 Mbit/s).
    assert!(x[0] < x[1] && x[0] < x[2], "{x:?}");
    // Max-min fairness (by hand): each link is shared by two flows, so each gets 5 Mbit/s
    // and both links are full. Whatever the split, both links stay full: each carries
    // >= 95 % of its payload rate 9.653 Mbit/s (CUBIC with a 1-BDP buffer keeps the link
    // busy; 5 % for the sawtooth).
    let cap = 10.0 * PAYLOAD;
    assert!(l1 >= 0.95 * cap && l2 >= 0.95 * cap, "links {l1} {l2}");
    // The total: max-min gives 3 x 5 = 15 Mbit/s of wire rate (14.48 payload); each
    // Mbit/s the long flow gets below 5 goes to both short flows, so the total is
    // 20 - x_long, between 15 (max-min) and 20 (long flow starved). With the 5 % of idle
    // link above: [0.95 x 14.48, 19.31].
    let total = x[0] + x[1] + x[2];
    assert!(
        (0.95 * 15.0 * PAYLOAD..=20.0 * PAYLOAD).contains(&total),
        "total {total}"
    );
}

#[test]
fn reverse_traffic_puts_acks_in_a_congested_queue() {
    // A forward flow alone, then with a flow the other way (data over bottleneck_reverse,
    // its ACKs over the bottleneck's data queue), both directions 10 Mbit/s with a
    // 50 000-byte drop-tail queue.
    let rev_queue = |mut cfg: WorldConfig| {
        cfg.bottleneck_reverse = Some(LinkConfig {
            rate_bps: 10_000_000,
            delay_ns: 5 * MS,
            buffer: Some(QueueLimit::Bytes(50_000)),
            loss: 0.0,
            aqm: None,
            ..Default::default()
        });
        cfg
    };
    let alone = World::run_config(
        &rev_queue(world(vec![vec!["bottleneck"]], false, 60)),
        &NativeCc,
    )
    .unwrap();
    let both = World::run_config(
        &rev_queue(world(
            vec![vec!["bottleneck"], vec!["bottleneck_reverse"]],
            false,
            60,
        )),
        &NativeCc,
    )
    .unwrap();
    let base = 40.0;
    let rtt_alone = flow_mean(&alone, "srtt_ms", 0, 10 * S, 60 * S);
    let rtt_both = flow_mean(&both, "srtt_ms", 0, 10 * S, 60 * S);
    let rtt_rev = flow_mean(&both, "srtt_ms", 1, 10 * S, 60 * S);
    let (xf, xr) = (mbps(&both, 0, 10), mbps(&both, 1, 10));
    println!("forward flow srtt alone {rtt_alone:.1} ms, with reverse traffic {rtt_both:.1} ms; reverse flow srtt {rtt_rev:.1} ms; throughput {xf:.3} / {xr:.3} Mbit/s");
    let rev = both
        .queues
        .iter()
        .find(|q| q.name == "bottleneck_reverse")
        .unwrap();
    // The reverse flow's data crossed bottleneck_reverse: ~10 Mbit/s x 50 s of 1500-byte
    // packets is >= 40 000 departures (ACKs alone would be ~1 per 2 data packets of 1
    // flow, under 25 000).
    assert!(rev.departed > 40_000, "{}", rev.departed);
    // Each flow's RTT holds both standing queues: its data's and, for its ACKs, the
    // other flow's. By hand: CUBIC backs off to beta = 0.7 of the window that filled pipe
    // and buffer (2 BDP), so each drop-tail queue keeps at least 0.4 BDP = 16 ms at
    // 10 Mbit/s; an RTT crossing both keeps >= 40 + 16 + 16 = 72 ms, against >= 56 ms
    // alone. And the two flows mirror each other: the same mean RTT within 5 %.
    assert!(
        rtt_both >= base + 2.0 * 16.0 && rtt_both > rtt_alone,
        "{rtt_alone} -> {rtt_both}"
    );
    assert!(
        (rtt_both - rtt_rev).abs() <= 0.05 * rtt_rev,
        "{rtt_both} vs {rtt_rev}"
    );
    // ACKs are 52-byte packets: they take < 1 % of a direction's capacity, so both flows
    // still fill their links (>= 90 % of the payload rate).
    assert!(
        xf >= 0.9 * 10.0 * PAYLOAD && xr >= 0.9 * 10.0 * PAYLOAD,
        "{xf} {xr}"
    );
}

#[test]
fn without_paths_the_dumbbell_is_unchanged() {
    // The same dumbbell with and without an explicit default path for every flow: the
    // routed world forwards exactly as the dumbbell does. Only its event count differs:
    // the plain dumbbell's bottlenecks hand packets over at departure (net/link.rs), a
    // routed bottleneck does not (its next hop is a route), which costs one arrival
    // event per packet and per ACK crossing it, less those the plain one propagated too
    // (a packet behind another still in the pipe, or arriving after the run's end).
    let plain = dumbbell("cubic", 2, 10_000_000, 40 * MS, 1.0, 10 * S);
    let mut routed = plain.clone();
    routed.paths = vec![vec!["bottleneck".into()], vec![]];
    let (a, b) = (
        World::run_config(&plain, &NativeCc).unwrap(),
        World::run_config(&routed, &NativeCc).unwrap(),
    );
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.queues, b.queues);
    let crossings = a.queues.iter().filter(|q| q.name.starts_with("bottleneck"));
    let handed_over: u64 = crossings.map(|q| q.departed).sum();
    let saved = b.events_processed - a.events_processed;
    assert!(
        saved <= handed_over && saved >= handed_over * 99 / 100,
        "{saved} {handed_over}"
    );
}

#[test]
fn bad_paths_are_named() {
    let mut cfg = world(vec![vec!["bottleneck", "l3"]], true, 1);
    assert_eq!(
        World::run_config(&cfg, &NativeCc).unwrap_err().to_string(),
        "paths[0][1]: no link 'l3'; links: bottleneck, bottleneck_reverse, l2, l2_reverse"
    );
    cfg.paths = vec![vec!["l2".into(), "l2".into()]];
    assert!(World::run_config(&cfg, &NativeCc)
        .unwrap_err()
        .to_string()
        .contains("twice"));
    cfg.links[0].name = "flow0".into();
    assert!(World::run_config(&cfg, &NativeCc)
        .unwrap_err()
        .to_string()
        .starts_with("links[0].name"));
}
