//! Kernel helpers shared by the algorithms: slow start, additive increase, the Reno
//! threshold (net/ipv4/tcp_cong.c) and the inline predicates of include/net/tcp.h.

use crate::ops::{CaState, CcView};

/// `tcp_in_slow_start`: cwnd below ssthresh.
pub fn tcp_in_slow_start(tp: &CcView) -> bool {
    tp.snd_cwnd < tp.snd_ssthresh
}

/// `tcp_packets_in_flight`: packets_out - (sacked_out + lost_out) + retrans_out.
pub fn tcp_packets_in_flight(tp: &CcView) -> u32 {
    (tp.packets_out + tp.retrans_out).saturating_sub(tp.sacked_out + tp.lost_out)
}

/// `tcp_is_cwnd_limited`: grow cwnd only while it limits sending; in slow start, until it
/// is twice the largest flight of the last window.
pub fn tcp_is_cwnd_limited(tp: &CcView) -> bool {
    if tp.is_cwnd_limited {
        return true;
    }
    if tcp_in_slow_start(tp) {
        return tp.snd_cwnd < 2 * tp.max_packets_out;
    }
    false
}

/// `tcp_slow_start`: add `acked` to cwnd up to ssthresh; returns the acked segments
/// left over for congestion avoidance.
pub fn tcp_slow_start(tp: &mut CcView, acked: u32) -> u32 {
    let cwnd = tp.snd_cwnd.saturating_add(acked).min(tp.snd_ssthresh);
    let left = acked - (cwnd - tp.snd_cwnd);
    tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
    left
}

/// `tcp_cong_avoid_ai`: cwnd grows by one segment per `w` acked segments.
pub fn tcp_cong_avoid_ai(tp: &mut CcView, w: u32, acked: u32) {
    let w = w.max(1);
    // Credits accumulated at a higher w are applied gently now.
    if tp.snd_cwnd_cnt >= w {
        tp.snd_cwnd_cnt = 0;
        tp.snd_cwnd += 1;
    }
    tp.snd_cwnd_cnt += acked;
    if tp.snd_cwnd_cnt >= w {
        let delta = tp.snd_cwnd_cnt / w;
        tp.snd_cwnd_cnt -= delta * w;
        tp.snd_cwnd += delta;
    }
    tp.snd_cwnd = tp.snd_cwnd.min(tp.snd_cwnd_clamp);
}

/// `tcp_reno_ssthresh`: half the cwnd, at least 2.
pub fn tcp_reno_ssthresh(tp: &CcView) -> u32 {
    (tp.snd_cwnd >> 1).max(2)
}

/// `tcp_reno_cong_avoid`: slow start below ssthresh, then one segment per RTT.
pub fn tcp_reno_cong_avoid(tp: &mut CcView, acked: u32) {
    if !tcp_is_cwnd_limited(tp) {
        return;
    }
    let mut acked = acked;
    if tcp_in_slow_start(tp) {
        acked = tcp_slow_start(tp, acked);
        if acked == 0 {
            return;
        }
    }
    let w = tp.snd_cwnd;
    tcp_cong_avoid_ai(tp, w, acked);
}

/// `tcp_in_cwnd_reduction`: the sender is reducing cwnd (CWR or Recovery).
pub fn tcp_in_cwnd_reduction(tp: &CcView) -> bool {
    matches!(tp.ca_state, CaState::Cwr | CaState::Recovery)
}

/// `tcp_current_ssthresh`: ssthresh during a reduction; otherwise at least 3/4 of cwnd,
/// a threshold that remembers the current window (include/net/tcp.h).
pub fn tcp_current_ssthresh(tp: &CcView) -> u32 {
    if tcp_in_cwnd_reduction(tp) {
        tp.snd_ssthresh
    } else {
        tp.snd_ssthresh.max((tp.snd_cwnd >> 1) + (tp.snd_cwnd >> 2))
    }
}

/// Before/after on sequence numbers in the kernel's wrapping sense. Our sequence
/// numbers are u64 segment counts that never wrap, so this is a plain comparison.
pub fn after(a: u64, b: u64) -> bool {
    a > b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(cwnd: u32, ssthresh: u32) -> CcView {
        let mut tp = CcView::new(1448, 0);
        tp.snd_cwnd = cwnd;
        tp.snd_ssthresh = ssthresh;
        tp.is_cwnd_limited = true;
        tp
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_the_rest() {
        let mut tp = view(10, 12);
        // 10 + 5 would be 15; capped at 12, so 2 of the 5 were used and 3 are left.
        assert_eq!(tcp_slow_start(&mut tp, 5), 3);
        assert_eq!(tp.snd_cwnd, 12);
    }

    #[test]
    fn additive_increase_adds_one_segment_per_window_of_acks() {
        let mut tp = view(20, 10);
        for _ in 0..19 {
            tcp_cong_avoid_ai(&mut tp, 20, 1);
        }
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (20, 19));
        tcp_cong_avoid_ai(&mut tp, 20, 1);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (21, 0));
    }

    #[test]
    fn additive_increase_applies_stale_credit_gently() {
        // cnt 30 accumulated at w = 30 while w is now 20: one segment, credit reset.
        let mut tp = view(20, 10);
        tp.snd_cwnd_cnt = 30;
        tcp_cong_avoid_ai(&mut tp, 20, 2);
        assert_eq!((tp.snd_cwnd, tp.snd_cwnd_cnt), (21, 2));
    }

    #[test]
    fn reno_ssthresh_halves_with_floor_two() {
        assert_eq!(tcp_reno_ssthresh(&view(41, 0)), 20);
        assert_eq!(tcp_reno_ssthresh(&view(3, 0)), 2);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited_outside_slow_start() {
        let mut tp = view(20, 10);
        tp.is_cwnd_limited = false;
        tcp_reno_cong_avoid(&mut tp, 5);
        assert_eq!(tp.snd_cwnd, 20);
    }

    #[test]
    fn slow_start_growth_allowed_up_to_twice_max_packets_out() {
        let mut tp = view(10, 100);
        tp.is_cwnd_limited = false;
        tp.max_packets_out = 6; // 10 < 12: still may grow
        tcp_reno_cong_avoid(&mut tp, 2);
        assert_eq!(tp.snd_cwnd, 12);
        tcp_reno_cong_avoid(&mut tp, 2); // 12 < 12 is false: stop
        assert_eq!(tp.snd_cwnd, 12);
    }

    #[test]
    fn current_ssthresh_is_at_least_three_quarters_of_cwnd_unless_reducing() {
        // cwnd 21: (21 >> 1) + (21 >> 2) = 10 + 5 = 15 > ssthresh 10.
        let mut tp = view(21, 10);
        assert_eq!(tcp_current_ssthresh(&tp), 15);
        tp.ca_state = CaState::Recovery;
        assert_eq!(tcp_current_ssthresh(&tp), 10);
    }

    #[test]
    fn packets_in_flight_counts_retransmissions_and_excludes_sacked_and_lost() {
        let mut tp = view(10, 10);
        tp.packets_out = 20;
        tp.sacked_out = 5;
        tp.lost_out = 3;
        tp.retrans_out = 2;
        assert_eq!(tcp_packets_in_flight(&tp), 14);
    }
}
