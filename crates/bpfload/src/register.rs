//! `register`: each object's struct_ops renamed, loaded and registered, held until the
//! caller lets go, then its maps dumped and everything unregistered.

use std::ffi::CStr;
use std::io::BufRead;
use std::sync::mpsc;

use libbpf_rs::{AsRawLibbpf, Link, MapCore, MapType, OpenObject};
use serde_json::{json, Value};

use crate::dump::dump_maps;
use crate::{fail, open, say};

/// include/net/tcp.h: TCP_CA_NAME_MAX, the size of `tcp_congestion_ops.name`.
const TCP_CA_NAME_MAX: usize = 16;

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

pub(crate) fn register(pairs: &[String]) -> i32 {
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
    // Three things can happen now, each a message to this thread, which alone touches
    // the objects: a line "dump" on standard input (the run's end: the maps are read
    // then, before the closing sockets' timeouts call the programs again), the end of
    // standard input, or a signal (both end the hold).
    let (tx, rx) = mpsc::channel();
    let from_stdin = tx.clone();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            match line {
                Ok(l) if l.trim() == "dump" => {
                    let _ = from_stdin.send(Hold::Snapshot);
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        let _ = from_stdin.send(Hold::End);
    });
    std::thread::spawn(move || {
        let mut sig = 0;
        // SAFETY: `set` is an initialised sigset, blocked in every thread of this process.
        unsafe { libc::sigwait(&set, &mut sig) };
        let _ = tx.send(Hold::End);
    });
    // What the programs left in their maps, read before anything is unregistered: at
    // the first "dump" if one came, else now.
    let mut snapshot: Option<Vec<Value>> = None;
    for msg in rx {
        match msg {
            Hold::Snapshot => {
                snapshot.get_or_insert_with(|| dump_all(&held, &paths));
            }
            Hold::End => break,
        }
    }
    let at = if snapshot.is_some() { "dump" } else { "exit" };
    let dumps = snapshot.unwrap_or_else(|| dump_all(&held, &paths));
    say(json!({"maps": dumps, "read_at": at}));
    drop(held); // bpf_link__destroy: each struct_ops is unregistered
    0
}

/// What the holding thread is told.
enum Hold {
    /// Read every map now and keep what was read for the end.
    Snapshot,
    /// Print the maps, unregister and exit.
    End,
}

fn dump_all(held: &[(Vec<Link>, libbpf_rs::Object)], paths: &[&str]) -> Vec<Value> {
    held.iter()
        .zip(paths)
        .map(|((_, obj), path)| json!({"object": path, "maps": dump_maps(obj)}))
        .collect()
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
