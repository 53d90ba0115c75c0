"""One kernel-backend run: check the spec against the machine, build the namespaces,
start the emulator and the agents, wait (in real time, bounded by a hard timeout), and
collect their records.

Order: stale namespaces of dead runs are removed; the two namespaces are created; the
emulator creates its TUN devices in them and says ``ready``; addresses, MTU and routes
are configured; the receiver agent listens and says ``ready``; the sender agent sets its
sysctls and says ``ready``; time zero ``t0`` is set 200 ms ahead and sent to the emulator
and both agents (all three already running, so a slow start-up on a loaded machine does
not delay the flows); the run lasts ``duration``; every
process we started is killed if still running, and both namespaces are deleted, whatever
happened (``finally``: also on Ctrl-C and SIGTERM, which the CLI turns into
KeyboardInterrupt, and so does :func:`run_kernel` itself where nothing else handles
SIGTERM: a script driving the backend, as scripts/fidelity.py does).

Spec mapping (the kernel's own knobs, per namespace or per route, so the host is never
changed): ``tcp.mss`` -> device MTU ``mss + 52`` (20 IP + 20 TCP + 12 timestamp option:
the kernel's MSS is then ``mss``); ``tcp.initial_cwnd`` -> route ``initcwnd``;
``tcp.rto_min`` -> route ``rto_min``; ``tcp.delayed_ack = false`` -> receiver route
``quickack 1``; ``tcp.rack = false`` -> ``net.ipv4.tcp_recovery = 0``;
``tcp.tlp = false`` -> ``net.ipv4.tcp_early_retrans = 0``; ``tcp.frto = false`` ->
``net.ipv4.tcp_frto = 0`` (true sets it to 2, Linux's default, so that a changed host
default cannot leak into a namespace); ``tcp.sack_compression =
false`` -> ``net.ipv4.tcp_comp_sack_nr = 0`` (receiver); ``tcp.ecn`` / ``flows[i].ecn``
-> the senders' ``net.ipv4.tcp_ecn`` 1 when every flow asks (else 0), the receivers' 2;
when only some flows ask, theirs are routed (by destination port) over a route with
``features ecn`` (``ecn_ports``, netns.Pair.commands). ``flows[i].onoff``: the
emulator draws the periods (the simulator's code and RNG stream), the sending agent stops
writing during the off periods, and the senders' ``tcp_slow_start_after_idle`` is 0 (the
simulator does not restart an idle cwnd). Each flow's listening socket runs the flow's
algorithm (``TCP_CONGESTION``) only when that needs ECN (dctcp, or a program with
``TCP_CONG_NEEDS_ECN``), so that the receiving host handles CE as the simulator's receiver
does (dctcp's exact echo); every other receiver runs Reno, never the sender's program nor
the host's default (``receiver_cc``). Not mappable, hence errors:
``params`` of the kernel's own algorithms (its modules take none per socket), an algorithm
the kernel does not offer. A ``bpf:`` program's ``params`` are written into the copy the
run registers (``bpf_ops``), so they apply on both backends.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tcplab import bpf, bpf_loader, policy, preset_file
from tcplab.backends.kernel import (
    bpf_ops,
    kconfig,
    netns,
    ping,
    policy_agent,
    printk,
    requirements,
    steal,
    twins,
)
from tcplab.backends.kernel.assemble import assemble
from tcplab.backends.kernel.support import unsupported
from tcplab.errors import EngineError, SpecError
from tcplab.interrupts import sigterm_unwinds
from tcplab.specs.model import Spec

BASE_PORT = 5000
START_LEAD_NS = 200_000_000
"""Time zero is set this far ahead, so that every process has it before it arrives."""
HARD_TIMEOUT_GRACE_S = 30.0
"""A run is abandoned this long after its duration (then: an error, everything removed)."""
KERNEL_HEADER = 52  # 20 IP + 20 TCP + 12 timestamp option, what Linux sends with timestamps


def check_spec(spec: Spec) -> dict[int, Path]:
    """Whether this machine can run ``spec`` on the kernel; returns the flows that will run
    a shipped BPF twin (twins.twins: flow index -> the twin's source).

    Raises
    ------
    SpecError
        ``experiment.backend`` when the machine lacks something (root, netns, tun, ip),
        ``flows[i].cc`` naming what the kernel offers, ``flows[i].params``, and every
        simulator-only feature the spec uses (``support.unsupported``).
    """
    problems = [("experiment.backend", f"kernel: {r.detail}") for r in requirements.missing()]
    if problems:
        raise SpecError(problems)
    problems = unsupported(spec)
    offered = requirements.available_cc()
    twin = twins.twins(spec, offered)
    for i, f in enumerate(spec.flows):
        if bpf.is_bpf(f.cc) or policy.is_policy(f.cc) or i in twin:  # registered (bpf_ops)
            why = bpf_loader.available()
            if why is not None:
                what = (
                    f"'{f.cc}' is not offered by this kernel and its BPF twin"
                    if i in twin
                    else "a BPF program"
                )
                problems.append((f"flows[{i}].cc", f"{what} cannot be loaded: {why}"))
        elif f.cc not in offered and not preset_file.is_preset(f.cc):  # refused in support
            problems.append(
                (
                    f"flows[{i}].cc",
                    f"'{f.cc}' is not offered by this kernel; "
                    f"net.ipv4.tcp_available_congestion_control: {' '.join(offered)}",
                )
            )
        if f.params and not bpf.is_bpf(f.cc):  # a BPF copy gets them in .rodata
            problems.append(
                (
                    f"flows[{i}].params",
                    "the kernel backend runs the kernel's algorithm as it is; "
                    "parameters cannot be set per flow (remove them or use the simulator)",
                )
            )
    if problems:
        raise SpecError(problems)
    return twin


def _route_options(spec: Spec) -> tuple[list[str], list[str], dict[str, str], dict[str, str]]:
    t = spec.tcp
    snd = ["initcwnd", str(t.initial_cwnd), "rto_min", f"{max(1, t.rto_min // 1_000_000)}ms"]
    rcv = [] if t.delayed_ack else ["quickack", "1"]
    # The simulator has no receive-window or send-buffer limit; the kernel's autotuning caps
    # both at tcp_rmem[2] / tcp_wmem[2] (4 MB send buffer by default: one CUBIC flow at
    # 400 Mbit/s, 40 ms, 1 BDP never filled the buffer, 0 retransmissions against the
    # simulator's 139; with 64 MB, 139 as well). Inside our namespaces the caps are 64 MB,
    # so neither backend is window limited at the rates the emulator sustains (min and
    # default values are the kernel's).
    buffers = {
        "net.ipv4.tcp_rmem": "4096 131072 67108864",
        "net.ipv4.tcp_wmem": "4096 16384 67108864",
    }
    snd_sys = {"net.ipv4.tcp_no_metrics_save": "1", **buffers}
    rcv_sys = {"net.ipv4.tcp_no_metrics_save": "1", **buffers}
    if not t.rack:
        snd_sys["net.ipv4.tcp_recovery"] = "0"
    if not t.tlp:
        snd_sys["net.ipv4.tcp_early_retrans"] = "0"
    # F-RTO is per namespace (net->ipv4.sysctl_tcp_frto); 2 is the kernel's default.
    snd_sys["net.ipv4.tcp_frto"] = "2" if t.frto else "0"
    if not t.sack_compression:
        rcv_sys["net.ipv4.tcp_comp_sack_nr"] = "0"
    # ECN (RFC 3168): the senders request it when every flow asks (1), else not (0; an
    # algorithm that needs it, dctcp, requests it anyway, tcp_ecn_send_syn); when only some
    # flows ask, theirs request it through their own route (ecn_ports). The receivers
    # accept it when requested (2, Linux's default, set so no host default leaks in;
    # tcp_ecn_create_request accepts for any non-zero value), as the simulator's receiver
    # follows its sender.
    wanted = _ecn_wanted(spec)
    snd_sys["net.ipv4.tcp_ecn"] = "1" if wanted and all(wanted) else "0"
    rcv_sys["net.ipv4.tcp_ecn"] = "2"
    # On/off flows idle between their on periods: the simulator does not restart an idle
    # cwnd (RFC 2861, tcp_cwnd_restart; world/onoff.rs deviations), i.e. it models Linux
    # with tcp_slow_start_after_idle = 0, set so that both backends run the same TCP.
    if any(f.onoff is not None for f in spec.flows):
        snd_sys["net.ipv4.tcp_slow_start_after_idle"] = "0"
    return snd, rcv, snd_sys, rcv_sys


def _ecn_wanted(spec: Spec) -> list[bool]:
    """Per flow, whether the spec asks for ECN (the flow's ``ecn``, else ``tcp.ecn``)."""
    return [spec.tcp.ecn if f.ecn is None else f.ecn for f in spec.flows]


def ecn_ports(spec: Spec) -> list[int]:
    """The receiving ports of the flows that request ECN by their route (netns.Pair.commands:
    ``features ecn``, RTAX_FEATURE_ECN), i.e. those that ask for it when some other flow
    does not; empty when all flows agree (the namespace's ``net.ipv4.tcp_ecn`` says it)."""
    wanted = _ecn_wanted(spec)
    if all(wanted) or not any(wanted):
        return []
    return [BASE_PORT + i for i, w in enumerate(wanted) if w]


def _agent(
    ns: str, role: str, cfg_path: Path, err: Path, module: str = "tcplab.backends.kernel.agent"
) -> subprocess.Popen:
    env = dict(os.environ)
    pkg_parent = str(Path(__file__).resolve().parents[3])  # the directory holding tcplab/
    env["PYTHONPATH"] = pkg_parent + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else ""
    )
    return subprocess.Popen(
        [
            "ip",
            "netns",
            "exec",
            ns,
            sys.executable,
            "-m",
            module,
            *([role] if role else []),
            str(cfg_path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=open(err, "w"),
        text=True,
        env=env,
    )


def _expect_ready(p: subprocess.Popen, what: str, err: Path, timeout_s: float = 15.0) -> None:
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ)
    if not sel.select(timeout_s):
        raise EngineError(f"the {what} did not start within {timeout_s:.0f} s")
    line = p.stdout.readline().strip()
    if line != "ready":
        p.wait(5)
        raise EngineError(
            f"the {what} failed to start: {err.read_text().strip()[-500:] or line or p.returncode}"
        )


def _emulator() -> list[str]:
    emu = requirements.emulator_command()
    if emu is None:
        raise SpecError(
            [
                (
                    "experiment.backend",
                    "kernel: no link emulator (TCPLAB_EMU names no file, or the installed "
                    "extension lacks tcplab._engine.emulate; reinstall tcplab)",
                )
            ]
        )
    return emu


WORK_PREFIX = "tcplab-kernel-"
_WORK = re.compile(re.escape(WORK_PREFIX) + r"(\d+)-")


def clean_stale_work() -> list[Path]:
    """Remove the working directories (``$TMPDIR/tcplab-kernel-<pid>-*``) of kernel runs
    whose process is gone (killed with SIGKILL, which no ``finally`` survives); return
    them. A live run's directory is left alone."""
    removed = []
    for d in Path(tempfile.gettempdir()).glob(WORK_PREFIX + "*"):
        m = _WORK.match(d.name)
        if m and d.is_dir() and not d.is_symlink():
            pid = int(m.group(1))
            if pid != os.getpid() and not netns.alive(pid):
                shutil.rmtree(d, ignore_errors=True)
                removed.append(d)
    return removed


def run_kernel(
    spec: Spec,
    config: dict[str, Any],
    progress: Callable[[float], None] | None = None,
    realtime: bool = True,
) -> dict[str, Any]:
    """Run the resolved ``spec`` (whose engine config is ``config``) on the kernel and
    return the raw result in the engine's format (see :func:`.assemble.assemble`).

    Raises
    ------
    SpecError
        The machine or the kernel cannot run this spec (see :func:`check_spec`).
    EngineError
        A process failed or the hard timeout passed; everything is removed either way.
    """
    with sigterm_unwinds():
        return _run_kernel(spec, config, progress, realtime)


def _run_kernel(
    spec: Spec,
    config: dict[str, Any],
    progress: Callable[[float], None] | None,
    realtime: bool,
) -> dict[str, Any]:
    twin = check_spec(spec)  # the flows that run a twin (twins.py)
    emu_cmd = _emulator()
    netns.clean_stale()
    bpf_ops.clean_stale()
    printk.clean_stale(netns.alive)
    clean_stale_work()
    pair = netns.Pair.for_pid(os.getpid())
    duration_ns = config["duration_ns"]
    procs: list[subprocess.Popen] = []
    # BPF programs: registered under run-unique names before anything else starts, one
    # copy per (object, params) so that each flow runs its own parameters; flows a
    # trained policy drives run its preset's program of policy_agent (one copy for all
    # the flows of a preset).
    driven = {a["flow"]: policy_agent.preset_of(a) for a in config.get("agents", [])}
    # Algorithms this kernel lacks run as tcplab's shipped BPF twins (twins.py).
    twin_object = {i: str(bpf.program(f"bpf:{src}").object_path) for i, src in twin.items()}
    bpf_keys = [
        (f["bpf_object"], json.dumps(f.get("params") or {}, sort_keys=True))
        if f.get("bpf_object")
        else (twin_object[i], "{}")
        if i in twin_object
        else (policy_agent.PROGRAM_KEYS[driven[i]] if i in driven else None)
        for i, f in enumerate(config["flows"])
    ]
    distinct = sorted({k for k in bpf_keys if k is not None})
    registration: bpf_ops.Registration | None = None
    kernel_name: dict[tuple[str, str], str] = {}
    program_name: dict[str, str] = {}
    if distinct:
        try:
            policy_keys = set(policy_agent.PROGRAM_KEYS.values())
            payload = [
                policy_agent.program((o, p))
                if (o, p) in policy_keys
                else bpf.kernel_object(o, json.loads(p))
                for o, p in distinct
            ]
            program_name = {o: name for (o, _), (_, name) in zip(distinct, payload)}
            registration = bpf_ops.register(payload)
            kernel_name = dict(zip(distinct, registration.names))
        except (bpf_ops.BpfLoadError, bpf.BpfBuildError) as exc:
            raise SpecError(_refused(str(exc), distinct, bpf_keys)) from None
    flows = [
        {
            "cc": kernel_name[key] if key is not None else f["cc"],
            "receiver_cc": receiver_cc(f, key, kernel_name),
            "start_ns": f["start_ns"],
            "stop_ns": f["stop_ns"],
            "bytes": f["app"]["finite"]["bytes"] if isinstance(f["app"], dict) else None,
        }
        for f, key in zip(config["flows"], bpf_keys)
    ]
    common = {
        "flows": flows,
        "base_port": BASE_PORT,
        "receiver_addr": netns.RECEIVER_ADDR,
        "duration_ns": duration_ns,
        "sample_interval_ns": config["sample_interval_ns"],
    }
    snd_route, rcv_route, snd_sys, rcv_sys = _route_options(spec)
    # Made only once nothing can refuse the run any more (a refused program left it
    # behind); a SIGKILLed run's is removed by the next run or doctor (clean_stale_work).
    work = Path(tempfile.mkdtemp(prefix=f"{WORK_PREFIX}{os.getpid()}-"))
    # The programs' bpf_printk lines, from a trace instance of the run's own (printk.py).
    reader = printk.Reader(registration.tags if registration is not None else {})
    end_dump: threading.Timer | None = None
    # [[probes]]: one ping per probe in the sender's namespace (ping.py), started at its
    # start by a timer and interrupted at the run's end, apart from the helpers' wait.
    probes = config.get("probes", [])
    pings: list[subprocess.Popen] = []
    ping_timers: list[threading.Timer] = []
    t0 = time.monotonic_ns()
    cpu_before = steal.read()
    try:
        reader.start()
        pair.create()
        emu_cfg = {
            "world": config,
            "sender_netns": pair.path(pair.sender),
            "receiver_netns": pair.path(pair.receiver),
            "sender_tun": pair.sender_tun,
            "receiver_tun": pair.receiver_tun,
            "base_port": BASE_PORT,
            "out": str(work / "emu.json"),
            "realtime": realtime,
        }
        onoff = any(f.get("onoff") for f in config["flows"])
        if onoff:  # the schedule is drawn by the simulator's code, in the emulator
            emu_cfg["onoff_out"] = str(work / "onoff.json")
        (work / "emu-config.json").write_text(json.dumps(emu_cfg))
        emu = subprocess.Popen(
            [*emu_cmd, str(work / "emu-config.json")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(work / "emu.err", "w"),
            text=True,
        )
        procs.append(emu)
        _expect_ready(emu, "emulator", work / "emu.err")
        if onoff:
            offs = json.loads((work / "onoff.json").read_text())
            common["flows"] = [{**f, "offs": o} for f, o in zip(common["flows"], offs)]
        pair.configure(spec.tcp.mss + KERNEL_HEADER, snd_route, rcv_route, ecn_ports(spec))
        (work / "rcv.json").write_text(
            json.dumps({**common, "sysctls": rcv_sys, "out": str(work / "rcv-out.json")})
        )
        rcv = _agent(pair.receiver, "receive", work / "rcv.json", work / "rcv.err")
        procs.append(rcv)
        _expect_ready(rcv, "receiver agent", work / "rcv.err")
        (work / "snd.json").write_text(
            json.dumps({**common, "sysctls": snd_sys, "out": str(work / "snd-out.json")})
        )
        snd = _agent(pair.sender, "send", work / "snd.json", work / "snd.err")
        procs.append(snd)
        _expect_ready(snd, "sender agent", work / "snd.err")
        helpers = [(emu, "emulator", "emu.err"), (rcv, "receiver agent", "rcv.err")]
        helpers.append((snd, "sender agent", "snd.err"))
        if driven:  # the trained policies' agent, beside the sender (policy_agent)
            (work / "pol.json").write_text(
                json.dumps(
                    policy_agent.agent_config(
                        config,
                        {i: kernel_name[bpf_keys[i]] for i in driven},
                        BASE_PORT,
                        work,
                    )
                )
            )
            pol = _agent(pair.sender, "", work / "pol.json", work / "pol.err", policy_agent.MODULE)
            procs.append(pol)
            _expect_ready(pol, "policy agent", work / "pol.err")
            helpers.append((pol, "policy agent", "pol.err"))
        t0 = time.monotonic_ns() + START_LEAD_NS
        for p, _, _ in helpers:
            p.stdin.write(f"start {t0}\n")
            p.stdin.flush()
        for i, probe in enumerate(probes):
            argv = [
                "ip",
                "netns",
                "exec",
                pair.sender,
                *ping.command(probe, i, duration_ns, netns.RECEIVER_ADDR, BASE_PORT),
            ]
            out_path = work / f"ping{i}.out"

            def start_ping(argv: list[str] = argv, out_path: Path = out_path) -> None:
                with open(out_path, "w") as f:
                    pings.append(subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT))

            at = (t0 + int(probe["start_ns"]) - time.monotonic_ns()) / 1e9
            ping_timers.append(threading.Timer(max(0.0, at), start_ping))
            ping_timers[-1].start()
        if registration is not None:
            # The programs' maps as they are at the run's end, where the simulator's run
            # ends: the connections closing after it call the programs again.
            end_dump = threading.Timer(
                max(0.0, (t0 + duration_ns - time.monotonic_ns()) / 1e9),
                bpf_ops.snapshot,
                (registration,),
            )
            end_dump.start()
        deadline = t0 + duration_ns + int(HARD_TIMEOUT_GRACE_S * 1e9)
        while any(p.poll() is None for p in procs):
            now = time.monotonic_ns()
            if now > deadline:
                raise EngineError(
                    f"kernel run exceeded its hard timeout (duration + {HARD_TIMEOUT_GRACE_S:.0f} s)"
                )
            if progress is not None:
                progress(min(max(0.0, (now - t0) / 1e9), duration_ns / 1e9))
            time.sleep(0.1)
        for p, what, err in helpers:
            if p.returncode != 0:
                raise EngineError(exit_message(what, p.returncode, work / err))
        for tm in ping_timers:
            tm.join()
        for pg in pings:  # the run is over: ping prints its totals on SIGINT
            if pg.poll() is None:
                pg.send_signal(signal.SIGINT)
            try:
                pg.wait(5)
            except subprocess.TimeoutExpired:  # pragma: no cover
                pg.kill()
        ping_out = [(work / f"ping{i}.out").read_text() for i in range(len(probes))]
        emu_out = json.loads((work / "emu.json").read_text())
        snd_out = json.loads((work / "snd-out.json").read_text())
        rcv_out = json.loads((work / "rcv-out.json").read_text())
        pol_out = json.loads((work / "pol-out.json").read_text()) if driven else None
    finally:
        for tm in ping_timers:
            tm.cancel()
        for pg in pings:
            if pg.poll() is None:
                pg.kill()
                pg.wait(5)
        for p in procs:
            if p.poll() is None:
                p.kill()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:  # pragma: no cover
                pass
            for f in (p.stdin, p.stdout):
                if f is not None:
                    try:
                        f.close()
                    except OSError:
                        pass
        pair.delete()
        if end_dump is not None:
            end_dump.cancel()
        printed, printk_dropped = reader.stop(t0, duration_ns)
        if registration is not None:
            bpf_ops.unregister(registration)
        shutil.rmtree(work, ignore_errors=True)
    if snd_out.get("errors"):
        raise EngineError("kernel run: " + "; ".join(snd_out["errors"][:5]))
    raw = assemble(spec, config, emu_out, snd_out, rcv_out)
    raw["emulator"]["host_steal"] = steal.share(cpu_before, steal.read())
    if probes:
        raw["probes"] = ping.reports(probes, ping_out, emu_out.get("probes", []))
    raw["kernel"] = kernel_metadata(spec)
    raw["kernel"]["first_writes_ms"] = first_writes_ms(snd_out)
    raw["bpf_printk"], raw["bpf_printk_dropped"] = printed, printk_dropped
    if registration is not None and registration.maps:
        raw["bpf_maps"] = registration.maps
    if reader.warning:
        raw["kernel"]["warnings"].append(reader.warning)
    if twin:
        raw["kernel"]["twins"] = {str(i): f"bpf:{spec.flows[i].cc}" for i in sorted(twin)}
        for cc in sorted({spec.flows[i].cc for i in twin}):
            flows_cc = [i for i in sorted(twin) if spec.flows[i].cc == cc]
            raw["kernel"]["warnings"].append(twins.note(flows_cc, cc, twin[flows_cc[0]]))
    if pol_out is not None:
        policy_agent.report(raw, config, pol_out)
    for counters, f in zip(raw["flows"], config["flows"]):
        if f.get("bpf_object"):  # reported by the program's name, as in the simulator
            counters["cc"] = program_name[f["bpf_object"]]
    return raw


# The kernel's own algorithms that set TCP_CONG_NEEDS_ECN (net/ipv4/tcp_dctcp.c's
# dctcp_reno ops: ``.flags = TCP_CONG_NEEDS_ECN``; no other module of 6.18 sets it).
NEEDS_ECN_MODULES = frozenset({"dctcp"})
# What a receiver runs otherwise: Reno, built into every kernel (tcp_cong.c's
# tcp_reno), not the namespace's default, which a new namespace inherits from the host.
RECEIVER_DEFAULT_CC = "reno"


def receiver_cc(
    flow: dict[str, Any], key: tuple[str, str] | None, kernel_name: dict[tuple[str, str], str]
) -> str:
    """The algorithm of a flow's receiving socket, as the simulator's receiver has it
    (``world::build``): the flow's own only when it needs ECN (its CE echo, DCTCP's exact
    one), else Reno, which a receiver that sends only ACKs never calls but to set up and
    release. So a program runs on the sockets that send its flow's data (plus, for one
    that needs ECN, the receiving ones, as on the simulator's receiver), never on a socket
    the spec does not give it, and the host's default never enters a run."""
    if key is None:
        return flow["cc"] if flow["cc"] in NEEDS_ECN_MODULES else RECEIVER_DEFAULT_CC
    if key in policy_agent.PROGRAM_KEYS.values():
        return RECEIVER_DEFAULT_CC
    return kernel_name[key] if bpf.program_at(key[0]).needs_ecn else RECEIVER_DEFAULT_CC


def first_writes_ms(snd_out: dict[str, Any]) -> list[float | None]:
    """Per flow, when the sending agent first wrote data (ms from time zero; None for a
    flow that never connected): the handshake's end plus the agent's wake-up. Two flows
    due together whose first writes lie within ~0.08 ms of each other overshoot slow
    start together (docs/FIDELITY-gaps.md, gap 11); an idle host's agent, asleep through
    the SYN-ACKs' ~0.06 ms gap, writes both in one pass."""
    return [None if ns is None else round(ns / 1e6, 3) for ns in snd_out.get("first_writes_ns", [])]


def kernel_metadata(spec: Spec) -> dict[str, Any]:
    """What the run's summary records about the kernel it ran on: its CONFIG_HZ (and
    where that was read) beside the spec's simulated one, and a warning when they
    differ (kconfig.hz_warning)."""
    hz, source = kconfig.kernel_hz()
    spec_hz = int(getattr(spec.tcp, "hz", None) or kconfig.SIMULATED_DEFAULT_HZ)
    warning = kconfig.hz_warning(spec_hz, hz)
    warnings = [warning] if warning else []
    # A BPF flow's state struct (flows[i].bpf.state) lives in icsk_ca_priv, which the
    # kernel shows user space nowhere (BPF congestion controls have no get_info): its
    # cc_<struct>_* columns stay empty here (crates/bpf/src/object/state_series.rs).
    warnings += [
        f"flows[{i}].bpf.state: struct {f.bpf.state} is recorded in the simulator only; "
        f"its cc_{f.bpf.state}_* series are empty on the kernel backend"
        for i, f in enumerate(spec.flows)
        if f.bpf is not None and f.bpf.state is not None
    ]
    return {
        "config_hz": hz,
        "config_hz_source": source,
        "spec_hz": spec_hz,
        "warnings": warnings,
    }


def _refused(
    message: str, distinct: list[tuple[str, str]], keys: list[tuple[str, str] | None]
) -> list[tuple[str, str]]:
    """A refusal by the loader, said at the flows whose object it names (the loader sees
    the k-th distinct object as ``.../<k>.bpf.o``), else at the first BPF flow."""

    m = re.search(r"\S*/(\d+)\.bpf\.o", message)
    k = int(m.group(1)) if m and int(m.group(1)) < len(distinct) else 0
    if m:
        message = message.replace(m.group(0), f"the program (object {Path(distinct[k][0]).name})")
    at = [i for i, key in enumerate(keys) if key == distinct[k]]
    return [(f"flows[{at[0]}].cc", f"the kernel refused the BPF program: {message}")]


def exit_message(what: str, code: int, stderr_file: Path) -> str:
    """Why a helper process failed, in words: a signal by name (SIGKILL with no output is
    most often the kernel's out-of-memory killer), and its last output, or that it wrote
    none ("the emulator failed (exit -9):" said nothing)."""

    try:
        text = stderr_file.read_text(errors="replace").strip()[-800:]
    except OSError:
        text = ""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        how = f"was killed by {name}"
        if -code == signal.SIGKILL:
            how += " (the out-of-memory killer or another process; see `dmesg`)"
    else:
        how = f"failed (exit {code})"
    return f"the {what} {how}: " + (text or "it wrote nothing on stderr")
