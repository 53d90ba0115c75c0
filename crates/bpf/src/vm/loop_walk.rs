//! A loop walked pass by pass, as the kernel verifier walks it (kernel/bpf/verifier.c,
//! do_check with is_state_visited): the verifier keeps no summary of a loop; it
//! follows the path around it again and again, its registers' ranges changing each
//! pass, until every exit's branch decides to leave (is_branch_taken), the state at
//! the loop's head repeats exactly ("infinite loop detected"), or it has processed
//! BPF_COMPLEXITY_LIMIT_INSNS (1,000,000) instructions ("BPF program is too large").
//! States of the passes in progress are never used to prune the walk, so a counter
//! compared with a bound the ranges cannot decide, `for (i = 0; i < cwnd; i++)`, is
//! walked to the limit; `i < cwnd && i < 16` and a bound clamped first end in time.
//!
//! Here one pass is the loop's body run once over track.rs's states (paths inside the
//! body joined), from the state the previous pass left at the head.
//!
//! Deviations (each can only make this accept what the kernel refuses, never the
//! reverse): a pass whose path back to the head went through a branch the tracking
//! could not decide with exact ranges (`State::sure`) ends the walk, accepted; the
//! instructions counted are one pass's distinct pcs, fewer than the verifier's (it
//! also walks each exit's side); a loop with another loop inside it is not walked.

use crate::vm::insn::{Insn, CLASS_JMP, CLASS_JMP32, LD_IMM64};
use crate::vm::track::{join, step, Env, State};

/// BPF_COMPLEXITY_LIMIT_INSNS (include/linux/bpf.h).
pub const BPF_COMPLEXITY_LIMIT_INSNS: usize = 1_000_000;

/// Walks the loop of header `t` (`body[pc]`: pc is in it; `back`: its last latch, for
/// the message) from `entry`, the state on the edges into it.
pub(crate) fn walk(
    insns: &[Insn],
    body: &[bool],
    t: usize,
    back: usize,
    entry: State,
    env: &Env,
) -> Result<(), (usize, String)> {
    let order = body_order(insns, body, t);
    // Each body pc's place in `order`.
    let mut slot = vec![usize::MAX; insns.len()];
    for (k, &pc) in order.iter().enumerate() {
        slot[pc] = k;
    }
    let mut cur = entry;
    let mut processed = 0usize;
    let mut passes = 0usize;
    let mut states: Vec<Option<State>> = vec![None; order.len()];
    loop {
        states.fill(None);
        states[0] = Some(cur);
        let mut next: Option<State> = None;
        for k in 0..order.len() {
            let Some(s) = states[k] else { continue };
            processed += 1;
            for (q, e) in step(insns, order[k], &s, env) {
                if q == t {
                    next = Some(next.map_or(e, |old| join(&old, &e)));
                } else if let Some(&j) = slot.get(q).filter(|&&j| j != usize::MAX) {
                    states[j] = Some(states[j].map_or(e, |old| join(&old, &e)));
                }
            }
        }
        passes += 1;
        let Some(next) = next else {
            return Ok(()); // every exit decided: the loop ends
        };
        if !next.sure {
            return Ok(());
        }
        if next == cur {
            return Err((
                back,
                format!(
                    "infinite loop detected at insn {t}: the state at the loop's head \
                     repeats after a pass (back-edge from insn {back})"
                ),
            ));
        }
        if processed > BPF_COMPLEXITY_LIMIT_INSNS {
            return Err((
                back,
                format!(
                    "BPF program is too large: the loop from insn {t} to {back} is not \
                     bounded within the verifier's {BPF_COMPLEXITY_LIMIT_INSNS} \
                     instructions ({passes} passes walked, its exit still undecided: a \
                     bound the verifier cannot see; clamp it, `n = min(n, 64)`)"
                ),
            ));
        }
        cur = next;
    }
}

/// The body's pcs, the head first, each after every body pc with an edge into it
/// (the body without its back-edges is acyclic: no loop inside, see the caller).
fn body_order(insns: &[Insn], body: &[bool], t: usize) -> Vec<usize> {
    // Successors by opcode alone.
    let succ = |pc: usize| -> Vec<usize> {
        let i = insns[pc];
        let next = if i.code == LD_IMM64 { pc + 2 } else { pc + 1 };
        let to = (pc as i64 + 1 + i64::from(i.off)) as usize;
        match (i.class(), i.code & 0xf0) {
            (CLASS_JMP, 0x90) => vec![],
            (CLASS_JMP, 0x80) => vec![next],
            (CLASS_JMP, 0x00) => vec![to],
            (CLASS_JMP | CLASS_JMP32, _) => vec![next, to],
            _ => vec![next],
        }
    };
    // Reverse postorder of a depth-first walk from t inside the body.
    let mut post = Vec::new();
    let mut seen = vec![false; insns.len()];
    let mut stack = vec![(t, 0usize)];
    seen[t] = true;
    while let Some((pc, k)) = stack.pop() {
        let out = succ(pc);
        if let Some(&q) = out.get(k) {
            stack.push((pc, k + 1));
            if q < body.len() && body[q] && q != t && !seen[q] {
                seen[q] = true;
                stack.push((q, 0));
            }
        } else {
            post.push(pc);
        }
    }
    post.reverse();
    post
}
