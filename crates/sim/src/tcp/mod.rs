//! TCP, modelled on Linux: a sender (output, ACK input, loss recovery, RTO) driving a
//! `CongestionOps` algorithm through the kernel's hooks, and a receiver with cumulative
//! ACKs, SACK and delayed ACKs.
//!
//! What is modelled (and from where):
//! - MSS-sized segments; sequence numbers count segments (`tcplab_cc::ops` docs). Wire
//!   size = payload + `header_bytes` (52: IP, TCP, timestamp option).
//! - Initial cwnd 10 (`TCP_INIT_CWND`), infinite ssthresh, RTO 1 s until the first RTT.
//! - SACK scoreboard; loss detection by RACK (RFC 8985, tcp_recovery.c, Linux's
//!   default; see [`rack`]) or, with `tcp.rack = false`, RFC 6675 `IsLost` marking (a
//!   hole is lost once 3 segments above it are SACKed, DupThresh = `tp->reordering` =
//!   3). Entry into Recovery as `tcp_time_to_recover` (lost_out > 0, or without RACK
//!   also sacked_out + 1 > reordering); fast retransmit of lost segments before new data
//!   (`tcp_xmit_retransmit_queue`). Under an old kernel profile (`tcp.kernel` 409 to
//!   417) loss detection is that release's: the duplicate-ACK threshold (FACK) beside
//!   RACK before 4.18, and v4.9's RACK only in recovery without its timer ([`recovery`],
//!   [`rack`]); so is the rate sample's choice of segment before 5.18 ([`rate`]).
//! - CA states Open / Disorder / Recovery / Loss driven by the sender as in
//!   `tcp_fastretrans_alert`, each change announced through `set_state` before
//!   `icsk_ca_state` changes (`tcp_set_ca_state`). CWR on an ECN echo (below).
//! - ECN (RFC 3168, tcp_input.c / tcp_output.c / tcp_ecn.h), when the spec turns it on
//!   (`tcp.ecn`, a flow's `ecn`) or the algorithm needs it (`needs_ecn`,
//!   `TCP_CONG_NEEDS_ECN`): new data is ECT(0), retransmissions Not-ECT unless the
//!   algorithm needs ECN (`tcp_ecn_send`); an ACK with ECE is `FLAG_ECE`: everything it
//!   delivers counts in `delivered_ce` (`tcp_count_delivered`), `in_ack_event` gets
//!   `CA_ACK_ECE`, the rate sample `is_ece`, and in Open/Disorder the sender enters CWR
//!   (`tcp_try_to_open` -> `tcp_enter_cwr`: `ssthresh`, `set_state(CWR)`, PRR down to
//!   ssthresh, no undo); CWR ends once an ACK passes `high_seq` (`tcp_end_cwnd_reduction`).
//!   Every reduction (CWR, Recovery, Loss) sets CWR on the next new segment
//!   (`tcp_ecn_queue_cwr`). The receiver echoes CE as RFC 3168 (`TCP_ECN_DEMAND_CWR`: ECE
//!   on every ACK from a CE segment until one with CWR, which is ACKed at once; quick ACKs
//!   after CE, `tcp_ecn_check_ce`), or for an algorithm that needs ECN, as its receiving
//!   instance's `cwnd_event(EcnIsCe / EcnNoCe)` says (DCTCP: ECE exactly on the ACKs of
//!   CE segments, an immediate ACK on every CE change).
//! - Recovery cwnd for algorithms without `cong_control`: PRR (RFC 6937,
//!   `tcp_cwnd_reduction`), cwnd = ssthresh when Recovery ends
//!   (`tcp_end_cwnd_reduction`); `cong_avoid` on ACKs that advance snd_una outside
//!   CWR/Recovery (`tcp_cong_control` + `tcp_may_raise_cwnd`; this includes Loss, which
//!   is how cwnd slow-starts back after an RTO). Algorithms with `cong_control` get it on
//!   every ACK and nothing else touches cwnd.
//! - RTO (`tcp_retransmit_timer` / `tcp_enter_loss`): every un-SACKed segment marked
//!   lost (with RACK, except those sent less than rack.rtt ago, as
//!   `tcp_timeout_mark_lost`), ssthresh from the algorithm, cwnd = in_flight + 1, state
//!   Loss, head retransmitted, RTO backed off. In Loss, a retransmission RACK finds lost
//!   again moves the sender to Recovery (`FLAG_LOST_RETRANS`).
//! - F-RTO and RTO undo ([`rto`], `tcp_process_loss`, `tcp_try_undo_loss`; `tcp.frto`,
//!   on by default as `tcp_frto` = 2, RFC 5682's SACK-enhanced version): a timeout that
//!   reduces ssthresh is undoable (`tcp_init_undo`); in Loss an ACK that advances
//!   snd_una undoes it when `tcp_may_undo` (all retransmissions D-SACKed, or the Eifel
//!   timestamp test), and with F-RTO one that (s)acks never-retransmitted data sent
//!   before the timeout does (`FLAG_ORIG_SACK_ACKED`, step 3.b); undo = lost marks
//!   cleared, cwnd = `undo_cwnd`, ssthresh = `prior_ssthresh` if larger, Open. The first
//!   ACK that advances snd_una short of `high_seq` sends new data instead of
//!   retransmissions (step 2.b, `REXMIT_NEW`); a duplicate ACK or SACK after that ends
//!   F-RTO (step 3.a) and recovery goes on conventionally. Once everything sent before
//!   the timeout is acked, `tcp_try_undo_recovery`.
//! - RTT samples (`tcp_clean_rtx_queue`, `tcp_ack_update_rtt`): from the send times of
//!   never-retransmitted segments (Karn), else from the timestamp option when the ACK
//!   advances snd_una (RFC 7323 RTTM: `tcp_rtt_tsopt_us`, whole milliseconds, at least
//!   1): an ACK of retransmitted data echoes the retransmission's TSval (the
//!   receiver's `ts_recent`, [`receiver`]), and that sample feeds srtt, min_rtt and the
//!   algorithm's ca_rtt alike.
//! - `pkts_acked` on every ACK with `AckSample { pkts_acked: segments cumulatively
//!   acked, rtt_us: RTT of the newest (s)acked never-retransmitted segment, or the
//!   timestamp sample above (ca_rtt),
//!   in_flight: mss * (delivered - the rate sample's prior_delivered) in bytes, as
//!   tcp_clean_rtx_queue computes it, prior_in_flight: packets in flight before the
//!   ACK (the seam's own field, for LEDBAT) }`.
//! - Reordering ([`reorder`]): D-SACK (RFC 2883) from the receiver, `tp->reordering`
//!   and `reord_seen` from `tcp_check_sack_reordering`, RACK's D-SACK-widened window.
//! - Receiver ([`receiver`]): cumulative ACK + up to 3 SACK blocks (a D-SACK first), delayed ACKs (every
//!   2nd full segment or Linux's adaptive `ato`, 40 ms for bulk data; [`delack`]),
//!   quick-ACK mode for the first 16 segments and after a gap longer than the RTO, immediate
//!   ACKs for filled holes and duplicates; ACKs for out-of-order data under SACK
//!   compression ([`sack_compress`], `tcp.sack_compression`, default on as in Linux
//!   since 4.18): 3 immediate per value of rcv_nxt, then up to 44 withheld for
//!   min(1 ms, RTT / 20) (`__tcp_ack_snd_check`, `tcp_compressed_ack_kick`).
//! - Receive window ([`rcv_space`], `tcp.receive_buffer = "linux"`, the default): every
//!   ACK advertises `__tcp_select_window`'s offer, which never shrinks; the sender sends
//!   new data only inside snd_una + snd_wnd (`tcp_snd_wnd_test`, starting from the
//!   SYN-ACK's 65160 bytes), a window-limited sender is not application-limited, and the
//!   time it waits is `tcpi_rwnd_limited` (`rwnd_limited_ns`). A tail loss probe sends
//!   new data only inside the window, else the last segment again.
//! - Delivery-rate samples as tcp_rate.c ([`rate`]); cwnd validation
//!   (`tcp_cwnd_validate`: is_cwnd_limited, max_packets_out).
//! - Internal pacing (`tcp_update_skb_after_send`, `tcp_pacing_check`) when the
//!   algorithm sets `pacing_needed`; otherwise `sk_pacing_rate` is computed as
//!   `tcp_update_pacing_rate` does (200 % / 120 % of cwnd/srtt) for recording only.
//!
//! Deviations from Linux (simplifications, on purpose):
//! - The handshake is a delay, not packets (`tcp.handshake`, on by default since 0.5.0):
//!   the connection is established one round trip after the application starts: the
//!   path's header-only round trip (propagation and serialization) plus the wait behind
//!   what each queue of the round trip holds at that moment (the world's `Handshake`; on a
//!   trace-driven link the segment leaves at the trace's next delivery opportunity behind
//!   the backlog, `Link::trace_departure`, as a real SYN or SYN-ACK does),
//!   and that round trip is the SYN-ACK's RTT sample (srtt, RTO, min_rtt) before the
//!   algorithm's `init`, as in `tcp_rcv_synsent_state_process` -> `tcp_init_transfer`.
//!   So a flow joining a standing queue starts with that queue in its min_rtt, as a
//!   Linux client does. No SYN or SYN-ACK crosses the links: the queues do not change
//!   while they would be in it, and the options are not negotiated (ECN below; SACK,
//!   timestamps and window scale always on). Since 0.12.0 the SYN is lost when a link
//!   of the round trip is full or its random loss strikes, at the moment it is sent,
//!   and is sent again on Linux's SYN timers; the lost SYNs' ssthresh and cwnd carry
//!   into the connection (world/handshake.rs; docs/FIDELITY.md, finding 30).
//!   `tcp.handshake = false` starts the data at the application's start with no RTT
//!   known (cwnd 10, RTO 1 s), the model before 0.5.0.
//! - No TSO/GSO (each segment is its own packet), no TSQ (the sender hands packets to
//!   its access link at once; a slow access link queues them there), no fq qdisc.
//! - Tail loss probe ([`tlp`], `tcp.tlp`, on by default as `tcp_early_retrans` = 3):
//!   an ACK with nothing outstanding (`tcp_ack`'s no_queue) is not shown to it, so a
//!   probe D-SACKed after everything was acked only clears at the next probe.
//! - Undo ([`reorder`]) of a spurious fast recovery (D-SACK, `tcp_try_undo_dsack`, and
//!   the Eifel timestamp test at the end of Recovery, `tcp_try_undo_recovery`) and of a
//!   spurious RTO (`tcp_try_undo_loss`, F-RTO, since 0.5.1); no partial-ACK undo in
//!   Recovery (`tcp_try_undo_partial`). `tcp_packet_delayed` is the test without its
//!   6.10 addition (an episode with no retransmission, `retrans_stamp` = 0, counts as
//!   delayed); an RTO always retransmits, so this only matters to fast recovery. No
//!   non-SACK (Reno dupack) F-RTO variant: SACK is always on.
//! - SACK compression's RTT is the flow's handshake-like base RTT fixed at build time
//!   (no timestamp echo, so no `rcv_rtt_est`; see [`receiver`]), and its timer fires
//!   without the kernel's 100 us hrtimer slack.
//! - ECN has no handshake (the peer always agrees, no SYN/SYN-ACK negotiation, no
//!   fallback) and no AccECN; ECN-setup and retransmitted-SYN rules do not apply. Senders
//!   use ECT(0) only (ECT(1) is L4S's codepoint; queues treat both as ECN-capable). No
//!   idle cwnd restart (`tcp_cwnd_restart`) and no `tcp_cwnd_application_limited` decay.
//! - No zero-window probes: a sender with nothing in flight may always send one segment
//!   (the receiver's window never closes then; see `Sender::in_peer_window`).
//! - Hook order on an ACK follows the seam contract (`tcplab_cc::ops`) and current Linux
//!   (where `tcp_in_ack_event` runs after `tcp_clean_rtx_queue`): `pkts_acked`, then
//!   `in_ack_event`, then state processing (`set_state`, `ssthresh`), then
//!   `cong_control` or `cong_avoid`/PRR. Older kernels called `in_ack_event` before
//!   `tcp_clean_rtx_queue`.

pub mod delack;
pub mod pacing;
pub mod rack;
pub mod rate;
pub mod rcv_space;
pub mod receiver;
pub mod rtt;
pub mod sack_compress;
pub mod scoreboard;
pub mod sender;

mod input;
mod output;
mod recovery;
pub mod reorder;
mod rto;
mod tlp;

use crate::net::Packet;
use crate::time::SimTime;

/// Which sender timer an event belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SenderTimer {
    Rto,
    Pacing,
    /// RACK's reordering timeout.
    Reo,
}

/// What a sender call produced: packets for its access link, timer entries to schedule.
#[derive(Default)]
pub struct SenderIo {
    pub out: Vec<Packet>,
    pub timers: Vec<(SimTime, SenderTimer, u32)>,
}

impl SenderIo {
    pub fn arm(&mut self, entry: Option<(SimTime, u32)>, kind: SenderTimer) {
        if let Some((t, g)) = entry {
            self.timers.push((t, kind, g));
        }
    }
}
