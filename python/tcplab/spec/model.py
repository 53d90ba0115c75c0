"""The experiment spec: pydantic models of the TOML file, loading, ``--set`` overrides and
cross-field checks.

A spec is data, not code. Quantities carry units and are parsed once (see
:mod:`tcplab.units`) into integers: rates in bit/s, times in ns. Sizes stay symbolic
(packets, bytes or BDP multiples) until :mod:`tcplab.backends.sim` resolves them against
the bottleneck. Dumping a model (``model_dump(mode="json")``) writes the canonical unit
strings back, so a resolved spec is itself a valid spec.
"""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from tcplab.bpf import absolute_paths as absolute_bpf_paths
from tcplab.errors import SpecError
from tcplab.spec import contract
from tcplab.spec.aqm import KINDS as AQM_KINDS
from tcplab.spec.aqm import Aqm
from tcplab.spec.aqm import model_of as aqm_model_of
from tcplab.spec.checks import Check
from tcplab.spec.limits import check_rates
from tcplab.spec.netem import NetemFields
from tcplab.spec.paths import check_path, expand_path, format_path, parse_path, set_path
from tcplab.spec.traces import absolute_trace_paths, format_link_rate, parse_link_rate
from tcplab.spec.units import (
    Size,
    format_rate,
    format_time,
    parse_rate,
    parse_size,
    parse_time,
    real_number,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Rate = Annotated[int, BeforeValidator(parse_rate), PlainSerializer(format_rate, return_type=str)]
Time = Annotated[int, BeforeValidator(parse_time), PlainSerializer(format_time, return_type=str)]
SizeField = Annotated[Size, BeforeValidator(parse_size), PlainSerializer(str, return_type=str)]
# A link's rate: a Rate, or { trace = "FILE" } (a Mahimahi trace; tcplab.traces.TraceRate,
# an int equal to the trace's mean rate).
LinkRate = Annotated[Any, BeforeValidator(parse_link_rate), PlainSerializer(format_link_rate)]

Probability = Annotated[float, BeforeValidator(real_number), Field(ge=0.0, lt=1.0)]
MAX_LINK_DELAY_NS = 3_600 * 10**9
"""The engine's longest one-way link delay (crates/sim/src/config.rs, check_link)."""
# A string is a choice parameter's label (bbr's kernel = "4.9"); the engine checks it.
ParamValue = StrictBool | StrictInt | StrictFloat | StrictStr


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)


class Experiment(_Model):
    """``[experiment]``: name, duration, seed and series sampling interval."""

    name: StrictStr = "experiment"
    description: StrictStr = ""
    duration: Time
    seed: StrictInt = Field(1, ge=0, lt=2**63)
    sample_interval: Time = 100_000_000
    # Optional analysis window [from, to] (to defaults to the end): summary.json gains a
    # "window" block with rates, shares, Jain and retransmissions over it only.
    analysis: list[Time] | None = Field(None, min_length=1, max_length=2)
    # Named windows {name = [from, to]}: summary.json gains a "windows" block with the same
    # metrics over each (TUM Fig. 4 reads the queue, the rate and the utilisation over
    # several phases of one run; BBR' Figs. 5-6 compare before and after a rate change).
    windows: dict[str, list[Time]] = Field(default_factory=dict)
    # Which TCP runs the spec: "sim" (the simulator; also when left out) or "kernel" (this
    # machine's Linux TCP in network namespaces over the emulated bottleneck, needs root;
    # see tcplab.backends.kernel). `tcplab run --backend` overrides it.
    backend: Literal["sim", "kernel"] | None = None
    # Links written as DIR/<link>.pcap (tcplab.pcap): "bottleneck", "bottleneck_reverse",
    # "flow<k>.sender_access", ... (k counts flows over all groups).
    pcap: list[StrictStr] | None = None

    def analysis_s(self, duration_s: float) -> tuple[float, float]:
        """The analysis window in seconds (``to`` defaults to the run's end)."""
        a = self.analysis or [0]
        return a[0] / 1e9, (a[1] / 1e9 if len(a) > 1 else duration_s)

    def windows_s(self) -> dict[str, tuple[float, float]]:
        """The named windows in seconds."""
        return {k: (v[0] / 1e9, v[1] / 1e9) for k, v in self.windows.items()}


def _rto_min_range(ns: int) -> int:
    if not 1_000_000 <= ns <= 60_000_000_000:
        raise ValueError(f"must be between 1ms and 60s, got {format_time(ns)}")
    return ns


def _tcp_default(field: str):
    return contract.default("TcpConfig", field)


# The CONFIG_HZ values the engine simulates (crates/cc ops.rs ALLOWED_HZ, the schema's enum).
TCP_HZ: tuple[int, ...] = tuple(contract.field("TcpConfig", "hz")["enum"])


def _hz_allowed(hz: int) -> int:
    if hz not in TCP_HZ:
        raise ValueError(f"must be one of {', '.join(map(str, TCP_HZ))} (CONFIG_HZ), got {hz}")
    return hz


def kernel_releases() -> dict[str, int]:
    """The Linux releases whose tcp_bbr.c the `bbr` family can follow, label -> the
    `kernel` parameter's value (major*100+minor): the choices of that parameter in the
    engine's registry (crates/cc bbr/kernel.rs ``KernelRelease::CHOICES``, the one list;
    docs/BBR_KERNELS.md)."""
    from tcplab.spec.algorithms import registry

    kernel = registry()["bbr"].param("kernel")
    assert kernel is not None and kernel.choices, "the engine's bbr has a kernel choice"
    return {label: int(value) for label, value in kernel.choices}


# The release the engine runs unless told (KernelRelease's default).
DEFAULT_KERNEL = "6.18"
# SACK compression arrived in Linux 4.18 ("tcp: add SACK compression", 5d9f4262b7ea).
_SACK_COMPRESSION_SINCE = 418


class Tcp(_Model):
    """``[tcp]``: settings shared by every flow (defaults: Linux on 1500-byte Ethernet)."""

    # Defaults are the engine's (crates/sim/src/config.rs TcpConfig, via spec.contract).
    mss: StrictInt = Field(_tcp_default("mss_bytes"), ge=64, le=65_495)
    header: StrictInt = Field(_tcp_default("header_bytes"), ge=0, le=1_000)
    delayed_ack: StrictBool = _tcp_default("delayed_ack")
    initial_cwnd: StrictInt = Field(_tcp_default("initial_cwnd"), ge=1, le=10_000)
    rack: StrictBool = _tcp_default("rack")
    sack_compression: StrictBool = _tcp_default("sack_compression")
    # Linux TCP_RTO_MIN (include/net/tcp.h), the per-route `rto_min`: RTO >= srtt + rto_min.
    # ns-3's TcpSocketBase::MinRto default is 1 s (a floor on the RTO itself).
    rto_min: Annotated[Time, AfterValidator(_rto_min_range)] = _tcp_default("rto_min_ns")
    tlp: StrictBool = _tcp_default("tlp")  # tail loss probes (Linux tcp_early_retrans = 3)
    # F-RTO and the undo of a spurious RTO (RFC 5682 SACK version, Linux tcp_frto = 2, the
    # default); false is tcp_frto = 0 (crates/sim/src/tcp/rto.rs).
    frto: StrictBool = _tcp_default("frto")
    # Negotiate ECN on every flow (RFC 3168). Off as in Linux (tcp_ecn = 2 does not request
    # it on active opens); dctcp turns it on for its own flows (TCP_CONG_NEEDS_ECN).
    ecn: StrictBool = _tcp_default("ecn")
    # The receiver's buffer (crates/sim/src/tcp/rcv_space.rs): "linux" models Linux 6.18's
    # receive-buffer autotuning, whose window growth ACKs segments at once (what the
    # kernel does); "unlimited" is a buffer that never grows nor limits (the simulator
    # before issue 9: delayed ACKs throughout slow start).
    receive_buffer: Literal["linux", "unlimited"] = "linux"
    # Receive memory per full segment (skb->truesize); absent: the kernel backend's TUN
    # path, 2304 bytes for a 1500-byte packet. scaling_ratio = 256 x mss / rcv_truesize.
    rcv_truesize: StrictInt | None = None
    # Connect first, as Linux does (crates/sim/src/tcp/sender.rs): data starts one
    # header-only round trip after the flow's start, and that round trip (the SYN-ACK's)
    # is the first RTT sample (srtt, RTO, min_rtt) before the algorithm's init. false:
    # data at the start with no RTT known (the simulator before 0.5.0).
    handshake: StrictBool = _tcp_default("handshake")
    # The simulated kernel's CONFIG_HZ: the tick of every jiffies clock (CUBIC's epoch and
    # HZ/32 gate, BBR's min_rtt and PROBE_RTT stamps, RTO/TLP/RACK timer rounding). 1000,
    # what tcplab always ran at, keeps results comparable; set 250 to match such a kernel.
    hz: Annotated[StrictInt, AfterValidator(_hz_allowed)] = _tcp_default("hz")
    # The Linux release the hosts run: BBR-family flows follow that release's tcp_bbr.c
    # (their `kernel` parameter, unless a flow sets its own), and the stack defaults that
    # changed since (sack_compression, off before 4.18) follow it unless given.
    # The labels are the engine's (kernel_releases).
    kernel: StrictStr = DEFAULT_KERNEL

    @field_validator("kernel")
    @classmethod
    def _profiled_release(cls, v: str) -> str:
        if v == DEFAULT_KERNEL:  # the engine's default release (no registry lookup)
            return v
        known = kernel_releases()
        if v not in known:
            allowed = ", ".join(f"'{k}'" for k in known)
            raise ValueError(f"Input should be one of {allowed} (profiled releases), got '{v}'")
        return v

    @model_validator(mode="before")
    @classmethod
    def _kernel_stack_defaults(cls, data: Any) -> Any:
        kernel = data.get("kernel", DEFAULT_KERNEL) if isinstance(data, dict) else None
        if isinstance(data, dict) and "sack_compression" not in data and kernel != DEFAULT_KERNEL:
            code = kernel_releases().get(kernel)
            if code is not None and code < _SACK_COMPRESSION_SINCE:
                data = {**data, "sack_compression": False}
        return data

    @field_validator("rcv_truesize")
    @classmethod
    def _truesize_fits_mss(cls, v: int | None, info: ValidationInfo) -> int | None:
        mss = info.data.get("mss", 1448)
        if v is not None and not mss < v <= 256 * mss:
            raise ValueError(f"must be > mss ({mss}) and <= 256 x mss bytes, got {v}")
        return v


class Policer(_Model):
    """A token-bucket policer at a link's entrance (crates/sim/src/net/policer.rs): packets
    finding fewer than their size in tokens are dropped, never queued."""

    rate: Rate
    burst: SizeField  # bytes or packets (of mss + header wire bytes)


class _LinkFields(_Model):
    # The link's own fields, before NetemFields' in field order (error messages list
    # the allowed fields in this order).

    rate: LinkRate | None = None
    delay: Time | None = None
    buffer: SizeField = Size(0, "unlimited")  # type: ignore[arg-type]
    loss: Probability = 0.0
    policer: Policer | None = None


class Link(NetemFields, _LinkFields):
    """An explicit access link (``access`` / ``receiver_access`` of a flow group), or the
    bottleneck's ACK direction (``bottleneck.reverse``, whose delay is the bottleneck's)."""


class _BottleneckFields(_Model):
    # The link's own fields, before NetemFields' in field order (error messages list
    # the allowed fields in this order).

    rate: LinkRate
    delay: Time = 0
    buffer: SizeField = Size(1, "bdp")  # type: ignore[arg-type]
    loss: Probability = 0.0
    bdp_rtt: Time | None = None
    # Queue discipline (drop-tail if absent): see tcplab.aqm.
    aqm: Aqm | None = None
    policer: Policer | None = None
    # The ACK direction (router B -> A). Default: the same rate and delay, lossless,
    # unlimited (never a bottleneck).
    reverse: Link | None = None


class Bottleneck(NetemFields, _BottleneckFields):
    """``[bottleneck]``: the shared link, data direction."""


class _NamedLinkFields(_Model):
    # The link's own fields, before NetemFields' in field order (error messages list
    # the allowed fields in this order).

    name: StrictStr
    rate: LinkRate
    delay: Time = 0
    buffer: SizeField = Size(1, "bdp")  # type: ignore[arg-type]
    loss: Probability = 0.0
    policer: Policer | None = None
    reverse: Link | None = None  # rate, buffer, loss, policer (its delay is the link's)


class NamedLink(NetemFields, _NamedLinkFields):
    """``[[links]]``: a link beyond the bottleneck (crates/sim/src/net/topology.rs), for
    flows' ``path``; its directions are ``<name>`` and ``<name>_reverse``."""


class OnOff(_Model):
    """``onoff`` of a flow group or a source: alternating on and off periods, starting on
    (tcplab.sources; a TCP flow's application stops writing while off)."""

    on: Time
    off: Time
    dist: Literal["fixed", "exponential"] = "fixed"  # exponential: on and off are the means


class Flow(_Model):
    """``[[flows]]``: a group of ``count`` identical flows."""

    cc: str
    rtt: Time | None = None
    count: StrictInt = Field(1, ge=1, le=10_000)
    start: Time = 0
    stagger: Time = 0
    stop: Time | None = None
    size: SizeField | None = None
    params: dict[str, ParamValue] = Field(default_factory=dict)
    access: Link | None = None
    receiver_access: Link | None = None
    ecn: StrictBool | None = None  # ECN for this group, overriding [tcp] ecn
    # The link directions the data crosses, between the access links: "bottleneck",
    # "bottleneck_reverse", a [[links]] name or "<name>_reverse". Default ["bottleneck"].
    path: list[StrictStr] | None = Field(None, min_length=1)
    onoff: OnOff | None = None  # the application writes only in on periods


class SizeDist(_Model):
    """A workload's transfer-size distribution (tcplab.workload)."""

    dist: Literal["fixed", "exponential", "pareto", "empirical"]
    value: SizeField | None = None  # fixed
    mean: SizeField | None = None  # exponential, pareto
    shape: Annotated[float, BeforeValidator(real_number), Field(gt=1.0, le=100.0)] | None = (
        None  # pareto
    )
    cdf: StrictStr | None = None  # empirical: a file of "<bytes> <cumulative probability>" lines

    @property
    def value_bytes(self) -> int:
        return int(self.value.value)  # type: ignore[union-attr]

    @property
    def mean_bytes(self) -> int:
        return int(self.mean.value)  # type: ignore[union-attr]


class Workload(_Model):
    """``[[workloads]]``: finite flows arriving as a Poisson process (tcplab.workload),
    expanded into ``[[flows]]`` when the spec is resolved."""

    cc: str
    rtt: Time
    arrivals: Literal["poisson"] = "poisson"
    rate: Annotated[float, BeforeValidator(real_number), Field(gt=0.0, le=1000000.0)] | None = (
        None  # flows per second
    )
    load: Annotated[float, BeforeValidator(real_number), Field(gt=0.0, le=10.0)] | None = (
        None  # x bottleneck rate
    )
    size: SizeDist
    start: Time = 0
    stop: Time | None = None  # end of the arrivals (default: the end of the run)
    params: dict[str, ParamValue] = Field(default_factory=dict)
    path: list[StrictStr] | None = Field(None, min_length=1)


class Source(_Model):
    """``[[sources]]``: ``count`` constant-rate UDP-like sources (tcplab.sources)."""

    rate: Rate  # while on, in wire bits per second
    packet: SizeField = Size(1500, "bytes")  # type: ignore[arg-type]  # wire bytes per packet
    rtt: Time | None = None  # the path's base RTT as a flow's (default 2 x bottleneck.delay)
    count: StrictInt = Field(1, ge=1, le=1_000)
    start: Time = 0
    stop: Time | None = None
    onoff: OnOff | None = None


class Event(_Model):
    """``[[events]]``: a change of the bottleneck at ``at``."""

    at: Time
    rate: Rate | None = None
    delay: Time | None = None
    loss: Probability | None = None


class Spec(_Model):
    """A whole experiment. ``sweep`` and ``catalogue`` are kept raw here; :mod:`tcplab.sweep`
    and :mod:`tcplab.reproduce` read them."""

    experiment: Experiment
    tcp: Tcp = Field(default_factory=Tcp)
    bottleneck: Bottleneck
    links: list[NamedLink] = Field(default_factory=list)
    flows: list[Flow] = Field(default_factory=list)
    workloads: list[Workload] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    events: list[Event] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)
    sweep: dict[str, Any] | None = None
    catalogue: dict[str, Any] | None = None

    def __repr__(self) -> str:
        """One line for notebooks (pydantic's repr lists every field, ~1000 characters)."""
        from tcplab.spec.units import format_time

        # the fields' own serialisers: a rate may be a trace, a buffer "unlimited"
        b = self.bottleneck.model_dump(mode="json", include={"rate", "delay", "buffer"})
        e = self.experiment
        rate = b["rate"] if isinstance(b["rate"], str) else "trace"
        flows = ", ".join(f"{f.count} x {f.cc}" for f in self.flows) or "none"
        return (
            f"<Spec {e.name!r}: bottleneck {rate} {b['delay']} {b['buffer']}, "
            f"flows {flows}, {format_time(e.duration)}, seed {e.seed}>"
        )

    def to_dict(self) -> dict[str, Any]:
        """The spec with canonical unit strings, ``None`` fields left out (and ``links``
        when there are none, so that a dumbbell's resolved spec is as it was)."""
        d = _drop_none(self.model_dump(mode="json"))
        for key in ("links", "workloads", "sources"):
            if not d.get(key):
                d.pop(key, None)
        return d

    def link_delay(self, hop: str) -> int:
        """The one-way delay of a path hop (``bottleneck``, ``l2_reverse``, ...)."""
        name = hop[: -len("_reverse")] if hop.endswith("_reverse") else hop
        if name == "bottleneck":
            return self.bottleneck.delay
        return next(link.delay for link in self.links if link.name == name)

    def path_delay(self, flow: Flow) -> int:
        """One-way propagation delay of a flow's path between its access links."""
        return sum(self.link_delay(h) for h in (flow.path or ["bottleneck"]))

    def flow_count(self) -> int:
        return sum(f.count for f in self.flows)


def _drop_none(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _drop_none(v) for k, v in x.items() if v is not None}
    if isinstance(x, list):
        return [_drop_none(v) for v in x]
    return x


# ---------------------------------------------------------------------------- errors


def _model_at(loc: tuple) -> type[BaseModel] | None:
    import typing

    from tcplab.spec.paths import _unwrap

    tp: Any = Spec
    for seg in loc:
        tp = _unwrap(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            if seg not in tp.model_fields:
                return None
            tp = tp.model_fields[seg].annotation
        elif typing.get_origin(tp) in (list, dict):
            tp = typing.get_args(tp)[-1]
        else:
            return None
    tp = _unwrap(tp)
    return tp if isinstance(tp, type) and issubclass(tp, BaseModel) else None


def _problems(err: ValidationError) -> list[tuple[str, str]]:
    out = []
    for e in err.errors(include_url=False):
        loc = tuple(
            x for x in e["loc"] if not (isinstance(x, str) and x.startswith(("function-", "lax-")))
        )
        # A discriminated union (bottleneck.aqm) puts the tag in the path: drop it.
        aqm_model = None
        if (
            "aqm" in loc
            and loc.index("aqm") + 1 < len(loc)
            and loc[loc.index("aqm") + 1] in AQM_KINDS
        ):
            i = loc.index("aqm") + 1
            aqm_model = aqm_model_of(loc[i])
            loc = loc[:i] + loc[i + 1 :]
        # Union members appear as extra loc entries (e.g. 'bool', 'int'); keep real fields.
        path = format_path(
            [
                x
                for x in loc
                if not (isinstance(x, str) and x in ("bool", "int", "float", "str", "dict", "list"))
            ]
        )
        kind = e["type"]
        msg = str(e["msg"])
        if kind == "extra_forbidden":
            model = (
                aqm_model
                if aqm_model is not None and loc[-2] == "aqm"
                else _model_at(tuple(loc[:-1]))
            )
            known = ", ".join(model.model_fields) if model else ""
            msg = f"unknown field '{loc[-1]}'" + (f"; allowed: {known}" if known else "")
        elif kind == "missing":
            msg = "required field is missing"
        elif msg.startswith("Value error, "):
            msg = msg[len("Value error, ") :]
        out.append((path, msg))
    # A union failing on every member reports once per member; keep the first per path.
    seen: dict[str, str] = {}
    for path, msg in out:
        seen.setdefault(path, msg)
    return list(seen.items())


# ---------------------------------------------------------------------------- loading


def parse_value(text: str) -> Any:
    """A ``--set`` value: a TOML literal (``2.0``, ``true``, ``["a"]``) or else a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except (ValueError, RecursionError):  # TOMLDecodeError, or an integer of 4300+ digits
        return text


def apply_overrides(raw: dict, overrides: dict[str, Any], what: str = "--set") -> dict:
    """A copy of ``raw`` with each ``path: value`` set; paths must name spec fields."""
    raw = copy.deepcopy(raw)
    problems = []
    for pattern, value in overrides.items():
        try:
            paths = expand_path(pattern, raw)
        except ValueError as exc:
            problems.append((f"{what} {pattern}", str(exc)))
            continue
        for path in paths:
            try:
                segments = parse_path(path)
                check_path(Spec, segments, raw)
            except ValueError as exc:
                problems.append((f"{what} {path}", str(exc)))
                continue
            set_path(raw, segments, copy.deepcopy(value))
    if problems:
        raise SpecError(problems)
    return raw


def parse_spec(
    raw: dict[str, Any], source: str | None = None, check_algorithms: bool = True
) -> Spec:
    """Validate a raw spec dictionary (as read from TOML).

    Parameters
    ----------
    raw : dict
        The TOML document.
    source : str, optional
        Its file name, for error messages.
    check_algorithms : bool
        Check ``cc`` names and ``params`` against the engine's registry.

    Raises
    ------
    SpecError
        Naming every problem found, each with its field path.
    """
    try:
        spec = Spec.model_validate(raw)
    except ValidationError as err:
        raise SpecError(_problems(err), source) from None
    problems = cross_check(spec, check_algorithms)
    if problems:
        raise SpecError(problems, source)
    return spec


def read_toml(path: str | Path) -> dict[str, Any]:
    """Read a TOML file; syntax errors become a :class:`SpecError` naming the file."""
    from tcplab.spec.files import read_bounded

    p = Path(path)
    try:
        data = read_bounded(p)
    except ValueError as exc:
        raise SpecError([("", str(exc))], str(p)) from None
    except FileNotFoundError:
        raise SpecError([("", "no such file")], str(p)) from None
    except IsADirectoryError:
        raise SpecError([("", "is a directory; give a spec file (TOML)")], str(p)) from None
    except OSError as exc:
        raise SpecError([("", f"cannot be read: {exc.strerror or exc}")], str(p)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bom = (
            " (it starts with a UTF-16 byte-order mark)"
            if data[:2] in (b"\xff\xfe", b"\xfe\xff")
            else ""
        )
        raise SpecError(
            [
                (
                    "",
                    f"not UTF-8 text{bom}: byte 0x{data[exc.start]:02x} at offset {exc.start}; "
                    "TOML files are UTF-8",
                )
            ],
            str(p),
        ) from None
    try:
        return absolute_bpf_paths(absolute_trace_paths(tomllib.loads(text), p.parent), p.parent)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError([("", f"not valid TOML: {exc}")], str(p)) from None
    except ValueError as exc:  # Python's own limit: an integer literal of 4300+ digits
        raise SpecError([("", f"not a spec: {str(exc).split(';')[0]}")], str(p)) from None
    except RecursionError:
        raise SpecError([("", "not a spec: tables or arrays nested too deeply")], str(p)) from None


def load_spec(
    path: str | Path,
    overrides: dict[str, Any] | None = None,
    check_algorithms: bool = True,
    what: str = "--set",
) -> Spec:
    """Read, override and validate a spec file (``what`` names the overrides in errors:
    ``--set`` on the command line, ``overrides`` in the API)."""
    raw = read_toml(path)
    try:
        if overrides:
            raw = apply_overrides(raw, overrides, what)
        return parse_spec(raw, str(path), check_algorithms)
    except SpecError as err:
        raise err.with_source(str(path)) from None


# ---------------------------------------------------------------------------- cross checks


WINDOW_NAME = re.compile(r"[a-z][a-z0-9_]*")


def cross_check(spec: Spec, check_algorithms: bool = True) -> list[tuple[str, str]]:
    """Problems that span fields: times beyond the run, start after stop, algorithms."""
    from tcplab.spec.algorithms import check_params

    p: list[tuple[str, str]] = []
    dur = spec.experiment.duration
    if dur <= 0:
        p.append(("experiment.duration", "must be > 0"))
    si = spec.experiment.sample_interval
    if si <= 0 or si > dur:
        p.append(
            (
                "experiment.sample_interval",
                f"must be > 0 and <= experiment.duration ({format_time(dur)})",
            )
        )
    a = spec.experiment.analysis
    if a is not None and not (0 <= a[0] < (a[1] if len(a) > 1 else dur) <= dur):
        p.append(
            (
                "experiment.analysis",
                f"must be [from] or [from, to] with 0 <= from < to <= experiment.duration "
                f"({format_time(dur)}), got [{', '.join(format_time(x) for x in a)}]",
            )
        )
    for name, w in spec.experiment.windows.items():
        at = f"experiment.windows.{name}"
        if not WINDOW_NAME.fullmatch(name):
            p.append(
                (at, "a window name is lower-case letters, digits and '_', starting with a letter")
            )
        elif len(w) != 2 or not 0 <= w[0] < w[1] <= dur:
            p.append(
                (
                    at,
                    f"must be [from, to] with 0 <= from < to <= experiment.duration ({format_time(dur)}), "
                    f"got [{', '.join(format_time(x) for x in w)}]",
                )
            )
    if spec.bottleneck.bdp_rtt is not None and spec.bottleneck.bdp_rtt <= 0:
        p.append(("bottleneck.bdp_rtt", "must be > 0"))
    for i, f in enumerate(spec.flows):
        at = f"flows[{i}]"
        last_start = f.start + f.stagger * (f.count - 1)
        stop = f.stop if f.stop is not None else dur
        if f.stop is not None and f.stop > dur:
            p.append(
                (
                    f"{at}.stop",
                    f"{format_time(f.stop)} is after the end of the experiment ({format_time(dur)})",
                )
            )
        if f.start >= stop:
            p.append(
                (f"{at}.start", f"{format_time(f.start)} is not before stop ({format_time(stop)})")
            )
        elif last_start >= stop:
            p.append(
                (
                    f"{at}.stagger",
                    f"the last flow of the group would start at {format_time(last_start)}, "
                    f"not before stop ({format_time(stop)})",
                )
            )
        if f.size is not None and f.size.unit not in ("bytes", "pkt"):
            p.append((f"{at}.size", "a transfer size is bytes or packets (e.g. '10MB', '1000pkt')"))
        if f.rtt is None and not (
            f.access
            and f.access.delay is not None
            and f.receiver_access
            and f.receiver_access.delay is not None
        ):
            p.append(
                (f"{at}.rtt", "required (or give both access.delay and receiver_access.delay)")
            )
        if check_algorithms:
            for sub, msg in check_params(f.cc, f.params):
                p.append((f"{at}.{sub}", msg))
    p += _check_shaping(spec)
    p += _check_topology(spec)
    p += _check_workloads(spec, check_algorithms)
    from tcplab.spec.sources import check as _check_sources

    p += _check_sources(spec)
    if spec.experiment.pcap:
        from tcplab.spec.links import link_names

        names = link_names(spec.flow_count(), [nl.name for nl in spec.links])
        for i, name in enumerate(spec.experiment.pcap):
            if name not in names:
                shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
                p.append(
                    (
                        f"experiment.pcap[{i}]",
                        f"no link '{name}'; links: {shown} "
                        "(flow<k>.<sender_access|receiver_access>[_reverse])",
                    )
                )
    for i, e in enumerate(spec.events):
        if e.at > dur:
            p.append(
                (
                    f"events[{i}].at",
                    f"{format_time(e.at)} is after the end of the experiment ({format_time(dur)})",
                )
            )
        if e.rate is None and e.delay is None and e.loss is None:
            p.append((f"events[{i}]", "changes nothing; give rate, delay and/or loss"))
        if e.delay is not None and e.delay > MAX_LINK_DELAY_NS:
            p.append(
                (
                    f"events[{i}].delay",
                    f"{format_time(e.delay)} is more than the longest link delay, "
                    f"{format_time(MAX_LINK_DELAY_NS)}",
                )
            )
    p += check_rates(spec)
    if spec.checks:
        from tcplab.spec.checks import AGGREGATE_KEYS, check_expression

        ccs = {f.cc for f in spec.flows}
        for i, c in enumerate(spec.checks):
            for field in ("metric", "of"):
                expr = getattr(c, field)
                why = (
                    check_expression(
                        expr,
                        ccs,
                        spec.flow_count(),
                        AGGREGATE_KEYS,
                        window=spec.experiment.analysis is not None,
                        windows=set(spec.experiment.windows),
                    )
                    if expr is not None
                    else None
                )
                if why:
                    p.append((f"checks[{i}].{field}", why))
    return p


def _check_shaping(spec: Spec) -> list[tuple[str, str]]:
    """Policer bursts of at least one packet, no rate events on a traced bottleneck, a
    reverse bottleneck without its own delay."""
    from tcplab.spec.traces import TraceRate

    p: list[tuple[str, str]] = []
    wire = spec.tcp.mss + spec.tcp.header
    links: list[tuple[str, Any]] = [("bottleneck", spec.bottleneck)]
    if spec.bottleneck.reverse is not None:
        links.append(("bottleneck.reverse", spec.bottleneck.reverse))
        if spec.bottleneck.reverse.delay is not None:
            p.append(
                (
                    "bottleneck.reverse.delay",
                    "the reverse direction has the bottleneck's delay; "
                    "allowed: rate, buffer, loss, policer, jitter and reorder fields",
                )
            )
    for i, f in enumerate(spec.flows):
        links += [
            (f"flows[{i}].access", f.access),
            (f"flows[{i}].receiver_access", f.receiver_access),
        ]
    for i, nl in enumerate(spec.links):
        links.append((f"links[{i}]", nl))
        if nl.reverse is not None:
            links.append((f"links[{i}].reverse", nl.reverse))
            if nl.reverse.delay is not None:
                p.append(
                    (
                        f"links[{i}].reverse.delay",
                        "the reverse direction has the link's delay; "
                        "allowed: rate, buffer, loss, policer, jitter and reorder fields",
                    )
                )
    for at, link in links:
        pol = getattr(link, "policer", None)
        if pol is None:
            continue
        if pol.burst.unit not in ("bytes", "pkt"):
            p.append(
                (f"{at}.policer.burst", "a bucket depth is bytes or packets (e.g. '20KB', '10pkt')")
            )
        elif (pol.burst.value * wire if pol.burst.unit == "pkt" else pol.burst.value) < wire:
            p.append((f"{at}.policer.burst", f"must hold at least one full packet ({wire} bytes)"))
    if isinstance(spec.bottleneck.rate, TraceRate):
        for i, e in enumerate(spec.events):
            if e.rate is not None:
                p.append(
                    (
                        f"events[{i}].rate",
                        "the bottleneck's rate follows a trace; rate events are not allowed "
                        "(delay and loss events are)",
                    )
                )
    return p


_LINK_NAME = __import__("re").compile(r"[A-Za-z0-9_-]+")


def _check_topology(spec: Spec) -> list[tuple[str, str]]:
    """[[links]] names and flows' paths (crates/sim/src/net/topology.rs checks the same)."""
    p: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, nl in enumerate(spec.links):
        n = nl.name
        if (
            not _LINK_NAME.fullmatch(n)
            or n == "bottleneck"
            or n.endswith("_reverse")
            or n.startswith("flow")
        ):
            p.append(
                (
                    f"links[{i}].name",
                    f"'{n}': a name is letters, digits, _ and -, not 'bottleneck', "
                    "not starting with 'flow', not ending in '_reverse'",
                )
            )
        elif n in seen:
            p.append((f"links[{i}].name", f"'{n}' names two links"))
        seen.add(n)
    hops = ["bottleneck", "bottleneck_reverse"] + [
        h for nl in spec.links for h in (nl.name, nl.name + "_reverse")
    ]
    for i, f in enumerate(spec.flows):
        for k, h in enumerate(f.path or []):
            if h not in hops:
                p.append((f"flows[{i}].path[{k}]", f"no link '{h}'; allowed: {', '.join(hops)}"))
            elif h in (f.path or [])[:k]:
                p.append((f"flows[{i}].path[{k}]", f"'{h}' twice in one path"))
    return p


def _check_workloads(spec: Spec, check_algorithms: bool) -> list[tuple[str, str]]:
    """At least one flow or workload; each workload's rate or load, size and times."""
    from tcplab.spec.algorithms import check_params
    from tcplab.spec.workload import read_cdf

    p: list[tuple[str, str]] = []
    if not spec.flows and not spec.workloads and not spec.sources:
        p.append(
            ("flows", "at least one [[flows]], [[workloads]] or [[sources]] table is required")
        )
    dur = spec.experiment.duration
    for i, w in enumerate(spec.workloads):
        at = f"workloads[{i}]"
        if (w.rate is None) == (w.load is None):
            p.append(
                (at, "give exactly one of rate (flows per second) and load (x bottleneck rate)")
            )
        stop = w.stop if w.stop is not None else dur
        if not 0 <= w.start < stop <= dur:
            p.append(
                (
                    f"{at}.stop",
                    f"arrivals need 0 <= start < stop <= experiment.duration ({format_time(dur)})",
                )
            )
        s = w.size
        need = {"fixed": "value", "exponential": "mean", "pareto": "mean", "empirical": "cdf"}[
            s.dist
        ]
        given = [k for k in ("value", "mean", "shape", "cdf") if getattr(s, k) is not None]
        allowed = [need] + (["shape"] if s.dist == "pareto" else [])
        if need not in given or any(k not in allowed for k in given):
            p.append((f"{at}.size", f'dist = "{s.dist}" takes {" and ".join(allowed)}'))
        elif s.dist == "pareto" and s.shape is None:
            p.append((f"{at}.size.shape", "required for pareto (> 1, so that the mean exists)"))
        for k in ("value", "mean"):
            v = getattr(s, k)
            if v is not None and (v.unit != "bytes" or v.value <= 0):
                p.append((f"{at}.size.{k}", "a size in bytes > 0 (e.g. '100KB')"))
        if s.dist == "empirical" and s.cdf is not None:
            try:
                read_cdf(s.cdf)
            except ValueError as exc:
                p.append((f"{at}.size.cdf", str(exc)))
        if check_algorithms:
            for sub, msg in check_params(w.cc, w.params):
                p.append((f"{at}.{sub}", msg))
    return p
