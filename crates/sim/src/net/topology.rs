//! Topologies beyond the dumbbell, described by data: named links (each a forward and a
//! reverse direction) added to the dumbbell's, and per-flow paths through them.
//!
//! Model: every flow keeps its own sender and receiver access links. A flow's `path` lists
//! the link directions its data crosses between them, by name: `bottleneck`,
//! `bottleneck_reverse`, `<name>` or `<name>_reverse`. Its ACKs cross the same links
//! backwards in the other direction, so a flow whose path is `["bottleneck_reverse"]`
//! sends data from B to A and its ACKs share the bottleneck's data queue with the forward
//! flows (traffic in the reverse direction); `["bottleneck", "l2"]` crosses two
//! bottlenecks in a row (a parking lot when other flows cross one of them). Routers are
//! implicit: a packet that leaves one link of its path is offered to the next at once,
//! source-routed by its flow and kind.
//!
//! Without paths the world is the plain dumbbell and its links forward as before
//! (`NextHop::FlowReceiverAccess` etc.); with any path, every link forwards by route
//! ([`NextHop::Route`]), and a flow without a path takes `["bottleneck"]`.
//!
//! Deviations: no routing protocol, no per-router queues beyond the links' own (a router
//! forwards instantly); a link's reverse direction defaults, as the dumbbell's does, to the
//! forward rate and delay with no loss and an unlimited queue.

use crate::config::WorldConfig;
use crate::contract::ConfigError;
use crate::net::dumbbell::{make, reverse_of, Dumbbell};
use crate::net::link::NextHop;
use crate::rng::RunRng;

pub use crate::config::NamedLink;

fn err(field: String, message: impl Into<String>) -> ConfigError {
    ConfigError {
        field,
        message: message.into(),
    }
}

/// Every link direction of the world by name, in build order: the dumbbell's, then each
/// named link's forward and reverse direction.
pub fn link_names(cfg: &WorldConfig) -> Vec<String> {
    let mut names = crate::net::shaping::dumbbell_link_names(cfg.flows.len());
    for l in &cfg.links {
        names.push(l.name.clone());
        names.push(format!("{}_reverse", l.name));
    }
    names
}

/// The link directions a path may cross.
fn path_names(cfg: &WorldConfig) -> Vec<String> {
    let mut names = vec!["bottleneck".to_string(), "bottleneck_reverse".to_string()];
    for l in &cfg.links {
        names.push(l.name.clone());
        names.push(format!("{}_reverse", l.name));
    }
    names
}

/// Check the named links' names and the paths (the links themselves are checked by
/// `WorldConfig::validate` like any other).
pub fn validate(cfg: &WorldConfig) -> Result<(), ConfigError> {
    for (i, l) in cfg.links.iter().enumerate() {
        let at = format!("links[{i}].name");
        let ok_chars = !l.name.is_empty()
            && l.name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !ok_chars
            || l.name == "bottleneck"
            || l.name.ends_with("_reverse")
            || l.name.starts_with("flow")
        {
            return Err(err(at, format!("'{}': a name is letters, digits, _ and -, not 'bottleneck', not starting with 'flow', not ending in '_reverse'", l.name)));
        }
        if cfg.links[..i].iter().any(|m| m.name == l.name) {
            return Err(err(at, format!("'{}' names two links", l.name)));
        }
    }
    if cfg.paths.is_empty() {
        return Ok(());
    }
    if cfg.paths.len() != cfg.flows.len() {
        return Err(err(
            "paths".into(),
            format!(
                "one per flow: {} paths for {} flows",
                cfg.paths.len(),
                cfg.flows.len()
            ),
        ));
    }
    let names = path_names(cfg);
    for (i, p) in cfg.paths.iter().enumerate() {
        for (k, hop) in p.iter().enumerate() {
            if !names.contains(hop) {
                return Err(err(
                    format!("paths[{i}][{k}]"),
                    format!("no link '{hop}'; links: {}", names.join(", ")),
                ));
            }
            if p[..k].contains(hop) {
                return Err(err(
                    format!("paths[{i}][{k}]"),
                    format!("'{hop}' twice in one path"),
                ));
            }
        }
    }
    Ok(())
}

/// Each flow's link indices, data direction and ACK direction, access links included.
#[derive(Clone, Debug)]
pub struct Routes {
    data: Vec<Vec<usize>>,
    ack: Vec<Vec<usize>>,
}

impl Routes {
    /// Where a packet of `flow` goes after link `from`.
    pub fn next(&self, flow: usize, is_data: bool, from: usize) -> NextHop {
        let r = if is_data {
            &self.data[flow]
        } else {
            &self.ack[flow]
        };
        let pos = r
            .iter()
            .position(|&l| l == from)
            .expect("a packet on a link of its route");
        match r.get(pos + 1) {
            Some(&l) => NextHop::Link(l),
            None if is_data => NextHop::Receiver,
            None => NextHop::Sender,
        }
    }

    /// The links of flow `i`'s round trip: data route, then ACK route.
    pub fn round_trip(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        self.data[i].iter().chain(self.ack[i].iter()).copied()
    }
}

/// `world::handshake_rtt` over a route: a header-only segment's round trip, propagation
/// plus serialization at build time.
pub fn handshake_rtt(
    links: &[crate::net::link::Link],
    round_trip: impl Iterator<Item = usize>,
    header: u32,
) -> crate::time::Dur {
    crate::time::Dur(
        round_trip
            .map(|l| links[l].delay.ns() + links[l].rate.tx_time(u64::from(header)).ns())
            .sum(),
    )
}

/// Add the named links to a built dumbbell; with paths, route every link. A validated
/// config.
pub fn build(cfg: &WorldConfig, net: &mut Dumbbell, rng: &RunRng) -> Option<Routes> {
    let route_all = !cfg.paths.is_empty();
    for l in &cfg.links {
        let rev = l.reverse.clone().unwrap_or_else(|| reverse_of(&l.forward));
        net.links
            .push(make(l.name.clone(), &l.forward, NextHop::Route, rng));
        net.links.push(make(
            format!("{}_reverse", l.name),
            &rev,
            NextHop::Route,
            rng,
        ));
    }
    if !route_all {
        return None;
    }
    for l in net.links.iter_mut() {
        l.next = NextHop::Route;
    }
    let index = |name: &str| {
        net.links
            .iter()
            .position(|l| l.name == name)
            .expect("validated link name")
    };
    let flip = |name: &str| match name.strip_suffix("_reverse") {
        Some(fwd) => fwd.to_string(),
        None => format!("{name}_reverse"),
    };
    let default = vec!["bottleneck".to_string()];
    let mut routes = Routes {
        data: Vec::new(),
        ack: Vec::new(),
    };
    for (i, f) in net.flows.iter().enumerate() {
        let hops = if cfg.paths[i].is_empty() {
            &default
        } else {
            &cfg.paths[i]
        };
        let mut data = vec![f.sender_access];
        data.extend(hops.iter().map(|h| index(h)));
        data.push(f.receiver_access);
        let mut ack = vec![f.receiver_access_rev];
        ack.extend(hops.iter().rev().map(|h| index(&flip(h))));
        ack.push(f.sender_access_rev);
        routes.data.push(data);
        routes.ack.push(ack);
    }
    Some(routes)
}
