//! The kernel verifier's verdicts without the kernel (issue 39): each case of
//! tests/progs/verifier.bpf.c is loaded and run in the simulator, and its verdict at
//! load is the one common::VERIFIER_CASES gives; tests/kernel_load.rs holds the same
//! objects against the running kernel. Every number below is worked out by hand from
//! the program's comment.

mod common;

use std::collections::BTreeMap;

use common::{compile_with, view, VERIFIER_CASES, VERIFIER_SRC};
use tcplab_bpf::{BpfError, BpfObject, KernelEnv, LoadedProgram};
use tcplab_cc::ops::CongestionOps;

fn object(case: &str) -> Option<Result<BpfObject, BpfError>> {
    let defines: Vec<&str> = if case.is_empty() { vec![] } else { vec![case] };
    Some(BpfObject::parse(&compile_with(VERIFIER_SRC, &defines)?))
}

fn loaded(case: &str) -> Option<LoadedProgram> {
    let obj = object(case)?.unwrap_or_else(|e| panic!("{case}: refused: {e}"));
    Some(obj.load(&BTreeMap::new(), &KernelEnv::default()).unwrap())
}

/// `vals[k]` as two u64s, from the program's map dump.
fn vals(prog: &LoadedProgram, k: u32) -> (u64, u64) {
    let m = prog
        .maps_dump()
        .into_iter()
        .find(|m| m.name == "vals")
        .unwrap();
    let (_, v) = m
        .entries
        .iter()
        .find(|(key, _)| key[..] == k.to_le_bytes())
        .unwrap()
        .clone();
    let word = |i: usize| u64::from_le_bytes(v[8 * i..8 * i + 8].try_into().unwrap());
    (word(0), word(1))
}

fn bss_u32(prog: &LoadedProgram) -> u32 {
    let b = prog.global_section(".bss").unwrap();
    u32::from_le_bytes(b[..4].try_into().unwrap())
}

#[test]
fn each_case_gets_its_verdict_at_load() {
    for case in VERIFIER_CASES {
        let Some(r) = object(case.define) else { return };
        match (r, case.simulator) {
            (Ok(_), None) => {}
            (Err(e), Some(want)) => {
                let got = e.to_string();
                assert!(got.contains(want), "{}: {got}", case.define);
            }
            (Ok(_), Some(want)) => panic!("{}: loaded; expected {want:?}", case.define),
            (Err(e), None) => panic!("{}: refused: {e}", case.define),
        }
    }
}

#[test]
fn refusals_name_the_program_and_the_source_line() {
    for (case, line) in [
        (
            "CASE_MAP_CONST_OOB",
            "verifier.bpf.c:84: `v[2] = tp->snd_cwnd;`",
        ),
        (
            "CASE_MAP_VAR_OOB",
            "verifier.bpf.c:87: `v[tp->snd_cwnd % 4] = tp->snd_cwnd;`",
        ),
        (
            "CASE_MAP_VAR_UNBOUNDED",
            "verifier.bpf.c:93: `v[tp->snd_cwnd] = tp->snd_cwnd;`",
        ),
        ("CASE_STACK_FP0", "verifier.bpf.c:102:"),
        ("CASE_LOOP_FRESH", "verifier.bpf.c:110:"),
        ("CASE_LOOP_COUNTED", "verifier.bpf.c:118:"),
    ] {
        let Some(r) = object(case) else { return };
        match r {
            Err(BpfError::Verifier { prog, line: l, .. }) => {
                assert_eq!(prog, "verifier_ssthresh", "{case}");
                let l = l.unwrap_or_default();
                assert!(l.starts_with(line), "{case}: {l}");
            }
            other => panic!("{case}: {other:?}"),
        }
    }
}

#[test]
fn the_well_formed_case_writes_its_own_value_only() {
    let Some(prog) = loaded("") else { return };
    let mut cc = prog.instantiate_socket(0);
    // v = vals[1] = (20, 21); the loop adds them: 41.
    assert_eq!(cc.ssthresh(&view(20, 10)), 41);
    assert_eq!(vals(&prog, 1), (20, 21));
    assert_eq!(vals(&prog, 2), (0, 0));
}

#[test]
fn a_bounded_variable_index_writes_its_own_slot() {
    let Some(prog) = loaded("CASE_MAP_VAR_AND") else {
        return;
    };
    // cwnd 21: index 21 & 1 = 1, v[1] of vals[1] = 21.
    let mut cc = prog.instantiate_socket(0);
    assert_eq!(cc.ssthresh(&view(21, 10)), 3);
    assert_eq!(vals(&prog, 1), (0, 21));
    // cwnd 20: index 0.
    assert_eq!(cc.ssthresh(&view(20, 10)), 3);
    assert_eq!(vals(&prog, 1), (20, 21));
    assert_eq!(vals(&prog, 2), (0, 0));
}

#[test]
fn a_checked_index_writes_only_inside_the_value() {
    let Some(prog) = loaded("CASE_MAP_VAR_CHECKED") else {
        return;
    };
    let mut cc = prog.instantiate_socket(0);
    // cwnd 1: k = 1 < 2, v[1] = 1.
    assert_eq!(cc.ssthresh(&view(1, 10)), 3);
    assert_eq!(vals(&prog, 1), (0, 1));
    // cwnd 7: k = 7, no write.
    assert_eq!(cc.ssthresh(&view(7, 10)), 3);
    assert_eq!(vals(&prog, 1), (0, 1));
    assert!(cc.error().is_none(), "{:?}", cc.error());
}

#[test]
fn loops_the_verifier_bounds_run_to_their_bound() {
    // for (i = 0; i < 64; i++) spins++: 64 whatever cwnd is.
    if let Some(prog) = loaded("CASE_LOOP_CONST") {
        let mut cc = prog.instantiate_socket(0);
        assert_eq!(cc.ssthresh(&view(20, 10)), 64);
    }
    // i < cwnd && i < 16: min(cwnd, 16) passes.
    if let Some(prog) = loaded("CASE_LOOP_CLAMPED") {
        let mut cc = prog.instantiate_socket(0);
        assert_eq!(cc.ssthresh(&view(20, 10)), 16);
        assert_eq!(cc.ssthresh(&view(5, 10)), 5);
    }
    // n = min(cwnd, 64): 64 for cwnd 100, 20 for 20.
    if let Some(prog) = loaded("CASE_LOOP_MIN") {
        let mut cc = prog.instantiate_socket(0);
        assert_eq!(cc.ssthresh(&view(100, 10)), 64);
        assert_eq!(cc.ssthresh(&view(20, 10)), 20);
    }
}

#[test]
fn a_tail_call_into_itself_runs_max_tail_call_cnt_times() {
    let Some(prog) = loaded("CASE_TAIL_CALL") else {
        return;
    };
    let mut cc = prog.instantiate_socket(0);
    // The first run and 33 tail calls each count once; the 34th call falls through.
    assert_eq!(cc.ssthresh(&view(20, 10)), 7);
    assert!(cc.error().is_none(), "{:?}", cc.error());
    assert_eq!(bss_u32(&prog), 34);
    // The count is per callback: a second ssthresh counts 34 more.
    assert_eq!(cc.ssthresh(&view(20, 10)), 7);
    assert_eq!(bss_u32(&prog), 68);
}

#[test]
fn a_tail_call_into_an_empty_slot_falls_through() {
    let Some(prog) = loaded("CASE_TAIL_CALL_EMPTY") else {
        return;
    };
    let mut cc = prog.instantiate_socket(0);
    assert_eq!(cc.ssthresh(&view(20, 10)), 7);
    assert_eq!(bss_u32(&prog), 1);
}

/// The load checks refuse nothing the kernel accepts: every shipped example (all pass
/// the 6.18 verifier, tests/kernel_load.rs) loads.
#[test]
fn every_shipped_example_loads() {
    let mut paths = Vec::new();
    for dir in ["bpf/examples"] {
        for e in std::fs::read_dir(common::repo().join(dir)).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            if name.ends_with(".bpf.c") {
                paths.push(format!("{dir}/{name}"));
            }
        }
    }
    paths.sort();
    assert!(paths.len() >= 14, "{paths:?}");
    for name in paths {
        let Some(bytes) = common::compile(&name) else {
            return;
        };
        if let Err(e) = BpfObject::parse(&bytes) {
            panic!("{name}: refused: {e}");
        }
    }
}
