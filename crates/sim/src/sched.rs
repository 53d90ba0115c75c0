//! The event queue: a 4-ary min-heap ordered by (time, insertion sequence), so events at
//! the same instant run in the order they were scheduled and every run is deterministic.
//! Any correct priority queue on that unique key pops the same sequence, so the heap's
//! shape (binary until 0.8.0) does not change results.
//!
//! Timers (RTO, delayed ACK, pacing) are re-armed on almost every ACK, so cancelling must
//! be cheap. [`Timer`] never removes anything from the heap: it keeps its deadline and a
//! generation; a heap entry whose generation is stale is ignored when it pops (lazy
//! cancellation). Moving a deadline *later* does not touch the heap at all: the pending
//! (earlier) entry fires, sees the deadline has moved, and re-schedules itself once.

use crate::time::SimTime;

#[derive(Clone, Copy)]
struct Entry<E> {
    time: SimTime,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    /// Strictly earlier in (time, insertion sequence) order; `seq` is unique, so this is
    /// a total order and the pop order does not depend on the heap's shape.
    #[inline(always)]
    fn before(&self, o: &Self) -> bool {
        (self.time, self.seq) < (o.time, o.seq)
    }
}

/// Children per node. A 4-ary heap is half as deep as a binary one, and a node's four
/// children (4 x 32 bytes) share two cache lines, so a pop touches about half as many
/// lines of a large heap (1000 flows keep thousands of events pending).
const ARITY: usize = 4;

/// A deterministic priority queue of events: a 4-ary min-heap on (time, sequence).
pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
    next_seq: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: Vec::with_capacity(256),
            next_seq: 0,
        }
    }
    #[inline]
    pub fn push(&mut self, time: SimTime, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let e = Entry { time, seq, event };
        // Sift up: move parents down into the hole until e's place is found.
        let mut i = self.heap.len();
        self.heap.push(e);
        while i > 0 {
            let p = (i - 1) / ARITY;
            if !e.before(&self.heap[p]) {
                break;
            }
            self.heap[i] = self.heap[p];
            i = p;
        }
        self.heap[i] = e;
    }
    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.first().map(|e| e.time)
    }
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        let last = self.heap.pop()?;
        let n = self.heap.len();
        if n == 0 {
            return Some((last.time, last.event));
        }
        let top = self.heap[0];
        // Sift down: `last` goes into the hole at the root, which sinks past every child
        // that comes before it.
        let mut i = 0;
        loop {
            let c = ARITY * i + 1;
            if c >= n {
                break;
            }
            let end = (c + ARITY).min(n);
            let mut m = c;
            for j in c + 1..end {
                if self.heap[j].before(&self.heap[m]) {
                    m = j;
                }
            }
            if !self.heap[m].before(&last) {
                break;
            }
            self.heap[i] = self.heap[m];
            i = m;
        }
        self.heap[i] = last;
        Some((top.time, top.event))
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// What the owner of a timer must do when one of its heap entries pops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fire {
    /// The entry was superseded or the timer cancelled: ignore it.
    Stale,
    /// The deadline moved later: schedule a new entry at this time with this generation.
    Reschedule(SimTime, u32),
    /// The deadline has come: run the timer's action.
    Expired,
}

/// A re-armable one-shot timer with lazy cancellation (see module docs).
#[derive(Clone, Copy, Debug, Default)]
pub struct Timer {
    /// When the timer should fire; `None` when disarmed.
    deadline: Option<SimTime>,
    /// The pending heap entry that is still valid, if any: (time, generation).
    pending: Option<(SimTime, u32)>,
    generation: u32,
}

impl Timer {
    pub fn deadline(&self) -> Option<SimTime> {
        self.deadline
    }
    pub fn is_armed(&self) -> bool {
        self.deadline.is_some()
    }
    /// Arm (or re-arm) for `at`. Returns a (time, generation) to push into the event queue
    /// when no valid pending entry fires early enough; otherwise nothing needs scheduling.
    #[must_use]
    pub fn arm(&mut self, at: SimTime) -> Option<(SimTime, u32)> {
        self.deadline = Some(at);
        match self.pending {
            Some((t, _)) if t <= at => None,
            _ => {
                self.generation = self.generation.wrapping_add(1);
                self.pending = Some((at, self.generation));
                self.pending
            }
        }
    }
    /// Disarm. Pending heap entries become stale when they pop.
    pub fn cancel(&mut self) {
        self.deadline = None;
    }
    /// An entry of this timer with generation `gen` popped at `now`.
    #[must_use]
    pub fn on_fire(&mut self, now: SimTime, gen: u32) -> Fire {
        match self.pending {
            Some((_, g)) if g == gen => {}
            _ => return Fire::Stale,
        }
        self.pending = None;
        match self.deadline {
            None => Fire::Stale,
            Some(d) if d > now => {
                self.generation = self.generation.wrapping_add(1);
                self.pending = Some((d, self.generation));
                Fire::Reschedule(d, self.generation)
            }
            Some(_) => {
                self.deadline = None;
                Fire::Expired
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_pop_in_time_order_and_ties_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(SimTime(30), "c");
        q.push(SimTime(10), "a1");
        q.push(SimTime(20), "b");
        q.push(SimTime(10), "a2");
        q.push(SimTime(10), "a3");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec!["a1", "a2", "a3", "b", "c"]);
    }

    #[test]
    fn rearming_later_pushes_nothing_and_the_early_entry_reschedules_once() {
        let mut t = Timer::default();
        let (t1, g1) = t.arm(SimTime(100)).unwrap();
        assert_eq!(t1, SimTime(100));
        assert_eq!(t.arm(SimTime(150)), None); // later: the entry at 100 will forward it
        assert_eq!(t.arm(SimTime(200)), None);
        match t.on_fire(SimTime(100), g1) {
            Fire::Reschedule(at, g2) => {
                assert_eq!(at, SimTime(200));
                assert_eq!(t.on_fire(SimTime(200), g2), Fire::Expired);
            }
            other => panic!("expected reschedule, got {other:?}"),
        }
        assert!(!t.is_armed());
    }

    #[test]
    fn rearming_earlier_supersedes_the_old_entry() {
        let mut t = Timer::default();
        let (_, g1) = t.arm(SimTime(100)).unwrap();
        let (at, g2) = t.arm(SimTime(50)).unwrap();
        assert_eq!(at, SimTime(50));
        assert_eq!(t.on_fire(SimTime(50), g2), Fire::Expired);
        assert_eq!(t.on_fire(SimTime(100), g1), Fire::Stale);
    }

    #[test]
    fn cancelled_timer_entry_is_stale() {
        let mut t = Timer::default();
        let (_, g) = t.arm(SimTime(100)).unwrap();
        t.cancel();
        assert_eq!(t.on_fire(SimTime(100), g), Fire::Stale);
        // Re-arming after the stale pop schedules a fresh entry.
        assert!(t.arm(SimTime(300)).is_some());
    }

    #[test]
    fn cancel_then_rearm_before_the_pop_reuses_the_pending_entry() {
        let mut t = Timer::default();
        let (_, g) = t.arm(SimTime(100)).unwrap();
        t.cancel();
        assert_eq!(t.arm(SimTime(120)), None);
        assert_eq!(
            t.on_fire(SimTime(100), g),
            Fire::Reschedule(SimTime(120), g + 1)
        );
    }
}
