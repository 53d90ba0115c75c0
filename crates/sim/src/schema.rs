//! The JSON Schema of the engine's contract with the front end, exported from the Rust
//! types themselves (schemars): `WorldConfig` in, `RunOutput` out. Python tests its own
//! spec model against it (field names, defaults, bounds; tests/specs/test_schema.py) and maps
//! an engine error's field path back to the spec through it: a field whose spec name is
//! not its own name less the unit suffix (`_ns`, `_bps`, `_bytes`, `_pkts`) says so in
//! `x-spec`. python/tcplab/specs/engine_schema.json is this export, kept current by
//! tests/specs/test_schema.py.

use serde_json::Value;

use crate::config::WorldConfig;
use crate::record::RunOutput;

/// `{"world_config": <schema>, "run_output": <schema>}`.
pub fn contract() -> Value {
    serde_json::json!({
        "world_config": schemars::schema_for!(WorldConfig),
        // As serialised: a field skipped when empty is optional.
        "run_output": schemars::generate::SchemaSettings::draft2020_12()
            .for_serialize()
            .into_generator()
            .into_root_schema_for::<RunOutput>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_names_spec_fields_and_bounds() {
        let s = contract();
        let cfg = &s["world_config"];
        assert_eq!(
            cfg["properties"]["duration_ns"]["x-spec"],
            "experiment.duration"
        );
        let tcp = &cfg["$defs"]["TcpConfig"]["properties"]["mss_bytes"];
        assert_eq!(tcp["minimum"], 1);
        assert_eq!(tcp["maximum"], 65495);
        assert_eq!(tcp["default"], 1448);
        let link = &cfg["$defs"]["LinkConfig"]["properties"];
        assert!(
            link.get("aqm").is_some(),
            "aqm is a field of the bottleneck's link"
        );
        assert_eq!(
            s["run_output"]["$defs"]["Table"]["type"], "object",
            "tables cross as maps"
        );
    }
}
