//! Every registered algorithm runs a lossy, shallow-buffered dumbbell (where RTOs,
//! lost retransmissions and Recovery-in-Loss happen) to the end with conservation
//! holding, with RACK and with RFC 6675 loss detection, delayed ACKs on and off.

mod common;
use common::*;

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
            let out = World::run_config(&cfg)
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
