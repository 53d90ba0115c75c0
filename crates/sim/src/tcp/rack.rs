//! RACK loss detection (RFC 8985), as Linux net/ipv4/tcp_recovery.c: a segment is lost
//! once a segment sent after it has been delivered and it has not been delivered within
//! the latest RTT plus a reordering window. This is Linux's default
//! (`sysctl_tcp_recovery = TCP_RACK_LOSS_DETECTION`); it also catches lost
//! retransmissions, which RFC 6675 marking leaves to the RTO.
//!
//! - `tcp_rack_advance`: every newly (s)acked segment may advance `rack.mstamp` (send
//!   time of the most recently sent delivered segment) and sets `rack.rtt_us`; a
//!   cumulatively acked segment does not when it was sent again and the ACK echoes a
//!   TSval from before that copy (`tcp_clean_rtx_queue`'s `tcp_skb_spurious_retrans`,
//!   in every tree read: a 4.x one, with `skb_mstamp`, and 6.x). Until 0.15.0
//!   this check was missing: after an RTO over a link outage the first ACK (for the
//!   original) advanced `rack.mstamp` to the retransmission's send time and marked
//!   everything sent before it lost (docs/FIDELITY-kernel-spec.md, k05).
//! - `tcp_rack_detect_loss`: walk segments in send-time order (`tsorted_sent_queue`,
//!   here a FIFO of (seq, send time) with stale entries dropped lazily), mark those whose
//!   time is up, and report the longest remaining wait.
//! - `tcp_rack_reo_wnd`: until reordering is seen (`reord_seen`, [`super::reorder`]:
//!   links with jitter or `reorder` reorder packets) the window is 0 in Recovery/Loss or
//!   once sacked_out >= `tp->reordering`; otherwise min(min_rtt / 4 * reo_wnd_steps,
//!   srtt), the steps widened by D-SACK rounds (`tcp_rack_update_reo_wnd`).
//! - The reordering timer (`tcp_rack_reo_timeout`) fires after the remaining wait
//!   rounded up to jiffies plus `TCP_TIMEOUT_MIN` (2 jiffies: 2 ms at HZ = 1000, 8 ms at
//!   250), at the simulated CONFIG_HZ (`[tcp] hz`).
//!
//! Kernel profiles (`[tcp] kernel`, `KernelRelease::rack_timer`): the 4.9 profile runs
//! v4.9's RACK (net/ipv4/tcp_recovery.c as first extended in v4.4; read from two
//! 4.9-based trees): only once in Recovery or Loss (the duplicate-ACK rules of
//! [`super::recovery`] start recovery), no timer, and a segment is lost once a
//! segment sent more than reo_wnd after it was delivered (`rack.mstamp - sent >
//! reo_wnd`, reo_wnd = 1 ms, or max(min_rtt / 4, 1 ms) once reordering was seen;
//! `rack.mstamp` advances only to a strictly later send time). The 4.14 and 4.17
//! profiles run the v4.10-v4.14 form (read from a pre-4.15 tree): per-segment wait
//! rack.rtt + reo_wnd with the timer, reo_wnd = 1 ms, or max(min_rtt / 4, 1 ms)
//! while reordering was seen or nothing is marked lost, no srtt cap; lost once the
//! wait is below 0; `rack.rtt_us` only taken from a segment that advances
//! `rack.mstamp`. Beside RACK, until 4.18 the duplicate-ACK threshold also marks
//! losses ([`super::recovery`]).
//!
//! Deviations: the kernel shares one timer between RTO and RACK's reordering timeout;
//! we keep two (the RTO keeps running while the reordering timer is pending, and is
//! always the later of the two).

use std::collections::VecDeque;

use tcplab_cc::ops::usecs_to_jiffies;
use tcplab_cc::{CaState, LostSkb};

use crate::tcp::scoreboard::{EVER_RETRANS, LOST, RETRANS, SACKED};
use crate::tcp::sender::Sender;
use crate::tcp::{SenderIo, SenderTimer};
use crate::time::{Dur, SimTime};

/// `TCP_TIMEOUT_MIN` (include/net/tcp.h): 2 jiffies.
pub const TCP_TIMEOUT_MIN_JIFFIES: u64 = 2;

#[derive(Default)]
pub struct Rack {
    /// `rack.mstamp`: send time of the most recently sent segment that was delivered.
    pub mstamp_us: u64,
    /// `rack.end_seq` of that segment (tie-break for equal send times).
    pub end_seq: u64,
    /// `rack.rtt_us`: RTT of the most recently delivered segment.
    pub rtt_us: u64,
    /// `rack.advanced`: something was delivered since the last detection.
    pub advanced: bool,
    /// (seq, send time) in send order; an entry is stale once the segment is acked,
    /// SACKed, or sent again.
    pub(super) tsorted: VecDeque<(u64, u64)>,
    scratch: Vec<(u64, u64)>,
}

/// `tcp_skb_sent_after(t1, t2, seq1, seq2)`.
fn sent_after(t1: u64, t2: u64, seq1: u64, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Sender {
    /// `tcp_rack_advance` for a newly delivered segment `seq` sent at `tx_us`.
    pub(super) fn rack_advance(&mut self, seq: u64, tx_us: u64, flags: u8) {
        if !self.kernel.rack_only() {
            return self.rack_advance_v4(seq, tx_us, flags);
        }
        let rtt_us = self.tp.now_us.saturating_sub(tx_us);
        // A retransmitted segment acked faster than min_rtt was probably the original's
        // ACK: ambiguous, skip.
        if rtt_us < self.tp.min_rtt_us as u64 && flags & (RETRANS | EVER_RETRANS) != 0 {
            return;
        }
        let r = &mut self.rack;
        r.advanced = true;
        r.rtt_us = rtt_us;
        if sent_after(tx_us, r.mstamp_us, seq + 1, r.end_seq) {
            r.mstamp_us = tx_us;
            r.end_seq = seq + 1;
        }
    }

    /// `tcp_rack_advance` of v4.9 (`rack.mstamp` moves to a strictly later send time;
    /// no RTT kept) and of v4.10-v4.17 (to a later one by `tcp_rack_sent_after`, which
    /// alone updates `rack.rtt_us`). A retransmitted segment acked faster than min_rtt
    /// is ambiguous either way. `rack.mstamp` 0 is "none yet", as in the kernel.
    fn rack_advance_v4(&mut self, seq: u64, tx_us: u64, flags: u8) {
        let r = &self.rack;
        let later = if self.kernel.rack_timer() {
            sent_after(tx_us, r.mstamp_us, seq + 1, r.end_seq)
        } else {
            tx_us > r.mstamp_us
        };
        if r.mstamp_us != 0 && !later {
            return;
        }
        let rtt_us = self.tp.now_us.saturating_sub(tx_us);
        if flags & (RETRANS | EVER_RETRANS) != 0 && rtt_us < self.tp.min_rtt_us as u64 {
            return;
        }
        let r = &mut self.rack;
        r.rtt_us = rtt_us;
        r.mstamp_us = tx_us;
        r.end_seq = seq + 1;
        r.advanced = true;
    }

    /// reo_wnd (us) before v4.15: 1 ms, or max(min_rtt / 4, 1 ms) once reordering was
    /// seen (`tp->rack.reord`) or, from v4.10, while nothing is marked lost.
    fn rack_reo_wnd_v4_us(&self) -> u64 {
        let wide = self.ro.reord_seen > 0 || (self.kernel.rack_timer() && self.tp.lost_out == 0);
        if wide && self.tp.min_rtt_us != u32::MAX {
            u64::from(self.tp.min_rtt_us >> 2).max(1000)
        } else {
            1000
        }
    }

    /// v4.9's `tcp_rack_mark_lost` walk: in sequence order from snd_una, a segment not
    /// (s)acked is lost once `rack.mstamp` is more than reo_wnd after its send time; stop
    /// at the first never-retransmitted one sent at or after `rack.mstamp`.
    fn rack_detect_loss_v4_9(&mut self) {
        let reo_wnd = self.rack_reo_wnd_v4_us();
        let mstamp = self.rack.mstamp_us;
        for seq in self.tp.snd_una..self.tp.snd_nxt {
            let flags = self.sb.flags(seq);
            if flags & SACKED != 0 {
                continue;
            }
            let tx = self.sb.get(seq).tx_us;
            if mstamp > tx {
                if mstamp - tx <= reo_wnd {
                    continue;
                }
                // tcp_skb_mark_lost_uncond_verify, then a retransmission in flight is
                // lost again (TCPCB_SACKED_RETRANS cleared).
                self.mark_skb_lost(seq);
                let f = self.sb.flags_mut(seq);
                if *f & RETRANS != 0 {
                    *f &= !RETRANS;
                    self.tp.retrans_out -= 1;
                }
            } else if flags & (RETRANS | EVER_RETRANS) == 0 {
                break;
            }
        }
    }

    /// `tcp_rack_reo_wnd` (us): without reordering seen, 0 in Recovery/Loss or once
    /// sacked_out >= tp->reordering; else min(min_rtt / 4 * reo_wnd_steps, srtt).
    fn rack_reo_wnd_us(&self) -> u64 {
        if self.ro.reord_seen == 0
            && (self.tp.ca_state >= CaState::Recovery || self.tp.sacked_out >= self.tp.reordering)
        {
            return 0;
        }
        ((self.tp.min_rtt_us >> 2) as u64 * self.ro.reo_wnd_steps as u64)
            .min(self.tp.srtt_us as u64)
    }

    fn rack_entry_is_stale(&self, seq: u64, tx_us: u64) -> bool {
        if seq < self.tp.snd_una {
            return true;
        }
        self.sb.has(seq, SACKED) || self.sb.get(seq).tx_us != tx_us
    }

    /// Drop stale entries from the head (called as snd_una advances).
    pub(super) fn rack_trim(&mut self) {
        while let Some(&(seq, tx)) = self.rack.tsorted.front() {
            if !self.rack_entry_is_stale(seq, tx) {
                break;
            }
            self.rack.tsorted.pop_front();
        }
    }

    /// `tcp_rack_detect_loss`: mark segments whose time is up; returns the longest
    /// remaining wait (us), 0 if none.
    pub(super) fn rack_detect_loss(&mut self) -> u64 {
        let v4 = !self.kernel.rack_only();
        let reo_wnd = if v4 {
            self.rack_reo_wnd_v4_us()
        } else {
            self.rack_reo_wnd_us()
        };
        let now_us = self.tp.now_us;
        let mut timeout = 0u64;
        let mut keep = std::mem::take(&mut self.rack.scratch);
        keep.clear();
        while let Some(&(seq, tx)) = self.rack.tsorted.front() {
            if self.rack_entry_is_stale(seq, tx) {
                self.rack.tsorted.pop_front();
                continue;
            }
            let flags = self.sb.flags(seq);
            // Marked lost, not yet retransmitted: skip (kept in place).
            if flags & LOST != 0 && flags & RETRANS == 0 {
                keep.push(self.rack.tsorted.pop_front().unwrap());
                continue;
            }
            if !sent_after(self.rack.mstamp_us, tx, self.rack.end_seq, seq + 1) {
                break;
            }
            // remaining = rack.rtt + reo_wnd - time since it was sent
            let remaining = (self.rack.rtt_us + reo_wnd) as i64 - now_us.saturating_sub(tx) as i64;
            self.rack.tsorted.pop_front();
            // v4.10-v4.17: lost below 0, and the wait recorded + 1 (to avoid 0).
            if remaining < 0 || (remaining == 0 && !v4) {
                self.mark_skb_lost(seq);
            } else {
                timeout = timeout.max(remaining as u64 + u64::from(v4));
                keep.push((seq, tx));
            }
        }
        for e in keep.iter().rev() {
            self.rack.tsorted.push_front(*e);
        }
        self.rack.scratch = keep;
        timeout
    }

    /// `tcp_mark_skb_lost`: a segment not yet marked lost is marked (even one whose
    /// retransmission is in flight without having been marked, as a loss probe's: it
    /// keeps counting as retransmitted); a lost retransmission of a segment already
    /// marked stops counting as retransmitted.
    pub(super) fn mark_skb_lost(&mut self, seq: u64) {
        let f = self.sb.flags(seq);
        if f & LOST != 0 {
            if f & RETRANS != 0 {
                *self.sb.flags_mut(seq) &= !RETRANS;
                self.tp.retrans_out -= 1;
                // tcp_sum_lost counts a lost retransmission again.
                self.tp.lost += 1;
                self.notify_skb_loss_event(seq);
            }
        } else {
            *self.sb.flags_mut(seq) |= LOST;
            self.tp.lost_out += 1;
            self.tp.lost += 1;
            self.notify_skb_loss_event(seq);
        }
        if seq < self.retrans_hint {
            self.retrans_hint = seq;
        }
    }

    /// The BBRv2/v3 kernels' `tcp_sum_lost` hook: `tp.lost` has just counted segment
    /// `seq`; tell the algorithm, with that segment's transmission snapshot
    /// (`skb_marked_lost`). A no-op for every algorithm but BBRv3.
    pub(super) fn notify_skb_loss_event(&mut self, seq: u64) {
        let snap = self.sb.get(seq).snap;
        let skb = LostSkb {
            tx_in_flight: snap.in_flight,
            tx_lost: snap.lost,
            tx_is_app_limited: snap.is_app_limited,
            tx_valid: snap.valid,
            pcount: 1,
        };
        self.cc.skb_marked_lost(&self.tp, &skb);
    }

    /// `tcp_rack_mark_lost`: detect, and arm the reordering timer for what may still
    /// arrive.
    pub(super) fn rack_mark_lost(&mut self, now: SimTime, io: &mut SenderIo) {
        if !self.kernel.rack_timer() {
            // v4.9: only in Recovery or Loss, no reordering timer.
            if self.tp.ca_state < CaState::Recovery || !self.rack.advanced {
                return;
            }
            self.rack.advanced = false;
            return self.rack_detect_loss_v4_9();
        }
        if !self.rack.advanced {
            return;
        }
        self.rack.advanced = false;
        let timeout_us = self.rack_detect_loss();
        if timeout_us > 0 {
            let hz = self.tp.hz;
            let j = usecs_to_jiffies(timeout_us, hz) + TCP_TIMEOUT_MIN_JIFFIES;
            let entry = self.reo_timer.arm(now + Dur::from_jiffies(j, hz));
            io.arm(entry, SenderTimer::Reo);
        }
    }

    /// `tcp_rack_reo_timeout`: the reordering window has passed.
    pub fn on_reo_timer(&mut self, now: SimTime, io: &mut SenderIo) {
        self.tp.now_us = now.us();
        if self.tp.packets_out == 0 {
            return;
        }
        let prior_inflight = self.packets_in_flight();
        let lost = self.tp.lost;
        self.rack_detect_loss();
        if prior_inflight != self.packets_in_flight() {
            if self.tp.ca_state != CaState::Recovery {
                self.enter_recovery(false);
                if !self.cong_control {
                    self.cwnd_reduction(1, (self.tp.lost - lost) as u32, false);
                }
            }
            self.try_send(now, io);
        }
        self.rearm_rto(now, io);
    }
}
