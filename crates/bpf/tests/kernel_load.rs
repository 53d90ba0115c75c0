//! The same objects in the running kernel: each example is registered with
//! `bpftool struct_ops register` (the kernel verifier and libbpf's CO-RE against
//! /sys/kernel/btf/vmlinux) and unregistered again. It changes the machine's list of
//! congestion controls for a moment, so it is opt-in:
//! `cargo test -p tcplab-bpf --test kernel_load -- --ignored` as root with bpftool
//! (checked on 6.18: all four load).

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

#[test]
#[ignore = "loads programs into the running kernel; run by hand as root"]
fn every_example_passes_the_kernel_verifier() {
    for name in ["reno", "cubic", "dctcp", "bbr"] {
        let Some(bytes) = common::compile(&format!("bpf/examples/{name}.bpf.c")) else {
            return;
        };
        let path = std::env::temp_dir().join(format!("tcplab_kernel_{name}.bpf.o"));
        std::fs::write(&path, bytes).unwrap();
        let out = bpftool(&["struct_ops", "register", path.to_str().unwrap()])
            .unwrap_or_else(|e| panic!("{name}: the kernel refused it:\n{e}"));
        // "Registered tcp_congestion_ops <map> id <n>"
        let id = out
            .split_whitespace()
            .skip_while(|w| *w != "id")
            .nth(1)
            .unwrap_or_else(|| panic!("{name}: no id in {out:?}"))
            .to_string();
        let avail = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
            .unwrap_or_default();
        bpftool(&["struct_ops", "unregister", "id", &id]).unwrap();
        assert!(
            avail.contains(&format!("bpf_{name}")),
            "{name}: not in {avail:?}"
        );
    }
}
