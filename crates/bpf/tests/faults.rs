//! Bad input is an error that names the problem, never a panic: tests/progs/faults.bpf.c
//! breaks one rule per case, plus parameters given wrong.

mod common;

use std::collections::BTreeMap;

use common::{compile_with, view};
use tcplab_bpf::{BpfError, BpfObject, BpfParam, BpfParamKind};
use tcplab_cc::ops::CongestionOps;
use tcplab_cc::ParamValue;

const SRC: &str = "crates/bpf/tests/progs/faults.bpf.c";

fn load(case: &str) -> Option<Result<BpfObject, BpfError>> {
    let defines: Vec<&str> = if case.is_empty() { vec![] } else { vec![case] };
    Some(BpfObject::parse(&compile_with(SRC, &defines)?))
}

fn params(kv: &[(&str, ParamValue)]) -> BTreeMap<String, ParamValue> {
    kv.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

#[test]
fn unmodelled_field_is_named_at_load() {
    let Some(r) = load("CASE_UNMODELLED") else {
        return;
    };
    let e = r.unwrap_err();
    assert_eq!(
        e.to_string(),
        "field tcp_sock.rcv_wnd is not modelled by the simulator"
    );
}

#[test]
fn unknown_kfunc_is_named_at_load() {
    let Some(r) = load("CASE_KFUNC") else { return };
    assert_eq!(
        r.unwrap_err(),
        BpfError::UnknownCall {
            name: "tcp_no_such_kfunc".into()
        }
    );
}

#[test]
fn no_struct_ops_section() {
    let Some(r) = load("CASE_NO_OPS") else { return };
    assert_eq!(r.unwrap_err(), BpfError::NoStructOps);
}

#[test]
fn garbage_is_not_an_object() {
    assert!(matches!(
        BpfObject::parse(b"not an elf"),
        Err(BpfError::Elf(_))
    ));
    assert!(matches!(BpfObject::parse(&[]), Err(BpfError::Elf(_))));
}

fn runtime_error(case: &str) -> Option<(String, usize, String)> {
    let obj = load(case)?.unwrap();
    let mut cc = obj
        .instantiate_ops(&BTreeMap::new())
        .unwrap()
        .with_budget(10_000);
    let tp = view(20, 10);
    let ss = cc.ssthresh(&tp);
    assert_eq!(ss, 10, "a failed ssthresh falls back to half of cwnd");
    let msg = cc.fault().expect("a fault");
    // Dead after the first fault: later callbacks do nothing, the error stays.
    let mut tp2 = view(20, 10);
    cc.cong_avoid(&mut tp2, 1, 1);
    assert_eq!(tp2.snd_cwnd, 20);
    match cc.error().cloned() {
        Some(BpfError::Runtime { callback, pc, why }) => {
            assert!(msg.contains(&callback));
            Some((callback, pc, why))
        }
        other => panic!("expected a runtime error, got {other:?}"),
    }
}

#[test]
fn out_of_bounds_read_names_callback_and_pc() {
    let Some((cb, pc, why)) = runtime_error("CASE_OOB") else {
        return;
    };
    assert_eq!(cb, "ssthresh (faults_ssthresh)");
    assert!(pc > 0);
    // icsk_ca_priv is at byte 48 of our image; element 200 is 48 + 1600.
    assert!(
        why.contains("8-byte access at 0x300000670 out of bounds (socket)"),
        "{why}"
    );
}

/// The verifier's refusals, at load: (program, source line, why).
fn verifier_error(case: &str) -> Option<(String, Option<String>, String)> {
    match load(case)? {
        Err(BpfError::Verifier { prog, line, why }) => Some((prog, line, why)),
        other => panic!("expected a verifier error, got {other:?}"),
    }
}

#[test]
fn writing_a_read_only_field_is_refused_at_load_naming_field_and_line() {
    let Some((prog, line, why)) = verifier_error("CASE_READONLY") else {
        return;
    };
    assert_eq!(prog, "faults_ssthresh");
    assert_eq!(line.as_deref(), Some("faults.bpf.c:60: `tp->snd_una = 5;`"));
    assert!(
        why.starts_with("write to tcp_sock.snd_una, a field BPF congestion control may not write"),
        "{why}"
    );
}

#[test]
fn a_license_that_is_not_gpl_compatible_is_refused() {
    for (case, got) in [
        ("CASE_MIT_LICENSE", "its license is \"MIT\""),
        ("CASE_NO_LICENSE", "it has no SEC(\"license\") string"),
    ] {
        let Some((_, _, why)) = verifier_error(case) else {
            return;
        };
        assert!(
            why.starts_with("struct ops programs must have a GPL compatible license"),
            "{why}"
        );
        assert!(why.contains(got), "{why}");
    }
}

/// A loop the kernel verifier refuses ("BPF program is too large": no pass decides
/// `i < cwnd * 1000`, whose bound is any u32) is refused at load here too: the loop walk
/// (vm/loop_walk.rs) reaches the verifier's 1M instructions with its exit undecided.
#[test]
fn a_loop_counted_to_an_unknown_bound_is_refused_at_load() {
    let Some((prog, line, why)) = verifier_error("CASE_LOOP") else {
        return;
    };
    assert_eq!(prog, "faults_ssthresh");
    assert!(why.starts_with("BPF program is too large"), "{why}");
    assert!(
        line.is_some_and(|l| l.starts_with("faults.bpf.c:56:")),
        "the loop's line"
    );
}

#[test]
fn a_loop_with_no_way_out_is_refused_at_load() {
    let Some((prog, line, why)) = verifier_error("CASE_SPIN") else {
        return;
    };
    assert_eq!(prog, "faults_ssthresh");
    assert!(why.starts_with("infinite loop detected at insn"), "{why}");
    assert!(line.is_some_and(|l| l.starts_with("faults.bpf.c:")));
}

#[test]
fn a_call_chain_over_512_stack_bytes_is_refused_at_load() {
    let Some((prog, _, why)) = verifier_error("CASE_BIG_STACK") else {
        return;
    };
    assert_eq!(prog, "faults_ssthresh");
    // 32 u64s in the program (256 bytes) and 40 in the function it calls (320): each
    // fits in 512, together at least 576 do not.
    let total: usize = why
        .strip_prefix("combined stack size of its calls is ")
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{why}"));
    assert!((576..=640).contains(&total), "{why}");
}

#[test]
fn parameters_are_the_scalar_rodata_globals() {
    let Some(r) = load("") else { return };
    let obj = r.unwrap();
    assert_eq!(
        obj.params(),
        vec![
            BpfParam {
                name: "knob".into(),
                kind: BpfParamKind::Int {
                    signed: false,
                    bytes: 4
                },
                default: ParamValue::Num(3.0)
            },
            BpfParam {
                name: "offset".into(),
                kind: BpfParamKind::Int {
                    signed: true,
                    bytes: 1
                },
                default: ParamValue::Num(-1.0)
            },
            BpfParam {
                name: "use_knob".into(),
                kind: BpfParamKind::Bool,
                default: ParamValue::Bool(true)
            },
        ]
    );
    let tp = view(20, 10);
    // knob + offset + 1 + table[0] - 1 = 3 - 1 + 1 + 1 - 1
    let mut cc = obj.instantiate_ops(&BTreeMap::new()).unwrap();
    assert_eq!(cc.ssthresh(&tp), 3);
    let mut cc = obj
        .instantiate_ops(&params(&[("knob", ParamValue::Num(40.0))]))
        .unwrap();
    assert_eq!(cc.ssthresh(&tp), 40);
    let mut cc = obj
        .instantiate_ops(&params(&[("use_knob", ParamValue::Bool(false))]))
        .unwrap();
    assert_eq!(cc.ssthresh(&tp), 7);
    let mut cc = obj
        .instantiate_ops(&params(&[("offset", ParamValue::Num(-3.0))]))
        .unwrap();
    assert_eq!(cc.ssthresh(&tp), 1);
}

#[test]
fn bad_parameters_are_refused_by_name() {
    let Some(r) = load("") else { return };
    let obj = r.unwrap();
    let err = |kv: &[(&str, ParamValue)]| obj.instantiate(&params(kv)).err().unwrap().to_string();
    assert_eq!(
        err(&[("nosuch", ParamValue::Num(1.0))]),
        "parameter nosuch: is not a const volatile global of the program's .rodata"
    );
    assert_eq!(
        err(&[("table", ParamValue::Num(1.0))]),
        "parameter table: is a global of .rodata but not a scalar (bool, integer or enum)"
    );
    assert_eq!(
        err(&[("knob", ParamValue::Bool(true))]),
        "parameter knob: is an integer, not a bool"
    );
    assert_eq!(
        err(&[("use_knob", ParamValue::Num(1.0))]),
        "parameter use_knob: is a bool; give true or false"
    );
    assert_eq!(
        err(&[("knob", ParamValue::Num(1.5))]),
        "parameter knob: 1.5 is not a whole number"
    );
    assert_eq!(
        err(&[("offset", ParamValue::Num(200.0))]),
        "parameter offset: 200 does not fit a s8 (-128..=127)"
    );
    assert_eq!(
        err(&[("knob", ParamValue::Num(-1.0))]),
        "parameter knob: -1 does not fit a u32 (0..=4294967295)"
    );
}
