//! `[tcp] hz` reaches the flows' jiffies clocks: at CONFIG_HZ = 250 a jiffy is 4 ms, so
//! every CUBIC epoch starts on a 4 ms tick; at 1000 on a 1 ms tick (7401 ms here, which
//! 4 does not divide: the test could not pass by accident).

mod common;
use common::*;

use tcplab_sim::{NativeCc, World};

fn epoch_starts_ms(hz: u32) -> Vec<f64> {
    let mut cfg = dumbbell("cubic", 1, 50_000_000, 100 * MS, 1.0, 10 * S);
    cfg.tcp.hz = hz;
    let out = World::run_config(&cfg, &NativeCc).unwrap();
    let mut v: Vec<f64> = f64_col(&out, "cc_epoch_start_ms")
        .iter()
        .copied()
        .filter(|&x| x > 0.0)
        .collect();
    v.dedup();
    v
}

#[test]
fn cubic_epochs_start_on_ticks_of_the_simulated_hz() {
    let fine = epoch_starts_ms(1000);
    assert!(fine.iter().any(|x| x % 4.0 != 0.0), "{fine:?}");
    let coarse = epoch_starts_ms(250);
    assert!(!coarse.is_empty());
    assert!(coarse.iter().all(|x| x % 4.0 == 0.0), "{coarse:?}");
}
