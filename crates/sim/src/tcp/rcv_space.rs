//! The receiver's buffer autotuning and window growth, after Linux 6.18
//! (net/ipv4/tcp_input.c), modelled for the quick ACKs they cause.
//!
//! Model. A Linux receiver advertises at most `rcv_ssthresh`, which starts near 64 KB and
//! grows by 2 x advmss for each arriving segment (`tcp_grow_window`) as long as there is
//! room under min(`window_clamp`, `tcp_space()`). Every segment that grows it also sets
//! `icsk_ack.quick`, so it is acknowledged at once instead of every second segment. The
//! room comes from the receive buffer, which the kernel resizes once per receiver RTT
//! while the application reads (dynamic right-sizing, `tcp_rcv_space_adjust` ->
//! `tcp_rcvbuf_grow`): when the bytes read in the last RTT exceed the largest amount
//! read in any RTT so far, `sk_rcvbuf` becomes enough for twice that amount plus twice
//! its growth (a sender in slow start doubles), and `window_clamp` follows. So during
//! slow start, and after any new maximum (a loss episode's hole filled at once), the
//! receiver ACKs runs of single segments; this gives HyStart twice the RTT samples and
//! is what moves CUBIC's slow-start exit (docs/FIDELITY-gaps.md). Bytes and
//! memory convert through `scaling_ratio` = 256 x len / skb truesize of a full segment
//! (`tcp_win_from_space`, `tcp_space_from_win`, `TCP_RMEM_TO_WIN_SCALE` = 8).
//!
//! Follows, all in net/ipv4/tcp_input.c unless named: `tcp_select_initial_window`
//! (tcp_output.c) and `tcp_init_buffer_space` (the handshake's window, clamp and
//! `rcvq_space`), `tcp_measure_rcv_mss` (`scaling_ratio`, `tcp_set_window_clamp` in
//! tcp.c), `tcp_grow_window` / `__tcp_grow_window`, `tcp_rcv_rtt_measure_ts` /
//! `tcp_rtt_tsopt_us` / `tcp_rcv_rtt_update` (the receiver's RTT from the echoed
//! timestamp, 1 ms granularity), `tcp_rcv_space_adjust` and `tcp_rcvbuf_grow` (6.18 form:
//! rcvwin = 2 x new + 4 x new x (new - old) / old, plus the out-of-order span; also called
//! from `tcp_data_queue_ofo`). Checked against this machine's 6.18 kernel with the
//! `tcp:tcp_rcvbuf_grow` tracepoint (one CUBIC flow, 20 Mbit/s, 40 ms): scaling_ratio
//! 160, window_clamp 81 920 -> 152 697 -> 347 520 -> 616 267 over the first four RTTs;
//! the unit tests replay that trace.
//!
//! The window is advertised on every ACK and the sender keeps to it (since
//! 0.5.0): `select_window` is `__tcp_select_window`, the receiver never shrinks what it
//! offered (`tcp_select_window`), and the sender sends new data only inside
//! snd_una + snd_wnd (`tcp_snd_wnd_test`). It binds early in a connection: the SYN-ACK
//! offers 45 segments (65160 bytes) and `rcv_ssthresh` grows by two segments per
//! segment received, so a long-RTT flow in slow start or BBR's STARTUP can be
//! window-limited for some round trips (the kernel's `tcpi_rwnd_limited`; fidelity f06,
//! docs/FIDELITY-gaps.md gap 8), and again whenever out-of-order data fills the buffer.
//!
//! Deviations:
//! - The application reads every in-order segment as it arrives (`copied_seq` =
//!   `rcv_nxt`), as the kernel backend's reader and iperf do closely: memory held is
//!   the segment being processed plus the out-of-order queue, one truesize per segment
//!   (no coalescing, no `skb_condense`), and `tcp_rcv_space_adjust` runs per segment.
//!   A segment that closes a hole releases the out-of-order data behind it; the
//!   reader copies it one skb at a time, so its first `tcp_rcv_space_adjust` sees the
//!   rest still queued (`copied -= inq`) and does not count it (0.14.0; before, the
//!   whole release counted at once, so a hole's fill grew the buffer, and the window,
//!   an RTT or more before the kernel's: docs/FIDELITY-kernel-spec.md, k01). Each
//!   released segment is taken as its own skb; the kernel may coalesce them
//!   (`tcp_try_coalesce`), which would make the first read larger.
//!   The window an ACK advertises is computed with the out-of-order queue charged and
//!   the in-order data already read (in the kernel the segment that triggers the ACK is
//!   still queued: at most one segment's truesize less, which matters only when the
//!   free space rather than `rcv_ssthresh` sets the window).
//! - The window scale is the one `tcp_rmem[2]` = 32 MB gives (10); the kernel backend's
//!   namespaces set 64 MB (scale 11): windows are rounded to 1 KB here, 2 KB there.
//! - The handshake is not simulated: its state is set when the first data segment
//!   arrives, and the first segments, sent before any ACK, echo the SYN-ACK's timestamp,
//!   taken to be one base RTT before that arrival.
//! - No memory pressure, no `SO_RCVBUF` lock, `tcp_moderate_rcvbuf` on (the defaults);
//!   `__tcp_select_window`'s clearing of the quick-ACK count when less than half the
//!   buffer is free is left out (it needs the queue to fill, which an application that
//!   reads at once prevents).

use crate::tcp::rtt::tcp_rtt_tsopt_us;
use crate::time::SimTime;

/// `TCP_RMEM_TO_WIN_SCALE` (include/net/tcp.h): `scaling_ratio` is a fraction of 256.
const RMEM_TO_WIN_SCALE: u32 = 8;
/// `TCP_DEFAULT_SCALING_RATIO` (include/net/tcp.h): 1 << 7, 50 %, until a full segment
/// has been measured.
const DEFAULT_SCALING_RATIO: u64 = 1 << (RMEM_TO_WIN_SCALE - 1);
/// `tcp_rmem[1]`, the initial `sk_rcvbuf` (net/ipv4/tcp.c `tcp_init`, 131072).
pub const TCP_RMEM_DEFAULT: u64 = 131_072;
/// `tcp_rmem[2]`, the autotuning cap: 32 MB in 6.18 (`tcp_init`'s max_rshare; read as
/// "4096 131072 33554432" in a fresh namespace of this machine's 6.18 kernel).
pub const TCP_RMEM_MAX: u64 = 33_554_432;
/// The window scale the receiver offers in its SYN-ACK (`tcp_select_initial_window`):
/// `ilog2` of the largest buffer it may grow to (`tcp_rmem[2]`, above `rmem_max`) less
/// 15, so the 16-bit field can hold the largest window: 2^25 -> 10, a granularity of
/// 1024 bytes.
pub const RCV_WSCALE: u32 = TCP_RMEM_MAX.ilog2() - 15;
/// `TCP_INIT_CWND`: `rcvq_space.space` starts at no more than 10 segments.
const TCP_INIT_CWND: u64 = 10;
/// `TCP_MSS_DEFAULT` (536) and `TCP_MIN_MSS` (88): bounds of the initial `rcv_mss`.
const TCP_MSS_DEFAULT: u64 = 536;
const TCP_MIN_MSS: u64 = 88;
/// `SOCK_MIN_RCVBUF` / 2 = `TCP_SKB_MIN_TRUESIZE` = 2048 + 256: the least window clamp
/// (`tcp_set_window_clamp`).
const MIN_WINDOW_CLAMP: u64 = 2304;
/// `tcp_grow_window` is only called for segments of at least 128 bytes
/// (`tcp_event_data_recv`).
pub const GROW_MIN_LEN: u32 = 128;

/// Memory a received segment of `wire` bytes (IP packet) is charged: its skb's truesize
/// as the kernel backend's path allocates it (`tun_get_user` -> `tun_alloc_skb` ->
/// `alloc_skb`: a linear head of `NET_SKB_PAD` (64) + the packet, 64-byte aligned, plus
/// `skb_shared_info` (320) from a power-of-two kmalloc cache, and the `sk_buff` itself
/// (256); veth hands the same skb on). 1500-byte packets cost 2304 bytes, scaling_ratio
/// 1448 x 256 / 2304 = 160, as the tracepoint shows. A NIC driver allocates otherwise;
/// `tcp.rcv_truesize` overrides.
pub fn tun_truesize(wire: u32) -> u32 {
    const NET_SKB_PAD: u32 = 64;
    const SHINFO: u32 = 320;
    const SKB: u32 = 256;
    let head = (NET_SKB_PAD + wire).div_ceil(64) * 64 + SHINFO;
    head.next_power_of_two() + SKB
}

/// The receive-buffer and window state of one receiving socket.
#[derive(Clone, Debug)]
pub struct RcvSpace {
    advmss: u64,
    /// Truesize of a full segment.
    truesize: u64,
    /// `tp->scaling_ratio` (1..=255).
    scaling_ratio: u64,
    /// `icsk_ack.rcv_mss`: the receiver's estimate of the sender's MSS.
    rcv_mss: u64,
    /// `tp->rcv_wnd` as advertised at the handshake (only `tcp_set_window_clamp` reads it).
    rcv_wnd: u64,
    pub rcvbuf: u64,
    pub window_clamp: u64,
    pub rcv_ssthresh: u64,
    /// `rcvq_space.space`: the most bytes read in one measured RTT (bytes).
    pub space: u64,
    /// `rcvq_space.seq` (bytes read when the measurement began) and `.time`.
    space_seq: u64,
    space_time: SimTime,
    /// `rcv_rtt_est.rtt_us`, scaled by 8 (0: no sample yet).
    pub rtt_us8: u64,
    /// `rcv_rtt_last_tsecr`.
    last_tsecr: Option<u32>,
}

impl RcvSpace {
    /// The state after the handshake, for segments of `advmss` payload bytes each
    /// costing `truesize` bytes of memory.
    pub fn new(advmss: u32, truesize: u32) -> RcvSpace {
        let advmss = advmss as u64;
        let rcvbuf = TCP_RMEM_DEFAULT;
        // tcp_full_space at the default ratio.
        let maxwin = (rcvbuf * DEFAULT_SCALING_RATIO) >> RMEM_TO_WIN_SCALE;
        // tcp_select_initial_window: the full space rounded down to whole segments, at
        // most 65535 (no window scaling of the SYN's own window).
        let space = if maxwin > advmss {
            maxwin - maxwin % advmss
        } else {
            maxwin
        };
        let rcv_wnd = space.min(u16::MAX as u64);
        // tcp_init_buffer_space with tcp_app_win = 31: the clamp is the full space, less
        // one segment reserved ("Force reservation of one segment").
        let mut window_clamp = maxwin;
        if window_clamp > 2 * advmss && window_clamp + advmss > maxwin {
            window_clamp = (2 * advmss).max(maxwin - advmss);
        }
        let rcv_ssthresh = rcv_wnd.min(window_clamp);
        // min then max, as the kernel's min_t/max_t: a tiny window yields TCP_MIN_MSS,
        // where clamp() would panic on its inverted bounds.
        #[allow(clippy::manual_clamp)]
        let rcv_mss = advmss
            .min(rcv_wnd / 2)
            .min(TCP_MSS_DEFAULT)
            .max(TCP_MIN_MSS);
        RcvSpace {
            advmss,
            truesize: truesize as u64,
            scaling_ratio: DEFAULT_SCALING_RATIO,
            rcv_mss,
            rcv_wnd,
            rcvbuf,
            window_clamp,
            rcv_ssthresh,
            space: rcv_ssthresh.min(rcv_wnd).min(TCP_INIT_CWND * advmss),
            space_seq: 0,
            space_time: SimTime::ZERO,
            rtt_us8: 0,
            last_tsecr: None,
        }
    }

    /// `tcp_init_buffer_space`'s clock: the connection is established (the first data
    /// segment's arrival stands for the handshake's last ACK).
    pub fn established(&mut self, now: SimTime) {
        self.space_time = now;
    }

    /// `tcp_win_from_space`.
    fn win_from_space(&self, space: i64) -> i64 {
        (space * self.scaling_ratio as i64) >> RMEM_TO_WIN_SCALE
    }

    /// `tcp_space_from_win`.
    fn space_from_win(&self, win: u64) -> u64 {
        (win << RMEM_TO_WIN_SCALE) / self.scaling_ratio
    }

    /// `tcp_measure_rcv_mss` for a segment of `len` payload bytes: the first full one
    /// sets `scaling_ratio` from its truesize and moves the clamp to the buffer's window.
    pub fn measure_rcv_mss(&mut self, len: u32, truesize: u32) {
        let len = len as u64;
        if len < self.rcv_mss {
            return;
        }
        if len != self.rcv_mss {
            let old = self.scaling_ratio;
            self.scaling_ratio = ((len << RMEM_TO_WIN_SCALE) / truesize as u64).clamp(1, 255);
            if old != self.scaling_ratio {
                let val = self.win_from_space(self.rcvbuf as i64).max(0) as u64;
                self.set_window_clamp(val);
                self.space = self.space.min(self.window_clamp);
            }
        }
        self.rcv_mss = len.min(self.advmss);
    }

    /// `tcp_set_window_clamp` (net/ipv4/tcp.c).
    fn set_window_clamp(&mut self, val: u64) {
        let new = val.max(MIN_WINDOW_CLAMP);
        if new == self.window_clamp {
            return;
        }
        let old = self.window_clamp;
        self.window_clamp = new;
        if new < old {
            self.rcv_ssthresh = self.rcv_ssthresh.min(new); // __tcp_adjust_rcv_ssthresh
        } else {
            self.rcv_ssthresh = self.rcv_ssthresh.max(self.rcv_wnd.min(new));
        }
    }

    /// `tcp_grow_window` for a segment of `len` bytes and `truesize` while `held` bytes
    /// of receive memory are charged (`sk_rmem_alloc`). True when `rcv_ssthresh` grew,
    /// which sets `icsk_ack.quick` (the caller ACKs the segment at once).
    pub fn grow_window(&mut self, len: u32, truesize: u32, held: u64) -> bool {
        let space = self.win_from_space(self.rcvbuf as i64 - held as i64); // tcp_space
        let room = (self.window_clamp as i64).min(space) - self.rcv_ssthresh as i64;
        if room <= 0 {
            return false;
        }
        let len = len as i64;
        let incr = if self.win_from_space(truesize as i64) <= len {
            2 * self.advmss as i64
        } else {
            self.grow_window_small(len, truesize)
        };
        if incr == 0 {
            return false;
        }
        self.rcv_ssthresh += room.min(incr.max(2 * len)) as u64;
        true
    }

    /// `__tcp_grow_window`: a segment small against its truesize grows the window only
    /// while `rcv_ssthresh` is below the matching fraction of `tcp_rmem[2]`.
    fn grow_window_small(&self, len: i64, truesize: u32) -> i64 {
        let mut t = self.win_from_space(truesize as i64) >> 1;
        let mut window = self.win_from_space(TCP_RMEM_MAX as i64) >> 1;
        while self.rcv_ssthresh as i64 <= window {
            if t <= len {
                return 2 * self.rcv_mss as i64;
            }
            t >>= 1;
            window >>= 1;
        }
        0
    }

    /// `tcp_rcv_rtt_measure_ts` for a segment of `len` bytes echoing `tsecr`, at `now_ts`
    /// (both the receiver's millisecond timestamp clock).
    pub fn rtt_measure_ts(&mut self, now_ts: u32, tsecr: u32, len: u32) {
        if self.last_tsecr == Some(tsecr) {
            return;
        }
        self.last_tsecr = Some(tsecr);
        if (len as u64) < self.rcv_mss {
            return;
        }
        // tcp_rtt_tsopt_us with min_delta 0: a same-millisecond echo gives no sample.
        let delta_us = tcp_rtt_tsopt_us(now_ts, tsecr, 0);
        if delta_us > 0 {
            self.rtt_update(delta_us as u64);
        }
    }

    /// `tcp_rcv_rtt_update(tp, sample, win_dep = 0)`: a smaller sample replaces the
    /// estimate, a larger one moves it by 1/8.
    fn rtt_update(&mut self, sample_us: u64) {
        let m = sample_us << 3;
        self.rtt_us8 = if self.rtt_us8 == 0 || m < self.rtt_us8 {
            m
        } else {
            self.rtt_us8 - (self.rtt_us8 >> 3) + sample_us
        };
    }

    /// `tcp_rcv_space_adjust` after the application has read up to `copied` bytes in
    /// all, with `inq` bytes in order but not yet read (`rcv_nxt - copied_seq`) and
    /// `ooo_span` bytes from `rcv_nxt` to the end of the out-of-order queue. Once per
    /// receiver RTT: a new most-bytes-in-an-RTT, less what still waits to be read
    /// (`copied -= inq`, in 6.18 and the stable kernels since 2025), grows the buffer.
    pub fn space_adjust(&mut self, now: SimTime, copied: u64, inq: u64, ooo_span: u64) {
        if self.rtt_us8 == 0 {
            return;
        }
        let time_us = now.0.saturating_sub(self.space_time.0) / 1000;
        if time_us < self.rtt_us8 >> 3 {
            return;
        }
        // Signed in the kernel (`int copied`): a read smaller than what waits is <= 0.
        let read = (copied - self.space_seq) as i64 - inq as i64;
        if read > self.space as i64 {
            self.rcvbuf_grow(read as u64, ooo_span);
        }
        self.space_seq = copied;
        self.space_time = now;
    }

    /// `tcp_rcvbuf_grow(sk, newval)` (6.18): room for twice the new amount, for the
    /// sender doubling again (twice the growth, doubled), and for the out-of-order span.
    pub fn rcvbuf_grow(&mut self, newval: u64, ooo_span: u64) {
        let oldval = self.space;
        self.space = newval;
        let mut rcvwin = newval << 1;
        let grow = rcvwin * newval.saturating_sub(oldval) / oldval.max(1);
        rcvwin += grow << 1;
        rcvwin += ooo_span;
        let rcvbuf = self.space_from_win(rcvwin).min(TCP_RMEM_MAX);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.window_clamp = self.win_from_space(rcvbuf as i64) as u64;
        }
    }

    /// The window offered in the SYN-ACK (unscaled, at most 65535): the sender may have
    /// this many bytes outstanding before the first ACK.
    pub fn initial_window(&self) -> u64 {
        self.rcv_wnd
    }

    /// `__tcp_select_window` (tcp_output.c): the bytes beyond `rcv_nxt` the receiver
    /// offers now, with `held` bytes of receive memory charged. The free buffer space
    /// (`tcp_space`) capped by `rcv_ssthresh`, rounded up to the window scale; with less
    /// than half the buffer's window free it is rounded down instead, and is zero below
    /// a sixteenth of the buffer or one segment.
    pub fn select_window(&self, held: u64) -> u64 {
        let unit = 1i64 << RCV_WSCALE;
        let free = self.win_from_space(self.rcvbuf as i64 - held as i64);
        let allowed = self.win_from_space(self.rcvbuf as i64); // tcp_full_space
        let full = (self.window_clamp as i64).min(allowed);
        let mut mss = self.rcv_mss as i64;
        if mss > full {
            mss = full;
            if mss <= 0 {
                return 0;
            }
        }
        let mut window = free;
        if free < full >> 1 {
            // (The kernel also ends quick-ACK mode here; see Deviations.)
            window = free - free.rem_euclid(unit);
            if window < allowed >> 4 || window < mss {
                return 0;
            }
        }
        window = window.min(self.rcv_ssthresh as i64);
        // ALIGN(window, 1 << rcv_wscale): what scaling would otherwise round away.
        ((window + unit - 1) / unit * unit) as u64
    }

    /// The memory a full segment is charged.
    pub fn truesize(&self) -> u32 {
        self.truesize as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn tun_truesize_of_a_1500_byte_packet_is_2304() {
        // 64 + 1500 = 1564 -> 1600 (64-aligned) + 320 = 1920 -> kmalloc-2048, + 256.
        assert_eq!(tun_truesize(1500), 2304);
        // 64 + 100 = 164 -> 192 + 320 = 512 -> kmalloc-512, + 256.
        assert_eq!(tun_truesize(100), 768);
    }

    #[test]
    fn handshake_state_is_linuxs_for_a_1448_byte_mss() {
        let s = RcvSpace::new(1448, 2304);
        // 131072 x 128 / 256 = 65536 -> 45 segments = 65160; clamp 65536 - 1448.
        assert_eq!(
            (s.rcv_wnd, s.window_clamp, s.rcv_ssthresh),
            (65_160, 64_088, 64_088)
        );
        assert_eq!((s.space, s.rcv_mss), (14_480, 536));
    }

    /// The receiver of `tcplab run experiments/fidelity/f02-single-cubic.toml --backend
    /// kernel --seed 1` (Linux 6.18.44), traced with `tcp:tcp_rcvbuf_grow`: each event
    /// prints the state before `tcp_rcvbuf_grow(sk, copied)`. The first full segment
    /// fixes scaling_ratio at 160 and the clamp at 131072 x 160 / 256 = 81920; growth
    /// stops at win(131072 - 2304) = 80480 (the segment itself is charged).
    #[test]
    fn replays_the_kernels_first_rtts() {
        let mut s = RcvSpace::new(1448, 2304);
        s.measure_rcv_mss(1448, 2304);
        assert_eq!(
            (s.scaling_ratio, s.window_clamp, s.rcv_ssthresh),
            (160, 81_920, 65_160)
        );
        let mut grew = 0;
        for _ in 0..10 {
            grew += s.grow_window(1448, 2304, 2304) as u32;
        }
        // (80480 - 65160) / 2896 = 5.3: five full steps and a partial sixth.
        assert_eq!((grew, s.rcv_ssthresh), (6, 80_480));
        // Trace event 1: copied 15928, space 14480, rcvbuf stays 131072.
        s.rcvbuf_grow(15_928, 0);
        assert_eq!((s.rcvbuf, s.window_clamp), (131_072, 81_920));
        // Event 2: copied 28960 over 15928 -> rcvwin 57920 + 2 x 47389 = 152698;
        // rcvbuf 152698 x 256 / 160 = 244316, clamp 152697 (event 3's values).
        s.rcvbuf_grow(28_960, 0);
        assert_eq!((s.rcvbuf, s.window_clamp), (244_316, 152_697));
        // The room reopens: rcv_ssthresh climbs to win(244316 - 2304) = 151257, as event 3.
        while s.grow_window(1448, 2304, 2304) {}
        assert_eq!(s.rcv_ssthresh, 151_257);
        // Event 3: copied 57920, a doubling: rcvwin = 115840 x 3 = 347520 (event 4).
        s.rcvbuf_grow(57_920, 0);
        assert_eq!((s.rcvbuf, s.window_clamp), (556_032, 347_520));
        // Event 4: copied 110048 -> rcvbuf 986028, clamp 616267 (events 5-15).
        s.rcvbuf_grow(110_048, 0);
        assert_eq!((s.rcvbuf, s.window_clamp), (986_028, 616_267));
        // Event 5: copied 112944 barely above: 2 x 112944 + small growth, no change.
        s.rcvbuf_grow(112_944, 0);
        assert_eq!((s.rcvbuf, s.space), (986_028, 112_944));
    }

    #[test]
    fn receiver_rtt_takes_smaller_samples_and_averages_larger_ones_by_an_eighth() {
        let mut s = RcvSpace::new(1448, 2304);
        s.measure_rcv_mss(1448, 2304);
        s.rtt_measure_ts(1041, 1000, 1448);
        assert_eq!(s.rtt_us8 >> 3, 41_000);
        s.rtt_measure_ts(1081, 1041, 1448);
        assert_eq!(s.rtt_us8 >> 3, 40_000);
        // 48 ms: 320000 - 40000 + 48000 = 328000 -> 41000 (the trace's third value).
        s.rtt_measure_ts(1129, 1081, 1448);
        assert_eq!(s.rtt_us8 >> 3, 41_000);
        // The same echo again, a short segment, or a same-millisecond echo: no sample.
        s.rtt_measure_ts(1200, 1081, 1448);
        s.rtt_measure_ts(1200, 1100, 500);
        s.rtt_measure_ts(1200, 1200, 1448);
        assert_eq!(s.rtt_us8 >> 3, 41_000);
    }

    #[test]
    fn space_adjust_measures_once_per_receiver_rtt() {
        let mut s = RcvSpace::new(1448, 2304);
        s.measure_rcv_mss(1448, 2304);
        s.established(SimTime(0));
        s.space_adjust(SimTime(50 * MS), 100_000, 0, 0); // no RTT estimate yet: nothing
        assert_eq!(s.space, 14_480);
        s.rtt_measure_ts(40, 0, 1448); // 40 ms
        s.space_adjust(SimTime(39 * MS), 100_000, 0, 0); // before one RTT: nothing
        assert_eq!(s.space, 14_480);
        // At 40 ms, 28960 bytes read over 14480: rcvwin 57920 + 2 x 57920 = 173760.
        s.space_adjust(SimTime(40 * MS), 28_960, 0, 0);
        assert_eq!((s.space, s.window_clamp), (28_960, 173_760));
        // The next measurement counts from 28960 and 40 ms: 20000 more bytes at 80 ms is
        // not a new maximum, so nothing grows, but the measurement restarts.
        s.space_adjust(SimTime(80 * MS), 48_960, 0, 0);
        assert_eq!((s.space, s.window_clamp), (28_960, 173_760));
    }

    #[test]
    fn data_still_waiting_to_be_read_does_not_count_as_read() {
        // space 14480, receiver RTT 40 ms. At 40 ms a hole fills and releases 60
        // segments (86880 bytes): the reader has copied the first (1448 bytes since the
        // measurement began at 0) with 59 x 1448 = 85432 still queued, so copied - inq =
        // -83984 <= 14480: no growth, and the measurement restarts at 1448 bytes, 40 ms.
        let mut s = RcvSpace::new(1448, 2304);
        s.measure_rcv_mss(1448, 2304);
        s.established(SimTime(0));
        s.rtt_measure_ts(40, 0, 1448);
        let before = (s.space, s.rcvbuf, s.window_clamp);
        s.space_adjust(SimTime(40 * MS), 1448, 59 * 1448, 0);
        assert_eq!((s.space, s.rcvbuf, s.window_clamp), before);
        // The rest of the burst is read at once (the same instant: no new measurement);
        // one RTT later all 86880 - 1448 = 85432 bytes count: rcvwin = 170864 + 2 x
        // (170864 x 70952 / 14480 = 837233, floored as the kernel's do_div) = 1845330,
        // rcvbuf = 1845330 x 256 / 160 = 2952528, clamp = 2952528 x 160 / 256 = 1845330.
        s.space_adjust(SimTime(40 * MS), 86_880, 0, 0);
        assert_eq!((s.space, s.rcvbuf), (before.0, before.1));
        s.space_adjust(SimTime(80 * MS), 86_880, 0, 0);
        assert_eq!(
            (s.space, s.rcvbuf, s.window_clamp),
            (85_432, 2_952_528, 1_845_330)
        );
    }

    #[test]
    fn out_of_order_span_is_provisioned() {
        let mut s = RcvSpace::new(1448, 2304);
        s.measure_rcv_mss(1448, 2304);
        // tcp_data_queue_ofo: tcp_rcvbuf_grow(sk, space) with 200 segments held beyond a
        // hole: rcvwin = 2 x 14480 + 289600 = 318560 -> rcvbuf 509696, clamp 318560.
        s.rcvbuf_grow(s.space, 200 * 1448);
        assert_eq!((s.rcvbuf, s.window_clamp), (509_696, 318_560));
    }

    #[test]
    fn a_small_segment_grows_the_window_only_below_its_fraction_of_tcp_rmem_max() {
        let mut s = RcvSpace::new(1448, 2304);
        s.measure_rcv_mss(1448, 2304);
        s.rcvbuf_grow(1_000_000, 0); // plenty of room
                                     // 200 bytes in a 768-byte skb: win(768) = 480 > 200, so __tcp_grow_window:
                                     // t = 240, window = win(32 MB) / 2 = 10485760; 240 > 200 -> t = 120 <= 200 after
                                     // one halving (window 5242880 >= rcv_ssthresh): 2 x rcv_mss = 2896.
        let before = s.rcv_ssthresh;
        assert!(s.grow_window(200, 768, 0));
        assert_eq!(s.rcv_ssthresh - before, 2896);
    }

    #[test]
    fn select_window_is_the_free_space_under_rcv_ssthresh_rounded_to_the_scale() {
        assert_eq!(RCV_WSCALE, 10); // ilog2(32 MB) = 25, less 15
                                    // Before any segment: free = full = 65536 (ratio 128), rcv_ssthresh 64088 ->
                                    // rounded up to 1024: 64512.
        let s = RcvSpace::new(1448, 2304);
        assert_eq!(s.select_window(0), 64_512);
        // After the first full segment: ratio 160, clamp 81920, rcv_ssthresh
        // max(64088, min(65160, 81920)) = 65160 -> 65536.
        let mut s = RcvSpace::new(1448, 2304);
        s.measure_rcv_mss(1448, 2304);
        assert_eq!((s.window_clamp, s.rcv_ssthresh), (81_920, 65_160));
        assert_eq!(s.select_window(0), 65_536);
        // 65536 bytes held: free = 65536 x 160 / 256 = 40960, not below half of 81920:
        // min(40960, 65160) = 40960, already a multiple of 1024.
        assert_eq!(s.select_window(65_536), 40_960);
        // 66000 held: free = 65072 x 160 / 256 = 40670 < 40960: rounded down to 39936.
        assert_eq!(s.select_window(66_000), 39_936);
        // 128000 held: free = 3072 x 160 / 256 = 1920 -> 1024, below 81920 / 16 = 5120:
        // a zero window.
        assert_eq!(s.select_window(128_000), 0);
    }
}
