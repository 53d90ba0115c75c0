//! tcplab-sim: the packet-level engine (being built; see docs/ARCHITECTURE.md).
pub mod config;
