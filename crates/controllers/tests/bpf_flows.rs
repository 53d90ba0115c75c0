//! Flows running compiled BPF objects (`cc = "bpf"`, `bpf_object`): on the quickstart's
//! dumbbell (20 Mbit/s, 40 ms, one-BDP buffer) bpf/examples/reno.bpf.c and cubic.bpf.c
//! give every counter and series value of the native `reno` and `cubic`, and the BPF
//! twins of Linux modules (scalable, highspeed, vegas, westwood, veno, illinois, bic,
//! htcp, yeah, lp, hybla, nv, cdg) those of their ports; a run is a
//! function of (config, seed, object); bad configurations name the field.
//! The flows' controllers come from this crate's factory ([`Controllers`]).
//! Needs clang (scripts/test.sh installs it); without it the tests say so and pass.

// The simulator's scenario helpers (a dumbbell, metric columns).
#[path = "../../sim/tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{dumbbell, MS, S};
use tcplab_controllers::Controllers;
use tcplab_sim::config::WorldConfig;
use tcplab_sim::net::aqm::AqmConfig;
use tcplab_sim::record::{Column, RunOutput};
use tcplab_sim::world::SimError;
use tcplab_sim::World;

/// Compiles bpf/examples/`name`.bpf.c; None (with a message) without clang.
fn object(name: &str) -> Option<PathBuf> {
    compile(&format!("bpf/examples/{name}.bpf.c"), None)
}

/// Compiles `path` (from the repository root) with an optional `-D` define.
fn compile(path: &str, define: Option<&str>) -> Option<PathBuf> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let stem = path.replace(['/', '.'], "_");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sim_{stem}{}.o", define.unwrap_or("")));
    let src = repo.join(path);
    let status = Command::new("clang")
        .args(define.map(|d| format!("-D{d}")))
        .args(["-target", "bpf", "-O2", "-g", "-I"])
        .arg(repo.join("bpf/include"))
        .arg("-c")
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .status();
    match status {
        Err(_) => {
            eprintln!(
                "SKIPPED: clang is not installed; cannot build {}",
                src.display()
            );
            None
        }
        Ok(s) => {
            assert!(s.success(), "clang failed on {}", src.display());
            Some(out)
        }
    }
}

fn world(cc: &str, obj: Option<&Path>) -> WorldConfig {
    let mut cfg = dumbbell(
        if obj.is_some() { "bpf" } else { cc },
        2,
        20_000_000,
        40 * MS,
        1.0,
        20 * S,
    );
    cfg.flows[1].start_ns = 3 * S;
    for f in &mut cfg.flows {
        f.bpf_object = obj.map(|p| p.to_string_lossy().into_owned());
    }
    cfg
}

/// Everything but the algorithm's name and its own info columns.
fn comparable(out: &RunOutput) -> (serde_json::Value, Vec<(String, Vec<u64>)>) {
    let mut flows = serde_json::to_value(&out.flows).unwrap();
    for f in flows.as_array_mut().unwrap() {
        f.as_object_mut().unwrap().remove("cc");
    }
    let counters = serde_json::json!({
        "flows": flows,
        "queues": serde_json::to_value(&out.queues).unwrap(),
        "bottleneck_packets": out.bottleneck_packets,
        "events": out.events_processed,
    });
    let mut series = Vec::new();
    for name in [
        "cwnd_pkts",
        "inflight_pkts",
        "pacing_rate_bps",
        "srtt_ms",
        "throughput_bps",
    ] {
        let col = match out.series.get(name) {
            Some(Column::F64(v)) => v.iter().map(|x| x.to_bits()).collect(),
            Some(Column::U64(v)) => v.clone(),
            _ => panic!("no column {name}"),
        };
        series.push((name.to_string(), col));
    }
    (counters, series)
}

/// Runs `name` natively and as its BPF object on `cfg` (as `world` makes it, then
/// `tweak`ed); asserts identical counters and series and returns the native output.
fn same_as_native(name: &str, tweak: fn(&mut WorldConfig)) -> Option<RunOutput> {
    let obj = object(name)?;
    let (mut n, mut b) = (world(name, None), world(name, Some(&obj)));
    tweak(&mut n);
    tweak(&mut b);
    let native = World::run_config(&n, &Controllers::new()).unwrap();
    let bpf = World::run_config(&b, &Controllers::new()).unwrap();
    // A BPF flow is reported by its program's name (tcp_congestion_ops.name).
    assert_eq!(bpf.flows[0].cc, format!("bpf_{name}"));
    let (x, y) = (comparable(&native), comparable(&bpf));
    assert_eq!(x.0, y.0, "counters");
    for ((n, u), (_, v)) in x.1.iter().zip(&y.1) {
        assert!(u == v, "series {n} differs");
    }
    Some(native)
}

/// The run did something worth comparing: losses, and both flows busy.
fn lossy(out: &RunOutput) {
    assert!(out
        .flows
        .iter()
        .all(|f| f.recoveries > 0 && f.delivered_bytes > 1_000_000));
}

#[test]
fn bpf_reno_gives_the_native_renos_run() {
    same_as_native("reno", |_| {}).as_ref().map(lossy);
}

#[test]
fn bpf_cubic_gives_the_native_cubics_run() {
    same_as_native("cubic", |_| {}).as_ref().map(lossy);
}

/// DCTCP with ECN step marking at K = 20 packets on a 100 Mbit/s, 1 ms path: both
/// ends of each connection run the object (the receiver echoes CE through it).
#[test]
fn bpf_dctcp_gives_the_native_dctcps_run() {
    let Some(out) = same_as_native("dctcp", |cfg| {
        cfg.bottleneck.rate_bps = 100_000_000;
        cfg.bottleneck.delay_ns = 250_000;
        for f in &mut cfg.flows {
            f.sender_access.delay_ns = 125_000;
            f.receiver_access.delay_ns = 125_000;
        }
        cfg.duration_ns = 4 * S;
        cfg.flows[1].start_ns = S;
        cfg.bottleneck.aqm = Some(AqmConfig::Step {
            k_pkts: 20,
            ecn: true,
        });
    }) else {
        return;
    };
    assert!(
        out.flows
            .iter()
            .all(|f| f.ecn_reductions > 10 && f.ece_acks > 0),
        "{:?}",
        out.flows
    );
    assert!(out.queues[0].marked > 0);
}

/// 1 % random loss on the bottleneck: every recovery path (fast recovery, RTOs,
/// undo) runs many times, whatever the algorithm's window does.
fn random_loss(cfg: &mut WorldConfig) {
    cfg.bottleneck.loss = 0.01;
}

// The BPF twins of Linux modules a kernel may lack (bpf/examples; the running kernel
// builds only reno, cubic and bbr): each gives its native port's run, counter for
// counter and sample for sample, on the lossless dumbbell and with random loss.

#[test]
fn bpf_scalable_gives_the_native_scalables_run() {
    same_as_native("scalable", |_| {}).as_ref().map(lossy);
    same_as_native("scalable", random_loss).as_ref().map(lossy);
}

#[test]
fn bpf_highspeed_gives_the_native_highspeeds_run() {
    same_as_native("highspeed", |_| {}).as_ref().map(lossy);
    same_as_native("highspeed", random_loss).as_ref().map(lossy);
}

#[test]
fn bpf_vegas_gives_the_native_vegass_run() {
    // Vegas keeps 2-4 segments queued: no loss on the dumbbell after slow start.
    same_as_native("vegas", |_| {});
    same_as_native("vegas", random_loss).as_ref().map(lossy);
}

#[test]
fn bpf_westwood_gives_the_native_westwoods_run() {
    same_as_native("westwood", |_| {}).as_ref().map(lossy);
    same_as_native("westwood", random_loss).as_ref().map(lossy);
}

#[test]
fn bpf_veno_gives_the_native_venos_run() {
    same_as_native("veno", |_| {}).as_ref().map(lossy);
    same_as_native("veno", random_loss).as_ref().map(lossy);
}

#[test]
fn bpf_illinois_gives_the_native_illinoiss_run() {
    same_as_native("illinois", |_| {}).as_ref().map(lossy);
    same_as_native("illinois", random_loss).as_ref().map(lossy);
}

#[test]
fn bpf_bic_gives_the_native_bics_run() {
    same_as_native("bic", |_| {}).as_ref().map(lossy);
    same_as_native("bic", random_loss).as_ref().map(lossy);
}

#[test]
fn bpf_htcp_gives_the_native_htcps_run() {
    same_as_native("htcp", |_| {}).as_ref().map(lossy);
    same_as_native("htcp", random_loss).as_ref().map(lossy);
}

#[test]
fn bpf_yeah_gives_the_native_yeahs_run() {
    same_as_native("yeah", |_| {}).as_ref().map(lossy);
    same_as_native("yeah", random_loss).as_ref().map(lossy);
}

/// TCP-LP reacts to its own queue (early congestion from the RTT), so the
/// lossless dumbbell sees few losses: compare what runs, then 1 % loss.
#[test]
fn bpf_lp_gives_the_native_lps_run() {
    same_as_native("lp", |_| {});
    same_as_native("lp", random_loss).as_ref().map(lossy);
}

/// Hybla reads tp->srtt_us as the kernel keeps it (us << 3); the simulator's socket
/// image holds the port's plain-us srtt shifted by 3, so both compute the same rho.
#[test]
fn bpf_hybla_gives_the_native_hyblas_run() {
    same_as_native("hybla", |_| {}).as_ref().map(lossy);
    same_as_native("hybla", random_loss).as_ref().map(lossy);
}

/// NV reads ack_sample.in_flight, which the simulator passes as the kernel defines it
/// (bytes delivered during the sampled RTT), and draws its min_rtt reset period from
/// bpf_get_prandom_u32, seeded per flow as the port's `seed` (renewals at 2 s and
/// every 3.75-6.25 s after: several in the 20 s run).
#[test]
fn bpf_nv_gives_the_native_nvs_run() {
    same_as_native("nv", |_| {});
    same_as_native("nv", random_loss).as_ref().map(lossy);
}

/// CDG draws its backoff decisions from bpf_get_prandom_u32, which the simulator
/// serves from the flow's seeded stream, the one the port's `seed` seeds: the same
/// draws, so the same backoffs (the queue CDG grows on the dumbbell gives positive
/// gradients: one flow alone there has about 20 delay backoffs in 20 s and no loss),
/// and its gradient ring is socket storage.
#[test]
fn bpf_cdg_gives_the_native_cdgs_run() {
    same_as_native("cdg", |_| {});
    same_as_native("cdg", random_loss).as_ref().map(lossy);
}

#[test]
fn same_seed_and_object_give_the_same_output() {
    let Some(obj) = object("cubic") else { return };
    let cfg = world("cubic", Some(&obj));
    let a = serde_json::to_string(&World::run_config(&cfg, &Controllers::new()).unwrap()).unwrap();
    let b = serde_json::to_string(&World::run_config(&cfg, &Controllers::new()).unwrap()).unwrap();
    assert!(a == b);
}

fn config_error(cfg: &WorldConfig) -> (String, String) {
    match World::run_config(cfg, &Controllers::new()) {
        Err(SimError::Config(e)) => (e.field, e.message),
        Err(e) => panic!("expected a config error, got {e}"),
        Ok(_) => panic!("expected a config error"),
    }
}

#[test]
fn bad_configurations_name_the_field() {
    let mut cfg = world("reno", None);
    cfg.flows[1].cc = "bpf".into();
    assert_eq!(
        config_error(&cfg),
        (
            "flows[1].bpf_object".into(),
            "required with cc = \"bpf\"".into()
        )
    );
    let mut cfg = world("reno", None);
    cfg.flows[0].bpf_object = Some("x.o".into());
    assert_eq!(
        config_error(&cfg),
        (
            "flows[0].bpf_object".into(),
            "is only for cc = \"bpf\" (cc is \"reno\")".into()
        )
    );
    let mut cfg = world("reno", None);
    cfg.flows[0].cc = "bpf".into();
    cfg.flows[0].bpf_object = Some("/nonexistent/x.o".into());
    let (field, msg) = config_error(&cfg);
    assert_eq!(field, "flows[0].bpf_object");
    assert!(msg.starts_with("/nonexistent/x.o: "), "{msg}");

    let Some(obj) = object("cubic") else { return };
    let mut cfg = world("cubic", Some(&obj));
    cfg.flows[1]
        .params
        .insert("betta".into(), serde_json::json!(700));
    assert_eq!(
        config_error(&cfg),
        (
            "flows[1].params.betta".into(),
            "parameter betta: is not a const volatile global of the program's .rodata".into()
        )
    );
    let mut cfg = world("cubic", Some(&obj));
    cfg.flows[0]
        .params
        .insert("hystart".into(), serde_json::json!(1));
    assert_eq!(config_error(&cfg).0, "flows[0].params.hystart");
}

#[test]
fn bpf_parameters_reach_the_program() {
    let Some(obj) = object("cubic") else { return };
    let mut a = world("cubic", Some(&obj));
    a.flows[0]
        .params
        .insert("beta".into(), serde_json::json!(512));
    let mut b = world("cubic", None);
    b.flows[0]
        .params
        .insert("beta".into(), serde_json::json!(512));
    let (x, y) = (
        World::run_config(&a, &Controllers::new()).unwrap(),
        World::run_config(&b, &Controllers::new()).unwrap(),
    );
    assert_eq!(comparable(&x).0, comparable(&y).0);
    assert_ne!(
        comparable(&x).0,
        comparable(&World::run_config(&world("cubic", None), &Controllers::new()).unwrap()).0
    );
}

#[test]
fn a_faulting_program_fails_the_run_naming_flow_and_callback() {
    let Some(obj) = compile("crates/bpf/tests/progs/faults.bpf.c", Some("CASE_OOB")) else {
        return;
    };
    let cfg = world("faults", Some(&obj));
    match World::run_config(&cfg, &Controllers::new()) {
        Err(SimError::Algorithm { flow, message }) => {
            assert_eq!(flow, 0);
            assert!(
                message.starts_with("callback ssthresh (faults_ssthresh) failed at pc "),
                "{message}"
            );
            assert!(message.contains("out of bounds (socket)"), "{message}");
        }
        Err(e) => panic!("expected an algorithm error, got {e}"),
        Ok(_) => panic!("expected the run to fail"),
    }
}

/// BBR v1: cong_control with the rate sample, pacing, the random PROBE_BW start phase
/// (bpf_get_prandom_u32 seeded per flow as native BBR's `seed`) and PROBE_RTT (the run
/// is 20 s, so min_rtt expires at 10 s).
#[test]
fn bpf_bbr_gives_the_native_bbrs_run() {
    let Some(out) = same_as_native("bbr", |_| {}) else {
        return;
    };
    assert!(
        out.flows.iter().all(|f| f.delivered_bytes > 5_000_000),
        "{:?}",
        out.flows
    );
}

/// The kernel's semantics at the factory: one loaded program per (object, params) in a
/// run, its globals shared by every socket built from it, and the run's `tcp.hz` as its
/// CONFIG_HZ. crates/bpf/tests/progs/semantics.bpf.c counts initialised sockets in a
/// global and returns the count from ssthresh, and CONFIG_HZ from undo_cwnd.
#[test]
fn flows_of_one_program_share_its_globals_and_read_the_runs_hz() {
    use std::collections::BTreeMap;
    use tcplab_cc::ops::CcView;
    use tcplab_sim::{CcChoice, ControllerFactory};

    let Some(obj) = compile("crates/bpf/tests/progs/semantics.bpf.c", None) else {
        return;
    };
    let path = obj.to_str().unwrap();
    let params = BTreeMap::new();
    let choice = CcChoice {
        cc: "bpf",
        params: &params,
        bpf_object: Some(path),
        bpf_state: None,
        hz: 250,
    };
    let factory = Controllers::new();
    let mut a = factory.build(&choice, 1).unwrap();
    let mut b = factory.build(&choice, 2).unwrap();
    let (mut ta, mut tb) = (CcView::new(1448, 0), CcView::new(1448, 0));
    a.init(&mut ta);
    b.init(&mut tb);
    // Two sockets initialised, seen by both: the kernel's one .bss per loaded program
    // (each flow counted only itself, 1 and 1, before).
    assert_eq!(a.ssthresh(&ta), 2);
    assert_eq!(b.ssthresh(&tb), 2);
    assert_eq!(a.undo_cwnd(&ta), 250);
    // Another run's factory loads the program afresh: its count starts at zero.
    let mut c = Controllers::new().build(&choice, 1).unwrap();
    let mut tc = CcView::new(1448, 0);
    c.init(&mut tc);
    assert_eq!(c.ssthresh(&tc), 1);
}

/// `bpf_state = "bbr"` records bbr.bpf.c's `struct bbr` (in icsk_ca_priv) as series;
/// since the BPF run is the native one's bit for bit, each field must read what native
/// BBR's own info reports at the same sample: min_rtt (us against ms), the gains
/// (BBR_UNIT = 256 against a ratio), the mode (bitfield bits 0-2: 0 STARTUP .. 3
/// PROBE_RTT against its label) and cycle_idx (a 3-bit field 20 bits up the word).
#[test]
fn a_bpf_flows_state_struct_is_recorded_as_the_native_twin_reports_it() {
    let Some(obj) = object("bbr") else { return };
    let native = World::run_config(&world("bbr", None), &Controllers::new()).unwrap();
    let mut cfg = world("bbr", Some(&obj));
    for f in &mut cfg.flows {
        f.bpf_state = Some("bbr".into());
    }
    let bpf = World::run_config(&cfg, &Controllers::new()).unwrap();
    // Rows of flow 1 before its start (3 s) read a zeroed icsk_ca_priv (no socket yet);
    // the native object reports its constructor's values there: compare started rows.
    let (Some(Column::U64(time)), Some(Column::U64(flow))) =
        (bpf.series.get("time_ns"), bpf.series.get("flow"))
    else {
        panic!("time_ns and flow columns");
    };
    let started: Vec<usize> = (0..time.len())
        .filter(|&i| flow[i] == 0 || time[i] > 3 * S)
        .collect();
    let col = |out: &RunOutput, name: &str| -> Vec<f64> {
        match out.series.get(name) {
            Some(Column::F64(v)) => started.iter().map(|&i| v[i]).collect(),
            _ => panic!("no numeric column {name}"),
        }
    };
    let min_rtt_us = col(&bpf, "cc_bbr_min_rtt_us");
    let native_ms = col(&native, "cc_min_rtt_ms");
    for (us, ms) in min_rtt_us.iter().zip(&native_ms) {
        if ms.is_nan() {
            // no RTT sample yet: bbr_init's tcp_min_rtt of an empty filter, ~0U
            assert_eq!(*us, f64::from(u32::MAX));
        } else {
            assert!((us / 1000.0 - ms).abs() < 1e-9, "{us} us against {ms} ms");
        }
    }
    // 40 ms of propagation and a few ms of queue
    assert!(native_ms.iter().any(|ms| (40.0..45.0).contains(ms)));
    for gain in ["pacing_gain", "cwnd_gain"] {
        let raw = col(&bpf, &format!("cc_bbr_{gain}"));
        let ratio = col(&native, &format!("cc_{gain}"));
        assert!(
            raw.iter().zip(&ratio).all(|(r, x)| r / 256.0 == *x),
            "{gain}"
        );
    }
    let Some(Column::Str(labels)) = native.series.get("cc_mode") else {
        panic!("native BBR records cc_mode");
    };
    let modes = col(&bpf, "cc_bbr_mode");
    let names = ["STARTUP", "DRAIN", "PROBE_BW", "PROBE_RTT"];
    assert!(started
        .iter()
        .zip(&modes)
        .all(|(&i, m)| names[*m as usize] == labels[i].as_str()));
    // the run (20 s) reaches PROBE_RTT once min_rtt is 10 s old
    assert!(modes.contains(&3.0) && modes.contains(&0.0));
    assert_eq!(col(&bpf, "cc_bbr_cycle_idx"), col(&native, "cc_cycle_idx"));
}

#[test]
fn a_state_struct_the_object_lacks_is_refused_naming_the_field() {
    let Some(obj) = object("bbr") else { return };
    let mut cfg = world("bbr", Some(&obj));
    cfg.flows[1].bpf_state = Some("bictcp".into());
    let (field, message) = config_error(&cfg);
    assert_eq!(field, "flows[1].bpf_state");
    assert!(
        message.contains("no struct \"bictcp\"") && message.contains("bbr"),
        "{message}"
    );
}

/// What the fixed-point twins' comparison reads of one flow's run: loss epochs (fast
/// recoveries and RTOs), mean cwnd and mean smoothed RTT over 5-20 s, and goodput
/// (Mbit/s).
fn stats(out: &RunOutput) -> (u64, f64, f64, f64) {
    let f = &out.flows[0];
    (
        f.recoveries + f.rto_count,
        common::flow_mean(out, "cwnd_pkts", 0, 5 * S, 20 * S),
        common::flow_mean(out, "srtt_ms", 0, 5 * S, 20 * S),
        f.delivered_bytes as f64 * 8.0 / 20.0 / 1e6,
    )
}

/// One flow alone, 20 Mbit/s, 40 ms, a 4-BDP buffer (160 ms of queue, more than
/// LEDBAT's 100 ms target, so a delay rule and not the buffer sets the window),
/// 0.01 % random loss (a few loss epochs in 20 s, placed by the seed).
fn alone_world(cc: &str, obj: Option<&Path>, seed: u64) -> WorldConfig {
    let mut cfg = dumbbell(
        if obj.is_some() { "bpf" } else { cc },
        1,
        20_000_000,
        40 * MS,
        4.0,
        20 * S,
    );
    cfg.seed = seed;
    cfg.bottleneck.loss = 0.0001;
    cfg.flows[0].bpf_object = obj.map(|p| p.to_string_lossy().into_owned());
    cfg
}

/// The tolerances a fixed-point twin is held to against its f64 port, per seed: loss
/// epochs +-1, mean cwnd and mean sRTT within `rel`, goodput within 2 %.
type Stats = (u64, f64, f64, f64);
fn close(a: Stats, b: Stats, rel: f64) -> bool {
    a.0.abs_diff(b.0) <= 1
        && (a.1 - b.1).abs() <= rel * b.1
        && (a.2 - b.2).abs() <= rel * b.2
        && (a.3 - b.3).abs() <= 0.02 * b.3
}

/// Runs `name` natively, as bpf/examples/`name`.bpf.c and as Reno on `alone_world`
/// for seeds 1-3; the twin must be `close` to the port, Reno must not be. Returns the
/// port's stats per seed.
fn twin_within(name: &str, rel: f64) -> Vec<Stats> {
    let Some(obj) = object(name) else {
        return vec![];
    };
    let run = |cfg: WorldConfig| stats(&World::run_config(&cfg, &Controllers::new()).unwrap());
    let mut out = Vec::new();
    for seed in 1..=3 {
        let n = run(alone_world(name, None, seed));
        let t = run(alone_world(name, Some(&obj), seed));
        let r = run(alone_world("reno", None, seed));
        eprintln!("{name} seed {seed}: native {n:?} twin {t:?} reno {r:?}");
        assert!(
            close(t, n, rel),
            "{name} seed {seed}: twin {t:?} native {n:?}"
        );
        assert!(
            !close(r, n, rel),
            "{name} seed {seed}: Reno {r:?} passes as {n:?}"
        );
        out.push(n);
    }
    out
}

/// bpf/examples/ledbat.bpf.c computes in Q16 fixed point and rebuilds flightsize from
/// the kernel's fields, so it is not the f64 port bit for bit; it must give the port's
/// statistics to within 3 % (mean cwnd, sRTT). Measured 2026-12-02: the twin's mean
/// cwnd and sRTT within 0.1 % of the port's and the same loss epochs in seeds 1-3;
/// Reno's mean cwnd differs from LEDBAT's by 7-23 %. (LEDBAT's slow start overshoots
/// to a window of about 575 and leaves recovery at about 330, above the 242 segments of
/// 20 Mbit/s x (40 + 100) ms; RFC 6817's decrease, |off_target| segments per RTT, then
/// takes longer than the run to come down, so sRTT is not a test of the target here.)
#[test]
fn bpf_ledbat_agrees_with_the_native_ledbat_within_tolerances() {
    twin_within("ledbat", 0.03);
}

/// bpf/examples/copa.bpf.c, Q16 as ledbat's, to the same 3 % (measured 2026-12-02:
/// within 0.2 %, the same loss epochs). Copa keeps 1 / delta = 2 packets queued per
/// flow (Sec. 2.1), so an sRTT near 40 ms where Reno's reaches 60-140 ms.
#[test]
fn bpf_copa_agrees_with_the_native_copa_within_tolerances() {
    for n in twin_within("copa", 0.03) {
        assert!(
            n.2 < 50.0,
            "native sRTT {} beyond 40 ms + a few packets",
            n.2
        );
    }
}

/// bpf/examples/vivace.bpf.c: rates in integer bit/s, utilities in Q16, x^0.9 and the
/// amplifier's ^1.2 by fixed-point log2/exp2, its monitor intervals in socket storage;
/// held to the f64 port's statistics as ledbat's and copa's, to the same 3 %. Measured
/// 2026-12-03 (seeds 1-3): the same loss epochs (7, 1, 8), mean cwnd within 0.6 % (port
/// 132.3-133.1 segments), sRTT within 0.25 % (41.8-41.9 ms), goodput within 0.34 %
/// (17.6-17.8 Mbit/s). Reno fails on sRTT (59-137 ms). A second control closer to
/// Vivace, BBR (paced, a small queue too), must fail as well: its mean cwnd (142-144),
/// sRTT (44.5-44.7 ms) and goodput (18.9 Mbit/s) are each 6-8 % from the port's.
#[test]
fn bpf_vivace_agrees_with_the_native_vivace_within_tolerances() {
    let ports = twin_within("vivace", 0.03);
    for (seed, n) in (1..=3).zip(ports) {
        let cfg = alone_world("bbr", None, seed);
        let b = stats(&World::run_config(&cfg, &Controllers::new()).unwrap());
        eprintln!("vivace seed {seed}: bbr {b:?}");
        assert!(!close(b, n, 0.03), "seed {seed}: BBR {b:?} passes as {n:?}");
    }
}
