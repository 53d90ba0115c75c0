//! The bpf_loop helper (tests/progs/loop.bpf.c): iterations, early stop, the kernel's
//! error returns, a nested loop, and the callbacks' instructions on the budget.

mod common;

use std::collections::BTreeMap;

use common::{compile, view};
use tcplab_bpf::{BpfObject, KernelEnv, LoadedProgram};
use tcplab_cc::ops::CongestionOps;

fn load() -> Option<LoadedProgram> {
    let bytes = compile("crates/bpf/tests/progs/loop.bpf.c")?;
    let obj = BpfObject::parse(&bytes).unwrap();
    Some(obj.load(&BTreeMap::new(), &KernelEnv::default()).unwrap())
}

#[test]
fn bpf_loop_runs_the_callback_until_nr_loops_or_its_stop() {
    let Some(prog) = load() else { return };
    let mut ops = prog.instantiate(1);
    // 10 loops under a limit of 100: all run; 0 + 1 + ... + 9 = 45.
    let mut tp = view(3, 100);
    ops.cong_avoid(&mut tp, 0, 10);
    assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (10, 45));
    // Limit 4: indexes 0..3 add 6, index 4 returns 1: bpf_loop returns 4 + 1.
    let mut tp = view(3, 4);
    ops.cong_avoid(&mut tp, 0, 10);
    assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (5, 6));
    // No loops: 0, nothing added.
    let mut tp = view(3, 100);
    ops.cong_avoid(&mut tp, 0, 0);
    assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (0, 0));
}

#[test]
fn a_callback_may_loop_itself() {
    let Some(prog) = load() else { return };
    let mut ops = prog.instantiate(1);
    // Two outer iterations, each bpf_loop(3, add_index): 2 * (0 + 1 + 2) = 6.
    let mut tp = view(3, 100);
    ops.in_ack_event(&mut tp, 0);
    assert_eq!(tp.snd_cwnd, 2 * 1000 + 6);
}

#[test]
fn flags_and_too_many_loops_are_the_kernels_errors() {
    let Some(prog) = load() else { return };
    let mut ops = prog.instantiate(1);
    let tp = view(3, 100);
    // -EINVAL (22) and -E2BIG (7), as the u32 the callbacks return.
    assert_eq!(ops.ssthresh(&tp), (-22i32) as u32);
    assert_eq!(ops.undo_cwnd(&tp), (-7i32) as u32);
}

#[test]
fn the_callbacks_instructions_count_against_the_budget() {
    let Some(prog) = load() else { return };
    // 1000 iterations of a callback of at least 6 instructions cannot fit in 1000.
    let mut ops = prog.instantiate_socket(1).with_budget(1000);
    let mut tp = view(3, 10_000);
    ops.cong_avoid(&mut tp, 0, 1000);
    let e = ops.error().expect("the budget is exhausted").to_string();
    assert!(e.contains("budget of 1000 exhausted"), "{e}");
    // 100 iterations fit in 100_000.
    let mut ops = prog.instantiate_socket(1).with_budget(100_000);
    let mut tp = view(3, 10_000);
    ops.cong_avoid(&mut tp, 0, 100);
    assert!(ops.error().is_none());
    assert_eq!((tp.snd_cwnd, tp.snd_ssthresh), (100, 4950));
}
