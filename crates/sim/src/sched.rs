//! The event queue: ordered by (time, insertion sequence), so events at the same instant
//! run in the order they were scheduled and every run is deterministic. Its keys are a
//! binary heap, or in a large world time buckets (sched_keys.rs).
//!
//! Timers (RTO, delayed ACK, pacing) are re-armed on almost every ACK, so cancelling must
//! be cheap. [`Timer`] never removes anything from the heap: it keeps its deadline and a
//! generation; a heap entry whose generation is stale is ignored when it pops (lazy
//! cancellation). Moving a deadline *later* does not touch the heap at all: the pending
//! (earlier) entry fires, sees the deadline has moved, and re-schedules itself once.

use crate::sched_keys::Keys;
use crate::time::SimTime;

/// Bits of a heap key that name the event's slot (see [`EventQueue`]): 2^24 (16.7 M)
/// events pending at once. A 1000-flow world holds about ten thousand.
const SLOT_BITS: u32 = 24;
const SLOT_MASK: u64 = (1 << SLOT_BITS) - 1;
/// Insertion sequence numbers fit in the 40 bits above the slot: 1.1e12 events before
/// [`EventQueue::renumber`] compacts them (days of CPU at a million events a second).
const SEQ_LIMIT: u64 = 1 << (64 - SLOT_BITS);

/// A deterministic priority queue of events.
///
/// The keys are 16 bytes, `time << 64 | seq << 24 | slot`, and the events sit in a
/// slab beside them (`slot` indexes it; freed slots are reused last-in first-out). Ordering
/// the keys as integers orders by (time, seq), because seq is unique: the same order as a
/// heap of (time, seq, event) entries, at half their 32 bytes. Why: at 1000 flows the heap
/// holds ~10^4 entries and a pop's sift to the bottom missed the cache on its lower levels
/// (benches/RESULTS.md, "Engine speed, second step"); half the bytes is half the lines.
pub struct EventQueue<E> {
    /// The keys: a heap, or in a large world buckets (sched_keys.rs).
    keys: Keys,
    slots: Vec<E>,
    free: Vec<u32>,
    next_seq: u64,
    /// The heap's top is the event [`EventQueue::take`] handed out: its entry stays in
    /// the heap until the event's first push replaces it, or [`EventQueue::done`] pops
    /// it. Why: most events schedule one other, and replacing the top costs one sift
    /// where a pop and a push cost two (benches/RESULTS.md, "eleventh step"). The keys
    /// pushed, the slots reused and so the order of every later pop are those of a pop
    /// before the push.
    top_taken: bool,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        EventQueue {
            keys: Keys::new(),
            slots: Vec::with_capacity(256),
            free: Vec::with_capacity(256),
            next_seq: 0,
            top_taken: false,
        }
    }
    pub fn push(&mut self, time: SimTime, event: E) {
        if self.next_seq == SEQ_LIMIT {
            self.done();
            self.renumber();
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = event;
                s as u64
            }
            None => {
                let s = self.slots.len() as u64;
                assert!(
                    s <= SLOT_MASK,
                    "event queue: more than 2^{SLOT_BITS} events pending at once"
                );
                self.slots.push(event);
                s
            }
        };
        let key = (time.ns() as u128) << 64 | (seq << SLOT_BITS | slot) as u128;
        if self.top_taken {
            self.top_taken = false;
            self.keys.replace_earliest(key);
        } else {
            self.keys.push(key);
        }
    }
    /// Time of the earliest event. (Not between [`EventQueue::take`] and
    /// [`EventQueue::done`], nor the peeks below.)
    pub fn peek_time(&self) -> Option<SimTime> {
        debug_assert!(!self.top_taken);
        self.keys.peek().map(|k| SimTime((k >> 64) as u64))
    }
    /// The earliest event, left in the queue.
    #[inline]
    pub fn peek(&self) -> Option<&E> {
        debug_assert!(!self.top_taken);
        let k = self.keys.peek()?;
        Some(&self.slots[(k as u64 & SLOT_MASK) as usize])
    }
    /// Between [`EventQueue::take`] and [`EventQueue::done`]: the event most likely to
    /// run next (`Keys::second`: the second smallest key of the heap holding the taken
    /// one), left in the queue. A guess only: an event the taken one schedules may come
    /// before it.
    #[inline]
    pub fn peek_after_taken(&self) -> Option<&E> {
        debug_assert!(self.top_taken);
        let k = self.keys.second()?;
        Some(&self.slots[(k as u64 & SLOT_MASK) as usize])
    }
    /// Remove and return the earliest event. (The event loop takes instead, see
    /// [`EventQueue::take`].)
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        debug_assert!(!self.top_taken);
        let key = self.keys.pop()?;
        Some(self.release(key))
    }
    /// The event of heap key `key`, its slot freed for the next push.
    #[inline(always)]
    fn release(&mut self, key: u128) -> (SimTime, E) {
        let slot = (key as u64 & SLOT_MASK) as u32;
        self.free.push(slot);
        (SimTime((key >> 64) as u64), self.slots[slot as usize])
    }
    /// The earliest event, taken to run: [`EventQueue::pop`]'s answer, but its heap
    /// entry is left for the event's first push to replace (`top_taken`). Call
    /// [`EventQueue::done`] when the event has run.
    #[inline(always)]
    pub fn take(&mut self) -> Option<(SimTime, E)> {
        debug_assert!(!self.top_taken);
        let key = self.keys.peek()?;
        self.top_taken = true;
        Some(self.release(key))
    }
    /// The event [`EventQueue::take`] gave has run: remove its entry if no push
    /// replaced it.
    #[inline(always)]
    pub fn done(&mut self) {
        if self.top_taken {
            self.top_taken = false;
            self.keys.pop();
        }
    }
    /// Hold the keys in buckets from now on: a large world's, where the heap's sift
    /// through ~10^4 keys cost more than the events' own work (sched_keys.rs). The
    /// order of events is the same.
    pub fn use_buckets(&mut self) {
        debug_assert!(!self.top_taken);
        self.keys.use_buckets();
    }
    pub fn len(&self) -> usize {
        self.keys.len() - self.top_taken as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The sequence numbers ran out: give the pending events 0, 1, ... in their order,
    /// which keeps every later comparison as it was.
    #[cold]
    fn renumber(&mut self) {
        let mut keys = self.keys.drain_all();
        keys.sort_unstable();
        self.keys.extend(keys.iter().enumerate().map(|(seq, &k)| {
            let time = k >> 64;
            let slot = k as u64 & SLOT_MASK;
            time << 64 | ((seq as u64) << SLOT_BITS | slot) as u128
        }));
        self.next_seq = keys.len() as u64;
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
    fn peek_shows_the_event_pop_returns_next_and_leaves_it() {
        let mut q = EventQueue::new();
        assert_eq!(q.peek(), None);
        q.push(SimTime(20), "b");
        q.push(SimTime(10), "a1");
        q.push(SimTime(10), "a2");
        assert_eq!(q.peek(), Some(&"a1"));
        assert_eq!(q.len(), 3);
        assert_eq!(q.pop(), Some((SimTime(10), "a1")));
        assert_eq!(q.peek(), Some(&"a2"));
    }

    #[test]
    fn peek_after_taken_shows_the_next_event_and_leaves_it() {
        let mut q = EventQueue::new();
        q.push(SimTime(10), 0u32);
        q.take();
        assert_eq!(q.peek_after_taken(), None);
        q.done();
        // Keys in many orders: with nothing pushed, the guess is what the next take
        // returns.
        let times = [50, 10, 40, 10, 30, 20, 60, 20, 5, 70];
        for (i, t) in times.iter().enumerate() {
            q.push(SimTime(*t), i as u32 + 1);
        }
        while q.len() >= 2 {
            let n = q.len();
            q.take();
            let next = *q.peek_after_taken().unwrap();
            q.done();
            assert_eq!(q.len(), n - 1);
            assert_eq!(q.peek(), Some(&next));
        }
    }

    #[test]
    fn freed_slots_are_reused_and_ties_keep_insertion_order() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), 'x');
        q.push(SimTime(5), 'y');
        assert_eq!(q.pop(), Some((SimTime(5), 'x')));
        // 'z' takes x's slot (0) but was pushed after 'y': it still comes second.
        q.push(SimTime(5), 'z');
        assert_eq!(q.slots.len(), 2);
        assert_eq!(q.pop(), Some((SimTime(5), 'y')));
        assert_eq!(q.pop(), Some((SimTime(5), 'z')));
        assert_eq!(q.pop(), None);
    }

    proptest::proptest! {
        /// Taking an event and replacing its entry with its first push gives the pops of
        /// a pop before the pushes: any script of events each scheduling 0-3 others at
        /// delays 0-4 (ties included), run both ways.
        #[test]
        fn take_then_push_runs_the_events_a_pop_then_push_would(
            script in proptest::collection::vec(proptest::collection::vec(0u64..5, 0..4), 1..200)
        ) {
            let (mut a, mut b) = (EventQueue::new(), EventQueue::new());
            for q in [&mut a, &mut b] {
                q.push(SimTime(0), 0usize);
                q.push(SimTime(0), 1usize);
            }
            let mut next = 2usize;
            for delays in &script {
                let (ta, ea) = match a.pop() { Some(x) => x, None => break };
                let (tb, eb) = b.take().unwrap();
                proptest::prop_assert_eq!((ta, ea), (tb, eb));
                for d in delays {
                    a.push(SimTime(ta.ns() + d), next);
                    b.push(SimTime(tb.ns() + d), next);
                    next += 1;
                }
                b.done();
                proptest::prop_assert_eq!(a.len(), b.len());
                proptest::prop_assert_eq!(a.peek_time(), b.peek_time());
            }
            let rest_a: Vec<_> = std::iter::from_fn(|| a.pop()).collect();
            let rest_b: Vec<_> = std::iter::from_fn(|| b.pop()).collect();
            proptest::prop_assert_eq!(rest_a, rest_b);
        }
    }

    #[test]
    fn running_out_of_sequence_numbers_while_an_event_is_taken_keeps_the_order() {
        let mut q = EventQueue::new();
        q.next_seq = SEQ_LIMIT - 2;
        q.push(SimTime(7), "b1");
        q.push(SimTime(3), "a");
        assert_eq!(q.take(), Some((SimTime(3), "a")));
        // The limit is reached while "a" is taken: its entry goes, b1 becomes seq 0.
        q.push(SimTime(7), "b2");
        q.done();
        q.push(SimTime(7), "b3");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec!["b1", "b2", "b3"]);
    }

    #[test]
    fn running_out_of_sequence_numbers_keeps_the_order() {
        let mut q = EventQueue::new();
        q.next_seq = SEQ_LIMIT - 2;
        q.push(SimTime(7), "b1");
        q.push(SimTime(3), "a");
        // The limit is reached here: the two pending events become seq 0 and 1 (a, b1).
        q.push(SimTime(7), "b2");
        assert_eq!(q.next_seq, 3);
        q.push(SimTime(7), "b3");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec!["a", "b1", "b2", "b3"]);
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
