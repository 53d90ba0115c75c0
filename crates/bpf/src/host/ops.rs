//! `BpfCongestionOps`: a loaded program behind the simulator's `CongestionOps` seam, one
//! per socket (flow). Before each callback the flow's `CcView` is written into the socket image
//! (sock_image.rs, kernel units), the callback's arguments into the ctx array (as
//! BPF_PROG reads them: one u64 each), and the interpreter runs; afterwards the fields a
//! program may write are read back into the view.
//!
//! Errors: a callback that fails (out-of-bounds access, budget, bad kfunc argument) does
//! not panic and does not half-apply to the socket: the view is left as it was before the
//! callback (what it wrote to globals and maps before failing stays, as those are the
//! program's, not the socket's), the first error is kept (`fault()`, also through `CongestionOps::fault` for the engine),
//! and from then on every callback is skipped — the algorithm is dead, as a kernel
//! would refuse to load it. The engine stops the run and reports the error.
//!
//! Global data (.bss/.data/.rodata/.kconfig) belongs to the `LoadedProgram`
//! (program.rs): every socket instantiated from it sees the others' writes, as in the
//! kernel. The socket image, the stack and the fault are this socket's.
//!
//! Callbacks at the kernel's call sites: `cong_control` receives tcp_ack's `flag` in the
//! kernel's FLAG_* bits (crates/sim/src/tcp/input.rs `tcp_ack_flag`); `release` when
//! the socket is destroyed (a finite flow's data all acknowledged, or the run's end).
//!
//! Deviations: `min_tso_segs` and `sndbuf_expand` are never called: the kernel calls
//! them from tcp_tso_autosize (TSO burst size) and tcp_sndbuf_expand (send-buffer
//! growth), and the simulator models neither (one MSS per segment, an unlimited send
//! buffer); `CaEvent::TlpRecovery` (not in mainline) is not passed on.

use std::sync::Arc;

use tcplab_cc::bbr::rng::CycleRng;
use tcplab_cc::ops::{AckSample, CaEvent, CaState, CcView, CongestionOps, InfoField, RateSample};

use crate::error::BpfError;
use crate::host::native::Natives;
use crate::host::program::{self, LoadedProgram};
use crate::host::sock_image::{self, seq_bytes};
use crate::host::{SimHost, SOCK_ADDR};
use crate::layout::*;
use crate::object::loader::{Callback, Program, CALLBACKS};
use crate::object::state_series::StateLayout;
use crate::vm::memory::{addr, Memory, REGION_CTX, REGION_SAMPLE};
use crate::vm::{self};

/// Instructions one callback may execute. The kernel verifier's limit is 1M processed
/// instructions; a congestion-control callback needs hundreds.
pub const DEFAULT_BUDGET: u64 = 1_000_000;

/// `TCP_CONG_NEEDS_ECN` in `tcp_congestion_ops.flags`.
const TCP_CONG_NEEDS_ECN: u32 = 0x2;

pub struct BpfCongestionOps {
    prog: Arc<Program>,
    name: &'static str,
    /// The program this socket runs: its globals and printk buffer.
    loaded: LoadedProgram,
    /// This socket's memory; `mem.globals` is empty except while a callback runs, when it
    /// holds the program's (swapped in from `loaded.shared`).
    mem: Memory,
    budget: u64,
    fault: Option<BpfError>,
    /// `bpf_get_prandom_u32`'s generator (seed 0 unless `with_seed`).
    rng: CycleRng,
    /// This socket's id among the program's (SK_STORAGE's key).
    socket: u64,
    /// The native algorithms behind the cubictcp_/dctcp_/bbr_ kfuncs it calls.
    natives: Natives,
    /// The struct in `icsk_ca_priv` the flow records as series (state_series.rs).
    state: Option<Arc<StateLayout>>,
}

fn cb_name(cb: Callback) -> &'static str {
    CALLBACKS
        .iter()
        .find(|(_, c)| *c == cb)
        .map_or("?", |(n, _)| n)
}

impl BpfCongestionOps {
    pub(crate) fn new(loaded: LoadedProgram) -> Self {
        let socket = {
            let mut sh = program::lock(&loaded.shared);
            sh.next_socket += 1;
            sh.next_socket
        };
        BpfCongestionOps {
            socket,
            natives: Natives::default(),
            prog: loaded.prog.clone(),
            name: loaded.name,
            loaded,
            mem: Memory::new(Vec::new()),
            budget: DEFAULT_BUDGET,
            fault: None,
            rng: CycleRng::new(0),
            state: None,
        }
    }

    /// Records `layout`, the program's state struct, as this socket's `info()`.
    pub fn with_state(mut self, layout: Arc<StateLayout>) -> Self {
        self.state = Some(layout);
        self
    }

    /// Seeds `bpf_get_prandom_u32`, as the native algorithms' `seed` parameter seeds
    /// theirs (the engine passes each flow's seed from the run seed).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.rng = CycleRng::new(seed);
        self
    }

    /// Sets the per-callback instruction budget.
    pub fn with_budget(mut self, budget: u64) -> Self {
        self.budget = budget;
        self
    }

    /// The first error a callback raised, if any.
    pub fn error(&self) -> Option<&BpfError> {
        self.fault.as_ref()
    }

    /// `icsk_ca_priv`, the algorithm's private state (104 bytes).
    pub fn ca_priv(&self) -> &[u8] {
        &self.mem.sock[ICSK_CA_PRIV..ICSK_CA_PRIV + ICSK_CA_PRIV_SIZE]
    }

    /// Runs `cb` with `args` (after the socket, which is always the first); `None` if the
    /// program has no such callback or it failed.
    fn run(&mut self, cb: Callback, args: &[u64], tp: &mut CcView) -> Option<u64> {
        self.run_with(cb, args, tp, None, None)
    }

    /// As `run`, with the callback's sample (for the native kfuncs that take it).
    fn run_with(
        &mut self,
        cb: Callback,
        args: &[u64],
        tp: &mut CcView,
        rate: Option<&RateSample>,
        ack: Option<&AckSample>,
    ) -> Option<u64> {
        if self.fault.is_some() {
            return None;
        }
        let (entry, prog_name) = self.prog.callbacks[cb as usize].as_ref()?;
        let hz = self.loaded.env.hz;
        sock_image::store(tp, &mut self.mem.sock, hz);
        self.mem.ctx = [0; 40];
        self.mem.ctx[..8].copy_from_slice(&SOCK_ADDR.to_le_bytes());
        for (k, a) in args.iter().enumerate().take(4) {
            self.mem.ctx[8 * (k + 1)..8 * (k + 2)].copy_from_slice(&a.to_le_bytes());
        }
        let mut shared = program::lock(&self.loaded.shared);
        std::mem::swap(&mut self.mem.globals, &mut shared.globals);
        let mut host = SimHost {
            now_us: tp.now_us,
            hz,
            send_ack: None,
            rng: &mut self.rng,
            prog: &self.prog,
            shared: &mut shared,
            socket: self.socket,
            ca_name: self.name,
            view: tp,
            natives: &mut self.natives,
            rate,
            ack,
        };
        let r1 = addr(REGION_CTX, 0);
        let result = vm::run_code(
            self.prog.code(),
            *entry,
            r1,
            &mut self.mem,
            &mut host,
            self.budget,
        );
        let send_ack = host.send_ack;
        std::mem::swap(&mut self.mem.globals, &mut shared.globals);
        drop(shared);
        match result {
            Ok(r0) => {
                sock_image::load(&self.mem.sock, tp, hz);
                if let Some((rcv_nxt, ece)) = send_ack {
                    let seq = sock_image::seq_segments(rcv_nxt, tp.rcv_nxt, tp.mss_cache);
                    tp.send_ack = Some((seq, ece));
                }
                Some(r0)
            }
            Err(f) => {
                self.fault = Some(BpfError::Runtime {
                    callback: format!("{} ({prog_name})", cb_name(cb)),
                    pc: f.pc,
                    why: f.why,
                });
                None
            }
        }
    }

    /// Runs a callback that only reads the socket, on a copy of the view.
    fn run_ro(&mut self, cb: Callback, tp: &CcView) -> Option<u64> {
        let mut copy = tp.clone();
        self.run(cb, &[], &mut copy)
    }

    /// `min_tso_segs`; None if the program has none. The simulator has no TSO (every
    /// segment is one MSS, sent alone), so it never asks; kept for tests and tools.
    pub fn min_tso_segs(&mut self, tp: &CcView) -> Option<u32> {
        self.run_ro(Callback::MinTsoSegs, tp).map(|v| v as u32)
    }

    /// `sndbuf_expand`; None if the program has none. The simulator's send buffer is
    /// unlimited (tcp_sndbuf_expand is not modelled), so it never asks.
    pub fn sndbuf_expand(&mut self, tp: &CcView) -> Option<u32> {
        self.run_ro(Callback::SndbufExpand, tp).map(|v| v as u32)
    }

    fn put_sample(&mut self, fields: &[(usize, usize, u64)], len: usize) -> u64 {
        self.mem.sample = [0; RATE_SAMPLE_SIZE];
        for &(at, size, v) in fields {
            self.mem.sample[at..at + size].copy_from_slice(&v.to_le_bytes()[..size]);
        }
        self.mem.sample_len = len;
        addr(REGION_SAMPLE, 0)
    }
}

/// `enum tcp_ca_event` numbers of mainline include/net/tcp.h.
fn ca_event(ev: CaEvent) -> Option<u64> {
    Some(match ev {
        CaEvent::TxStart => 0,
        CaEvent::CwndRestart => 1,
        CaEvent::CompleteCwr => 2,
        CaEvent::Loss => 3,
        CaEvent::EcnNoCe => 4,
        CaEvent::EcnIsCe => 5,
        CaEvent::TlpRecovery => return None,
    })
}

impl CongestionOps for BpfCongestionOps {
    fn name(&self) -> &'static str {
        self.name
    }

    fn init(&mut self, tp: &mut CcView) {
        self.run(Callback::Init, &[], tp);
    }

    fn ssthresh(&mut self, tp: &CcView) -> u32 {
        // After a fault the value does not matter (the run stops); keep it sane.
        self.run_ro(Callback::Ssthresh, tp)
            .map_or((tp.snd_cwnd >> 1).max(2), |v| v as u32)
    }

    fn cong_avoid(&mut self, tp: &mut CcView, ack: u64, acked: u32) {
        let ack = u64::from(seq_bytes(ack, tp.mss_cache));
        self.run(Callback::CongAvoid, &[ack, u64::from(acked)], tp);
    }

    fn set_state(&mut self, tp: &mut CcView, new_state: CaState) {
        self.run(Callback::SetState, &[new_state as u64], tp);
    }

    fn cwnd_event(&mut self, tp: &mut CcView, ev: CaEvent) {
        if let Some(e) = ca_event(ev) {
            self.run(Callback::CwndEvent, &[e], tp);
        }
    }

    fn in_ack_event(&mut self, tp: &mut CcView, flags: u32) {
        self.run(Callback::InAckEvent, &[u64::from(flags)], tp);
    }

    fn pkts_acked(&mut self, tp: &mut CcView, s: &AckSample) {
        if self.prog.callbacks[Callback::PktsAcked as usize].is_none() {
            return;
        }
        let rtt = s.rtt_us.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32;
        let p = self.put_sample(
            &[
                (AS_PKTS_ACKED, 4, u64::from(s.pkts_acked)),
                (AS_RTT_US, 4, u64::from(rtt)),
                (AS_IN_FLIGHT, 4, u64::from(s.in_flight)),
            ],
            ACK_SAMPLE_SIZE,
        );
        self.run_with(Callback::PktsAcked, &[p], tp, None, Some(s));
    }

    fn needs_ecn(&self) -> bool {
        self.prog.flags & TCP_CONG_NEEDS_ECN != 0
    }

    fn has_cong_control(&self) -> bool {
        self.prog.callbacks[Callback::CongControl as usize].is_some()
    }

    fn cong_control(&mut self, tp: &mut CcView, rs: &RateSample) {
        self.cong_control_flag(tp, rs, 0);
    }

    fn release(&mut self, tp: &mut CcView) {
        self.run(Callback::Release, &[], tp);
    }

    fn cong_control_flag(&mut self, tp: &mut CcView, rs: &RateSample, flag: u32) {
        let p = self.put_sample(
            &[
                (RS_PRIOR_MSTAMP, 8, rs.prior_mstamp_us),
                (RS_PRIOR_DELIVERED, 4, rs.prior_delivered),
                (RS_PRIOR_DELIVERED_CE, 4, rs.prior_delivered_ce),
                (RS_DELIVERED, 4, rs.delivered as u64),
                (RS_DELIVERED_CE, 4, rs.delivered_ce as u64),
                (RS_INTERVAL_US, 8, rs.interval_us as u64),
                (RS_SND_INTERVAL_US, 4, u64::from(rs.snd_interval_us)),
                (RS_RCV_INTERVAL_US, 4, u64::from(rs.rcv_interval_us)),
                (RS_RTT_US, 8, rs.rtt_us as u64),
                (RS_LOSSES, 4, u64::from(rs.losses)),
                (RS_ACKED_SACKED, 4, u64::from(rs.acked_sacked)),
                (RS_PRIOR_IN_FLIGHT, 4, u64::from(rs.prior_in_flight)),
                (RS_IS_APP_LIMITED, 1, u64::from(rs.is_app_limited)),
                (RS_IS_RETRANS, 1, u64::from(rs.is_retrans)),
                (RS_IS_ACK_DELAYED, 1, u64::from(rs.is_ack_delayed)),
            ],
            RATE_SAMPLE_SIZE,
        );
        let ack = u64::from(seq_bytes(tp.snd_una, tp.mss_cache));
        self.run_with(
            Callback::CongControl,
            &[ack, u64::from(flag), p],
            tp,
            Some(rs),
            None,
        );
    }

    fn undo_cwnd(&mut self, tp: &CcView) -> u32 {
        self.run_ro(Callback::UndoCwnd, tp)
            .map_or(tp.snd_cwnd.max(tp.prior_cwnd), |v| v as u32)
    }

    fn fault(&self) -> Option<String> {
        self.fault.as_ref().map(|e| e.to_string())
    }

    /// The state struct's fields, when the flow names one (`cc_<struct>_<field>`).
    fn info(&self) -> Vec<InfoField> {
        self.state
            .as_ref()
            .map_or_else(Vec::new, |l| l.read(self.ca_priv()))
    }
}
