//! The kfuncs and helpers a program may call, resolved at load time: a kfunc by its
//! extern symbol's name, a helper by its number (include/uapi/linux/bpf.h). Anything
//! else is refused when the object is loaded, naming it. Their Rust bodies are in
//! host/sim_host.rs.

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
    /// helper 1 `bpf_map_lookup_elem(map, key)`.
    MapLookup = 9,
    /// helper 2 `bpf_map_update_elem(map, key, value, flags)`.
    MapUpdate = 10,
    /// helper 3 `bpf_map_delete_elem(map, key)`.
    MapDelete = 11,
    /// helper 6 `bpf_trace_printk(fmt, fmt_size, a, b, c)`.
    TracePrintk = 12,
    /// helper 177 `bpf_trace_vprintk(fmt, fmt_size, args, args_size)`.
    TraceVprintk = 13,
    /// helper 107 `bpf_sk_storage_get(map, sk, value, flags)`.
    SkStorageGet = 14,
    /// helper 108 `bpf_sk_storage_delete(map, sk)`.
    SkStorageDelete = 15,
    /// helper 49 `bpf_setsockopt(sk, level, optname, optval, optlen)`.
    SetSockopt = 16,
    /// helper 57 `bpf_getsockopt(sk, level, optname, optval, optlen)`.
    GetSockopt = 17,
    /// helpers 8 `bpf_get_smp_processor_id` and 42 `bpf_get_numa_node_id`: 0, the
    /// simulator's one CPU and node.
    CpuZero = 18,
    /// A kfunc of the kernel's own algorithms (host/native.rs); the call instruction's `off`
    /// holds its index in `native::KFUNCS`.
    Native = 19,
    /// helper 181 `bpf_loop(nr_loops, callback, ctx, flags)`, run by the interpreter.
    Loop = 20,
    /// helper 12 `bpf_tail_call(ctx, prog_array, index)`, run by the interpreter.
    TailCall = 21,
}

impl Call {
    pub const ALL: [Call; 22] = [
        Call::TcpSlowStart,
        Call::TcpCongAvoidAi,
        Call::TcpRenoCongAvoid,
        Call::TcpRenoSsthresh,
        Call::TcpRenoUndoCwnd,
        Call::KtimeGetNs,
        Call::Jiffies64,
        Call::TcpSendAck,
        Call::PrandomU32,
        Call::MapLookup,
        Call::MapUpdate,
        Call::MapDelete,
        Call::TracePrintk,
        Call::TraceVprintk,
        Call::SkStorageGet,
        Call::SkStorageDelete,
        Call::SetSockopt,
        Call::GetSockopt,
        Call::CpuZero,
        Call::Native,
        Call::Loop,
        Call::TailCall,
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
            1 => Call::MapLookup,
            2 => Call::MapUpdate,
            3 => Call::MapDelete,
            // ktime_get_ns, ktime_get_boot_ns, ktime_get_coarse_ns: one simulated clock.
            5 | 125 | 160 => Call::KtimeGetNs,
            6 => Call::TracePrintk,
            7 => Call::PrandomU32,
            8 | 42 => Call::CpuZero,
            12 => Call::TailCall,
            49 => Call::SetSockopt,
            57 => Call::GetSockopt,
            107 => Call::SkStorageGet,
            108 => Call::SkStorageDelete,
            116 => Call::TcpSendAck,
            118 => Call::Jiffies64,
            177 => Call::TraceVprintk,
            181 => Call::Loop,
            _ => return None,
        })
    }
}

/// Whether the kernel lets a struct_ops tcp_congestion_ops program call helper `n`
/// (net/ipv4/bpf_tcp_ca.c bpf_tcp_ca_get_func_proto, 6.18: tcp_send_ack,
/// sk_storage_get/delete, setsockopt/getsockopt (not from release),
/// ktime_get_coarse_ns, and kernel/bpf/helpers.c bpf_base_func_proto for a privileged
/// loader). `in_release`: the program is the `release` callback.
pub fn helper_allowed(n: i32, in_release: bool) -> bool {
    match n {
        116 | 107 | 108 | 160 => true,
        49 | 57 => !in_release,
        // bpf_base_func_proto: maps, random, cpu/node ids, tail calls, clocks, ring
        // buffers, loops, strings, dynptrs (any loader) ...
        1..=3
        | 5
        | 7
        | 8
        | 12
        | 42
        | 87..=89
        | 125
        | 130..=134
        | 164
        | 181
        | 182
        | 195
        | 197..=203
        | 208
        | 209 => true,
        // ... CAP_BPF: spin locks, jiffies, per-cpu pointers, timers, kptr_xchg ...
        93 | 94 | 118 | 153 | 154 | 169..=172 | 194 => true,
        // ... CAP_PERFMON: printk, snprintf, current task, probe reads.
        6 | 35 | 112..=115 | 149 | 158 | 165 | 175 | 177 => true,
        _ => false,
    }
}
