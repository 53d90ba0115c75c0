//! tcplab-bpfload: BPF struct_ops congestion controls into the running kernel, through
//! libbpf (1.7, vendored by libbpf-sys) instead of the distribution's bpftool (Debian 12:
//! libbpf 1.1, which knows neither `.struct_ops.link` nor recent kconfig handling).
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
//!   when it prints `{"maps": [{"object", "maps": [...]}]}` (every map's entries then,
//!   `dump_maps`), unregisters them and exits 0.
//!   Plain `.struct_ops` maps stay registered if this process is killed with SIGKILL
//!   (the kernel keeps them); the caller records their ids and `unregister`s them.
//! * `verify` loads the object into the kernel's verifier without registering anything
//!   and prints `{"ok": true}` or `{"ok": false, "error", "log"}` with libbpf's output,
//!   which carries the verifier's log naming the program it refused.
//! * `unregister` removes plain struct_ops maps by id; ids no longer there are listed as
//!   `absent`.
//!
//! Exit status: 0 done, 1 libbpf or the kernel refused (the JSON says why), 2 usage.

use std::ffi::CStr;
use std::io::{Read, Write};
use std::sync::Mutex;

use libbpf_rs::{
    AsRawLibbpf, Link, MapCore, MapHandle, MapType, ObjectBuilder, OpenObject, PrintLevel,
};
use serde_json::{json, Value};

/// include/net/tcp.h: TCP_CA_NAME_MAX, the size of `tcp_congestion_ops.name`.
const TCP_CA_NAME_MAX: usize = 16;

static LOG: Mutex<String> = Mutex::new(String::new());

fn collect(_level: PrintLevel, msg: String) {
    if let Ok(mut log) = LOG.lock() {
        log.push_str(&msg);
    }
}

fn taken_log() -> String {
    LOG.lock()
        .map(|mut l| std::mem::take(&mut *l))
        .unwrap_or_default()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    libbpf_rs::set_print(Some((PrintLevel::Info, collect)));
    let code = match args.first().map(String::as_str) {
        Some("register") if args.len() >= 3 && args.len() % 2 == 1 => register(&args[1..]),
        Some("verify") if args.len() == 2 => verify(&args[1]),
        Some("unregister") if args.len() >= 2 => unregister(&args[1..]),
        _ => {
            eprintln!(
                "usage: tcplab-bpfload register PREFIX OBJECT [PREFIX OBJECT ...] | \
                 verify OBJECT | unregister ID [ID ...]"
            );
            2
        }
    };
    std::process::exit(code);
}

fn say(v: Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
}

fn fail(what: String) -> i32 {
    say(json!({"ok": false, "error": what, "log": taken_log()}));
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
            say(json!({"ok": true, "log": taken_log()}));
            0
        }
        Err(e) => fail(format!("{path}: the kernel refused to load it: {e}")),
    }
}

/// The byte offset of the member `name` of the struct a struct_ops map holds, from the
/// object's BTF (the layout the object was compiled with, which is what libbpf's initial
/// value follows).
fn name_offset(obj: &OpenObject, map: &libbpf_rs::OpenMap) -> Option<usize> {
    // SAFETY: pointers come from libbpf for objects alive for this call; BTF records are
    // read as libbpf lays them out (struct btf_type followed by vlen btf_member).
    unsafe {
        let btf = libbpf_sys::bpf_object__btf(obj.as_libbpf_object().as_ptr());
        if btf.is_null() {
            return None;
        }
        let raw = map.as_libbpf_object().as_ptr();
        let t = libbpf_sys::btf__type_by_id(btf, libbpf_sys::bpf_map__btf_value_type_id(raw));
        if t.is_null() {
            return None;
        }
        let info = (*t).info;
        let vlen = (info & 0xffff) as usize;
        let kind_flag = info >> 31 == 1;
        let members = t.add(1) as *const libbpf_sys::btf_member;
        for i in 0..vlen {
            let m = &*members.add(i);
            let name = libbpf_sys::btf__name_by_offset(btf, m.name_off);
            if !name.is_null() && CStr::from_ptr(name).to_bytes() == b"name" {
                let bits = if kind_flag {
                    m.offset & 0xff_ffff
                } else {
                    m.offset
                };
                return Some(bits as usize / 8);
            }
        }
        None
    }
}

fn register(pairs: &[String]) -> i32 {
    // Signals that end the hold are blocked before any thread starts, then waited for.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigemptyset(&mut set);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
    // Links before their object: a plain struct_ops "link" uses the map's own fd.
    let mut held: Vec<(Vec<Link>, libbpf_rs::Object)> = Vec::new();
    let mut paths: Vec<&str> = Vec::new();
    let mut registered = Vec::new();
    for pair in pairs.chunks(2) {
        let (prefix, path) = (&pair[0], &pair[1]);
        let (prefix, only) = match prefix.split_once('/') {
            Some((p, ops)) => (p, Some(ops)),
            None => (prefix.as_str(), None),
        };
        match register_one(prefix, path, only) {
            Ok((obj, links, mut info)) => {
                held.push((links, obj));
                paths.push(path);
                registered.append(&mut info);
            }
            Err(e) => return fail(e), // what was registered is dropped: unregistered
        }
    }
    say(json!({"ok": true, "registered": registered}));
    std::thread::spawn(|| {
        let mut sink = [0u8; 256];
        let mut stdin = std::io::stdin();
        while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
        unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
    });
    let mut sig = 0;
    unsafe { libc::sigwait(&set, &mut sig) };
    // What the programs left in their maps, read before anything is unregistered.
    let dumps: Vec<Value> = held
        .iter()
        .zip(&paths)
        .map(|((_, obj), path)| json!({"object": path, "maps": dump_maps(obj)}))
        .collect();
    say(json!({"maps": dumps}));
    drop(held); // bpf_link__destroy: each struct_ops is unregistered
    0
}

/// Every map of a loaded object but its struct_ops, as `bpftool map dump` lists them:
/// `{"name", "type", "key_size", "value_size", "max_entries", "entries": [{"key",
/// "value"}]}` in hex bytes, keys in order; a global section's map is named by its
/// section (".bss", not libbpf's "<object>.bss"); a per-CPU map's entries carry every
/// CPU's value in `values` and CPU 0's in `value`. An SK_STORAGE map lists nothing:
/// its entries are its sockets', which the kernel freed with them.
fn dump_maps(obj: &libbpf_rs::Object) -> Vec<Value> {
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let mut out = Vec::new();
    for map in obj.maps() {
        let ty = map.map_type();
        if ty == MapType::StructOps {
            continue;
        }
        let raw = map.name().to_string_lossy().into_owned();
        let name = match raw.find('.') {
            Some(i) => raw[i..].to_string(),
            None => raw,
        };
        let mut entries = Vec::new();
        if ty != MapType::SkStorage {
            let mut keys: Vec<Vec<u8>> = map.keys().collect();
            keys.sort();
            for key in keys {
                let percpu = matches!(
                    ty,
                    MapType::PercpuArray | MapType::PercpuHash | MapType::LruPercpuHash
                );
                if percpu {
                    if let Ok(Some(vals)) = map.lookup_percpu(&key, libbpf_rs::MapFlags::ANY) {
                        let all: Vec<String> = vals.iter().map(|v| hex(v)).collect();
                        let first = all.first().cloned().unwrap_or_default();
                        entries.push(json!({"key": hex(&key), "value": first, "values": all}));
                    }
                } else if let Ok(Some(v)) = map.lookup(&key, libbpf_rs::MapFlags::ANY) {
                    entries.push(json!({"key": hex(&key), "value": hex(&v)}));
                }
            }
        }
        out.push(json!({
            "name": name,
            "type": u32::from(ty),
            "key_size": map.key_size(),
            "value_size": map.value_size(),
            "max_entries": map.max_entries(),
            "entries": entries,
        }));
    }
    out
}

type Registered = (libbpf_rs::Object, Vec<Link>, Vec<Value>);

fn register_one(prefix: &str, path: &str, only: Option<&str>) -> Result<Registered, String> {
    if prefix.is_empty() || prefix.len() + 1 >= TCP_CA_NAME_MAX || !prefix.is_ascii() {
        return Err(format!("name prefix '{prefix}': 1 to 14 ASCII characters"));
    }
    let mut obj = open(path)?;
    let offsets: Vec<(String, usize)> = obj
        .maps()
        .filter(|m| m.map_type() == MapType::StructOps)
        .map(|m| {
            let at = name_offset(&obj, &m);
            (m.name().to_string_lossy().into_owned(), at)
        })
        .map(|(n, at)| at.map(|a| (n.clone(), a)).ok_or(n))
        .collect::<Result<_, _>>()
        .map_err(|n| format!("{path}: struct_ops '{n}' has no member 'name' in its BTF"))?;
    if offsets.is_empty() {
        return Err(format!(
            "{path}: no struct_ops (SEC(\".struct_ops\") or \".struct_ops.link\")"
        ));
    }
    let several = offsets.len() > 1;
    let mut info = Vec::new();
    let mut chosen = Vec::new();
    for (k, mut map) in obj
        .maps_mut()
        .filter(|m| m.map_type() == MapType::StructOps)
        .enumerate()
    {
        let (map_name, at) = &offsets[k];
        let new = if several {
            format!("{prefix}{}", (b'a' + (k % 26) as u8) as char)
        } else {
            prefix.to_string()
        };
        let value = map
            .initial_value_mut()
            .ok_or_else(|| format!("{path}: struct_ops '{map_name}' has no data"))?;
        let field = value
            .get_mut(*at..*at + TCP_CA_NAME_MAX)
            .ok_or_else(|| format!("{path}: struct_ops '{map_name}': name outside its data"))?;
        let old =
            String::from_utf8_lossy(field.split(|b| *b == 0).next().unwrap_or(&[])).into_owned();
        field.fill(0);
        field[..new.len()].copy_from_slice(new.as_bytes());
        let link = map_is_link(&map);
        let wanted = only.is_none_or(|o| o == map_name || o == old);
        chosen.push(wanted);
        if wanted {
            info.push(
                json!({"object": path, "map": map_name, "ops_name": old, "name": new, "link": link}),
            );
        }
    }
    if info.is_empty() {
        let names: Vec<&str> = offsets.iter().map(|(n, _)| n.as_str()).collect();
        return Err(format!(
            "{path}: no struct_ops named '{}' (variables: {})",
            only.unwrap_or_default(),
            names.join(", ")
        ));
    }
    let mut loaded = obj
        .load()
        .map_err(|e| format!("{path}: the kernel refused to load it: {e}"))?;
    // Locals drop in reverse: on an error the links go before the object.
    let mut links = Vec::new();
    let wanted = loaded
        .maps_mut()
        .filter(|m| m.map_type() == MapType::StructOps)
        .zip(&chosen)
        .filter_map(|(m, &w)| w.then_some(m));
    for (k, mut map) in wanted.enumerate() {
        let link = map.attach_struct_ops().map_err(|e| {
            format!(
                "{path}: registering struct_ops '{}' failed: {e}",
                map.name().to_string_lossy()
            )
        })?;
        let id = map.info().map(|i| i.info.id).unwrap_or(0);
        info[k]["id"] = json!(id);
        links.push(link);
    }
    let programs: Vec<Value> = loaded
        .progs()
        .filter_map(|p| {
            let tag = prog_tag(&p)?;
            Some(json!({"name": p.name().to_string_lossy(), "tag": tag}))
        })
        .collect();
    for entry in &mut info {
        entry["programs"] = json!(programs);
    }
    Ok((loaded, links, info))
}

/// A loaded program's tag (the hash of its instructions the kernel names it by in
/// kallsyms, `bpf_prog_<tag>_<name>`, which is how a trace's stack attributes a
/// bpf_printk line to it), as 16 hex digits; None for a program not loaded.
fn prog_tag(p: &libbpf_rs::Program<'_>) -> Option<String> {
    // SAFETY: the program belongs to an object alive for this call; bpf_program__fd is
    // -1 for one not loaded, and bpf_obj_get_info_by_fd writes at most `len` bytes.
    unsafe {
        let fd = libbpf_sys::bpf_program__fd(p.as_libbpf_object().as_ptr());
        if fd < 0 {
            return None;
        }
        let mut info = libbpf_sys::bpf_prog_info::default();
        let mut len = std::mem::size_of::<libbpf_sys::bpf_prog_info>() as u32;
        let ret = libbpf_sys::bpf_obj_get_info_by_fd(
            fd,
            (&mut info as *mut libbpf_sys::bpf_prog_info).cast(),
            &mut len,
        );
        (ret == 0).then(|| info.tag.iter().map(|b| format!("{b:02x}")).collect())
    }
}

/// Whether libbpf will register this map through a BPF link (`.struct_ops.link`, map
/// flag BPF_F_LINK), which the kernel removes when the link's last fd closes.
fn map_is_link(map: &libbpf_rs::OpenMapMut) -> bool {
    map.map_flags() & libbpf_sys::BPF_F_LINK != 0
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
