//! Every registered algorithm runs a lossy, shallow-buffered dumbbell (where RTOs,
//! lost retransmissions and Recovery-in-Loss happen) to the end with conservation
//! holding, with RACK and with RFC 6675 loss detection, delayed ACKs on and off.

mod common;
use common::*;

use tcplab_sim::NativeCc;
use tcplab_sim::World;

#[test]
fn every_algorithm_survives_loss_and_conserves_packets() {
    for spec in tcplab_cc::registry::ALGORITHMS {
        for (rack, delack) in [(true, true), (false, false)] {
            let mut cfg = dumbbell(spec.name, 3, 20_000_000, 30 * MS, 0.3, 15 * S);
            cfg.bottleneck.loss = 0.02;
            cfg.tcp.rack = rack;
            cfg.tcp.delayed_ack = delack;
            cfg.flows[2].start_ns = 2 * S;
            let out = World::run_config(&cfg, &NativeCc)
                .unwrap_or_else(|e| panic!("{} rack={rack}: {e}", spec.name));
            let goodput: u64 = out.flows.iter().map(|f| f.delivered_bytes).sum();
            let rtos: u64 = out.flows.iter().map(|f| f.rto_count).sum();
            eprintln!(
                "{:>9} rack={rack:<5} delack={delack:<5}: goodput {:.2} Mbit/s, retransmitted {}, rto {rtos}",
                spec.name,
                goodput as f64 * 8.0 / 15e6,
                out.flows.iter().map(|f| f.retransmitted_packets).sum::<u64>()
            );
            assert!(goodput > 0, "{} made no progress", spec.name);
        }
    }
}

/// `world::series_columns` announces, without running, exactly the series columns a run
/// writes (names, order and types), for every registered algorithm: the kernel backend
/// writes its series by this list.
#[test]
fn announced_series_columns_are_the_written_ones() {
    use tcplab_sim::record::{Column, ColumnKind};
    for spec in tcplab_cc::registry::ALGORITHMS {
        let mut cfg = dumbbell(spec.name, 2, 20_000_000, 20 * MS, 2.0, 2 * S);
        cfg.sample_interval_ns = 100 * MS;
        let announced = tcplab_sim::world::series_columns(&cfg, &NativeCc).unwrap();
        let out = World::run_config(&cfg, &NativeCc).unwrap();
        let written: Vec<(String, ColumnKind)> = out
            .series
            .columns
            .iter()
            .map(|(n, c)| {
                let kind = match c {
                    Column::U64(_) => ColumnKind::U64,
                    Column::F64(_) => ColumnKind::F64,
                    Column::Str(_) => ColumnKind::Str,
                };
                (n.clone(), kind)
            })
            .collect();
        assert_eq!(announced, written, "{}", spec.name);
    }
}
