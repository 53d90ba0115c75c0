//! HyStart, CUBIC's hybrid slow start (Ha and Rhee, "Taming the Elephants: New TCP Slow
//! Start", 2008), as net/ipv4/tcp_cubic.c runs it: `bictcp_hystart_reset`,
//! `hystart_update`, `hystart_ack_delay`.
//!
//! Slow start ends early (ssthresh := cwnd) when, within one round (a window of data,
//! bounded by `end_seq = snd_nxt` at the round's start), either
//! - ACK train: closely spaced ACKs (each within `hystart_ack_delta_us` of the previous)
//!   keep arriving for longer than half the minimum RTT after the round started, meaning
//!   the pipe is full; or
//! - delay: after `HYSTART_MIN_SAMPLES` RTT samples, the round's minimum RTT exceeds
//!   `delay_min` (the flow's minimum) by `clamp(delay_min / 8, 4 ms, 16 ms)`.
//!
//! Rounds are tracked from the first ACK of the connection; detection runs only once
//! cwnd >= `hystart_low_window` (16). This is the order since Linux 6.14 ("tcp_cubic:
//! fix incorrect HyStart round start detection", in 6.18): before it, no round began
//! below cwnd 16, so rounds did not line up with the flights and an ACK train that
//! starts a flight could fall into the previous round, whose first gap ends it.
//!
//! The clock is `tcp_mstamp` truncated to 32 bits of microseconds, as in the kernel
//! (`bictcp_clock_us`); comparisons wrap the same way.

use crate::helpers::after;
use crate::ops::CcView;

/// `HYSTART_ACK_TRAIN`: bit of `hystart_detect` enabling ACK-train detection.
pub const HYSTART_ACK_TRAIN: u32 = 0x1;
/// `HYSTART_DELAY`: bit of `hystart_detect` enabling delay-increase detection.
pub const HYSTART_DELAY: u32 = 0x2;
/// `HYSTART_MIN_SAMPLES`: RTT samples per round before its minimum is trusted.
pub const HYSTART_MIN_SAMPLES: u8 = 8;
/// `HYSTART_DELAY_MIN` (us): smallest RTT increase that ends slow start (4 ms).
pub const HYSTART_DELAY_MIN: u32 = 4000;
/// `HYSTART_DELAY_MAX` (us): largest RTT increase required (16 ms).
pub const HYSTART_DELAY_MAX: u32 = 16000;
/// `sk->sk_gso_max_size` (bytes). tcplab sends single-MSS segments with no GSO/TSO, and
/// Linux leaves this 0 on a route that cannot do GSO, which makes `hystart_ack_delay` 0.
const SK_GSO_MAX_SIZE: u64 = 0;
const USEC_PER_MSEC: u64 = 1000;
const USEC_PER_SEC: u64 = 1_000_000;

/// `HYSTART_DELAY_THRESH(x)`: clamp(x, 4 ms, 16 ms).
pub fn hystart_delay_thresh(x: u32) -> u32 {
    x.clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX)
}

/// `bictcp_clock_us`: `tp->tcp_mstamp` as the kernel's u32.
fn bictcp_clock_us(tp: &CcView) -> u32 {
    tp.now_us as u32
}

/// `hystart_ack_delay`: cushion (us) for TSO/GRO aggregation delay, at most 1 ms:
/// gso_max_size * 4 / pacing_rate. Zero here (see `SK_GSO_MAX_SIZE`).
fn hystart_ack_delay(tp: &CcView) -> u32 {
    if tp.pacing_rate == 0 {
        return 0;
    }
    USEC_PER_MSEC.min(SK_GSO_MAX_SIZE * 4 * USEC_PER_SEC / tp.pacing_rate) as u32
}

/// HyStart's fields of `struct bictcp`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HyStart {
    /// `sample_cnt`: RTT samples taken this round.
    pub sample_cnt: u8,
    /// `found`: the exit point was found; HyStart stays off until the next RTO.
    pub found: bool,
    /// `round_start` (us, u32 clock): when this round began.
    pub round_start: u32,
    /// `end_seq`: the round ends when snd_una passes it.
    pub end_seq: u64,
    /// `last_ack` (us, u32 clock): the last ACK that continued the train.
    pub last_ack: u32,
    /// `curr_rtt` (us): minimum RTT of this round.
    pub curr_rtt: u32,
}

impl HyStart {
    /// `bictcp_hystart_reset`: start a new round at snd_nxt.
    pub fn bictcp_hystart_reset(&mut self, tp: &CcView) {
        let now = bictcp_clock_us(tp);
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = tp.snd_nxt;
        self.curr_rtt = u32::MAX;
        self.sample_cnt = 0;
    }

    /// `hystart_update`: feed one RTT sample `delay` (us); on detection set `found` and
    /// ssthresh := cwnd, which ends slow start. A new round starts whatever the cwnd;
    /// detection runs only from `low_window` (`hystart_low_window`) up.
    pub fn hystart_update(
        &mut self,
        tp: &mut CcView,
        delay: u32,
        delay_min: u32,
        detect: u32,
        ack_delta_us: u32,
        low_window: u32,
    ) {
        if after(tp.snd_una, self.end_seq) {
            self.bictcp_hystart_reset(tp);
        }
        if tp.snd_cwnd < low_window {
            return;
        }

        if detect & HYSTART_ACK_TRAIN != 0 {
            let now = bictcp_clock_us(tp);
            // First detection parameter: ACK-train length.
            if (now.wrapping_sub(self.last_ack) as i32) <= ack_delta_us as i32 {
                self.last_ack = now;
                let mut threshold = delay_min.wrapping_add(hystart_ack_delay(tp));
                // The train must run past delay_min / 2; pacing may have spread the
                // departures over up to RTT / 2 during slow start, so no halving then.
                if !tp.pacing_needed {
                    threshold >>= 1;
                }
                // The kernel compares (s32)(now - round_start) with a u32 threshold,
                // which C performs unsigned.
                if now.wrapping_sub(self.round_start) > threshold {
                    self.found = true;
                    tp.snd_ssthresh = tp.snd_cwnd;
                }
            }
        }

        if detect & HYSTART_DELAY != 0 {
            // Second detection parameter: the round's minimum RTT versus the flow's.
            if self.curr_rtt > delay {
                self.curr_rtt = delay;
            }
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else if self.curr_rtt > delay_min.wrapping_add(hystart_delay_thresh(delay_min >> 3)) {
                self.found = true;
                tp.snd_ssthresh = tp.snd_cwnd;
            }
        }
    }
}
