//! Applications: what a sender is offered to send.
//!
//! - `Bulk`: always has data between start and stop (iperf-like).
//! - `Finite { bytes }`: exactly that many payload bytes, split into MSS-sized segments
//!   (the last one shorter if needed), offered at start.
//!
//! At `stop` the application stops offering data; what was already sent is still
//! retransmitted until acknowledged (there is no send buffer beyond what was sent: an
//! iperf that stops writing).

use crate::contract::AppConfig;
use crate::time::SimTime;

#[derive(Clone, Copy, Debug)]
pub struct App {
    pub kind: AppConfig,
    pub start: SimTime,
    pub stop: SimTime,
}

impl App {
    /// Total payload bytes if finite.
    pub fn total_bytes(&self) -> Option<u64> {
        match self.kind {
            AppConfig::Bulk => None,
            AppConfig::Finite { bytes } => Some(bytes),
        }
    }
    /// Segments offered at start (`u64::MAX` for bulk).
    pub fn offered_segments(&self, mss: u32) -> u64 {
        match self.kind {
            AppConfig::Bulk => u64::MAX,
            AppConfig::Finite { bytes } => bytes.div_ceil(mss as u64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finite_app_rounds_segments_up() {
        let app = App {
            kind: AppConfig::Finite { bytes: 3000 },
            start: SimTime(0),
            stop: SimTime(1),
        };
        // 3000 / 1448 = 2.07 -> 3 segments.
        assert_eq!(app.offered_segments(1448), 3);
        assert_eq!(app.total_bytes(), Some(3000));
    }
}
