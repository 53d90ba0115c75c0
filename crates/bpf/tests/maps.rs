//! Maps, bpf_printk and socket options (tests/progs/maps.bpf.c), two sockets of one
//! loaded program; every expected value worked out by hand from the program's comment.

mod common;

use std::collections::BTreeMap;

use common::{compile_with, view};
use tcplab_bpf::{BpfError, BpfObject, KernelEnv, PrintkLine};
use tcplab_cc::ops::CaState;

const SRC: &str = "crates/bpf/tests/progs/maps.bpf.c";

fn object(defines: &[&str]) -> Option<Result<BpfObject, BpfError>> {
    Some(BpfObject::parse(&compile_with(SRC, defines)?))
}

fn line(time_ns: u64, text: &str) -> PrintkLine {
    PrintkLine {
        time_ns,
        text: text.into(),
    }
}

#[test]
fn maps_are_the_programs_and_sk_storage_is_the_sockets() {
    let Some(obj) = object(&[]) else { return };
    let prog = obj
        .unwrap()
        .load(&BTreeMap::new(), &KernelEnv::default())
        .unwrap();
    let mut a = prog.instantiate(0);
    let mut b = prog.instantiate(0);
    let mut va = view(10, 100);
    let mut vb = view(4, 100);
    vb.now_us = 2_000_000;
    a.init(&mut va);
    b.init(&mut vb);

    // a: acks[1] = 1; `seen` gets 10 (0); a's count 1.
    a.cong_avoid(&mut va, 0, 1);
    assert_eq!((va.snd_cwnd, va.snd_ssthresh), (1, 0));
    // b: acks[1] = 2; `seen` gets 4 (0): now full; b's count 1.
    b.cong_avoid(&mut vb, 0, 1);
    assert_eq!((vb.snd_cwnd, vb.snd_ssthresh), (1, 0));
    // a at cwnd 1, acked 2: acks[2] = 1; `seen` is full: -E2BIG; a's count 3.
    a.cong_avoid(&mut va, 0, 2);
    assert_eq!((va.snd_cwnd, va.snd_ssthresh), (3, (-7i32) as u32));
    // b at cwnd 1 again: inserting 1 is refused as full, not as existing (1 never went
    // in); b's count 1 + 5 = 6; acks[1] = 3.
    b.cong_avoid(&mut vb, 0, 5);
    assert_eq!((vb.snd_cwnd, vb.snd_ssthresh), (6, (-7i32) as u32));
    // acks[1] = 3, acks[2] = 1, shared by both sockets.
    assert_eq!(a.ssthresh(&va), 301);
    assert_eq!(b.ssthresh(&vb), 301);
    // Index 5 is beyond the array's 4 entries: NULL.
    assert_eq!(a.undo_cwnd(&va), 77);

    // a's storage deleted by release: its next cong_avoid finds none (999); b keeps its.
    a.release(&mut va);
    a.cong_avoid(&mut va, 0, 1);
    assert_eq!(va.snd_cwnd, 999);
    b.cong_avoid(&mut vb, 0, 1);
    assert_eq!(vb.snd_cwnd, 7);

    // total[0] = 1 + 1 + 2 + 5 + 1 + 1 = 11.
    b.in_ack_event(&mut vb, 0);
    assert_eq!(
        prog.printk(),
        vec![
            line(1_000_000_000, "init 1 cwnd 10"),
            line(2_000_000_000, "init 2 cwnd 4"),
            line(2_000_000_000, "1 2 3 4"),
            line(2_000_000_000, "total 11"),
        ]
    );
}

#[test]
fn socket_options_a_congestion_control_may_use() {
    let Some(obj) = object(&[]) else { return };
    let prog = obj
        .unwrap()
        .load(&BTreeMap::new(), &KernelEnv::default())
        .unwrap();
    let mut s = prog.instantiate(0);
    let mut v = view(10, 100);
    v.pacing_rate = 1_000_000;
    v.max_pacing_rate = u64::MAX;
    s.set_state(&mut v, CaState::Loss);
    assert_eq!(s.fault(), None);
    // SO_MAX_PACING_RATE 12345 caps the pacing rate too (sk_setsockopt).
    assert_eq!((v.max_pacing_rate, v.pacing_rate), (12345, 12345));
    assert_eq!(prog.printk(), vec![line(1_000_000_000, "ca maps_test")]);
}

#[test]
fn helpers_the_kernel_refuses_are_refused_at_load() {
    let Some(r) = object(&["CASE_SETSOCKOPT_IN_RELEASE"]) else {
        return;
    };
    let e = r.unwrap_err().to_string();
    assert!(e.starts_with("program maps_release (maps.bpf.c:"), "{e}");
    assert!(
        e.ends_with(
            "bpf_setsockopt (helper #49) is not available to struct_ops tcp_congestion_ops \
             programs in release (net/ipv4/bpf_tcp_ca.c bpf_tcp_ca_get_func_proto)"
        ),
        "{e}"
    );
    let e = object(&["CASE_PID"]).unwrap().unwrap_err().to_string();
    assert!(
        e.contains("bpf_get_current_pid_tgid (helper #14) is not available"),
        "{e}"
    );
}
