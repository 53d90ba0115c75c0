//! `external`: a controller that hands cwnd and the pacing rate to someone outside the
//! stack (a Python agent through the stepping engine, tcplab.gym), the way Orca's kernel
//! module and the user-space agents of Aurora/MOCC write `tp->snd_cwnd` and
//! `sk_pacing_rate` at each monitor interval.
//!
//! Model: the algorithm owns cwnd and pacing entirely (`cong_control`, as BBR does), and
//! its `cong_control` changes nothing: cwnd and the pacing rate stay what was last written
//! into the socket, by the stepping engine (`World::set_cwnd`, `set_pacing_rate`,
//! `set_ssthresh`, crates/sim/src/world/stepping.rs) or, in a plain run, by this
//! algorithm's `init` from its parameters (`cwnd`, `pacing_rate`): without an agent it is
//! a fixed-window (optionally paced) sender, a baseline of its own.
//!
//! What the stack still does, the kernel's generic behaviour for an algorithm with
//! `cong_control` (net/ipv4/tcp_input.c, tcp_output.c, tcp_timer.c, Linux 6.18):
//! - Fast recovery: `tcp_init_cwnd_reduction` sets ssthresh to this algorithm's
//!   `ssthresh()`, which is `tcp_reno_ssthresh` (max(cwnd / 2, 2)); PRR does not run and
//!   `tcp_end_cwnd_reduction` returns early for `cong_control`, so cwnd is left as set.
//! - RTO: `tcp_enter_loss` sets ssthresh the same way and cwnd to packets in flight + 1;
//!   the window stays there until the agent writes cwnd again (at its next step).
//! - Undo of a spurious reduction: `tcp_reno_undo_cwnd`, max(cwnd, prior_cwnd).
//! - Pacing: only when a pacing rate is set (> 0; `SK_PACING_NEEDED` then, as an
//!   algorithm that paces sets it); `tcp_update_pacing_rate` is not called for
//!   `cong_control` algorithms, so an unset rate stays 0 (unpaced, recorded as 0).
//!
//! Deviations: none of the stack's; there is no such module in Linux: its kernel
//! equivalent is the BPF struct_ops python/tcplab/data/bpf/policy/policy_rate.bpf.c,
//! whose `cong_control` applies what the kernel backend's policy agent writes in a map.

use crate::helpers::tcp_reno_ssthresh;
use crate::ops::{CcView, CongestionOps, RateSample};
use crate::registry::{AlgorithmSpec, Family, ParamKind, ParamSpec, Params};

pub static SPEC: AlgorithmSpec = AlgorithmSpec {
    name: "external",
    family: Family::External,
    summary: "cwnd and pacing rate set from outside (tcplab.gym's stepping engine); fixed without an agent",
    source: "tcplab (Orca/Aurora-style agent control; generic loss response of net/ipv4/tcp_input.c)",
    params: &[
        ParamSpec {
            name: "cwnd",
            kind: ParamKind::Int,
            default: 10.0,
            min: 1.0,
            max: 1_000_000.0,
            doc: "cwnd (segments) set at the connection's start, held until an agent writes another; default TCP_INIT_CWND (10)",
        },
        ParamSpec {
            name: "pacing_rate",
            kind: ParamKind::Float,
            default: 0.0,
            min: 0.0,
            max: 1e12,
            doc: "pacing rate (bit/s) set at the start, 0 = unpaced; held until an agent writes another",
        },
    ],
    build: |p: &Params| {
        Box::new(External {
            cwnd: p.get_u32("cwnd"),
            pacing_rate_bytes: (p.get("pacing_rate") / 8.0) as u64,
        })
    },
};

/// The initial cwnd and pacing rate; after `init` everything lives in the socket.
#[derive(Debug, Clone)]
pub struct External {
    cwnd: u32,
    pacing_rate_bytes: u64,
}

/// Write a pacing rate (bytes/s) into the socket: 0 turns pacing off.
pub fn set_pacing(tp: &mut CcView, bytes_per_s: u64) {
    tp.pacing_rate = bytes_per_s.min(tp.max_pacing_rate);
    tp.pacing_needed = bytes_per_s > 0;
}

impl CongestionOps for External {
    fn name(&self) -> &'static str {
        "external"
    }
    fn init(&mut self, tp: &mut CcView) {
        tp.snd_cwnd = self.cwnd;
        set_pacing(tp, self.pacing_rate_bytes);
    }
    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        tcp_reno_ssthresh(tp)
    }
    fn has_cong_control(&self) -> bool {
        true
    }
    fn cong_control(&mut self, _tp: &mut CcView, _rs: &RateSample) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_sets_the_parameters_and_acks_change_nothing() {
        let mut tp = CcView::new(1448, 0);
        let mut cc = External {
            cwnd: 25,
            pacing_rate_bytes: 1_250_000, // 10 Mbit/s
        };
        cc.init(&mut tp);
        assert_eq!(
            (tp.snd_cwnd, tp.pacing_rate, tp.pacing_needed),
            (25, 1_250_000, true)
        );
        cc.cong_control(&mut tp, &RateSample::default());
        assert_eq!((tp.snd_cwnd, tp.pacing_rate), (25, 1_250_000));
        // tcp_reno_ssthresh: 25 >> 1 = 12.
        assert_eq!(cc.ssthresh(&tp), 12);
        set_pacing(&mut tp, 0);
        assert!(!tp.pacing_needed);
    }
}
