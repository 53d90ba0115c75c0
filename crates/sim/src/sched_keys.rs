//! The event queue's keys (sched.rs): a min-priority queue of unique `u128` keys whose
//! top 64 bits are the event's time in ns. A binary heap in small worlds; in large ones
//! a bucketed queue whose cost does not grow with the number of pending events.
//!
//! Why: at 1000 flows ~10^4 events are pending and the heap's pop sifts through 13
//! levels, ~2,000 of the 8,400 instructions a packet costs there (benches/RESULTS.md,
//! "thirteenth step"). [`Buckets`] keeps a small heap of the current time bucket
//! (2^[`BUCKET_BITS`] ns) and appends later events, unsorted, to a ring of buckets
//! ahead; a bucket is heapified once, when time reaches it. Events beyond the ring's
//! horizon wait in a second heap.
//!
//! Keys are unique, so both forms pop the same keys in the same order: the form changes
//! no result (the proptest below checks this against std's heap).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A bucket spans 2^14 ns = 16.4 us: at 1000 flows over 10 Gbit/s (~10 events a
/// simulated us) the current bucket's heap holds ~100 events, not ~10^4. (2^13 and 2^12
/// ns measured no better, benches/RESULTS.md "thirteenth step".)
const BUCKET_BITS: u32 = 14;
/// 2048 buckets ahead: a 33.5 ms horizon, past a 40 ms-RTT path's one-way propagation
/// delays; timers further out (the RTO, delayed ACKs at long RTTs) wait in `far`.
const RING_BITS: u32 = 11;
const RING: u64 = 1 << RING_BITS;
const RING_MASK: u64 = RING - 1;

fn bucket(key: u128) -> u64 {
    (key >> (64 + BUCKET_BITS)) as u64
}

pub enum Keys {
    Heap(BinaryHeap<Reverse<u128>>),
    Buckets(Box<Buckets>),
}

impl Keys {
    pub fn new() -> Keys {
        Keys::Heap(BinaryHeap::with_capacity(256))
    }

    /// From now on hold the keys in buckets (the ones held so far move).
    pub fn use_buckets(&mut self) {
        let keys = self.drain_all();
        *self = Keys::Buckets(Box::new(Buckets::new()));
        self.extend(keys);
    }

    pub fn len(&self) -> usize {
        match self {
            Keys::Heap(h) => h.len(),
            Keys::Buckets(b) => b.len(),
        }
    }

    /// The earliest key.
    #[inline(always)]
    pub fn peek(&self) -> Option<u128> {
        match self {
            Keys::Heap(h) => h.peek().map(|k| k.0),
            Keys::Buckets(b) => b.front.peek().map(|k| k.0),
        }
    }

    /// The second earliest key when it is among the root's children of the heap that
    /// holds the earliest (a prefetch's guess; None when that heap holds one key).
    #[inline]
    pub fn second(&self) -> Option<u128> {
        let h = match self {
            Keys::Heap(h) => h.as_slice(),
            Keys::Buckets(b) => b.front.as_slice(),
        };
        match (h.get(1), h.get(2)) {
            (Some(a), Some(b)) => Some(a.0.min(b.0)),
            (Some(a), None) => Some(a.0),
            _ => None,
        }
    }

    #[inline(always)]
    pub fn push(&mut self, key: u128) {
        match self {
            Keys::Heap(h) => h.push(Reverse(key)),
            Keys::Buckets(b) => b.push(key),
        }
    }

    /// Replace the earliest key by `key` (one sift in the heap, where a pop and a push
    /// would be two).
    #[inline(always)]
    pub fn replace_earliest(&mut self, key: u128) {
        match self {
            Keys::Heap(h) => *h.peek_mut().expect("a key to replace") = Reverse(key),
            Keys::Buckets(b) => b.replace_earliest(key),
        }
    }

    #[inline(always)]
    pub fn pop(&mut self) -> Option<u128> {
        match self {
            Keys::Heap(h) => h.pop().map(|k| k.0),
            Keys::Buckets(b) => b.pop(),
        }
    }

    /// Every key, in no particular order; the queue is left empty (in its form).
    pub fn drain_all(&mut self) -> Vec<u128> {
        match self {
            Keys::Heap(h) => std::mem::take(h).into_iter().map(|k| k.0).collect(),
            Keys::Buckets(b) => b.drain_all(),
        }
    }

    pub fn extend(&mut self, keys: impl IntoIterator<Item = u128>) {
        for k in keys {
            self.push(k);
        }
    }
}

/// Invariant: `front` holds every key of bucket <= `cur`, `ring[b & RING_MASK]` every key
/// of bucket b in (cur, cur + RING), `far` every later one; and `front` is empty only
/// when all three are. So the earliest key is `front`'s.
pub struct Buckets {
    front: BinaryHeap<Reverse<u128>>,
    /// Reversed as the heaps' entries are, so that a bucket becomes the front as it is.
    ring: Vec<Vec<Reverse<u128>>>,
    in_ring: usize,
    /// Bit `i`: `ring[i]` holds keys. Time skips empty buckets a word (64) at a time, so a
    /// sparse world does not step through thousands of them between two events.
    occupied: Vec<u64>,
    far: BinaryHeap<Reverse<u128>>,
    cur: u64,
}

impl Buckets {
    fn new() -> Buckets {
        Buckets {
            front: BinaryHeap::with_capacity(256),
            ring: (0..RING).map(|_| Vec::new()).collect(),
            in_ring: 0,
            occupied: vec![0; (RING / 64) as usize],
            far: BinaryHeap::new(),
            cur: 0,
        }
    }

    fn len(&self) -> usize {
        self.front.len() + self.in_ring + self.far.len()
    }

    #[inline(always)]
    fn place(&mut self, key: u128) {
        let b = bucket(key);
        if b <= self.cur {
            self.front.push(Reverse(key));
        } else if b - self.cur < RING {
            let i = (b & RING_MASK) as usize;
            self.ring[i].push(Reverse(key));
            self.occupied[i / 64] |= 1 << (i % 64);
            self.in_ring += 1;
        } else {
            self.far.push(Reverse(key));
        }
    }

    #[inline(always)]
    fn push(&mut self, key: u128) {
        self.place(key);
        if self.front.is_empty() {
            self.advance();
        }
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<u128> {
        let k = self.front.pop()?.0;
        if self.front.is_empty() {
            self.advance();
        }
        Some(k)
    }

    fn replace_earliest(&mut self, key: u128) {
        if bucket(key) <= self.cur {
            *self.front.peek_mut().expect("a key to replace") = Reverse(key);
        } else {
            self.front.pop();
            self.push(key);
        }
    }

    /// `front` is empty: move time to the next bucket holding a key and heapify it.
    #[cold]
    fn advance(&mut self) {
        loop {
            let next = match (self.next_occupied(), self.far.peek()) {
                (None, None) => return,
                (Some(r), None) => r,
                (None, Some(k)) => bucket(k.0),
                (Some(r), Some(k)) => r.min(bucket(k.0)),
            };
            self.cur = next;
            // The ring's window moved on: keys of its new buckets leave `far` (those of
            // the new current bucket go to the front).
            while let Some(k) = self.far.peek() {
                if bucket(k.0) - self.cur >= RING {
                    break;
                }
                let k = self.far.pop().expect("peeked").0;
                self.place(k);
            }
            let i = (self.cur & RING_MASK) as usize;
            if !self.ring[i].is_empty() {
                self.occupied[i / 64] &= !(1 << (i % 64));
                let keys = std::mem::take(&mut self.ring[i]);
                self.in_ring -= keys.len();
                if self.front.is_empty() {
                    // The front's empty allocation becomes the slot's and the slot's keys
                    // the front: no allocation once the ring has warmed up.
                    self.ring[i] = std::mem::take(&mut self.front).into_vec();
                    self.front = BinaryHeap::from(keys);
                } else {
                    // Keys `far` gave up for this same bucket are in the front already.
                    self.front.extend(keys);
                }
            }
            if !self.front.is_empty() {
                return;
            }
        }
    }

    /// The first bucket after `cur` whose ring slot holds keys (absolute number).
    fn next_occupied(&self) -> Option<u64> {
        if self.in_ring == 0 {
            return None;
        }
        let start = ((self.cur + 1) & RING_MASK) as usize;
        let words = self.occupied.len();
        // The start word's bits from `start` on, then whole words round the ring, then the
        // start word's bits below `start`.
        let mut w = start / 64;
        let mut bits = self.occupied[w] & (!0u64 << (start % 64));
        for _ in 0..=words {
            if bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                let ahead = (i as u64).wrapping_sub(start as u64) & RING_MASK;
                return Some(self.cur + 1 + ahead);
            }
            w = (w + 1) % words;
            bits = self.occupied[w];
        }
        unreachable!("in_ring counts keys that no bucket holds")
    }

    fn drain_all(&mut self) -> Vec<u128> {
        let mut keys: Vec<u128> = std::mem::take(&mut self.front)
            .into_iter()
            .map(|k| k.0)
            .collect();
        for slot in &mut self.ring {
            keys.extend(slot.drain(..).map(|k| k.0));
        }
        self.occupied.iter_mut().for_each(|w| *w = 0);
        keys.extend(std::mem::take(&mut self.far).into_iter().map(|k| k.0));
        self.in_ring = 0;
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(time_ns: u64, seq: u64) -> u128 {
        (u128::from(time_ns) << 64) | u128::from(seq)
    }

    #[test]
    fn keys_in_the_front_the_ring_and_far_pop_in_order() {
        let mut k = Keys::new();
        k.use_buckets();
        let bucket_ns = 1u64 << BUCKET_BITS;
        let horizon_ns = bucket_ns * RING;
        // One in the first bucket, one a bucket on, one in the ring's last bucket, two
        // beyond the horizon (same time: the sequence decides), one far beyond.
        let times = [
            5,
            bucket_ns + 1,
            horizon_ns - 1,
            horizon_ns + 7,
            horizon_ns + 7,
            50 * horizon_ns,
        ];
        for (seq, &t) in times.iter().enumerate().rev() {
            k.push(key(t, seq as u64));
        }
        assert_eq!(k.len(), 6);
        let order: Vec<u128> = std::iter::from_fn(|| k.pop()).collect();
        let want: Vec<u128> = times
            .iter()
            .enumerate()
            .map(|(s, &t)| key(t, s as u64))
            .collect();
        assert_eq!(order, want);
        assert_eq!(k.len(), 0);
    }

    proptest::proptest! {
        /// Any interleaving of pushes (at the last popped time plus up to 32 horizons, as
        /// events are scheduled), pops and replacements of the earliest key: the same
        /// answers as std's heap.
        #[test]
        fn pops_as_a_binary_heap_does(
            ops in proptest::collection::vec((0u8..4, 0u64..(1 << 30)), 1..600)
        ) {
            let mut k = Keys::new();
            k.use_buckets();
            let mut h: BinaryHeap<Reverse<u128>> = BinaryHeap::new();
            let mut now = 0u64;
            for (n, (op, delay)) in ops.into_iter().enumerate() {
                // Mostly near (within ~30 buckets), sometimes up to 32 horizons ahead.
                let d = if op == 3 { delay } else { delay >> 12 };
                let key = (u128::from(now + d) << 64) | n as u128;
                match op {
                    0 | 3 => { k.push(key); h.push(Reverse(key)); }
                    1 if !h.is_empty() => {
                        k.replace_earliest(key);
                        *h.peek_mut().unwrap() = Reverse(key);
                    }
                    _ => {
                        let got = k.pop();
                        proptest::prop_assert_eq!(got, h.pop().map(|r| r.0));
                        if let Some(g) = got { now = (g >> 64) as u64; }
                    }
                }
                proptest::prop_assert_eq!(k.len(), h.len());
                proptest::prop_assert_eq!(k.peek(), h.peek().map(|r| r.0));
            }
            let rest: Vec<_> = std::iter::from_fn(|| k.pop()).collect();
            let want: Vec<_> = std::iter::from_fn(|| h.pop().map(|r| r.0)).collect();
            proptest::prop_assert_eq!(rest, want);
        }
    }
}
