//! The receiving host: cumulative ACK, SACK blocks, delayed ACKs and SACK compression,
//! after Linux `tcp_data_queue` / `__tcp_ack_snd_check` / `tcp_sack_new_ofo_skb`.
//!
//! - In-order data advances `rcv_nxt` and pulls in any out-of-order range it joins.
//! - ACK policy (`__tcp_ack_snd_check`): immediately when more than one full segment
//!   is unacknowledged (i.e. every 2nd full segment), in quick-ACK mode, when a hole is
//!   closed (no out-of-order data left, `ICSK_ACK_NOW`), for duplicates, and for the
//!   last (PSH) segment of a finite transfer (`ICSK_ACK_PUSHED`); otherwise, with no
//!   out-of-order data held, the delayed-ACK timer sends it, after the adaptive `ato`
//!   ([`super::delack`]: 40 ms for back-to-back data, adapted to the arrival gaps,
//!   doubled on each expiry up to the RTO, bounded by the receiver's srtt and 200 ms).
//!   With out-of-order data held the ACK is subject to SACK compression
//!   ([`super::sack_compress`], Linux >= 4.18 default): the first 3 ACKs per value of
//!   `rcv_nxt` go at once, later ones are withheld up to 44 and sent by a timer of
//!   min(1 ms, RTT / 20). With `tcp.sack_compression = false` (the sysctl
//!   `tcp_comp_sack_nr = 0`) every such ACK goes at once. With delayed ACKs off every
//!   segment is acknowledged at once (as `TCP_QUICKACK`, which also bypasses
//!   compression).
//! - Quick-ACK mode: the first data segment arms `TCP_MAX_QUICKACKS` = 16 immediate
//!   ACKs (`tcp_event_data_recv` -> `tcp_incr_quickack`: min(rcv_wnd / (2 * mss), 16),
//!   16 for Linux's 64 KB initial window), and so do in-order data after a gap longer
//!   than the receiver's RTO (`tcp_event_data_recv`: "Too long gap. Apparently sender
//!   failed to restart window"; [`super::delack`]) and a duplicate segment
//!   (`tcp_enter_quickack_mode`, which also resets `ato`); each ACK sent uses one
//!   (`tcp_dec_quickack_mode`).
//!   A segment that grows the receive window (`tcp_grow_window`: `icsk_ack.quick |= 1`)
//!   is ACKed at once too; the window and the receive-buffer autotuning that gives it
//!   room are in [`super::rcv_space`] (`tcp.receive_buffer = "linux"`, the default).
//! - Receive window: every ACK advertises one (`Packet::wnd`, `tcp_select_window`:
//!   `__tcp_select_window`'s offer, never moving the right edge left); the sender keeps
//!   its new data inside it. With `tcp.receive_buffer = "unlimited"` ACKs carry none.
//! - Timestamps: every ACK carries the receiver's millisecond clock as TSval; data
//!   segments echo the latest one, from which the receiver estimates its RTT
//!   (`tcp_rcv_rtt_measure_ts`), the clock of its buffer autotuning. The clock's phase
//!   against the run's is drawn per flow (a connection starts at an arbitrary point of
//!   `tcp_clock_ms`), so the millisecond rounding differs between flows and seeds.
//!   Every ACK echoes `ts_recent` as TSecr: the TSval of the last data segment at or
//!   below `rcv_wup` (rcv_nxt when the last ACK went out) whose TSval is not older
//!   (`tcp_replace_ts_recent` / the fast path's `tcp_store_ts_recent`, with PAWS'
//!   `tcp_paws_check`): the first segment of a delayed-ACK pair, never one out of
//!   order, and the retransmission that fills a hole (RFC 7323 Sec. 4.3). The sender
//!   samples RTT from it when Karn's rule forbids one ([`super::input`]).
//! - SACK blocks (RFC 2018 Sec. 4): the block holding the most recently received
//!   segment first, then the most recently reported other blocks; at most 3 (the room
//!   left beside the timestamp option) sent, 4 remembered (`TCP_NUM_SACKS`).
//! - D-SACK (RFC 2883, `tcp_dsack_set`): a duplicate segment, below `rcv_nxt` (immediate
//!   ACK, quick-ACK mode) or already held out of order (the out-of-order ACK policy), is
//!   reported as the first block of the next ACK (with 2 SACK blocks after it), then
//!   forgotten; a second duplicate before that ACK replaces it, as the kernel's single
//!   `duplicate_sack`.
//!
//! Deviations: the delayed-ACK timing's own (in [`super::delack`]: ns rather than
//! jiffies, and the receiver's srtt and RTO fixed from the handshake RTT, which is what a
//! receiver that sends no data has); the window's memory accounting is
//! [`super::rcv_space`]'s (an application that reads at once).
//! SACK compression: the RTT behind its delay is the flow's base RTT fixed at build
//! time (standing in for the receiver's handshake `srtt_us`, which caps the kernel's
//! min(`rcv_rtt_est`, `srtt_us`)), and the timer has no slack (see
//! [`super::sack_compress`]).

use std::collections::VecDeque;

use tcplab_cc::{CaEvent, CcView, CongestionOps};

use crate::net::packet::{ts_clock, Ecn, Packet, SackBlock, MAX_SACK_BLOCKS, NO_WINDOW};
use crate::sched::Timer;
use crate::tcp::delack::AckTiming;
use crate::tcp::rcv_space::{tun_truesize, RcvSpace, GROW_MIN_LEN, RCV_WSCALE};
use crate::tcp::sack_compress::{
    CompDecision, SackCompress, TCP_COMP_SACK_NR, TCP_SACK_BLOCKS_EXPECTED,
};
use crate::time::{Dur, SimTime};

pub use crate::tcp::delack::TCP_DELACK_MIN;
/// `TCP_MAX_QUICKACKS` (include/net/tcp.h): at most 16 ACKs in quick-ACK mode.
pub const TCP_MAX_QUICKACKS: u32 = 16;

/// Exact receiver counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Data segments that reached the receiver (duplicates included).
    pub received_packets: u64,
    /// Their payload bytes (the throughput numerator).
    pub received_bytes: u64,
    /// Segments already held (below rcv_nxt or in the out-of-order set).
    pub duplicate_packets: u64,
    pub duplicate_bytes: u64,
    /// Payload bytes delivered in order to the application, each once (goodput).
    pub delivered_bytes: u64,
    pub acks_sent: u64,
    /// ACKs withheld by SACK compression and replaced by a later one
    /// (LINUX_MIB_TCPACKCOMPRESSED).
    pub acks_compressed: u64,
    /// Data segments that arrived with CE set.
    pub ce_packets: u64,
    /// A finite transfer: when its last byte was delivered in order (flow completion).
    pub completed_ns: Option<u64>,
}

/// Which receiver timer an event belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxTimer {
    /// The delayed-ACK timer (`ICSK_TIME_DACK`).
    DelAck,
    /// `tp->compressed_ack_timer`.
    CompressedAck,
}

/// What a data segment produced.
#[derive(Clone, Copy, Debug, Default)]
pub struct RxOut {
    /// An ACK flushed by `tcp_sack_compress_send_ack` before the segment changed the SACK
    /// list; goes out before `ack`.
    pub flush: Option<Packet>,
    /// The ACK to send now.
    pub ack: Option<Packet>,
    /// A timer entry (time, timer, generation) to schedule.
    pub timer: Option<(SimTime, RxTimer, u32)>,
}

impl RxOut {
    fn ack(p: Packet) -> RxOut {
        RxOut {
            ack: Some(p),
            ..RxOut::default()
        }
    }
    fn timer(entry: Option<(SimTime, u32)>, kind: RxTimer) -> RxOut {
        RxOut {
            timer: entry.map(|(t, g)| (t, kind, g)),
            ..RxOut::default()
        }
    }
}

pub struct Receiver {
    flow: u32,
    mss: u32,
    header: u32,
    delayed_ack: bool,
    /// The application's total bytes if finite (for the size of the last segment).
    total_bytes: Option<u64>,
    /// Next segment expected.
    pub rcv_nxt: u64,
    /// Out-of-order ranges [start, end), sorted and disjoint, all above rcv_nxt. A deque:
    /// new ranges open at the back (the newest data) and retransmissions close holes at
    /// the front, both O(1); a flight with millions of holes (a 1 Tbit/s BDP of loss)
    /// made a Vec's front removal quadratic.
    ooo: VecDeque<(u64, u64)>,
    /// A pending D-SACK (`rx_opt.dsack`, `duplicate_sack[0]`): the duplicate segment
    /// the next ACK reports first (RFC 2883), then forgets.
    dsack: Option<SackBlock>,
    /// Segments whose blocks were reported most recently, newest first.
    recent: [u64; MAX_SACK_BLOCKS + 1],
    n_recent: usize,
    /// `recent_range[k]` is `range_of(recent[k])` while `ooo_moves` is `recent_moves`:
    /// the SACK list is built from the ranges `note_recent` just looked up, not searched
    /// again (benches/RESULTS.md, "fourteenth step").
    recent_range: [Option<usize>; MAX_SACK_BLOCKS + 1],
    recent_moves: u64,
    /// Counts the changes to `ooo` that move ranges to other indices (an insertion, a
    /// removal); a range growing in place moves none.
    ooo_moves: u64,
    /// Full segments received in order since the last ACK.
    unacked: u32,
    /// `tp->rcv_wup`: rcv_nxt when the last ACK was sent.
    rcv_wup: u64,
    /// `icsk_ack.quick`: immediate ACKs left in quick-ACK mode.
    quick: u32,
    /// Whether any data has arrived (`icsk_ack.ato` set).
    seen_data: bool,
    /// Receive-buffer autotuning and window growth ([`RcvSpace`]), unless the spec asks
    /// for an unlimited buffer (`tcp.receive_buffer = "unlimited"`).
    rcv_space: Option<RcvSpace>,
    /// `rcv_wup + rcv_wnd` in bytes: the right edge of the window last advertised, which
    /// the receiver never moves left (`tcp_select_window`). Unused without `rcv_space`.
    rcv_wnd_end: u64,
    /// The handshake's round trip: the SYN-ACK's TSval is taken to be this long before
    /// the first data segment arrives.
    handshake_rtt: Dur,
    /// TSval the first segments echo (the SYN-ACK's), set when the first one arrives.
    syn_ack_ts: u32,
    /// Segments held out of order (the sum of `ooo`'s range lengths).
    ooo_segs: u64,
    /// The timestamp clock now (`ts_clock`), the TSval of ACKs sent now.
    ts_now: u32,
    /// `rx_opt.ts_recent`: the data TSval ACKs echo as TSecr (0 before any data).
    ts_recent: u32,
    /// Where this host's millisecond timestamp clock ticks relative to the run's clock
    /// (ns, in [0, 1 ms)): a connection starts at an arbitrary point of the kernel's
    /// `tcp_clock_ms`, so the millisecond quantisation of its RTT samples has a random
    /// phase; set by [`Receiver::set_ts_phase`] (0 until then).
    ts_phase_ns: u64,
    pub delack: Timer,
    /// `icsk_ack.ato` and the RTT state behind the delayed-ACK timer ([`AckTiming`]).
    pub timing: AckTiming,
    /// SACK compression state and its timer.
    pub comp: SackCompress,
    /// ECN negotiated (see [`Receiver::enable_ecn`]); everything below is unused without.
    ecn: bool,
    /// `TCP_ECN_SEEN`: an ECN-capable segment has arrived.
    ecn_seen: bool,
    /// `TCP_ECN_DEMAND_CWR`: ACKs carry ECE.
    demand_cwr: bool,
    /// `ICSK_ACK_NOW` for the segment being processed.
    ack_now: bool,
    /// An in-order segment's ECN echo ACK to send before its own (see `on_data`).
    ecn_flush: Option<Packet>,
    /// ACKs are ECT(0): the algorithm needs ECN (`tcp_ca_needs_ecn` in `tcp_ecn_send`).
    ack_ect: bool,
    /// The receiving socket's algorithm when it needs ECN or wants CE events (DCTCP,
    /// BBRv2/v3's `TCP_CONG_WANTS_CE_EVENTS`): it gets
    /// `EcnIsCe`/`EcnNoCe` and runs its own echo state machine, through `rx_tp`.
    /// Boxed: it is rare, and the receiver stays small.
    rx_cc: Option<Box<(Box<dyn CongestionOps>, CcView)>>,
    pub stats: ReceiverStats,
}

impl Receiver {
    pub fn new(
        flow: u32,
        mss: u32,
        header: u32,
        delayed_ack: bool,
        total_bytes: Option<u64>,
    ) -> Receiver {
        Receiver {
            flow,
            mss,
            header,
            delayed_ack,
            total_bytes,
            rcv_nxt: 0,
            ooo: VecDeque::with_capacity(8),
            dsack: None,
            recent: [0; MAX_SACK_BLOCKS + 1],
            n_recent: 0,
            recent_range: [None; MAX_SACK_BLOCKS + 1],
            recent_moves: 0,
            ooo_moves: 0,
            unacked: 0,
            rcv_wup: 0,
            quick: 0,
            seen_data: false,
            rcv_space: None,
            rcv_wnd_end: 0,
            handshake_rtt: Dur::ZERO,
            syn_ack_ts: 0,
            ooo_segs: 0,
            ts_now: 0,
            ts_recent: 0,
            ts_phase_ns: 0,
            delack: Timer::default(),
            timing: AckTiming::default(),
            comp: SackCompress::disabled(),
            ecn: false,
            ecn_seen: false,
            demand_cwr: false,
            ack_now: false,
            ecn_flush: None,
            ack_ect: false,
            rx_cc: None,
            stats: ReceiverStats::default(),
        }
    }

    /// Model Linux's receive-buffer autotuning and the quick ACKs of window growth
    /// ([`RcvSpace`]), with `truesize` bytes of memory per full segment, the path's
    /// handshake round trip `rtt` (for the SYN-ACK's timestamp) and the phase of the
    /// timestamp clock (`ts_phase`, below 1 ms; the engine draws it per flow).
    pub fn enable_rcv_space(&mut self, truesize: u32, rtt: Dur, ts_phase: Dur) {
        let rs = RcvSpace::new(self.mss, truesize);
        self.rcv_wnd_end = rs.initial_window();
        self.rcv_space = Some(rs);
        self.handshake_rtt = rtt;
        self.set_ts_phase(ts_phase);
    }

    /// The receiving socket's RTO and smoothed RTT, from its handshake sample (see
    /// [`crate::tcp::delack`]): the gap that re-arms quick ACKs, the bound of `ato`.
    pub fn set_rtt(&mut self, rto: Dur, srtt: Dur) {
        self.timing.set_rtt(rto, srtt);
    }

    /// The phase of this host's timestamp clock (below 1 ms; the engine draws it per
    /// flow and gives the sender the same).
    pub fn set_ts_phase(&mut self, ts_phase: Dur) {
        self.ts_phase_ns = ts_phase.0 % 1_000_000;
    }

    /// The timestamp clock at `now` (`ts_clock` of this host's phase).
    fn ts_at(&self, now_ns: i64) -> u32 {
        ts_clock(now_ns + self.ts_phase_ns as i64)
    }

    /// The autotuning state, if modelled (for tests and diagnostics).
    pub fn rcv_space(&self) -> Option<&RcvSpace> {
        self.rcv_space.as_ref()
    }

    /// Turn on SACK compression with Linux's `tcp_comp_sack_nr` = 44; `rtt` is the RTT
    /// estimate its timer delay is derived from (the engine passes the flow's base RTT).
    pub fn enable_sack_compression(&mut self, rtt: Dur) {
        self.comp = SackCompress::new(TCP_COMP_SACK_NR, rtt);
    }

    /// ECN was negotiated: echo CE as RFC 3168 (ECE on every ACK from a CE segment until
    /// a segment with CWR arrives), or, with `rx_cc` (an algorithm that needs ECN, run
    /// by the receiving host as in a DCTCP deployment), as that algorithm's
    /// `cwnd_event(EcnIsCe / EcnNoCe)` says; its jiffies tick at `hz` (`[tcp] hz`).
    pub fn enable_ecn(&mut self, rx_cc: Option<Box<dyn CongestionOps>>, hz: u32) {
        self.ecn = true;
        self.ack_ect = rx_cc.as_ref().is_some_and(|cc| cc.needs_ecn());
        self.rx_cc = rx_cc.map(|mut cc| {
            let mut tp = CcView::new(self.mss, 0);
            tp.ecn_ok = true;
            tp.hz = hz;
            cc.init(&mut tp);
            Box::new((cc, tp))
        });
    }

    /// `tcp_ecn_accept_cwr`: the sender has reduced; stop echoing, and ACK this segment
    /// at once (its cwnd may be tiny).
    #[inline(never)] // ECN code stays out of the hot path of runs without it
    fn ecn_accept_cwr(&mut self, pkt: &Packet) {
        if pkt.cwr() {
            self.demand_cwr = false;
            self.ack_now = true;
        }
    }

    /// `tcp_enter_quickack_mode(sk, 2)`: at least 2 immediate ACKs.
    fn quickack_2(&mut self) {
        self.quick = self.quick.max(2);
        self.timing.enter_quickack_mode();
    }

    /// `tcp_ecn_check_ce` for a segment that just arrived (`rcv_nxt` already advanced
    /// past it if in order). Returns an ACK the algorithm asks to send first.
    #[inline(never)]
    fn ecn_check_ce(&mut self, pkt: &Packet) -> Option<Packet> {
        if !self.ecn {
            return None;
        }
        let mut flush = None;
        let ev = match pkt.ecn() {
            Ecn::NotEct => {
                // Not-ECT after ECT: probably a retransmission; ACK quickly.
                if self.ecn_seen {
                    self.quickack_2();
                }
                return None;
            }
            Ecn::Ce => CaEvent::EcnIsCe,
            Ecn::Ect0 | Ecn::Ect1 => CaEvent::EcnNoCe,
        };
        if let Some(rx) = self.rx_cc.as_mut() {
            let (cc, tp) = &mut **rx;
            tp.rcv_nxt = self.rcv_nxt;
            tp.ecn_demand_cwr = self.demand_cwr;
            tp.ack_timer_pending = self.delack.is_armed();
            tp.ack_now = false;
            tp.send_ack = None;
            cc.cwnd_event(tp, ev);
            self.demand_cwr = tp.ecn_demand_cwr;
            self.ack_now |= tp.ack_now;
            if let Some((ack, ece)) = tp.send_ack {
                flush = Some(self.special_ack(ack, ece));
            }
        }
        if ev == CaEvent::EcnIsCe {
            self.stats.ce_packets += 1;
            if !self.demand_cwr {
                // Better not delay ACKs: the sender may have a very small cwnd.
                self.quickack_2();
                self.demand_cwr = true;
            }
        }
        self.ecn_seen = true;
        flush
    }

    /// An ACK for `ack` with ECE = `ece` sent outside the normal path
    /// (`__tcp_send_ack(sk, prior_rcv_nxt)`): when it does not acknowledge everything
    /// received, `tcp_event_ack_sent` leaves the delayed-ACK state alone.
    #[inline(never)]
    fn special_ack(&mut self, ack: u64, ece: bool) -> Packet {
        if ack == self.rcv_nxt {
            let saved = self.demand_cwr;
            self.demand_cwr = ece;
            let p = self.make_ack();
            self.demand_cwr = saved;
            return p;
        }
        self.stats.acks_sent += 1;
        let (blocks, n) = self.sack_blocks();
        let mut p = Packet::ack(self.flow, ack, &blocks[..n], self.header);
        p.tsval = self.ts_now;
        p.tsecr = self.ts_recent;
        if self.ecn {
            self.ecn_mark_ack(&mut p, ece);
        }
        self.advertise_window(&mut p);
        p
    }

    /// `tcp_ecn_send` for an ACK: ECE while demanded; ECT if the algorithm needs ECN.
    /// (Inline: a few bit operations; out of line, the ACK being built must go through
    /// memory on every ACK, ECN or not.)
    #[inline(always)]
    fn ecn_mark_ack(&self, p: &mut Packet, ece: bool) {
        p.set_ece(ece);
        if self.ack_ect {
            p.set_ecn(Ecn::Ect0);
        }
    }

    /// Payload bytes of segments [a, b).
    fn bytes_of(&self, a: u64, b: u64) -> u64 {
        let full = (b - a) * self.mss as u64;
        match self.total_bytes {
            Some(total) => full.min(total.saturating_sub(a * self.mss as u64)),
            None => full,
        }
    }

    /// Bytes held out of order (received, not yet deliverable).
    pub fn ooo_bytes(&self) -> u64 {
        self.ooo.iter().map(|&(a, b)| self.bytes_of(a, b)).sum()
    }

    fn holds(&self, seq: u64) -> bool {
        // The next expected segment is never held: every out-of-order range starts above
        // rcv_nxt (`in_order` merges the first range once rcv_nxt reaches it). Checked
        // first because most segments are that one, and the search below is a call.
        debug_assert!(self.ooo.front().is_none_or(|r| r.0 > self.rcv_nxt));
        seq < self.rcv_nxt || (seq > self.rcv_nxt && self.range_of(seq).is_some())
    }

    fn range_of(&self, seq: u64) -> Option<usize> {
        // Most lookups are of the latest arrivals, and those usually sit in the last
        // range (a loss leaves a hole below; later segments extend the top), so the last
        // range is tried before the search, whose probes miss the cache at 1000 flows
        // (benches/RESULTS.md, "Engine speed, eighth step").
        let &(a, b) = self.ooo.back()?;
        if seq >= a {
            return (seq < b).then_some(self.ooo.len() - 1);
        }
        let i = self.ooo.partition_point(|&(_, e)| e <= seq);
        (i < self.ooo.len() && self.ooo[i].0 <= seq).then_some(i)
    }

    fn insert_ooo(&mut self, seq: u64) {
        self.ooo_segs += 1;
        // The number of ranges ending before seq; for an arrival at or above the last
        // range's end (the usual case, see `range_of`) known without a search.
        let i = match self.ooo.back() {
            Some(&(_, b)) if seq > b => self.ooo.len(),
            Some(&(_, b)) if seq == b => self.ooo.len() - 1,
            _ => self.ooo.partition_point(|&(_, e)| e < seq),
        };
        // Ranges before i end before seq (not adjacent); range i may touch seq.
        if i < self.ooo.len() && self.ooo[i].1 == seq {
            self.ooo[i].1 = seq + 1;
            if i + 1 < self.ooo.len() && self.ooo[i + 1].0 == seq + 1 {
                self.ooo[i].1 = self.ooo[i + 1].1;
                self.ooo.remove(i + 1);
                self.ooo_moves += 1;
            }
        } else if i < self.ooo.len() && self.ooo[i].0 == seq + 1 {
            self.ooo[i].0 = seq;
        } else {
            self.ooo.insert(i, (seq, seq + 1));
            self.ooo_moves += 1;
        }
    }

    fn note_recent(&mut self, seq: u64) {
        let mut v = [0u64; MAX_SACK_BLOCKS + 1];
        let mut r = [None; MAX_SACK_BLOCKS + 1];
        v[0] = seq;
        let mut n = 1;
        let block = self.range_of(seq);
        r[0] = block;
        for k in 0..self.n_recent {
            let s = self.recent[k];
            if s < self.rcv_nxt || n == v.len() {
                continue;
            }
            let range = self.recent_range_of(k);
            if range == block {
                continue;
            }
            v[n] = s;
            r[n] = range;
            n += 1;
        }
        self.recent = v;
        self.recent_range = r;
        self.recent_moves = self.ooo_moves;
        self.n_recent = n;
    }

    /// `range_of(self.recent[k])`, from `recent_range` while no range has moved since
    /// `note_recent` looked it up.
    fn recent_range_of(&self, k: usize) -> Option<usize> {
        if self.recent_moves == self.ooo_moves {
            debug_assert_eq!(self.recent_range[k], self.range_of(self.recent[k]));
            self.recent_range[k]
        } else {
            self.range_of(self.recent[k])
        }
    }

    /// The SACK blocks to send now.
    pub fn sack_blocks(&self) -> ([SackBlock; MAX_SACK_BLOCKS], usize) {
        let mut out = [SackBlock::default(); MAX_SACK_BLOCKS];
        let mut n = 0;
        let mut used = [usize::MAX; MAX_SACK_BLOCKS];
        for k in 0..self.n_recent {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            if let Some(i) = self.recent_range_of(k) {
                if used[..n].contains(&i) {
                    continue;
                }
                used[n] = i;
                out[n] = SackBlock {
                    start: self.ooo[i].0,
                    end: self.ooo[i].1,
                };
                n += 1;
            }
        }
        (out, n)
    }

    /// Send an ACK now (`tcp_send_ack` -> `tcp_event_ack_sent`: quick-ACK count, delayed
    /// ACK and compressed-ACK timers, `rcv_wup`).
    #[inline]
    fn make_ack(&mut self) -> Packet {
        self.unacked = 0;
        self.rcv_wup = self.rcv_nxt;
        if self.quick == 1 {
            // tcp_dec_quickack_mode: "Leaving quickack mode we deflate ATO."
            self.timing.enter_quickack_mode();
        }
        self.quick = self.quick.saturating_sub(1);
        self.delack.cancel();
        self.stats.acks_compressed += self.comp.on_ack_sent() as u64;
        self.stats.acks_sent += 1;
        self.ack_now = false;
        let (blocks, n) = self.sack_blocks();
        let mut p = match self.dsack.take() {
            // tcp_established_options / tcp_options_write: the D-SACK block first, then
            // as many SACK blocks as fit beside the timestamp (3 in all).
            Some(d) => {
                let mut all = [d; MAX_SACK_BLOCKS];
                let k = n.min(MAX_SACK_BLOCKS - 1);
                all[1..=k].copy_from_slice(&blocks[..k]);
                Packet::ack(self.flow, self.rcv_nxt, &all[..=k], self.header)
            }
            None => Packet::ack(self.flow, self.rcv_nxt, &blocks[..n], self.header),
        };
        p.tsval = self.ts_now;
        p.tsecr = self.ts_recent;
        if self.ecn {
            self.ecn_mark_ack(&mut p, self.demand_cwr);
        }
        self.advertise_window(&mut p);
        p
    }

    /// `tcp_select_window` for the ACK `p`: the window `__tcp_select_window` offers now
    /// beyond rcv_nxt, or, where that would shrink the offer, the previous right edge
    /// (rounded up to the scale). `p.wnd` counts from the byte `p` acknowledges.
    fn advertise_window(&mut self, p: &mut Packet) {
        let Some(rs) = self.rcv_space.as_ref() else {
            return; // no receive-window limit
        };
        let held = self.ooo_segs * rs.truesize() as u64;
        let new = rs.select_window(held);
        let nxt = self.bytes_of(0, self.rcv_nxt);
        let cur = self.rcv_wnd_end.saturating_sub(nxt);
        let win = if new < cur {
            cur.next_multiple_of(1 << RCV_WSCALE)
        } else {
            new
        };
        self.rcv_wnd_end = nxt + win;
        let acked = self.bytes_of(0, p.seq);
        p.wnd = (self.rcv_wnd_end - acked).min(NO_WINDOW as u64 - 1) as u32;
    }

    /// The right edge of the window advertised so far (bytes): the SYN-ACK's before any
    /// ACK.
    pub fn window_end(&self) -> u64 {
        self.rcv_wnd_end
    }

    /// The distinct blocks of the remembered SACK list (the kernel's `selective_acks[]`,
    /// at most `TCP_NUM_SACKS` = 4), most recent first.
    fn sack_list(&self) -> ([(u64, u64); MAX_SACK_BLOCKS + 1], usize) {
        let mut out = [(0, 0); MAX_SACK_BLOCKS + 1];
        let mut n = 0;
        for k in 0..self.n_recent {
            if let Some(i) = self.recent_range_of(k) {
                if !out[..n].contains(&self.ooo[i]) {
                    out[n] = self.ooo[i];
                    n += 1;
                }
            }
        }
        (out, n)
    }

    /// `tcp_sack_new_ofo_skb`'s flush, before the out-of-order segment `seq` changes the
    /// SACK list: if it extends a block listed at position >= 2 (`tcp_sack_extend`: the
    /// segment touches or overlaps the block), or starts a new block while 2 or more are
    /// listed, a pending compressed ACK is sent first (`tcp_sack_compress_send_ack`).
    fn sack_compress_flush(&mut self, seq: u64) -> Option<Packet> {
        if self.comp.compressed_ack == 0 {
            return None;
        }
        let (list, n) = self.sack_list();
        let this_sack = list[..n]
            .iter()
            .position(|&(a, b)| a <= seq + 1 && seq <= b)
            .unwrap_or(n);
        if this_sack < TCP_SACK_BLOCKS_EXPECTED {
            return None;
        }
        // The ACK being sent stands for one of the withheld ones.
        self.comp.compressed_ack -= 1;
        Some(self.make_ack())
    }

    /// `__tcp_ack_snd_check` with out-of-order data held.
    fn ack_snd_check_ofo(&mut self, now: SimTime) -> RxOut {
        // More than one full segment since the last ACK, quick-ACK mode, TCP_QUICKACK.
        if self.rcv_nxt - self.rcv_wup >= 2 || self.quick > 0 || !self.delayed_ack || self.ack_now {
            return RxOut::ack(self.make_ack());
        }
        match self.comp.check(now, self.rcv_nxt) {
            CompDecision::SendNow => RxOut::ack(self.make_ack()),
            CompDecision::Compressed(entry) => RxOut::timer(entry, RxTimer::CompressedAck),
        }
    }

    /// A data segment arrived: the ACKs to send now and maybe a timer to schedule.
    pub fn on_data(&mut self, now: SimTime, pkt: &Packet) -> RxOut {
        self.ts_now = self.ts_at(now.0 as i64);
        let mut out = self.receive(now, pkt);
        if self.ecn_flush.is_some() {
            // An ACK the ECN echo asked for before this segment's (DCTCP's CE change).
            out.flush = self.ecn_flush.take();
        }
        out
    }

    fn receive(&mut self, now: SimTime, pkt: &Packet) -> RxOut {
        self.stats.received_packets += 1;
        self.stats.received_bytes += pkt.payload as u64;
        let seq = pkt.seq;
        if !self.seen_data {
            // The first data segment initializes the delayed-ACK engine in quick mode.
            self.seen_data = true;
            self.quick = TCP_MAX_QUICKACKS;
            if let Some(rs) = self.rcv_space.as_mut() {
                rs.established(now);
                self.syn_ack_ts = self.ts_at(now.0 as i64 - self.handshake_rtt.0 as i64);
            }
        }
        self.ack_now = false;
        if self.ecn {
            self.ecn_accept_cwr(pkt);
        }
        // tcp_replace_ts_recent (tcp_ack, FLAG_UPDATE_TS_RECENT) / the fast path's
        // tcp_store_ts_recent: a segment at or below rcv_wup that passes
        // tcp_sequence (its end not below rcv_wup) and PAWS (TSval not older).
        if seq <= self.rcv_wup
            && seq + 1 >= self.rcv_wup
            && pkt.tsval.wrapping_sub(self.ts_recent) as i32 >= 0
        {
            self.ts_recent = pkt.tsval;
        }
        if self.holds(seq) {
            self.stats.duplicate_packets += 1;
            self.stats.duplicate_bytes += pkt.payload as u64;
            // tcp_dsack_set: the next ACK reports the duplicate (D-SACK).
            self.dsack = Some(SackBlock {
                start: seq,
                end: seq + 1,
            });
            if seq < self.rcv_nxt {
                // tcp_data_queue's "retransmit" case: quick-ACK mode
                // (tcp_enter_quickack_mode, which also resets ato), an ACK at once.
                self.quick = TCP_MAX_QUICKACKS;
                self.timing.enter_quickack_mode();
                return RxOut::ack(self.make_ack());
            }
            // A duplicate of a segment held out of order (tcp_data_queue_ofo: dropped,
            // tcp_sack_new_ofo_skb moves its block first), then the out-of-order ACK
            // policy.
            let flush = self.sack_compress_flush(seq);
            self.note_recent(seq);
            return RxOut {
                flush,
                ..self.ack_snd_check_ofo(now)
            };
        }
        if let Some(rs) = self.rcv_space.as_mut() {
            // tcp_rcv_established: tcp_rcv_rtt_measure_ts before tcp_data_queue.
            let tsecr = if pkt.tsecr == 0 {
                self.syn_ack_ts
            } else {
                pkt.tsecr
            };
            rs.rtt_measure_ts(self.ts_now, tsecr, pkt.payload);
        }
        if seq == self.rcv_nxt {
            let before = self.stats.delivered_bytes;
            let out = self.in_order(now, pkt);
            if self.rcv_space.is_some() {
                self.app_read(now, before + pkt.payload as u64);
            }
            return out;
        }
        // Out of order (tcp_data_queue_ofo: tcp_ecn_check_ce first): maybe flush a
        // compressed ACK, hold the segment, then decide.
        let ecn_flush = if self.ecn {
            self.ecn_check_ce(pkt)
        } else {
            None
        };
        let flush = ecn_flush.or_else(|| self.sack_compress_flush(seq));
        self.insert_ooo(seq);
        self.note_recent(seq);
        if self.rcv_space.is_some() {
            self.ofo_window(pkt);
        }
        RxOut {
            flush,
            ..self.ack_snd_check_ofo(now)
        }
    }

    /// The next expected segment arrived (`tcp_data_queue`'s in-order branch, then
    /// `__tcp_ack_snd_check`).
    fn in_order(&mut self, now: SimTime, pkt: &Packet) -> RxOut {
        let had_ooo = !self.ooo.is_empty();
        self.rcv_nxt += 1;
        self.stats.delivered_bytes += pkt.payload as u64;
        // tcp_event_data_recv: the ato update (and quick ACKs after a gap longer than
        // the RTO), then tcp_ecn_check_ce, before the out-of-order merge.
        if self.timing.on_data(now) {
            self.quick = self.quick.max(TCP_MAX_QUICKACKS);
        }
        if self.ecn {
            self.ecn_flush = self.ecn_check_ce(pkt);
        }
        if self.rcv_space.is_some() {
            self.event_data_recv(pkt);
        }
        if had_ooo && self.ooo[0].0 == self.rcv_nxt {
            let (a, b) = self.ooo.pop_front().expect("checked non-empty");
            self.ooo_moves += 1;
            self.stats.delivered_bytes += self.bytes_of(a, b);
            self.ooo_segs -= b - a;
            self.rcv_nxt = b;
        }
        if self
            .total_bytes
            .is_some_and(|t| self.stats.delivered_bytes >= t)
            && self.stats.completed_ns.is_none()
        {
            self.stats.completed_ns = Some(now.ns());
        }
        if had_ooo {
            if self.ooo.is_empty() {
                // The hole is closed: ICSK_ACK_NOW (RFC 5681 4.2).
                return RxOut::ack(self.make_ack());
            }
            // Out-of-order data still held: the compression path, where the moved
            // rcv_nxt makes this ACK immediate.
            return self.ack_snd_check_ofo(now);
        }
        if pkt.payload >= self.mss {
            self.unacked += 1;
        }
        // The last segment of a finite transfer carries PSH: tcp_measure_rcv_mss sets
        // ICSK_ACK_PUSHED and tcp_cleanup_rbuf ACKs at once once the application has
        // read everything (ours reads at once).
        let pushed = self
            .total_bytes
            .is_some_and(|t| self.rcv_nxt * self.mss as u64 >= t);
        if !self.delayed_ack || self.unacked >= 2 || self.quick > 0 || pushed || self.ack_now {
            return RxOut::ack(self.make_ack());
        }
        // tcp_send_delayed_ack: ato-based deadline, or now if the pending timer is due.
        match self.timing.deadline(now, self.delack.deadline()) {
            Some(at) => RxOut::timer(self.delack.arm(at), RxTimer::DelAck),
            None => RxOut::ack(self.make_ack()),
        }
    }

    /// Memory charged for a segment of `payload` bytes: the configured truesize for a
    /// full one, the allocation of its size for a short one (never more).
    fn truesize_of(rs: &RcvSpace, mss: u32, header: u32, payload: u32) -> u32 {
        if payload >= mss {
            rs.truesize()
        } else {
            tun_truesize(payload + header).min(rs.truesize())
        }
    }

    /// Bytes from `rcv_nxt` to the end of the out-of-order data
    /// (`ooo_last_skb->end_seq - rcv_nxt`), 0 with none held.
    fn ooo_span(&self) -> u64 {
        self.ooo
            .back()
            .map_or(0, |&(_, end)| self.bytes_of(self.rcv_nxt, end))
    }

    /// `tcp_event_data_recv`'s window part for an in-order segment, queued but not yet
    /// read: `tcp_measure_rcv_mss`, then `tcp_grow_window` (segments of 128 bytes or
    /// more), whose growth sets `icsk_ack.quick |= 1`.
    fn event_data_recv(&mut self, pkt: &Packet) {
        let (mss, header, ooo_segs) = (self.mss, self.header, self.ooo_segs);
        if let Some(rs) = self.rcv_space.as_mut() {
            let truesize = Self::truesize_of(rs, mss, header, pkt.payload);
            rs.measure_rcv_mss(pkt.payload, truesize);
            let held = truesize as u64 + ooo_segs * rs.truesize() as u64;
            if pkt.payload >= GROW_MIN_LEN && rs.grow_window(pkt.payload, truesize, held) {
                self.quick |= 1;
            }
        }
    }

    /// The end of `tcp_data_queue_ofo` for a SACK flow: `tcp_grow_window` (the segment
    /// not yet charged), then `tcp_rcvbuf_grow` to provision the out-of-order span.
    fn ofo_window(&mut self, pkt: &Packet) {
        let span = self.ooo_span();
        let (mss, header, ooo_segs) = (self.mss, self.header, self.ooo_segs);
        if let Some(rs) = self.rcv_space.as_mut() {
            let truesize = Self::truesize_of(rs, mss, header, pkt.payload);
            let held = (ooo_segs - 1) * rs.truesize() as u64;
            if rs.grow_window(pkt.payload, truesize, held) {
                self.quick |= 1;
            }
            rs.rcvbuf_grow(rs.space, span);
        }
    }

    /// The application reads everything now in order (`tcp_recvmsg_locked`), one skb
    /// at a time, calling `tcp_rcv_space_adjust` after each: `first_end` is where the
    /// arriving segment (the first skb) ends. When it closed a hole, the data it
    /// released is still queued at that first call (`inq`), and the later calls, at the
    /// same instant, find the measurement either just restarted or not yet due, so only
    /// the first can measure.
    fn app_read(&mut self, now: SimTime, first_end: u64) {
        let span = self.ooo_span();
        let all = self.stats.delivered_bytes;
        if let Some(rs) = self.rcv_space.as_mut() {
            rs.space_adjust(now, first_end, all - first_end, span);
        }
    }

    /// The compressed-ACK timer expired (`tcp_compressed_ack_kick`).
    pub fn on_compressed_ack_timer(&mut self, now: SimTime) -> Option<Packet> {
        self.ts_now = self.ts_at(now.0 as i64);
        if self.comp.compressed_ack == 0 {
            return None;
        }
        // The ACK being sent stands for one of the withheld ones.
        self.comp.compressed_ack -= 1;
        Some(self.make_ack())
    }

    /// The delayed-ACK timer expired (`tcp_delack_timer_handler`): an ACK owed goes
    /// out, and ato is inflated ("Delayed ACK missed").
    pub fn on_delack_timer(&mut self, now: SimTime) -> Option<Packet> {
        self.ts_now = self.ts_at(now.0 as i64);
        if self.unacked == 0 {
            return None;
        }
        self.timing.on_timer_ack();
        Some(self.make_ack())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::Fire;

    fn rx(delayed: bool) -> Receiver {
        Receiver::new(0, 1448, 52, delayed, None)
    }
    /// A receiver past its 16 quick ACKs (segments 0..16 received and acked).
    fn rx_warm() -> Receiver {
        let mut r = rx(true);
        for s in 0..16 {
            assert!(
                r.on_data(SimTime(0), &seg(s)).ack.is_some(),
                "quick ACK {s}"
            );
        }
        r
    }
    fn seg(seq: u64) -> Packet {
        Packet::data(0, seq, 1448, 52, false)
    }

    #[test]
    fn delayed_ack_every_second_full_segment_after_the_quick_acks() {
        let mut r = rx_warm();
        let out = r.on_data(SimTime(0), &seg(16));
        assert!(out.ack.is_none());
        assert_eq!(
            out.timer.map(|x| (x.0, x.1)),
            Some((SimTime(40_000_000), RxTimer::DelAck))
        ); // 40 ms timer
        let a = r.on_data(SimTime(1), &seg(17)).ack;
        assert_eq!(a.unwrap().seq, 18);
        assert!(!r.delack.is_armed());
    }

    #[test]
    fn delayed_ack_timer_acks_a_lone_segment() {
        let mut r = rx_warm();
        r.on_data(SimTime(0), &seg(16));
        assert_eq!(r.on_delack_timer(SimTime(0)).unwrap().seq, 17);
        assert!(r.on_delack_timer(SimTime(0)).is_none());
    }

    #[test]
    fn a_duplicate_re_enters_quick_ack_mode() {
        let mut r = rx_warm();
        r.on_data(SimTime(0), &seg(3)); // duplicate: ACKed at once, 16 quick ACKs armed
                                        // ... of which that ACK used one: 15 more in-order segments are ACKed at once.
        for s in 16..31 {
            assert!(
                r.on_data(SimTime(0), &seg(s)).ack.is_some(),
                "quick ACK for {s}"
            );
        }
        assert!(r.on_data(SimTime(0), &seg(31)).ack.is_none());
    }

    fn ms(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }

    #[test]
    fn data_after_a_gap_longer_than_the_rto_is_acked_at_once() {
        // Warm at 0 (ato 40 ms after back-to-back data); the receiver's RTO 241 ms.
        let mut r = rx_warm();
        r.set_rtt(Dur::from_ms(241), Dur::from_ms(41));
        // 16 at 100 ms: a gap of 100 ms (not below ato, not above the RTO): delayed,
        // the timer at 100 + 40 ms; it sends the ACK.
        assert!(r.on_data(ms(100), &seg(16)).ack.is_none());
        assert_eq!(r.delack.deadline(), Some(ms(140)));
        assert_eq!(r.on_delack_timer(ms(140)).unwrap().seq, 17);
        // 17 at 342 ms: 242 ms after 16 > RTO: quick-ACK mode again (16 ACKs), ACKed
        // at once, and so are the next 15 (18..=32) at the same instant.
        assert_eq!(r.on_data(ms(342), &seg(17)).ack.map(|a| a.seq), Some(18));
        for s in 18..33 {
            assert!(r.on_data(ms(342), &seg(s)).ack.is_some(), "quick ACK {s}");
        }
        assert!(r.on_data(ms(342), &seg(33)).ack.is_none());
        // A gap of exactly the RTO is not "too long": delayed.
        r.on_data(ms(342), &seg(34)); // completes the pair
        assert!(r.on_data(ms(583), &seg(35)).ack.is_none());
    }

    #[test]
    fn the_delayed_ack_timer_runs_on_the_adapted_ato() {
        // Receiver RTO 300 ms, srtt 100 ms; warm at 0 with ato 40 ms.
        let mut r = rx_warm();
        r.set_rtt(Dur::from_ms(300), Dur::from_ms(100));
        // 16 at 100 ms: timer at 140 ms; its expiry ACKs and inflates ato to 80 ms.
        r.on_data(ms(100), &seg(16));
        assert_eq!(r.delack.deadline(), Some(ms(140)));
        r.on_delack_timer(ms(140)).unwrap();
        assert_eq!(r.timing.ato(), Dur::from_ms(80));
        // 17 at 200 ms (gap 100 >= ato 80: kept): delay min(80, srtt 100) = 80 ms.
        r.on_data(ms(200), &seg(17));
        assert_eq!(r.delack.deadline(), Some(ms(280)));
        r.on_delack_timer(ms(280)).unwrap();
        assert_eq!(r.timing.ato(), Dur::from_ms(160));
        // 18 at 300 ms: gap 100 < 160: ato = 80 + 100 = 180; delay min(180, 100) = 100.
        r.on_data(ms(300), &seg(18));
        assert_eq!(r.timing.ato(), Dur::from_ms(180));
        assert_eq!(r.delack.deadline(), Some(ms(400)));
        // Its expiry: ato = min(2 x 180, RTO 300) = 300; a timer with nothing owed
        // leaves ato alone.
        r.on_delack_timer(ms(400)).unwrap();
        assert!(r.on_delack_timer(ms(401)).is_none());
        assert_eq!(r.timing.ato(), Dur::from_ms(300));
        // A duplicate (tcp_enter_quickack_mode) resets ato to TCP_ATO_MIN.
        r.on_data(ms(402), &seg(3));
        assert_eq!(r.timing.ato(), Dur::from_ms(40));
    }

    #[test]
    fn the_last_quick_ack_deflates_ato() {
        // RTO 300 ms, srtt 100 ms. 16 at 100 ms waits for the timer (140 ms), whose
        // expiry doubles ato to 80 ms.
        let mut r = rx_warm();
        r.set_rtt(Dur::from_ms(300), Dur::from_ms(100));
        r.on_data(ms(100), &seg(16));
        r.on_delack_timer(ms(140)).unwrap();
        // 17 at 500 ms: gap 400 > RTO, 16 quick ACKs; the gap leaves ato at 80.
        assert!(r.on_data(ms(500), &seg(17)).ack.is_some());
        assert_eq!(r.timing.ato(), Dur::from_ms(80));
        // 18..=31 back to back halve the excess over 20 ms fourteen times: 40 ms +
        // 40 ms / 2^14 (2441 ns, integer halving). 32 would leave 40 ms + 1220 ns, but
        // its ACK is the last quick one and resets ato to TCP_ATO_MIN
        // (tcp_dec_quickack_mode).
        for s in 18..32 {
            r.on_data(ms(500), &seg(s));
        }
        assert_eq!(r.timing.ato(), Dur(40_002_441));
        assert!(r.on_data(ms(500), &seg(32)).ack.is_some());
        assert_eq!(r.timing.ato(), Dur::from_ms(40));
    }

    #[test]
    fn without_delayed_ack_every_segment_is_acked() {
        let mut r = rx(false);
        assert_eq!(r.on_data(SimTime(0), &seg(0)).ack.unwrap().seq, 1);
    }

    #[test]
    fn out_of_order_is_acked_at_once_with_most_recent_block_first() {
        let mut r = rx(true);
        r.on_data(SimTime(0), &seg(0));
        r.on_data(SimTime(0), &seg(1)); // rcv_nxt 2
        let a = r.on_data(SimTime(0), &seg(3)).ack.unwrap(); // hole at 2
        assert_eq!(a.seq, 2);
        assert_eq!(a.sack_blocks(), &[SackBlock { start: 3, end: 4 }]);
        r.on_data(SimTime(0), &seg(6));
        let a = r.on_data(SimTime(0), &seg(4)).ack.unwrap();
        // Most recent (4, joined with 3) first, then 6.
        assert_eq!(
            a.sack_blocks(),
            &[
                SackBlock { start: 3, end: 5 },
                SackBlock { start: 6, end: 7 }
            ]
        );
        r.on_data(SimTime(0), &seg(9));
        r.on_data(SimTime(0), &seg(11));
        let a = r.on_data(SimTime(0), &seg(13)).ack.unwrap();
        // Four blocks exist; the three most recently touched are reported.
        assert_eq!(
            a.sack_blocks(),
            &[
                SackBlock { start: 13, end: 14 },
                SackBlock { start: 11, end: 12 },
                SackBlock { start: 9, end: 10 }
            ]
        );
    }

    #[test]
    fn filling_the_hole_delivers_the_held_range_and_acks_at_once() {
        let mut r = rx(true);
        r.on_data(SimTime(0), &seg(1));
        r.on_data(SimTime(0), &seg(2));
        let a = r.on_data(SimTime(0), &seg(0)).ack.unwrap();
        assert_eq!(a.seq, 3);
        assert_eq!(a.n_sacks, 0);
        assert_eq!(r.stats.delivered_bytes, 3 * 1448);
    }

    #[test]
    fn duplicate_is_counted_and_acked() {
        let mut r = rx(true);
        r.on_data(SimTime(0), &seg(0));
        let a = r.on_data(SimTime(0), &seg(0)).ack;
        assert_eq!(a.unwrap().seq, 1);
        assert_eq!(
            (
                r.stats.duplicate_packets,
                r.stats.received_bytes,
                r.stats.delivered_bytes
            ),
            (1, 2896, 1448)
        );
    }

    #[test]
    fn a_duplicate_below_rcv_nxt_is_reported_once_by_dsack() {
        // RFC 2883 case 1: segment 0 again after rcv_nxt = 1: ACK 1 with the D-SACK block
        // [0, 1) (below the cumulative ACK); the next ACK has none.
        let mut r = rx(false);
        r.on_data(SimTime(0), &seg(0));
        let a = r.on_data(SimTime(0), &seg(0)).ack.unwrap();
        assert_eq!(
            (a.seq, &a.sack_blocks()[..]),
            (1, &[SackBlock { start: 0, end: 1 }][..])
        );
        let b = r.on_data(SimTime(0), &seg(1)).ack.unwrap();
        assert_eq!((b.seq, b.n_sacks), (2, 0));
    }

    #[test]
    fn a_duplicate_of_out_of_order_data_is_reported_inside_its_block() {
        // RFC 2883 case 3 (D-SACK within the first SACK block): 0 missing, 2 and 3 held;
        // 3 again: the ACK reports [3, 4) first, then the block [2, 4) holding it.
        let mut r = rx(false);
        r.on_data(SimTime(0), &seg(2));
        r.on_data(SimTime(0), &seg(3));
        let a = r.on_data(SimTime(0), &seg(3)).ack.unwrap();
        assert_eq!(a.seq, 0);
        assert_eq!(
            a.sack_blocks(),
            &[
                SackBlock { start: 3, end: 4 },
                SackBlock { start: 2, end: 4 }
            ][..]
        );
        assert_eq!(r.stats.duplicate_packets, 1);
    }

    #[test]
    fn finite_flow_counts_a_short_last_segment() {
        // 3000 bytes = 1448 + 1448 + 104.
        let mut r = Receiver::new(0, 1448, 52, false, Some(3000));
        r.on_data(SimTime(0), &Packet::data(0, 2, 104, 52, false));
        r.on_data(SimTime(0), &seg(1));
        r.on_data(SimTime(0), &seg(0));
        assert_eq!(r.stats.delivered_bytes, 3000);
    }

    /// A warm receiver (rcv_nxt = 16, quick-ACK mode over) with SACK compression on.
    fn rx_comp(rtt: Dur) -> Receiver {
        let mut r = rx_warm();
        r.enable_sack_compression(rtt);
        r
    }
    const US: u64 = 1_000;

    #[test]
    fn sack_compression_sends_three_dupacks_at_once_then_waits_rtt_over_20() {
        // RTT 10 ms: delay = min(1 ms, 10 ms / 20 = 500 us) = 500 us.
        let mut r = rx_comp(Dur::from_ms(10));
        // Segment 16 is lost; 17, 18, 19 arrive 100 us apart: dup_ack_counter 1, 2, 3,
        // each ACKed at once with rcv_nxt = 16.
        for (k, s) in [17, 18, 19].into_iter().enumerate() {
            let out = r.on_data(SimTime(100 * US * k as u64), &seg(s));
            assert_eq!(out.ack.map(|a| a.seq), Some(16), "dupack for {s}");
            assert!(out.timer.is_none());
        }
        // 20 at t = 300 us: withheld, timer at 300 + 500 = 800 us.
        let out = r.on_data(SimTime(300 * US), &seg(20));
        assert!(out.ack.is_none());
        let (at, kind, gen) = out.timer.unwrap();
        assert_eq!((at, kind), (SimTime(800 * US), RxTimer::CompressedAck));
        // 21, 22 at 400, 500 us: withheld, the running timer is kept.
        for s in [21, 22] {
            let out = r.on_data(SimTime(100 * US * (s - 17)), &seg(s));
            assert!(out.ack.is_none() && out.timer.is_none(), "{s} withheld");
        }
        assert_eq!(r.comp.compressed_ack, 3);
        // The timer (800 us) sends one ACK carrying the block [17, 23); the other two
        // withheld ACKs are counted as compressed.
        assert!(matches!(r.comp.timer.on_fire(at, gen), Fire::Expired));
        let a = r.on_compressed_ack_timer(SimTime(0)).unwrap();
        assert_eq!(
            (a.seq, &a.sack_blocks()[..]),
            (16, &[SackBlock { start: 17, end: 23 }][..])
        );
        assert_eq!((r.stats.acks_compressed, r.comp.compressed_ack), (2, 0));
        assert!(r.on_compressed_ack_timer(SimTime(0)).is_none());
        // rcv_nxt has not moved, so the counter stays at 3: 23 at 900 us is withheld at
        // once, with a fresh timer at 900 + 500 = 1400 us.
        let out = r.on_data(SimTime(900 * US), &seg(23));
        assert!(out.ack.is_none());
        assert_eq!(out.timer.map(|t| t.0), Some(SimTime(1_400 * US)));
    }

    #[test]
    fn sack_compression_sends_at_once_when_44_acks_are_withheld() {
        // RTT 40 ms: delay = min(1 ms, 2 ms) = 1 ms.
        let mut r = rx_comp(Dur::from_ms(40));
        // 17, 18, 19: immediate (dup_ack_counter 1..3).
        for s in 17..20 {
            assert!(r.on_data(SimTime(0), &seg(s)).ack.is_some(), "dupack {s}");
        }
        // 20..=63, 44 segments, all at t = 0 (before the 1 ms timer): compressed_ack 1..44.
        let first = r.on_data(SimTime(0), &seg(20));
        assert_eq!(first.timer.map(|t| t.0), Some(SimTime(1_000 * US)));
        for s in 21..64 {
            assert!(r.on_data(SimTime(0), &seg(s)).ack.is_none(), "{s} withheld");
        }
        assert_eq!(r.comp.compressed_ack, 44);
        // 64: compressed_ack >= tcp_comp_sack_nr (44) -> sent now, SACK [17, 65); the 44
        // withheld ACKs are compressed into it and the timer is cancelled.
        let a = r.on_data(SimTime(0), &seg(64)).ack.unwrap();
        assert_eq!(a.sack_blocks(), &[SackBlock { start: 17, end: 65 }]);
        assert_eq!((r.stats.acks_compressed, r.comp.compressed_ack), (44, 0));
        assert!(!r.comp.timer.is_armed());
        // 65: the count starts again (withheld, new 1 ms timer; its first heap entry is
        // the stale one at 1 ms, which reschedules).
        let out = r.on_data(SimTime(10 * US), &seg(65));
        assert!(out.ack.is_none());
        assert_eq!(r.comp.timer.deadline(), Some(SimTime(1_010 * US)));
        // ACKs sent: 16 warm-up + 3 dupacks + 1 at the 45th = 20.
        assert_eq!(r.stats.acks_sent, 20);
    }

    #[test]
    fn a_partial_hole_fill_is_acked_at_once_and_restarts_the_dupack_count() {
        let mut r = rx_comp(Dur::from_ms(40));
        // 16 and 17 lost; 18, 19, 20 immediate, 21 withheld.
        for s in 18..21 {
            assert!(r.on_data(SimTime(0), &seg(s)).ack.is_some());
        }
        assert!(r.on_data(SimTime(0), &seg(21)).ack.is_none());
        // Retransmitted 16 arrives: rcv_nxt 16 -> 17 (one segment since the last ACK, so
        // not the "more than one full segment" rule); out-of-order data still held, rcv_nxt
        // moved -> dup_ack_counter restarts and this ACK is its first: sent now.
        let a = r.on_data(SimTime(0), &seg(16)).ack.unwrap();
        assert_eq!((a.seq, r.stats.acks_compressed), (17, 1));
        // So only two more out-of-order ACKs go at once (counter 2, 3); 24 is withheld.
        assert!(r.on_data(SimTime(0), &seg(22)).ack.is_some());
        assert!(r.on_data(SimTime(0), &seg(23)).ack.is_some());
        assert!(r.on_data(SimTime(0), &seg(24)).ack.is_none());
        // Closing the last hole (17) delivers everything and is ACKed at once.
        let a = r.on_data(SimTime(0), &seg(17)).ack.unwrap();
        assert_eq!((a.seq, a.n_sacks), (25, 0));
    }

    #[test]
    fn a_third_sack_block_flushes_the_compressed_ack_first() {
        let mut r = rx_comp(Dur::from_ms(40));
        // 16 lost: 17, 18, 19 immediate; 20 withheld (block [17, 21)).
        for s in 17..20 {
            assert!(r.on_data(SimTime(0), &seg(s)).ack.is_some());
        }
        assert!(r.on_data(SimTime(0), &seg(20)).ack.is_none());
        // 22 (21 lost): a new block while one is listed (position 1 < 2): no flush, withheld.
        let out = r.on_data(SimTime(0), &seg(22));
        assert!(out.flush.is_none() && out.ack.is_none());
        // 24 (23 lost): a new block while two are listed (position 2 >= 2): the pending
        // compressed ACK goes first, with the list as it was: [22, 23), [17, 21). Then 24
        // itself is withheld (counter still 3) under a new timer.
        let out = r.on_data(SimTime(5 * US), &seg(24));
        let f = out.flush.unwrap();
        assert_eq!(
            f.sack_blocks(),
            &[
                SackBlock { start: 22, end: 23 },
                SackBlock { start: 17, end: 21 }
            ]
        );
        assert!(out.ack.is_none());
        assert_eq!(r.comp.timer.deadline(), Some(SimTime(1_005 * US)));
        assert_eq!(r.comp.compressed_ack, 1);
    }

    #[test]
    fn without_sack_compression_every_out_of_order_segment_is_acked_at_once() {
        let mut r = rx_warm(); // compression is off unless enabled
        for s in 17..80 {
            let out = r.on_data(SimTime(0), &seg(s));
            assert_eq!(out.ack.map(|a| a.seq), Some(16), "ACK for {s}");
            assert!(out.timer.is_none());
        }
        assert_eq!(r.stats.acks_compressed, 0);
    }

    #[test]
    fn quick_ack_mode_bypasses_sack_compression() {
        // A fresh receiver is in quick-ACK mode (16 ACKs): 0 arrives, then 2..16 out of
        // order: 15 more ACKs, all immediate despite compression.
        let mut r = rx(true);
        r.enable_sack_compression(Dur::from_ms(40));
        assert!(r.on_data(SimTime(0), &seg(0)).ack.is_some());
        for s in 2..17 {
            assert!(
                r.on_data(SimTime(0), &seg(s)).ack.is_some(),
                "quick ACK {s}"
            );
        }
        // Quick mode used up (16 ACKs). Quick ACKs do not count as duplicate ACKs for
        // compression (they leave __tcp_ack_snd_check before it): 17, 18, 19 are the three
        // immediate ones, 20 is withheld.
        for s in 17..20 {
            assert!(r.on_data(SimTime(0), &seg(s)).ack.is_some(), "dupack {s}");
        }
        assert!(r.on_data(SimTime(0), &seg(20)).ack.is_none());
    }

    /// Linux's receive-buffer model (`tcp.receive_buffer = "linux"`): window growth ACKs
    /// segments at once. Hand-computed from net/ipv4/tcp_input.c (tcp::rcv_space):
    /// the first segment at 1 ms echoes the SYN-ACK, a 40 ms receiver RTT. rcv_ssthresh
    /// grows 65160 -> 80480 (the room under win(131072 - 2304)) on segments 0-5, whose
    /// `quick |= 1` turns the 16 initial quick ACKs into 17 before each ACK takes one,
    /// so the 16 last until segment 21: 22 immediate ACKs, then 22-25 in pairs. At
    /// 41 ms, 40 ms after the first arrival, segment 26 is read: 27 x 1448 = 39096 bytes
    /// in that RTT over the initial 14480 give rcvwin = 78192 + 2 x (78192 x 24616 /
    /// 14480 = 132926) = 344044, rcvbuf 344044 x 256 / 160 = 550470. The room to
    /// win(550470 - 2304) = 342603 takes 262123 / 2896 = 90.5 growths: segments 27-117
    /// are each ACKed at once, 118 waits, 119 completes the pair.
    #[test]
    fn window_growth_acks_every_segment_while_the_buffer_autotunes() {
        let mut r = rx(true);
        r.enable_rcv_space(2304, Dur::from_ms(40), Dur::ZERO);
        let at = |ms: u64| SimTime(ms * 1_000_000);
        let acked: Vec<bool> = (0..26)
            .map(|s| r.on_data(at(1), &seg(s)).ack.is_some())
            .collect();
        assert!(acked[..22].iter().all(|&a| a));
        assert_eq!(&acked[22..], &[false, true, false, true]);
        assert_eq!(r.rcv_space().unwrap().rcv_ssthresh, 80_480);
        assert!(r.on_data(at(41), &seg(26)).ack.is_none());
        let rs = r.rcv_space().unwrap();
        assert_eq!(
            (rs.rcvbuf, rs.window_clamp, rs.space),
            (550_470, 344_043, 39_096)
        );
        for s in 27..118 {
            assert!(
                r.on_data(at(42), &seg(s)).ack.is_some(),
                "segment {s} grows the window: ACK at once"
            );
        }
        assert_eq!(r.rcv_space().unwrap().rcv_ssthresh, 342_603);
        assert!(r.on_data(at(42), &seg(118)).ack.is_none());
        assert!(r.on_data(at(42), &seg(119)).ack.is_some());
    }

    /// ACKs echo `ts_recent` (RFC 7323 Sec. 4.3, `tcp_replace_ts_recent`): the TSval of
    /// the first segment of a delayed pair, not that of a segment out of order, and that
    /// of the retransmission filling the hole.
    #[test]
    fn acks_echo_the_tsval_of_the_segment_at_rcv_wup() {
        let mut r = rx_warm(); // 0..16 in, each ACKed: rcv_wup = 16
        let at = |ms: u64| SimTime(ms * 1_000_000);
        let data = |seq: u64, tsval: u32| {
            let mut p = seg(seq);
            p.tsval = tsval;
            p
        };
        // 16 (TSval 100) is at rcv_wup: ts_recent = 100; delayed. 17 (101) is above
        // rcv_wup 16: not taken; its ACK (two full segments) echoes 100.
        assert!(r.on_data(at(1), &data(16, 100)).ack.is_none());
        let a = r.on_data(at(1), &data(17, 101)).ack.unwrap();
        assert_eq!((a.seq, a.tsecr), (18, 100));
        // 18 is lost; 19 (103) arrives out of order: ACKed at once, still echoing 100.
        let a = r.on_data(at(2), &data(19, 103)).ack.unwrap();
        assert_eq!((a.seq, a.tsecr), (18, 100));
        // The retransmission of 18 (TSval 110) is at rcv_wup = 18: it fills the hole and
        // its ACK echoes 110, the retransmission's own send time.
        let a = r.on_data(at(3), &data(18, 110)).ack.unwrap();
        assert_eq!((a.seq, a.tsecr), (20, 110));
    }

    /// ACKs carry the receiver's millisecond clock (TSval) for the sender to echo; with
    /// the buffer model the clock runs `ts_phase` ahead of the run's.
    #[test]
    fn acks_carry_the_receivers_timestamp() {
        let mut r = rx(false);
        let a = r.on_data(SimTime(2_500_000), &seg(0)).ack.unwrap();
        assert_eq!(a.tsval, 1_000_002); // 2.5 ms -> 2, plus the clock's offset of 10^6
        let mut r = rx(false);
        r.enable_rcv_space(2304, Dur::from_ms(40), Dur(600_000));
        let a = r.on_data(SimTime(2_500_000), &seg(0)).ack.unwrap();
        assert_eq!(a.tsval, 1_000_003); // 2.5 + 0.6 = 3.1 ms -> 3
    }

    #[test]
    fn acks_advertise_the_window_and_never_move_its_right_edge_left() {
        let mut r = rx(true);
        // No receive-buffer model: no window.
        assert_eq!(r.on_data(SimTime(0), &seg(0)).ack.unwrap().wnd, NO_WINDOW);
        let mut r = rx(true);
        r.enable_rcv_space(2304, Dur::from_ms(40), Dur::ZERO);
        assert_eq!(r.window_end(), 65_160); // the SYN-ACK's 45 segments
                                            // Segment 0: ratio 160 and rcv_ssthresh 65160 (rcv_space tests), then
                                            // tcp_grow_window with the segment charged: room min(81920, 80480) - 65160,
                                            // + 2 x 1448 -> 68056, rounded up to 68608 beyond rcv_nxt = 1448 bytes.
        let a = r.on_data(SimTime(0), &seg(0)).ack.unwrap();
        assert_eq!((a.seq, a.wnd, r.window_end()), (1, 68_608, 1448 + 68_608));
        // Segment 2 out of order: held 1 x 2304; the offer may not shrink the right
        // edge: free = (131072 - 2304) x 160 / 256 = 80480, rcv_ssthresh grows to
        // 70952 (its own tcp_grow_window, charged 0 held) -> 71680 beyond 1448.
        let a = r.on_data(SimTime(1), &seg(2)).ack.unwrap();
        assert_eq!((a.seq, a.wnd), (1, 71_680));
        assert_eq!(r.window_end(), 1448 + 71_680);
    }

    proptest::proptest! {
        /// The out-of-order ranges against a plain set of the segments received, for
        /// any order of arrivals with duplicates: after each one the receiver holds
        /// exactly the set, ACKs its first missing segment, keeps one range per run of
        /// held segments above that, and every SACK block of the ACK is such a run
        /// whole, the first the run of a new out-of-order arrival (RFC 2018, Sec. 4).
        #[test]
        fn out_of_order_ranges_match_a_set_of_the_segments_received(
            arrivals in proptest::collection::vec(0u64..48, 1..160)
        ) {
            let mut r = rx(false); // every segment ACKed at once
            let mut got = std::collections::BTreeSet::new();
            for (k, &s) in arrivals.iter().enumerate() {
                let ack = r.on_data(SimTime(k as u64), &seg(s)).ack.expect("ACKed at once");
                let dup = !got.insert(s);
                let nxt = (0..).find(|q| !got.contains(q)).unwrap();
                proptest::prop_assert_eq!(ack.seq, nxt);
                for q in 0..50 {
                    proptest::prop_assert_eq!(r.holds(q), got.contains(&q), "segment {}", q);
                }
                let runs = got.iter().filter(|&&q| q > nxt && !got.contains(&(q - 1))).count();
                proptest::prop_assert_eq!(r.ooo.len(), runs);
                let blocks = &ack.sack_blocks()[usize::from(dup)..];
                for b in blocks {
                    proptest::prop_assert!(b.start > nxt && !got.contains(&(b.start - 1)));
                    proptest::prop_assert!((b.start..b.end).all(|q| got.contains(&q)));
                    proptest::prop_assert!(!got.contains(&b.end));
                }
                if !dup && s > nxt {
                    proptest::prop_assert!(blocks[0].start <= s && s < blocks[0].end);
                }
            }
        }
    }
}
