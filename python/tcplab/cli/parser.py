"""The ``tcplab`` argument parser: subcommands, options, examples in each help text, and
the shell completion generated from it."""

from __future__ import annotations

import argparse
from typing import Any

from tcplab.cli.commands import (
    cmd_algorithms,
    cmd_compare,
    cmd_doctor,
    cmd_examples,
    cmd_import_tum,
    cmd_report,
    cmd_reproduce,
    cmd_run,
    cmd_sweep,
    cmd_validate,
)
from tcplab.version import __version__

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
  tcplab reproduce tum-fig05a -o results/catalogue     (one entry, ~20 s, a decided verdict)
  tcplab reproduce cws -o results/catalogue --quick    (a smoke test: shortened runs whose
                                                        verdicts are marked quick, never decided)
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
    "examples": """
examples:
  tcplab examples                               (what is shipped, with the names)
  tcplab examples quickstart first_hour         (copy the spec and notebook into .)
  tcplab examples cubic -o mycc                 (a BPF program to edit: bpf:mycc/cubic.bpf.c)
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

    e = _with_examples(
        sub,
        "examples",
        help="list the shipped examples (specs, notebook, BPF programs) or copy some out",
    )
    e.add_argument("names", nargs="*", metavar="NAME", help="examples to copy (none: list them)")
    e.add_argument("-o", "--output", default=".", help="directory to copy into (default: .)")
    e.set_defaults(func=cmd_examples)

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
    parser by shtab (so it cannot drift from the options), with the values of the options
    whose values are not argparse choices: ``run --backend`` and ``reproduce``'s papers and
    entries (the catalogue shipped with this tcplab, listed when the script is made)."""
    import shtab

    from tcplab.backends import BACKENDS
    from tcplab.reproduce.catalogue import PAPERS, default_root

    parser = build_parser()
    backends = [*BACKENDS, ",".join(BACKENDS)]
    entries = sorted(p.stem for p in default_root().glob("*/*.toml"))
    _complete_with(parser, "run", "--backend", backends)
    _complete_with(parser, "reproduce", "select", [*PAPERS, *entries])
    print(shtab.complete(parser, shell=args.shell))
    return 0


def _complete_with(
    parser: argparse.ArgumentParser, command: str, arg: str, words: list[str]
) -> None:
    """Give ``command``'s argument ``arg`` (an option string or a positional's dest) the
    fixed ``words`` as its completions, through shtab's ``cmd`` (a shell function that
    prints them), without making them argparse choices (``kernel,sim`` stays valid)."""
    import shlex

    import shtab

    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    action = next(a for a in sub.choices[command]._actions if arg in (*a.option_strings, a.dest))
    action.complete = shtab.cmd("echo " + " ".join(shlex.quote(w) for w in words))  # type: ignore[attr-defined]
