//! The leaf types of the engine's configuration contract, used both by `config` and by
//! the parts of `net` that validate their own sections (qdiscs, shaping, topology).
//! They live apart from `config` so that those modules depend on this small file, not
//! on the whole config (which in turn names their config types): no import circle.

use serde::{Deserialize, Serialize};

/// A configuration error: the field path (`flows[1].cc`) and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

impl std::error::Error for ConfigError {}

/// A drop-tail limit, in packets or bytes (wire bytes), > 0.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueLimit {
    Packets(u64),
    Bytes(u64),
}
