"""One ``cmd_*`` per subcommand of ``tcplab`` and their helpers. Each command imports the
stages it needs inside its function, so that ``tcplab --help`` and a Ctrl-C at start-up do
not wait for pandas, pydantic or matplotlib (the CLI's start-up time).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tcplab.errors import SpecError
from tcplab.version import __version__

EXIT_INPUT = 2
EXIT_INTERNAL = 1
EXIT_CHECKS = 1


def _overrides(items: Sequence[str]) -> dict[str, Any]:
    from tcplab.specs.load import parse_value

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
    from tcplab.specs.load import load_spec

    out = Path(args.output)
    from tcplab.storage.files import check_output_dir

    if args.pdf and args.no_report:
        raise SpecError([("--pdf", "report.pdf is part of the report; drop --no-report or --pdf")])
    check_output_dir(out)
    backends = _backends(args.backend)
    spec = load_spec(args.spec, _overrides(args.set))
    if spec.sweep:
        # Said, not silent: a reader of the results would take them for the grid's.
        print(
            "tcplab: note: run ran the spec's base point only; its [sweep] grid runs with "
            f"`tcplab sweep {args.spec} -o DIR`",
            file=sys.stderr,
        )
    if args.seed is not None:
        if not 0 <= args.seed < 2**63:
            raise SpecError([("--seed", f"must be a whole number >= 0, got {args.seed}")])
        spec.experiment.seed = args.seed
    if len(backends) == 1:
        return _run_one(args, spec, out, backends[0])
    # Both: DIR/sim and DIR/kernel, every input problem found before either runs.
    from tcplab.report.compare import OUTPUT_FILES
    from tcplab.storage.ownership import check_may_write

    check_may_write(out / "compare", list(OUTPUT_FILES), "-o")
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
    from tcplab.lowering import resolve
    from tcplab.storage.ownership import check_replaceable

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


def _worth_saying(warning: str, args: argparse.Namespace, spec: Any) -> bool:
    """Whether a run's warning is printed (summary.json keeps every one). The kernel's
    CONFIG_HZ against the spec's tcp.hz (backends/kernel/kconfig.py) matters only where
    the two meet: a spec that pins ``tcp.hz``, or a run on both backends, whose
    simulated half ticks at tcp.hz. A kernel run alone of a spec that leaves tcp.hz at
    its default runs the kernel's own clock, and the warning on every such run was
    noise (issue 45)."""
    if not warning.startswith(HZ_WARNING_PREFIX):
        return True
    both = len(_backends(getattr(args, "backend", None))) > 1
    return both or "hz" in spec.tcp.model_fields_set


# How kconfig.hz_warning's text starts (tests/cli/test_kernel_warnings.py holds them equal).
HZ_WARNING_PREFIX = "this kernel runs CONFIG_HZ="


def _execute_and_write(args: argparse.Namespace, spec: Any, out: Path) -> int:
    from tcplab.api import execute_spec
    from tcplab.backends import backend_of
    from tcplab.runs.result import Storing, store_run

    backend = backend_of(spec)
    bar, update = _progress_bar(
        spec.experiment.duration / 1e9, args.quiet, real_time=backend.real_time
    )
    try:
        result, config, wall = execute_spec(spec, update)
    finally:
        if bar is not None:
            bar.n = bar.total
            bar.close()
    store_run(result, out, config, wall, storing=Storing(report=not args.no_report, pdf=args.pdf))
    for w in result.summary_json.get("warnings", []):
        if _worth_saying(w, args, spec):
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
        from tcplab.backends.kernel import printk

        traces = printk.clean_stale(netns.alive)
        if traces:
            print(f"removed trace instances of dead runs: {' '.join(traces)}")
        from tcplab.backends.kernel.run import clean_stale_work

        work = clean_stale_work()
        if work:
            print(f"removed working directories of dead runs: {' '.join(map(str, work))}")
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
    for s in (result.summary_json or {}).get("probes", []):  # [[probes]]: RTT under load
        ms = {
            k: "n/a" if s.get(k) is None else f"{s[k]:.1f}"
            for k in ("median_ms", "p95_ms", "p99_ms")
        }
        print(
            f"probe (ping) RTT {s['name']}: median {ms['median_ms']} ms, p95 {ms['p95_ms']} ms, "
            f"p99 {ms['p99_ms']} ms; {s['lost']} of {s['count']} probes lost"
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
    from tcplab.storage.directory import is_run_dir

    d = Path(args.dir)
    if (d / "sweep.json").is_file():
        from tcplab.runs.sweep import load_plan
        from tcplab.runs.sweep_table import build_table, write_summary

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
    from tcplab.runs.result import load_run, redraw_report

    with _stored_files(d):
        result = load_run(d)
    names = redraw_report(result, pdf=args.pdf)
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
    from tcplab.specs.algorithms import _num, registry

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
                        "held_against": a.held_against,
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
        print(f"    held against: {a.held_against or 'none yet'}")
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
    from tcplab.backends.sim import check_with_engine
    from tcplab.lowering import resolve
    from tcplab.specs.load import load_spec, read_toml
    from tcplab.storage.directory import spec_toml

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
    from tcplab.specs.import_tum import import_tum
    from tcplab.specs.load import parse_spec
    from tcplab.specs.tomlout import dumps

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
            "(see python/tcplab/specs/import_tum.py for the mapping).",
        ),
        end="",
    )
    return 0


def cmd_examples(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from tcplab.examples import copy_examples, examples

    if not args.names:
        rows = [
            (ex.name, ex.kind, f"bpf:{ex.name}" if ex.kind == "bpf" else ex.path.name, ex.summary)
            for ex in examples()
        ]
        print(tabulate(rows, headers=["name", "kind", "use as", "what"], tablefmt="plain"))
        print("\ncopy some out: tcplab examples NAME... [-o DIR]")
        return 0
    try:
        copied = copy_examples(args.names, Path(args.output))
    except KeyError as exc:
        raise SpecError([("NAME", str(exc.args[0]))]) from None
    except FileExistsError as exc:
        raise SpecError([("-o", str(exc))]) from None
    except OSError as exc:
        raise SpecError([("-o", f"{args.output}: {exc.strerror or exc}")]) from None
    for p in copied:
        print(p)
    return 0


# Every command's --help ends with examples: what a researcher types first.
