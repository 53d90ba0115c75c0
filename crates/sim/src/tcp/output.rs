//! Sending: `tcp_write_xmit` and `tcp_xmit_retransmit_queue` merged into one loop that
//! first retransmits segments marked lost (unless F-RTO asks for new data only), then
//! sends new data, while
//! packets_in_flight < cwnd and the pacing clock allows (`tcp_pacing_check`); then
//! `tcp_cwnd_validate`.

use tcplab_cc::helpers::{tcp_is_cwnd_limited, tcp_packets_in_flight};
use tcplab_cc::CaEvent;

use crate::net::{Ecn, Packet};
use crate::tcp::pacing::advance_wstamp;
use crate::tcp::rate::tcp_rate_check_app_limited;
use crate::tcp::scoreboard::{Seg, EVER_RETRANS, LOST, RETRANS, SACKED};
use crate::tcp::sender::{Sender, XmitTimer};
use crate::tcp::{SenderIo, SenderTimer};
use crate::time::SimTime;

impl Sender {
    /// Send whatever cwnd, pacing and the application allow.
    pub fn try_send(&mut self, now: SimTime, io: &mut SenderIo) {
        self.send_loop(now, false, io);
    }

    /// New data only, no retransmissions (`__tcp_push_pending_frames` for F-RTO's
    /// REXMIT_NEW in `tcp_xmit_recovery`).
    pub(super) fn try_send_new(&mut self, now: SimTime, io: &mut SenderIo) {
        self.send_loop(now, true, io);
    }

    fn send_loop(&mut self, now: SimTime, new_only: bool, io: &mut SenderIo) {
        if !self.started {
            return;
        }
        self.tp.now_us = now.us();
        let mut sent = 0u32;
        let mut sent_new = 0u32;
        let mut cwnd_limited = false;
        let mut rwnd_limited = false;
        loop {
            if self.tp.pacing_needed && self.wstamp_ns > now.ns() {
                let entry = self.pacing_timer.arm(SimTime(self.wstamp_ns));
                io.arm(entry, SenderTimer::Pacing);
                break;
            }
            if tcp_packets_in_flight(&self.tp) >= self.tp.snd_cwnd {
                cwnd_limited = true;
                break;
            }
            if !new_only && self.tp.lost_out > self.tp.retrans_out {
                if let Some(seq) = self.next_lost() {
                    self.transmit(now, seq, io);
                    sent += 1;
                    continue;
                }
            }
            if self.tp.snd_nxt < self.offered_segs {
                if !self.in_peer_window(self.tp.snd_nxt) {
                    // Window-limited: data is waiting, so not application-limited.
                    rwnd_limited = true;
                    break;
                }
                self.transmit(now, self.tp.snd_nxt, io);
                sent += 1;
                sent_new += 1;
                continue;
            }
            tcp_rate_check_app_limited(&mut self.tp, false);
            break;
        }
        // tcp_write_xmit: a window that is full counts as cwnd-limited even when the loop
        // stopped for another reason (the pacing clock).
        cwnd_limited |= tcp_packets_in_flight(&self.tp) >= self.tp.snd_cwnd;
        self.rwnd_chrono(now, rwnd_limited);
        if sent > 0 || cwnd_limited {
            self.cwnd_validate(cwnd_limited);
        }
        // tcp_write_xmit: one loss probe per tail loss episode, after new data.
        if sent_new > 0 {
            self.schedule_loss_probe(now, false, io);
        }
    }

    /// The lowest segment marked lost and not yet retransmitted.
    fn next_lost(&mut self) -> Option<u64> {
        let mut seq = self.retrans_hint.max(self.tp.snd_una);
        while seq < self.tp.snd_nxt {
            let f = self.sb.flags(seq);
            if f & LOST != 0 && f & (RETRANS | SACKED) == 0 {
                self.retrans_hint = seq;
                return Some(seq);
            }
            seq += 1;
        }
        self.retrans_hint = seq;
        None
    }

    /// Put one segment (new or retransmitted) on the wire.
    pub(super) fn transmit(&mut self, now: SimTime, seq: u64, io: &mut SenderIo) {
        let now_us = now.us();
        let payload = self.payload_of(seq);
        // tcp_event_data_sent: first transmission with nothing in flight.
        if tcp_packets_in_flight(&self.tp) == 0 {
            self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
        }
        self.tp.lsndtime_us = now_us;
        let snap = self.rate.skb_sent(&mut self.tp, now_us);
        let tsval = self.ts_at(now);
        let is_new = seq == self.tp.snd_nxt;
        if is_new {
            let prior_packets = self.tp.packets_out;
            self.sb.push(Seg {
                tx_us: now_us,
                tsval,
                snap,
            });
            self.tp.packets_out += 1;
            self.tp.snd_nxt += 1;
            if prior_packets == 0 || self.xmit_pending == XmitTimer::LossProbe {
                // tcp_event_new_data_sent: start the RTO when the pipe was empty, or put
                // it back in place of a pending probe (re-armed after the send).
                self.rearm_rto(now, io);
            }
        } else {
            debug_assert!(!self.sb.has(seq, RETRANS | SACKED));
            *self.sb.get_mut(seq) = Seg {
                tx_us: now_us,
                tsval,
                snap,
            };
            *self.sb.flags_mut(seq) |= RETRANS | EVER_RETRANS;
            self.tp.retrans_out += 1;
            self.stats.retransmitted_packets += 1;
            self.note_retransmit(tsval);
            if seq == self.tp.snd_una {
                // tcp_xmit_retransmit_queue re-arms the RTO after resending the head.
                self.rearm_rto(now, io);
            }
        }
        if self.in_cwnd_reduction() {
            self.tp.prr_out += 1;
        }
        self.data_segs_out += 1;
        self.stats.sent_packets += 1;
        self.stats.sent_bytes += payload as u64;
        advance_wstamp(
            &mut self.wstamp_ns,
            now.ns(),
            payload,
            &self.tp,
            self.data_segs_out,
        );
        self.tp.tcp_wstamp_ns = self.wstamp_ns; // visible to the algorithm (BBR's EDT term)
        if self.rack_enabled {
            self.rack.tsorted.push_back((seq, now_us));
        }
        let mut pkt = Packet::data(self.flow, seq, payload, self.header, !is_new);
        // tcp_options_write: TSval from this host's clock at the send (the kernel stamps
        // the skb's departure time, which is now for a segment the pacing check let
        // through), TSecr = ts_recent.
        pkt.tsval = tsval;
        pkt.tsecr = self.ts_recent;
        if self.tp.ecn_ok {
            // tcp_ecn_send: new data is ECT(0) and carries a queued CWR; retransmissions
            // are Not-ECT unless the algorithm needs ECN (RFC 3168 Sec. 6.1.5).
            if is_new {
                pkt.set_ecn(Ecn::Ect0);
                pkt.set_cwr(std::mem::take(&mut self.ecn_queue_cwr));
            } else if self.ca_needs_ecn {
                pkt.set_ecn(Ecn::Ect0);
            }
        }
        io.out.push(pkt);
    }

    /// `tcp_cwnd_validate` (its first half: the idle decay is not modelled).
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        let tp = &mut self.tp;
        if tp.snd_una >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!tp.is_cwnd_limited && tp.packets_out > tp.max_packets_out)
        {
            tp.is_cwnd_limited = is_cwnd_limited;
            tp.max_packets_out = tp.packets_out;
            self.cwnd_usage_seq = tp.snd_nxt;
        }
        if tcp_is_cwnd_limited(tp) {
            tp.snd_cwnd_stamp_us = tp.now_us;
        }
    }
}
