//! Tail loss probe (TLP, RFC 8985 Sec. 7): `tcp_schedule_loss_probe`,
//! `tcp_send_loss_probe` (net/ipv4/tcp_output.c) and `tcp_process_tlp_ack`
//! (net/ipv4/tcp_input.c), Linux's default (`tcp_early_retrans` = 3).
//!
//! A tail loss leaves RACK nothing delivered after it to infer the loss from, so
//! without TLP only the RTO repairs it. TLP arms a probe timeout (PTO) of 2 x srtt
//! (plus the minimum RTO when one packet is out, for a delayed ACK; plus 2 ms otherwise),
//! never later than the RTO, whenever new data is sent or an ACK advances in Open or CWR.
//! When it fires it sends one new segment if there is one (beyond cwnd if need be), else
//! retransmits the last segment; the ACK it elicits lets RACK find the loss. If only the
//! probe's retransmission repaired a loss (the ACK passes `tlp_high_seq` with no D-SACK),
//! cwnd is reduced once through the CWR state.
//!
//! The PTO and the RTO share one timer slot (`icsk_pending`), as in the kernel:
//! `Sender::xmit_pending` says which one `rto_timer` holds; `tcp_rearm_rto` over a pending
//! probe keeps the original RTO deadline (`tcp_rto_delta_us`).
//!
//! A probe found spurious does nothing: its D-SACK (`FLAG_DSACK_TLP`, the D-SACKed
//! segment ending at `tlp_high_seq`, [`super::reorder`]) or a pure duplicate ACK says
//! that original and probe both arrived.
//!
//! Deviations:
//! - `skb_still_in_host_queue` is not checked (no qdisc or driver queue on the host).
//! - Jiffies at the simulated CONFIG_HZ (`[tcp] hz`; `usecs_to_jiffies` rounds up to
//!   whole jiffies).

use tcplab_cc::ops::usecs_to_jiffies;
use tcplab_cc::{CaEvent, CaState};

use crate::tcp::scoreboard::{RETRANS, SACKED};
use crate::tcp::sender::{Sender, XmitTimer};
use crate::tcp::{SenderIo, SenderTimer};
use crate::time::{Dur, SimTime};

/// `TCP_TIMEOUT_MIN_US`: 2 ms added to a PTO with more than one packet out.
pub const TCP_TIMEOUT_MIN_US: u64 = 2_000;

/// `TCP_TIMEOUT_INIT` in us: the PTO before any RTT sample.
const TCP_TIMEOUT_INIT_US: u64 = 1_000_000;

/// `usecs_to_jiffies` at `hz`, as a duration: whole jiffies, rounded up.
pub(super) fn jiffies(us: u64, hz: u32) -> Dur {
    Dur::from_jiffies(usecs_to_jiffies(us, hz), hz)
}

/// The probe timeout (before the RTO cap): 2 x srtt + (rto_min if one packet is out,
/// else 2 ms), or `TCP_TIMEOUT_INIT` without an RTT sample.
pub fn probe_timeout_us(srtt_us: u32, packets_out: u32, rto_min_us: u64) -> u64 {
    if srtt_us == 0 {
        return TCP_TIMEOUT_INIT_US;
    }
    2 * u64::from(srtt_us)
        + if packets_out == 1 {
            rto_min_us
        } else {
            TCP_TIMEOUT_MIN_US
        }
}

impl Sender {
    /// `tcp_rto_delta_us`: how far in the future the RTO of the head falls (its last
    /// transmission + RTO - now), possibly negative.
    pub(super) fn rto_delta_us(&self, now: SimTime) -> i64 {
        let head_tx = self.sb.get(self.tp.snd_una).tx_us as i64;
        head_tx + (self.rtt.rto().ns() / 1000) as i64 - now.us() as i64
    }

    /// `tcp_schedule_loss_probe`: arm the PTO in the shared timer slot if a probe may be
    /// sent now (Open or CWR, something out). `advancing_rto`: called on an ACK that will
    /// otherwise re-arm the RTO (the cap is then a full RTO from now).
    pub(super) fn schedule_loss_probe(
        &mut self,
        now: SimTime,
        advancing_rto: bool,
        io: &mut SenderIo,
    ) -> bool {
        if !self.tlp_enabled
            || self.tp.packets_out == 0
            || !matches!(self.tp.ca_state, CaState::Open | CaState::Cwr)
        {
            return false;
        }
        let mut timeout = jiffies(
            probe_timeout_us(self.tp.srtt_us, self.tp.packets_out, self.rtt.rto_min_us()),
            self.tp.hz,
        );
        let rto_delta_us = if advancing_rto {
            (self.rtt.rto().ns() / 1000) as i64
        } else {
            self.rto_delta_us(now)
        };
        if rto_delta_us > 0 {
            timeout = timeout.min(jiffies(rto_delta_us as u64, self.tp.hz));
        }
        self.xmit_pending = XmitTimer::LossProbe;
        let entry = self.rto_timer.arm(now + timeout);
        io.arm(entry, SenderTimer::Rto);
        true
    }

    /// `tcp_set_xmit_timer`: on an ACK that acked data, the PTO if allowed, else the RTO.
    pub(super) fn set_xmit_timer(&mut self, now: SimTime, io: &mut SenderIo) {
        if !self.schedule_loss_probe(now, true, io) {
            self.rearm_rto(now, io);
        }
    }

    /// `tcp_send_loss_probe`: the PTO fired.
    pub(super) fn send_loss_probe(&mut self, now: SimTime, io: &mut SenderIo) {
        self.tp.now_us = now.us();
        if self.tp.packets_out == 0 {
            self.xmit_pending = XmitTimer::Rto;
            return;
        }
        // At most one outstanding probe.
        if self.tlp_high_seq.is_some() {
            self.rearm_rto(now, io);
            return;
        }
        self.tlp_retrans = false;
        // New data if the receive window allows it (tcp_snd_wnd_test), else the last
        // segment again.
        if self.has_unsent_data() && self.in_peer_window(self.tp.snd_nxt) {
            // tcp_write_xmit(push_one = 2): the pacing check still applies; cwnd does not.
            let before = self.tp.packets_out;
            if !(self.tp.pacing_needed && self.wstamp_ns > now.ns()) {
                self.transmit(now, self.tp.snd_nxt, io);
            }
            if self.tp.packets_out == before {
                self.rearm_rto(now, io);
                return;
            }
        } else {
            let last = self.tp.snd_nxt - 1;
            if self.sb.has(last, RETRANS | SACKED) {
                self.rearm_rto(now, io);
                return;
            }
            // tp->tlp_orig_data_app_limited (BBRv2/v3 kernels): read before the
            // retransmission re-snapshots the segment.
            self.tp.tlp_orig_data_app_limited = self.sb.get(last).snap.is_app_limited;
            self.transmit(now, last, io);
            self.tlp_retrans = true;
        }
        // probe_sent: remember snd_nxt for loss detection; the RTO restarts from now.
        self.tlp_high_seq = Some(self.tp.snd_nxt);
        self.stats.tlp_probes += 1;
        self.xmit_pending = XmitTimer::Rto;
        self.rearm_rto(now, io);
    }

    /// `tcp_process_tlp_ack`: did the probe repair a loss? Called on every ACK while a
    /// probe is outstanding, before loss detection. `pure_dup`: the ACK neither advanced
    /// snd_una nor SACKed new data (no D-SACK here: see the module doc).
    pub(super) fn process_tlp_ack(&mut self, ack: u64, pure_dup: bool, dsack_tlp: bool) {
        let Some(high) = self.tlp_high_seq else {
            return;
        };
        if ack < high {
            return;
        }
        if !self.tlp_retrans {
            // A probe of new data was acknowledged.
            self.tlp_high_seq = None;
        } else if dsack_tlp {
            // The probe was D-SACKed: original and probe both arrived, no loss.
            self.tlp_high_seq = None;
        } else if ack > high {
            // The ACK passed the probe without a D-SACK: there was a loss, which the probe
            // repaired. One reduction, through CWR (tcp_init_cwnd_reduction clears
            // tlp_high_seq).
            // CA_EVENT_TLP_RECOVERY (BBRv2/v3 kernels, announced before the reduction):
            // algorithms that ignore CWR (BBR) still learn of the repaired loss.
            self.cc.cwnd_event(&mut self.tp, CaEvent::TlpRecovery);
            self.init_cwnd_reduction();
            self.set_ca_state(CaState::Cwr);
            self.end_cwnd_reduction();
            self.try_to_open();
        } else if pure_dup {
            // Original and probe both arrived: no loss.
            self.tlp_high_seq = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_timeout_as_tcp_schedule_loss_probe() {
        // srtt 40 ms, 10 packets out: 2 x 40 + 2 = 82 ms.
        assert_eq!(probe_timeout_us(40_000, 10, 200_000), 82_000);
        // One packet out: 2 x 40 + rto_min 200 = 280 ms (room for the peer's delayed ACK).
        assert_eq!(probe_timeout_us(40_000, 1, 200_000), 280_000);
        // No RTT sample: TCP_TIMEOUT_INIT.
        assert_eq!(probe_timeout_us(0, 10, 200_000), 1_000_000);
        // usecs_to_jiffies rounds up: 82.001 ms -> 83 jiffies.
        assert_eq!(jiffies(82_001, 1000), Dur::from_ms(83));
    }
}
