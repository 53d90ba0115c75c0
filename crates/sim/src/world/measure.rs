//! A flow read and written between events, as a sender's congestion controller reads
//! and writes it: its state ([`FlowState`]), its statistics since a mark
//! ([`IntervalStats`]) and writes of cwnd, pacing rate and ssthresh. The stepping API
//! (stepping.rs) and the interval agents (agents.rs) both go through here.

use tcplab_cc::ops::CcView;

use super::World;
use crate::interval::{FlowState, IntervalStats};
use crate::time::SimTime;

impl World {
    /// Flow `flow`'s state now (an index the caller checked).
    pub(crate) fn flow_state(&self, flow: usize) -> FlowState {
        let f = &self.flows[flow];
        let s = &f.sender;
        let tp: &CcView = &s.tp;
        let started = s.is_started();
        FlowState {
            started,
            cwnd_pkts: tp.snd_cwnd,
            ssthresh_pkts: tp.snd_ssthresh,
            inflight_pkts: s.packets_in_flight(),
            pacing_rate_bps: tp.pacing_rate as f64 * 8.0,
            srtt_us: s.rtt.srtt_ns() / 1000,
            min_rtt_us: if tp.min_rtt_us == u32::MAX {
                0
            } else {
                tp.min_rtt_us as u64
            },
            latest_rtt_us: s.rtt.latest_us.max(0) as u64,
            delivery_rate_bps: s.rate.delivery_rate_bps(tp.mss_cache),
            ca_state: tp.ca_state as u8,
            sent_bytes: s.stats.sent_bytes,
            acked_bytes: if started {
                tp.delivered * tp.mss_cache as u64
            } else {
                0
            },
            delivered_bytes: f.receiver.stats.delivered_bytes,
            lost_pkts: if started { tp.lost } else { 0 },
            retransmitted_pkts: s.stats.retransmitted_packets,
            rto_count: s.stats.rto_count,
        }
    }

    /// Flow `flow`'s statistics since `prev` (its state at `since`), with the RTT sample
    /// accumulator taken (reset); and its state now, the next mark.
    pub(crate) fn interval_since(
        &mut self,
        flow: usize,
        prev: &FlowState,
        since: SimTime,
    ) -> (IntervalStats, FlowState) {
        let now_state = self.flow_state(flow);
        let samples = std::mem::take(&mut self.flows[flow].sender.rtt.samples);
        let iv = IntervalStats::between(
            prev,
            &now_state,
            (self.now.ns() - since.ns()) / 1000,
            samples.count,
            samples.sum_us,
            samples.min_us,
        );
        (iv, now_state)
    }

    /// Write ssthresh, the pacing rate (bytes/s) and cwnd (segments) of a started flow,
    /// in that order; a cwnd write lets the sender transmit what the new window allows
    /// (`tcp_push`-like), as the next ACK would.
    pub(crate) fn apply_write(
        &mut self,
        flow: usize,
        ssthresh: Option<u32>,
        pacing_bytes: Option<u64>,
        cwnd: Option<u32>,
    ) {
        let now = self.now;
        let s = &mut self.flows[flow].sender;
        if let Some(c) = ssthresh {
            s.tp.snd_ssthresh = c;
        }
        if let Some(b) = pacing_bytes {
            tcplab_cc::external::set_pacing(&mut s.tp, b);
        }
        if let Some(c) = cwnd {
            s.tp.snd_cwnd = c.min(s.tp.snd_cwnd_clamp);
            s.tp.snd_cwnd_stamp_us = now.us();
            let mut io = std::mem::take(&mut self.io);
            s.try_send(now, &mut io);
            self.flush_sender(flow as u32, io);
        }
    }

    /// Whether the connection of flow `flow` is established.
    pub(crate) fn flow_started(&self, flow: usize) -> bool {
        self.flows[flow].sender.is_started()
    }
}
