//! The dumbbell: N sender/receiver pairs, each with its own access links, sharing one
//! bottleneck between router A and router B.
//!
//! ```text
//!  sender i --sender_access--> A --bottleneck--> B --receiver_access--> receiver i
//!  sender i <--(reverse)------ A <--(reverse)--- B <--(reverse)-------- receiver i
//! ```
//!
//! Data flows left to right, ACKs right to left. The access links' reverse directions
//! use the same rate and delay as their forward direction, with no loss and an unlimited
//! queue; the bottleneck's reverse direction is `bottleneck_reverse` if configured, else
//! the same rate and delay with no loss and an unlimited queue, so the ACK path is never a
//! bottleneck unless asked.

use crate::config::{LinkConfig, WorldConfig};
use crate::net::link::{Link, NextHop};
use crate::net::netem::Netem;
use crate::rng::RunRng;
use crate::time::{Dur, Rate};

/// Indices (into `Dumbbell::links`) of one flow's four access-link directions.
#[derive(Clone, Copy, Debug)]
pub struct FlowLinks {
    pub sender_access: usize,
    pub sender_access_rev: usize,
    pub receiver_access: usize,
    pub receiver_access_rev: usize,
}

pub struct Dumbbell {
    pub links: Vec<Link>,
    pub bottleneck: usize,
    pub bottleneck_rev: usize,
    pub flows: Vec<FlowLinks>,
}

pub(crate) fn make(name: String, cfg: &LinkConfig, next: NextHop, rng: &RunRng) -> Link {
    let stream = rng.stream(&format!("loss/{name}"));
    let netem = cfg.netem();
    // Its own stream, and only when active: a link without jitter or reordering draws
    // nothing and runs exactly as before they existed.
    let netem_rng = netem.active().then(|| rng.stream(&format!("netem/{name}")));
    let mut link = Link::new(
        name,
        Rate(cfg.rate_bps),
        Dur(cfg.delay_ns),
        cfg.loss,
        cfg.buffer,
        next,
        stream,
    );
    if let Some(r) = netem_rng {
        link.set_netem(Netem::new(&netem, r));
    }
    link
}

/// The reverse direction of an access link: same rate and delay, lossless, unlimited.
pub(crate) fn reverse_of(cfg: &LinkConfig) -> LinkConfig {
    LinkConfig {
        rate_bps: cfg.rate_bps,
        delay_ns: cfg.delay_ns,
        buffer: None,
        loss: 0.0,
        aqm: None,
        // Jitter and reordering are set per direction, as netem on one interface.
        ..LinkConfig::default()
    }
}

/// Build the links of a (validated) configuration.
pub fn build(cfg: &WorldConfig, rng: &RunRng) -> Dumbbell {
    let mut links = Vec::with_capacity(2 + 4 * cfg.flows.len());
    let bottleneck = links.len();
    links.push(make(
        "bottleneck".into(),
        &cfg.bottleneck,
        NextHop::FlowReceiverAccess,
        rng,
    ));
    let bottleneck_rev = links.len();
    let rev = cfg
        .bottleneck_reverse
        .clone()
        .unwrap_or_else(|| reverse_of(&cfg.bottleneck));
    links.push(make(
        "bottleneck_reverse".into(),
        &rev,
        NextHop::FlowSenderAccess,
        rng,
    ));
    let mut flows = Vec::with_capacity(cfg.flows.len());
    for (i, f) in cfg.flows.iter().enumerate() {
        let mut add = |name: String, c: &LinkConfig, next| {
            links.push(make(name, c, next, rng));
            links.len() - 1
        };
        let sender_access = add(
            format!("flow{i}.sender_access"),
            &f.sender_access,
            NextHop::Link(bottleneck),
        );
        let sender_access_rev = add(
            format!("flow{i}.sender_access_reverse"),
            &reverse_of(&f.sender_access),
            NextHop::Sender,
        );
        let receiver_access = add(
            format!("flow{i}.receiver_access"),
            &f.receiver_access,
            NextHop::Receiver,
        );
        let receiver_access_rev = add(
            format!("flow{i}.receiver_access_reverse"),
            &reverse_of(&f.receiver_access),
            NextHop::Link(bottleneck_rev),
        );
        flows.push(FlowLinks {
            sender_access,
            sender_access_rev,
            receiver_access,
            receiver_access_rev,
        });
    }
    Dumbbell {
        links,
        bottleneck,
        bottleneck_rev,
        flows,
    }
}
