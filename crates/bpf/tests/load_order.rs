//! What the simulator names when a program breaks several rules: the kernel's first
//! refusal. The kernel refuses a struct_ops program at load (BPF_PROG_LOAD: the license,
//! then the helpers it calls) before it checks the struct's members at registration
//! (tcp_validate_congestion_control); the kernel's selftests bpf_tcp_nogpl.c and
//! bpf_dctcp_release.c (no ssthresh either) are refused for the license and for
//! bpf_setsockopt in release, never for ssthresh (tests/progs/incomplete.bpf.c).

mod common;

use common::compile_with;
use tcplab_bpf::{split_object_ref, BpfObject};

const SRC: &str = "crates/bpf/tests/progs/incomplete.bpf.c";

fn refusal(case: &[&str]) -> Option<String> {
    Some(
        BpfObject::parse(&compile_with(SRC, case)?)
            .unwrap_err()
            .to_string(),
    )
}

#[test]
fn a_missing_ssthresh_alone_is_named() {
    let Some(e) = refusal(&[]) else { return };
    assert!(
        e.contains("tcp_congestion_ops.ssthresh is required (tcp_validate_congestion_control)"),
        "{e}"
    );
}

#[test]
fn no_license_is_named_before_a_missing_ssthresh() {
    let Some(e) = refusal(&["CASE_NO_LICENSE"]) else {
        return;
    };
    assert!(
        e.contains("struct ops programs must have a GPL compatible license"),
        "{e}"
    );
}

#[test]
fn setsockopt_in_release_is_named_before_a_missing_ssthresh() {
    let Some(e) = refusal(&["CASE_RELEASE_SETSOCKOPT"]) else {
        return;
    };
    assert!(
        e.contains("bpf_setsockopt")
            && e.contains("in release")
            && e.contains("incomplete_release"),
        "{e}"
    );
    let Some(e) = refusal(&["CASE_RELEASE_SETSOCKOPT", "CASE_NO_LICENSE"]) else {
        return;
    };
    assert!(e.contains("GPL compatible license"), "{e}");
}

#[test]
fn an_object_reference_names_the_file_and_the_chosen_struct_ops() {
    assert_eq!(split_object_ref("/c/ab.o"), ("/c/ab.o", None));
    assert_eq!(
        split_object_ref("/c/ab.o#dctcp"),
        ("/c/ab.o", Some("dctcp"))
    );
    // A '#' in a directory name is the path's; an empty name is no choice.
    assert_eq!(split_object_ref("/c#1/ab.o"), ("/c#1/ab.o", None));
    assert_eq!(split_object_ref("/c/ab.o#"), ("/c/ab.o#", None));
}
