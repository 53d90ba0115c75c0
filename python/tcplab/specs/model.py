"""The experiment spec: pydantic models of the TOML file. Reading a file, ``--set``
overrides and validation are :mod:`tcplab.specs.load`'s; pydantic's errors as field paths
:mod:`tcplab.specs.problems`'s; checks that span fields :mod:`tcplab.specs.cross_checks`'s.

A spec is data, not code. Quantities carry units and are parsed once (see
:mod:`tcplab.specs.units`) into integers: rates in bit/s, times in ns. Sizes stay symbolic
(packets, bytes or BDP multiples) until :mod:`tcplab.lowering` resolves them against
the bottleneck. Dumping a model (``model_dump(mode="json")``) writes the canonical unit
strings back, so a resolved spec is itself a valid spec.
"""

from __future__ import annotations

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
    ValidationInfo,
    field_validator,
    model_validator,
)

from tcplab.bpf import Build
from tcplab.specs import contract
from tcplab.specs.algorithms import registry
from tcplab.specs.aqm import Aqm
from tcplab.specs.checks import Check
from tcplab.specs.netem import NetemFields
from tcplab.specs.traces import format_link_rate, parse_link_rate
from tcplab.specs.units import (
    Size,
    format_rate,
    format_time,
    parse_rate,
    parse_size,
    parse_time,
    probability,
    real_number,
)

Rate = Annotated[int, BeforeValidator(parse_rate), PlainSerializer(format_rate, return_type=str)]
Time = Annotated[int, BeforeValidator(parse_time), PlainSerializer(format_time, return_type=str)]
SizeField = Annotated[Size, BeforeValidator(parse_size), PlainSerializer(str, return_type=str)]
# A link's rate: a Rate, or { trace = "FILE" } (a Mahimahi trace; tcplab.specs.traces.TraceRate,
# an int equal to the trace's mean rate).
LinkRate = Annotated[Any, BeforeValidator(parse_link_rate), PlainSerializer(format_link_rate)]

# A number or netem's percentage ("1%": tcplab.specs.units.probability).
Probability = Annotated[float, BeforeValidator(probability), Field(ge=0.0, lt=1.0)]
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
    # Links written as DIR/<link>.pcap (tcplab.storage.pcap): "bottleneck", "bottleneck_reverse",
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


def _start_jitter_range(ns: int) -> int:
    if not 0 <= ns <= 1_000_000_000:
        raise ValueError(
            f"must be between 0s (every flow exactly on time) and 1s, got {format_time(ns)}"
        )
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
    # before 0.2.0: delayed ACKs throughout slow start).
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
    # The hosts' start-up variation (crates/sim/src/start_jitter.rs): each flow's
    # application starts later than its start by an offset uniform in [0, start_jitter),
    # drawn from the run's seed, as a real host opens a connection some time after it is
    # told to (connect, wake-up, scheduling; measured on Linux 6.18, docs/FIDELITY-gaps.md
    # "Start-up variation"); flows with the same start open in index order, as one
    # process opening them in turn does. "0s": every flow exactly on time, so flows given
    # the same start run in lockstep (tcplab before this field). The kernel backend has
    # its own.
    start_jitter: Annotated[Time, AfterValidator(_start_jitter_range)] = _tcp_default(
        "start_jitter_ns"
    )
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
        # Only a string is looked up: a table or an array (`--set 'tcp.kernel={a=1}'`) is
        # unhashable and ended in "internal error: TypeError"; the field's own validation
        # then says what it must be.
        if (
            isinstance(data, dict)
            and isinstance(kernel, str)
            and "sack_compression" not in data
            and kernel != DEFAULT_KERNEL
        ):
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
    # Queue discipline (drop-tail if absent): see tcplab.specs.aqm.
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
    (tcplab.specs.sources; a TCP flow's application stops writing while off)."""

    on: Time
    off: Time
    dist: Literal["fixed", "exponential"] = "fixed"  # exponential: on and off are the means


class BpfBuild(_Model):
    """``flows[i].bpf``: how a ``bpf:`` source is compiled (tcplab.bpf.Build): include
    directories (relative to the spec file) searched first, and ``-D`` defines; and, for
    an object with several ``tcp_congestion_ops``, which one the flow runs (``ops``: its
    variable name or its ``.name``). ``state`` names the C struct the program keeps in
    ``inet_csk_ca(sk)``, recorded each interval as ``cc_<struct>_<field>`` series in the
    simulator (crates/bpf/src/object/state_series.rs); it is not a compile option."""

    include: list[StrictStr] = Field(default_factory=list, max_length=32)
    define: dict[StrictStr, StrictStr | StrictInt] = Field(default_factory=dict, max_length=64)
    ops: StrictStr | None = Field(None, min_length=1, max_length=64)
    state: StrictStr | None = Field(None, pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")

    def build(self) -> Any:
        return Build(
            tuple(self.include),
            tuple(sorted((k, str(v)) for k, v in self.define.items())),
            self.ops,
        )


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
    bpf: BpfBuild | None = None  # compile options of a bpf: cc


class SizeDist(_Model):
    """A workload's transfer-size distribution (tcplab.specs.workload)."""

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
    """``[[workloads]]``: finite flows arriving as a Poisson process (tcplab.specs.workload),
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
    """``[[sources]]``: ``count`` constant-rate UDP-like sources (tcplab.specs.sources)."""

    rate: Rate  # while on, in wire bits per second
    packet: SizeField = Size(1500, "bytes")  # type: ignore[arg-type]  # wire bytes per packet
    rtt: Time | None = None  # the path's base RTT as a flow's (default 2 x bottleneck.delay)
    count: StrictInt = Field(1, ge=1, le=1_000)
    start: Time = 0
    stop: Time | None = None
    onoff: OnOff | None = None


class Probe(_Model):
    """``[[probes]]``: a latency probe, ping beside the flows (tcplab.specs.probes)."""

    name: StrictStr | None = None  # default "probe<i>"
    interval: Time = 200_000_000  # Flent's RRUL ping interval (its default step, 0.2 s)
    size: SizeField = Size(84, "bytes")  # type: ignore[arg-type]  # iputils ping's default packet
    rtt: Time | None = None  # the path's base RTT as a flow's (default 2 x bottleneck.delay)
    start: Time = 0
    stop: Time | None = None


class Event(_Model):
    """``[[events]]``: a change of the bottleneck at ``at``."""

    at: Time
    rate: Rate | None = None
    delay: Time | None = None
    loss: Probability | None = None


class Spec(_Model):
    """A whole experiment. ``sweep`` and ``catalogue`` are kept raw here; :mod:`tcplab.runs.sweep`
    and :mod:`tcplab.reproduce` read them."""

    experiment: Experiment
    tcp: Tcp = Field(default_factory=Tcp)
    bottleneck: Bottleneck
    links: list[NamedLink] = Field(default_factory=list)
    flows: list[Flow] = Field(default_factory=list)
    workloads: list[Workload] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    probes: list[Probe] = Field(default_factory=list)
    events: list[Event] = Field(default_factory=list)
    checks: list[Check] = Field(default_factory=list)
    sweep: dict[str, Any] | None = None
    catalogue: dict[str, Any] | None = None

    def __repr__(self) -> str:
        """One line for notebooks (pydantic's repr lists every field, ~1000 characters)."""
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
        for key in ("links", "workloads", "sources", "probes"):
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
