#!/usr/bin/env python3
"""The fidelity suite: every spec of experiments/fidelity/ on both backends, a
few seeds each, and docs/FIDELITY.md with, per scenario and metric, the simulator's and
the kernel's values (mean and spread over seeds) and the gap.

    sudo python scripts/fidelity.py -o results/fidelity --seeds 1,2 --docs docs/FIDELITY.md

Runs are kept in ``OUT/<scenario>/<backend>-seed<N>/`` (ordinary run directories);
rerunning skips the finished ones that are still this spec's runs under this tcplab version
(the same resolved spec and version, as a sweep's digest; others are run again). Kernel
runs measure the kernel's TCP, so ``--keep-kernel`` reuses them across tcplab versions
when their spec is unchanged; the document names the versions of both columns. A kernel
run takes its duration in real time;
``--backends kernel`` runs only those (e.g. while the simulator is being changed), and
``--backends sim`` only the simulator's.

Per scenario the document shows each metric's mean and spread, each flow's share seed by
seed (so that a bimodal outcome shows as two groups rather than a wide mean), the
fidelity goals (share within 0.05 or the seeds' standard error, retransmissions within
1.5x, smoothed RTT and backlog within 5 %), and each kernel run's emulator lateness with
the runs flagged whose lateness could have changed the result
(``tcplab.backends.kernel.assemble.lateness_flag``).

``--max-steal F`` redoes a kernel run over which the hypervisor took more than the
fraction F of the CPU time (``engine.emulator.host_steal``; on a virtual machine the
emulator's lateness follows it, docs/FIDELITY.md finding 27), up to ``--attempts`` runs
per seed; the redone runs are kept as ``kernel-seed<N>.stolen<k>`` and counted in the
document, and if no attempt was under F the least stolen is kept. Steal is the host's,
not TCP's: choosing runs by it selects the emulator's timing, not an outcome.

The simulator column simulates the kernel the kernel column measures: a spec that does not
set ``[tcp] hz`` runs in the simulator at that kernel's CONFIG_HZ (``--hz kernel``, the
default: the value the scenario's stored kernel runs recorded, ``engine.kernel.config_hz``,
else this machine's), so the two columns' jiffies clocks tick alike (docs/FIDELITY-gaps.md,
gap 10; before 2026-12-05 the simulator ran at the engine's default 1000 against this
kernel's 250). ``--hz N`` forces N.

``--scenario-seeds STEM=SEEDS`` runs one scenario on its own seeds (e.g.
``f07-four-bbr-shallow=1-50``): a row the suite's seeds leave undecided is decided by more
runs of that scenario alone (scripts/fidelity_seeds.py); the document says which.

``--testbed`` also runs the scenarios the veth testbed can express (scripts/veth_testbed.py:
the same kernel TCP over veth and Linux's tbf instead of our emulator; one run per seed,
kept in ``OUT/<scenario>/testbed.json``) and prints its shares and retransmissions beside
the kernel backend's, with the difference per scenario (scripts/fidelity_testbed.py); the
document gains that table when testbed runs are stored.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "scripts"))

import tcplab  # noqa: E402
from fidelity_seeds import SeedPlan, compact  # noqa: E402
from seed_spread import RELATIVE_GOAL, RETX_GOAL, SHARE_GOAL, judged  # noqa: E402
from tcplab.backends.kernel.kconfig import (  # noqa: E402
    ALLOWED_HZ,
    SIMULATED_DEFAULT_HZ,
    kernel_hz,
)
from tcplab.lowering.resolve import resolve  # noqa: E402
from tcplab.runs.digest import run_digest  # noqa: E402
from tcplab.specs.load import load_spec, read_toml  # noqa: E402
from tcplab.storage.directory import is_run_dir  # noqa: E402

BACKENDS = ("sim", "kernel")
# Two groups of per-seed shares further apart than this are shown as two modes.
MODE_GAP = 0.15
# Start-up: the first seconds of each flow, where slow start overshoots (or does not) and
# the kernel's runs split into two modes (~6 or ~52 retransmissions for two CUBIC
# flows, 20 Mbit/s, 40 ms, 1 BDP); counted from each flow's own start.
STARTUP_S = 2.0
STARTUP_KEY = "start-up retransmissions (first 2 s of each flow, all flows)"


def run_all(
    specs: list[Path],
    out: Path,
    seeds: list[int] | SeedPlan,
    say,
    backends=BACKENDS,
    keep_kernel=False,
    max_steal: float | None = None,
    attempts: int = 1,
    hz: str = "kernel",
) -> None:
    plan = _plan(seeds)
    for spec in specs:
        sim_hz = simulated_hz(spec, out, hz) if "sim" in backends else None
        for seed in plan.of(spec):
            for b in backends:
                d = out / spec.stem / f"{b}-seed{seed}"
                name = f"{spec.stem} {b} seed {seed}"
                overrides = {"experiment.backend": b}
                if b == "sim" and sim_hz is not None:
                    overrides["tcp.hz"] = sim_hz

                def once(d=d, spec=spec, seed=seed, name=name, overrides=overrides) -> None:
                    t = time.monotonic()
                    tcplab.run(spec, d, seed=seed, overrides=overrides, report=False)
                    say(f"{name}: {time.monotonic() - t:.1f} s")

                reusable = _reusable(d, spec, seed, b, keep_kernel, overrides)
                if not reusable and d.exists():
                    say(f"{name}: stored run is of another spec or version")
                    shutil.rmtree(d)
                if b == "kernel" and max_steal is not None:
                    run_below_steal(d, once, host_steal, max_steal, attempts, say, name)
                elif not reusable:
                    once()


def host_steal(d: Path) -> float | None:
    """The share of the run's CPU time the hypervisor took (backends/kernel/steal.py);
    None for runs stored before tcplab recorded it."""
    emu = json.loads((d / "summary.json").read_text())["engine"].get("emulator") or {}
    return emu.get("host_steal")


STOLEN = ".stolen"


def run_below_steal(d: Path, once, steal_of, limit: float, attempts: int, say, name: str) -> None:
    """Make (or keep) the run in ``d`` and redo it while the host's steal over it exceeded
    ``limit``, at most ``attempts`` runs in all (stored and set-aside runs count). A redone run
    is set aside as ``d.stolen<k>`` (kept, so the document can count them); if every
    attempt was over the limit the least stolen one is kept in ``d``. Steal is the host's,
    not TCP's, so choosing runs by it selects the emulator's timing, not the outcome; the
    document says how many runs were redone (finding 27: late share ~ 0.84 x steal)."""

    def over(x: float | None) -> bool:
        return x is None or x > limit

    def aside() -> Path:
        k = 1 + sum(1 for _ in d.parent.glob(d.name + STOLEN + "*"))
        return d.with_name(f"{d.name}{STOLEN}{k}")

    # Runs set aside by an earlier invocation count as attempts (and may still be kept).
    tried = sorted(d.parent.glob(d.name + STOLEN + "*"))
    made = (1 if is_run_dir(d) else 0) + len(tried)
    if not made:
        once()
        made = 1
    while over(steal_of(d)) and made < attempts:
        x = steal_of(d)
        say(f"{name}: host steal {'unknown' if x is None else f'{100 * x:.1f} %'}, redone")
        tried.append(d.rename(aside()))
        once()
        made += 1
    if over(steal_of(d)) and tried:

        def key(t: Path) -> float:
            x = steal_of(t)
            return float("inf") if x is None else x

        best = min(tried, key=key)
        if key(best) < key(d):  # the two trade names
            spare = d.rename(d.with_name(d.name + ".swap"))
            best.rename(d)
            spare.rename(best)
        x = steal_of(d)
        say(f"{name}: kept with host steal {'unknown' if x is None else f'{100 * x:.1f} %'}")


def simulated_hz(spec: Path, out: Path, hz: str) -> int | None:
    """The ``tcp.hz`` the simulator column runs ``spec`` at: None when the spec sets its
    own; else ``hz`` if a number; else (``"kernel"``) the CONFIG_HZ the scenario's stored
    kernel runs recorded, or this machine's kernel's, or None (the engine's default)
    when neither is known."""
    if "hz" in read_toml(spec).get("tcp", {}):
        return None
    if hz != "kernel":
        return int(hz)
    for d in sorted((out / spec.stem).glob("kernel-seed*")):
        found = _recorded_hz(d)
        if found:
            return found
    return kernel_hz()[0]


def _recorded_hz(d: Path) -> int | None:
    """The CONFIG_HZ a stored kernel run recorded (``engine.kernel.config_hz``), if any."""
    if not is_run_dir(d):
        return None
    found = json.loads((d / "summary.json").read_text())["engine"].get("kernel", {})
    return int(found["config_hz"]) if found.get("config_hz") else None


def _version(d: Path) -> str:
    return json.loads((d / "manifest.json").read_text()).get("tcplab_version", "?")


def _reusable(
    d: Path, spec: Path, seed: int, backend: str, keep_kernel: bool, overrides: dict
) -> bool:
    """A stored run is this spec's run: the same resolved spec (seed, backend and the
    simulated HZ included) and the same tcplab version, which stands for the code
    (runs/digest.py run_digest); a kernel run with ``keep_kernel`` whatever version ran it."""
    if not is_run_dir(d):
        return False
    if _version(d) != tcplab.__version__ and not (backend == "kernel" and keep_kernel):
        return False
    want = load_spec(spec, {**overrides, "experiment.seed": seed})
    # spec.toml is stored resolved (defaults filled): compare resolved with resolved
    return run_digest(resolve(want)) == run_digest(resolve(load_spec(d / "spec.toml")))


def _metrics(d: Path) -> dict[str, float]:
    s = json.loads((d / "summary.json").read_text())
    a = s["aggregate"]
    m: dict[str, float] = {}
    for f in s["flows"]:
        tag = f"flow {f['flow']} ({f['cc']}, {f['rtt_ms']:g} ms)"
        m[f"{tag} share"] = f["share"]
        m[f"{tag} goodput Mbit/s"] = f["goodput_bps"] / 1e6
        m[f"{tag} retransmissions"] = f["retransmitted_packets"]
        # The smoothed RTT: the one RTT both backends measure (docs/METRICS.md).
        m[f"{tag} mean smoothed RTT ms"] = f.get("mean_srtt_ms")
        # BBR's min_rtt (RTprop) estimate: where RTT samples from retransmitted data show.
        m[f"{tag} mean min_rtt estimate ms"] = f.get("mean_min_rtt_estimate_ms")
        m[f"{tag} STARTUP exit s"] = f.get("startup_exit_s")
        m[f"{tag} PROBE_RTT entries"] = f.get("probe_rtt_entries")
        # Time new data waited for the receiver's window (tcpi_rwnd_limited on the kernel).
        m[f"{tag} receive-window-limited s"] = f.get("rwnd_limited_s")
    m["utilization"] = a["utilization"]
    m["retransmissions (all flows)"] = a["retransmitted_packets"]
    m[STARTUP_KEY] = _startup_retransmissions(d, s["flows"])
    m["bottleneck drops"] = a.get("bottleneck_drops_packets")
    m["mean backlog pkts"] = a["mean_backlog_pkts"]
    m["mean queueing delay ms"] = a["mean_queueing_delay_ms"]
    if a.get("jain_index") is not None:
        m["Jain index"] = a["jain_index"]
    return {k: float(v) for k, v in m.items() if v is not None and v == v}


def _startup_retransmissions(d: Path, flows: list[dict]) -> float:
    """Retransmissions in the STARTUP_S seconds after each flow's start, summed over the
    flows: the series' per-interval ``retransmits`` (both backends count them per sample
    interval, the kernel from tcpi_total_retrans) in samples up to start + STARTUP_S."""
    import pandas as pd

    series = pd.read_parquet(d / "series.parquet", columns=["time_s", "flow", "retransmits"])
    total = 0
    for f in flows:
        mine = series[series["flow"] == f["flow"]]
        start = float(f.get("start_s") or 0.0)
        window = mine[(mine["time_s"] > start) & (mine["time_s"] <= start + STARTUP_S + 1e-9)]
        total += int(window["retransmits"].sum())
    return float(total)


def _stat(xs: list[float]) -> tuple[float, float]:
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def _fmt(x: float) -> str:
    return f"{x:.3f}" if abs(x) < 10 else f"{x:.1f}"


def _percent_gap(sim: float, kernel: float) -> str:
    """kernel - sim relative to sim, or n/a for a simulator mean that prints as zero (a
    few milliseconds of receive-window limit in one seed would read as +1660 %)."""
    return f"{100 * (kernel - sim) / sim:+.0f} %" if abs(sim) >= 0.0005 else "n/a"


def _plan(seeds: list[int] | SeedPlan) -> SeedPlan:
    """A plain list of seeds is the plan that runs every scenario on them. (Told apart by
    its ``of``, not its class: a test may load fidelity_seeds as a second module.)"""
    return seeds if hasattr(seeds, "of") else SeedPlan(tuple(seeds))


def _kernel_release(out: Path, specs: list[Path], plan: SeedPlan) -> str:
    for spec in specs:
        d = out / spec.stem / f"kernel-seed{plan.of(spec)[0]}"
        if is_run_dir(d):
            return "Linux " + json.loads((d / "summary.json").read_text())["engine"].get(
                "kernel_release", "?"
            )
    return "unknown"


def _clocks(out: Path, specs: list[Path], plan: SeedPlan) -> str:
    """Which CONFIG_HZ each column ran at: the simulator's ``tcp.hz`` (its stored resolved
    specs) and the kernel's ``config_hz`` (its runs' records)."""
    found: dict[str, set[int]] = {b: set() for b in BACKENDS}
    for spec in specs:
        for seed in plan.of(spec):
            sim, kern = (out / spec.stem / f"{b}-seed{seed}" for b in BACKENDS)
            if is_run_dir(sim):
                tcp = read_toml(sim / "spec.toml").get("tcp", {})
                found["sim"].add(int(tcp.get("hz", SIMULATED_DEFAULT_HZ)))
            recorded = _recorded_hz(kern)
            if recorded:
                found["kernel"].add(recorded)
    text = {b: "/".join(map(str, sorted(v))) or "?" for b, v in found.items()}
    return (
        f"Jiffies clocks: the simulator at `tcp.hz` {text['sim']}, the kernel at CONFIG_HZ "
        f"{text['kernel']} (the suite runs the simulator at the kernel's HZ: `--hz`)."
    )


def _versions(out: Path, specs: list[Path], plan: SeedPlan) -> str:
    """Which tcplab versions made each column (kernel runs may be kept across versions)."""
    found: dict[str, set[str]] = {b: set() for b in BACKENDS}
    for spec in specs:
        for s in plan.of(spec):
            for b in BACKENDS:
                d = out / spec.stem / f"{b}-seed{s}"
                if is_run_dir(d):
                    found[b].add(_version(d))
    return "; ".join(f"{b}: tcplab {', '.join(sorted(v)) or '-'}" for b, v in found.items())


def write_doc(
    specs: list[Path], out: Path, seeds: list[int] | SeedPlan, doc: Path, command: str
) -> None:
    plan = _plan(seeds)
    head = [
        "# Fidelity: the simulator against the Linux kernel",
        "",
        "Generated by `" + command + "`. Each scenario of `experiments/fidelity/` ran on the "
        "simulator (`sim`) and on this machine's kernel TCP over the emulated bottleneck (`kernel`, "
        "`tcplab-emu`: the simulator's own link and queue model in real time), with "
        f"{plan.describe(specs)}. Values are means over seeds, ± the standard deviation; the gap is "
        "kernel − sim (and relative to sim). Both backends share the network model, so the gaps are "
        "TCP's (and the emulator's timing, listed per scenario: how late packets were handled). "
        "Kernel: "
        + _kernel_release(out, specs, plan)
        + ". Runs made by "
        + _versions(out, specs, plan)
        + ". "
        + _clocks(out, specs, plan)
        + " What the kernel backend measures differently "
        "(TCP_INFO has no latest RTT sample, so RTTs are compared as the smoothed RTT on both, "
        "docs/METRICS.md; a real handshake delays data by one RTT, random losses hit other "
        "packets, kernel runs are not deterministic) is listed in docs/ARCHITECTURE.md, Kernel backend; "
        "a gap is a finding to explain, not a number to tune away.",
        "",
    ]
    summary = [
        "## Summary",
        "",
        "Per scenario: the largest per-flow share gap (kernel − sim, absolute), and the gaps of "
        "utilization, all flows' retransmissions, the flows' mean smoothed RTT and the mean backlog "
        "(relative to sim), with the start-up retransmissions (the first 2 s of each flow) per seed "
        f"(their mean ± standard deviation for a scenario on more than {PER_SEED_MAX} seeds), "
        "since the kernel's start-up is bimodal and a mean would hide it; then whether the fidelity goals hold: every flow's share within 0.05 of "
        "the kernel's or within the standard error of the difference of the seed means, all flows' "
        "retransmissions within 1.5x, smoothed RTT and backlog within 5 % (the failing ones named); and "
        "how many kernel runs' emulator lateness could have changed the result, with the largest "
        "share of a kept run's CPU time the hypervisor took (host steal, which the lateness "
        "follows: findings) and how many runs were redone for it (`--max-steal`).",
        "",
        "| scenario | max share gap | utilization | retransmissions | start-up retransmissions per seed, sim / kernel | mean sRTT | mean backlog | goals | late kernel runs |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    body: list[str] = []
    for spec in specs:
        seeds = plan.of(spec)
        runs = {b: [out / spec.stem / f"{b}-seed{s}" for s in seeds] for b in BACKENDS}
        if not all(is_run_dir(d) for ds in runs.values() for d in ds):
            continue
        ms0 = {b: [_metrics(d) for d in ds] for b, ds in runs.items()}

        def mean(b: str, pred, ms0=ms0) -> float:
            return statistics.fmean(
                statistics.fmean(v for k, v in m.items() if pred(k)) for m in ms0[b]
            )

        def rel(pred) -> str:
            return _percent_gap(mean("sim", pred), mean("kernel", pred))

        share_gap = max(
            abs(
                mean("kernel", lambda k, key=key: k == key)
                - mean("sim", lambda k, key=key: k == key)
            )
            for key in ms0["sim"][0]
            if key.endswith(" share")
        )
        late = [_lateness(d) for d in runs["kernel"]]
        flagged = [s for s, (_, why) in zip(seeds, late) if why]
        summary.append(
            f"| {spec.stem} | {share_gap:.3f} | {rel(lambda k: k == 'utilization')} | "
            f"{rel(lambda k: k == 'retransmissions (all flows)')} | {_per_seed(ms0, STARTUP_KEY)} | "
            f"{rel(lambda k: k.endswith('mean smoothed RTT ms'))} | "
            f"{rel(lambda k: k == 'mean backlog pkts')} | {_goals(ms0)} | "
            + (
                f"{len(flagged)} of {len(seeds)} (seeds {', '.join(map(str, flagged))})"
                if flagged
                else "none"
            )
            + _steal_note(runs["kernel"])
            + " |"
        )
        lines = body
        desc = tcplab.load(runs["sim"][0]).spec.experiment.description
        lines += [
            f"## {spec.stem}",
            "",
            desc,
            "",
            "| metric | sim | kernel | gap | gap % |",
            "|---|---|---|---|---|",
        ]
        ms = {b: [_metrics(d) for d in ds] for b, ds in runs.items()}
        for key in ms["sim"][0]:
            vals = {b: [m[key] for m in ms[b] if key in m] for b in BACKENDS}
            if not all(vals.values()):
                continue
            (sm, ss), (km, ks) = _stat(vals["sim"]), _stat(vals["kernel"])
            rel = _percent_gap(sm, km)
            lines.append(
                f"| {key} | {_fmt(sm)} ± {_fmt(ss)} | {_fmt(km)} ± {_fmt(ks)} | {_fmt(km - sm)} | {rel} |"
            )
        lines += ["", *_share_table(ms, seeds)]
        lines += [
            "",
            "Emulator lateness per kernel run (seed: mean, max, events later than 1 ms; the "
            "host's steal over the run):",
            "",
        ]
        for s, (x, why), d in zip(seeds, late, runs["kernel"]):
            stolen = host_steal(d)
            lines.append(
                f"- seed {s}: {x['mean_ns'] / 1e3:.1f} us, {x['max_ns'] / 1e6:.2f} ms, "
                f"{x['over_1ms']} of {x['events']}"
                + ("" if stolen is None else f", steal {100 * stolen:.1f} %")
                + (f" **flagged: {'; '.join(why)}**" if why else "")
            )
        lines.append("")
    tb = testbed_table(specs, out, plan)
    if tb:
        summary += [
            "",
            "The second kernel instrument: the scenarios the veth testbed expresses "
            "(scripts/veth_testbed.py, docs/FIDELITY-instruments.md), beside the kernel "
            "backend's runs:",
            "",
            *tb,
        ]
    doc.parent.mkdir(parents=True, exist_ok=True)
    # The hand-written findings of the specs' own folder (experiments/fidelity/FINDINGS.md
    # for the suite, experiments/fidelity/twins/FINDINGS.md for the BPF twins).
    findings = specs[0].resolve().parent / "FINDINGS.md" if specs else None
    notes = [findings.read_text().rstrip(), ""] if findings and findings.is_file() else []
    doc.write_text("\n".join(head + summary + [""] + notes + body) + "\n")


def testbed_table(specs: list[Path], out: Path, seeds: list[int] | SeedPlan) -> list[str]:
    """The testbed's column beside the kernel backend's (fidelity_testbed.row), for the
    scenarios with stored testbed runs; [] if none."""
    import fidelity_testbed

    plan = _plan(seeds)
    rows = []
    for spec in specs:
        path = out / spec.stem / "testbed.json"
        if not path.is_file():
            continue
        kernel = [out / spec.stem / f"kernel-seed{s}" for s in plan.of(spec)]
        kernel_metrics = [_metrics(d) for d in kernel if is_run_dir(d)]
        rows.append(
            fidelity_testbed.row(
                spec.stem, kernel_metrics, json.loads(path.read_text())["runs"], STARTUP_KEY
            )
        )
    return fidelity_testbed.HEADER + rows if rows else []


def _lateness(d: Path) -> tuple[dict, list[str]]:
    """A kernel run's emulator lateness and why it could have changed the result (runs
    stored before the flag existed are judged now, by the same rule)."""
    from tcplab.backends.kernel.assemble import lateness_flag

    emu = json.loads((d / "summary.json").read_text())["engine"]["emulator"]
    why = emu.get("lateness_flag")
    return emu["lateness"], (lateness_flag(emu["lateness"]) if why is None else why)


def _steal_note(kernel_runs: list[Path]) -> str:
    """The host's steal over the kept kernel runs (the largest) and how many runs were
    redone for it (``run_below_steal``'s set-asides); empty for runs without the record."""
    steals = [x for x in (host_steal(d) for d in kernel_runs) if x is not None]
    redone = sum(1 for d in kernel_runs for _ in d.parent.glob(d.name + STOLEN + "*"))
    note = f"; host steal at most {100 * max(steals):.1f} %" if steals else ""
    return note + (f", {redone} run{'s' * (redone > 1)} redone for it" if redone else "")


PER_SEED_MAX = 10
"""Up to this many seeds a side the summary lists a metric's values seed by seed; beyond,
their mean ± standard deviation and count (as the scenario's own section gives them)."""


def _per_seed(ms: dict[str, list[dict[str, float]]], key: str) -> str:
    """One metric's per-seed values on each backend, "sim values / kernel values": start-up
    losses are bimodal on the kernel, which a mean would hide."""

    def side(runs: list[dict[str, float]]) -> str:
        if len(runs) <= PER_SEED_MAX:
            return " ".join(f"{m[key]:g}" if key in m else "-" for m in runs)
        mean, sd = _stat([m[key] for m in runs if key in m])
        return f"{mean:.0f} ± {sd:.0f} over {len(runs)}"

    return " / ".join(side(ms[b]) for b in BACKENDS)


def _sem(xs: list[float]) -> float:
    return statistics.stdev(xs) / len(xs) ** 0.5 if len(xs) > 1 else 0.0


def _goals(ms: dict[str, list[dict[str, float]]]) -> str:
    """The fidelity goals over the seeds' means: 'met' or the failing ones, each with the
    95 % interval of its gap over the seeds (scripts/seed_spread.py, Welch's t) and
    "undecided" where that interval reaches inside the goal: the seeds' own scatter could
    make the miss."""

    def vals(b: str, key: str) -> list[float]:
        return [m[key] for m in ms[b] if key in m]

    def interval(s: list[float], k: list[float], kind: str, fmt: str) -> str:
        try:
            _, lo, hi, v = judged(s, k, kind)
        except ValueError:  # one seed a side, or a zero mean
            return ""
        return f" [{format(lo, fmt)}, {format(hi, fmt)}]" + (" undecided" if v != "outside" else "")

    fails = []
    for key in ms["sim"][0]:
        s, k = vals("sim", key), vals("kernel", key)
        if not s or not k:
            continue
        gap = statistics.fmean(k) - statistics.fmean(s)
        if key.endswith(" share"):
            se = (_sem(s) ** 2 + _sem(k) ** 2) ** 0.5
            if abs(gap) > max(SHARE_GOAL, se):
                spread = interval(s, k, "share", "+.2f")
                fails.append(f"{key.split(' (')[0]} share {gap:+.2f}{spread}")
        elif key == "retransmissions (all flows)":
            a, b = statistics.fmean(s), statistics.fmean(k)
            if max(a, b) > RETX_GOAL * min(a, b) and max(a, b) - min(a, b) >= 2:
                spread = interval(s, k, "retx", ".2f")
                fails.append(f"retransmissions x{b / a if a else float('inf'):.2f}{spread}")
        elif key.endswith("mean smoothed RTT ms") or key == "mean backlog pkts":
            a = statistics.fmean(s)
            if a and abs(gap) > RELATIVE_GOAL * a:
                name = "backlog" if key == "mean backlog pkts" else key.split(" (")[0] + " sRTT"
                spread = interval(s, k, "rel", "+.0%").replace("%", " %")
                fails.append(f"{name} {100 * gap / a:+.0f} %{spread}")
    return "met" if not fails else "; ".join(fails)


def _modes(xs: list[float]) -> str:
    """The per-seed values sorted, split where neighbours lie more than MODE_GAP apart."""
    xs = sorted(xs)
    groups: list[list[float]] = [[xs[0]]] if xs else []
    for x in xs[1:]:
        if x - groups[-1][-1] > MODE_GAP:
            groups.append([])
        groups[-1].append(x)
    return " \\| ".join(" ".join(f"{x:.2f}" for x in g) for g in groups)


def _share_table(ms: dict[str, list[dict[str, float]]], seeds: list[int]) -> list[str]:
    """Each flow's share seed by seed, and sorted with its modes (groups further apart
    than MODE_GAP separated by '|')."""
    keys = [k for k in ms["sim"][0] if k.endswith(" share")]
    if len(keys) < 2:
        return []
    out = [
        f"Shares per seed (seeds {compact(seeds)}), then sorted, groups more than "
        f"{MODE_GAP} apart split by '|':",
        "",
        "| flow | sim per seed | kernel per seed | sim sorted | kernel sorted |",
        "|---|---|---|---|---|",
    ]
    for key in keys:
        v = {b: [m.get(key, float("nan")) for m in ms[b]] for b in BACKENDS}
        out.append(
            f"| {key[: -len(' share')]} | "
            + " | ".join(" ".join(f"{x:.2f}" for x in v[b]) for b in BACKENDS)
            + " | "
            + " | ".join(_modes(v[b]) for b in BACKENDS)
            + " |"
        )
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("specs", nargs="*", help="default: experiments/fidelity/*.toml")
    p.add_argument("-o", "--output", default="results/fidelity")
    p.add_argument(
        "--seeds", default="1,2", help="seeds of every scenario: 1,2 or ranges 1-10 (default 1,2)"
    )
    p.add_argument(
        "--scenario-seeds",
        action="append",
        default=[],
        metavar="SCENARIO=SEEDS",
        help="run and tabulate one scenario (its spec's file stem) on its own seeds, e.g. "
        "f07-four-bbr-shallow=1-50, to decide a row the suite's seeds left undecided "
        "(repeat per scenario)",
    )
    p.add_argument("--docs", help="write the table here (e.g. docs/FIDELITY.md)")
    p.add_argument(
        "--backends", default="sim,kernel", help="which runs to make (default sim,kernel)"
    )
    p.add_argument(
        "--keep-kernel",
        action="store_true",
        help="reuse stored kernel runs of an unchanged spec made by another tcplab version",
    )
    p.add_argument(
        "--max-steal",
        type=float,
        help="redo a kernel run whose host steal (the hypervisor's share of the CPU time over "
        "the run, engine.emulator.host_steal) exceeds this fraction, e.g. 0.01",
    )
    p.add_argument(
        "--attempts",
        type=int,
        default=3,
        help="with --max-steal: kernel runs per seed at most, the stored one included "
        "(default 3); the least stolen is kept",
    )
    p.add_argument(
        "--hz",
        default="kernel",
        help="tcp.hz of the simulator's runs of specs that do not set it: 'kernel' (default: "
        "the CONFIG_HZ the stored kernel runs recorded, else this machine's) or a number",
    )
    p.add_argument(
        "--testbed",
        action="store_true",
        help="also run the veth testbed (root; one run per seed) and print its column",
    )
    args = p.parse_args()
    if args.hz != "kernel" and args.hz not in map(str, ALLOWED_HZ):
        p.error(f"--hz: 'kernel' or one of {', '.join(map(str, ALLOWED_HZ))}, got {args.hz!r}")
    specs = [Path(s) for s in args.specs] or sorted(
        (REPO / "experiments" / "fidelity").glob("*.toml")
    )
    try:
        plan = SeedPlan.of_args(args.seeds, args.scenario_seeds)
    except ValueError as e:
        p.error(str(e))
    if plan.unknown(specs):
        p.error(
            f"--scenario-seeds: no spec named {', '.join(plan.unknown(specs))} among "
            + ", ".join(s.stem for s in specs)
        )
    out = Path(args.output)
    run_all(
        specs,
        out,
        plan,
        print,
        tuple(args.backends.split(",")),
        args.keep_kernel,
        args.max_steal,
        args.attempts,
        args.hz,
    )
    if args.testbed:
        import fidelity_testbed

        for spec in specs:
            fidelity_testbed.run(spec, out, len(plan.of(spec)), print)
        print("\n".join(testbed_table(specs, out, plan)))
    if args.docs:
        cmd = (
            "python scripts/fidelity.py --seeds "
            + args.seeds
            + plan.argv()
            + (" --keep-kernel" if args.keep_kernel else "")
            + (
                f" --max-steal {args.max_steal} --attempts {args.attempts}"
                if args.max_steal is not None
                else ""
            )
            + (f" --hz {args.hz}" if args.hz != "kernel" else "")
            + " --docs "
            + args.docs
        )
        write_doc(specs, out, plan, Path(args.docs), cmd)
        print(f"wrote {args.docs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
