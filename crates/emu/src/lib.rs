//! `tcplab-emu`: the kernel backend's bottleneck. It forwards real IP packets between a
//! TUN device in the sender namespace and one in the receiver namespace, in real time,
//! through the simulator's own dumbbell of links (see [`emu`]), so that the simulator and
//! the kernel backend share the network model and differ only in TCP (the way
//! Mahimahi's link shells emulate a link between namespaces, Netravali et al. 2015).
//!
//! Protocol with `python/tcplab/backends/kernel/run.py`:
//!
//! 1. `tcplab-emu CONFIG.json`; the config names the `WorldConfig` (`world`), the two
//!    namespaces (`sender_netns`, `receiver_netns`: paths such as `/run/netns/NAME`), the
//!    device names, `base_port` (flow i's receiver listens on base_port + i) and `out`.
//! 2. It writes the flows' on/off schedule to `onoff_out` if given, creates both devices
//!    and prints `ready` on stdout; the caller configures
//!    addresses and routes and starts the traffic agents.
//! 3. The caller writes `start T0` on stdin, T0 being the experiment's time zero in
//!    CLOCK_MONOTONIC nanoseconds; the emulator runs until T0 + duration, writes its
//!    report (JSON, see [`emu::Report`]) to `out` and exits 0.
//!
//! It dies with its parent (PR_SET_PDEATHSIG), and its devices with it.
//! Exit status: 0 done, 2 bad config, 1 any system error (message on stderr).
//!
//! The same code runs as the `tcplab-emu` binary (src/main.rs) and inside the Python
//! extension (`tcplab._engine.emulate`, run as `python -m tcplab.backends.kernel.emulator`),
//! so an installed wheel carries its emulator. [`run`] returns the exit status and message
//! instead of exiting, for both.

pub mod clock;
pub mod emu;
pub mod ip;
pub mod rtt;
pub mod tun;

use std::io::{BufRead, Write};

use serde::Deserialize;
use tcplab_sim::config::WorldConfig;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EmuConfig {
    world: WorldConfig,
    sender_netns: String,
    receiver_netns: String,
    sender_tun: String,
    receiver_tun: String,
    base_port: u16,
    out: String,
    /// Ask for SCHED_FIFO (priority 10) so that other work on a busy machine delays
    /// packet handling less; ignored if refused.
    #[serde(default)]
    realtime: bool,
    /// Where to write the flows' on/off schedule (JSON, [`emu::onoff_schedule`]) before
    /// saying `ready`, for the sending agent.
    #[serde(default)]
    onoff_out: Option<String>,
}

/// Why the emulator stopped early: the exit status (2 bad config, 1 system error) and
/// the message.
#[derive(Debug)]
pub struct EmuError {
    pub code: i32,
    pub message: String,
}

fn fail(code: i32, message: String) -> EmuError {
    EmuError { code, message }
}

fn set_realtime() {
    let p = libc::sched_param { sched_priority: 10 };
    // SAFETY: sched_setscheduler on ourselves with a valid parameter.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) };
}

/// Run the emulator on the config file at `path` (the protocol in the module docs).
pub fn run(path: &str) -> Result<(), EmuError> {
    clock::die_with_parent();
    let text = std::fs::read_to_string(path).map_err(|e| fail(2, format!("{path}: {e}")))?;
    let cfg: EmuConfig =
        serde_json::from_str(&text).map_err(|e| fail(2, format!("{path}: {e}")))?;
    // Built (and so checked: the network's fields, what it cannot carry) before anything
    // is written or any device made, so a refused config exits 2 at once.
    let emulator = emu::Emulator::new(cfg.world.clone(), cfg.base_port)
        .map_err(|e| fail(2, format!("{path}: world.{e}")))?;
    if let Some(out) = &cfg.onoff_out {
        let json = serde_json::to_string(&emu::onoff_schedule(&cfg.world))
            .map_err(|e| fail(1, e.to_string()))?;
        std::fs::write(out, json).map_err(|e| fail(1, format!("{out}: {e}")))?;
    }
    let snd = tun::open_in_netns(&cfg.sender_netns, &cfg.sender_tun)
        .map_err(|e| fail(1, e.to_string()))?;
    let rcv = tun::open_in_netns(&cfg.receiver_netns, &cfg.receiver_tun)
        .map_err(|e| fail(1, e.to_string()))?;
    println!("ready");
    std::io::stdout().flush().ok();
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| fail(1, format!("stdin: {e}")))?;
    let t0: u64 = line
        .strip_prefix("start ")
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| fail(1, format!("expected 'start T0_NS' on stdin, got {line:?}")))?;
    clock::tighten_timer_slack();
    if cfg.realtime {
        set_realtime();
    }
    let report = emu::run(emulator, t0, &snd, &rcv);
    let tmp = format!("{}.tmp", cfg.out);
    let json = serde_json::to_string(&report).map_err(|e| fail(1, e.to_string()))?;
    std::fs::write(&tmp, json)
        .and_then(|_| std::fs::rename(&tmp, &cfg.out))
        .map_err(|e| fail(1, format!("{}: {e}", cfg.out)))
}
