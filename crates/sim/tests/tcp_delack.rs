//! The receiver's delayed-ACK timing in a whole run (tcp/delack.rs): a flow held at a
//! cwnd of 1-2 by retransmission timeouts must not see its first RTT sample after each
//! timeout inflated by a 40 ms delayed ACK, because Linux's receiver re-enters quick-ACK
//! mode when data arrives after a gap longer than its RTO (`tcp_event_data_recv`).

mod common;
use common::*;

use tcplab_sim::time::SimTime;
use tcplab_sim::world::stepping::Stepper;
use tcplab_sim::NativeCc;
use tcplab_sim::World;

/// One Reno flow, 10 Mbit/s, 40 ms, 1 BDP buffer, 30 % Bernoulli loss on the bottleneck
/// for 60 s: cwnd is mostly 1-2 (mean 1.6 over 10-60 s, at most 6) and timeouts come
/// every second or so. Stepped by 1 ms, which at this cwnd holds at most one ACK with an
/// RTT sample per step (checked). Checked: the first sample after each run of timeouts
/// (a backed-off retransmission that is lost again gives no sample; the next one does).
///
/// Path RTT: 40 ms of propagation plus the serialization of a 1500-byte segment at
/// 10 Mbit/s (1.2 ms) and twice at 1 Gbit/s (24 us), and of the 52-byte ACK (small):
/// 41.2 ms. The sample after a timeout is the retransmission's round trip from its
/// timestamp echo (Karn's rule forbids a sequence sample): with an immediate ACK it is
/// the path RTT rounded to the millisecond clock, at most 42 ms plus whatever queues in
/// front of the retransmission (at cwnd 1-2 nothing does); with a delayed ACK it would be
/// 40 ms more, 82 ms. The bound is the midpoint, path RTT + 20 ms = 61.2 ms: any sample
/// above it carries a delayed-ACK timer.
#[test]
fn the_first_rtt_sample_after_each_timeout_has_no_delayed_ack_in_it() {
    let mut cfg = dumbbell("reno", 1, 10_000_000, 40 * MS, 1.0, 60 * S);
    cfg.bottleneck.loss = 0.3;
    let mut s = Stepper::new(World::new(&cfg, &NativeCc).unwrap());
    let (mut rtos, mut checked, mut late) = (0u64, 0u64, Vec::new());
    let (mut srtt_sum, mut srtt_n, mut cwnd_sum, mut cwnd_max) = (0u64, 0u64, 0u64, 0u32);
    let mut pending_rto = false;
    let mut t = 0;
    while !s.done() {
        t += MS;
        s.advance_to(SimTime(t));
        let iv = s.take_interval(0).unwrap();
        let st = s.state(0).unwrap();
        if iv.rto_count > 0 {
            rtos += iv.rto_count;
            pending_rto = true;
        }
        if iv.rtt_samples > 0 && pending_rto && iv.rto_count == 0 {
            assert_eq!(iv.rtt_samples, 1, "one sample per 1 ms step at {t} ns");
            checked += 1;
            if iv.rtt_min_us > 61_200 {
                late.push((t / MS, iv.rtt_min_us));
            }
            pending_rto = false;
        }
        if st.srtt_us > 0 && t > 10 * S {
            srtt_sum += st.srtt_us;
            srtt_n += 1;
            cwnd_sum += u64::from(st.cwnd_pkts);
            cwnd_max = cwnd_max.max(st.cwnd_pkts);
        }
    }
    let mean_srtt_ms = srtt_sum as f64 / srtt_n as f64 / 1000.0;
    let mean_cwnd = cwnd_sum as f64 / srtt_n as f64;
    eprintln!(
        "timeouts {rtos}, first samples checked {checked}, late {late:?}, mean srtt \
         (10-60 s) {mean_srtt_ms:.1} ms, cwnd mean {mean_cwnd:.2} max {cwnd_max}"
    );
    // The scenario is the one asked for: many timeouts, a small cwnd.
    assert!(
        checked >= 25,
        "only {checked} timeouts followed by a sample"
    );
    assert!(mean_cwnd < 2.5, "mean cwnd {mean_cwnd}");
    assert!(
        late.is_empty(),
        "samples with a delayed ACK (ms, us): {late:?}"
    );
}
