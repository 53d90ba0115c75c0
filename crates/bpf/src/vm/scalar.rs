//! What track.rs knows of a scalar register: an unsigned range and a tnum (the known
//! bits), the two halves of the kernel verifier's `struct bpf_reg_state` for a
//! SCALAR_VALUE (umin/umax_value, var_off; kernel/bpf/tnum.c,
//! kernel/bpf/verifier.c: scalar_min_max_*, reg_bounds_sync, regs_refine_cond_op).
//!
//! The one rule that keeps the checks conservative: a scalar marked `exact` has a range
//! inside the one the kernel's verifier holds on the same path (never wider), so a range
//! that is too wide for an access or never decides a loop's exit is too wide for the
//! kernel as well. Where this code is less precise than the verifier (signed and 32-bit
//! sub-register bounds, which it does not track; ops it does not model), the result is
//! not `exact`, and nothing is refused because of it. Narrower than the kernel is
//! harmless here: it can only make a check accept.
//!
//! Deviations: no s64/s32/u32 bounds of their own (signed compares and JMP32 refine
//! only when both ranges are non-negative / fit 32 bits, and leave the operands inexact
//! otherwise); DIV and MOD by a constant give their true range, where the 6.18 verifier
//! may know less (harmless, see above); BPF_END and NEG are not modelled.

/// A tnum: bits set in `m` are unknown, the others are those of `v`
/// (kernel/bpf/tnum.c, `struct tnum`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tnum {
    pub v: u64,
    pub m: u64,
}

impl Tnum {
    pub const UNKNOWN: Tnum = Tnum { v: 0, m: u64::MAX };

    pub fn konst(v: u64) -> Tnum {
        Tnum { v, m: 0 }
    }

    /// tnum_range.
    pub fn range(lo: u64, hi: u64) -> Tnum {
        let chi = lo ^ hi;
        let bits = 64 - chi.leading_zeros();
        if bits > 63 {
            return Tnum::UNKNOWN;
        }
        let delta = (1u64 << bits) - 1;
        Tnum {
            v: lo & !delta,
            m: delta,
        }
    }

    fn add(a: Tnum, b: Tnum) -> Tnum {
        let sm = a.m.wrapping_add(b.m);
        let sv = a.v.wrapping_add(b.v);
        let chi = sm.wrapping_add(sv) ^ sv;
        let mu = chi | a.m | b.m;
        Tnum { v: sv & !mu, m: mu }
    }

    fn sub(a: Tnum, b: Tnum) -> Tnum {
        let dv = a.v.wrapping_sub(b.v);
        let chi = dv.wrapping_add(a.m) ^ dv.wrapping_sub(b.m);
        let mu = chi | a.m | b.m;
        Tnum { v: dv & !mu, m: mu }
    }

    fn and(a: Tnum, b: Tnum) -> Tnum {
        let v = a.v & b.v;
        Tnum {
            v,
            m: (a.v | a.m) & (b.v | b.m) & !v,
        }
    }

    fn or(a: Tnum, b: Tnum) -> Tnum {
        let v = a.v | b.v;
        Tnum {
            v,
            m: (a.m | b.m) & !v,
        }
    }

    fn xor(a: Tnum, b: Tnum) -> Tnum {
        let mu = a.m | b.m;
        Tnum {
            v: (a.v ^ b.v) & !mu,
            m: mu,
        }
    }

    fn intersect(a: Tnum, b: Tnum) -> Tnum {
        let v = a.v | b.v;
        let mu = a.m & b.m;
        Tnum { v: v & !mu, m: mu }
    }

    fn truncate32(self) -> Tnum {
        Tnum {
            v: self.v & 0xffff_ffff,
            m: self.m & 0xffff_ffff,
        }
    }
}

/// A scalar: `lo..=hi` unsigned, bits `t`. `id` links copies (the verifier's reg->id:
/// a branch on one refines all of them); `delta` is this copy's constant offset from
/// the linked value (the verifier's BPF_ADD_CONST links, `r2 = r1; r2 += 4`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scalar {
    pub lo: u64,
    pub hi: u64,
    pub t: Tnum,
    pub exact: bool,
    pub id: u32,
    pub delta: i64,
}

/// BPF_MAX_VAR_OFF (include/linux/bpf_verifier.h): a variable offset the verifier
/// cannot keep below this is "unbounded".
pub const BPF_MAX_VAR_OFF: u64 = 1 << 29;

impl Scalar {
    pub fn konst(c: u64) -> Scalar {
        Scalar {
            lo: c,
            hi: c,
            t: Tnum::konst(c),
            exact: true,
            id: 0,
            delta: 0,
        }
    }

    /// What a load of `size` bytes gives (the verifier: unknown, zero-extended).
    pub fn loaded(size: usize) -> Scalar {
        let hi = if size >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * size)) - 1
        };
        Scalar::range(0, hi, true)
    }

    /// Any value (a helper's result, paths that disagree): never exact.
    pub fn unknown() -> Scalar {
        Scalar::range(0, u64::MAX, false)
    }

    pub fn range(lo: u64, hi: u64, exact: bool) -> Scalar {
        Scalar {
            lo,
            hi,
            t: Tnum::range(lo, hi),
            exact,
            id: 0,
            delta: 0,
        }
    }

    pub fn is_const(&self) -> Option<u64> {
        (self.exact && self.lo == self.hi).then_some(self.lo)
    }

    /// reg_bounds_sync, unsigned half: the range and the known bits narrow each other.
    /// None: they contradict (a path that cannot happen).
    fn synced(mut self) -> Option<Scalar> {
        self.lo = self.lo.max(self.t.v);
        self.hi = self.hi.min(self.t.v | self.t.m);
        if self.lo > self.hi {
            return None;
        }
        self.t = Tnum::intersect(self.t, Tnum::range(self.lo, self.hi));
        Some(self)
    }

    /// As `synced`; a contradiction (from a dead path) taints the register, as the
    /// verifier does.
    fn sync(self) -> Scalar {
        self.synced().unwrap_or_else(Scalar::unknown)
    }

    fn with(lo: u64, hi: u64, t: Tnum, exact: bool) -> Scalar {
        Scalar {
            lo,
            hi,
            t,
            exact,
            id: 0,
            delta: 0,
        }
        .sync()
    }

    /// `dst op= src` for a 64-bit (`wide`) or 32-bit ALU op (BPF_OP of the opcode).
    /// MOV is the caller's (it keeps the id).
    pub fn alu(op: u8, wide: bool, a: Scalar, b: Scalar) -> Scalar {
        if !wide {
            // A 32-bit op on values that fit 32 bits is the 64-bit op, truncated
            // when it wraps; with wider operands the verifier's u32 bounds (which
            // this does not keep) decide: not exact.
            if a.hi > u32::MAX as u64 || b.hi > u32::MAX as u64 {
                return Scalar::range(0, u32::MAX as u64, false);
            }
            let r = Scalar::alu(op, true, a, b);
            return if r.hi <= u32::MAX as u64 {
                r
            } else {
                let t = r.t.truncate32();
                Scalar::with(0, u32::MAX as u64, t, false)
            };
        }
        let exact = a.exact && b.exact;
        let none = Scalar::range(0, u64::MAX, false);
        match op {
            0x00 => match (a.lo.checked_add(b.lo), a.hi.checked_add(b.hi)) {
                (Some(lo), Some(hi)) => Scalar::with(lo, hi, Tnum::add(a.t, b.t), exact),
                _ => Scalar::with(0, u64::MAX, Tnum::add(a.t, b.t), exact),
            },
            0x10 => match (a.lo.checked_sub(b.hi), a.hi.checked_sub(b.lo)) {
                (Some(lo), Some(hi)) => Scalar::with(lo, hi, Tnum::sub(a.t, b.t), exact),
                _ => Scalar::with(0, u64::MAX, Tnum::sub(a.t, b.t), exact),
            },
            0x20 => match a.hi.checked_mul(b.hi) {
                // Both below 2^32 for the verifier's own scalar_min_max_mul to keep a
                // bound; beyond that it gives up, and so does this (not exact).
                Some(hi) if a.hi <= u32::MAX as u64 && b.hi <= u32::MAX as u64 => {
                    Scalar::range(a.lo * b.lo, hi, exact)
                }
                _ => none,
            },
            0x40 => {
                let t = Tnum::or(a.t, b.t);
                Scalar::with(a.lo.max(b.lo), u64::MAX, t, exact)
            }
            0x50 => {
                let t = Tnum::and(a.t, b.t);
                Scalar::with(0, a.hi.min(b.hi), t, exact)
            }
            0xa0 => Scalar::with(0, u64::MAX, Tnum::xor(a.t, b.t), exact),
            // Shifts by a constant under 64 (the verifier's scalar_min_max_lsh/rsh).
            0x60 => match b.is_const() {
                Some(s) if s < 64 && a.hi.leading_zeros() as u64 >= s => {
                    let t = Tnum {
                        v: a.t.v << s,
                        m: a.t.m << s,
                    };
                    Scalar::with(a.lo << s, a.hi << s, t, a.exact)
                }
                Some(s) if s < 64 => Scalar::with(
                    0,
                    u64::MAX,
                    Tnum {
                        v: a.t.v << s,
                        m: a.t.m << s,
                    },
                    a.exact,
                ),
                _ => none,
            },
            0x70 => match b.is_const() {
                Some(s) if s < 64 => {
                    let t = Tnum {
                        v: a.t.v >> s,
                        m: a.t.m >> s,
                    };
                    Scalar::with(a.lo >> s, a.hi >> s, t, a.exact)
                }
                _ => none,
            },
            // Arithmetic shift: the logical one while the sign bit is known clear.
            0xc0 if a.hi <= i64::MAX as u64 => Scalar::alu(0x70, true, a, b),
            0x30 => match b.is_const() {
                Some(c) if c > 0 => Scalar::range(a.lo / c, a.hi / c, exact),
                _ => none,
            },
            0x90 => match b.is_const() {
                Some(c) if c > 0 && a.hi < c => a.unlinked(),
                Some(c) if c > 0 => Scalar::range(0, c - 1, exact),
                _ => none,
            },
            _ => none,
        }
    }

    fn unlinked(mut self) -> Scalar {
        self.id = 0;
        self.delta = 0;
        self
    }

    /// This value, known to lie in `lo..=hi` (a branch's edge); None if it cannot.
    pub fn clamp(self, lo: u64, hi: u64) -> Option<Scalar> {
        let (lo, hi) = (self.lo.max(lo), self.hi.min(hi));
        if lo > hi {
            return None;
        }
        let t = Tnum::intersect(self.t, Tnum::range(lo, hi));
        Scalar { lo, hi, t, ..self }.synced()
    }
}

/// What a conditional jump (BPF_OP `op`, 64-bit) between `a` and `b` can do: the
/// ranges on the taken and the fall-through edge (None: that edge cannot happen), as
/// is_branch_taken and regs_refine_cond_op decide for unsigned and (on non-negative
/// ranges) signed compares. None overall: not modelled (JSET, signed on negatives).
#[allow(clippy::type_complexity)]
pub fn branch(
    op: u8,
    a: Scalar,
    b: Scalar,
) -> Option<(Option<(Scalar, Scalar)>, Option<(Scalar, Scalar)>)> {
    let signed = matches!(op, 0x60 | 0x70 | 0xc0 | 0xd0);
    if signed && (a.hi > i64::MAX as u64 || b.hi > i64::MAX as u64) {
        return None;
    }
    // One edge of `a OP b` as a relation on unsigned values.
    let edge = |rel: u8| -> Option<(Scalar, Scalar)> {
        match rel {
            // ==
            0x10 => {
                let (lo, hi) = (a.lo.max(b.lo), a.hi.min(b.hi));
                Some((a.clamp(lo, hi)?, b.clamp(lo, hi)?))
            }
            // !=: only a constant at the other's end narrows it.
            0x50 => {
                if let (Some(x), Some(y)) = (a.is_const(), b.is_const()) {
                    return (x != y).then_some((a, b));
                }
                let cut = |s: Scalar, c: Option<u64>| match c {
                    Some(c) if s.lo == c => s.clamp(c.saturating_add(1), s.hi),
                    Some(c) if s.hi == c => s.clamp(s.lo, c.checked_sub(1)?),
                    _ => Some(s),
                };
                Some((cut(a, b.is_const())?, cut(b, a.is_const())?))
            }
            // a > b
            0x20 => Some((
                a.clamp(b.lo.checked_add(1)?, a.hi)?,
                b.clamp(b.lo, a.hi.checked_sub(1)?)?,
            )),
            // a >= b
            0x30 => Some((a.clamp(b.lo, a.hi)?, b.clamp(b.lo, a.hi)?)),
            // a < b
            0xa0 => Some((
                a.clamp(a.lo, b.hi.checked_sub(1)?)?,
                b.clamp(a.lo.checked_add(1)?, b.hi)?,
            )),
            // a <= b
            0xb0 => Some((a.clamp(a.lo, b.hi)?, b.clamp(a.lo, b.hi)?)),
            _ => None,
        }
    };
    let (taken, not) = match op {
        0x10 => (0x10, 0x50),
        0x50 => (0x50, 0x10),
        0x20 | 0x60 => (0x20, 0xb0),
        0x30 | 0x70 => (0x30, 0xa0),
        0xa0 | 0xc0 => (0xa0, 0x30),
        0xb0 | 0xd0 => (0xb0, 0x20),
        _ => return None,
    };
    Some((edge(taken), edge(not)))
}
