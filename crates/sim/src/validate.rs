//! Validation of a [`WorldConfig`]: every field checked before anything is built, the
//! first problem reported with its path and what is allowed. Each flow's algorithm is
//! checked by the [`ControllerFactory`] the caller hands in (the engine does not know
//! where algorithms come from). This lives apart from `config` (plain types) because it
//! calls into the modules that validate their own sections (`net::topology`,
//! `net::shaping`), which in turn read the config types: no import circle.

use crate::config::{
    AppConfig, ConfigError, LinkConfig, OnOffConfig, QueueLimit, TcpConfig, WorldConfig,
};
use crate::contract::ControllerFactory;

/// Series rows a run may record (each row is ~100 bytes in memory): a guard against a
/// sampling interval that would exhaust memory.
pub const MAX_SERIES_ROWS: u64 = 20_000_000;

fn err(field: impl Into<String>, message: impl Into<String>) -> ConfigError {
    ConfigError {
        field: field.into(),
        message: message.into(),
    }
}

/// Largest wire size of a data segment: a byte-limited buffer must hold at least one.
fn full_packet(tcp: &TcpConfig) -> u64 {
    tcp.mss_bytes as u64 + tcp.header_bytes as u64
}

impl WorldConfig {
    /// Check every field, each flow's algorithm by building it with `cc` (seed 0); the
    /// first problem found is reported with its path.
    pub fn validate(&self, cc: &dyn ControllerFactory) -> Result<(), ConfigError> {
        self.check(Some(cc))?;
        // Interval agents (world/agents.rs): built by `cc`, on flows that run `external`.
        crate::world::check_agents(self, cc)
    }

    /// Check every field but the flows' algorithms: for a caller that carries packets
    /// and leaves the algorithms to someone else (the kernel backend's emulator).
    pub fn validate_network(&self) -> Result<(), ConfigError> {
        self.check(None)
    }

    fn check(&self, cc: Option<&dyn ControllerFactory>) -> Result<(), ConfigError> {
        if self.duration_ns == 0 {
            return Err(err("duration_ns", "must be > 0"));
        }
        let t = &self.tcp;
        if t.mss_bytes == 0 || t.mss_bytes > 65_495 {
            return Err(err("tcp.mss_bytes", "must be in [1, 65495]"));
        }
        if t.header_bytes > 1_000 {
            return Err(err("tcp.header_bytes", "must be in [0, 1000]"));
        }
        if t.initial_cwnd == 0 || t.initial_cwnd > 1_000_000 {
            return Err(err("tcp.initial_cwnd", "must be in [1, 1000000] segments"));
        }
        if !(1_000_000..=60_000_000_000).contains(&t.rto_min_ns) {
            return Err(err("tcp.rto_min_ns", "must be in [1 ms, 60 s]"));
        }
        if tcplab_cc::bbr::kernel::KernelRelease::from_code(f64::from(t.kernel)).is_none() {
            return Err(err(
                "tcp.kernel",
                format!(
                    "{} is not a profiled release; use 409, 414, 417 or 618 (4.9, 4.14, 4.17, \
                     6.18)",
                    t.kernel
                ),
            ));
        }
        if !tcplab_cc::ops::ALLOWED_HZ.contains(&t.hz) {
            return Err(err(
                "tcp.hz",
                format!(
                    "{} is not a CONFIG_HZ a kernel is built with; use 100, 250, 300 or 1000",
                    t.hz
                ),
            ));
        }
        if t.start_jitter_ns > crate::start_jitter::MAX_START_JITTER_NS {
            return Err(err(
                "tcp.start_jitter_ns",
                format!(
                    "must be in [0, 1 s] (a host's start-up delay; a later start is the flow's \
                     start), got {} ns",
                    t.start_jitter_ns
                ),
            ));
        }
        if let Some(ts) = t.rcv_truesize {
            // scaling_ratio = 256 x mss / truesize must be in [1, 255] (a u8 in Linux).
            if ts <= t.mss_bytes || ts as u64 > 256 * t.mss_bytes as u64 {
                return Err(err(
                    "tcp.rcv_truesize",
                    format!("must be > mss ({}) and <= 256 x mss bytes", t.mss_bytes),
                ));
            }
        }
        check_link("bottleneck", &self.bottleneck, t)?;
        if let Some(a) = &self.bottleneck.aqm {
            a.validate("bottleneck.aqm")?;
        }
        if let Some(r) = &self.bottleneck_reverse {
            check_link("bottleneck_reverse", r, t)?;
        }
        if self.flows.is_empty() && self.sources.is_empty() && self.probes.is_empty() {
            return Err(err(
                "flows",
                "at least one flow, source or probe is required",
            ));
        }
        self.check_sources()?;
        self.check_probes()?;
        if let Some(samples) = self.duration_ns.checked_div(self.sample_interval_ns) {
            let rows = samples.saturating_mul(self.flows.len() as u64);
            if rows > MAX_SERIES_ROWS {
                return Err(err(
                    "sample_interval_ns",
                    format!("too small: {rows} series rows (duration / interval * flows); at most {MAX_SERIES_ROWS}"),
                ));
            }
        }
        for (i, f) in self.flows.iter().enumerate() {
            let p = format!("flows[{i}]");
            if let Some(cc) = cc {
                cc.build(&f.cc_choice(t.hz), 0)
                    .map_err(|e| err(format!("{p}.{}", e.field), e.message))?;
            }
            check_link(&format!("{p}.sender_access"), &f.sender_access, t)?;
            check_link(&format!("{p}.receiver_access"), &f.receiver_access, t)?;
            if f.start_ns >= self.duration_ns {
                return Err(err(
                    format!("{p}.start_ns"),
                    format!("must be before duration_ns ({})", self.duration_ns),
                ));
            }
            if let Some(stop) = f.stop_ns {
                if stop <= f.start_ns {
                    return Err(err(
                        format!("{p}.stop_ns"),
                        format!("must be after start_ns ({})", f.start_ns),
                    ));
                }
            }
            if let Some(o) = f.onoff {
                check_onoff(&format!("{p}.onoff"), o)?;
            }
            if let AppConfig::Finite { bytes } = f.app {
                if bytes == 0 {
                    return Err(err(format!("{p}.app.finite.bytes"), "must be > 0"));
                }
            }
        }
        for (i, l) in self.links.iter().enumerate() {
            check_link(&format!("links[{i}].forward"), &l.forward, t)?;
            if let Some(r) = &l.reverse {
                check_link(&format!("links[{i}].reverse"), r, t)?;
            }
        }
        crate::net::topology::validate(self)?;
        let names = crate::net::topology::link_names(self);
        crate::net::shaping::validate(&self.shaping, &names, t)?;
        for (i, c) in self.capture.iter().enumerate() {
            if !names.contains(c) {
                return Err(err(
                    format!("capture[{i}]"),
                    format!("no link '{c}'; links: {}", names.join(", ")),
                ));
            }
        }
        let traced = self
            .shaping
            .get("bottleneck")
            .is_some_and(|s| s.trace.is_some());
        for (i, e) in self.events.iter().enumerate() {
            let p = format!("events[{i}]");
            if traced && e.rate_bps.is_some() {
                return Err(err(
                    format!("{p}.rate_bps"),
                    "the bottleneck's capacity follows a trace; a rate change is not allowed",
                ));
            }
            if e.at_ns > self.duration_ns {
                return Err(err(
                    format!("{p}.at_ns"),
                    format!("must be <= duration_ns ({})", self.duration_ns),
                ));
            }
            if e.rate_bps == Some(0) {
                return Err(err(format!("{p}.rate_bps"), "must be > 0"));
            }
            if e.delay_ns.is_some_and(|d| d > MAX_LINK_DELAY_NS) {
                return Err(err(format!("{p}.delay_ns"), "must be at most one hour"));
            }
            if let Some(l) = e.loss {
                check_loss(&format!("{p}.loss"), l)?;
            }
            if e.rate_bps.is_none() && e.delay_ns.is_none() && e.loss.is_none() {
                return Err(err(p, "changes nothing: set rate_bps, delay_ns or loss"));
            }
        }
        Ok(())
    }
}

impl WorldConfig {
    /// What a constant-rate source and a probe share: their packet size, their two access
    /// links, and a send window inside the run (`p` names the entry, e.g. `probes[0]`).
    fn check_sender(
        &self,
        p: &str,
        packet_bytes: u32,
        (sender_access, receiver_access): (&LinkConfig, &LinkConfig),
        (start_ns, stop_ns): (u64, Option<u64>),
    ) -> Result<(), ConfigError> {
        if !(1..=65_535).contains(&packet_bytes) {
            return Err(err(format!("{p}.packet_bytes"), "must be in [1, 65535]"));
        }
        check_link(&format!("{p}.sender_access"), sender_access, &self.tcp)?;
        check_link(&format!("{p}.receiver_access"), receiver_access, &self.tcp)?;
        if start_ns >= self.duration_ns {
            return Err(err(
                format!("{p}.start_ns"),
                format!("must be before duration_ns ({})", self.duration_ns),
            ));
        }
        if stop_ns.is_some_and(|t| t <= start_ns) {
            return Err(err(
                format!("{p}.stop_ns"),
                format!("must be after start_ns ({start_ns})"),
            ));
        }
        Ok(())
    }

    fn check_sources(&self) -> Result<(), ConfigError> {
        if !self.sources.is_empty() && (!self.links.is_empty() || !self.paths.is_empty()) {
            return Err(err(
                "sources",
                "sources run on the dumbbell only (no links or paths)",
            ));
        }
        for (i, s) in self.sources.iter().enumerate() {
            let p = format!("sources[{i}]");
            if s.rate_bps == 0 {
                return Err(err(format!("{p}.rate_bps"), "must be > 0"));
            }
            self.check_sender(
                &p,
                s.packet_bytes,
                (&s.sender_access, &s.receiver_access),
                (s.start_ns, s.stop_ns),
            )?;
            if let Some(o) = s.onoff {
                check_onoff(&format!("{p}.onoff"), o)?;
            }
        }
        Ok(())
    }
}

impl WorldConfig {
    fn check_probes(&self) -> Result<(), ConfigError> {
        if !self.probes.is_empty() && (!self.links.is_empty() || !self.paths.is_empty()) {
            return Err(err(
                "probes",
                "probes run on the dumbbell only (no links or paths)",
            ));
        }
        if !self.probes.is_empty() && !self.capture.is_empty() {
            return Err(err(
                "capture",
                "links carrying probes cannot be captured (pcap has no ICMP frames yet); \
                 leave out capture or probes",
            ));
        }
        for (i, s) in self.probes.iter().enumerate() {
            let p = format!("probes[{i}]");
            if s.interval_ns == 0 {
                return Err(err(format!("{p}.interval_ns"), "must be > 0"));
            }
            self.check_sender(
                &p,
                s.packet_bytes,
                (&s.sender_access, &s.receiver_access),
                (s.start_ns, s.stop_ns),
            )?;
        }
        Ok(())
    }
}

fn check_onoff(path: &str, o: OnOffConfig) -> Result<(), ConfigError> {
    if o.on_ns == 0 {
        return Err(err(format!("{path}.on_ns"), "must be > 0"));
    }
    if o.off_ns == 0 {
        return Err(err(format!("{path}.off_ns"), "must be > 0"));
    }
    Ok(())
}

/// The longest one-way link delay a config may ask for, at start or by an event.
const MAX_LINK_DELAY_NS: u64 = 3_600 * 1_000_000_000;

fn check_loss(field: &str, loss: f64) -> Result<(), ConfigError> {
    if !loss.is_finite() || !(0.0..1.0).contains(&loss) {
        return Err(err(field, format!("{loss} is outside [0, 1)")));
    }
    Ok(())
}

fn check_link(path: &str, l: &LinkConfig, tcp: &TcpConfig) -> Result<(), ConfigError> {
    if l.aqm.is_some() && path != "bottleneck" {
        return Err(err(
            format!("{path}.aqm"),
            "a queue discipline is modelled on the bottleneck's data direction only",
        ));
    }
    if l.rate_bps == 0 {
        return Err(err(format!("{path}.rate_bps"), "must be > 0"));
    }
    if l.delay_ns > MAX_LINK_DELAY_NS {
        return Err(err(format!("{path}.delay_ns"), "must be at most one hour"));
    }
    match l.buffer {
        Some(QueueLimit::Packets(0)) => {
            return Err(err(format!("{path}.buffer.packets"), "must be > 0"))
        }
        Some(QueueLimit::Bytes(b)) if b < full_packet(tcp) => {
            return Err(err(
                format!("{path}.buffer.bytes"),
                format!(
                    "must hold at least one full packet ({} bytes)",
                    full_packet(tcp)
                ),
            ))
        }
        _ => {}
    }
    check_loss(&format!("{path}.loss"), l.loss)?;
    check_netem(path, l)
}

/// The jitter and reorder fields (net/netem.rs), with netem's and tc's limits.
fn check_netem(path: &str, l: &LinkConfig) -> Result<(), ConfigError> {
    if l.jitter_ns > i32::MAX as u64 {
        return Err(err(
            format!("{path}.jitter_ns"),
            "must be at most 2147483647 ns (netem's jitter is an s32 of ns)",
        ));
    }
    for (name, v) in [
        ("jitter_correlation", l.jitter_correlation),
        ("reorder", l.reorder),
        ("reorder_correlation", l.reorder_correlation),
    ] {
        if !v.is_finite() || !(0.0..=1.0).contains(&v) {
            return Err(err(
                format!("{path}.{name}"),
                format!("{v} is outside [0, 1]"),
            ));
        }
    }
    if l.reorder_gap == 0 {
        return Err(err(format!("{path}.reorder_gap"), "must be >= 1"));
    }
    if l.reorder > 0.0 && l.delay_ns == 0 {
        // tc/q_netem.c: "reordering not possible without specifying some delay".
        return Err(err(
            format!("{path}.reorder"),
            "needs a delay: a reordered packet skips the link's delay, and this link has none",
        ));
    }
    Ok(())
}
