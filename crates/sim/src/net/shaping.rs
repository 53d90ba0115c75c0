//! Per-link shaping named by link: a Mahimahi trace in place of the line rate
//! ([`crate::net::trace`]) and/or a token-bucket policer at the entrance
//! ([`crate::net::policer`]), for any direction of any link of the topology.
//!
//! The configuration names links as the topology builder does (`bottleneck`,
//! `bottleneck_reverse`, `flow3.receiver_access`, `flow3.sender_access_reverse`, ...), so
//! that `LinkConfig` and the builder stay unchanged and a link without shaping costs one
//! `None` test per packet.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::contract::{ConfigError, TcpConfig};
use crate::net::capture::Capture;
use crate::net::link::Link;
use crate::net::policer::{Policer, PolicerConfig};
use crate::net::trace::{TraceConfig, TraceServer};
use crate::record::Table;

/// What shapes one link direction.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Shaping {
    #[serde(default)]
    pub trace: Option<TraceConfig>,
    #[serde(default)]
    pub policer: Option<PolicerConfig>,
}

fn err(field: String, message: impl Into<String>) -> ConfigError {
    ConfigError {
        field,
        message: message.into(),
    }
}

/// Check every entry; `names` are the links the topology has.
pub fn validate(
    shaping: &BTreeMap<String, Shaping>,
    names: &[String],
    tcp: &TcpConfig,
) -> Result<(), ConfigError> {
    for (name, s) in shaping {
        let at = format!("shaping.{name}");
        if !names.iter().any(|n| n == name) {
            return Err(err(
                at,
                format!("no such link; links: {}", names.join(", ")),
            ));
        }
        if let Some(t) = &s.trace {
            if let Some(why) = t.problem() {
                return Err(err(format!("{at}.trace"), why));
            }
        }
        if let Some(p) = &s.policer {
            if p.rate_bps == 0 {
                return Err(err(format!("{at}.policer.rate_bps"), "must be > 0"));
            }
            let full = u64::from(tcp.mss_bytes) + u64::from(tcp.header_bytes);
            if p.burst_bytes < full {
                return Err(err(
                    format!("{at}.policer.burst_bytes"),
                    format!("must hold at least one full packet ({full} bytes)"),
                ));
            }
        }
        if s.trace.is_none() && s.policer.is_none() {
            return Err(err(at, "shapes nothing: give trace and/or policer"));
        }
    }
    Ok(())
}

/// The link names of a dumbbell of `n` flows, as `dumbbell::build` names them.
pub fn dumbbell_link_names(n: usize) -> Vec<String> {
    let mut names = vec!["bottleneck".to_string(), "bottleneck_reverse".to_string()];
    for i in 0..n {
        for l in [
            "sender_access",
            "sender_access_reverse",
            "receiver_access",
            "receiver_access_reverse",
        ] {
            names.push(format!("flow{i}.{l}"));
        }
    }
    names
}

/// Attach the shaping to the links it names (validated before).
pub fn apply(shaping: &BTreeMap<String, Shaping>, links: &mut [Link]) {
    for l in links.iter_mut() {
        if let Some(s) = shaping.get(&l.name) {
            let x = l.extras_mut();
            x.trace = s.trace.as_ref().map(TraceServer::new);
            x.policer = s.policer.as_ref().map(Policer::new);
        }
    }
}

/// Give each link named in `names` (validated: each names a link) a capture
/// (net/capture.rs).
pub fn attach_captures(names: &[String], links: &mut [Link]) {
    for l in links.iter_mut() {
        if names.contains(&l.name) {
            l.extras_mut().capture = Some(Capture::default());
        }
    }
}

/// The captured links' tables, in link order.
pub fn capture_tables(links: &[Link]) -> Vec<(String, Table)> {
    links
        .iter()
        .filter_map(|l| {
            l.extras
                .as_ref()?
                .capture
                .as_ref()
                .map(|c| (l.name.clone(), c.table()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::WorldConfig;

    #[test]
    fn names_are_the_builders() {
        let text = r#"{"duration_ns": 1000000, "bottleneck": {"rate_bps": 10000000, "delay_ns": 0},
            "flows": [{"cc": "reno", "sender_access": {"rate_bps": 1000000000, "delay_ns": 0},
                       "receiver_access": {"rate_bps": 1000000000, "delay_ns": 0}},
                      {"cc": "reno", "sender_access": {"rate_bps": 1000000000, "delay_ns": 0},
                       "receiver_access": {"rate_bps": 1000000000, "delay_ns": 0}}]}"#;
        let cfg = WorldConfig::from_json(text).unwrap();
        let net = crate::net::dumbbell::build(&cfg, &crate::rng::RunRng::new(1));
        let mut built: Vec<String> = net.links.iter().map(|l| l.name.clone()).collect();
        let mut named = dumbbell_link_names(2);
        built.sort();
        named.sort();
        assert_eq!(built, named);
    }

    #[test]
    fn unknown_link_and_small_burst_are_named() {
        let tcp = TcpConfig::default();
        let names = dumbbell_link_names(1);
        let mut m = BTreeMap::new();
        m.insert(
            "bottlenek".to_string(),
            Shaping {
                trace: None,
                policer: Some(PolicerConfig {
                    rate_bps: 1,
                    burst_bytes: 1500,
                }),
            },
        );
        assert_eq!(
            validate(&m, &names, &tcp).unwrap_err().field,
            "shaping.bottlenek"
        );
        let mut m = BTreeMap::new();
        m.insert(
            "bottleneck".to_string(),
            Shaping {
                trace: None,
                policer: Some(PolicerConfig {
                    rate_bps: 1,
                    burst_bytes: 1499,
                }),
            },
        );
        assert_eq!(
            validate(&m, &names, &tcp).unwrap_err().field,
            "shaping.bottleneck.policer.burst_bytes"
        );
    }
}
