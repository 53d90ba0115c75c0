//! The kfuncs and helpers a program may call, resolved at load time: a kfunc by its
//! extern symbol's name, a helper by its number (include/uapi/linux/bpf.h). Anything
//! else is refused when the object is loaded, naming it. Their Rust bodies are in
//! host.rs.

/// Everything callable. The discriminant is what the loader writes into the call
/// instruction's imm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// kfunc `tcp_slow_start(tp, acked) -> u32` (net/ipv4/tcp_cong.c).
    TcpSlowStart = 0,
    /// kfunc `tcp_cong_avoid_ai(tp, w, acked)`.
    TcpCongAvoidAi = 1,
    /// kfunc `tcp_reno_cong_avoid(sk, ack, acked)`.
    TcpRenoCongAvoid = 2,
    /// kfunc `tcp_reno_ssthresh(sk) -> u32`.
    TcpRenoSsthresh = 3,
    /// kfunc `tcp_reno_undo_cwnd(sk) -> u32`.
    TcpRenoUndoCwnd = 4,
    /// helper 5 `bpf_ktime_get_ns`: the simulated clock in ns.
    KtimeGetNs = 5,
    /// helper 118 `bpf_jiffies64`: jiffies at the loaded program's CONFIG_HZ.
    Jiffies64 = 6,
    /// helper 116 `bpf_tcp_send_ack(tp, rcv_nxt)`: send an ACK for `rcv_nxt` now, its
    /// ECE from `ecn_flags` at the call (DCTCP's `dctcp_ece_ack_update`).
    TcpSendAck = 7,
    /// helper 7 `bpf_get_prandom_u32`: a seeded SplitMix64 (the native BBR's `CycleRng`),
    /// so a run stays a function of its seed.
    PrandomU32 = 8,
}

impl Call {
    pub const ALL: [Call; 9] = [
        Call::TcpSlowStart,
        Call::TcpCongAvoidAi,
        Call::TcpRenoCongAvoid,
        Call::TcpRenoSsthresh,
        Call::TcpRenoUndoCwnd,
        Call::KtimeGetNs,
        Call::Jiffies64,
        Call::TcpSendAck,
        Call::PrandomU32,
    ];

    pub fn from_id(id: i32) -> Option<Call> {
        Call::ALL.get(usize::try_from(id).ok()?).copied()
    }

    pub fn kfunc(name: &str) -> Option<Call> {
        Some(match name {
            "tcp_slow_start" => Call::TcpSlowStart,
            "tcp_cong_avoid_ai" => Call::TcpCongAvoidAi,
            "tcp_reno_cong_avoid" => Call::TcpRenoCongAvoid,
            "tcp_reno_ssthresh" => Call::TcpRenoSsthresh,
            "tcp_reno_undo_cwnd" => Call::TcpRenoUndoCwnd,
            _ => return None,
        })
    }

    pub fn helper(number: i32) -> Option<Call> {
        Some(match number {
            5 => Call::KtimeGetNs,
            7 => Call::PrandomU32,
            116 => Call::TcpSendAck,
            118 => Call::Jiffies64,
            _ => return None,
        })
    }
}
