//! The event queue: a binary heap ordered by (time, insertion sequence), so events at the
//! same instant run in the order they were scheduled and every run is deterministic.
//!
//! Timers (RTO, delayed ACK, pacing) are re-armed on almost every ACK, so cancelling must
//! be cheap. [`Timer`] never removes anything from the heap: it keeps its deadline and a
//! generation; a heap entry whose generation is stale is ignored when it pops (lazy
//! cancellation). Moving a deadline *later* does not touch the heap at all: the pending
//! (earlier) entry fires, sees the deadline has moved, and re-schedules itself once.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::SimTime;

struct Entry<E> {
    time: SimTime,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest (time, seq) first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then_with(|| o.seq.cmp(&self.seq))
    }
}

/// A deterministic priority queue of events.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(256),
            next_seq: 0,
        }
    }
    pub fn push(&mut self, time: SimTime, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time, seq, event });
    }
    /// Time of the earliest event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.heap.pop().map(|e| (e.time, e.event))
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
