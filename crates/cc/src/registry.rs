//! Algorithms by name. Each algorithm module exports one `AlgorithmSpec` (its name,
//! source, parameter schema and factory); `ALGORITHMS` lists them once. The parameter
//! schema is what `tcplab algorithms` prints and what spec validation checks against.

use std::collections::BTreeMap;
use std::fmt;

use crate::ops::CongestionOps;

/// An algorithm's family: the signal its window or rate follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Loss-based AIMD or cubic growth (Reno, CUBIC).
    Loss,
    /// Delay-based (Vegas).
    Delay,
    /// Loss-based with a delay-dependent step (Illinois).
    LossDelay,
    /// BBRv1's model (tcp_bbr.c) and the variants built on it: STARTUP, DRAIN,
    /// PROBE_BW, PROBE_RTT.
    Bbr,
    /// BBRv2/v3's model (google/bbr): BBRv1's modes plus the PROBE_BW phases and
    /// loss/ECN bounds.
    Bbr3,
    /// ECN-fraction based (DCTCP).
    Ecn,
    /// Set from outside the stack (`external`: an agent through the stepping engine).
    External,
}

impl Family {
    /// The name the front end and `tcplab algorithms` use.
    pub fn name(self) -> &'static str {
        match self {
            Family::Loss => "loss",
            Family::Delay => "delay",
            Family::LossDelay => "loss_delay",
            Family::Bbr => "bbr",
            Family::Bbr3 => "bbr3",
            Family::Ecn => "ecn",
            Family::External => "external",
        }
    }
}

/// The type of one algorithm parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamKind {
    Float,
    Int,
    Bool,
    /// One of a fixed list: the spec writes a label, the algorithm reads its value
    /// (`min`/`max` unused). The list is written once, here, and exported with the
    /// registry, so the front end takes the labels from the engine.
    Choice(&'static [ParamChoice]),
}

/// One allowed value of a [`ParamKind::Choice`] parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamChoice {
    /// What the spec writes (`"4.9"`).
    pub label: &'static str,
    /// What the parameter carries to the engine and the algorithm reads (409).
    pub value: f64,
}

/// One tunable: its name, default, allowed range and meaning (with its source).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamKind,
    /// Default value (bools: 0.0 / 1.0).
    pub default: f64,
    /// Inclusive lower and upper bounds (ignored for bools).
    pub min: f64,
    pub max: f64,
    /// What it means, its unit and where the default comes from.
    pub doc: &'static str,
}

/// A value given for a parameter: a number or a flag.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamValue {
    Num(f64),
    Bool(bool),
}

/// Parameters after validation: every name of the schema present, defaults filled in.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params {
    values: BTreeMap<&'static str, f64>,
}

impl Params {
    /// The value of `name`; panics if the name is not in the algorithm's schema, which
    /// is a bug in the algorithm's factory, never a user error (validation runs first).
    pub fn get(&self, name: &str) -> f64 {
        match self.values.get(name) {
            Some(v) => *v,
            None => panic!("parameter {name:?} is not in this algorithm's schema"),
        }
    }
    pub fn get_bool(&self, name: &str) -> bool {
        self.get(name) != 0.0
    }
    pub fn get_u32(&self, name: &str) -> u32 {
        self.get(name) as u32
    }
}

/// Why an algorithm could not be built. The message names the parameter and what is
/// allowed; the caller prefixes the spec path.
#[derive(Clone, Debug, PartialEq)]
pub enum CcError {
    UnknownAlgorithm {
        name: String,
    },
    UnknownParam {
        algorithm: &'static str,
        param: String,
    },
    BadParam {
        algorithm: &'static str,
        param: &'static str,
        reason: String,
    },
}

impl fmt::Display for CcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CcError::UnknownAlgorithm { name } => {
                write!(
                    f,
                    "unknown algorithm '{name}'; known: {}",
                    names().join(", ")
                )
            }
            CcError::UnknownParam { algorithm, param } => {
                let known: Vec<&str> = find(algorithm)
                    .map(|s| s.params.iter().map(|p| p.name).collect())
                    .unwrap_or_default();
                if known.is_empty() {
                    write!(
                        f,
                        "unknown parameter '{param}' for {algorithm}; it takes none"
                    )
                } else {
                    write!(
                        f,
                        "unknown parameter '{param}' for {algorithm}; known: {}",
                        known.join(", ")
                    )
                }
            }
            CcError::BadParam {
                algorithm,
                param,
                reason,
            } => {
                write!(f, "parameter '{param}' of {algorithm}: {reason}")
            }
        }
    }
}

impl std::error::Error for CcError {}

/// An algorithm's entry: the config is the factory (quinn's habit).
pub struct AlgorithmSpec {
    pub name: &'static str,
    /// What kind of congestion signal it acts on; the front end picks per-family
    /// analyses by it (BBR's modes), never by the name.
    pub family: Family,
    /// One line: what it is.
    pub summary: &'static str,
    /// The paper section or kernel file it follows.
    pub source: &'static str,
    pub params: &'static [ParamSpec],
    pub build: fn(&Params) -> Box<dyn CongestionOps>,
}

impl AlgorithmSpec {
    /// Check `given` against the schema and fill defaults.
    pub fn validate(&self, given: &BTreeMap<String, ParamValue>) -> Result<Params, CcError> {
        for key in given.keys() {
            if !self.params.iter().any(|p| p.name == key) {
                return Err(CcError::UnknownParam {
                    algorithm: self.name,
                    param: key.clone(),
                });
            }
        }
        let mut values = BTreeMap::new();
        for p in self.params {
            let v = match given.get(p.name) {
                None => p.default,
                Some(value) => check_value(self.name, p, *value)?,
            };
            values.insert(p.name, v);
        }
        Ok(Params { values })
    }

    /// Validate and build.
    pub fn instantiate(
        &self,
        given: &BTreeMap<String, ParamValue>,
    ) -> Result<Box<dyn CongestionOps>, CcError> {
        let params = self.validate(given)?;
        Ok((self.build)(&params))
    }

    /// The defaults, for tests and tools.
    pub fn default_params(&self) -> Params {
        self.validate(&BTreeMap::new())
            .expect("defaults satisfy their own schema")
    }
}

fn check_value(algorithm: &'static str, p: &ParamSpec, value: ParamValue) -> Result<f64, CcError> {
    let bad = |reason: String| CcError::BadParam {
        algorithm,
        param: p.name,
        reason,
    };
    match (p.kind, value) {
        (ParamKind::Choice(choices), value) => {
            let listed: Vec<String> = choices
                .iter()
                .map(|c| format!("{} ({})", c.value, c.label))
                .collect();
            match value {
                ParamValue::Num(x) if choices.iter().any(|c| c.value == x) => Ok(x),
                ParamValue::Num(x) => Err(bad(format!("{x} is not one of {}", listed.join(", ")))),
                ParamValue::Bool(_) => Err(bad(format!("expected one of {}", listed.join(", ")))),
            }
        }
        (ParamKind::Bool, ParamValue::Bool(b)) => Ok(if b { 1.0 } else { 0.0 }),
        (ParamKind::Bool, ParamValue::Num(_)) => Err(bad("expected true or false".into())),
        (_, ParamValue::Bool(_)) => {
            Err(bad(format!("expected a number in [{}, {}]", p.min, p.max)))
        }
        (kind, ParamValue::Num(x)) => {
            if !x.is_finite() || x < p.min || x > p.max {
                return Err(bad(format!(
                    "{x} is outside the allowed range [{}, {}]",
                    p.min, p.max
                )));
            }
            if kind == ParamKind::Int && x.fract() != 0.0 {
                return Err(bad(format!("{x} is not a whole number")));
            }
            Ok(x)
        }
    }
}

/// Every registered algorithm, in the order `tcplab algorithms` lists them.
pub static ALGORITHMS: &[&AlgorithmSpec] = &[
    &crate::reno::SPEC,
    &crate::cubic::SPEC,
    &crate::vegas::SPEC,
    &crate::illinois::SPEC,
    &crate::bic::SPEC,
    &crate::highspeed::SPEC,
    &crate::htcp::SPEC,
    &crate::scalable::SPEC,
    &crate::westwood::SPEC,
    &crate::hybla::SPEC,
    &crate::veno::SPEC,
    &crate::yeah::SPEC,
    &crate::lp::SPEC,
    &crate::nv::SPEC,
    &crate::cdg::SPEC,
    &crate::ledbat::SPEC,
    &crate::copa::SPEC,
    &crate::vivace::SPEC,
    &crate::dctcp::SPEC,
    &crate::bbr::SPEC,
    &crate::bbr3::SPEC,
    &crate::bbr3::v2::SPEC,
    &crate::variants::acd::SPEC,
    &crate::variants::acd_ns3::SPEC,
    &crate::variants::acd_ns3::BASELINE_SPEC,
    &crate::variants::cws::SPEC,
    &crate::variants::acw::SPEC,
    &crate::variants::modest::SPEC,
    &crate::variants::bbq::SPEC,
    &crate::variants::da_bbr::SPEC,
    &crate::external::SPEC,
];

/// What an algorithm's implementation has been held against, for `tcplab algorithms`'
/// provenance column: the kernel module through the simulator-vs-kernel comparison
/// (docs/FIDELITY.md), a BPF twin (bpf/examples, checked hook by hook against the native
/// module in crates/bpf/tests/native_twins.rs), a
/// paper's figures or claims (scenario tests), or nothing yet. One table, here, so a new
/// comparison is recorded where the list is read; an unlisted name is "none yet".
pub fn held_against(name: &str) -> &'static str {
    match name {
        "reno" => "kernel tcp_cong.c via sim-vs-kernel comparison (docs/FIDELITY.md f11); BPF twin bpf/examples/reno.bpf.c",
        "cubic" => "kernel tcp_cubic.c via sim-vs-kernel comparison (docs/FIDELITY.md); BPF twin bpf/examples/cubic.bpf.c",
        "bbr" => "kernel tcp_bbr.c via sim-vs-kernel comparison (docs/FIDELITY.md); BPF twin bpf/examples/bbr.bpf.c",
        "dctcp" => "BPF twin bpf/examples/dctcp.bpf.c (the twin also runs on the kernel backend)",
        "scalable" | "highspeed" | "vegas" | "westwood" | "veno" | "illinois" | "bic" | "htcp"
        | "yeah" | "hybla" | "nv" | "cdg" => {
            "its BPF twin (bpf/examples) on the kernel backend, where this kernel lacks the module (docs/FIDELITY-twins.md); the twin gives the port's run in the simulator bit for bit"
        }
        "lp" => {
            "its BPF twin (bpf/examples) on the kernel backend, where this kernel lacks the module (docs/FIDELITY-twins.md); the twin gives the port's run in the simulator bit for bit; both take the delay from the RTT, not tcp_lp.c's TCP timestamps"
        }
        "da-bbr" => "paper's claims (docs/variants.md); its BPF version bpf/examples/da_bbr.bpf.c is not twin-tested",
        "bbr-acd" | "bbr-cws" | "bbr-acw" | "modest-bbr" | "bbq" => {
            "paper's claims in its scenario (docs/variants.md, variant_scenarios.rs)"
        }
        "bbr3" | "bbr2" => "draft-ietf-ccwg-bbr's claims in scenario tests (docs/bbr3.md)",
        "ledbat" => {
            "RFC 6817's claims in scenario tests (baseline_scenarios.rs); ns-3's TcpLedbat in tcp-variants-comparison (docs/FIDELITY-ns3.md); its BPF twin (bpf/examples/ledbat.bpf.c, fixed point: the port's statistics within tolerances in the simulator, not its run bit for bit) on the kernel backend (docs/FIDELITY-twins.md)"
        }
        "copa" => {
            "the paper's claims in a scenario test (baseline_scenarios.rs); not run against mvfst; its BPF twin (bpf/examples/copa.bpf.c, fixed point: the port's statistics within tolerances in the simulator, not its run bit for bit) on the kernel backend (docs/FIDELITY-twins.md)"
        }
        "vivace" => {
            "the paper's claims in scenario tests (baseline_scenarios.rs); not run against PCC-Uspace; its BPF twin (bpf/examples/vivace.bpf.c, fixed point: the port's statistics within tolerances in the simulator, not its run bit for bit) on the kernel backend"
        }
        "external" => "not applicable (set from outside)",
        _ => "none yet",
    }
}

/// The entry named `name`.
pub fn find(name: &str) -> Option<&'static AlgorithmSpec> {
    ALGORITHMS.iter().copied().find(|s| s.name == name)
}

/// All registered names.
pub fn names() -> Vec<&'static str> {
    ALGORITHMS.iter().map(|s| s.name).collect()
}

/// Build `name` with `params`, validating both.
pub fn build(
    name: &str,
    params: &BTreeMap<String, ParamValue>,
) -> Result<Box<dyn CongestionOps>, CcError> {
    find(name)
        .ok_or_else(|| CcError::UnknownAlgorithm {
            name: name.to_string(),
        })?
        .instantiate(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_algorithm_lists_known_names() {
        let err = build("bbbr", &BTreeMap::new()).err().unwrap();
        let msg = err.to_string();
        assert!(
            msg.starts_with("unknown algorithm 'bbbr'; known: "),
            "{msg}"
        );
        assert!(msg.contains("reno"), "{msg}");
    }

    #[test]
    fn provenance_names_the_kernel_comparison_or_says_none_yet() {
        assert!(held_against("cubic").starts_with("kernel tcp_cubic.c via sim-vs-kernel"));
        assert!(held_against("reno").contains("BPF twin bpf/examples/reno.bpf.c"));
        // Ported Linux modules with a BPF twin are held against the kernel through it
        // (all twelve the kernel lacks; lp's twin, as its port, reads no timestamps).
        assert!(held_against("westwood").contains("docs/FIDELITY-twins.md"));
        for name in ["hybla", "nv", "cdg"] {
            assert_eq!(held_against(name), held_against("westwood"), "{name}");
        }
        assert!(held_against("lp").contains("docs/FIDELITY-twins.md"));
        assert!(held_against("lp").contains("not tcp_lp.c's TCP timestamps"));
        assert_eq!(held_against("no-such-algorithm"), "none yet");
        assert!(held_against("vivace").contains("scenario tests"));
        assert!(held_against("ledbat").contains("docs/FIDELITY-ns3.md"));
        // ledbat's twin is fixed point: held to the port within tolerances, not bit for bit.
        assert!(held_against("ledbat").contains("bpf/examples/ledbat.bpf.c"));
        assert!(held_against("ledbat").contains("not its run bit for bit"));
        assert!(held_against("copa").contains("bpf/examples/copa.bpf.c"));
        assert!(held_against("copa").contains("not its run bit for bit"));
        assert!(held_against("vivace").contains("bpf/examples/vivace.bpf.c"));
        assert!(held_against("vivace").contains("not its run bit for bit"));
        // Every registered algorithm gets a non-empty entry.
        for spec in ALGORITHMS {
            assert!(!held_against(spec.name).is_empty(), "{}", spec.name);
        }
    }

    #[test]
    fn names_are_unique() {
        let mut n = names();
        n.sort();
        let before = n.len();
        n.dedup();
        assert_eq!(before, n.len());
    }

    #[test]
    fn every_default_lies_in_its_range() {
        for spec in ALGORITHMS {
            for p in spec.params {
                assert!(
                    p.min <= p.default && p.default <= p.max,
                    "{}.{}",
                    spec.name,
                    p.name
                );
            }
            let cc = (spec.build)(&spec.default_params());
            assert_eq!(cc.name(), spec.name);
        }
    }
}
