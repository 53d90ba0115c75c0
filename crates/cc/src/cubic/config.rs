//! CUBIC's module parameters (tcp_cubic.c `module_param`s) as the registry schema, and
//! `CubicConfig`, the immutable per-flow factory that does `cubictcp_register`'s
//! precomputation.

use super::hystart::{HYSTART_ACK_TRAIN, HYSTART_DELAY};
use super::{Bictcp, Cubic, BICTCP_BETA_SCALE, BICTCP_HZ};
use crate::registry::{ParamKind, ParamSpec, Params};

const I32_MAX: f64 = i32::MAX as f64;

/// The kernel module parameters, with their defaults from tcp_cubic.c.
pub(super) static PARAMS: [ParamSpec; 9] = [
    ParamSpec {
        name: "fast_convergence",
        kind: ParamKind::Bool,
        default: 1.0,
        min: 0.0,
        max: 1.0,
        doc: "lower W_max to cwnd*(1+beta)/2 on a loss below the previous W_max (tcp_cubic.c default on)",
    },
    ParamSpec {
        name: "beta",
        kind: ParamKind::Int,
        default: 717.0,
        min: 1.0,
        max: 1023.0,
        doc: "multiplicative decrease in 1/1024: ssthresh = cwnd*beta/1024 (tcp_cubic.c default 717 ~= 0.7)",
    },
    ParamSpec {
        name: "initial_ssthresh",
        kind: ParamKind::Int,
        default: 0.0,
        min: 0.0,
        max: I32_MAX,
        doc: "initial slow-start threshold in segments when hystart is off; 0 keeps the socket's (tcp_cubic.c default 0)",
    },
    ParamSpec {
        name: "bic_scale",
        kind: ParamKind::Int,
        default: 41.0,
        min: 1.0,
        max: 1024.0,
        doc: "cubic scale C in 1/1024 per 100 ms RTT; 41 gives C ~= 0.4 (tcp_cubic.c default 41)",
    },
    ParamSpec {
        name: "tcp_friendliness",
        kind: ParamKind::Bool,
        default: 1.0,
        min: 0.0,
        max: 1.0,
        doc: "grow at least as fast as an AIMD flow with the same beta (tcp_cubic.c default on)",
    },
    ParamSpec {
        name: "hystart",
        kind: ParamKind::Bool,
        default: 1.0,
        min: 0.0,
        max: 1.0,
        doc: "hybrid slow start (tcp_cubic.c default on)",
    },
    ParamSpec {
        name: "hystart_detect",
        kind: ParamKind::Int,
        default: 3.0,
        min: 0.0,
        max: 3.0,
        doc: "HyStart detectors: 1 ACK train, 2 delay increase, 3 both (tcp_cubic.c default 3)",
    },
    ParamSpec {
        name: "hystart_low_window",
        kind: ParamKind::Int,
        default: 16.0,
        min: 0.0,
        max: I32_MAX,
        doc: "HyStart runs only once cwnd >= this many segments (tcp_cubic.c default 16)",
    },
    ParamSpec {
        name: "hystart_ack_delta_us",
        kind: ParamKind::Int,
        default: 2000.0,
        min: 0.0,
        max: I32_MAX,
        doc: "largest ACK spacing (us) that continues an ACK train (tcp_cubic.c default 2000)",
    },
];

/// CUBIC's tunables (the module parameters). The config is the factory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CubicConfig {
    pub fast_convergence: bool,
    pub beta: u32,
    pub initial_ssthresh: u32,
    pub bic_scale: u32,
    pub tcp_friendliness: bool,
    pub hystart: bool,
    pub hystart_detect: u32,
    pub hystart_low_window: u32,
    pub hystart_ack_delta_us: u32,
}

impl Default for CubicConfig {
    /// The kernel defaults.
    fn default() -> Self {
        CubicConfig {
            fast_convergence: true,
            beta: 717,
            initial_ssthresh: 0,
            bic_scale: 41,
            tcp_friendliness: true,
            hystart: true,
            hystart_detect: HYSTART_ACK_TRAIN | HYSTART_DELAY,
            hystart_low_window: 16,
            hystart_ack_delta_us: 2000,
        }
    }
}

impl CubicConfig {
    pub fn from_params(p: &Params) -> Self {
        CubicConfig {
            fast_convergence: p.get_bool("fast_convergence"),
            beta: p.get_u32("beta"),
            initial_ssthresh: p.get_u32("initial_ssthresh"),
            bic_scale: p.get_u32("bic_scale"),
            tcp_friendliness: p.get_bool("tcp_friendliness"),
            hystart: p.get_bool("hystart"),
            hystart_detect: p.get_u32("hystart_detect"),
            hystart_low_window: p.get_u32("hystart_low_window"),
            hystart_ack_delta_us: p.get_u32("hystart_ack_delta_us"),
        }
    }

    /// `cubictcp_register`'s precomputation, then a fresh per-flow state.
    pub fn build(&self) -> Cubic {
        // beta_scale = 8 (1 + beta) / 3 / (1 - beta) in units of 1/1024 cancelling: the
        // Reno-estimate grows one segment per (cwnd * beta_scale / 8) acked (Eq. 4).
        let beta_scale = 8 * (BICTCP_BETA_SCALE + self.beta) / 3 / (BICTCP_BETA_SCALE - self.beta);
        // cube_rtt_scale = 1024 * c / rtt with c = bic_scale / 1024, rtt = 100 ms.
        let cube_rtt_scale = self.bic_scale * 10;
        // cube_factor = 2^(10 + 3 * BICTCP_HZ) / (bic_scale * 10): K = cbrt(cube_factor * dW)
        // comes out in 1/1024 s.
        let cube_factor = (1u64 << (10 + 3 * BICTCP_HZ)) / (self.bic_scale as u64 * 10);
        Cubic {
            cfg: self.clone(),
            beta_scale,
            cube_rtt_scale,
            cube_factor,
            ca: Bictcp::default(),
            hz: crate::ops::DEFAULT_HZ,
        }
    }
}
