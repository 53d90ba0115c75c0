//! The congestion-control seam: a trait that mirrors Linux `struct tcp_congestion_ops`
//! (include/net/tcp.h), the socket fields an algorithm may read or set (`CcView`, the
//! subset of `struct tcp_sock` the kernel's algorithms touch), and the per-ACK samples
//! the sender hands over (`RateSample` from tcp_rate.c, `AckSample` from
//! tcp_clean_rtx_queue).
//!
//! Units follow the kernel: cwnd and flight sizes in segments, times in microseconds
//! (`tcp_mstamp`), pacing rate in bytes per second (`sk_pacing_rate`).
//!
//! Deviations from the kernel:
//! - Sequence numbers (`snd_una`, `snd_nxt`, the `ack` argument of `cong_avoid`) count
//!   segments, not bytes: every segment is one MSS, so the two orders agree and round
//!   boundaries (`after(ack, end_seq)`) behave identically.
//! - `srtt_us` is the smoothed RTT in plain microseconds; the kernel stores it shifted
//!   left by 3.
//! - The jiffies clock (`tcp_jiffies32`) runs at `CcView::hz` (the simulated CONFIG_HZ,
//!   `[tcp] hz`, default 1000) and starts at 0, where the kernel starts it 300 s before
//!   wrapping (`INITIAL_JIFFIES`) and a connection meets it at its host's uptime. Its
//!   ticks begin at exactly k / HZ of simulated time; the kernel's tick grid has an
//!   arbitrary phase against a connection's packets. Durations converted to jiffies
//!   (`usecs_to_jiffies` of a min RTT) do not depend on the phase; the difference of two
//!   stamps (`tcp_jiffies32 - epoch_start`) can read one tick more or less than on a
//!   kernel whose grid is shifted (measured over the fidelity suite by
//!   scripts/jiffies_phase.py: the phase moves results no more than a seed does;
//!   docs/FIDELITY-gaps.md, gap 10). `usecs_to_jiffies` / `msecs_to_jiffies` round up as
//!   include/linux/jiffies.h does (exactly its `(u + USEC_PER_SEC / HZ - 1) /
//!   (USEC_PER_SEC / HZ)` at HZ 100, 250 and 1000; at 300 the kernel's fixed-point form
//!   from kernel/time/timeconst.bc gives the same ceiling for the values a run produces)
//!   and take u64 where the kernel takes `unsigned int` (the same below 2^32).

/// TCP congestion-avoidance states, `enum tcp_ca_state` (include/net/tcp.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CaState {
    /// Nothing bad has been observed.
    Open = 0,
    /// Duplicate ACKs or SACKs seen; not yet enough to declare loss.
    Disorder = 1,
    /// cwnd being reduced after an ECN echo (or local congestion).
    Cwr = 2,
    /// Fast retransmit / fast recovery.
    Recovery = 3,
    /// Retransmission timeout: everything outstanding is presumed lost.
    Loss = 4,
}

impl CaState {
    pub fn name(self) -> &'static str {
        match self {
            CaState::Open => "Open",
            CaState::Disorder => "Disorder",
            CaState::Cwr => "CWR",
            CaState::Recovery => "Recovery",
            CaState::Loss => "Loss",
        }
    }
}

/// Events announced through `cwnd_event`, `enum tcp_ca_event` (include/net/tcp.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when no packets are in flight (after idle).
    TxStart,
    /// Congestion window restart after idle (RFC 2861).
    CwndRestart,
    /// End of a CWR reduction.
    CompleteCwr,
    /// Retransmission timeout: about to enter Loss.
    Loss,
    /// ECN: ACK without CE.
    EcnNoCe,
    /// ECN: ACK with CE.
    EcnIsCe,
    /// A tail loss probe repaired a loss (`CA_EVENT_TLP_RECOVERY`, added by the
    /// BBRv2/v3 kernels in `tcp_process_tlp_ack`; mainline announces only the CWR).
    TlpRecovery,
}

/// Flags for `in_ack_event`, the kernel's `enum tcp_ca_ack_event_flags`.
pub mod ack_flags {
    /// The ACK was not a pure in-order cumulative advance (SACK, dupack, ...).
    pub const CA_ACK_SLOWPATH: u32 = 1 << 0;
    /// The ACK updated the receive window.
    pub const CA_ACK_WIN_UPDATE: u32 = 1 << 1;
    /// The ACK carried an ECN echo.
    pub const CA_ACK_ECE: u32 = 1 << 2;
}

/// The `flag` bits of `tcp_ack()` as net/ipv4/tcp_input.c (6.18) defines them: what
/// `cong_control_flag` receives.
pub mod tcp_ack_flag {
    /// `FLAG_DATA`: the segment carried data (never: the simulator's ACKs are pure).
    pub const FLAG_DATA: u32 = 0x01;
    /// `FLAG_WIN_UPDATE`: the ACK updated the send window.
    pub const FLAG_WIN_UPDATE: u32 = 0x02;
    /// `FLAG_DATA_ACKED`: new data was cumulatively acknowledged.
    pub const FLAG_DATA_ACKED: u32 = 0x04;
    /// `FLAG_RETRANS_DATA_ACKED`: some of it had been retransmitted.
    pub const FLAG_RETRANS_DATA_ACKED: u32 = 0x08;
    /// `FLAG_SYN_ACKED` (never: no handshake is simulated).
    pub const FLAG_SYN_ACKED: u32 = 0x10;
    /// `FLAG_DATA_SACKED`: new SACK information.
    pub const FLAG_DATA_SACKED: u32 = 0x20;
    /// `FLAG_ECE`: the ACK echoed congestion.
    pub const FLAG_ECE: u32 = 0x40;
    /// `FLAG_LOST_RETRANS`: the ACK marked a retransmission lost.
    pub const FLAG_LOST_RETRANS: u32 = 0x80;
    /// `FLAG_SLOWPATH`: processed on the slow path (not a pure in-order advance).
    pub const FLAG_SLOWPATH: u32 = 0x100;
    /// `FLAG_ORIG_SACK_ACKED`: never-retransmitted data was (s)acked.
    pub const FLAG_ORIG_SACK_ACKED: u32 = 0x200;
    /// `FLAG_SND_UNA_ADVANCED`: snd_una moved.
    pub const FLAG_SND_UNA_ADVANCED: u32 = 0x400;
    /// `FLAG_DSACKING_ACK`: the SACK blocks carried a D-SACK.
    pub const FLAG_DSACKING_ACK: u32 = 0x800;
    /// `FLAG_SET_XMIT_TIMER`: the TLP or RTO timer is to be set.
    pub const FLAG_SET_XMIT_TIMER: u32 = 0x1000;
    /// `FLAG_UPDATE_TS_RECENT`: the slow path stores the timestamp (tcp_replace_ts_recent).
    pub const FLAG_UPDATE_TS_RECENT: u32 = 0x4000;
    /// `FLAG_ACK_MAYBE_DELAYED`: likely a delayed ACK.
    pub const FLAG_ACK_MAYBE_DELAYED: u32 = 0x10000;
    /// `FLAG_DSACK_TLP`: the D-SACK is for the tail loss probe.
    pub const FLAG_DSACK_TLP: u32 = 0x20000;
}

/// One delivery-rate sample, `struct rate_sample` (include/net/tcp.h), produced by the
/// sender's `tcp_rate_gen` on every ACK and passed to `cong_control`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// `tp->delivered_mstamp` when the newest acked packet was sent (us).
    pub prior_mstamp_us: u64,
    /// `tp->delivered` when the newest acked packet was sent.
    pub prior_delivered: u64,
    /// `tp->delivered_ce` when the newest acked packet was sent (BBRv2/v3 tcp_rate.c).
    pub prior_delivered_ce: u64,
    /// `tp->lost` when the newest acked packet was sent (BBRv2/v3 tcp_rate.c).
    pub prior_lost: u64,
    /// Packets in flight just after the newest acked packet was sent, that packet
    /// included (`TCP_SKB_CB(skb)->tx.in_flight`, set by `tcp_set_tx_in_flight` in the
    /// BBRv2/v3 kernels); 0 if there is no sample.
    pub tx_in_flight: u32,
    /// Packets delivered over `interval_us`; negative if there is no valid sample.
    pub delivered: i64,
    /// Of those, packets delivered with a CE mark (`tp->delivered_ce - prior_delivered_ce`).
    pub delivered_ce: i64,
    /// Packets marked lost since the newest acked packet was sent
    /// (`tp->lost - prior_lost`, BBRv2/v3 tcp_rate.c); 0 if there is no sample.
    pub lost: i64,
    /// Interval over which `delivered` was counted (us); -1 if invalid.
    pub interval_us: i64,
    /// Send-side part of the interval (us).
    pub snd_interval_us: u32,
    /// ACK-side part of the interval (us).
    pub rcv_interval_us: u32,
    /// RTT of the newest acked, never-retransmitted packet (us); -1 if none.
    pub rtt_us: i64,
    /// Packets newly marked lost by this ACK.
    pub losses: u32,
    /// Packets newly cumulatively acked or SACKed by this ACK.
    pub acked_sacked: u32,
    /// Packets in flight before this ACK was processed.
    pub prior_in_flight: u32,
    /// The sample was taken while the application, not the network, limited sending.
    pub is_app_limited: bool,
    /// The sample's packet was a retransmission.
    pub is_retrans: bool,
    /// The receiver probably delayed this ACK.
    pub is_ack_delayed: bool,
    /// This ACK carried an ECN echo (`FLAG_ECE`).
    pub is_ece: bool,
}

/// What `skb_marked_lost` may read of a segment just marked lost: the snapshot its
/// (latest) transmission took (`TCP_SKB_CB(skb)->tx`, tcp_rate.c of the BBRv2/v3 kernels)
/// and its size (`tcp_skb_pcount`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LostSkb {
    /// `tx.in_flight`: packets in flight just after this segment was sent, it included.
    pub tx_in_flight: u32,
    /// `tx.lost`: `tp->lost` when it was sent.
    pub tx_lost: u64,
    /// `tx.is_app_limited`.
    pub tx_is_app_limited: bool,
    /// `tx.delivered_mstamp != 0`: the snapshot is still valid (the kernel zeroes it
    /// once the segment was SACKed and its sample taken).
    pub tx_valid: bool,
    /// `tcp_skb_pcount(skb)`: segments in it (always 1 here).
    pub pcount: u32,
}

/// Per-ACK sample for `pkts_acked`, `struct ack_sample` (include/net/tcp.h).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckSample {
    /// Segments newly acknowledged (cumulatively or by SACK).
    pub pkts_acked: u32,
    /// RTT of this ACK (us), from a never-retransmitted segment (Karn); -1 if none.
    pub rtt_us: i64,
    /// The kernel's `in_flight` (net/ipv4/tcp_input.c, `tcp_clean_rtx_queue`:
    /// `sample.in_flight = tp->mss_cache * (tp->delivered - sack->rate->prior_delivered)`):
    /// bytes delivered since the most recently sent segment this ACK (s)acks was sent,
    /// this ACK's included, i.e. data delivered during that segment's RTT. u32 arithmetic
    /// as the kernel's (wraps as it does). `prior_delivered` is 0 when the ACK (s)acks no
    /// segment with a send snapshot (tcp_ack's `rs = { .prior_delivered = 0 }`), and then
    /// this is mss * all delivered, as in the kernel.
    pub in_flight: u32,
    /// Packets in flight before this ACK (`tcp_packets_in_flight` when tcp_ack starts).
    /// Not a kernel field: the seam's own, for algorithms whose reference reads the
    /// flight size (LEDBAT's, RFC 6817 / ns-3); BPF programs do not see it.
    pub prior_in_flight: u32,
}

/// The socket fields an algorithm may read or set: the part of `struct tcp_sock` /
/// `struct sock` that the kernel's congestion-control modules touch. The sender owns one
/// per flow, keeps it current, and reads back `snd_cwnd`, `snd_ssthresh`, `snd_cwnd_cnt`,
/// `pacing_rate`, `pacing_needed` and `app_limited` after every hook (BBR's PROBE_RTT
/// sets `app_limited` so its low-rate samples do not pull the bw estimate down).
#[derive(Clone, Debug, PartialEq)]
pub struct CcView {
    /// `tp->tcp_mstamp`: the time of the event being processed (us).
    pub now_us: u64,
    /// `tp->snd_cwnd` (segments).
    pub snd_cwnd: u32,
    /// `tp->snd_ssthresh` (segments). `TCP_INFINITE_SSTHRESH` until the first reduction.
    pub snd_ssthresh: u32,
    /// `tp->snd_cwnd_cnt`: linear-increase counter.
    pub snd_cwnd_cnt: u32,
    /// `tp->snd_cwnd_clamp`: hard upper bound on cwnd.
    pub snd_cwnd_clamp: u32,
    /// `tp->snd_cwnd_stamp` (us): when cwnd was last validated/changed by the sender.
    pub snd_cwnd_stamp_us: u64,
    /// `tp->lsndtime` (us): when data was last sent. The sender updates it after every
    /// transmission, so while `CaEvent::TxStart` is announced it still holds the previous
    /// send time (`tcp_event_data_sent`); CUBIC measures the idle period from it.
    pub lsndtime_us: u64,
    /// `tp->prior_cwnd`: cwnd when the current reduction (CWR/Recovery/Loss) started.
    pub prior_cwnd: u32,
    /// `tp->prior_ssthresh`: ssthresh saved for undo.
    pub prior_ssthresh: u32,
    /// `tp->mss_cache`: payload bytes per segment.
    pub mss_cache: u32,
    /// `tp->packets_out`: segments sent and not cumulatively acked.
    pub packets_out: u32,
    /// `tp->sacked_out`: segments SACKed.
    pub sacked_out: u32,
    /// `tp->lost_out`: segments marked lost.
    pub lost_out: u32,
    /// `tp->retrans_out`: retransmitted segments still in flight.
    pub retrans_out: u32,
    /// `tp->max_packets_out`: the most packets out in the last window (for cwnd validation).
    pub max_packets_out: u32,
    /// `tp->is_cwnd_limited`: the last window was limited by cwnd, not by the application.
    pub is_cwnd_limited: bool,
    /// `tp->snd_una` (segments).
    pub snd_una: u64,
    /// `tp->snd_nxt` (segments).
    pub snd_nxt: u64,
    /// `tp->delivered`: total segments delivered (cumulatively acked or SACKed).
    pub delivered: u64,
    /// `tp->delivered_mstamp` (us): when `delivered` last changed.
    pub delivered_mstamp_us: u64,
    /// `tp->lost`: total segments marked lost.
    pub lost: u64,
    /// `tp->delivered_ce`: total segments delivered with a CE mark echoed (ECN).
    pub delivered_ce: u64,
    /// `tp->ecn_flags & TCP_ECN_OK`: ECN was negotiated for this connection.
    pub ecn_ok: bool,
    /// `tp->app_limited`: nonzero while the delivery-rate samples are app-limited
    /// (the `delivered` value that ends the app-limited period).
    pub app_limited: u64,
    /// Smoothed RTT (us, not shifted; see module docs). 0 before the first sample.
    pub srtt_us: u32,
    /// `tcp_min_rtt(tp)`: windowed minimum RTT (us); `u32::MAX` before the first sample.
    pub min_rtt_us: u32,
    /// `icsk_ca_state`.
    pub ca_state: CaState,
    /// `sk->sk_pacing_rate` (bytes per second).
    pub pacing_rate: u64,
    /// `sk->sk_max_pacing_rate` (bytes per second).
    pub max_pacing_rate: u64,
    /// `sk->sk_pacing_status == SK_PACING_NEEDED`: the sender spaces departures at
    /// `pacing_rate` (the kernel's internal TCP pacing). Algorithms that pace set it in
    /// `init`, as BBR does.
    pub pacing_needed: bool,
    /// `tp->tcp_wstamp_ns`: earliest departure time of the next segment (ns), as the
    /// sender's internal pacing (`tcp_update_skb_after_send`) last set it; 0 before the
    /// first send. Read-only for algorithms (BBR's `bbr_packets_in_net_at_edt`).
    pub tcp_wstamp_ns: u64,
    /// Receiver side (the receiving socket's view, for `CaEvent::EcnIsCe` /
    /// `CaEvent::EcnNoCe`, which `tcp_ecn_check_ce` raises on the host that receives
    /// data): `tp->rcv_nxt` after the segment being processed.
    pub rcv_nxt: u64,
    /// `tp->ecn_flags & TCP_ECN_DEMAND_CWR`: ACKs carry ECE while set.
    pub ecn_demand_cwr: bool,
    /// `icsk_ack.pending & ICSK_ACK_TIMER`: a delayed ACK is pending.
    pub ack_timer_pending: bool,
    /// Set by the algorithm to ACK at once (`icsk_ack.pending |= ICSK_ACK_NOW`).
    pub ack_now: bool,
    /// Set by the algorithm to send an ACK right away for (ack, ECE) before the current
    /// segment's (`__tcp_send_ack(sk, prior_rcv_nxt)` in `dctcp_ece_ack_update`).
    pub send_ack: Option<(u64, bool)>,
    /// `tp->tlp_orig_data_app_limited`: the segment the last tail loss probe
    /// retransmitted had been sent app-limited (BBRv2/v3 kernels; read on
    /// `CaEvent::TlpRecovery`).
    pub tlp_orig_data_app_limited: bool,
    /// `tp->high_seq` (segments): snd_nxt when the current CWR, Recovery or Loss episode
    /// began; the episode ends once snd_una passes it.
    pub high_seq: u64,
    /// `tp->prr_delivered`, `tp->prr_out` (segments): PRR's counts in the current
    /// reduction (RFC 6937, tcp_cwnd_reduction), delivered and sent since it began.
    pub prr_delivered: u32,
    pub prr_out: u32,
    /// `tp->reordering` (segments): the reordering degree seen, DupThresh for loss
    /// marking (net.ipv4.tcp_reordering = 3 at first, raised by tcp_check_sack_reordering).
    pub reordering: u32,
    /// The simulated kernel's CONFIG_HZ (one of [`ALLOWED_HZ`]): how fast
    /// [`CcView::jiffies32`] ticks. Read-only for algorithms; they convert with it where
    /// the kernel uses `HZ` (`msecs_to_jiffies`, `usecs_to_jiffies`, `x * HZ`).
    pub hz: u32,
}

/// CONFIG_HZ when the configuration does not choose (`[tcp] hz`): 1000, a tick per
/// millisecond, what tcplab's jiffies always ran at, so results stay comparable with
/// every stored run. Distribution kernels differ (Debian/Ubuntu 250, Fedora/RHEL 1000).
pub const DEFAULT_HZ: u32 = 1000;
/// The CONFIG_HZ values a kernel may be built with (kernel/Kconfig.hz).
pub const ALLOWED_HZ: [u32; 4] = [100, 250, 300, 1000];

/// `usecs_to_jiffies` (include/linux/jiffies.h): rounds up to whole jiffies.
pub fn usecs_to_jiffies(us: u64, hz: u32) -> u64 {
    us.saturating_mul(u64::from(hz)).div_ceil(1_000_000)
}

/// `msecs_to_jiffies` (include/linux/jiffies.h): rounds up to whole jiffies.
pub fn msecs_to_jiffies(ms: u32, hz: u32) -> u32 {
    (u64::from(ms) * u64::from(hz)).div_ceil(1000) as u32
}

/// `jiffies_to_usecs` (kernel/time/time.c): rounds down (exact unless HZ = 300).
pub fn jiffies_to_usecs(j: u64, hz: u32) -> u64 {
    j.saturating_mul(1_000_000) / u64::from(hz)
}

/// The 32-bit jiffies clock at `us` microseconds of simulated time. (Read on every ACK
/// by BBR's min_rtt filter: a 64-bit division when the product fits, which it does for
/// any run shorter than 500 years at HZ 1000; the 128-bit one, a library call, only
/// past that. The same answer either way.)
pub fn jiffies32_at(us: u64, hz: u32) -> u32 {
    match us.checked_mul(u64::from(hz)) {
        Some(p) => (p / 1_000_000) as u32,
        None => (u128::from(us) * u128::from(hz) / 1_000_000) as u32,
    }
}

/// `TCP_INFINITE_SSTHRESH` (include/net/tcp.h).
pub const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;
/// `TCP_INIT_CWND` (include/net/tcp.h), RFC 6928.
pub const TCP_INIT_CWND: u32 = 10;
/// `sysctl_tcp_reordering`'s default, `TCP_FASTRETRANS_THRESH` (include/net/tcp.h): a
/// fresh socket's `tp->reordering`.
pub const TCP_REORDERING: u32 = 3;

impl CcView {
    /// A fresh socket as `tcp_init_sock` leaves it: cwnd 10, infinite ssthresh, no RTT.
    pub fn new(mss: u32, now_us: u64) -> Self {
        CcView {
            now_us,
            snd_cwnd: TCP_INIT_CWND,
            snd_ssthresh: TCP_INFINITE_SSTHRESH,
            snd_cwnd_cnt: 0,
            snd_cwnd_clamp: u32::MAX,
            snd_cwnd_stamp_us: now_us,
            lsndtime_us: now_us,
            prior_cwnd: 0,
            prior_ssthresh: 0,
            mss_cache: mss,
            packets_out: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            max_packets_out: 0,
            is_cwnd_limited: false,
            snd_una: 0,
            snd_nxt: 0,
            delivered: 0,
            delivered_mstamp_us: now_us,
            lost: 0,
            delivered_ce: 0,
            ecn_ok: false,
            app_limited: 0,
            srtt_us: 0,
            min_rtt_us: u32::MAX,
            ca_state: CaState::Open,
            pacing_rate: 0,
            max_pacing_rate: u64::MAX,
            pacing_needed: false,
            tcp_wstamp_ns: 0,
            rcv_nxt: 0,
            ecn_demand_cwr: false,
            ack_timer_pending: false,
            ack_now: false,
            send_ack: None,
            tlp_orig_data_app_limited: false,
            high_seq: 0,
            prr_delivered: 0,
            prr_out: 0,
            reordering: TCP_REORDERING,
            hz: DEFAULT_HZ,
        }
    }

    /// `tcp_jiffies32`: the jiffies clock now, ticking at `hz`.
    pub fn jiffies32(&self) -> u32 {
        jiffies32_at(self.now_us, self.hz)
    }
}

/// A value an algorithm reports through `info()` for recording.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum InfoValue {
    Num(f64),
    Label(&'static str),
}

/// One named internal value; names are snake_case with their unit as suffix
/// (`btlbw_bps`, `min_rtt_ms`), and the recorder prefixes them with `cc_`.
pub type InfoField = (&'static str, InfoValue);

/// The kernel's `struct tcp_congestion_ops`. Optional hooks default to doing nothing, as a
/// NULL pointer does in the kernel; `ssthresh` is mandatory there and here.
///
/// Call order on an ACK, as in `tcp_ack()` (net/ipv4/tcp_input.c): `pkts_acked` from
/// `tcp_clean_rtx_queue`, then `in_ack_event`, then either `cong_control(rs)` when
/// `has_cong_control()` is true, or the sender's own cwnd path (`cong_avoid` when not
/// reducing, PRR while in CWR/Recovery). `set_state` is called before the state changes,
/// `ssthresh` when a reduction starts, `undo_cwnd` when a reduction is undone.
pub trait CongestionOps: Send {
    /// The registry name (`"cubic"`, `"bbr"`, ...).
    fn name(&self) -> &'static str;

    /// `init`: the connection starts; an algorithm sets its own fields and may set
    /// `pacing_needed`.
    fn init(&mut self, _tp: &mut CcView) {}

    /// `ssthresh`: the slow-start threshold to use after a loss (segments).
    fn ssthresh(&mut self, tp: &CcView) -> u32;

    /// `cong_avoid`: grow cwnd on an ACK that newly acknowledged `acked` segments,
    /// `ack` being the new `snd_una`. Not called while the sender reduces cwnd.
    fn cong_avoid(&mut self, _tp: &mut CcView, _ack: u64, _acked: u32) {}

    /// `set_state`: the CA state is about to become `new_state` (`tp.ca_state` still
    /// holds the old one).
    fn set_state(&mut self, _tp: &mut CcView, _new_state: CaState) {}

    /// `cwnd_event`.
    fn cwnd_event(&mut self, _tp: &mut CcView, _ev: CaEvent) {}

    /// `in_ack_event`, with `ack_flags`.
    fn in_ack_event(&mut self, _tp: &mut CcView, _flags: u32) {}

    /// `pkts_acked`: RTT and count of newly acknowledged segments.
    fn pkts_acked(&mut self, _tp: &mut CcView, _sample: &AckSample) {}

    /// `TCP_CONG_NEEDS_ECN`: the algorithm requests ECN on its connections (DCTCP) and
    /// receives `CaEvent::EcnIsCe` / `EcnNoCe` on the receiving side; its segments,
    /// retransmissions and ACKs included, are sent ECN-capable.
    fn needs_ecn(&self) -> bool {
        false
    }

    /// `TCP_CONG_WANTS_CE_EVENTS` (the BBRv2/v3 kernels): on an ECN connection the
    /// receiving side gets `CaEvent::EcnIsCe` / `EcnNoCe` as with `needs_ecn`, without the
    /// algorithm requesting ECN itself (`tcp_ca_wants_ce_events`).
    fn wants_ce_events(&self) -> bool {
        false
    }

    /// True if the algorithm implements `cong_control` and so owns cwnd and pacing
    /// entirely (BBR); the sender then skips `cong_avoid` and PRR.
    fn has_cong_control(&self) -> bool {
        false
    }

    /// `cong_control`: called on every ACK with the delivery-rate sample.
    fn cong_control(&mut self, _tp: &mut CcView, _rs: &RateSample) {}

    /// `cong_control` as tcp_cong_control calls it (Linux >= 6.10): also with the `flag`
    /// bits tcp_ack collected for this ACK (`tcp_ack_flag`), which BPF programs test
    /// (`tcp_may_raise_cwnd(sk, flag)`). The sender calls this one; the default passes
    /// on to `cong_control` (the native algorithms do not read `flag`).
    fn cong_control_flag(&mut self, tp: &mut CcView, rs: &RateSample, _flag: u32) {
        self.cong_control(tp, rs)
    }

    /// `release`: the socket is destroyed (tcp_cleanup_congestion_control, from
    /// tcp_v4_destroy_sock). Called once, when a finite flow's data is all acknowledged
    /// or when the run ends.
    fn release(&mut self, _tp: &mut CcView) {}

    /// `skb_marked_lost`: the sender has just marked one segment lost and counted it in
    /// `tp.lost` (`tcp_mark_skb_lost` / RFC 6675 marking, also on RTO; the BBRv2/v3
    /// kernels' hook, called from `tcp_sum_lost`). BBRv3 checks there whether the loss
    /// rate of the flight that segment belonged to was too high.
    fn skb_marked_lost(&mut self, _tp: &CcView, _skb: &LostSkb) {}

    /// `undo_cwnd`: the cwnd to restore when a reduction proves spurious. The kernel's
    /// default is `tcp_reno_undo_cwnd`: max(cwnd, prior_cwnd).
    fn undo_cwnd(&mut self, tp: &CcView) -> u32 {
        tp.snd_cwnd.max(tp.prior_cwnd)
    }

    /// Internal values for recording (the spirit of `get_info`).
    fn info(&self) -> Vec<InfoField> {
        Vec::new()
    }

    /// An error that made the algorithm stop working, if any: the native algorithms
    /// cannot fail, but a loaded BPF program can (crates/bpf: an out-of-bounds access,
    /// its instruction budget). The engine checks it and stops the run with the message.
    fn fault(&self) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod jiffies_tests {
    use super::*;

    #[test]
    fn jiffies_tick_at_the_simulated_hz() {
        let mut tp = CcView::new(1448, 1_000_000);
        assert_eq!(tp.jiffies32(), 1000); // the default, HZ = 1000
        tp.hz = 250;
        assert_eq!(tp.jiffies32(), 250); // 1.000 s at 250 Hz
        tp.now_us = 999_999;
        assert_eq!(tp.jiffies32(), 249); // a tick is 4 ms: 999.999 ms is still tick 249
        tp.hz = 300;
        tp.now_us = 10_000;
        assert_eq!(tp.jiffies32(), 3); // 10 ms x 300 / 1000 = 3
    }

    #[test]
    fn conversions_round_as_the_kernel() {
        // msecs_to_jiffies / usecs_to_jiffies round up, jiffies_to_usecs down.
        assert_eq!(msecs_to_jiffies(200, 250), 50);
        assert_eq!(msecs_to_jiffies(201, 250), 51);
        assert_eq!(msecs_to_jiffies(10, 300), 3);
        assert_eq!(msecs_to_jiffies(200, 1000), 200);
        assert_eq!(usecs_to_jiffies(1, 250), 1);
        assert_eq!(usecs_to_jiffies(4_000, 250), 1);
        assert_eq!(usecs_to_jiffies(4_001, 250), 2);
        assert_eq!(jiffies_to_usecs(1, 250), 4_000);
        assert_eq!(jiffies_to_usecs(1, 300), 3_333);
    }

    /// A minimum RTT turned into jiffies (`usecs_to_jiffies`, as H-TCP's `measure_rtt`
    /// and CUBIC's `t += usecs_to_jiffies(delay_min)` do) rounds up, so 1 us past a
    /// whole tick is one tick more. By hand, ceil(us x HZ / 10^6):
    /// 10 000 us: 10 (1000 Hz), 2.5 -> 3 (250), 3.0 -> 3 (300), 1 (100);
    /// 10 001 us: 10.001 -> 11, 2.50025 -> 3, 3.0003 -> 4, 1.0001 -> 2.
    #[test]
    fn a_min_rtt_one_microsecond_past_a_tick_is_one_tick_more() {
        for (hz, at_10ms, at_10_001ms) in [(1000, 10, 11), (250, 3, 3), (300, 3, 4), (100, 1, 2)] {
            assert_eq!(usecs_to_jiffies(10_000, hz), at_10ms, "HZ {hz}");
            assert_eq!(usecs_to_jiffies(10_001, hz), at_10_001ms, "HZ {hz}");
        }
        // msecs_to_jiffies of whole ms: 10 ms at 250 Hz is 2.5 ticks -> 3; at 300, 3.
        assert_eq!(msecs_to_jiffies(10, 250), 3);
        assert_eq!(msecs_to_jiffies(10, 300), 3);
        assert_eq!(msecs_to_jiffies(11, 300), 4); // 3.3 -> 4
                                                  // Zero stays zero (the kernel's (0 + 4000 - 1) / 4000 = 0 at 250 Hz).
        assert_eq!(usecs_to_jiffies(0, 250), 0);
        assert_eq!(msecs_to_jiffies(0, 250), 0);
    }

    /// The clock's phase: tick k starts at exactly k / HZ s of simulated time, tick 0 at
    /// time 0 (the kernel's ticks have an arbitrary phase against a flow's packets and
    /// start at INITIAL_JIFFIES; the module's Deviations). At 250 Hz a tick is 4 ms:
    /// 3.999 ms is tick 0, 4.000 ms tick 1; at 300 Hz ticks start at 10/3 ms, so
    /// 3.333 ms is still tick 0 and 3.334 ms tick 1.
    #[test]
    fn ticks_start_at_multiples_of_one_over_hz_from_time_zero() {
        assert_eq!(jiffies32_at(0, 250), 0);
        assert_eq!(jiffies32_at(3_999, 250), 0);
        assert_eq!(jiffies32_at(4_000, 250), 1);
        assert_eq!(jiffies32_at(3_333, 300), 0);
        assert_eq!(jiffies32_at(3_334, 300), 1);
        assert_eq!(jiffies32_at(999, 1000), 0);
        assert_eq!(jiffies32_at(1_000, 1000), 1);
        // tcp_jiffies32 wraps at 2^32 ticks: 2^32 ms at 1000 Hz reads 0 again.
        assert_eq!(jiffies32_at((1u64 << 32) * 1000, 1000), 0);
        // Past 2^64 / HZ microseconds the product needs 128 bits: u64::MAX us at 1000 Hz
        // is 18,446,744,073,709,551 ticks, whose low 32 bits are 1,271,310,319.
        assert_eq!(jiffies32_at(u64::MAX, 1000), 1_271_310_319);
    }
}
