//! Benchmark of the host, not the engine: how long one dependent load takes when the data
//! touched lies in a working set of 1 MiB to 256 MiB.
//!
//! `cargo bench -p tcplab-sim --bench memory_latency` prints, per working-set size, the
//! nanoseconds per load of a pointer chase: a single random cycle through the set's
//! 64-byte lines (Sattolo's shuffle, fixed seed), so that each load needs the one before
//! and no hardware prefetcher can guess the next line. `-- SIZES_MIB...` chooses the sizes.
//!
//! Why it is here: the engine's cost per packet at 1000 flows is set by where the state a
//! packet visits (its flow's sender and receiver, four links and their rings: 4-5 MB at
//! 1000 flows) falls on this curve, and the curve differs from host to host (this
//! project's 2-core VMs have measured 8 MiB to 16 MiB of usable last-level cache).
//! Recording it beside the scaling figures (benches/RESULTS.md, "sixteenth step") says
//! which host they came from.

use std::time::Instant;

const LINE: usize = 64;
const WORDS_PER_LINE: usize = LINE / std::mem::size_of::<usize>();
/// Loads timed per size: enough to visit a 256 MiB set's 4 M lines several times.
const LOADS: usize = 20_000_000;

/// splitmix64 (Steele, Lea, Flood 2014): a fixed, dependency-free shuffle source.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Nanoseconds per load of a chase through `mib` MiB, and the index it ended on (printed,
/// so that the compiler must perform every load).
fn chase(mib: usize) -> (f64, usize) {
    let lines = mib * 1024 * 1024 / LINE;
    // Sattolo's algorithm: a uniformly random permutation that is one cycle, so the chase
    // visits every line before it repeats.
    let mut order: Vec<usize> = (0..lines).collect();
    let mut seed = 0x7C91_A5E3_u64;
    for i in (1..lines).rev() {
        let j = (splitmix64(&mut seed) % i as u64) as usize;
        order.swap(i, j);
    }
    // Line `order[k]`'s first word holds the word index of line `order[k + 1]`.
    let mut next = vec![0usize; lines * WORDS_PER_LINE];
    for k in 0..lines {
        next[order[k] * WORDS_PER_LINE] = order[(k + 1) % lines] * WORDS_PER_LINE;
    }
    // One pass to fault the pages in and warm what fits.
    let mut at = 0;
    for _ in 0..lines.min(LOADS) {
        at = next[at];
    }
    let start = Instant::now();
    for _ in 0..LOADS {
        at = next[at];
    }
    let ns = start.elapsed().as_secs_f64() * 1e9 / LOADS as f64;
    (ns, at)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let sizes: Vec<usize> = if args.is_empty() {
        vec![1, 2, 4, 8, 16, 32, 64, 256]
    } else {
        args.iter()
            .map(|a| {
                a.parse()
                    .ok()
                    .filter(|&m: &usize| m > 0)
                    .unwrap_or_else(|| panic!("a size in MiB (a positive integer), not {a:?}"))
            })
            .collect()
    };
    for mib in sizes {
        let (ns, end) = chase(mib);
        println!("{mib:>4} MiB: {ns:6.1} ns per dependent load (ended on {end})");
    }
}
