//! Step marking at a threshold K: the switch behaviour DCTCP is designed for.
//!
//! Model: an arriving packet finds `n` packets waiting in the queue; if n >= K it is
//! marked CE (ECN-capable, `ecn` on) or dropped (otherwise), then queued FIFO under the
//! hard limit. "Mark if the queue occupancy is greater than K upon its arrival" (Alizadeh
//! et al., DCTCP, SIGCOMM 2010, Sec. 3.1; RFC 8257 Sec. 3.1 "instantaneous queue length
//! greater than K"): with the arrival counted, occupancy > K means n >= K waiting before it.
//! In Linux this is `tc qdisc ... red min K max K probability 1.0 ecn` with Wlog 0
//! (`RED_HARD_MARK` once the instantaneous queue reaches the threshold).
//!
//! Deviations: the occupancy is the qdisc's waiting packets; the one being serialized
//! has left the queue (as in a Linux qdisc), while a switch buffer would still hold it.

use crate::contract::QueueLimit;
use crate::net::aqm::{set_ce, AqmOut, Qdisc, TimedFifo};
use crate::net::packet::Packet;
use crate::time::SimTime;

pub struct Step {
    k: u64,
    ecn: bool,
    limit: Option<QueueLimit>,
    q: TimedFifo,
}

impl Step {
    pub fn new(k: u64, ecn: bool, limit: Option<QueueLimit>) -> Step {
        Step {
            k,
            ecn,
            limit,
            q: TimedFifo::default(),
        }
    }
}

impl Qdisc for Step {
    fn enqueue(&mut self, now: SimTime, mut pkt: Packet, out: &mut AqmOut) -> bool {
        if !self.q.admits(self.limit, &pkt) {
            return false;
        }
        if self.q.len() >= self.k {
            if self.ecn && set_ce(&mut pkt) {
                out.marks += 1;
            } else {
                return false;
            }
        }
        self.q.push(now, pkt);
        true
    }
    fn dequeue(&mut self, _now: SimTime, _out: &mut AqmOut) -> Option<(Packet, SimTime)> {
        self.q.pop().map(|(t, p)| (p, t))
    }
    fn for_each_fifo(&self, f: &mut dyn FnMut(&TimedFifo)) {
        f(&self.q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::aqm::test_util::pkt;
    use crate::net::packet::Ecn;

    #[test]
    fn marks_arrivals_that_find_k_or_more_waiting() {
        let mut s = Step::new(2, true, Some(QueueLimit::Packets(100)));
        let mut out = AqmOut::default();
        // Arrivals 0 and 1 find 0 and 1 waiting: unmarked; arrival 2 finds 2: marked.
        for i in 0..3 {
            assert!(s.enqueue(SimTime(0), pkt(0, i, true), &mut out));
        }
        assert_eq!(out.marks, 1);
        let ecns: Vec<Ecn> = (0..3)
            .map(|_| s.dequeue(SimTime(0), &mut out).unwrap().0.ecn())
            .collect();
        assert_eq!(ecns, vec![Ecn::Ect0, Ecn::Ect0, Ecn::Ce]);
    }

    #[test]
    fn drops_not_ect_or_without_ecn() {
        let mut s = Step::new(1, true, None);
        let mut out = AqmOut::default();
        assert!(s.enqueue(SimTime(0), pkt(0, 0, false), &mut out));
        assert!(!s.enqueue(SimTime(0), pkt(0, 1, false), &mut out)); // Not-ECT above K
        let mut s = Step::new(1, false, None);
        assert!(s.enqueue(SimTime(0), pkt(0, 0, true), &mut out));
        assert!(!s.enqueue(SimTime(0), pkt(0, 1, true), &mut out)); // marking off
        assert_eq!(out.marks, 0);
    }
}
