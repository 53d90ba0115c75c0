"""The ``tcplab`` command line: run, sweep, reproduce, report, compare, algorithms, validate,
doctor.

Exit status: 0 success, 1 a ``[[checks]]`` entry failed (each is printed) or an internal
failure, 2 a problem with the input (printed as ``file: field.path:
message``; no output directory is left behind), 1 an internal failure of the simulator
(reported in one line, never as a Rust panic), 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tcplab import __version__
from tcplab.errors import EngineError, SpecError

EXIT_INPUT = 2
EXIT_INTERNAL = 1
EXIT_CHECKS = 1


def threading_is_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _overrides(items: Sequence[str]) -> dict[str, Any]:
    from tcplab.spec.model import parse_value

    out: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            raise SpecError(
                [(f"--set {item}", "expected key=value, e.g. --set bottleneck.buffer=2bdp")]
            )
        key, value = item.split("=", 1)
        out[key.strip()] = parse_value(value.strip())
    return out


def _progress_bar(total_s: float, quiet: bool, real_time: bool = False) -> tuple[Any, Any]:
    if quiet:
        return None, None
    from tqdm import tqdm

    what = "s of real time (kernel: as long as the experiment)" if real_time else "s simulated"
    bar = tqdm(
        total=round(total_s, 3),
        unit="s real" if real_time else "s sim",
        file=sys.stderr,
        bar_format=("{l_bar}{bar}| {n:.1f}/{total:.1f} " + what + " [{elapsed}<{remaining}]"),
    )

    def update(sim_time_s: float) -> None:
        bar.update(min(round(float(sim_time_s), 3), bar.total) - bar.n)

    return bar, update


def _backends(arg: str | None) -> list[str | None]:
    """``--backend`` as a list (None: the spec's own)."""
    from tcplab.backends import BACKENDS

    if arg is None:
        return [None]
    names = [b.strip() for b in arg.split(",") if b.strip()]
    bad = [b for b in names if b not in BACKENDS]
    if bad or not names or len(set(names)) != len(names):
        known = ", ".join(BACKENDS)
        raise SpecError(
            [("--backend", f"'{arg}': allowed: {known}, or several as {','.join(BACKENDS)}")]
        )
    return list(names)


def cmd_run(args: argparse.Namespace) -> int:
    from tcplab.spec.model import load_spec

    out = Path(args.output)
    from tcplab.runs.directory import check_output_dir

    if args.pdf and args.no_report:
        raise SpecError([("--pdf", "report.pdf is part of the report; drop --no-report or --pdf")])
    check_output_dir(out)
    backends = _backends(args.backend)
    spec = load_spec(args.spec, _overrides(args.set))
    if args.seed is not None:
        if not 0 <= args.seed < 2**63:
            raise SpecError([("--seed", f"must be a whole number >= 0, got {args.seed}")])
        spec.experiment.seed = args.seed
    if len(backends) == 1:
        return _run_one(args, spec, out, backends[0])
    # Both: DIR/sim and DIR/kernel, every input problem found before either runs.
    specs = []
    for b in backends:
        s = spec.model_copy(deep=True)
        s.experiment.backend = _spec_backend(b)
        specs.append(_prepare(s, out / str(b)))
    status = 0
    for b, s in zip(backends, specs):
        if not args.quiet:
            print(f"== backend {b}: {out / str(b)}/")
        status = max(status, _execute_and_write(args, s, out / str(b)))
    from tcplab.report.compare import compare_runs

    result = compare_runs([out / str(b) for b in backends], out / "compare")
    if not args.quiet:
        print(result.text())
        print(f"wrote {out / 'compare'}/compare.csv, compare.md and compare.png")
    return status


def _prepare(spec: Any, out: Path) -> Any:
    """Every check that can refuse a run before it starts; returns the resolved spec."""
    from tcplab.backends import backend_of
    from tcplab.backends.sim import resolve
    from tcplab.runs.ownership import check_replaceable

    check_replaceable(out, "-o")
    spec = resolve(spec)  # every spec error is reported before the run starts
    backend_of(spec).check(spec)
    return spec


def _spec_backend(name: str | None) -> str | None:
    """``experiment.backend`` for a backend name: absent for the default, as specs say."""
    from tcplab.backends import DEFAULT

    return None if name == DEFAULT else name


def _run_one(args: argparse.Namespace, spec: Any, out: Path, backend: str | None) -> int:
    if backend is not None:
        spec.experiment.backend = _spec_backend(backend)
    return _execute_and_write(args, _prepare(spec, out), out)


def _execute_and_write(args: argparse.Namespace, spec: Any, out: Path) -> int:
    from tcplab.backends import backend_of
    from tcplab.runs.directory import write_run
    from tcplab.runs.execute import execute

    backend = backend_of(spec)
    bar, update = _progress_bar(
        spec.experiment.duration / 1e9, args.quiet, real_time=backend.real_time
    )
    try:
        result, config, wall = execute(spec, update)
    finally:
        if bar is not None:
            bar.n = bar.total
            bar.close()
    write_run(result, out, config, wall, replace=True, report=not args.no_report, pdf=args.pdf)
    for w in result.summary_json.get("warnings", []):
        print(f"tcplab: warning: {w}", file=sys.stderr)
    if not args.quiet:
        _print_summary(result)
        # `wall` is the run alone; writing and drawing the report come on top.
        print(
            f"{backend.verb} in {wall:.1f} s; wrote {out}/"
            + (
                ""
                if args.no_report
                else f"; report: {out / 'report.png'}, report.html"
                + (" and report.pdf" if args.pdf else "")
            )
        )
    return _report_checks(spec, result.summary_json)


def cmd_doctor(args: argparse.Namespace) -> int:
    """What the kernel backend needs and whether this machine has it; removes the
    namespaces of dead kernel runs. Exit 0 when a kernel run can start, 2 otherwise."""
    from tcplab.backends.kernel import netns, requirements

    reqs = requirements.check()
    for r in reqs:
        print(f"{'ok' if r.ok else 'MISSING':>7}  {r.name:<20} {r.detail}")
    if all(r.ok for r in reqs if r.name in ("root", "ip")):
        removed = netns.clean_stale()
        if removed:
            print(f"removed leftover namespaces of dead runs: {' '.join(removed)}")
        from tcplab.backends.kernel import bpf_ops

        ids = bpf_ops.clean_stale()
        if ids:
            print(f"unregistered BPF programs of dead runs: struct_ops ids {ids}")
    blocking = requirements.missing()
    print(
        "kernel backend: "
        + (
            "available"
            if not blocking
            else "unavailable (" + ", ".join(r.name for r in blocking) + ")"
        )
    )
    return 0 if not blocking else EXIT_INPUT


def _report_checks(spec: Any, summary: dict[str, Any]) -> int:
    """Print each [[checks]] entry's outcome (even with -q: it is the run's verdict);
    exit status 1 if one failed."""
    from tcplab.analysis.checks import evaluate

    outcomes = [evaluate(c, summary) for c in spec.checks]
    for o in outcomes:
        print(o.line())
    failed = [o for o in outcomes if not o.passed]
    if failed:
        print(
            f"tcplab: {len(failed)} of {len(outcomes)} checks failed: "
            + "; ".join(o.check.label() for o in failed),
            file=sys.stderr,
        )
        return EXIT_CHECKS
    return 0


def _print_summary(result: Any) -> None:
    a = result.aggregate
    print(f"{'flow':>4}  {'cc':<12}{'goodput':>12}{'share':>8}{'retx':>8}{'mean RTT':>10}")
    for fid, row in result.summary.iterrows():
        print(
            f"{int(fid):>4}  {str(row['cc']):<12}{row['goodput_bps'] / 1e6:>8.2f} Mbps{row['share']:>8.3f}"
            f"{int(row['retransmitted_packets']):>8}{row['mean_rtt_ms']:>7.1f} ms"
        )
    fmt = lambda k, f: "n/a" if a.get(k) is None or a.get(k) != a.get(k) else format(a[k], f)  # noqa: E731
    print(
        f"utilization {fmt('utilization', '.3f')}, Jain index {fmt('jain_index', '.3f')}, "
        f"mean backlog {fmt('mean_backlog_pkts', '.1f')} pkts, queueing delay {fmt('mean_queueing_delay_ms', '.2f')} ms"
    )
    for s in (result.summary_json or {}).get("sources", []):  # [[sources]], apart from the flows
        print(
            f"source {s['source']}: {s['rate_bps'] / 1e6:.2f} Mbps offered, {s['delivered_bps'] / 1e6:.2f} Mbps "
            f"delivered, {s['dropped_packets']} of {s['sent_packets']} packets dropped"
        )


def cmd_sweep(args: argparse.Namespace) -> int:
    from tcplab.runs.sweep import run_sweep

    table = run_sweep(
        args.spec,
        Path(args.output),
        workers=args.workers,
        executor=args.executor,
        overrides=_overrides(args.set),
        progress=not args.quiet,
        quiet=args.quiet,
        reports=args.reports,
        pdf=args.pdf,
    )
    if not args.quiet:
        print(f"wrote {args.output}/table.csv ({len(table)} runs), summary_*.png and report.html")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    from tcplab.reproduce import load_catalogue, reproduce

    root = Path(args.catalogue) if args.catalogue else None
    if args.list:
        for e in load_catalogue(root, args.select or None):
            state = f"not run: {e.meta.needs}" if e.meta.needs else f"{len(e.meta.claims)} claims"
            print(f"{e.meta.paper:<9} {e.name:<44} {e.meta.figure:<16} {state}")
        return 0
    if not args.output:
        raise SpecError(
            [("-o", "required (the directory for the runs and the report), or use --list")]
        )
    if args.workers is not None and args.workers < 1:
        raise SpecError([("--workers", f"must be a whole number >= 1, got {args.workers}")])
    cmd = "tcplab reproduce " + " ".join(args.select + (["--quick"] if args.quick else []))
    results = reproduce(
        args.select or None,
        Path(args.output),
        quick=args.quick,
        workers=args.workers,
        executor=args.executor,
        root=root,
        docs=Path(args.docs) if args.docs else None,
        command=cmd.strip(),
        say=(lambda *_: None) if args.quiet else print,
        progress=not args.quiet,
    )
    if not args.quiet:
        print(
            f"wrote {args.output}/report.md, report.html and claims.csv ({sum(len(r.claims) for r in results)} claims)"
        )
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from tcplab.runs.directory import is_run_dir

    d = Path(args.dir)
    if (d / "sweep.json").is_file():
        from tcplab.runs.sweep import build_table, load_plan, write_summary

        if args.pdf:
            raise SpecError(
                [
                    (
                        "--pdf",
                        "a sweep's report (summary plots, report.html) has no PDF; "
                        "a run's has: tcplab report DIR/runs/<digest> --pdf",
                    )
                ],
                str(d),
            )

        with _stored_files(d):
            plan = load_plan(d)
            table = build_table(d, plan)
        paths = write_summary(d, plan, table)
        print("redrew " + ", ".join(str(p) for p in paths))
        return 0
    if not is_run_dir(d):
        raise SpecError(
            [("", "not a tcplab run or sweep directory (no manifest.json or sweep.json)")], str(d)
        )
    names = redraw_report(d, pdf=args.pdf)
    print("redrew " + ", ".join(str(d / n) for n in names))
    return 0


@contextmanager
def _stored_files(d: Path) -> Iterator[None]:
    """Stored files that cannot be read back (truncated, edited, from a foreign tool)
    are a problem with the input, reported as such, not an internal error."""
    try:
        yield
    except SpecError:
        raise
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        raise SpecError(
            [
                (
                    "",
                    f"its stored results cannot be read ({type(exc).__name__}: {exc}); "
                    "re-run the experiment",
                )
            ],
            str(d),
        ) from None


def redraw_report(d: Path, pdf: bool = False) -> list[str]:
    """Redraw report.png and report.html of a stored run, and report.pdf when ``pdf`` or
    when the run already has one (so no PDF is left older than its PNG); refresh their
    digests in the manifest. Returns the names written."""
    import os
    import shutil
    import tempfile

    from tcplab.report.run_report import PDF_FILE, save_report
    from tcplab.runs.directory import MANIFEST, clean_stale_tmp, load_run, sha256_file, tmp_prefix

    with _stored_files(d):
        result = load_run(d)
    pdf = pdf or PDF_FILE in result.manifest.get("sha256", {})
    clean_stale_tmp(d)
    tmp = Path(tempfile.mkdtemp(prefix=tmp_prefix("report"), dir=d))
    try:
        names = save_report(result, tmp, pdf=pdf)
        for name in names:
            os.replace(tmp / name, d / name)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    manifest = json.loads((d / MANIFEST).read_text())
    for name in names:
        manifest.setdefault("sha256", {})[name] = sha256_file(d / name)
    staged = d / (tmp_prefix(MANIFEST) + "x")
    staged.write_text(json.dumps(manifest, indent=1) + "\n")
    os.replace(staged, d / MANIFEST)
    return names


def cmd_compare(args: argparse.Namespace) -> int:
    from tcplab.report.compare import compare_runs

    result = compare_runs([Path(d) for d in args.dirs], args.output)
    if args.json:
        # One document: what differs in the specs (path -> value per run), then the metrics.
        metrics = json.loads(result.table.to_json(orient="records"))
        spec_diff = [{"path": p, "values": v} for p, v in result.spec_diff]
        print(json.dumps({"spec_diff": spec_diff, "metrics": metrics}, indent=1))
    else:
        print(result.text())
    if args.output:
        print(f"wrote {args.output}/compare.csv, compare.md and compare.png", file=sys.stderr)
    return 0


def cmd_algorithms(args: argparse.Namespace) -> int:
    from tcplab.spec.algorithms import _num, registry

    if args.bpf:
        return _bpf_algorithm(args)
    reg = registry()
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "name": a.name,
                        "summary": a.summary,
                        "source": a.source,
                        "params": [p.__dict__ for p in a.params],
                    }
                    for a in reg.values()
                ],
                indent=1,
            )
        )
        return 0
    for a in reg.values():
        print(f"{a.name}: {a.summary}")
        print(f"    source: {a.source}")
        for p in a.params:
            d = p.default_value()
            d = str(d).lower() if isinstance(d, bool) else d  # as written in TOML
            rng = "" if p.kind == "bool" else f" [{_num(p.min)}, {_num(p.max)}]"
            if p.choices:  # one of the values (the label is what [tcp] writes)
                rng = " of " + ", ".join(f"{_num(v)} ({label})" for label, v in p.choices)
            print(f"    {p.name} ({p.kind}, default {d}{rng}): {p.doc}")
        print()
    return 0


def _bpf_algorithm(args: argparse.Namespace) -> int:
    """``tcplab algorithms --bpf FILE``: a BPF program's name and parameters (its
    ``const volatile`` globals), compiling a ``.bpf.c`` if needed."""
    from tcplab import bpf

    try:
        prog = bpf.program(bpf.PREFIX + str(Path(args.bpf).resolve()))
    except bpf.BpfBuildError as exc:
        raise SpecError([("--bpf", str(exc))]) from None
    if args.json:
        print(json.dumps({"name": prog.name, "params": list(prog.params)}, indent=1))
        return 0
    print(f"{prog.name}: BPF struct_ops program {args.bpf} (object {prog.object_path})")
    for p in prog.params:
        d = str(p["default"]).lower() if isinstance(p["default"], bool) else int(p["default"])
        rng = "" if p["kind"] == "bool" else f" [{p['min']:.0f}, {p['max']:.0f}]"
        print(f"    {p['name']} ({p['kind']}, default {d}{rng})")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from tcplab.backends.sim import check_with_engine, resolve
    from tcplab.runs.directory import spec_toml
    from tcplab.spec.model import load_spec, read_toml

    spec = load_spec(args.spec, _overrides(args.set))
    raw = read_toml(args.spec)
    if "sweep" in raw:
        from tcplab.runs.sweep import plan_sweep

        plan = plan_sweep({**raw}, str(args.spec))
        print(
            f"# sweep: {len(plan.jobs)} runs over {', '.join(plan.axes) or 'no axes'}, repeat {plan.repeat}",
            file=sys.stderr,
        )
    resolved = resolve(spec)
    config = check_with_engine(resolved)
    print(
        json.dumps(config, indent=1) if args.json else spec_toml(resolved),
        end="" if not args.json else "\n",
    )
    return 0


def cmd_import_tum(args: argparse.Namespace) -> int:
    from tcplab.spec.import_tum import import_tum
    from tcplab.spec.model import parse_spec
    from tcplab.spec.tomlout import dumps

    raw = import_tum(
        args.config,
        bandwidth=args.bandwidth,
        rtt=args.rtt,
        loss=args.loss,
        bucket=args.bucket,
        latency=args.latency,
        name=args.name,
    )
    try:
        parse_spec(raw)  # what we print must be a valid spec
    except SpecError as err:
        raise err.with_source(args.config) from None
    print(
        dumps(
            raw,
            header=f"Imported by tcplab {__version__} from the TUM framework config {args.config} "
            "(see python/tcplab/spec/import_tum.py for the mapping).",
        ),
        end="",
    )
    return 0


# Every command's --help ends with examples (issue 19): what a researcher types first.
EXAMPLES = {
    "tcplab": """
examples:
  tcplab run experiments/quickstart.toml -o results/quickstart
  tcplab sweep experiments/buffer_sweep.toml -o results/buffer_sweep
  tcplab compare results/a results/b
  tcplab COMMAND --help          (each command's options and examples)
""",
    "run": """
examples:
  tcplab run experiments/quickstart.toml -o results/quickstart
  tcplab run spec.toml -o results/b4 --set bottleneck.buffer=4bdp --seed 2
  tcplab run spec.toml -o results/cubic --set 'flows[0].cc="cubic"' -q --no-report
  sudo tcplab run spec.toml -o results/both --backend sim,kernel   (both, then compared)
""",
    "doctor": """
examples:
  sudo tcplab doctor             (exit 0: a kernel run can start here; 2: what is missing)
""",
    "sweep": """
examples:
  tcplab sweep experiments/buffer_sweep.toml -o results/buffer_sweep
  tcplab sweep spec.toml -o results/sw --workers 2 --set experiment.duration=10s
  RAY_ADDRESS=auto tcplab sweep spec.toml -o results/sw --executor ray
  (the same command again resumes an interrupted sweep)
""",
    "reproduce": """
examples:
  tcplab reproduce --list
  tcplab reproduce cws -o results/catalogue --quick
  tcplab reproduce acw-fig05d tum-fig06 -o results/catalogue
  tcplab reproduce -o results/catalogue --docs docs      (regenerates docs/RESULTS.md)
""",
    "report": """
examples:
  tcplab report results/quickstart                (redraws report.png and report.html)
  tcplab report results/quickstart --pdf          (and writes report.pdf)
  tcplab report results/buffer_sweep              (redraws the summary plots)
  tcplab report results/buffer_sweep/runs/<digest>
""",
    "compare": """
examples:
  tcplab compare results/a results/b              (spec difference, then metrics)
  tcplab compare results/both/sim results/both/kernel -o results/both/cmp
  tcplab compare results/sweep-old results/sweep-new   (sweeps, point by point)
  tcplab compare results/a results/b --json | jq '.metrics[] | select(.metric=="share")'
""",
    "algorithms": """
examples:
  tcplab algorithms
  tcplab algorithms --json
  tcplab algorithms --bpf bpf/examples/cubic.bpf.c
""",
    "validate": """
examples:
  tcplab validate experiments/quickstart.toml     (the resolved spec as TOML)
  tcplab validate spec.toml --set bottleneck.rate=50Mbps --json
""",
    "import-tum": """
examples:
  tcplab import-tum config.txt > spec.toml
  tcplab import-tum config.txt -b 50Mbit -r 10ms -l 200ms -n fig06 > fig06.toml
""",
    "completion": """
examples:
  eval "$(tcplab completion bash)"                (in ~/.bashrc)
  tcplab completion zsh > ~/.zfunc/_tcplab
""",
}


def _with_examples(sub: Any, name: str, **kwargs: Any) -> argparse.ArgumentParser:
    """A subcommand whose --help ends with EXAMPLES[name], laid out as written."""
    return sub.add_parser(
        name,
        description=kwargs.get("help"),
        epilog=EXAMPLES[name],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        **kwargs,
    )


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tcplab",
        description="A reproducible congestion-control lab.",
        epilog=EXAMPLES["tcplab"],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"tcplab {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    r = _with_examples(sub, "run", help="run one experiment and write its results directory")
    r.add_argument("spec", help="experiment spec (TOML)")
    r.add_argument("-o", "--output", required=True, help="results directory (written atomically)")
    r.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="override a spec field, e.g. --set bottleneck.buffer=2bdp --set 'flows[0].cc=\"cubic\"'",
    )
    r.add_argument("--seed", type=int, help="override experiment.seed")
    r.add_argument("--no-report", action="store_true", help="skip report.png and report.html")
    r.add_argument(
        "--pdf",
        action="store_true",
        help="also write report.pdf (the report.png figure as vectors)",
    )
    r.add_argument("-q", "--quiet", action="store_true", help="no progress bar or summary")
    r.add_argument(
        "--backend",
        help="sim (the simulator), kernel (this machine's Linux TCP over the emulated "
        "bottleneck; needs root), or sim,kernel (both: DIR/sim and DIR/kernel, then compared); "
        "default: the spec's experiment.backend",
    )
    r.set_defaults(func=cmd_run)

    d = _with_examples(
        sub, "doctor", help="what the kernel backend needs and whether this machine has it"
    )
    d.set_defaults(func=cmd_doctor)

    s = _with_examples(sub, "sweep", help="run the [sweep] grid of a spec (resumable)")
    s.add_argument("spec")
    s.add_argument("-o", "--output", required=True, help="sweep directory; reuse it to resume")
    s.add_argument("--workers", type=int, default=None, help="parallel runs (default: CPU count)")
    s.add_argument(
        "--executor",
        choices=["local", "ray"],
        default="local",
        help="local process pool (default) or Ray (RAY_ADDRESS selects a cluster)",
    )
    s.add_argument("--set", action="append", default=[], metavar="PATH=VALUE")
    s.add_argument(
        "--reports", action="store_true", help="also draw every run's report.png and report.html"
    )
    s.add_argument(
        "--pdf", action="store_true", help="also draw every run's report.pdf (implies --reports)"
    )
    s.add_argument("-q", "--quiet", action="store_true")
    s.set_defaults(func=cmd_sweep)

    rc = _with_examples(sub, "reproduce", help="run the papers' catalogue and judge each claim")
    rc.add_argument(
        "select",
        nargs="*",
        help="papers (acd, acw, cws, bbrprime, tum) or entry names; default: all",
    )
    rc.add_argument(
        "-o", "--output", help="directory for the runs (cached, resumable) and the report"
    )
    rc.add_argument(
        "--quick", action="store_true", help="the shortened runs (fewer seeds, shorter; for CI)"
    )
    rc.add_argument("--workers", type=int, default=None, help="parallel runs (default: CPU count)")
    rc.add_argument("--executor", choices=["local", "ray"], default="local")
    rc.add_argument("--list", action="store_true", help="list the catalogue's entries and exit")
    rc.add_argument(
        "--catalogue",
        help="catalogue directory (default: ./experiments/papers if present, else the one shipped with tcplab)",
    )
    rc.add_argument(
        "--docs", help="also write the report as DOCS/RESULTS.md, RESULTS.html and DOCS/results/"
    )
    rc.add_argument("-q", "--quiet", action="store_true")
    rc.set_defaults(func=cmd_reproduce)

    rp = _with_examples(sub, "report", help="redraw the report of a stored run or sweep")
    rp.add_argument("dir")
    rp.add_argument(
        "--pdf",
        action="store_true",
        help="also write a run's report.pdf (redrawn anyway when the run has one)",
    )
    rp.set_defaults(func=cmd_report)

    c = _with_examples(
        sub,
        "compare",
        help="stored runs (or sweeps, point by point) side by side: spec difference, metrics, overlaid series",
    )
    c.add_argument(
        "dirs",
        nargs="+",
        metavar="DIR",
        help="run directories, or sweep directories; the first is the reference",
    )
    c.add_argument(
        "-o", "--output", help="also write compare.csv, compare.md and (for runs) compare.png here"
    )
    c.add_argument(
        "--json",
        action="store_true",
        help="print JSON: {spec_diff: [{path, values}], metrics: [records of the table]}",
    )
    c.set_defaults(func=cmd_compare)

    a = _with_examples(sub, "algorithms", help="list algorithms, parameters, defaults and sources")
    a.add_argument("--json", action="store_true")
    a.add_argument(
        "--bpf",
        metavar="FILE",
        help="a BPF program (.bpf.c or .o): its name and parameters, instead of the registry",
    )
    a.set_defaults(func=cmd_algorithms)

    v = _with_examples(sub, "validate", help="check a spec and print it resolved")
    v.add_argument("spec")
    v.add_argument("--set", action="append", default=[], metavar="PATH=VALUE")
    v.add_argument("--json", action="store_true", help="print the engine config instead")
    v.set_defaults(func=cmd_validate)

    t = _with_examples(
        sub,
        "import-tum",
        help="print a spec for a TUM measurement-framework config (host/link lines)",
    )
    t.add_argument("config", help="the framework's config file")
    t.add_argument(
        "-b",
        "--bandwidth",
        default="10Mbit",
        help="run_mininet.py -b: initial bottleneck rate (10Mbit)",
    )
    t.add_argument(
        "-r",
        "--rtt",
        default="0ms",
        help="run_mininet.py -r: initial RTT added to every flow (0ms)",
    )
    t.add_argument("--loss", default="0%", help="run_mininet.py --loss (0%%)")
    t.add_argument("-s", "--bucket", default="1600b", help="run_mininet.py -s: tbf burst (1600b)")
    t.add_argument(
        "-l", "--latency", default="100ms", help="run_mininet.py -l: tbf buffer as latency (100ms)"
    )
    t.add_argument("-n", "--name", help="experiment name (default: the config's file name)")
    t.set_defaults(func=cmd_import_tum)

    c = _with_examples(
        sub,
        "completion",
        help='print a shell completion script (eval "$(tcplab completion bash)")',
    )
    c.add_argument("shell", choices=("bash", "zsh", "tcsh"))
    c.set_defaults(func=cmd_completion)
    return p


def cmd_completion(args: argparse.Namespace) -> int:
    """The shell's completion script for every subcommand and option, generated from this
    parser by shtab (so it cannot drift from the options)."""
    import shtab

    print(shtab.complete(build_parser(), shell=args.shell))
    return 0


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that temporaries are removed on the way out
    (a KeyboardInterrupt, so every layer that lets Ctrl-C through lets it through too)."""


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Terminated()


def _disk_full_message(args: argparse.Namespace, err: OSError) -> str:
    """No space left: where, and what of the command's output was kept."""
    where = f" writing {err.filename}" if getattr(err, "filename", None) else ""
    out = getattr(args, "output", None)
    kept = {
        "cmd_run": f"nothing partial was kept; an earlier run at {out} is unchanged",
        "cmd_sweep": f"the runs that finished are kept in {out}/runs and listed in "
        f"{out}/table.csv (when there was room for it); free space and run the sweep again "
        "to do the rest",
        "cmd_reproduce": f"the runs that finished are kept in {out}/runs; free space and run "
        "it again to do the rest",
    }.get(getattr(args.func, "__name__", ""), "nothing partial was kept")
    return f"tcplab: no space left on the device{where}: {kept}"


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # during argument parsing or a lazy import
        print("tcplab: interrupted", file=sys.stderr)
        return 130


def _main(argv: Sequence[str] | None = None) -> int:
    import signal

    if argv is None and threading_is_main():
        signal.signal(signal.SIGTERM, _on_sigterm)
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except Terminated:
        print("tcplab: terminated", file=sys.stderr)
        return 143
    except BrokenPipeError:
        # The reader went away (`tcplab algorithms | head -1`): stop quietly, and keep
        # Python from complaining again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except SpecError as err:
        print(
            err.render()
            if err.source
            else SpecError(err.problems, getattr(args, "spec", None)).render(),
            file=sys.stderr,
        )
        return EXIT_INPUT
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError) as err:
        print(f"tcplab: {err}", file=sys.stderr)
        return EXIT_INPUT
    except OSError as err:
        from tcplab.errors import disk_full

        if not disk_full(err) or os.environ.get("TCPLAB_DEBUG"):
            raise
        print(_disk_full_message(args, err), file=sys.stderr)
        return EXIT_INTERNAL
    except (EngineError, RuntimeError) as err:
        print(f"tcplab: error: {err}", file=sys.stderr)
        return EXIT_INTERNAL
    except KeyboardInterrupt:
        print("tcplab: interrupted", file=sys.stderr)
        return 130
    except BaseException as err:  # a Rust panic (pyo3 PanicException) or a bug in tcplab
        if isinstance(err, SystemExit):
            raise
        if os.environ.get("TCPLAB_DEBUG"):
            raise
        print(
            f"tcplab: internal error: {type(err).__name__}: {err} (set TCPLAB_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
