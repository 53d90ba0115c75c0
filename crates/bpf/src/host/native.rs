//! The kfuncs the kernel exports from its own congestion controls to BPF ones
//! (BTF_KFUNCS sets of net/ipv4/tcp_cubic.c, tcp_dctcp.c, tcp_bbr.c, registered for
//! BPF_PROG_TYPE_STRUCT_OPS), bound to tcplab's native ports in crates/cc: a program may
//! build on `cubictcp_cong_avoid` as bpf_cc_cubic.c-style programs do.
//!
//! Each socket keeps one native instance per algorithm it calls (built with the
//! registry's defaults, which are the kernel's module parameters). A kfunc call runs the
//! native hook on the socket as the program has it at that moment (the view of the
//! callback with the program's writes so far) and writes the result back into the
//! socket image; `ack` arguments (bytes) become segment numbers.
//!
//! Deviations: the native algorithm's state is its own, not in `icsk_ca_priv` (in the
//! kernel the kfunc keeps its `struct bictcp` there, where the program could read it; a
//! program that mixes its own use of icsk_ca_priv with these kfuncs is fine, one that
//! reads the kernel algorithm's state from it sees its own bytes); `bbr_main`'s and
//! `cubictcp_acked`'s sample must be the callback's own argument.

use tcplab_cc::ops::{AckSample, CaEvent, CaState, CcView, CongestionOps, RateSample};

/// The three native algorithms a kfunc can reach.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Cubic = 0,
    Dctcp = 1,
    Bbr = 2,
}

impl Family {
    pub fn registry_name(self) -> &'static str {
        match self {
            Family::Cubic => "cubic",
            Family::Dctcp => "dctcp",
            Family::Bbr => "bbr",
        }
    }
}

/// Which hook a kfunc is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hook {
    Init,
    Ssthresh,
    CongAvoid,
    SetState,
    CwndEvent,
    PktsAcked,
    InAckEvent,
    UndoCwnd,
    Main,
    SndbufExpand,
    MinTsoSegs,
}

/// Every kfunc of the three sets (6.18), by name.
pub const KFUNCS: [(&str, Family, Hook); 20] = [
    ("cubictcp_init", Family::Cubic, Hook::Init),
    ("cubictcp_recalc_ssthresh", Family::Cubic, Hook::Ssthresh),
    ("cubictcp_cong_avoid", Family::Cubic, Hook::CongAvoid),
    ("cubictcp_state", Family::Cubic, Hook::SetState),
    ("cubictcp_cwnd_event", Family::Cubic, Hook::CwndEvent),
    ("cubictcp_acked", Family::Cubic, Hook::PktsAcked),
    ("dctcp_init", Family::Dctcp, Hook::Init),
    ("dctcp_update_alpha", Family::Dctcp, Hook::InAckEvent),
    ("dctcp_cwnd_event", Family::Dctcp, Hook::CwndEvent),
    ("dctcp_ssthresh", Family::Dctcp, Hook::Ssthresh),
    ("dctcp_cwnd_undo", Family::Dctcp, Hook::UndoCwnd),
    ("dctcp_state", Family::Dctcp, Hook::SetState),
    ("bbr_init", Family::Bbr, Hook::Init),
    ("bbr_main", Family::Bbr, Hook::Main),
    ("bbr_sndbuf_expand", Family::Bbr, Hook::SndbufExpand),
    ("bbr_undo_cwnd", Family::Bbr, Hook::UndoCwnd),
    ("bbr_cwnd_event", Family::Bbr, Hook::CwndEvent),
    ("bbr_ssthresh", Family::Bbr, Hook::Ssthresh),
    ("bbr_min_tso_segs", Family::Bbr, Hook::MinTsoSegs),
    ("bbr_set_state", Family::Bbr, Hook::SetState),
];

/// The index in `KFUNCS` of kfunc `name`.
pub fn index(name: &str) -> Option<usize> {
    KFUNCS.iter().position(|(n, _, _)| *n == name)
}

/// A socket's native instances, built on first use.
#[derive(Default)]
pub struct Natives {
    instances: [Option<Box<dyn CongestionOps>>; 3],
}

impl std::fmt::Debug for Natives {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Natives")
    }
}

fn ca_state(v: u64) -> Result<CaState, String> {
    Ok(match v {
        0 => CaState::Open,
        1 => CaState::Disorder,
        2 => CaState::Cwr,
        3 => CaState::Recovery,
        4 => CaState::Loss,
        _ => return Err(format!("tcp_ca_state {v} does not exist")),
    })
}

fn ca_event(v: u64) -> Result<CaEvent, String> {
    Ok(match v {
        0 => CaEvent::TxStart,
        1 => CaEvent::CwndRestart,
        2 => CaEvent::CompleteCwr,
        3 => CaEvent::Loss,
        4 => CaEvent::EcnNoCe,
        5 => CaEvent::EcnIsCe,
        _ => return Err(format!("tcp_ca_event {v} does not exist")),
    })
}

/// What a kfunc call may use besides the socket.
pub struct CallCtx<'a> {
    /// The callback's rate sample (cong_control), if any.
    pub rate: Option<&'a RateSample>,
    /// The callback's ack sample (pkts_acked), if any.
    pub ack: Option<&'a AckSample>,
}

impl Natives {
    /// Runs kfunc `k` on `tp` with the call's arguments after the socket; its return
    /// value (0 for void ones).
    pub fn call(
        &mut self,
        k: usize,
        tp: &mut CcView,
        args: &[u64],
        ctx: &CallCtx,
        ack_segments: impl Fn(u32) -> u64,
    ) -> Result<u64, String> {
        let (name, fam, hook) = *KFUNCS.get(k).ok_or("no such kfunc")?;
        let slot = &mut self.instances[fam as usize];
        if slot.is_none() {
            let built = tcplab_cc::registry::build(fam.registry_name(), &Default::default())
                .map_err(|e| format!("{name}: {e}"))?;
            *slot = Some(built);
        }
        let cc = slot.as_mut().ok_or("no instance")?;
        Ok(match hook {
            Hook::Init => {
                cc.init(tp);
                0
            }
            Hook::Ssthresh => u64::from(cc.ssthresh(tp)),
            Hook::UndoCwnd => u64::from(cc.undo_cwnd(tp)),
            Hook::CongAvoid => {
                cc.cong_avoid(tp, ack_segments(args[0] as u32), args[1] as u32);
                0
            }
            Hook::SetState => {
                cc.set_state(tp, ca_state(args[0] & 0xff)?);
                0
            }
            Hook::CwndEvent => {
                cc.cwnd_event(tp, ca_event(args[0] & 0xffff_ffff)?);
                0
            }
            Hook::InAckEvent => {
                cc.in_ack_event(tp, args[0] as u32);
                0
            }
            Hook::PktsAcked => {
                let s = ctx
                    .ack
                    .ok_or_else(|| format!("{name} outside pkts_acked: no ack_sample"))?;
                cc.pkts_acked(tp, s);
                0
            }
            Hook::Main => {
                let rs = ctx
                    .rate
                    .ok_or_else(|| format!("{name} outside cong_control: no rate_sample"))?;
                cc.cong_control_flag(tp, rs, args[1] as u32);
                0
            }
            // tcp_bbr.c: bbr_sndbuf_expand returns 3; bbr_min_tso_segs 1 below
            // bbr_min_tso_rate (1.2 Mbit/s, >> 3 in bytes) and 2 above.
            Hook::SndbufExpand => 3,
            Hook::MinTsoSegs => {
                if tp.pacing_rate < 1_200_000 >> 3 {
                    1
                } else {
                    2
                }
            }
        })
    }
}
