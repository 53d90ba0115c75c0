//! The network: packets, point-to-point links with a drop-tail queue at their sending
//! side (or, on the bottleneck, an AQM queue discipline from [`aqm`]), and the dumbbell
//! topology builder; [`network`] builds a run's whole network for both backends.

pub mod aqm;
pub mod capture;
pub mod dumbbell;
pub mod link;
pub mod netem;
pub mod network;
pub mod packet;
pub mod policer;
pub mod shaping;
pub mod topology;
pub mod trace;

pub use link::{Link, NextHop, QueueCounters};
pub use packet::{Ecn, Packet, PacketKind, SackBlock, MAX_SACK_BLOCKS};
