//! libbpf's messages, collected for the JSON answer.
//!
//! libbpf-rs's own callback (`libbpf_rs::set_print`) formats each message into a `String`
//! with a UTF-8 check that panics inside an `extern "C"` function, which aborts the
//! process: a byte-mutated object whose names are not UTF-8 made the loader die with a
//! Rust backtrace. This callback formats to bytes (libc's `vsnprintf` through the
//! `vsprintf` crate, the one libbpf-rs uses) and keeps them with invalid sequences
//! replaced (U+FFFD).

use std::ffi::{c_char, c_int, c_void};
use std::sync::Mutex;

static LOG: Mutex<String> = Mutex::new(String::new());

/// libbpf's `libbpf_print_fn_t`; `va_list` is taken as a pointer, as libbpf-rs does (its
/// bindgen type differs between architectures).
unsafe extern "C" fn collect(
    level: libbpf_sys::libbpf_print_level,
    fmt: *const c_char,
    ap: *mut c_void,
) -> c_int {
    // libbpf's debug level (every relocation) would bury the verifier's log.
    if level == libbpf_sys::LIBBPF_DEBUG || fmt.is_null() {
        return 0;
    }
    // SAFETY: libbpf passes a C format string and its matching va_list; vsprintf_raw
    // copies the list (va_copy) before each vsnprintf.
    let bytes = unsafe { vsprintf::vsprintf_raw(fmt, ap) };
    if let (Ok(bytes), Ok(mut log)) = (bytes, LOG.lock()) {
        log.push_str(&String::from_utf8_lossy(&bytes));
    }
    0
}

/// Routes libbpf's messages (info and warnings) into the log from now on.
pub(crate) fn capture() {
    type PrintFn =
        unsafe extern "C" fn(libbpf_sys::libbpf_print_level, *const c_char, *mut c_void) -> c_int;
    let f: PrintFn = collect;
    // SAFETY: the two function types differ only in how the va_list pointer is spelled.
    unsafe {
        libbpf_sys::libbpf_set_print(
            std::mem::transmute::<PrintFn, libbpf_sys::libbpf_print_fn_t>(f),
        );
    }
}

/// The messages collected since the last call.
pub(crate) fn taken() -> String {
    LOG.lock()
        .map(|mut l| std::mem::take(&mut *l))
        .unwrap_or_default()
}
