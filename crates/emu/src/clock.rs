//! The emulator's clock: CLOCK_MONOTONIC in nanoseconds (the clock Python's
//! `time.monotonic_ns()` reads, system-wide, so the traffic agents and the emulator agree
//! on the experiment's time zero), and waiting on descriptors with a nanosecond deadline.

use std::os::fd::{AsRawFd, OwnedFd};

pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Ask for timer expiries without the default 50 us slack (prctl PR_SET_TIMERSLACK, 1 ns):
/// the link model's serialization times are a few hundred microseconds apart.
pub fn tighten_timer_slack() {
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// Die with the parent (the Python backend): SIGKILL on its exit, so that a killed run
/// never leaves an emulator behind.
pub fn die_with_parent() {
    // SAFETY: prctl with integer arguments.
    unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
}

/// Block until one of `fds` is readable or `timeout_ns` passes (`ppoll`, nanosecond
/// timeout, hrtimer-backed). Returns whether any descriptor is readable.
pub fn wait_readable(fds: &[&OwnedFd], timeout_ns: u64) -> bool {
    let mut pfds: Vec<libc::pollfd> = fds
        .iter()
        .map(|f| libc::pollfd {
            fd: f.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as _,
        tv_nsec: (timeout_ns % 1_000_000_000) as _,
    };
    // SAFETY: ppoll on descriptors we own, with a valid timespec and no signal mask.
    let n = unsafe { libc::ppoll(pfds.as_mut_ptr(), pfds.len() as _, &ts, std::ptr::null()) };
    n > 0
}

/// CPU time used by this process so far (user + system, s).
pub fn cpu_seconds() -> f64 {
    // SAFETY: an all-zero rusage is a valid value for getrusage to overwrite.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes the struct we pass.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}
