//! The same objects in the running kernel: every shipped example (each
//! bpf/examples/*.bpf.c, read from the directory so that a new twin is covered) is
//! registered with `bpftool struct_ops register` (the kernel verifier and libbpf's
//! CO-RE against /sys/kernel/btf/vmlinux) and unregistered again. It changes the
//! machine's list of congestion controls for a moment, so it is opt-in:
//! `cargo test -p tcplab-bpf --test kernel_load -- --ignored` as root with bpftool
//! (checked on 6.18.44, 2026-12-02: all twenty examples load, ledbat and copa among them;
//! 2026-12-03: all twenty-one, vivace's socket storage and global subprograms among them).

mod common;

use std::process::Command;

fn bpftool(args: &[&str]) -> Result<String, String> {
    let out = Command::new("bpftool")
        .args(args)
        .output()
        .map_err(|e| format!("bpftool: {e}"))?;
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        Ok(text)
    } else {
        Err(text)
    }
}

/// The stems of bpf/examples/*.bpf.c, sorted (`cubic` for cubic.bpf.c).
fn examples() -> Vec<String> {
    let dir = common::repo().join("bpf/examples");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".bpf.c").map(str::to_string)
        })
        .collect();
    names.sort();
    names
}

#[test]
fn the_examples_directory_is_read_whole() {
    // Not the kernel: that the list below is the directory's, twins included.
    let names = examples();
    for name in ["reno", "cubic", "dctcp", "bbr", "westwood", "cdg", "ledbat"] {
        assert!(names.iter().any(|n| n == name), "{name} not in {names:?}");
    }
}

/// Registers one example; Ok(true) when the kernel then offers `bpf_NAME` (each
/// example's tcp_congestion_ops.name), Err with bpftool's output (libbpf prints the
/// verifier's log) when the kernel refused it.
fn register(name: &str, bytes: &[u8]) -> Result<bool, String> {
    let path = std::env::temp_dir().join(format!("tcplab_kernel_{name}.bpf.o"));
    std::fs::write(&path, bytes).unwrap();
    let out = bpftool(&["struct_ops", "register", path.to_str().unwrap()])?;
    // "Registered tcp_congestion_ops <map> id <n>"
    let id = out
        .split_whitespace()
        .skip_while(|w| *w != "id")
        .nth(1)
        .ok_or_else(|| format!("no id in {out:?}"))?
        .to_string();
    let avail = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .unwrap_or_default();
    bpftool(&["struct_ops", "unregister", "id", &id])?;
    Ok(avail.split_whitespace().any(|n| n == format!("bpf_{name}")))
}

#[test]
#[ignore = "loads programs into the running kernel; run by hand as root"]
fn every_example_passes_the_kernel_verifier() {
    if !std::path::Path::new("/sys/kernel/btf/vmlinux").exists() || bpftool(&["version"]).is_err() {
        eprintln!("SKIPPED: no kernel BTF or no bpftool");
        return;
    }
    let mut refused = Vec::new();
    for name in examples() {
        let Some(bytes) = common::compile(&format!("bpf/examples/{name}.bpf.c")) else {
            return;
        };
        match register(&name, &bytes) {
            Ok(true) => eprintln!("{name}: loaded"),
            Ok(false) => refused.push(format!("{name}: registered but not offered")),
            Err(log) => refused.push(format!("{name}: the kernel refused it:\n{log}")),
        }
    }
    assert!(refused.is_empty(), "{}", refused.join("\n"));
}

/// The kernel's verdict on each case of tests/progs/verifier.bpf.c (the object
/// registered with bpftool, whose libbpf prints the verifier's log on a refusal) is
/// the one common::VERIFIER_CASES gives, which tests/verifier.rs holds the simulator
/// to, so where they agree a spec gets one verdict with the loader and without it.
/// Skipped (passing) without root, /sys/kernel/btf/vmlinux or bpftool. Checked on
/// 6.18.44: all sixteen as listed (93 s for both tests at load ~6; the verifier walks
/// CASE_LOOP_FRESH and CASE_LOOP_COUNTED to its limit).
#[test]
#[ignore = "loads programs into the running kernel; run by hand as root"]
fn the_kernel_gives_the_verdicts_the_simulator_is_held_to() {
    if !std::path::Path::new("/sys/kernel/btf/vmlinux").exists() || bpftool(&["version"]).is_err() {
        eprintln!("SKIPPED: no kernel BTF or no bpftool");
        return;
    }
    for case in common::VERIFIER_CASES {
        let defines: Vec<&str> = if case.define.is_empty() {
            vec![]
        } else {
            vec![case.define]
        };
        let Some(bytes) = common::compile_with(common::VERIFIER_SRC, &defines) else {
            return;
        };
        let path = std::env::temp_dir().join(format!("tcplab_verifier{}.bpf.o", case.define));
        std::fs::write(&path, bytes).unwrap();
        match (
            bpftool(&["struct_ops", "register", path.to_str().unwrap()]),
            case.kernel,
        ) {
            (Ok(out), want) => {
                let id = out
                    .split_whitespace()
                    .skip_while(|w| *w != "id")
                    .nth(1)
                    .unwrap_or_else(|| panic!("{}: no id in {out:?}", case.define))
                    .to_string();
                bpftool(&["struct_ops", "unregister", "id", &id]).unwrap();
                assert_eq!(want, None, "{}: the kernel loaded it", case.define);
            }
            (Err(log), Some(want)) => {
                assert!(
                    log.contains(want),
                    "{}: {want:?} not in\n{log}",
                    case.define
                )
            }
            (Err(log), None) => panic!("{}: the kernel refused it:\n{log}", case.define),
        }
    }
}
