//! Loss detection and the CA state machine: `tcp_fastretrans_alert`, RFC 6675 `IsLost`
//! marking, `tcp_enter_recovery`, `tcp_try_to_open`, `tcp_end_cwnd_reduction` and PRR
//! (`tcp_cwnd_reduction`, RFC 6937), after net/ipv4/tcp_input.c.
//!
//! Kernel profiles before 4.18 (`[tcp] kernel` = 4.9 / 4.14 / 4.17,
//! `KernelRelease::rack_only` false): the duplicate-ACK threshold works beside RACK, as
//! in v4.9-v4.17 `tcp_fastretrans_alert`: `tcp_time_to_recover` also starts recovery
//! when `tcp_dupack_heuristics` (FACK's `fackets_out`, the segments from snd_una to the
//! highest SACKed one, or `sacked_out + 1` once reordering was seen, which disabled
//! FACK) exceeds `tp->reordering`, and `tcp_update_scoreboard` marks the head of the
//! queue lost on a duplicate ACK or a SACK with `fackets_out > reordering` (FACK: the
//! first `fackets_out - reordering` segments, at least one; without FACK: holes below
//! the reordering-th highest SACKed segment, or the head on entering recovery), never
//! past `high_seq`. Not modelled from those kernels: early retransmit (RFC 5827, flights
//! under 4 segments with nothing new to send), the thin-stream and "nothing to send"
//! tricks of `tcp_time_to_recover`, `tcp_try_undo_partial`.

use tcplab_cc::helpers::tcp_packets_in_flight;
use tcplab_cc::ops::TCP_INFINITE_SSTHRESH;
use tcplab_cc::{CaEvent, CaState};

use crate::tcp::input::{FLAG_DATA_SACKED, FLAG_ECE, FLAG_ORIG_SACK_ACKED, FLAG_SND_UNA_ADVANCED};
use crate::tcp::scoreboard::{EVER_RETRANS, LOST, SACKED};
use crate::tcp::sender::Sender;
use crate::tcp::SenderIo;
use crate::time::SimTime;

/// `sysctl_tcp_reordering` = 3 (TCP_FASTRETRANS_THRESH): RFC 6675's DupThresh, the
/// initial `tp->reordering` (which grows on observed reordering, [`super::reorder`]).
pub const TCP_FASTRETRANS_THRESH: u32 = 3;

impl Sender {
    /// `tcp_fastretrans_alert`, called for dubious ACKs; `dupack`: the ACK is a
    /// duplicate (`num_dupack` > 0). Returns whether F-RTO asks for new data instead of
    /// retransmissions on this ACK (`REXMIT_NEW`).
    pub(super) fn fastretrans_alert(
        &mut self,
        now: SimTime,
        flag: u32,
        dupack: bool,
        io: &mut SenderIo,
    ) -> bool {
        let una = self.tp.snd_una;
        let ece = flag & FLAG_ECE != 0;
        // Before 4.18 (`tcp_update_scoreboard` beside RACK): whether this ACK marks the
        // head of the queue lost.
        let legacy = !self.kernel.rack_only();
        let mut do_lost = legacy
            && (dupack
                || (flag & FLAG_DATA_SACKED != 0 && self.fackets_out() > self.tp.reordering));
        // A. An ECN echo proves congestion: no cwnd undo for this episode.
        if ece {
            self.tp.prior_ssthresh = 0;
        }
        if self.tp.ca_state == CaState::Open {
            self.ro.retrans_stamp = 0;
        }
        // D. Exit conditions: Recovery ends once everything sent before it is acked.
        if self.tp.ca_state == CaState::Recovery && una >= self.tp.high_seq {
            // tcp_try_undo_recovery (undo if every retransmission was D-SACKed or the
            // ACK echoes an original's timestamp) sets Open, then tcp_end_cwnd_reduction
            // (which leaves an undone cwnd alone).
            self.try_undo_recovery();
            self.end_cwnd_reduction();
        }
        // CWR is held until something above high_seq is acked, so that the CWR flag
        // reached the receiver.
        if self.tp.ca_state == CaState::Cwr && una > self.tp.high_seq {
            self.end_cwnd_reduction();
            self.set_ca_state(CaState::Open);
        }
        // E. Process the state.
        match self.tp.ca_state {
            CaState::Recovery => {
                // Before 4.18: a partial ACK marks losses if fackets_out > reordering.
                if flag & FLAG_SND_UNA_ADVANCED != 0 {
                    do_lost = self.fackets_out() > self.tp.reordering;
                }
                if self.try_undo_dsack() {
                    self.try_to_open();
                }
                self.identify_packet_loss(now, io);
                let mut fast_rexmit = false;
                if self.tp.ca_state != CaState::Recovery {
                    // Undone: reordering then loss starts a new recovery.
                    if self.time_to_recover() {
                        self.enter_recovery(ece);
                        fast_rexmit = true;
                    }
                }
                if legacy && do_lost && self.tp.ca_state == CaState::Recovery {
                    self.update_scoreboard(fast_rexmit);
                }
                return false;
            }
            CaState::Loss => {
                let rexmit_new = self.process_loss(flag, dupack);
                // Stay in Loss unless recovered or undone, or RACK found a
                // retransmission lost again (FLAG_LOST_RETRANS): then, as the kernel's
                // fallthrough, go on to the Open/Disorder processing, which enters
                // Recovery.
                let lost_retrans = self.identify_packet_loss(now, io);
                if !(self.tp.ca_state == CaState::Open || lost_retrans) {
                    return rexmit_new;
                }
            }
            _ => {}
        }
        if self.tp.ca_state <= CaState::Disorder {
            // A late D-SACK can still prove the last recovery spurious.
            self.try_undo_dsack();
        }
        self.identify_packet_loss(now, io);
        if !self.time_to_recover() {
            // tcp_try_to_open: an ECN echo starts a CWR reduction; otherwise Open/Disorder.
            if ece {
                self.enter_cwr();
            }
            if self.tp.ca_state != CaState::Cwr {
                self.try_to_open();
            }
            return false;
        }
        self.enter_recovery(ece);
        if legacy && do_lost {
            self.update_scoreboard(true);
        }
        false
    }

    /// `tcp_process_loss`: an ACK in Loss. Undo when the timeout proves spurious
    /// (`tcp_try_undo_loss`: by the Eifel timestamp test or D-SACKs when snd_una
    /// advances, or F-RTO step 3.b: never-retransmitted data (s)acked); F-RTO step 2.b
    /// (the first ACK that advances snd_una short of `high_seq`: send new data, returns
    /// true) and step 3.a (a duplicate ACK or SACK after that: the loss was real, F-RTO
    /// ends); Open with `tcp_try_undo_recovery` once everything sent before the
    /// timeout is acked.
    fn process_loss(&mut self, flag: u32, dupack: bool) -> bool {
        let recovered = self.tp.snd_una >= self.tp.high_seq;
        if flag & FLAG_SND_UNA_ADVANCED != 0 && self.try_undo_loss(false) {
            return false;
        }
        if self.frto {
            // Step 3.b: a timeout is spurious if not all data were lost.
            if flag & FLAG_ORIG_SACK_ACKED != 0 && self.try_undo_loss(true) {
                return false;
            }
            if self.tp.snd_nxt > self.tp.high_seq {
                if flag & FLAG_DATA_SACKED != 0 || dupack {
                    self.frto = false; // Step 3.a: the loss was real.
                }
            } else if flag & FLAG_SND_UNA_ADVANCED != 0 && !recovered {
                self.tp.high_seq = self.tp.snd_nxt;
                // Step 2.b: new data, if the application and the receive window have
                // some (tcp_write_queue_empty, tcp_wnd_end after snd_nxt); else the
                // conventional recovery.
                let unsent = self.tp.snd_nxt < self.offered_segs;
                let window = self.snd_wnd_end > self.tp.snd_nxt * self.mss as u64;
                if unsent && window {
                    return true;
                }
                self.frto = false;
            }
        }
        if recovered {
            // F-RTO step 2.a and the first part of step 3.a.
            self.try_undo_recovery();
        }
        false
    }

    /// `tcp_enter_cwr`: reduce cwnd once for an ECN echo (RFC 3168 Sec. 6.1.2), without
    /// undo.
    #[inline(never)]
    pub(super) fn enter_cwr(&mut self) {
        self.tp.prior_ssthresh = 0;
        if self.tp.ca_state < CaState::Cwr {
            self.ro.undo_marker = None;
            self.init_cwnd_reduction();
            self.stats.ecn_reductions += 1;
            self.set_ca_state(CaState::Cwr);
        }
    }

    /// `tcp_identify_packet_loss`: RACK, or RFC 6675 marking when RACK is off. Returns
    /// whether RACK marked a retransmission lost (`FLAG_LOST_RETRANS`: retrans_out fell).
    fn identify_packet_loss(&mut self, now: SimTime, io: &mut SenderIo) -> bool {
        if self.sb.is_empty() {
            return false;
        }
        if self.rack_enabled {
            let prior_retrans = self.tp.retrans_out;
            self.rack_mark_lost(now, io);
            let lost_retrans = prior_retrans > self.tp.retrans_out;
            self.ack_lost_retrans |= lost_retrans;
            lost_retrans
        } else {
            // Before 4.18 the duplicate-ACK marking is `update_scoreboard`'s.
            if self.kernel.rack_only() {
                self.mark_lost();
            }
            false
        }
    }

    /// `tcp_fackets_out`: segments from snd_una to the highest SACKed one, inclusive.
    fn fackets_out(&self) -> u32 {
        (self.highest_sack_seq() - self.tp.snd_una) as u32
    }

    /// `tcp_dupack_heuristics` before 4.18: FACK's `fackets_out` until reordering is
    /// seen (`tcp_disable_fack`), then `sacked_out + 1`.
    fn dupack_heuristics(&self) -> u32 {
        if self.ro.reord_seen == 0 {
            self.fackets_out()
        } else {
            self.tp.sacked_out + 1
        }
    }

    /// `tcp_update_scoreboard` before 4.18 (`tcp_mark_head_lost`): with FACK the first
    /// max(fackets_out - reordering, 1) segments; without, the segments below the
    /// reordering-th highest SACKed one, or on entering recovery (`fast_rexmit`) the
    /// head. Never at or past `high_seq`; SACKed or already lost ones are left alone.
    fn update_scoreboard(&mut self, fast_rexmit: bool) {
        let reordering = self.tp.reordering;
        let high = self.tp.high_seq;
        let una = self.tp.snd_una;
        if self.ro.reord_seen == 0 {
            let lost = u64::from(self.fackets_out().saturating_sub(reordering).max(1));
            for seq in una..(una + lost).min(high) {
                self.mark_head_skb_lost(seq);
            }
        } else if self.tp.sacked_out >= reordering {
            let sacked_upto = self.tp.sacked_out - reordering;
            let mut cnt = 0;
            for seq in una..high {
                if self.sb.has(seq, SACKED) {
                    cnt += 1;
                    if cnt > sacked_upto {
                        break;
                    }
                }
                self.mark_head_skb_lost(seq);
            }
        } else if fast_rexmit && una < high {
            self.mark_head_skb_lost(una);
        }
    }

    /// `tcp_skb_mark_lost`: mark a segment neither SACKed nor already lost.
    fn mark_head_skb_lost(&mut self, seq: u64) {
        if !self.sb.has(seq, SACKED | LOST) {
            self.mark_skb_lost(seq);
        }
    }

    /// RFC 6675 `IsLost`: a segment not SACKed is lost once DupThresh segments above it
    /// are SACKed. With one-MSS segments that is every hole below the third-highest
    /// SACKed segment. Marks newly lost segments (`tcp_mark_skb_lost`).
    pub(super) fn mark_lost(&mut self) {
        if self.n_top_sacked < TCP_FASTRETRANS_THRESH as usize {
            return;
        }
        let limit = self.top_sacked[TCP_FASTRETRANS_THRESH as usize - 1];
        let mut seq = self.lost_scan.max(self.tp.snd_una);
        while seq < limit {
            let f = self.sb.flags_mut(seq);
            if *f & (SACKED | LOST) == 0 {
                *f |= LOST;
                self.tp.lost_out += 1;
                self.tp.lost += 1;
                self.notify_skb_loss_event(seq);
                if seq < self.retrans_hint {
                    self.retrans_hint = seq;
                }
            }
            seq += 1;
        }
        self.lost_scan = self.lost_scan.max(limit);
    }

    /// `tcp_time_to_recover`: lost segments, or more SACKed than the reordering degree
    /// (`tcp_dupack_heuristics` = sacked_out + 1 > reordering).
    fn time_to_recover(&self) -> bool {
        if !self.kernel.rack_only() {
            // Before 4.18: the loss is proven, or the duplicate-ACK rule.
            return self.tp.lost_out > 0 || self.dupack_heuristics() > self.tp.reordering;
        }
        self.tp.lost_out > 0
            || (!self.rack_enabled && self.tp.sacked_out + 1 > TCP_FASTRETRANS_THRESH)
    }

    /// `tcp_any_retrans_done`.
    fn any_retrans_done(&self) -> bool {
        self.tp.retrans_out > 0 || self.sb.front_flags().is_some_and(|f| f & EVER_RETRANS != 0)
    }

    /// `tcp_try_to_open` / `tcp_try_keep_open`: Disorder while anything is SACKed, lost
    /// or retransmitted, else Open.
    pub(super) fn try_to_open(&mut self) {
        if !self.any_retrans_done() {
            self.ro.retrans_stamp = 0;
        }
        let state = if self.tp.sacked_out + self.tp.lost_out > 0 || self.any_retrans_done() {
            CaState::Disorder
        } else {
            CaState::Open
        };
        if self.tp.ca_state != state {
            self.set_ca_state(state);
            self.tp.high_seq = self.tp.snd_nxt;
        }
    }

    /// `tcp_enter_recovery`: an ECN echo on the same ACK forbids undo (no prior_ssthresh).
    pub(super) fn enter_recovery(&mut self, ece: bool) {
        self.tp.prior_ssthresh = 0;
        self.init_undo();
        if !self.in_cwnd_reduction() {
            if !ece {
                self.tp.prior_ssthresh = self.current_ssthresh();
            }
            self.init_cwnd_reduction();
        }
        self.stats.recoveries += 1;
        self.set_ca_state(CaState::Recovery);
    }

    /// `tcp_current_ssthresh`.
    pub(super) fn current_ssthresh(&self) -> u32 {
        let tp = &self.tp;
        if self.in_cwnd_reduction() {
            tp.snd_ssthresh
        } else {
            tp.snd_ssthresh.max((tp.snd_cwnd >> 1) + (tp.snd_cwnd >> 2))
        }
    }

    /// `tcp_init_cwnd_reduction`: remember where the reduction began and ask the
    /// algorithm for the new ssthresh.
    pub(super) fn init_cwnd_reduction(&mut self) {
        self.tp.high_seq = self.tp.snd_nxt;
        self.tlp_high_seq = None;
        self.tp.snd_cwnd_cnt = 0;
        self.tp.prior_cwnd = self.tp.snd_cwnd;
        self.tp.prr_delivered = 0;
        self.tp.prr_out = 0;
        self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
        // tcp_ecn_queue_cwr: tell the receiver on the next new segment.
        self.ecn_queue_cwr |= self.tp.ecn_ok;
    }

    /// `tcp_end_cwnd_reduction`: cwnd = ssthresh when Recovery ends (not for
    /// algorithms with `cong_control`, which own cwnd).
    pub(super) fn end_cwnd_reduction(&mut self) {
        if self.cong_control {
            return;
        }
        // "Reset cwnd to ssthresh in CWR or Recovery (unless it's undone)".
        if self.tp.snd_ssthresh < TCP_INFINITE_SSTHRESH
            && (self.tp.ca_state == CaState::Cwr || self.ro.undo_marker.is_some())
        {
            self.tp.snd_cwnd = self.tp.snd_ssthresh;
            self.tp.snd_cwnd_stamp_us = self.tp.now_us;
        }
        self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
    }

    /// `tcp_cwnd_reduction`: Proportional Rate Reduction (RFC 6937). While in flight
    /// exceeds ssthresh, send ssthresh/prior_cwnd segments per segment delivered;
    /// below it, slow-start back up to ssthresh (PRR-SSRB).
    pub(super) fn cwnd_reduction(
        &mut self,
        newly_acked_sacked: u32,
        newly_lost: u32,
        snd_una_advanced: bool,
    ) {
        if newly_acked_sacked == 0 || self.tp.prior_cwnd == 0 {
            return;
        }
        let in_flight = tcp_packets_in_flight(&self.tp) as i64;
        let delta = self.tp.snd_ssthresh as i64 - in_flight;
        self.tp.prr_delivered += newly_acked_sacked;
        let mut sndcnt: i64;
        if delta < 0 {
            // RFC 6937: sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out
            let dividend = self.tp.snd_ssthresh as u64 * self.tp.prr_delivered as u64
                + self.tp.prior_cwnd as u64
                - 1;
            sndcnt = (dividend / self.tp.prior_cwnd as u64) as i64 - self.tp.prr_out as i64;
        } else {
            sndcnt = (self.tp.prr_delivered as i64 - self.tp.prr_out as i64)
                .max(newly_acked_sacked as i64);
            if snd_una_advanced && newly_lost == 0 {
                sndcnt += 1;
            }
            sndcnt = sndcnt.min(delta);
        }
        // Force a fast retransmit upon entering fast recovery.
        sndcnt = sndcnt.max(if self.tp.prr_out > 0 { 0 } else { 1 });
        self.tp.snd_cwnd = (in_flight + sndcnt).max(1) as u32;
    }
}
