//! The Rust side of the kfuncs and helpers (calls.rs) a program calls. The kfuncs work on
//! the socket image directly, with the kernel's u32 wrapping arithmetic, so a program
//! that feeds them odd values gets the kernel's odd result and never a Rust overflow.
//!
//! Follows net/ipv4/tcp_cong.c: tcp_slow_start, tcp_cong_avoid_ai, tcp_reno_cong_avoid
//! (with include/net/tcp.h's tcp_is_cwnd_limited and tcp_in_slow_start),
//! tcp_reno_ssthresh, tcp_reno_undo_cwnd. crates/cc/src/helpers.rs has the same rules on
//! `CcView` for the native algorithms; the tests drive both and compare.
//!
//! Deviations: a zero `w` for tcp_cong_avoid_ai, a division by zero in the kernel, is an
//! error here. bpf_tcp_send_ack does not send: it records the ACK (one per callback, the
//! last) for the simulator's receiver, which sends it before the current segment's.

use tcplab_cc::bbr::rng::CycleRng;

use crate::calls::Call;
use crate::layout::*;
use crate::sock_image::get32;
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

impl Host for SimHost<'_> {
    fn call(&mut self, call: Call, args: [u64; 5], mem: &mut Memory) -> Result<u64, String> {
        let needs_sock = !matches!(call, Call::KtimeGetNs | Call::Jiffies64 | Call::PrandomU32);
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
            Call::Jiffies64 => (u128::from(self.now_us) * u128::from(self.hz) / 1_000_000) as u64,
            Call::PrandomU32 => u64::from(self.rng.next_u32()),
            Call::TcpSendAck => {
                let ece = img[ECN_FLAGS] & 4 != 0; // TCP_ECN_DEMAND_CWR
                self.send_ack = Some((args[1] as u32, ece));
                0
            }
        })
    }
}
