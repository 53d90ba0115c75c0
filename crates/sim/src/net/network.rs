//! The network of one run, built once for both backends: the dumbbell's links
//! (`dumbbell::build`), the bottleneck's queue discipline (`bottleneck.aqm`), named links
//! and per-flow routes (`topology::build`), per-link traces and policers (`shaping`),
//! captures (`capture`), and the access links of constant-rate sources (`sources`) and
//! latency probes (`probes`). `World::new` (the simulator) and `Emulator::new`
//! (crates/emu, the kernel backend's bottleneck) both call [`build`], so a network feature
//! is one edit here and both backends have it.
//!
//! Every random draw comes from a named stream of the run's RNG (`aqm/bottleneck`,
//! `loss/<link>`, `netem/<link>`, ...), so the links are the same whichever backend builds
//! them. The order of the steps is part of a run's output: a link's index is the order it
//! was appended in (dumbbell, named links, sources', probes'), and the queue reports are
//! listed in that order.
//!
//! Until 0.10.0 the emulator copied this set-up ("As World::new") and the copies had
//! drifted: only the simulator attached captures. Per difference, what each backend does
//! with what is built here:
//! - Captures: the simulator records the named links' departures for pcap output. The
//!   emulator refuses a config with any (`Emulator::new`, field `capture`) rather than
//!   drop them: its model packets carry a packet id in place of the TCP sequence number
//!   and the real packets are the kernel's, so a capture of its model would write frames
//!   that did not cross the link (the kernel backend's Python side also refuses
//!   `experiment.pcap`).
//! - Sources' and probes' sends, and `[[events]]`: scheduled by each backend's own loop
//!   (the simulator's event queue, the emulator's due times), from `Source::first_send`,
//!   `Probe::first_send` and the config's events; nothing about them is built here.
//!
//! Deviations: none; this builds what the (validated) config says and nothing else.

use crate::config::WorldConfig;
use crate::net::dumbbell::{self, Dumbbell};
use crate::net::topology::Routes;
use crate::probe::Probe;
use crate::rng::RunRng;
use crate::source::Source;
use crate::time::Rate;

/// What [`build`] built: the links with the dumbbell's indices into them, the routes when
/// the config gives paths, and the sources and probes (their links are in `dumbbell.links`).
pub struct Network {
    pub dumbbell: Dumbbell,
    pub routes: Option<Routes>,
    /// Constant-rate sources (source.rs); their packets' `flow` indexes this.
    pub sources: Vec<Source>,
    /// Latency probes (probe.rs); their packets' `flow` indexes this.
    pub probes: Vec<Probe>,
}

/// Build the network of a validated `cfg` from the run's RNG.
pub fn build(cfg: &WorldConfig, rng: &RunRng) -> Network {
    let mut net = dumbbell::build(cfg, rng);
    if let Some(aqm) = &cfg.bottleneck.aqm {
        let qdisc = aqm.build(
            cfg.bottleneck.buffer,
            Rate(cfg.bottleneck.rate_bps),
            rng.stream("aqm/bottleneck"),
        );
        net.links[net.bottleneck].set_qdisc(qdisc);
    }
    let routes = crate::net::topology::build(cfg, &mut net, rng);
    crate::net::shaping::apply(&cfg.shaping, &mut net.links);
    // Before the sources' and probes' links exist: captures name topology links only
    // (validate.rs checks `capture` against `topology::link_names`).
    crate::net::shaping::attach_captures(&cfg.capture, &mut net.links);
    let sources = (cfg.sources.iter().enumerate())
        .map(|(i, c)| Source::build(i, c, cfg.duration_ns, net.bottleneck, &mut net.links, rng))
        .collect();
    let ends = (net.bottleneck, net.bottleneck_rev);
    let probes = (cfg.probes.iter().enumerate())
        .map(|(i, c)| Probe::build(i, c, cfg.duration_ns, ends.0, ends.1, &mut net.links, rng))
        .collect();
    Network {
        dumbbell: net,
        routes,
        sources,
        probes,
    }
}
