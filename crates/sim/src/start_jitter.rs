//! Start-up variation (`tcp.start_jitter_ns`): a real host does not open a connection at
//! the instant a schedule names. Between a flow's nominal start and its first data
//! segment lie the application's `connect()` (flows due together are opened one after
//! another by one process, each a few system calls), the wake-up of the application when
//! the SYN-ACK makes the socket writable, and whatever else runs on the host's CPUs. The
//! simulator without this opens every flow exactly at its start, so flows given the same
//! start send their first flights in lockstep: they reach the bottleneck together, both
//! overshoot slow start together, and every seed gives (nearly) the same run.
//!
//! Model: each flow's application starts `offset` later than its `start_ns`, with
//! `offset` uniform in `[0, start_jitter_ns)`, drawn once per flow from the run's RNG
//! stream `start/<flow>` (so the same spec and seed give the same offsets, and adding the
//! draw shifts no other component's sequence). Flows due at the same `start_ns` open in
//! index order (0.13.0): the draws of such a group are sorted and handed out in ascending
//! order of flow index, so the group keeps the same set of offsets (the same gaps) and
//! flow 0 leads. The handshake and everything after it follow from the delayed start as
//! they would from a nominal one. `start_jitter_ns = 0` draws nothing and starts every
//! flow exactly on time (the engine before this module).
//!
//! Why the order: the kernel backend's agent, one process, connects and writes the flows
//! due together in index order, and so would any application that opens its connections
//! from one loop: flow 0's first write came first in all 24 same-start kernel runs of the
//! BPF selftest pairs (0.051-0.139 ms ahead; docs/FIDELITY-gaps.md gap 11, "The order is
//! the kernel's every time"). Unordered offsets (0.5.3-0.12.0) put either flow first in
//! about half the seeds, and where a start-up depends on the order (bpf_dctcp against
//! CUBIC; BBR against CUBIC in f03/f04/f15) mixed two outcomes where the kernel shows one.
//! Sorting a pair does not change its gap (`|u1 - u2|` either way), so the fit below holds.
//!
//! Source of the default: the kernel backend on this project's test machine (Linux 6.18,
//! CONFIG_HZ 250, two CUBIC flows due together, 20 Mbit/s, 40 ms, 1 BDP, 21 runs with a
//! capture in the sender's namespace; docs/FIDELITY-gaps.md gap 11). The two flows' first
//! data segments left 0.067 to 16 ms apart: 13 of 21 pairs within 0.07-0.8 ms (the
//! agent's two `connect()`s and first writes back to back; median 0.186 ms), the other 8
//! at 2-16 ms (the agent preempted between them, load average 6-12 on 2 cores). Each
//! SYN-ACK came 40.12-40.31 ms after its SYN (the simulator's header-only round trip:
//! 40.08 ms) and the first data 0.1-0.8 ms after the SYN-ACK (up to 8 ms under load).
//! For two independent uniform offsets on [0, J) the gap's median is (1 - 1/sqrt 2) J =
//! 0.293 J, so the back-to-back group's median gives J = 0.186 / 0.293 = 0.63 ms: 0.6 ms.
//! Whether the pair overshoots slow start together follows the gap: both flows lost
//! ~50 packets in the first 2 s at gaps of 0.067 and 0.074 ms (and one lost 31 at
//! 0.18 ms), ~8 in all at 0.096 ms and above; the simulator's pair locks below ~0.045 ms
//! (24 + 27 retransmissions), not above (6 + 2).
//!
//! Deviations: one uniform draw per flow stands for every source of host delay (connect,
//! wake-up, scheduling); apart from their order the kernel's offsets are not independent
//! between flows (one process opens them in turn, and a late-woken agent writes both in
//! one pass, ~0.07 ms apart) and grow with the host's load, which the engine does not
//! know. Only flows due at the same instant are ordered: flows due under
//! `start_jitter_ns` apart may still open out of order. ACK timing on the hosts is not
//! varied. Constant-rate sources start on time.

use crate::rng::RunRng;
use crate::time::NS_PER_MS;

/// Default `tcp.start_jitter_ns`: 0.6 ms, fitted to the offsets measured above (see the
/// module documentation).
pub const DEFAULT_START_JITTER_NS: u64 = 600_000;

/// Largest `tcp.start_jitter_ns` accepted: 1 s (a host delay, not a schedule; a later
/// start is a `start_ns`).
pub const MAX_START_JITTER_NS: u64 = 1_000 * NS_PER_MS;

/// Flow `flow`'s own draw (ns): uniform in `[0, jitter_ns)` from stream `start/<flow>`;
/// 0 without a draw when `jitter_ns` is 0.
pub fn start_offset_ns(rng: &RunRng, flow: usize, jitter_ns: u64) -> u64 {
    if jitter_ns == 0 {
        return 0;
    }
    // Modulo bias: at most jitter_ns / 2^64 < 1e-10 for jitter_ns <= 1 s.
    rng.stream(&format!("start/{flow}")).next_u64() % jitter_ns
}

/// Every flow's start offset (ns), given the flows' nominal starts in index order: each
/// flow's own draw ([`start_offset_ns`]), then, within each group of flows with the same
/// nominal start, the group's draws sorted and handed out in index order.
pub fn start_offsets_ns(rng: &RunRng, starts_ns: &[u64], jitter_ns: u64) -> Vec<u64> {
    let mut offsets: Vec<u64> = (0..starts_ns.len())
        .map(|i| start_offset_ns(rng, i, jitter_ns))
        .collect();
    let mut by_start: std::collections::BTreeMap<u64, Vec<usize>> = Default::default();
    for (i, &s) in starts_ns.iter().enumerate() {
        by_start.entry(s).or_default().push(i); // ascending flow index within a group
    }
    for group in by_start.values().filter(|g| g.len() > 1) {
        let mut drawn: Vec<u64> = group.iter().map(|&i| offsets[i]).collect();
        drawn.sort_unstable();
        for (&i, d) in group.iter().zip(drawn) {
            offsets[i] = d;
        }
    }
    offsets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_jitter_gives_no_offset() {
        let rng = RunRng::new(1);
        assert_eq!(start_offset_ns(&rng, 0, 0), 0);
        assert_eq!(start_offset_ns(&rng, 7, 0), 0);
    }

    #[test]
    fn offsets_stay_below_the_jitter_and_fill_its_range() {
        // 2000 draws (flows x seeds) of a uniform [0, 2 ms): all below 2 ms; the mean is
        // 1 ms with a standard error of 2 ms / sqrt(12 x 2000) = 12.9 us, so within
        // +-65 us (5 sigma); and both the lowest and highest tenth of the range occur.
        let j = 2_000_000;
        let draws: Vec<u64> = (0..20u64)
            .flat_map(|seed| {
                let rng = RunRng::new(seed);
                (0..100).map(move |f| start_offset_ns(&rng, f, j))
            })
            .collect();
        assert!(draws.iter().all(|&d| d < j));
        let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
        assert!((mean - 1_000_000.0).abs() < 65_000.0, "{mean}");
        assert!(draws.iter().any(|&d| d < 200_000));
        assert!(draws.iter().any(|&d| d >= 1_800_000));
    }

    #[test]
    fn flows_due_together_open_in_index_order_with_the_same_draws() {
        // Seed 1's own draws for flows 0-3 at 0.6 ms; flows 0, 1 and 3 are due at 0 and
        // flow 2 at 5 ms. The group {0, 1, 3} gets its three draws sorted ascending in
        // index order, flow 2 keeps its own draw, and no draw is lost or changed.
        let (rng, j) = (RunRng::new(1), DEFAULT_START_JITTER_NS);
        let own: Vec<u64> = (0..4).map(|i| start_offset_ns(&rng, i, j)).collect();
        let got = start_offsets_ns(&rng, &[0, 0, 5_000_000, 0], j);
        let mut group = [own[0], own[1], own[3]];
        group.sort_unstable();
        assert_eq!(got, vec![group[0], group[1], own[2], group[2]]);
        assert!(got[0] <= got[1] && got[1] <= got[3]);
        // Over 50 seeds two same-start flows come in index order every time, while their
        // own draws are in the other order in some seeds (about half: otherwise the sort
        // would have nothing to do).
        let swapped = (0..50u64)
            .filter(|&seed| {
                let rng = RunRng::new(seed);
                let o = start_offsets_ns(&rng, &[0, 0], j);
                assert!(o[0] <= o[1], "seed {seed}: {o:?}");
                start_offset_ns(&rng, 0, j) > start_offset_ns(&rng, 1, j)
            })
            .count();
        assert!((10..=40).contains(&swapped), "{swapped}");
        // No jitter: every offset 0.
        assert_eq!(start_offsets_ns(&rng, &[0, 0, 7], 0), vec![0, 0, 0]);
    }

    #[test]
    fn two_seeds_and_two_flows_differ_and_a_seed_repeats() {
        let j = DEFAULT_START_JITTER_NS;
        let (a, b) = (RunRng::new(1), RunRng::new(2));
        assert_ne!(start_offset_ns(&a, 0, j), start_offset_ns(&b, 0, j));
        assert_ne!(start_offset_ns(&a, 0, j), start_offset_ns(&a, 1, j));
        assert_eq!(
            start_offset_ns(&a, 1, j),
            start_offset_ns(&RunRng::new(1), 1, j)
        );
    }
}
