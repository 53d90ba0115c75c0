"""Property-based fuzzing of the command line: generated specs, ``--set``
overrides and file encodings must end in exit 0 or 2, never in a traceback or an
"internal error", leave nothing behind when refused, and stay within bounded memory.

The CI profile runs a few hundred examples; a longer one runs by hand with
``TCPLAB_FUZZ=long python -m pytest tests/cli/test_fuzz.py`` (5000 examples per test).
"""

import os
import resource

import pytest
import tomllib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tcplab.cli.app import main
from tcplab.specs.tomlout import dumps

pytestmark = pytest.mark.engine

settings.register_profile(
    "ci",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.register_profile(
    "long",
    max_examples=5000,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile("long" if os.environ.get("TCPLAB_FUZZ") == "long" else "ci")

BASE = {
    "experiment": {"name": "fuzz", "duration": "0.5s", "sample_interval": "100ms", "seed": 1},
    "tcp": {"mss": 1448},
    "bottleneck": {"rate": "10Mbps", "delay": "5ms", "buffer": "1bdp", "loss": 0.0},
    "flows": [
        {"cc": "cubic", "rtt": "20ms"},
        {"cc": "bbr", "rtt": "40ms", "count": 2, "stagger": "0.1s"},
    ],
    "events": [{"at": "0.25s", "rate": "5Mbps"}],
    "probes": [{"name": "ping", "interval": "50ms"}],
}

PATHS = [
    "experiment.name",
    "experiment.duration",
    "experiment.seed",
    "experiment.sample_interval",
    "experiment.extra",
    "tcp.mss",
    "tcp.header",
    "tcp.delayed_ack",
    "tcp.initial_cwnd",
    "tcp.rack",
    "tcp.sack_compression",
    "tcp.receive_buffer",
    "tcp.rcv_truesize",
    "tcp.kernel",
    "tcp.hz",
    "bottleneck.rate",
    "bottleneck.delay",
    "bottleneck.buffer",
    "bottleneck.loss",
    "bottleneck.bdp_rtt",
    "bottleneck.reorder",
    "bottleneck.policer",
    "bottleneck.policer.burst",
    "flows[0].cc",
    "flows[0].rtt",
    "flows[0].count",
    "flows[0].start",
    "flows[0].stagger",
    "flows[0].stop",
    "flows[0].size",
    "flows[0].params",
    "flows[0].params.beta",
    "flows[1].params.cwnd_gain",
    "flows[1].access",
    "flows[1].receiver_access",
    "flows[2].cc",
    "flows[0].bpf",
    "flows[0].bpf.include",
    "events[0].at",
    "events[0].rate",
    "events[0].delay",
    "events[0].loss",
    "events[1].at",
    "probes[0].name",
    "probes[0].interval",
    "probes[0].size",
    "probes[0].rtt",
    "probes[0].start",
    "probes[0].stop",
    "probes[0].extra",
    "probes[1].name",
    "probes",
    "sweep",
    "flows",
    "events",
    "nope",
    "flows[0].params.x[0]",
    "flows[1].params.cwnd_gain.x",
    "experiment..name",
    "flows[-1].cc",
    "",
]

NASTY_STRINGS = [
    "1e999999s",
    "1e999999Gbps",
    "1e999999bdp",
    "9" * 5000 + "s",
    "-5ms",
    "0s",
    "0bps",
    "10",
    "10 Mbps",
    "10Mbps ",
    "1.5pkt",
    "1e-9s",
    "nan s",
    "inf",
    "unlimited",
    "0.5bdp",
    "18446744073709551616B",
    "1e20pkt",
    "1e19bps",
    "10Tbps",
    "7200s",
    "a\u007fb",
    "\u0000",
    "caf\u00e9",
    "\U0001f600",
    "bbbr",
    "reno",
    "bbr-acd",
    "1us",
    "0.3s",
    "1bdp",
    # issue 45: sizes tc and SI read differently, terabits, netem's percentages
    "150KB",
    "1.5mb",
    "2GB",
    "64KiB",
    "1Tbps",
    "5TBps",
    "1%",
    "0.5 %",
    "100%",
    "1e999999%",
    "",
]
VALUES = st.one_of(
    st.sampled_from(NASTY_STRINGS),
    st.text(max_size=20),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.lists(st.integers(-3, 3), max_size=3),
    st.dictionaries(
        st.sampled_from(["rate", "delay", "x"]), st.sampled_from(["1Mbps", "1ms", 3]), max_size=2
    ),
)


def _set(doc: dict, path: str, value) -> None:
    """Set a dotted path in a plain dict, creating what is missing (a fuzz helper; the
    CLI's own --set is exercised separately)."""
    import re

    parts = [p for p in re.split(r"\.|\[|\]", path) if p != ""]
    node = doc
    for i, part in enumerate(parts):
        key = int(part) if part.lstrip("-").isdigit() else part
        last = i == len(parts) - 1
        if isinstance(node, list):
            if not isinstance(key, int) or not -len(node) <= key < len(node):
                return
            if last:
                node[key] = value
            else:
                node = node[key]
        elif isinstance(node, dict):
            if last:
                node[str(key)] = value
            else:
                node = node.setdefault(str(key), {})
        else:
            return


def _cli(args: list) -> int:
    """The command's exit status, in process (argparse's usage errors exit 2 by SystemExit)."""
    try:
        return main([str(a) for a in args])
    except SystemExit as exc:
        return int(exc.code or 0)


def _check(rc: int, err: str, out_dir) -> None:
    assert rc in (0, 2), err
    assert "internal error" not in err and "Traceback" not in err, err
    if rc == 2 and out_dir is not None:
        assert not out_dir.exists(), "a refused run left its output directory"
        assert not [p for p in out_dir.parent.iterdir() if p.name.startswith(".tmp-")]


def _small_enough_to_run(text: str) -> bool:
    """Only run specs that finish in well under a second (the validation is the target)."""
    try:
        doc = tomllib.loads(text)
        from tcplab.specs.units import parse_rate, parse_time

        return (
            parse_time(doc["experiment"]["duration"]) <= 10**9
            and parse_rate(doc["bottleneck"]["rate"]) <= 50e6
            and sum(int(f.get("count", 1)) for f in doc["flows"]) <= 4
        )
    except Exception:  # noqa: BLE001 - anything odd: do not run, validate only
        return False


@given(
    edits=st.lists(st.tuples(st.sampled_from(PATHS), VALUES), min_size=1, max_size=4),
    encoding=st.sampled_from(["utf-8", "utf-8", "utf-8", "latin-1", "utf-16", "corrupt"]),
    salt=st.integers(0, 2**16),
)
def test_cli_answers_any_spec_with_0_or_2(tmp_path_factory, capsys, edits, encoding, salt):
    import copy

    doc = copy.deepcopy(BASE)
    for path, value in edits:
        _set(doc, path, value)
    try:
        text = dumps(doc)
    except TypeError:
        return
    if encoding == "corrupt":
        data = bytearray(text.encode())
        data[salt % len(data)] = 0xFF
        data = bytes(data)
    else:
        try:
            data = text.encode(encoding)
        except UnicodeEncodeError:
            data = text.encode("utf-8", "surrogatepass")
    d = tmp_path_factory.mktemp("fuzz")
    spec = d / "spec.toml"
    spec.write_bytes(data)
    rc = _cli(["validate", spec])
    _check(rc, capsys.readouterr().err, None)
    if rc == 0 and encoding == "utf-8" and _small_enough_to_run(text):
        out = d / "out"
        rc = _cli(["run", spec, "-o", out, "-q", "--no-report"])
        _check(rc, capsys.readouterr().err, out)


@given(
    path=st.one_of(st.sampled_from(PATHS), st.text(max_size=25)),
    value=st.one_of(
        st.sampled_from(
            NASTY_STRINGS + ["[[[[", "{a=1}", "true", "2.0", '"x"', "[1,2]", "[1]", "[]", "{}"]
        ),
        st.text(max_size=25),
    ),
)
def test_set_overrides_answer_0_or_2(tmp_path_factory, capsys, path, value):
    d = tmp_path_factory.mktemp("set")
    spec = d / "spec.toml"
    spec.write_text(dumps(BASE))
    rc = _cli(["validate", spec, "--set", f"{path}={value}"])
    _check(rc, capsys.readouterr().err, None)


@given(
    tables=st.lists(st.sampled_from(["flows", "events"]), max_size=2, unique=True),
    first_only=st.booleans(),
)
def test_a_table_for_an_array_of_tables_is_said_in_tomls_words(
    tmp_path_factory, capsys, tables, first_only
):
    # [flows] written for [[flows]] (issue 45): once it is valid TOML (a single such
    # table), the answer names the field and the double brackets; twice it is a TOML error.
    text = dumps(BASE)
    for name in tables:
        text = text.replace(f"[[{name}]]", f"[{name}]", 1 if first_only else -1)
    spec = tmp_path_factory.mktemp("tables") / "spec.toml"
    spec.write_text(text)
    rc = _cli(["validate", spec])
    err = capsys.readouterr().err
    _check(rc, err, None)
    if tables:
        assert rc == 2, err
        if "not valid TOML" not in err:
            assert any(f"{n}: a list of tables, written [[{n}]]" in err for n in tables), err


# ---------------------------------------------------------------- newer features
# Specs built from the newer features: workloads, sources with on/off, flows
# with on/off, [[links]] and paths, traced bottlenecks, AQMs, analysis and named windows,
# rate events at one instant, checks. Every spec validate accepts is run, and its summary
# must hold the invariants below. Small runs (<= 1 s, <= 20 Mbit/s): the CI profile keeps
# this test to about a minute.

TRACES = os.path.join(os.path.dirname(__file__), "..", "..", "traces")


@st.composite
def feature_specs(draw):
    doc = {
        "experiment": {"name": "features", "duration": "1s", "sample_interval": "50ms"},
        "bottleneck": {
            "rate": draw(st.sampled_from(["5Mbps", "10Mbps", "20Mbps"])),
            "delay": "5ms",
        },
        "flows": [],
    }
    b = doc["bottleneck"]
    b["buffer"] = draw(st.sampled_from(["0.5bdp", "1bdp", "3bdp", "20pkt"]))
    traced = draw(st.booleans()) and draw(st.booleans())
    if traced:
        name = draw(
            st.sampled_from(["constant-12mbps", "square-24-6mbps-5s", "synthetic-lte.down"])
        )
        b["rate"] = {"trace": os.path.abspath(os.path.join(TRACES, name))}
    aqm = draw(st.sampled_from([None, "codel", "fq_codel", "red", "pie", "step"]))
    if aqm == "step":
        b["aqm"] = {"kind": "step", "k": 10}
    elif aqm == "red":
        b["aqm"] = {"kind": "red", "min": "0.25bdp"}
    elif aqm:
        b["aqm"] = {"kind": aqm}
    links = draw(st.booleans())
    if links:
        doc["links"] = [{"name": "core", "rate": draw(st.sampled_from(["8Mbps", "50Mbps"]))}]
    paths = [None, ["bottleneck", "core"], ["core"]] if links else [None]
    for _ in range(draw(st.integers(1, 3))):
        f = {
            "cc": draw(st.sampled_from(["reno", "cubic", "bbr", "bbr3", "dctcp", "vegas"])),
            "rtt": draw(st.sampled_from(["20ms", "40ms", "80ms"])),
            "count": draw(st.integers(1, 2)),
            "start": draw(st.sampled_from(["0s", "0.2s", "0.6s"])),
        }
        if draw(st.booleans()):
            f["stop"] = draw(st.sampled_from(["0.5s", "0.9s"]))
        if (path := draw(st.sampled_from(paths))) is not None:
            f["path"] = path
        if draw(st.integers(0, 3)) == 0:
            f["onoff"] = {
                "on": "0.1s",
                "off": "0.05s",
                "dist": draw(st.sampled_from(["fixed", "exponential"])),
            }
        if draw(st.integers(0, 3)) == 0:
            f["size"] = draw(st.sampled_from(["20000B", "200000B"]))
        doc["flows"].append(f)
    if draw(st.integers(0, 2)) == 0:
        doc["workloads"] = [
            {
                "cc": "cubic",
                "rtt": "30ms",
                "rate": draw(st.sampled_from([5, 20])),
                "size": draw(
                    st.sampled_from(
                        [
                            {"dist": "fixed", "value": "10000B"},
                            {"dist": "exponential", "mean": "50000B"},
                        ]
                    )
                ),
            }
        ]
    if not links and draw(st.integers(0, 2)) == 0:  # sources run on the dumbbell only
        src = {"rate": draw(st.sampled_from(["1Mbps", "4Mbps"]))}
        if draw(st.booleans()):
            src["onoff"] = {"on": "0.2s", "off": "0.1s"}
        doc["sources"] = [src]
    if not links and draw(st.booleans()):  # probes run on the dumbbell only
        doc["probes"] = [
            {
                "interval": draw(st.sampled_from(["10ms", "50ms", "200ms"])),
                "size": draw(st.sampled_from(["28B", "84B", "1500B"])),
                "start": draw(st.sampled_from(["0s", "0.3s"])),
            }
            for _ in range(draw(st.integers(1, 2)))
        ]
    if not traced and draw(st.booleans()):
        at = draw(st.sampled_from(["0.3s", "0.5s"]))
        rates = draw(
            st.lists(st.sampled_from(["2Mbps", "10Mbps", "30Mbps"]), min_size=1, max_size=3)
        )
        doc["events"] = [{"at": at, "rate": r} for r in rates]  # equal instants: file order
    # Window edges on the 50 ms sample grid and off it (0.225 s, 0.99 s): those off it are
    # refused ([6.99 s, 7.1 s] reported utilisation 1.753).
    edges = st.sampled_from(["0s", "0.2s", "0.225s", "0.4s", "0.5s", "0.99s", "1s"])
    if draw(st.booleans()):
        lo, hi = sorted([draw(edges), draw(edges)], key=_seconds)
        doc["experiment"]["analysis"] = [lo, hi] if lo != hi else [lo]
    if draw(st.booleans()):
        doc["experiment"]["windows"] = {"early": ["0s", draw(edges)], "late": ["0.5s", "1s"]}
    if draw(st.booleans()):
        doc["checks"] = [{"metric": "utilization", "op": ">=", "value": 0.0}]
    return doc


SIGNED = {"share_minus_fair_share"}


def _seconds(t: str) -> float:
    return float(t.removesuffix("s"))


def _off_grid(doc) -> bool:
    """Whether a window edge of the drawn spec is off its 50 ms sample grid."""
    ex = doc["experiment"]
    edges = list(ex.get("analysis", [])) + [e for w in ex.get("windows", {}).values() for e in w]
    return any(round(_seconds(e) * 1000) % 50 for e in edges)


def _numbers(d, prefix=""):
    """(key path, value) of every number in a nested summary document."""
    if isinstance(d, dict):
        for k, v in d.items():
            yield from _numbers(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(d, list):
        for i, v in enumerate(d):
            yield from _numbers(v, f"{prefix}[{i}]")
    elif isinstance(d, (int, float)) and not isinstance(d, bool):
        yield prefix, float(d)


def _check_invariants(res) -> None:
    import math

    doc = res.summary_json
    blocks = [("", doc["aggregate"])]
    blocks += [("window", doc["window"]["aggregate"])] if "window" in doc else []
    blocks += [(f"windows.{n}", w["aggregate"]) for n, w in doc.get("windows", {}).items()]
    for name, agg in blocks:
        u = agg.get("utilization")
        if u is not None and not math.isnan(u):
            assert 0.0 <= u <= 1.0 + 1e-9, f"{name} utilization {u}"
    for link, v in doc.get("links", {}).items():
        assert 0.0 <= v["utilization"] <= 1.0 + 1e-9, f"links.{link} {v}"
    shares = [f["share"] for f in doc["flows"] if f.get("share") is not None]
    if shares and not any(math.isnan(x) for x in shares) and sum(shares) > 0:
        assert abs(sum(shares) - 1.0) < 1e-6, shares
    for path, x in _numbers({k: v for k, v in doc.items() if k != "engine"}):
        if path.split(".")[-1].split("[")[0] in SIGNED or "minus" in path:
            continue
        assert math.isnan(x) or x >= 0.0, f"{path} = {x}"
    for f in doc["flows"]:
        for key in ("goodput_bps", "throughput_bps"):
            assert f[key] is not None and not math.isnan(f[key]), f"flow {f['flow']} {key}"
    for p in doc.get("probes", []):  # count = echoed + lost + in flight (the engine's check)
        assert p["count"] == p["echoed"] + p["lost"] + p["in_flight_at_end"], p
        if p["echoed"]:
            assert p["min_ms"] <= p["median_ms"] <= p["p95_ms"] <= p["p99_ms"] <= p["max_ms"], p
    s = res.series
    if "rtt_ms" in s:
        for fid, f in res.summary.iterrows():
            rtts = s.loc[s["flow"] == fid, "rtt_ms"].dropna()
            if len(rtts):
                assert rtts.min() >= float(f["rtt_ms"]) - 1e-6, f"flow {fid} RTT below base"


# Derandomized in the default profile so that a CI run is reproducible; the long profile
# (TCPLAB_FUZZ=long) explores. It found a window utilisation of 1.04 with a rate drop at
# the window's start (the bits reach the receivers a propagation delay after they left
# the bottleneck at the old rate; analysis/summary.py now shifts the capacity back).
@settings(
    max_examples=int(os.environ.get("TCPLAB_FUZZ_FEATURES", "25")),
    derandomize=os.environ.get("TCPLAB_FUZZ") != "long",
)
@given(doc=feature_specs())
def test_accepted_feature_specs_have_sane_metrics(doc):
    import tcplab
    from tcplab.errors import SpecError

    try:
        res = tcplab.run(doc)
    except SpecError as e:
        if _off_grid(doc):
            assert "not on the sample grid" in str(e), e
        return  # refused with a clear error: the CLI fuzz above checks how
    assert not _off_grid(doc), "a window edge off the sample grid was accepted"
    _check_invariants(res)


def test_memory_stayed_bounded():
    """After the fuzz runs in this process: the resident peak stays far below what the
    refused cases (1 us sampling, 10 Tbit/s, 1e9 repeats) would have taken."""
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert peak_kb < 3_000_000, f"peak RSS {peak_kb / 1e6:.1f} GB"
