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
//! What was built is also described for the run's output ([`link_reports`]: each link's
//! name, rate, delay, loss, trace and scheduled changes), so that both backends report the
//! links they ran and the analysis need not trust the spec to be what ran.
//!
//! Deviations: none; this builds what the (validated) config says and nothing else.

use crate::config::WorldConfig;
use crate::net::dumbbell::{self, Dumbbell};
use crate::net::link::Link;
use crate::net::topology::Routes;
use crate::probe::Probe;
use crate::record::LinkReport;
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
    /// Every link as built, in link order, for the run's output (`RunOutput::links`).
    pub links: Vec<LinkReport>,
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
    let links = link_reports(cfg, &net.links, net.bottleneck);
    Network {
        dumbbell: net,
        routes,
        sources,
        probes,
        links,
    }
}

/// Each built link as the output describes it: its rate, delay and loss as built (a
/// traced link's rate is the trace's mean, `shaping` being what attached the trace), and
/// on the bottleneck the config's `events`, which both backends apply to it in order.
pub fn link_reports(cfg: &WorldConfig, links: &[Link], bottleneck: usize) -> Vec<LinkReport> {
    (links.iter().enumerate())
        .map(|(i, l)| {
            let trace = cfg.shaping.get(&l.name).and_then(|s| s.trace.as_ref());
            LinkReport {
                name: l.name.clone(),
                rate_bps: trace.map_or(l.rate.0, |t| t.mean_rate_bps()),
                delay_ns: l.delay.0,
                loss: l.loss,
                trace: trace.map(|t| t.name.clone()),
                events: if i == bottleneck {
                    cfg.events.clone()
                } else {
                    Vec::new()
                },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_output_carries_the_links_as_built_with_trace_loss_and_events() {
        // Bottleneck 10 Mbit/s, 10 ms, loss 1 %, one rate change at 0.5 s; its reverse
        // served by a trace of 3 opportunities per 4 ms: 3 x 1500 B x 8 / 4 ms = 9 Mbit/s.
        let text = r#"{"duration_ns": 1000000000,
            "bottleneck": {"rate_bps": 10000000, "delay_ns": 10000000, "loss": 0.01},
            "events": [{"at_ns": 500000000, "rate_bps": 5000000}],
            "shaping": {"bottleneck_reverse": {"trace": {"name": "t.trace", "opportunities_ms": [1, 2, 4]}}},
            "flows": [{"cc": "reno", "sender_access": {"rate_bps": 1000000000, "delay_ns": 5000000},
                       "receiver_access": {"rate_bps": 1000000000, "delay_ns": 2000000}}]}"#;
        let out = crate::run_json(text, &crate::NativeCc).unwrap();
        // name, rate, delay, loss, trace, events
        type Row<'a> = (&'a str, u64, u64, f64, Option<&'a str>, usize);
        let got: Vec<Row> = (out.links.iter())
            .map(|l| {
                let t = l.trace.as_deref();
                (
                    l.name.as_str(),
                    l.rate_bps,
                    l.delay_ns,
                    l.loss,
                    t,
                    l.events.len(),
                )
            })
            .collect();
        let g = 1_000_000_000;
        assert_eq!(
            got,
            [
                ("bottleneck", 10_000_000, 10_000_000, 0.01, None, 1),
                (
                    "bottleneck_reverse",
                    9_000_000,
                    10_000_000,
                    0.0,
                    Some("t.trace"),
                    0
                ),
                ("flow0.sender_access", g, 5_000_000, 0.0, None, 0),
                ("flow0.sender_access_reverse", g, 5_000_000, 0.0, None, 0),
                ("flow0.receiver_access", g, 2_000_000, 0.0, None, 0),
                ("flow0.receiver_access_reverse", g, 2_000_000, 0.0, None, 0),
            ]
        );
        let e = &out.links[0].events[0];
        assert_eq!(
            (e.at_ns, e.rate_bps, e.delay_ns),
            (500_000_000, Some(5_000_000), None)
        );
        // Listed in the order of the queue reports, which name the same links.
        let queues: Vec<&str> = out.queues.iter().map(|q| q.name.as_str()).collect();
        let links: Vec<&str> = out.links.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(queues, links);
    }
}
