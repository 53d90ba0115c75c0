//! tcplab-bpfload: BPF struct_ops congestion controls into the running kernel, through
//! libbpf (1.7, vendored by libbpf-sys) instead of the distribution's bpftool (Debian 12:
//! libbpf 1.1, which knows neither `.struct_ops.link` nor recent kconfig handling).
//!
//! A library so that every install carries it: the extension module `tcplab._engine`
//! (crates/py) links it and runs [`run`] as `python -m tcplab.bpf_loader ARGS` in a
//! process of its own (it holds registrations and waits for signals); the
//! `tcplab-bpfload` binary (src/main.rs) is the same [`run`] for use by hand.
//!
//! ```text
//! tcplab-bpfload register PREFIX[/OPS] OBJECT [PREFIX[/OPS] OBJECT ...]
//! tcplab-bpfload verify OBJECT
//! tcplab-bpfload unregister ID [ID ...]
//! ```
//!
//! * `register` opens each object as libbpf does (`.kconfig` externs such as
//!   `CONFIG_HZ` filled with the running kernel's values, CO-RE relocated against its
//!   BTF), renames each `tcp_congestion_ops` to `PREFIX` (with a letter appended when the
//!   object has several), loads it (every program and map, as a skeleton's
//!   `open_and_load`), registers its struct_ops maps (plain `.struct_ops` and
//!   `.struct_ops.link`): all of them, or with `/OPS` only those whose variable or
//!   `.name` is OPS, as the kernel's selftests attach only the one they test
//!   (`bpf_map__set_autoattach`; bpf_dctcp.c's `dctcp_nouse` would be refused, having no
//!   `ssthresh`), prints one JSON line `{"registered": [{"object", "map",
//!   "ops_name", "name", "id", "link", "programs": [{"name", "tag"}]}]}` (the object's
//!   loaded programs with their tags, by which a trace's stack names them), and then
//!   holds them until its standard input closes or it receives SIGTERM/SIGINT/SIGHUP,
//!   when it prints `{"maps": [{"object", "maps": [...]}], "read_at": "dump" | "exit"}`
//!   (every map's entries, `dump_maps`, as they were at the first line `dump` it read
//!   on standard input, else as they are then), unregisters them and exits 0. The
//!   kernel backend writes `dump` at the run's end: the sockets that close after it
//!   call the programs again (timeouts: `CA_EVENT_LOSS`, `ssthresh`), which the
//!   simulator's run, ending there, never does.
//!   Plain `.struct_ops` maps stay registered if this process is killed with SIGKILL
//!   (the kernel keeps them); the caller records their ids and `unregister`s them.
//! * `verify` loads the object into the kernel's verifier without registering anything
//!   and prints `{"ok": true}` or `{"ok": false, "error", "log"}` with libbpf's output,
//!   which carries the verifier's log naming the program it refused.
//! * `unregister` removes plain struct_ops maps by id; ids no longer there are listed as
//!   `absent`.
//!
//! Exit status: 0 done, 1 libbpf or the kernel refused (the JSON says why) or the loader
//! itself failed (a panic, caught: `{"ok": false, "error": "internal error: ..."}`), 2 usage.

mod dump;
mod log;
mod register;

use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};

use libbpf_rs::{MapCore, MapHandle, MapType, ObjectBuilder, OpenObject};
use serde_json::{json, Value};

/// Runs one loader command (`args` without the program's name) and returns its exit
/// status. Writes its JSON lines to standard output. A panic anywhere in it is caught and
/// reported as one JSON line, never as a Rust backtrace.
pub fn run(args: &[String]) -> i32 {
    // The process's name is how a later run recognises a loader that outlived its run
    // (python/tcplab/backends/kernel/bpf_ops.py `_is_loader`), also when the loader runs
    // inside `python -m tcplab.bpf_loader`. 14 letters: within TASK_COMM_LEN (16).
    // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
    unsafe { libc::prctl(libc::PR_SET_NAME, c"tcplab-bpfload".as_ptr()) };
    log::capture();
    match catch_unwind(AssertUnwindSafe(|| dispatch(args))) {
        Ok(code) => code,
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            fail(format!("internal error: {what}"))
        }
    }
}

fn dispatch(args: &[String]) -> i32 {
    match args.first().map(String::as_str) {
        Some("register") if args.len() >= 3 && args.len() % 2 == 1 => {
            register::register(&args[1..])
        }
        Some("verify") if args.len() == 2 => verify(&args[1]),
        Some("unregister") if args.len() >= 2 => unregister(&args[1..]),
        _ => {
            eprintln!(
                "usage: tcplab-bpfload register PREFIX OBJECT [PREFIX OBJECT ...] | \
                 verify OBJECT | unregister ID [ID ...]"
            );
            2
        }
    }
}

fn say(v: Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
}

fn fail(what: String) -> i32 {
    say(json!({"ok": false, "error": what, "log": log::taken()}));
    1
}

fn open(path: &str) -> Result<OpenObject, String> {
    ObjectBuilder::default()
        .open_file(path)
        .map_err(|e| format!("{path}: libbpf could not open it: {e}"))
}

fn verify(path: &str) -> i32 {
    let obj = match open(path) {
        Ok(o) => o,
        Err(e) => return fail(e),
    };
    match obj.load() {
        Ok(_) => {
            say(json!({"ok": true, "log": log::taken()}));
            0
        }
        Err(e) => fail(format!("{path}: the kernel refused to load it: {e}")),
    }
}

fn unregister(ids: &[String]) -> i32 {
    let mut done = Vec::new();
    let mut absent = Vec::new();
    for raw in ids {
        let Ok(id) = raw.parse::<u32>() else {
            eprintln!("tcplab-bpfload: '{raw}' is not a map id");
            return 2;
        };
        match MapHandle::from_map_id(id) {
            Ok(map) if map.map_type() == MapType::StructOps => {
                match map.delete(&0u32.to_ne_bytes()) {
                    Ok(()) => done.push(id),
                    Err(_) => absent.push(id), // a link-based map, or already unregistered
                }
            }
            _ => absent.push(id),
        }
    }
    say(json!({"ok": true, "unregistered": done, "absent": absent}));
    0
}
