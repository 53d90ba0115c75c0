//! The network: packets, point-to-point links with a drop-tail queue at their sending
//! side, and the dumbbell topology builder.

pub mod dumbbell;
pub mod link;
pub mod packet;

pub use link::{Link, NextHop, QueueCounters};
pub use packet::{Packet, PacketKind, SackBlock, MAX_SACK_BLOCKS};
