//! ACK processing, following `tcp_ack()` (net/ipv4/tcp_input.c): tag SACKed segments
//! (`tcp_sacktag_write_queue`), remove cumulatively acked ones and take the RTT sample
//! (`tcp_clean_rtx_queue`, `tcp_ack_update_rtt`), call `pkts_acked` and `in_ack_event`,
//! run the state machine (`tcp_fastretrans_alert`) when the ACK is dubious, build the
//! rate sample (`tcp_rate_gen`), and let the algorithm or PRR set cwnd
//! (`tcp_cong_control`); then send.

use tcplab_cc::ops::ack_flags::{CA_ACK_ECE, CA_ACK_SLOWPATH, CA_ACK_WIN_UPDATE};
use tcplab_cc::{AckSample, CaState};

use crate::net::{Packet, SackBlock};
use crate::tcp::pacing::tcp_update_pacing_rate;
use crate::tcp::rate::RateAcc;
use crate::tcp::rtt::tcp_rtt_tsopt_us;
use crate::tcp::scoreboard::{EVER_RETRANS, LOST, RETRANS, SACKED};
use crate::tcp::sender::Sender;
use crate::tcp::SenderIo;
use crate::time::{Dur, SimTime};

/// `FLAG_DATA_ACKED`: snd_una advanced over new data.
pub(super) const FLAG_DATA_ACKED: u32 = 1 << 0;
/// `FLAG_DATA_SACKED`: new SACKed data.
pub(super) const FLAG_DATA_SACKED: u32 = 1 << 1;
/// `FLAG_RETRANS_DATA_ACKED`: some acked segment was retransmitted (Karn).
pub(super) const FLAG_RETRANS_DATA_ACKED: u32 = 1 << 2;
/// `FLAG_ECE`: the ACK echoed congestion (ECE) on an ECN connection.
pub(super) const FLAG_ECE: u32 = 1 << 3;
/// `FLAG_DSACK_TLP`: the D-SACK is for the tail loss probe's retransmission.
pub(super) const FLAG_DSACK_TLP: u32 = 1 << 4;
/// `FLAG_ORIG_SACK_ACKED`: a never-retransmitted segment sent before `high_seq` was
/// newly (s)acked (F-RTO's evidence that a timeout was spurious).
pub(super) const FLAG_ORIG_SACK_ACKED: u32 = 1 << 5;
/// `FLAG_SND_UNA_ADVANCED`: the ACK moved snd_una.
pub(super) const FLAG_SND_UNA_ADVANCED: u32 = 1 << 6;
/// `FLAG_DSACKING_ACK`: the ACK carries a D-SACK (so it is no duplicate ACK).
pub(super) const FLAG_DSACKING_ACK: u32 = 1 << 7;

/// The `flag` of `tcp_ack()` in the kernel's bits (`tcplab_cc::ops::tcp_ack_flag`,
/// net/ipv4/tcp_input.c) from this module's `flag` and what else the ACK did. The slow
/// path is the one tcp_rcv_established takes for an ACK that is not a pure in-order
/// advance (it passes FLAG_SLOWPATH | FLAG_UPDATE_TS_RECENT).
fn tcp_ack_flag(
    flag: u32,
    slowpath: bool,
    win_update: bool,
    set_xmit_timer: bool,
    lost_retrans: bool,
    ack_maybe_delayed: bool,
) -> u32 {
    use tcplab_cc::ops::tcp_ack_flag as k;
    let mut out = 0;
    for (ours, theirs) in [
        (FLAG_DATA_ACKED, k::FLAG_DATA_ACKED),
        (FLAG_DATA_SACKED, k::FLAG_DATA_SACKED),
        (FLAG_RETRANS_DATA_ACKED, k::FLAG_RETRANS_DATA_ACKED),
        (FLAG_ECE, k::FLAG_ECE),
        (FLAG_DSACK_TLP, k::FLAG_DSACK_TLP),
        (FLAG_ORIG_SACK_ACKED, k::FLAG_ORIG_SACK_ACKED),
        (FLAG_SND_UNA_ADVANCED, k::FLAG_SND_UNA_ADVANCED),
        (FLAG_DSACKING_ACK, k::FLAG_DSACKING_ACK),
    ] {
        if flag & ours != 0 {
            out |= theirs;
        }
    }
    for (on, theirs) in [
        (slowpath, k::FLAG_SLOWPATH | k::FLAG_UPDATE_TS_RECENT),
        (win_update, k::FLAG_WIN_UPDATE),
        (set_xmit_timer, k::FLAG_SET_XMIT_TIMER),
        (lost_retrans, k::FLAG_LOST_RETRANS),
        (ack_maybe_delayed, k::FLAG_ACK_MAYBE_DELAYED),
    ] {
        if on {
            out |= theirs;
        }
    }
    out
}

/// Send times of never-retransmitted segments newly (s)acked: the RTT candidates.
#[derive(Default)]
struct RttTimes {
    first: Option<u64>,
    last: Option<u64>,
}

impl RttTimes {
    fn note(&mut self, tx_us: u64) {
        self.first = Some(self.first.map_or(tx_us, |f| f.min(tx_us)));
        self.last = Some(self.last.map_or(tx_us, |l| l.max(tx_us)));
    }
}

impl Sender {
    /// An ACK arrived from the receiver.
    pub fn on_ack(&mut self, now: SimTime, pkt: &Packet, io: &mut SenderIo) {
        if !self.started {
            return;
        }
        let now_us = now.us();
        self.tp.now_us = now_us;
        let ack = pkt.seq;
        // An ACK below snd_una is old (reordered by jitter on the ACK path): tcp_ack
        // ignores it (its SACK blocks are processed there only for D-SACK
        // accounting, which we leave out); above snd_nxt is invalid ("ACK of unsent
        // data").
        if ack < self.tp.snd_una || ack > self.tp.snd_nxt {
            return;
        }
        let prior_wnd_end = self.snd_wnd_end;
        self.update_peer_window(ack, pkt.wnd);
        // tcp_ack_update_window's FLAG_WIN_UPDATE for an ACK that does not move snd_una:
        // the window grew (part of FLAG_NOT_DUP: such an ACK is no duplicate).
        let win_update = self.snd_wnd_end != prior_wnd_end;
        // tcp_store_ts_recent, with PAWS: never step ts_recent back for a late ACK.
        if pkt.tsval.wrapping_sub(self.ts_recent) as i32 >= 0 {
            self.ts_recent = pkt.tsval;
        }
        self.ro.rcv_tsecr = pkt.tsecr;
        if self.tp.packets_out == 0 {
            // tcp_ack's no_queue: nothing outstanding (a late duplicate ACK), so no
            // rtx-queue work, rate sample or congestion-control hook; just send.
            self.try_send(now, io);
            return;
        }
        let prior_snd_una = self.tp.snd_una;
        let prior_in_flight = self.packets_in_flight();
        let prior_delivered = self.tp.delivered;
        let prior_lost = self.tp.lost;
        // tcp_ack: prior_fack = tcp_highest_sack_seq (SACK connections).
        let prior_fack = self.highest_sack_seq();
        let mut acc = RateAcc::default();
        self.ack_lost_retrans = false;
        // tcp_ecn_rcv_ecn_echo.
        let ece = pkt.ece() && self.tp.ecn_ok;
        let mut flag = if ece { FLAG_ECE } else { 0 };
        if ece {
            self.stats.ece_acks += 1;
        }

        let mut sack_times = RttTimes::default();
        if pkt.n_sacks > 0 {
            flag |= self.sacktag_write_queue(&pkt.sack_blocks(), ack, &mut acc, &mut sack_times);
        }
        let (pkts_acked, ack_times, cflag) = self.clean_rtx_queue(ack, &mut acc, prior_fack);
        flag |= cflag;
        if ack > prior_snd_una {
            flag |= FLAG_SND_UNA_ADVANCED;
        }
        if self.rack_enabled {
            self.rack_update_reo_wnd(acc.rs.prior_delivered);
        }
        if ece {
            // tcp_count_delivered: everything this ECE ACK delivered counts as CE.
            self.tp.delivered_ce += self.tp.delivered - prior_delivered;
        }
        if ack > prior_snd_una {
            self.rto_retransmits = 0;
        }

        // tcp_clean_rtx_queue + tcp_ack_update_rtt (Karn: no sample from the send times
        // if any cumulatively acked segment was retransmitted).
        let mut seq_rtt_us: i64 = -1;
        let mut ca_rtt_us: i64 = -1;
        if flag & FLAG_RETRANS_DATA_ACKED == 0 {
            if let (Some(f), Some(l)) = (ack_times.first, ack_times.last) {
                seq_rtt_us = (now_us - f) as i64;
                ca_rtt_us = (now_us - l) as i64;
            }
        }
        let mut sack_rtt_us: i64 = -1;
        if let (Some(f), Some(l)) = (sack_times.first, sack_times.last) {
            sack_rtt_us = (now_us - f) as i64;
            ca_rtt_us = (now_us - l) as i64;
        }
        if seq_rtt_us < 0 {
            seq_rtt_us = sack_rtt_us;
        }
        // RTTM rule (RFC 7323 Sec. 4.3, tcp_ack_update_rtt): with no sample from the
        // send times, an ACK that advances snd_una and echoes a TSecr gives one from the
        // timestamp, in whole milliseconds, and it also stands for ca_rtt_us (the rate
        // sample's rtt_us, pkts_acked's rtt and tcp_update_rtt_min). This is how an ACK
        // of retransmitted data is measured.
        if seq_rtt_us < 0 && pkt.tsecr != 0 && flag & FLAG_DATA_ACKED != 0 {
            let ts_rtt_us = tcp_rtt_tsopt_us(self.ts_at(now), pkt.tsecr, 1);
            seq_rtt_us = ts_rtt_us;
            ca_rtt_us = ts_rtt_us;
        }
        acc.rs.rtt_us = ca_rtt_us;
        if seq_rtt_us >= 0 {
            self.rtt
                .update_min_rtt(self.tp.jiffies32(), ca_rtt_us as u32);
            self.rtt.on_sample(
                Dur::from_us(seq_rtt_us as u64),
                self.tp.snd_una,
                self.tp.snd_nxt,
            );
            self.rtt.latest_us = ca_rtt_us;
            self.rtt.samples.add(ca_rtt_us as u64);
            self.tp.srtt_us = self.rtt.srtt_us();
            self.tp.min_rtt_us = self.rtt.min_rtt.get();
        }
        // FLAG_SET_XMIT_TIMER (tcp_clean_rtx_queue): data acked, or a SACK RTT sample
        // from data sent before the head was last (re)transmitted. The timer itself (PTO
        // or RTO) is set after loss detection, as tcp_ack does.
        let set_xmit_timer = flag & FLAG_DATA_ACKED != 0
            || (sack_rtt_us >= 0
                && self.tp.packets_out > 0
                && sack_rtt_us as u64 > now_us.saturating_sub(self.sb.get(self.tp.snd_una).tx_us));

        // tcp_clean_rtx_queue: sample.in_flight = tp->mss_cache * (tp->delivered -
        // sack->rate->prior_delivered), in the kernel's u32 arithmetic.
        let in_flight = self
            .tp
            .mss_cache
            .wrapping_mul((self.tp.delivered as u32).wrapping_sub(acc.rs.prior_delivered as u32));
        self.cc.pkts_acked(
            &mut self.tp,
            &AckSample {
                pkts_acked,
                rtt_us: ca_rtt_us,
                in_flight,
                prior_in_flight,
            },
        );
        // Fast path (pure cumulative advance): CA_ACK_WIN_UPDATE; slow path (SACK
        // blocks, duplicates): CA_ACK_SLOWPATH, plus CA_ACK_WIN_UPDATE when snd_una
        // advanced (tcp_ack_update_window -> tcp_may_update_window).
        let mut ev = match (pkt.n_sacks == 0, ack > prior_snd_una) {
            (true, true) => CA_ACK_WIN_UPDATE,
            (false, true) => CA_ACK_SLOWPATH | CA_ACK_WIN_UPDATE,
            (_, false) => CA_ACK_SLOWPATH,
        };
        if ece {
            ev |= CA_ACK_ECE;
        }
        self.cc.in_ack_event(&mut self.tp, ev);
        let slowpath = ev & CA_ACK_SLOWPATH != 0;

        if self.tlp_high_seq.is_some() {
            self.process_tlp_ack(
                ack,
                ack == prior_snd_una && flag & FLAG_DATA_SACKED == 0,
                flag & FLAG_DSACK_TLP != 0,
            );
        }
        // tcp_ack_is_dubious: a duplicate, new SACK information or an ECN echo
        // (FLAG_CA_ALERT), or not Open. A duplicate ACK (num_dupack) moves neither
        // snd_una nor the window and carries no D-SACK.
        let mut rexmit_new = false;
        if ack == prior_snd_una
            || flag & (FLAG_DATA_SACKED | FLAG_ECE) != 0
            || self.tp.ca_state != CaState::Open
        {
            let dupack = flag & (FLAG_SND_UNA_ADVANCED | FLAG_DSACKING_ACK) == 0 && !win_update;
            rexmit_new = self.fastretrans_alert(now, flag, dupack, io);
        }
        if set_xmit_timer {
            self.set_xmit_timer(now, io);
        }

        let delivered = (self.tp.delivered - prior_delivered) as u32;
        let lost = (self.tp.lost - prior_lost) as u32;
        acc.rs.prior_in_flight = prior_in_flight;
        acc.rs.is_ece = ece;
        let rs = self.rate.rate_gen(&mut self.tp, &mut acc, delivered, lost);

        // tcp_cong_control
        if self.cong_control {
            let kflag = tcp_ack_flag(
                flag,
                slowpath,
                ack > prior_snd_una || win_update,
                set_xmit_timer,
                self.ack_lost_retrans,
                rs.is_ack_delayed,
            );
            self.cc.cong_control_flag(&mut self.tp, &rs, kflag);
        } else {
            if self.in_cwnd_reduction() {
                self.cwnd_reduction(delivered, lost, ack > prior_snd_una);
            } else if flag & FLAG_DATA_ACKED != 0 {
                let una = self.tp.snd_una;
                self.cc.cong_avoid(&mut self.tp, una, delivered);
                // tcp_cong_avoid stamps cwnd as validated now.
                self.tp.snd_cwnd_stamp_us = now_us;
            }
            tcp_update_pacing_rate(&mut self.tp);
        }
        if !self.cong_control {
            self.tp.snd_cwnd = self.tp.snd_cwnd.max(1);
        }
        // A cong_control algorithm owns cwnd, and the kernel keeps what it sets, 0
        // included (tcp_snd_cwnd_set only warns): the socket then sends nothing until the
        // RTO (tcp_enter_loss: cwnd = in flight + 1). The kernel's selftest
        // bpf_cc_cubic.c reaches 0 in Recovery (its PRR without tcp_cwnd_reduction's
        // prr_delivered) and stalls until the RTO; clamped to 1 it recovered an RTO early.
        // tcp_xmit_recovery: F-RTO step 2.b (REXMIT_NEW) sends new data only; if none
        // could go, F-RTO ends and the lost segments are retransmitted as usual.
        if rexmit_new {
            self.try_send_new(now, io);
            if self.tp.snd_nxt > self.tp.high_seq {
                return;
            }
            self.frto = false;
        }
        self.try_send(now, io);
        // A finite flow whose data is all acknowledged is done: the application closes
        // and the socket is destroyed.
        if self.total_bytes.is_some() && !self.app_paused && self.all_acked() {
            self.release_cc(now);
        }
    }

    /// `tcp_sacktag_write_queue`: the D-SACK check (a D-SACK first block is accounted
    /// and left out of the walk), the walk, then `tcp_check_sack_reordering` on the
    /// lowest never-retransmitted segment newly SACKed below the highest SACKed one.
    fn sacktag_write_queue(
        &mut self,
        blocks: &[SackBlock],
        ack: u64,
        acc: &mut RateAcc,
        times: &mut RttTimes,
    ) -> u32 {
        let prior_una = self.tp.snd_una;
        let mut reord = self.tp.snd_nxt;
        let mut walk = blocks;
        let mut flag = 0;
        if self.check_dsack(blocks, ack, prior_una, &mut flag) {
            flag |= FLAG_DSACKING_ACK;
            self.dsack_tag(blocks[0], &mut reord);
            walk = &blocks[1..];
        }
        self.reord_fack = self.highest_sack_seq();
        self.reord_low = reord;
        flag |= self.sacktag(walk, ack, acc, times);
        if self.tp.ca_state != CaState::Loss || self.ro.undo_marker.is_some() {
            self.check_sack_reordering(self.reord_low);
        }
        flag
    }

    /// `tcp_sacktag_write_queue`'s walk: mark segments in the SACK blocks. Ranges already tagged
    /// by the previous ACK's blocks are skipped (SACKed state is monotone: we never
    /// renege), so each segment is walked about once.
    fn sacktag(
        &mut self,
        blocks: &[SackBlock],
        ack: u64,
        acc: &mut RateAcc,
        times: &mut RttTimes,
    ) -> u32 {
        let mut flag = 0;
        let lo = ack;
        let hi = self.tp.snd_nxt;
        let prev = self.prev_sacks;
        let n_prev = self.n_prev_sacks;
        let mut clipped = [SackBlock::default(); 3];
        let mut n_clipped = 0;
        for b in blocks {
            let s = b.start.max(lo);
            let e = b.end.min(hi);
            if s >= e {
                continue;
            }
            clipped[n_clipped] = SackBlock { start: s, end: e };
            n_clipped += 1;
            // Walk [s, e) minus the previous blocks.
            let mut cur = s;
            while cur < e {
                let mut next_gap_end = e;
                let mut skip_to = None;
                for p in &prev[..n_prev] {
                    if p.start <= cur && cur < p.end {
                        skip_to = Some(p.end);
                        break;
                    }
                    if p.start > cur && p.start < next_gap_end {
                        next_gap_end = p.start;
                    }
                }
                if let Some(t) = skip_to {
                    cur = t;
                    continue;
                }
                for seq in cur..next_gap_end {
                    flag |= self.sacktag_one(seq, acc, times);
                }
                cur = next_gap_end;
            }
        }
        self.prev_sacks = clipped;
        self.n_prev_sacks = n_clipped;
        flag
    }

    /// `tcp_sacktag_one`.
    fn sacktag_one(&mut self, seq: u64, acc: &mut RateAcc, times: &mut RttTimes) -> u32 {
        let old = self.sb.flags(seq);
        if old & SACKED != 0 {
            return 0;
        }
        let seg = *self.sb.get(seq);
        let mut flags = old | SACKED;
        if old & LOST != 0 {
            flags &= !LOST;
            self.tp.lost_out -= 1;
        }
        if old & RETRANS != 0 {
            flags &= !RETRANS;
            self.tp.retrans_out -= 1;
        }
        let mut flag = FLAG_DATA_SACKED;
        if old & EVER_RETRANS == 0 {
            times.note(seg.tx_us);
            if seq < self.tp.high_seq {
                flag |= FLAG_ORIG_SACK_ACKED;
            }
            // A never-retransmitted segment in a hole below the highest SACKed one
            // (as of before this ACK: blocks are walked in ascending order there) was
            // reordered, not lost.
            if seq < self.reord_fack && seq < self.reord_low {
                self.reord_low = seq;
            }
        }
        if self.rack_enabled {
            self.rack_advance(seq, seg.tx_us, old);
        }
        self.tp.sacked_out += 1;
        self.tp.delivered += 1;
        let keep = self.rate.skb_delivered(
            acc,
            &seg.snap,
            seg.tx_us,
            seq + 1,
            old & EVER_RETRANS != 0,
            true,
        );
        *self.sb.flags_mut(seq) = flags;
        self.sb.get_mut(seq).snap.valid = keep;
        self.note_sacked(seq);
        flag
    }

    /// Keep the three highest SACKed sequence numbers.
    fn note_sacked(&mut self, seq: u64) {
        let t = &mut self.top_sacked;
        let n = self.n_top_sacked;
        let pos = t[..n.min(3)]
            .iter()
            .position(|&x| seq > x)
            .unwrap_or(n.min(3));
        if pos >= 3 {
            return;
        }
        for i in (pos + 1..3).rev() {
            t[i] = t[i - 1];
        }
        t[pos] = seq;
        self.n_top_sacked = (n + 1).min(3);
    }

    /// `tcp_clean_rtx_queue`: drop cumulatively acked segments. Returns the number
    /// removed, the send times of never-retransmitted, not-previously-SACKed ones, and
    /// flags.
    fn clean_rtx_queue(
        &mut self,
        ack: u64,
        acc: &mut RateAcc,
        prior_fack: u64,
    ) -> (u32, RttTimes, u32) {
        let mut times = RttTimes::default();
        // The lowest never-retransmitted, never-SACKed segment acked (tcp_clean_rtx_queue's
        // `reord`).
        let mut reord = self.tp.snd_nxt;
        let mut flag = 0;
        let mut n = 0u32;
        while self.tp.snd_una < ack {
            let seq = self.tp.snd_una;
            let (seg, f) = self.sb.pop_front();
            if f & EVER_RETRANS != 0 {
                flag |= FLAG_RETRANS_DATA_ACKED;
            } else if f & SACKED == 0 {
                times.note(seg.tx_us);
                reord = reord.min(seq);
                // Segment seq ends at seq + 1: !after(end_seq, high_seq).
                if seq < self.tp.high_seq {
                    flag |= FLAG_ORIG_SACK_ACKED;
                }
            }
            if f & RETRANS != 0 {
                self.tp.retrans_out -= 1;
            }
            if f & SACKED != 0 {
                self.tp.sacked_out -= 1;
            } else {
                self.tp.delivered += 1;
                self.rate.skb_delivered(
                    acc,
                    &seg.snap,
                    seg.tx_us,
                    seq + 1,
                    f & EVER_RETRANS != 0,
                    false,
                );
                // tcp_clean_rtx_queue: not from a retransmission this ACK did not
                // acknowledge (tcp_skb_spurious_retrans).
                if self.rack_enabled && !self.skb_spurious_retrans(f, seg.tsval) {
                    self.rack_advance(seq, seg.tx_us, f);
                }
            }
            if f & LOST != 0 {
                self.tp.lost_out -= 1;
            }
            self.tp.packets_out -= 1;
            self.tp.snd_una += 1;
            n += 1;
        }
        if n > 0 {
            flag |= FLAG_DATA_ACKED;
            self.rack_trim();
            // A hole below the highest SACKed segment filled by its original.
            if reord < prior_fack {
                self.check_sack_reordering(reord);
            }
        }
        (n, times, flag)
    }
}
