//! Property test: random dumbbells (algorithms, rates from 100 kbit/s to 1 Gbit/s,
//! delays, byte or packet buffers down to one packet, random loss in both directions,
//! staggered start/stop, finite flows, mid-run rate/delay/loss changes, RACK on/off,
//! delayed ACKs on/off, ECN on/off per run and per flow, a bottleneck queue discipline
//! or none, latency probes) run to the end without a panic and with every conservation
//! identity holding (`World::finish` checks them and returns an error otherwise).

use proptest::prelude::*;
use tcplab_sim::config::{
    AppConfig, FlowConfig, LinkConfig, LinkEvent, ProbeConfig, QueueLimit, TcpConfig, WorldConfig,
};
use tcplab_sim::net::aqm::codel::CodelConfig;
use tcplab_sim::net::aqm::fq_codel::FqCodelConfig;
use tcplab_sim::net::aqm::pie::PieConfig;
use tcplab_sim::net::aqm::red::RedConfig;
use tcplab_sim::net::aqm::AqmConfig;
use tcplab_sim::NativeCc;
use tcplab_sim::World;

const MS: u64 = 1_000_000;

fn link() -> impl Strategy<Value = LinkConfig> {
    (
        prop_oneof![
            1 => Just(100_000u64),
            2 => Just(1_000_000),
            4 => Just(10_000_000),
            4 => Just(100_000_000),
            4 => Just(1_000_000_000)
        ],
        0u64..50 * MS,
        prop_oneof![
            Just(None),
            (1u64..200).prop_map(|p| Some(QueueLimit::Packets(p))),
            (1500u64..300_000).prop_map(|b| Some(QueueLimit::Bytes(b)))
        ],
        prop_oneof![Just(0.0), 0.0f64..0.1],
    )
        .prop_map(|(rate_bps, delay_ns, buffer, loss)| LinkConfig {
            rate_bps,
            delay_ns,
            buffer,
            loss,
            aqm: None,
            ..Default::default()
        })
}

fn aqm() -> impl Strategy<Value = Option<AqmConfig>> {
    (any::<bool>(), 1u64..50, 1u64..20).prop_flat_map(|(ecn, k, ms)| {
        prop_oneof![
            2 => Just(None),
            1 => Just(Some(AqmConfig::Step { k_pkts: k, ecn })),
            1 => Just(Some(AqmConfig::Red(RedConfig {
                min_bytes: 3_000 * k,
                max_bytes: 9_000 * k,
                max_p: 0.1,
                avpkt_bytes: 1000,
                burst_pkts: None,
                ecn,
                harddrop: false,
            }))),
            1 => Just(Some(AqmConfig::Codel(CodelConfig { target_ns: ms * MS, interval_ns: 20 * ms * MS, ecn }))),
            1 => Just(Some(AqmConfig::FqCodel(FqCodelConfig {
                target_ns: ms * MS,
                interval_ns: 20 * ms * MS,
                quantum_bytes: 1514,
                flows: (k as u32 % 3) + 1,
                ecn,
            }))),
            1 => Just(Some(AqmConfig::Pie(PieConfig { target_ns: ms * MS, tupdate_ns: 15 * MS, alpha: 2, beta: 20, ecn }))),
        ]
    })
}

fn flow(duration_ns: u64) -> impl Strategy<Value = FlowConfig> {
    let algs: Vec<&'static str> = tcplab_cc::registry::names();
    (
        proptest::sample::select(algs),
        link(),
        link(),
        0..duration_ns / 2,
        proptest::option::of(duration_ns / 2..duration_ns * 2),
        prop_oneof![
            Just(AppConfig::Bulk),
            (1u64..2_000_000).prop_map(|bytes| AppConfig::Finite { bytes })
        ],
        proptest::option::of(any::<bool>()),
    )
        .prop_map(
            |(cc, sender_access, receiver_access, start_ns, stop_ns, app, ecn)| FlowConfig {
                cc: cc.to_string(),
                params: Default::default(),
                sender_access,
                receiver_access,
                start_ns,
                stop_ns,
                app,
                ecn,
                onoff: None,
                bpf_object: None,
                bpf_state: None,
            },
        )
}

fn world() -> impl Strategy<Value = WorldConfig> {
    let duration_ns = 3_000 * MS;
    (
        any::<u64>(),
        link(),
        proptest::option::of(link()),
        proptest::collection::vec(flow(duration_ns), 1..5),
        proptest::collection::vec(
            (
                0..duration_ns,
                proptest::option::of(100_000u64..100_000_000),
                proptest::option::of(0..100 * MS),
            ),
            0..3,
        ),
        any::<bool>(),
        any::<bool>(),
        aqm(),
        any::<bool>(),
        // Latency probes (probe.rs): interval 1-500 ms, 28-1499 bytes, random access links.
        proptest::collection::vec(
            (1..500u64, 28u32..1500, 0..duration_ns, link(), link()),
            0..3,
        ),
    )
        .prop_map(
            move |(
                seed,
                bottleneck,
                bottleneck_reverse,
                flows,
                evs,
                rack,
                delayed_ack,
                aqm,
                ecn,
                probes,
            )| WorldConfig {
                duration_ns,
                seed,
                sample_interval_ns: 50 * MS,
                tcp: TcpConfig {
                    rack,
                    delayed_ack,
                    ecn,
                    ..TcpConfig::default()
                },
                bottleneck: LinkConfig { aqm, ..bottleneck },
                bottleneck_reverse,
                flows,
                events: evs
                    .into_iter()
                    .map(|(at_ns, rate_bps, delay_ns)| LinkEvent {
                        at_ns,
                        rate_bps,
                        delay_ns,
                        loss: Some(0.01),
                    })
                    .collect(),
                shaping: Default::default(),
                capture: vec![],
                links: vec![],
                paths: vec![],
                sources: vec![],
                probes: probes
                    .into_iter()
                    .map(|(ms, packet_bytes, start_ns, a, b)| ProbeConfig {
                        interval_ns: ms * MS,
                        packet_bytes,
                        sender_access: a,
                        receiver_access: b,
                        start_ns,
                        stop_ns: None,
                    })
                    .collect(),
                agents: vec![],
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
    #[test]
    fn random_worlds_run_and_conserve_packets(cfg in world()) {
        // Configurations the generator may produce that validation rejects (a stop
        // before its start) are skipped; everything accepted must run cleanly.
        if cfg.validate(&NativeCc).is_ok() {
            let out = World::run_config(&cfg, &NativeCc);
            prop_assert!(out.is_ok(), "{:?}", out.err());
        }
    }
}
