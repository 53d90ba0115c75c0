//! The Rust side of the kfuncs and helpers (vm/calls.rs) a program calls. The kfuncs work on
//! the socket image directly, with the kernel's u32 wrapping arithmetic, so a program
//! that feeds them odd values gets the kernel's odd result and never a Rust overflow.
//!
//! Follows net/ipv4/tcp_cong.c: tcp_slow_start, tcp_cong_avoid_ai, tcp_reno_cong_avoid
//! (with include/net/tcp.h's tcp_is_cwnd_limited and tcp_in_slow_start),
//! tcp_reno_ssthresh, tcp_reno_undo_cwnd. crates/cc/src/helpers.rs has the same rules on
//! `CcView` for the native algorithms; the tests drive both and compare.
//!
//! Helpers: maps (maps.rs), bpf_sk_storage_get/delete, bpf_trace_printk/vprintk
//! (printk.rs; lines kept by the loaded program with the simulated time), the clocks
//! (ktime_get_ns, _boot_ns and _coarse_ns all read the simulated clock; jiffies64 at
//! the program's CONFIG_HZ), bpf_get_prandom_u32, bpf_get_smp_processor_id /
//! numa_node_id (0: one CPU), bpf_setsockopt(SOL_SOCKET, SO_MAX_PACING_RATE) and
//! bpf_getsockopt(SOL_TCP, TCP_CONGESTION). bpf_loop, which calls back into the
//! program, is the interpreter's own (vm/mod.rs).
//!
//! Deviations: a zero `w` for tcp_cong_avoid_ai, a division by zero in the kernel, is an
//! error here. bpf_tcp_send_ack does not send: it records the ACK (one per callback, the
//! last) for the simulator's receiver, which sends it before the current segment's.

use tcplab_cc::bbr::rng::CycleRng;

use tcplab_cc::ops::{AckSample, CcView, RateSample};

use crate::host::maps::{self, MapKind};
use crate::host::native::{CallCtx, Natives};
use crate::host::printk;
use crate::host::program::{PrintkLine, Shared, PRINTK_MAX_LINES};
use crate::host::sock_image;
use crate::host::sock_image::get32;
use crate::layout::*;
use crate::object::loader::Program;
use crate::vm::calls::Call;
use crate::vm::memory::{addr, Memory, REGION_SOCK};
use crate::vm::Host;

/// The pointer a program holds for its socket.
pub const SOCK_ADDR: u64 = addr(REGION_SOCK, 0);

pub struct SimHost<'a> {
    /// `tp->tcp_mstamp` of the event being processed (us).
    pub now_us: u64,
    /// CONFIG_HZ of the loaded program's kernel (`bpf_jiffies64`).
    pub hz: u32,
    /// The last `bpf_tcp_send_ack` of this callback: (rcv_nxt in bytes, ECE).
    pub send_ack: Option<(u32, bool)>,
    /// The instance's random numbers (`bpf_get_prandom_u32`).
    pub rng: &'a mut CycleRng,
    /// The program (its maps).
    pub prog: &'a Program,
    /// What the program's sockets share besides the globals (which are in `Memory`
    /// while a callback runs): map states, printk lines.
    pub shared: &'a mut Shared,
    /// This socket's id (SK_STORAGE's key).
    pub socket: u64,
    /// `tcp_congestion_ops.name` (getsockopt TCP_CONGESTION).
    pub ca_name: &'a str,
    /// The socket as the callback started (the native kfuncs' view).
    pub view: &'a CcView,
    /// This socket's native instances (native.rs).
    pub natives: &'a mut Natives,
    /// The callback's samples, for bbr_main and cubictcp_acked.
    pub rate: Option<&'a RateSample>,
    pub ack: Option<&'a AckSample>,
}

fn set32(img: &mut [u8; SOCK_SIZE], at: usize, v: u32) {
    img[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn tcp_slow_start(img: &mut [u8; SOCK_SIZE], acked: u32) -> u32 {
    let cwnd0 = get32(img, SND_CWND);
    let cwnd = cwnd0.wrapping_add(acked).min(get32(img, SND_SSTHRESH));
    let left = acked.wrapping_sub(cwnd.wrapping_sub(cwnd0));
    set32(img, SND_CWND, cwnd.min(get32(img, SND_CWND_CLAMP)));
    left
}

fn tcp_cong_avoid_ai(img: &mut [u8; SOCK_SIZE], w: u32, acked: u32) -> Result<(), String> {
    if w == 0 {
        return Err("tcp_cong_avoid_ai with w = 0 (a division by zero in the kernel)".into());
    }
    let mut cwnd = get32(img, SND_CWND);
    let mut cnt = get32(img, SND_CWND_CNT);
    // Credits accumulated at a higher w are applied gently now.
    if cnt >= w {
        cnt = 0;
        cwnd = cwnd.wrapping_add(1);
    }
    cnt = cnt.wrapping_add(acked);
    if cnt >= w {
        let delta = cnt / w;
        cnt -= delta * w;
        cwnd = cwnd.wrapping_add(delta);
    }
    set32(img, SND_CWND_CNT, cnt);
    set32(img, SND_CWND, cwnd.min(get32(img, SND_CWND_CLAMP)));
    Ok(())
}

fn tcp_reno_cong_avoid(img: &mut [u8; SOCK_SIZE], acked: u32) -> Result<(), String> {
    let cwnd = get32(img, SND_CWND);
    let in_slow_start = cwnd < get32(img, SND_SSTHRESH);
    let cwnd_limited = img[IS_CWND_LIMITED] != 0
        || (in_slow_start && u64::from(cwnd) < 2 * u64::from(get32(img, MAX_PACKETS_OUT)));
    if !cwnd_limited {
        return Ok(());
    }
    let mut acked = acked;
    if in_slow_start {
        acked = tcp_slow_start(img, acked);
        if acked == 0 {
            return Ok(());
        }
    }
    tcp_cong_avoid_ai(img, get32(img, SND_CWND), acked)
}

/// `SOL_SOCKET`, `SO_MAX_PACING_RATE` (include/uapi/asm-generic/socket.h) and `SOL_TCP`,
/// `TCP_CONGESTION` (include/uapi/linux/tcp.h).
const SOL_SOCKET: u64 = 1;
const SO_MAX_PACING_RATE: u64 = 47;
const SOL_TCP: u64 = 6;
const TCP_CONGESTION: u64 = 13;
/// `ICSK_ACK_NOW` in `icsk_ack.pending`.
const ICSK_ACK_NOW: u8 = 8;
/// `BPF_SK_STORAGE_GET_F_CREATE`.
const SK_STORAGE_GET_F_CREATE: u64 = 1;

fn put64(img: &mut [u8; SOCK_SIZE], at: usize, v: u64) {
    img[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

fn get64(img: &[u8; SOCK_SIZE], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&img[at..at + 8]);
    u64::from_le_bytes(b)
}

impl SimHost<'_> {
    /// A kfunc of the kernel's own algorithms: the native port runs on the socket as the
    /// program has it now, and its result goes back into the image.
    fn native(&mut self, sub: i16, args: &[u64; 5], mem: &mut Memory) -> Result<u64, String> {
        let mut tp = self.view.clone();
        sock_image::load(&mem.sock, &mut tp, self.hz);
        tp.send_ack = None;
        let (mss, nxt) = (tp.mss_cache, tp.snd_nxt);
        let ctx = CallCtx {
            rate: self.rate,
            ack: self.ack,
        };
        let r = self.natives.call(
            usize::try_from(sub).map_err(|_| "bad native kfunc index")?,
            &mut tp,
            &args[1..],
            &ctx,
            |bytes| sock_image::seq_segments(bytes, nxt, mss),
        )?;
        sock_image::store(&tp, &mut mem.sock, self.hz);
        if tp.ack_now {
            mem.sock[ICSK_ACK_PENDING] |= ICSK_ACK_NOW;
        }
        if let Some((seq, ece)) = tp.send_ack {
            self.send_ack = Some((sock_image::seq_bytes(seq, mss), ece));
        }
        Ok(r)
    }

    fn map(&self, handle: u64) -> Result<usize, String> {
        maps::map_of_handle(handle, self.prog.maps.len())
            .ok_or_else(|| format!("{handle:#x} is not a map"))
    }

    fn printk(
        &mut self,
        fmt: u64,
        fmt_size: u64,
        args: &[u64],
        mem: &Memory,
    ) -> Result<u64, String> {
        let fmt = mem.read_bytes(fmt, (fmt_size as usize).min(1024))?;
        let text = printk::format(&fmt, args, &mut |a, max| {
            let mut out = Vec::new();
            for k in 0..max as u64 {
                match mem.load(a.wrapping_add(k), 1) {
                    Ok(0) | Err(_) => break,
                    Ok(c) => out.push(c as u8),
                }
            }
            Ok(String::from_utf8_lossy(&out).into_owned())
        })?;
        let len = text.len() as u64;
        if self.shared.printk.len() < PRINTK_MAX_LINES {
            self.shared.printk.push(PrintkLine {
                time_ns: self.now_us.wrapping_mul(1000),
                text,
            });
        } else {
            self.shared.printk_dropped += 1;
        }
        Ok(len)
    }

    /// bpf_setsockopt / bpf_getsockopt (net/core/filter.c, the struct_ops subset): the
    /// options the simulator models; any other is an error naming it.
    fn sockopt(&mut self, set: bool, args: [u64; 5], mem: &mut Memory) -> Result<u64, String> {
        let (level, opt, val, len) = (args[1], args[2], args[3], args[4] as usize);
        let what = if set {
            "bpf_setsockopt"
        } else {
            "bpf_getsockopt"
        };
        match (set, level, opt) {
            (true, SOL_SOCKET, SO_MAX_PACING_RATE) if len == 4 || len == 8 => {
                // sk_setsockopt: a u32 ~0U means unlimited.
                let v = mem.load(val, len)?;
                let rate = if len == 4 && v == u64::from(u32::MAX) {
                    u64::MAX
                } else {
                    v
                };
                let img = &mut mem.sock;
                put64(img, SK_MAX_PACING_RATE, rate);
                let pacing = get64(img, SK_PACING_RATE).min(rate);
                put64(img, SK_PACING_RATE, pacing);
                Ok(0)
            }
            (false, SOL_TCP, TCP_CONGESTION) => {
                // do_tcp_getsockopt: the name, NUL-padded, at most TCP_CA_NAME_MAX bytes.
                let mut name = self.ca_name.as_bytes().to_vec();
                name.resize(len.min(16), 0);
                mem.write_bytes(val, &name)?;
                Ok(0)
            }
            _ => Err(format!(
                "{what}(level {level}, option {opt}): the simulator models only \
                 setsockopt(SOL_SOCKET, SO_MAX_PACING_RATE) and getsockopt(SOL_TCP, TCP_CONGESTION)"
            )),
        }
    }
}

impl Host for SimHost<'_> {
    fn call(
        &mut self,
        call: Call,
        sub: i16,
        args: [u64; 5],
        mem: &mut Memory,
    ) -> Result<u64, String> {
        let needs_sock = matches!(
            call,
            Call::TcpSlowStart
                | Call::TcpCongAvoidAi
                | Call::TcpRenoCongAvoid
                | Call::TcpRenoSsthresh
                | Call::TcpRenoUndoCwnd
                | Call::TcpSendAck
                | Call::SetSockopt
                | Call::GetSockopt
                | Call::Native
        );
        if needs_sock && args[0] != SOCK_ADDR {
            return Err(format!(
                "{call:?}: first argument {:#x} is not the socket",
                args[0]
            ));
        }
        let img = &mut mem.sock;
        Ok(match call {
            Call::TcpSlowStart => u64::from(tcp_slow_start(img, args[1] as u32)),
            Call::TcpCongAvoidAi => {
                tcp_cong_avoid_ai(img, args[1] as u32, args[2] as u32)?;
                0
            }
            Call::TcpRenoCongAvoid => {
                tcp_reno_cong_avoid(img, args[2] as u32)?;
                0
            }
            Call::TcpRenoSsthresh => u64::from((get32(img, SND_CWND) >> 1).max(2)),
            Call::TcpRenoUndoCwnd => u64::from(get32(img, SND_CWND).max(get32(img, PRIOR_CWND))),
            Call::KtimeGetNs => self.now_us.wrapping_mul(1000),
            Call::Jiffies64 => match self.now_us.checked_mul(u64::from(self.hz)) {
                Some(x) => x / 1_000_000,
                None => (u128::from(self.now_us) * u128::from(self.hz) / 1_000_000) as u64,
            },
            Call::PrandomU32 => u64::from(self.rng.next_u32()),
            Call::TcpSendAck => {
                let ece = img[ECN_FLAGS] & 4 != 0; // TCP_ECN_DEMAND_CWR
                self.send_ack = Some((args[1] as u32, ece));
                0
            }
            Call::CpuZero => 0,
            // The interpreter runs it (vm::bpf_loop): it calls back into the program.
            Call::Loop => return Err("bpf_loop reached the host".into()),
            Call::TailCall => return Err("bpf_tail_call reached the host".into()),
            Call::Native => self.native(sub, &args, mem)?,
            Call::TracePrintk => self.printk(args[0], args[1], &args[2..5], mem)?,
            Call::TraceVprintk => {
                // At most MAX_BPRINTF_VARARGS (12) u64s.
                let n = (args[3] as usize / 8).min(12);
                let raw = if n == 0 {
                    Vec::new()
                } else {
                    mem.read_bytes(args[2], 8 * n)?
                };
                let list: Vec<u64> = raw
                    .chunks_exact(8)
                    .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                    .collect();
                self.printk(args[0], args[1], &list, mem)?
            }
            Call::SetSockopt => self.sockopt(true, args, mem)?,
            Call::GetSockopt => self.sockopt(false, args, mem)?,
            Call::MapLookup | Call::MapUpdate | Call::MapDelete => {
                let k = self.map(args[0])?;
                let def = &self.prog.maps[k];
                if def.kind == MapKind::ProgArray {
                    return Err(format!(
                        "cannot pass map_type 3 into func {call:?} (PROG_ARRAY {})",
                        def.name
                    ));
                }
                if def.kind == MapKind::SkStorage {
                    return Err(format!(
                        "{call:?} on SK_STORAGE map {}: use bpf_sk_storage_get/delete",
                        def.name
                    ));
                }
                let key = mem.read_bytes(args[1], def.key_size)?;
                let st = &mut self.shared.maps[k];
                match call {
                    Call::MapLookup => def.lookup(st, &key),
                    Call::MapDelete => def.delete(st, &key),
                    _ => {
                        let value = mem.read_bytes(args[2], def.value_size)?;
                        def.update(st, &key, &value, args[3], &mut mem.globals)
                    }
                }
            }
            Call::SkStorageGet | Call::SkStorageDelete => {
                let k = self.map(args[0])?;
                let def = &self.prog.maps[k];
                if def.kind != MapKind::SkStorage {
                    return Err(format!(
                        "{call:?} on map {}, not an SK_STORAGE map",
                        def.name
                    ));
                }
                if args[1] != SOCK_ADDR {
                    return Err(format!("{call:?}: {:#x} is not the socket", args[1]));
                }
                let st = &mut self.shared.maps[k];
                if call == Call::SkStorageDelete {
                    def.delete(st, &self.socket.to_le_bytes())
                } else {
                    let init = match args[2] {
                        0 => None,
                        a => Some(mem.read_bytes(a, def.value_size)?),
                    };
                    let create = args[3] & SK_STORAGE_GET_F_CREATE != 0;
                    def.sk_storage_get(st, self.socket, init.as_deref(), create, &mut mem.globals)
                }
            }
        })
    }
}
