//! Run a dumbbell from a JSON configuration and print the counters (for debugging):
//! `cargo run -p tcplab-sim --example dumbbell -- crates/sim/examples/dumbbell.json`
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        eprintln!("usage: dumbbell CONFIG.json");
        std::process::exit(2)
    });
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let t0 = Instant::now();
    match tcplab_sim::run_json(&text, &tcplab_sim::NativeCc) {
        Ok(out) => {
            let wall = t0.elapsed().as_secs_f64();
            for (i, f) in out.flows.iter().enumerate() {
                println!(
                    "flow {i} {:>8}: sent {} pkts ({} B), retrans {}, received {} B, delivered {} B, dup {}, dropped {}, in flight {}, rto {}, recoveries {}, goodput {:.3} Mbit/s",
                    f.cc, f.sent_packets, f.sent_bytes, f.retransmitted_packets, f.received_bytes, f.delivered_bytes,
                    f.duplicate_packets, f.dropped_packets, f.in_flight_packets_at_end, f.rto_count, f.recoveries,
                    f.delivered_bytes as f64 * 8.0 / ((f.stop_ns.min(out.duration_ns) - f.start_ns) as f64 / 1e9) / 1e6
                );
            }
            for q in &out.queues {
                println!(
                    "queue {:<32} enqueued {:>9} departed {:>9} dropped {:>7} (random {}) backlog {}",
                    q.name, q.enqueued, q.departed, q.dropped, q.random_loss, q.backlog_pkts
                );
            }
            println!(
                "bottleneck packets {}, events {}, wall {:.3} s, {:.0} bottleneck packets/s",
                out.bottleneck_packets,
                out.events_processed,
                wall,
                out.bottleneck_packets as f64 / wall
            );
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1)
        }
    }
}
