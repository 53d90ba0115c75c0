//! The sending host's TCP state: the socket view the algorithm sees (`tp`), the
//! scoreboard, recovery and timer state. Behaviour lives in the sibling modules:
//! `output` (tcp_write_xmit), `input` (tcp_ack), `recovery` (tcp_fastretrans_alert,
//! PRR), `rto` (tcp_retransmit_timer), `pacing`.

use tcplab_cc::helpers::tcp_packets_in_flight;
use tcplab_cc::{CaState, CcView, CongestionOps};

use crate::app::App;
use crate::net::packet::ts_clock;
use crate::net::SackBlock;
use crate::sched::Timer;
use crate::tcp::rack::Rack;
use crate::tcp::rate::RateState;
use crate::tcp::rtt::RttEstimator;
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::SenderIo;
use crate::time::{Dur, SimTime};
use tcplab_cc::bbr::kernel::KernelRelease;

/// Exact sender counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Data segments put on the access link, retransmissions included.
    pub sent_packets: u64,
    /// Their payload bytes.
    pub sent_bytes: u64,
    pub retransmitted_packets: u64,
    pub rto_count: u64,
    /// Timeouts F-RTO proved spurious and undid (`LINUX_MIB_TCPSPURIOUSRTOS`).
    pub spurious_rtos: u64,
    pub recoveries: u64,
    /// Tail loss probes sent (`LINUX_MIB_TCPLOSSPROBES`).
    pub tlp_probes: u64,
    /// ACKs with ECE processed (`FLAG_ECE`), and reductions they started (CWR entries).
    pub ece_acks: u64,
    pub ecn_reductions: u64,
    /// Duplicate segments the receiver reported by D-SACK (`tp->dsack_dups`, those the
    /// sender's retransmissions can explain): spurious retransmissions.
    pub dsack_segments: u64,
    /// Time new data waited for the receive window (`tcpi_rwnd_limited`, the kernel's
    /// `TCP_CHRONO_RWND_LIMITED`), closed intervals only (see `Sender::rwnd_limited_ns`).
    pub rwnd_limited_ns: u64,
}

/// Which timer the shared retransmission slot (`rto_timer`) holds: `icsk_pending`'s
/// ICSK_TIME_RETRANS or ICSK_TIME_LOSS_PROBE.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum XmitTimer {
    #[default]
    Rto,
    LossProbe,
}

pub struct Sender {
    pub flow: u32,
    /// The socket fields the algorithm reads and writes; the sender's own copy of them.
    pub tp: CcView,
    pub cc: Box<dyn CongestionOps>,
    /// `cc.has_cong_control()`, cached.
    pub(super) cong_control: bool,
    /// RACK marked a retransmission lost while processing the current ACK
    /// (`FLAG_LOST_RETRANS`, for `cong_control_flag`).
    pub(super) ack_lost_retrans: bool,
    /// `release` was called (the socket is destroyed; once).
    pub(super) released: bool,
    pub(super) mss: u32,
    pub(super) header: u32,
    pub(super) initial_cwnd: u32,
    pub(super) sb: Scoreboard,
    /// Total payload if the application is finite.
    pub(super) total_bytes: Option<u64>,
    /// Segments the application has offered (snd_nxt may not pass it).
    pub(super) offered_segs: u64,
    pub(super) app: App,
    pub(super) started: bool,
    /// The application is not writing (stopped, or in an off period) when the connection
    /// is established: it then offers nothing.
    pub(super) app_paused: bool,
    /// The SYN-ACK's round trip, when the connection is established by a handshake
    /// (`tcp.handshake`): the first RTT sample, taken before the algorithm's `init`.
    pub(super) handshake_rtt: Option<Dur>,
    /// SYN retransmission timeouts before the connection was established, and the
    /// ssthresh the first one left (see [`Sender::on_syn_timeout`]).
    syn_timeouts: u32,
    syn_ssthresh: Option<u32>,
    /// The three highest SACKed sequence numbers, highest first (RFC 6675 IsLost).
    pub(super) top_sacked: [u64; 3],
    pub(super) n_top_sacked: usize,
    /// Segments below this were already considered by loss marking.
    pub(super) lost_scan: u64,
    /// No lost, un-retransmitted segment lies below this (`retransmit_skb_hint`).
    pub(super) retrans_hint: u64,
    /// The SACK blocks of the previous ACK (already tagged), to skip re-walking them.
    pub(super) prev_sacks: [SackBlock; 3],
    pub(super) n_prev_sacks: usize,
    pub rtt: RttEstimator,
    pub rate: RateState,
    pub rto_timer: Timer,
    pub pacing_timer: Timer,
    /// RACK's reordering timer (`ICSK_TIME_REO_TIMEOUT`).
    pub reo_timer: Timer,
    /// Loss detection by RACK (Linux default) rather than RFC 6675 marking.
    pub rack_enabled: bool,
    /// The release whose stack this sender follows where it changed (`[tcp] kernel`:
    /// rate sampling, loss detection); set with [`Sender::set_kernel`].
    pub(super) kernel: KernelRelease,
    pub(super) rack: Rack,
    /// `tp->tcp_wstamp_ns`: earliest departure time of the next segment.
    pub(super) wstamp_ns: u64,
    pub(super) data_segs_out: u64,
    pub(super) cwnd_usage_seq: u64,
    /// `icsk_retransmits`: RTO expiries since snd_una last advanced.
    pub(super) rto_retransmits: u32,
    /// Tail loss probes on (`tcp_early_retrans` = 3, Linux's default).
    pub tlp_enabled: bool,
    /// F-RTO on (`sysctl_tcp_frto` = 2, Linux's default, the SACK-enhanced version of
    /// RFC 5682; false is `tcp_frto = 0`).
    pub frto_enabled: bool,
    /// `tp->frto`: the current Loss episode runs F-RTO ([`super::rto`]).
    pub(super) frto: bool,
    /// What `rto_timer` holds now.
    pub(super) xmit_pending: XmitTimer,
    /// `tp->tlp_high_seq`: snd_nxt when the outstanding probe was sent.
    pub(super) tlp_high_seq: Option<u64>,
    /// `tp->tlp_retrans`: the outstanding probe was a retransmission.
    pub(super) tlp_retrans: bool,
    /// ECN requested for this connection (`tcp.ecn` / the flow's `ecn`); the algorithm's
    /// `needs_ecn` requests it too. `tp.ecn_ok` holds the negotiated result.
    pub ecn: bool,
    /// `TCP_ECN_QUEUE_CWR`: set CWR on the next new data segment.
    pub(super) ecn_queue_cwr: bool,
    /// `tcp_ca_needs_ecn`, cached: retransmissions stay ECN-capable.
    pub(super) ca_needs_ecn: bool,
    /// `rx_opt.ts_recent`: the latest ACK's TSval, echoed as every data segment's TSecr
    /// (`tcp_store_ts_recent`; links do not reorder, so the latest is the newest).
    pub(super) ts_recent: u32,
    /// Where this host's millisecond timestamp clock ticks against the run's (ns, in
    /// [0, 1 ms)); the receiver of the flow has the same (see `Packet::tsval`).
    pub(super) ts_phase_ns: u64,
    /// Reordering, D-SACK and undo state ([`super::reorder`]).
    pub(super) ro: super::reorder::ReorderState,
    /// During one ACK's SACK walk: the highest SACKed end before it, and the lowest
    /// reordered segment found (`state->reord`).
    pub(super) reord_fack: u64,
    pub(super) reord_low: u64,
    /// `snd_una + snd_wnd` in bytes: the right edge of the receiver's window (the
    /// largest any ACK advertised; the receiver never shrinks it). `u64::MAX`: no limit.
    pub(super) snd_wnd_end: u64,
    /// Since when new data waits for the window (`TCP_CHRONO_RWND_LIMITED` running).
    pub(super) rwnd_since: Option<SimTime>,
    pub stats: SenderStats,
}

impl Sender {
    /// Follow `kernel`'s TCP stack where it differs from 6.18's (docs/BBR_KERNELS.md).
    pub fn set_kernel(&mut self, kernel: KernelRelease) {
        self.kernel = kernel;
        self.rate.pre_5_18 = !kernel.rate_sample_by_send_time();
    }

    pub fn new(
        flow: u32,
        cc: Box<dyn CongestionOps>,
        mss: u32,
        header: u32,
        initial_cwnd: u32,
        app: App,
    ) -> Sender {
        let mut tp = CcView::new(mss, 0);
        tp.snd_cwnd = initial_cwnd;
        let cong_control = cc.has_cong_control();
        Sender {
            flow,
            tp,
            cc,
            cong_control,
            ack_lost_retrans: false,
            released: false,
            mss,
            header,
            initial_cwnd,
            sb: Scoreboard::default(),
            total_bytes: app.total_bytes(),
            offered_segs: 0,
            app,
            started: false,
            top_sacked: [0; 3],
            n_top_sacked: 0,
            lost_scan: 0,
            retrans_hint: 0,
            prev_sacks: [SackBlock::default(); 3],
            n_prev_sacks: 0,
            rtt: RttEstimator::new(),
            rate: RateState::default(),
            rto_timer: Timer::default(),
            pacing_timer: Timer::default(),
            reo_timer: Timer::default(),
            rack_enabled: true,
            kernel: KernelRelease::V6_18,
            rack: Rack::default(),
            wstamp_ns: 0,
            data_segs_out: 0,
            cwnd_usage_seq: 0,
            rto_retransmits: 0,
            tlp_enabled: true,
            frto_enabled: true,
            frto: false,
            xmit_pending: XmitTimer::Rto,
            tlp_high_seq: None,
            tlp_retrans: false,
            ecn: false,
            ecn_queue_cwr: false,
            ca_needs_ecn: false,
            ts_recent: 0,
            ts_phase_ns: 0,
            ro: Default::default(),
            reord_fack: 0,
            reord_low: 0,
            snd_wnd_end: u64::MAX,
            rwnd_since: None,
            app_paused: false,
            handshake_rtt: None,
            syn_timeouts: 0,
            syn_ssthresh: None,
            stats: SenderStats::default(),
        }
    }

    /// The window the receiver offered in its SYN-ACK (bytes): the limit on new data
    /// until the first ACK. Without a call the receiver sets no limit.
    pub fn set_peer_window(&mut self, bytes: u64) {
        self.snd_wnd_end = bytes;
    }

    /// `tcp_snd_wnd_test` for segment `seq`: it ends inside the receiver's window. A
    /// segment may always go when nothing is in flight: an ACK that acknowledges
    /// everything offers at least `rcv_ssthresh` beyond it, so this only stands in for
    /// the zero-window probe the kernel would send, and never binds in practice.
    pub(super) fn in_peer_window(&self, seq: u64) -> bool {
        self.tp.packets_out == 0
            || seq * self.mss as u64 + self.payload_of(seq) as u64 <= self.snd_wnd_end
    }

    /// `tcp_ack_update_window`: the right edge an ACK of `ack` advertising `wnd` bytes
    /// gives (`NO_WINDOW`: none).
    pub(super) fn update_peer_window(&mut self, ack: u64, wnd: u32) {
        if wnd != crate::net::packet::NO_WINDOW {
            let acked = (ack * self.mss as u64).min(self.total_bytes.unwrap_or(u64::MAX));
            self.snd_wnd_end = self.snd_wnd_end.max(acked + wnd as u64);
        }
    }

    /// `tcp_chrono_start/stop(TCP_CHRONO_RWND_LIMITED)` at the end of `tcp_write_xmit`.
    pub(super) fn rwnd_chrono(&mut self, now: SimTime, limited: bool) {
        match (limited, self.rwnd_since) {
            (true, None) => self.rwnd_since = Some(now),
            (false, Some(t)) => {
                self.stats.rwnd_limited_ns += now.0 - t.0;
                self.rwnd_since = None;
            }
            _ => {}
        }
    }

    /// Time new data has waited for the receive window up to `now` (an open interval
    /// counted to `now`): `tcpi_rwnd_limited`.
    pub fn rwnd_limited_ns(&self, now: SimTime) -> u64 {
        self.stats.rwnd_limited_ns + self.rwnd_since.map_or(0, |t| now.0.saturating_sub(t.0))
    }

    /// The connection is established by a handshake whose SYN-ACK came back `rtt` after
    /// the SYN: `start` is then called at that moment and takes the sample.
    pub fn set_handshake_rtt(&mut self, rtt: Dur) {
        self.handshake_rtt = Some(rtt);
    }

    /// The SYN's retransmission timer expired (world/handshake.rs). `tcp_retransmit_timer`
    /// runs `tcp_enter_loss` in SYN_SENT too, before the algorithm's `init` (which
    /// `tcp_init_transfer` calls once established): the first time, the socket's state
    /// is Open, so `snd_ssthresh` becomes the algorithm's `ssthresh()` of the socket's
    /// initial cwnd (`TCP_INIT_CWND`, set by `tcp_init_sock`; CUBIC 7, Reno 5, BBR leaves
    /// it infinite). Later timeouts find it in Loss with the SYN retransmitted, and keep
    /// it. The SYN-ACK's ACK then ends Loss without undo (the echoed timestamp is the
    /// retransmission's, so `tcp_try_undo_spurious_syn` and `tcp_packet_delayed` do not
    /// hold), and the ssthresh is kept into the connection, since `init` does not reset
    /// it (CUBIC's and Reno's do not; BBR's sets it infinite).
    ///
    /// Deviation: the callbacks `tcp_enter_loss` also makes on the uninitialised
    /// algorithm (`cwnd_event(CA_EVENT_LOSS)`, `set_state(TCP_CA_Loss)` and, on the
    /// SYN-ACK, `set_state(TCP_CA_Open)`) are not made: `init` overwrites what they set
    /// in the kernel's own modules; a BPF program's could keep something.
    pub fn on_syn_timeout(&mut self) {
        self.syn_timeouts += 1;
        if self.syn_timeouts == 1 {
            let tp = CcView {
                hz: self.tp.hz,
                ..CcView::new(self.mss, self.tp.now_us)
            };
            self.syn_ssthresh = Some(self.cc.ssthresh(&tp));
        }
    }

    /// SYN retransmission timeouts so far (`tp->total_rto` in SYN_SENT): the handshake's
    /// timer rules read it (world/handshake.rs).
    pub fn syn_timeouts(&self) -> u32 {
        self.syn_timeouts
    }

    /// The connection is established (`start` ran): the algorithm's `init` has run.
    pub fn is_started(&self) -> bool {
        self.started
    }

    /// The connection is established (at the application's start, or when the handshake
    /// completes): the algorithm's `init` runs, sending begins.
    pub fn start(&mut self, now: SimTime, io: &mut SenderIo) {
        self.started = true;
        // A fresh socket; the simulated CONFIG_HZ (set_hz) stays.
        self.tp = CcView {
            hz: self.tp.hz,
            ..CcView::new(self.mss, now.us())
        };
        self.tp.snd_cwnd = self.initial_cwnd;
        if let Some(ssthresh) = self.syn_ssthresh {
            self.tp.snd_ssthresh = ssthresh;
        }
        if self.syn_timeouts > 1 {
            // tcp_init_transfer: "Cut cwnd down to 1 per RFC5681 if SYN or SYN-ACK has
            // been retransmitted", once more than one retransmission has been sent.
            self.tp.snd_cwnd = 1;
        }
        self.tp.delivered_mstamp_us = now.us();
        if let Some(rtt) = self.handshake_rtt {
            // tcp_rcv_synsent_state_process -> tcp_ack: the SYN's round trip feeds
            // tcp_update_rtt_min and tcp_rtt_estimator (srtt = rtt, rttvar = max(2 x rtt,
            // rto_min), RTO = srtt + rttvar) before tcp_init_transfer calls the
            // algorithm's init, which so sees srtt and min_rtt (BBR's first pacing rate
            // and min_rtt come from them).
            let us = rtt.us().max(1);
            self.rtt.update_min_rtt(self.tp.jiffies32(), us as u32);
            self.rtt.on_sample(Dur::from_us(us), 0, 0);
            self.tp.srtt_us = self.rtt.srtt_us();
            self.tp.min_rtt_us = self.rtt.min_rtt.get();
        }
        self.offered_segs = if self.app_paused {
            0
        } else {
            self.app.offered_segments(self.mss)
        };
        // ECN negotiation (no handshake here: the peer always agrees, see tcp/mod.rs).
        self.ca_needs_ecn = self.cc.needs_ecn();
        self.tp.ecn_ok = self.ecn || self.ca_needs_ecn;
        self.cc.init(&mut self.tp);
        self.cong_control = self.cc.has_cong_control();
        self.try_send(now, io);
    }

    /// The socket is destroyed: the algorithm's `release` (tcp_cleanup_congestion_control
    /// from tcp_v4_destroy_sock), once. The sender calls it when a finite flow's data is
    /// all acknowledged; the world calls it for the others when the run ends.
    pub fn release_cc(&mut self, now: SimTime) {
        if self.released || !self.started {
            return;
        }
        self.released = true;
        self.tp.now_us = now.us();
        self.cc.release(&mut self.tp);
    }

    /// The application stops offering new data.
    pub fn stop(&mut self, now: SimTime, io: &mut SenderIo) {
        self.app_paused = true;
        self.offered_segs = self.offered_segs.min(self.tp.snd_nxt);
        self.tp.now_us = now.us();
        self.try_send(now, io);
    }

    /// An on/off application's off period begins: it stops writing (as `stop`); what was
    /// sent is still retransmitted until acknowledged.
    pub fn pause(&mut self, now: SimTime, io: &mut SenderIo) {
        self.stop(now, io);
    }

    /// An on period begins: the application offers its data again (all of a bulk app's,
    /// the rest of a finite one's). Sending resumes with the cwnd it had: there is no idle
    /// restart (`tcp_cwnd_restart`, see the module deviations); the algorithm sees
    /// `CA_EVENT_TX_START` if nothing was in flight (tcp_output.c `tcp_event_data_sent`).
    pub fn resume(&mut self, now: SimTime, io: &mut SenderIo) {
        self.app_paused = false;
        self.offered_segs = self.app.offered_segments(self.mss);
        self.tp.now_us = now.us();
        self.try_send(now, io);
    }

    /// Payload bytes of segment `seq`.
    pub(super) fn payload_of(&self, seq: u64) -> u32 {
        match self.total_bytes {
            Some(total) => (total - seq * self.mss as u64).min(self.mss as u64) as u32,
            None => self.mss,
        }
    }

    /// `tcp_set_ca_state`: announce, then change.
    pub(super) fn set_ca_state(&mut self, new: CaState) {
        self.cc.set_state(&mut self.tp, new);
        self.tp.ca_state = new;
    }

    /// `tcp_in_cwnd_reduction`: CWR or Recovery.
    pub(super) fn in_cwnd_reduction(&self) -> bool {
        matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery)
    }

    pub fn packets_in_flight(&self) -> u32 {
        tcp_packets_in_flight(&self.tp)
    }

    /// The simulated kernel's CONFIG_HZ (`[tcp] hz`): the algorithm's jiffies clock
    /// (`CcView::hz`) and the RTO's granularity. Set before the first event.
    pub fn set_hz(&mut self, hz: u32) {
        self.tp.hz = hz;
        self.rtt.hz = hz;
    }

    /// The phase of this host's timestamp clock (below 1 ms): the engine draws one per
    /// flow and gives both of its hosts the same, as on one kernel.
    pub fn set_ts_phase(&mut self, ts_phase: Dur) {
        self.ts_phase_ns = ts_phase.0 % 1_000_000;
    }

    /// The timestamp clock at `now` (`tcp_time_stamp_ts`: milliseconds of this host's
    /// clock), the TSval of a segment sent now.
    pub(super) fn ts_at(&self, now: SimTime) -> u32 {
        ts_clock(now.0 as i64 + self.ts_phase_ns as i64)
    }

    /// `tcp_rearm_rto`.
    pub(super) fn rearm_rto(&mut self, now: SimTime, io: &mut SenderIo) {
        if self.tp.packets_out == 0 {
            self.rto_timer.cancel();
        } else {
            let mut rto = self.rtt.rto();
            if self.xmit_pending == XmitTimer::LossProbe {
                // Offset the time elapsed since the regular RTO was installed: the head's
                // RTO deadline, at least one jiffy ahead.
                rto = crate::tcp::tlp::jiffies(self.rto_delta_us(now).max(1) as u64, self.tp.hz);
            }
            let entry = self.rto_timer.arm(now + rto);
            io.arm(entry, crate::tcp::SenderTimer::Rto);
        }
        self.xmit_pending = XmitTimer::Rto;
    }

    /// Whether the retransmission timer slot holds a tail loss probe (else the RTO).
    pub fn probe_pending(&self) -> bool {
        self.xmit_pending == XmitTimer::LossProbe && self.rto_timer.is_armed()
    }

    /// Has the application anything left to send (new data)?
    pub fn has_unsent_data(&self) -> bool {
        self.started && self.tp.snd_nxt < self.offered_segs
    }
    /// All offered data acknowledged.
    pub fn all_acked(&self) -> bool {
        self.tp.snd_una >= self.offered_segs.min(self.tp.snd_nxt) && self.tp.packets_out == 0
    }
}
