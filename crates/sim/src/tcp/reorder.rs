//! Reordering and spurious-recovery undo on the sender, after Linux 6.18
//! net/ipv4/tcp_input.c and tcp_recovery.c:
//!
//! - `tcp_check_dsack` / `tcp_dsack_seen`: an ACK whose first SACK block lies below the
//!   cumulative ACK, or inside its second block, reports a duplicate (D-SACK, RFC 2883).
//!   It counts in `dsack_dups` (ignored once they exceed the retransmissions sent: a
//!   duplicate the network made), arms RACK's `dsack_seen` once reordering has been seen
//!   (not for a loss probe's D-SACK, `FLAG_DSACK_TLP`), and takes one off `undo_retrans`
//!   when the duplicate is a retransmission of this recovery episode.
//! - `tcp_check_sack_reordering`: a never-retransmitted segment newly SACKed below the
//!   highest SACKed sequence (`tcp_sacktag_one`), or cumulatively acked below it
//!   (`tcp_clean_rtx_queue`), was reordered, not lost: `reord_seen` counts the event
//!   and `reordering` (`tp->reordering`, starting at `sysctl_tcp_reordering` = 3) grows
//!   to the displacement in segments, capped at `sysctl_tcp_max_reordering` = 300.
//! - `tcp_rack_update_reo_wnd`: a D-SACK round (at most one per round trip) widens RACK's
//!   reordering window by one step of min_rtt / 4 (`reo_wnd_steps`, at most 255), kept
//!   for 16 recoveries (`TCP_RACK_RECOVERY_THRESH`, `reo_wnd_persist`), then back to 1.
//! - Undo (`tcp_init_undo`, `tcp_may_undo`, `tcp_try_undo_dsack`,
//!   `tcp_try_undo_recovery`, `tcp_undo_cwnd_reduction`): a fast recovery is undone when
//!   every retransmission of the episode was D-SACKed (`undo_retrans` back to 0), or, at
//!   its end, when the ACK echoes a timestamp older than the first retransmission
//!   (`tcp_packet_delayed`, Eifel, RFC 3522): cwnd = the algorithm's `undo_cwnd`,
//!   ssthresh = `prior_ssthresh` if larger.
//!
//! - `tcp_try_undo_loss` (since 0.5.1): a timeout is undone in Loss by the same test
//!   when snd_una advances, or by F-RTO's verdict (step 3.b, `super::recovery`'s
//!   `process_loss`); `tcp_undo_cwnd_reduction(sk, true)` also clears every lost mark.
//!   `undos` counts every undo (TCPDSACKUNDO + TCPFULLUNDO + TCPLOSSUNDO), and
//!   `spurious_rtos` the F-RTO ones (TCPSPURIOUSRTOS).
//!
//! Deviations: no partial-ACK undo (`tcp_try_undo_partial`). `tp->reordering` is
//! not used by the RFC 6675 marking of `tcp.rack = false` (DupThresh stays 3 there).
//! The D-SACK of a loss probe (`tlp_high_seq == end_seq`, `FLAG_DSACK_TLP`) tells
//! [`super::tlp`] the probe was spurious, and does not widen RACK's window.

use tcplab_cc::CaState;

use crate::net::SackBlock;
use crate::tcp::input::FLAG_DSACK_TLP;
use crate::tcp::scoreboard::{EVER_RETRANS, LOST, RETRANS, SACKED};
use crate::tcp::sender::Sender;

/// `sysctl_tcp_reordering` (TCP_FASTRETRANS_THRESH): the initial `tp->reordering`.
pub use tcplab_cc::ops::TCP_REORDERING;
/// `sysctl_tcp_max_reordering` (net/ipv4/tcp_ipv4.c): the cap on `tp->reordering`.
pub const TCP_MAX_REORDERING: u32 = 300;
/// `TCP_RACK_RECOVERY_THRESH` (include/net/tcp.h): recoveries a widened window lasts.
pub const TCP_RACK_RECOVERY_THRESH: u8 = 16;

/// The sender's reordering and undo state.
pub struct ReorderState {
    /// `tp->reord_seen`: reordering events observed.
    pub reord_seen: u64,
    /// `tp->undo_marker`: snd_una when the current episode began (None: no undo).
    pub undo_marker: Option<u64>,
    /// `tp->undo_retrans`: retransmissions of the episode not yet D-SACKed (-1: none sent
    /// yet, so that 0 means "all proven spurious").
    pub undo_retrans: i64,
    /// `tp->retrans_stamp`: TSval of the episode's first retransmission (0: none).
    pub retrans_stamp: u32,
    /// `tp->dsack_dups`: duplicate segments the receiver reported.
    pub dsack_dups: u64,
    /// `tp->rack.reo_wnd_steps`, `reo_wnd_persist`, `dsack_seen`, `last_delivered`.
    pub reo_wnd_steps: u32,
    pub reo_wnd_persist: u8,
    pub dsack_seen: bool,
    pub last_delivered: u64,
    /// The current ACK's TSecr (`rx_opt.rcv_tsecr`).
    pub rcv_tsecr: u32,
    /// Recoveries undone (LINUX_MIB_TCPDSACKUNDO + TCPFULLUNDO).
    pub undos: u64,
}

impl Default for ReorderState {
    fn default() -> Self {
        ReorderState {
            reord_seen: 0,
            undo_marker: None,
            undo_retrans: 0,
            retrans_stamp: 0,
            dsack_dups: 0,
            reo_wnd_steps: 1,
            reo_wnd_persist: 0,
            dsack_seen: false,
            last_delivered: 0,
            rcv_tsecr: 0,
            undos: 0,
        }
    }
}

impl Sender {
    /// (recoveries undone, `tp->reordering`, `tp->reord_seen`), for the run's counters.
    pub fn reorder_counts(&self) -> (u64, u32, u64) {
        (self.ro.undos, self.tp.reordering, self.ro.reord_seen)
    }

    /// `tcp_highest_sack_seq`: the end of the highest SACKed segment, snd_una with none.
    pub(super) fn highest_sack_seq(&self) -> u64 {
        if self.tp.sacked_out == 0 || self.n_top_sacked == 0 {
            return self.tp.snd_una;
        }
        self.top_sacked[0] + 1
    }

    /// `tcp_check_dsack` + `tcp_dsack_seen`: whether the first block is a D-SACK (then
    /// the caller leaves it out of the SACK walk). `ack`: this ACK; `prior_snd_una`.
    pub(super) fn check_dsack(
        &mut self,
        blocks: &[SackBlock],
        ack: u64,
        prior_una: u64,
        flag: &mut u32,
    ) -> bool {
        let b0 = blocks[0];
        let dup = if b0.start < ack {
            true
        } else if blocks.len() > 1 {
            let b1 = blocks[1];
            !(b0.end > b1.end || b0.start < b1.start)
        } else {
            false
        };
        if !dup || b0.start >= b0.end {
            return false;
        }
        let dup_segs = b0.end - b0.start;
        let tlp = dup_segs == 1 && self.tlp_high_seq == Some(b0.end);
        if tlp {
            *flag |= FLAG_DSACK_TLP;
        }
        self.ro.dsack_dups += dup_segs;
        if self.ro.dsack_dups > self.stats.retransmitted_packets {
            // A duplicate the sender did not make: dubious, skipped.
            return false;
        }
        self.stats.dsack_segments += dup_segs;
        if self.ro.reord_seen > 0 && !tlp {
            self.ro.dsack_seen = true;
        }
        // "D-SACK for already forgotten data": dumb counting.
        if let Some(m) = self.ro.undo_marker {
            if self.ro.undo_retrans > 0 && b0.end <= prior_una && b0.end > m {
                self.ro.undo_retrans = (self.ro.undo_retrans - dup_segs as i64).max(0);
            }
        }
        true
    }

    /// `tcp_sacktag_one` with `dup_sack` for the D-SACKed segments still queued: a
    /// retransmitted one counts off `undo_retrans`, and one already SACKed is evidence
    /// of reordering at its sequence (lowers `reord`).
    pub(super) fn dsack_tag(&mut self, b0: SackBlock, reord: &mut u64) {
        let lo = b0.start.max(self.tp.snd_una);
        let hi = b0.end.min(self.tp.snd_nxt);
        for seq in lo..hi {
            let f = self.sb.flags(seq);
            if f & (RETRANS | EVER_RETRANS) == 0 {
                continue;
            }
            if let Some(m) = self.ro.undo_marker {
                if self.ro.undo_retrans > 0 && seq + 1 > m {
                    self.ro.undo_retrans -= 1;
                }
            }
            if f & SACKED != 0 && seq < *reord {
                *reord = seq;
            }
            if f & SACKED != 0 && f & RETRANS != 0 {
                *self.sb.flags_mut(seq) &= !RETRANS;
                self.tp.retrans_out -= 1;
            }
        }
    }

    /// `tcp_check_sack_reordering(sk, low_seq, ts)`.
    pub(super) fn check_sack_reordering(&mut self, low_seq: u64) {
        let fack = self.highest_sack_seq();
        if low_seq >= fack {
            return;
        }
        let metric = fack - low_seq;
        if metric > self.tp.reordering as u64 {
            self.tp.reordering = metric.min(TCP_MAX_REORDERING as u64) as u32;
        }
        self.ro.reord_seen += 1;
    }

    /// `tcp_rack_update_reo_wnd(sk, rs)`, with the rate sample's `prior_delivered`.
    pub(super) fn rack_update_reo_wnd(&mut self, prior_delivered: u64) {
        if prior_delivered == 0 {
            return;
        }
        let ro = &mut self.ro;
        // Disregard a D-SACK if a round trip has not passed since the last widening.
        if prior_delivered < ro.last_delivered {
            ro.dsack_seen = false;
        }
        if ro.dsack_seen {
            ro.reo_wnd_steps = (ro.reo_wnd_steps + 1).min(0xFF);
            ro.dsack_seen = false;
            ro.last_delivered = self.tp.delivered;
            ro.reo_wnd_persist = TCP_RACK_RECOVERY_THRESH;
        } else if ro.reo_wnd_persist == 0 {
            ro.reo_wnd_steps = 1;
        }
    }

    /// `tcp_init_undo`: a recovery episode starts; retransmissions in flight may still be
    /// D-SACKed.
    pub(super) fn init_undo(&mut self) {
        self.ro.undo_marker = Some(self.tp.snd_una);
        let mut n = self.tp.retrans_out as i64;
        if self.tlp_high_seq.is_some() && self.tlp_retrans {
            n += 1;
        }
        self.ro.undo_retrans = if n == 0 { -1 } else { n };
    }

    /// A retransmission is sent (`tcp_retransmit_skb`'s undo bookkeeping): TSval `ts`.
    pub(super) fn note_retransmit(&mut self, ts: u32) {
        if self.ro.retrans_stamp == 0 {
            self.ro.retrans_stamp = ts;
        }
        if self.ro.undo_retrans < 0 {
            self.ro.undo_retrans = 0;
        }
        self.ro.undo_retrans += 1;
    }

    /// `tcp_packet_delayed`: the ACK echoes a timestamp from before the first
    /// retransmission, so an original transmission was acknowledged (Eifel).
    fn packet_delayed(&self) -> bool {
        self.ro.retrans_stamp != 0 && self.tsopt_ecr_before(self.ro.retrans_stamp)
    }

    /// `tcp_tsopt_ecr_before`: the current ACK echoes a TSval from before `when`.
    fn tsopt_ecr_before(&self, when: u32) -> bool {
        let e = self.ro.rcv_tsecr;
        e != 0 && (e.wrapping_sub(when) as i32) < 0
    }

    /// `tcp_skb_spurious_retrans`: a segment with sacked bits `flags`, last sent with
    /// TSval `tsval`, was sent again and the current ACK echoes a TSval from before that
    /// copy left, so the ACK is for an earlier copy.
    pub(super) fn skb_spurious_retrans(&self, flags: u8, tsval: u32) -> bool {
        flags & (RETRANS | EVER_RETRANS) != 0 && self.tsopt_ecr_before(tsval)
    }

    /// `tcp_may_undo`.
    fn may_undo(&self) -> bool {
        self.ro.undo_marker.is_some() && (self.ro.undo_retrans == 0 || self.packet_delayed())
    }

    /// `tcp_undo_cwnd_reduction(sk, unmark_loss)`: with `unmark_loss` (an RTO undone)
    /// no segment stays marked lost, so nothing more is retransmitted.
    fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            let mut seq = self.tp.snd_una;
            while seq < self.tp.snd_nxt {
                *self.sb.flags_mut(seq) &= !LOST;
                seq += 1;
            }
            self.tp.lost_out = 0;
            // tcp_clear_all_retrans_hints.
            self.retrans_hint = self.tp.snd_una;
            self.lost_scan = self.tp.snd_una;
        }
        if self.tp.prior_ssthresh != 0 {
            self.tp.snd_cwnd = self.cc.undo_cwnd(&self.tp);
            if self.tp.prior_ssthresh > self.tp.snd_ssthresh {
                self.tp.snd_ssthresh = self.tp.prior_ssthresh;
                self.ecn_queue_cwr = false; // tcp_ecn_withdraw_cwr
            }
        }
        self.tp.snd_cwnd_stamp_us = self.tp.now_us;
        self.ro.undo_marker = None;
        self.rack.advanced = true; // force RACK to re-examine losses
        self.ro.undos += 1;
    }

    /// `tcp_try_undo_dsack`: every retransmission of the episode was D-SACKed.
    pub(super) fn try_undo_dsack(&mut self) -> bool {
        if self.ro.undo_marker.is_some() && self.ro.undo_retrans == 0 {
            self.ro.reo_wnd_persist = (self.ro.reo_wnd_persist + 1).min(TCP_RACK_RECOVERY_THRESH);
            self.undo_cwnd_reduction(false);
            return true;
        }
        false
    }

    /// `tcp_try_undo_recovery` for a SACK connection at the end of Recovery: undo if
    /// allowed, else spend one recovery of a widened reordering window; then Open.
    pub(super) fn try_undo_recovery(&mut self) {
        if self.may_undo() {
            self.undo_cwnd_reduction(false);
        } else if self.ro.reo_wnd_persist > 0 {
            self.ro.reo_wnd_persist -= 1;
        }
        self.set_ca_state(CaState::Open);
    }

    /// `tcp_try_undo_loss(sk, frto_undo)`: undo a timeout, F-RTO's verdict (step 3.b)
    /// or [`Self::may_undo`]'s (every retransmission D-SACKed, or the ACK echoes a
    /// timestamp from before the first retransmission); then Open (a SACK connection).
    pub(super) fn try_undo_loss(&mut self, frto_undo: bool) -> bool {
        if !(frto_undo || self.may_undo()) {
            return false;
        }
        self.undo_cwnd_reduction(true);
        if frto_undo {
            self.stats.spurious_rtos += 1; // LINUX_MIB_TCPSPURIOUSRTOS
        }
        self.rto_retransmits = 0;
        self.set_ca_state(CaState::Open);
        true
    }
}
