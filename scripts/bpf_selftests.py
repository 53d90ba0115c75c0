#!/usr/bin/env python3
"""The Linux kernel's own BPF congestion-control selftest programs, unchanged, on both
backends: for every ``tcp_congestion_ops`` in the ``.c`` files of a kernel tree's
``tools/testing/selftests/bpf/progs/`` (bpf_cubic.c, bpf_dctcp.c, bpf_cc_cubic.c,
tcp_ca_*.c, ...), whether tcplab compiles it, the simulator loads it, the kernel's
verifier takes it and the kernel registers it; then, for each that runs on both, a few
standard scenarios on the simulator and the kernel, and the fidelity goals
(scripts/fidelity.py: shares within 0.05, retransmissions within 1.5x, smoothed RTT and
backlog within 5 %).

    sudo python scripts/bpf_selftests.py --progs /path/to/linux/tools/testing/selftests/bpf/progs \\
        -o results/bpf_selftests --seeds 1,2 --docs docs/FIDELITY-bpf-selftests.md

The sources are compiled as the selftests compile them: ``#include "vmlinux.h"`` from the
running kernel's BTF (tcplab.bpf.vmlinux_dir), libbpf's headers, and ``-I PROGS`` for
bpf_tracing_net.h and the other local headers; nothing of the kernel tree is copied into
tcplab. Every simulated run uses the running kernel's CONFIG_HZ (``[tcp] hz``), so both
backends tick the same jiffies. Runs are kept under ``OUT/<program>-<ops>/<scenario>/``
(rerunning reuses finished ones); without root, or without the BPF loader, only the
load checks and the simulator's runs are made.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "scripts"))

import tcplab  # noqa: E402
from fidelity import _goals, _metrics  # noqa: E402
from tcplab import bpf, bpf_loader  # noqa: E402
from tcplab.storage.directory import is_run_dir  # noqa: E402

STRUCT_OPS = re.compile(
    r'SEC\("\.struct_ops(?:\.link)?"\)\s*struct\s+tcp_congestion_ops\s+(\w+)\s*=\s*\{(.*?)\};',
    re.S,
)
FINDINGS = "## Findings"
BOTTLENECK = {"rate": "20Mbps", "delay": "5ms", "buffer": "1bdp"}
SCENARIOS = {
    # experiments/fidelity/f02-single-cubic.toml's network, the program alone
    "alone": {"bottleneck": BOTTLENECK, "flows": ["P"]},
    # the same with the kernel's own CUBIC beside it (f09-two-cubic's network)
    "vs-cubic": {"bottleneck": BOTTLENECK, "flows": ["P", "cubic"]},
    # programs asking for ECN (TCP_CONG_NEEDS_ECN): experiments/kernel-spec/k03's step
    # marker at K = 20 packets, two flows of the program
    "step-ecn": {
        "bottleneck": {
            "rate": "20Mbps",
            "delay": "10ms",
            "buffer": "4bdp",
            "aqm": {"kind": "step", "k": 20, "ecn": True},
        },
        "flows": ["P", "P"],
    },
}


@dataclass
class Ops:
    """One ``tcp_congestion_ops`` of a selftest file and what became of it."""

    file: str
    var: str
    ecn: bool
    status: dict[str, str] = field(default_factory=dict)
    runs: dict[str, str] = field(default_factory=dict)  # scenario -> goals verdict

    @property
    def key(self) -> str:
        return f"{Path(self.file).stem}-{self.var}"


def discover(progs: Path) -> list[Ops]:
    found = []
    for src in sorted(progs.glob("*.c")):
        text = src.read_text(errors="replace")
        for m in STRUCT_OPS.finditer(text):
            found.append(Ops(src.name, m.group(1), "TCP_CONG_NEEDS_ECN" in m.group(2)))
    return found


def first_lines(text: str, limit: int = 240) -> str:
    """A refusal on one line, for a table cell: its first line and, from a verifier log,
    the verifier's last word (the loader's temporary object named "the object")."""
    text = re.sub(r"/tmp/tcplab-[\w.-]+/[\w.-]+\.bpf\.o", "the object", text)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    said = [
        ln
        for ln in lines[1:]
        if not ln.startswith(("libbpf: prog", "processed", "-- ", "libbpf: failed to load", ";"))
        and not re.match(r"\d+: ", ln)
    ]
    out = " / ".join(lines[:1] + said[-1:]).replace("|", "\\|")
    return out if len(out) <= limit else out[:limit] + " [...]"


def can_register() -> str | None:
    if os.geteuid() != 0:
        return "not root"
    return bpf_loader.available()


def check(ops: Ops, progs: Path, kernel: bool) -> str | None:
    """Fill ``ops.status`` (compile, sim, verifier, register); the engine reference of the
    object if it runs on every backend asked for, else None."""
    build = bpf.Build((str(progs),), (), ops.var)
    try:
        obj = bpf.object_for(progs / ops.file, build)
        ops.status["compile"] = "ok"
    except bpf.BpfBuildError as exc:
        ops.status["compile"] = first_lines(str(exc))
        return None
    try:
        prog = bpf._choose(obj, ops.var)
        ops.status["sim"] = "loads"
    except bpf.BpfBuildError as exc:
        prog = None
        ops.status["sim"] = "refused: " + first_lines(str(exc).split(": ", 1)[-1])
    if not kernel:
        return prog.engine_ref if prog else None
    why = bpf_loader.verify(obj.read_bytes())
    ops.status["verifier"] = "takes it" if why is None else "refuses: " + first_lines(why)
    from tcplab.backends.kernel import bpf_ops

    try:
        reg = bpf_ops.register([(obj.read_bytes(), ops.var)])
        bpf_ops.unregister(reg)
        ops.status["kernel"] = "registers"
    except bpf_loader.BpfLoadError as exc:
        ops.status["kernel"] = "refused: " + first_lines(str(exc))
        return None
    return prog.engine_ref if prog else None


def spec_text(ops: Ops, progs: Path, scenario: str, hz: int, duration: str) -> str:
    sc = SCENARIOS[scenario]
    lines = [
        "[experiment]",
        f'name = "{ops.key} {scenario}"',
        f'description = "kernel selftest {ops.file} ({ops.var}), {scenario}"',
        f'duration = "{duration}"',
        'sample_interval = "100ms"',
        "",
        "[tcp]",
        f"hz = {hz}",
        "",
        "[bottleneck]",
    ]
    for k, v in sc["bottleneck"].items():
        lines.append(f"{k} = {_toml(v)}")
    for cc in sc["flows"]:
        lines += ["", "[[flows]]", 'rtt = "40ms"']
        if cc == "P":
            lines += [
                f'cc = "bpf:{progs / ops.file}"',
                f'bpf = {{ include = ["{progs}"], ops = "{ops.var}" }}',
            ]
        else:
            lines.append(f'cc = "{cc}"')
    return "\n".join(lines) + "\n"


def _toml(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {_toml(x)}" for k, x in v.items()) + " }"
    return str(v)


def run_scenario(spec: Path, out: Path, seeds: list[int], backends: list[str], say) -> int:
    """Make the scenario's missing runs; return how many kernel runs were made."""
    made = 0
    for seed in seeds:
        for b in backends:
            d = out / f"{b}-seed{seed}"
            if is_run_dir(d) and (d / "spec.toml").is_file():
                continue
            t = time.monotonic()
            tcplab.run(spec, d, seed=seed, overrides={"experiment.backend": b}, report=False)
            say(f"  {spec.stem} {b} seed {seed}: {time.monotonic() - t:.1f} s")
            made += b == "kernel"
    return made


def summarise(out: Path, seeds: list[int], backends: list[str]) -> dict[str, str]:
    """Per backend the seeds' mean shares, all flows' retransmissions, mean sRTT and
    backlog; and the goals' verdict when both ran."""
    ms = {b: [_metrics(out / f"{b}-seed{s}") for s in seeds] for b in backends}
    row: dict[str, str] = {}
    for b in backends:
        shares = [k for k in ms[b][0] if k.endswith(" share")]
        row[f"{b} shares"] = " / ".join(
            f"{statistics.fmean(m[k] for m in ms[b]):.2f}" for k in shares
        )
        row[f"{b} retx"] = (
            f"{statistics.fmean(m['retransmissions (all flows)'] for m in ms[b]):.0f}"
        )
        srtt = [
            statistics.fmean(v for k, v in m.items() if k.endswith("mean smoothed RTT ms"))
            for m in ms[b]
        ]
        row[f"{b} srtt"] = f"{statistics.fmean(srtt):.1f}"
        row[f"{b} backlog"] = f"{statistics.fmean(m['mean backlog pkts'] for m in ms[b]):.1f}"
    if set(backends) == {"sim", "kernel"}:
        row["goals"] = _goals(ms)
    return row


def write_doc(doc: Path, found: list[Ops], rows, args, header: dict[str, str]) -> None:
    lines = [
        "# The kernel's BPF congestion-control selftests on both backends",
        "",
        "Generated by `" + header["command"] + "`: every `tcp_congestion_ops` in the `.c` "
        "files of a Linux tree's `tools/testing/selftests/bpf/progs/`, compiled **unchanged** "
        "as the selftests compile them (`vmlinux.h` from the running kernel's BTF, libbpf's "
        "headers, `-I` the progs directory for `bpf_tracing_net.h`), through tcplab's own build "
        '(`cc = "bpf:PROGS/file.c"`, `bpf = { include = [PROGS], ops = "VAR" }`). The '
        "sources are not in this repository; scripts/bpf_selftests.py runs any tree's.",
        "",
        f"- Sources: {header['sources']}",
        f"- Kernel: Linux {os.uname().release}, CONFIG_HZ={header['hz']} (the simulated runs use "
        f"`[tcp] hz = {header['hz']}`); tcplab {tcplab.__version__}, commit {header['commit']}",
        "- Load (`uptime` at the start and the end of the invocation that made the kernel "
        f"runs; 2 cores shared with other work): {header['load_before']}; "
        f"{header['load_after']}",
        f"- Scenarios ({header['duration']} each, seeds {args.seeds}, means over seeds): "
        "`alone` one flow, 20 Mbit/s, 40 ms RTT, 1 BDP drop-tail (fidelity f02's network); "
        "`vs-cubic` the program and the kernel's CUBIC on it; `step-ecn` (programs with "
        "`TCP_CONG_NEEDS_ECN`) two flows against a step ECN marker at K = 20 packets, 4 BDP, "
        "20 ms base delay (kernel-spec k03's network). Goals as in docs/FIDELITY.md: shares "
        "within 0.05, all flows' retransmissions within 1.5x, smoothed RTT and backlog within 5 %.",
        "",
        "## Loading",
        "",
        "| file | struct_ops | compiles | simulator | kernel verifier (whole object) | kernel registers it |",
        "|---|---|---|---|---|---|",
    ]
    for o in found:
        s = o.status
        lines.append(
            f"| {o.file} | {o.var} | {s.get('compile', '-')} | {s.get('sim', '-')} | "
            f"{s.get('verifier', '-')} | {s.get('kernel', '-')} |"
        )
    lines += [
        "",
        "## Runs",
        "",
        "Shares per flow (the program first), retransmissions of all flows, mean smoothed RTT "
        "(ms) and mean backlog (packets), simulator | kernel.",
        "",
        "| struct_ops | scenario | shares | retransmissions | sRTT ms | backlog pkts | goals |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, scenario, r in rows:

        def pair(what: str, r=r) -> str:
            return f"{r.get('sim ' + what, '-')} \\| {r.get('kernel ' + what, '-')}"

        lines.append(
            f"| {key} | {scenario} | {pair('shares')} | {pair('retx')} | {pair('srtt')} | "
            f"{pair('backlog')} | {r.get('goals', '-')} |"
        )
    lines.append("")
    # The hand-written findings (what the numbers mean) survive a regeneration.
    kept = doc.read_text().partition(FINDINGS)[2] if doc.is_file() else ""
    if kept:
        lines += [FINDINGS + kept.rstrip("\n"), ""]
    doc.parent.mkdir(parents=True, exist_ok=True)
    doc.write_text("\n".join(lines) + "\n")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--progs", required=True, help="a Linux tree's tools/testing/selftests/bpf/progs"
    )
    p.add_argument("-o", "--output", default="results/bpf_selftests")
    p.add_argument("--seeds", default="1,2")
    p.add_argument("--duration", default="20s")
    p.add_argument("--only", help="comma-separated struct_ops variables to run (default: all)")
    p.add_argument("--docs", help="write the tables here (docs/FIDELITY-bpf-selftests.md)")
    p.add_argument("--sources", default="", help="where the sources came from, for the doc")
    args = p.parse_args()
    progs = Path(args.progs).resolve()
    out = Path(args.output).resolve()
    seeds = [int(s) for s in args.seeds.split(",")]
    load_before = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    why_not = can_register()
    backends = ["sim"] if why_not else ["sim", "kernel"]
    if why_not:
        print(f"kernel backend skipped: {why_not}")
    from tcplab.backends.kernel.kconfig import kernel_hz

    hz = kernel_hz()[0] or 1000
    found = discover(progs)
    only = set(args.only.split(",")) if args.only else None
    rows = []
    kernel_runs = 0
    for ops in found:
        ref = check(ops, progs, "kernel" in backends)
        print(f"{ops.file} {ops.var}: {ops.status}")
        if ref is None or (only and ops.var not in only):
            continue
        scenarios = ["alone", "vs-cubic"] + (["step-ecn"] if ops.ecn else [])
        for sc in scenarios:
            d = out / ops.key / sc
            d.mkdir(parents=True, exist_ok=True)
            spec = d / f"{ops.key}-{sc}.toml"
            spec.write_text(spec_text(ops, progs, sc, hz, args.duration))
            try:
                kernel_runs += run_scenario(spec, d, seeds, backends, print)
            except Exception as exc:  # a refusal at run time is a result to record
                rows.append((ops.key, sc, {"goals": "run failed: " + first_lines(str(exc))}))
                continue
            rows.append((ops.key, sc, summarise(d, seeds, backends)))
            print(f"  {sc}: {rows[-1][2]}")
    load_after = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    # The load that matters is the kernel runs': kept with them, so that a later
    # invocation that only reruns the simulator reports it.
    load_file = out / "kernel_load.json"
    if kernel_runs:
        load_file.write_text(json.dumps({"before": load_before, "after": load_after}))
    elif load_file.is_file():
        stored = json.loads(load_file.read_text())
        load_before, load_after = stored["before"], stored["after"]
    if args.docs:
        commit = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        cmd = (
            f"sudo python scripts/bpf_selftests.py --progs PROGS --seeds {args.seeds} "
            f"--duration {args.duration} --docs {args.docs}"
        )
        header = {
            "command": cmd,
            "sources": args.sources or str(progs),
            "hz": str(hz),
            "commit": commit,
            "load_before": load_before,
            "load_after": load_after,
            "duration": args.duration,
        }
        write_doc(Path(args.docs), found, rows, args, header)
        (out / "results.json").write_text(
            json.dumps(
                {"status": {o.key: o.status for o in found}, "rows": rows, "header": header},
                indent=1,
            )
        )
        print(f"wrote {args.docs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
