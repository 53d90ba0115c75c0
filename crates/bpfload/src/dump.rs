//! What a loaded object's programs left in their maps, as JSON.

use libbpf_rs::{MapCore, MapType};
use serde_json::{json, Value};

/// Every map of a loaded object but its struct_ops, as `bpftool map dump` lists them:
/// `{"name", "type", "key_size", "value_size", "max_entries", "entries": [{"key",
/// "value"}]}` in hex bytes, keys in order; a global section's map is named by its
/// section (".bss", not libbpf's "<object>.bss"); a per-CPU map's entries carry every
/// CPU's value in `values` and CPU 0's in `value`. An SK_STORAGE map lists nothing:
/// its entries are its sockets', which the kernel freed with them.
pub(crate) fn dump_maps(obj: &libbpf_rs::Object) -> Vec<Value> {
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
