//! The retransmission timeout: `tcp_retransmit_timer` and `tcp_enter_loss`
//! (net/ipv4/tcp_timer.c, tcp_input.c, Linux 6.18), and F-RTO's first step.
//!
//! Model: every un-SACKed segment is marked lost (`tcp_timeout_mark_lost`), ssthresh
//! is reduced once per window, and when it is, the episode becomes undoable
//! (`tcp_init_undo`: `prior_ssthresh`, `prior_cwnd`, `undo_marker`); cwnd =
//! in_flight + 1, state Loss, `high_seq` = snd_nxt, the head is retransmitted and the
//! RTO backed off. F-RTO (RFC 5682 Sec. 3.1, the SACK-enhanced version Linux runs with
//! `tcp_frto` = 2) is armed for the episode (`tp->frto`) when `[tcp] frto` is on and
//! the timeout starts a new recovery (state below Recovery) or repeats on the same
//! snd_una (`icsk_retransmits` > 0); its later steps and the undo are
//! `Sender::process_loss` ([`super::recovery`]) and `try_undo_loss` ([`super::reorder`]).
//!
//! Deviations: no path-MTU probing, so F-RTO is never disabled for it; the
//! reordering reset of a timeout in Disorder (`tp->reordering` back to
//! `sysctl_tcp_reordering` when sacked_out >= it) is not modelled.

use tcplab_cc::{CaEvent, CaState};

use crate::tcp::scoreboard::{LOST, RETRANS, SACKED};
use crate::tcp::sender::{Sender, XmitTimer};
use crate::tcp::{SenderIo, SenderTimer};
use crate::time::SimTime;

impl Sender {
    /// The RTO timer expired.
    pub fn on_rto(&mut self, now: SimTime, io: &mut SenderIo) {
        if self.xmit_pending == XmitTimer::LossProbe {
            // The shared slot held the probe timeout (tcp_write_timer_handler).
            self.send_loss_probe(now, io);
            return;
        }
        self.tp.now_us = now.us();
        if self.tp.packets_out == 0 {
            return;
        }
        self.stats.rto_count += 1;
        self.enter_loss();
        // Back off first: icsk_backoff++, icsk_rto doubled (RFC 6298 (5.5)-(5.6)), so the
        // timer re-armed by the retransmission below uses the backed-off value.
        self.rtt.on_timeout();
        self.rto_retransmits += 1;
        // Retransmit the head at once (tcp_retransmit_skb bypasses cwnd and pacing).
        let head = self.tp.snd_una;
        let f = self.sb.flags(head);
        if f & LOST != 0 && f & (RETRANS | SACKED) == 0 {
            self.transmit(now, head, io);
        }
        let entry = self.rto_timer.arm(now + self.rtt.rto());
        io.arm(entry, SenderTimer::Rto);
        self.try_send(now, io);
    }

    /// `tcp_enter_loss`.
    fn enter_loss(&mut self) {
        // tcp_timeout_mark_lost: every un-SACKed segment is marked lost through
        // tcp_mark_skb_lost (a retransmission in flight is forgotten and counted in
        // tp->lost again), except that with RACK a segment other than the head sent less
        // than rack.rtt ago is left alone (`tcp_rack_skb_timeout(tp, skb, 0) > 0`).
        let now_us = self.tp.now_us;
        let head = self.tp.snd_una;
        let mut seq = head;
        while seq < self.tp.snd_nxt {
            let tx_us = self.sb.get(seq).tx_us;
            let recent = self.rack_enabled
                && seq != head
                && self.rack.rtt_us as i64 - now_us.saturating_sub(tx_us) as i64 > 0;
            if !self.sb.has(seq, SACKED) && !recent {
                self.mark_skb_lost(seq);
            }
            seq += 1;
        }
        self.retrans_hint = self.tp.snd_una;
        self.lost_scan = self.tp.snd_nxt;
        // Reduce ssthresh unless already reduced for this window; a reduction starts an
        // undoable episode (tcp_init_undo). Otherwise the episode in progress (a
        // Recovery, or the previous timeout) keeps its undo state.
        let state = self.tp.ca_state;
        let new_recovery = state < CaState::Recovery;
        if state <= CaState::Disorder
            || self.tp.high_seq <= self.tp.snd_una
            || (state == CaState::Loss && self.rto_retransmits == 0)
        {
            self.tp.prior_ssthresh = self.current_ssthresh();
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
            self.cc.cwnd_event(&mut self.tp, CaEvent::Loss);
            self.init_undo();
        }
        self.tp.snd_cwnd = self.packets_in_flight() + 1;
        self.tp.snd_cwnd_cnt = 0;
        self.tp.snd_cwnd_stamp_us = self.tp.now_us;
        self.set_ca_state(CaState::Loss);
        self.tp.high_seq = self.tp.snd_nxt;
        // tcp_ecn_queue_cwr
        self.ecn_queue_cwr |= self.tp.ecn_ok;
        // F-RTO step 1 (RFC 5682 Sec. 3.1; Sec. 3.2 for repeated timeouts on the same
        // snd_una): rto_retransmits is still the count before this timeout.
        self.frto = self.frto_enabled && (new_recovery || self.rto_retransmits > 0);
    }
}
