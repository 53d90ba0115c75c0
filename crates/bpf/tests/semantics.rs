//! The kernel's semantics for a loaded program (tests/progs/semantics.bpf.c): globals
//! shared by every socket running one loaded program, `__kconfig` externs from the
//! `KernelEnv`, jiffies at its CONFIG_HZ, `cong_control`'s `flag`, `release`.

mod common;

use std::collections::BTreeMap;

use common::{compile_with, view};
use tcplab_bpf::program::kernel_version;
use tcplab_bpf::{BpfError, BpfObject, KernelEnv, LoadedProgram};
use tcplab_cc::ops::RateSample;

const SRC: &str = "crates/bpf/tests/progs/semantics.bpf.c";

fn object(defines: &[&str]) -> Option<BpfObject> {
    Some(BpfObject::parse(&compile_with(SRC, defines)?).unwrap())
}

fn load(env: &KernelEnv) -> Option<LoadedProgram> {
    Some(object(&[])?.load(&BTreeMap::new(), env).unwrap())
}

#[test]
fn globals_are_shared_by_the_sockets_of_one_loaded_program() {
    let Some(prog) = load(&KernelEnv::default()) else {
        return;
    };
    let mut a = prog.instantiate(1);
    let mut b = prog.instantiate(2);
    let mut va = view(10, 100);
    let mut vb = view(4, 100);
    a.init(&mut va);
    b.init(&mut vb);
    // Two sockets initialised; a sees b's increment.
    assert_eq!(a.ssthresh(&va), 2);
    assert_eq!(b.ssthresh(&vb), 2);
    // The lowest initial cwnd, 4, came from b.
    a.cong_avoid(&mut va, 0, 1);
    assert_eq!(va.snd_ssthresh, 4);
    // .bss holds `sockets` = 2 (and releases = 0) for the program as a whole.
    let bss = prog.global_section(".bss").unwrap();
    assert!(bss.chunks(8).any(|c| c == 2u64.to_le_bytes()));
}

#[test]
fn separate_loads_are_separate_programs() {
    let Some(obj) = object(&[]) else { return };
    let env = KernelEnv::default();
    let p1 = obj.load(&BTreeMap::new(), &env).unwrap();
    let p2 = obj.load(&BTreeMap::new(), &env).unwrap();
    let mut a = p1.instantiate(1);
    let mut b = p2.instantiate(1);
    let mut va = view(10, 100);
    let mut vb = view(4, 100);
    a.init(&mut va);
    b.init(&mut vb);
    assert_eq!(a.ssthresh(&va), 1);
    a.cong_avoid(&mut va, 0, 1);
    assert_eq!(va.snd_ssthresh, 10);
}

#[test]
fn kconfig_externs_read_the_simulated_kernel() {
    let Some(p) = load(&KernelEnv::default()) else {
        return;
    };
    let mut s = p.instantiate(0);
    let mut v = view(10, 100);
    assert_eq!(s.undo_cwnd(&v), 1000);
    s.cong_avoid(&mut v, 0, 1);
    // LINUX_KERNEL_VERSION 6.18.0: minor 18; the weak CONFIG_TCPLAB_NOT_SET reads 0.
    assert_eq!(v.snd_cwnd, 18);

    let env = KernelEnv {
        hz: 250,
        kernel_version: kernel_version(5, 15, 3),
        ..KernelEnv::default()
    };
    let p = load(&env).unwrap();
    let mut s = p.instantiate(0);
    let mut v = view(10, 100);
    assert_eq!(s.undo_cwnd(&v), 250);
    s.cong_avoid(&mut v, 0, 1);
    assert_eq!(v.snd_cwnd, 15);

    // A weak option the kernel sets (y = 1) adds 1000.
    let mut env = KernelEnv::default();
    env.kconfig.insert("CONFIG_TCPLAB_NOT_SET".into(), 1);
    let p = load(&env).unwrap();
    let mut s = p.instantiate(0);
    s.cong_avoid(&mut v, 0, 1);
    assert_eq!(v.snd_cwnd, 1018);
}

#[test]
fn an_unknown_kconfig_option_is_refused_naming_it() {
    let Some(obj) = object(&["CASE_MISSING"]) else {
        return;
    };
    let e = obj
        .load(&BTreeMap::new(), &KernelEnv::default())
        .unwrap_err();
    assert!(
        matches!(&e, BpfError::Kconfig { name, .. } if name == "CONFIG_TCPLAB_MISSING"),
        "{e}"
    );
    assert!(e
        .to_string()
        .starts_with("extern CONFIG_TCPLAB_MISSING __kconfig: not set"));
    let mut env = KernelEnv::default();
    env.kconfig.insert("CONFIG_TCPLAB_MISSING".into(), 40);
    let p = obj.load(&BTreeMap::new(), &env).unwrap();
    let mut s = p.instantiate(0);
    let mut v = view(10, 100);
    s.init(&mut v);
    assert_eq!(s.ssthresh(&v), 41);
}

#[test]
fn jiffies_tick_at_config_hz() {
    for (hz, lsnd, now) in [(1000, 1000, 2000), (250, 250, 500), (100, 100, 200)] {
        let Some(p) = load(&KernelEnv {
            hz,
            ..KernelEnv::default()
        }) else {
            return;
        };
        let mut s = p.instantiate(0);
        let mut v = view(10, 100);
        v.now_us = 2_000_000;
        v.lsndtime_us = 1_000_000;
        s.in_ack_event(&mut v, 0);
        assert_eq!((v.snd_cwnd, v.snd_ssthresh), (lsnd, now), "hz {hz}");
    }
}

#[test]
fn cong_control_gets_the_ack_flag() {
    let Some(p) = load(&KernelEnv::default()) else {
        return;
    };
    let mut s = p.instantiate(0);
    let rs = RateSample::default();
    let mut v = view(10, 100);
    // FLAG_DATA_ACKED | FLAG_SND_UNA_ADVANCED: may raise cwnd.
    s.cong_control_flag(&mut v, &rs, 0x04 | 0x400);
    assert_eq!(v.snd_cwnd, 11);
    // With FLAG_ECE it may not; the program writes the flag itself.
    s.cong_control_flag(&mut v, &rs, 0x04 | 0x40);
    assert_eq!(v.snd_cwnd, 0x44);
}

#[test]
fn release_runs_once_per_socket() {
    let Some(p) = load(&KernelEnv::default()) else {
        return;
    };
    let mut a = p.instantiate(0);
    let mut b = p.instantiate(0);
    let mut v = view(10, 100);
    a.release(&mut v);
    assert_eq!(v.snd_ssthresh, 1);
    b.release(&mut v);
    assert_eq!(v.snd_ssthresh, 2);
}

#[test]
fn several_struct_ops_are_chosen_by_name() {
    let Some(bytes) = compile_with("crates/bpf/tests/progs/two_ops.bpf.c", &[]) else {
        return;
    };
    let e = BpfObject::parse(&bytes).unwrap_err().to_string();
    assert_eq!(
        e,
        "not a usable BPF object: 2 tcp_congestion_ops in the object, choose one by name: \
         first (.name \"two_a\"), second (.name \"two_b\")"
    );
    let v = view(10, 100);
    // By variable name or by .name; the .struct_ops.link one as the .struct_ops one.
    for (want, name, ss) in [
        ("first", "two_a", 1),
        ("two_a", "two_a", 1),
        ("second", "two_b", 2),
        ("two_b", "two_b", 2),
    ] {
        let obj = BpfObject::parse_named(&bytes, Some(want)).unwrap();
        assert_eq!(obj.name(), name);
        let p = obj.load(&BTreeMap::new(), &KernelEnv::default()).unwrap();
        assert_eq!(p.instantiate(0).ssthresh(&v), ss, "{want}");
    }
    let e = BpfObject::parse_named(&bytes, Some("third"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no struct_ops variable named \"third\"; the object has first"),
        "{e}"
    );
}
