"""[[sources]] (tcplab.specs.sources, crates/sim/src/source.rs): constant-rate UDP-like
sources, on/off or not, through the spec, the engine and summary.json."""

import pytest
import tcplab
from tcplab.errors import SpecError
from tcplab.lowering import world_config
from tcplab.specs.load import parse_spec, tomllib

BASE = """
[experiment]
duration = "10s"
seed = 1

[bottleneck]
rate = "10Mbps"
delay = "10ms"
buffer = "1bdp"
"""

SOURCE = """
[[sources]]
rate = "6Mbps"
rtt = "40ms"
"""

CUBIC = """
[[flows]]
cc = "cubic"
rtt = "40ms"
"""


def run(tmp_path, text, name="run"):
    p = tmp_path / f"{name}.toml"
    p.write_text(text)
    return tcplab.run(p, tmp_path / name, report=False)


@pytest.mark.engine
def test_a_cbr_source_alone_delivers_its_rate_without_drops(tmp_path):
    # 6 Mbit/s of 1500-byte packets: one every 2 ms, 5000 in [0, 10 s). One-way delay
    # 20 ms + serialization (1.2 ms at 10 Mbit/s, 12 ns twice at the 1 Gbit/s access
    # links): the sends of the last 21.2 ms, 9.980 ... 9.998 s, are in flight at the end
    # (10 packets), so 4990 x 12000 bit / 10 s = 5.988 Mbit/s are delivered; no drops.
    r = run(tmp_path, BASE + SOURCE)
    (s,) = r.summary_json["sources"]
    assert (s["sent_packets"], s["received_packets"], s["dropped_packets"]) == (5000, 4990, 0)
    assert s["delivered_bps"] == pytest.approx(5.988e6, rel=1e-9)
    assert s["on_fraction"] == 1.0 and s["loss_rate"] == 0.0
    assert r.summary_json["flows"] == []


@pytest.mark.engine
def test_a_cbr_source_at_half_the_link_leaves_cubic_the_other_half(tmp_path):
    # 20 Mbit/s, 10 Mbit/s source, one CUBIC flow, 20 s. CUBIC can have at most the wire
    # rate the source leaves, 1448/1500 of it as goodput (9.65 Mbit/s if the source lost
    # nothing); with a 1-BDP buffer (2 BDP of CUBIC's share) CUBIC keeps its half busy, so
    # over the whole run (slow start included) it gets at least 85 % of that ceiling.
    text = (
        BASE.replace('"10Mbps"', '"20Mbps"').replace('"10s"', '"20s"')
        + CUBIC
        + SOURCE.replace('"6Mbps"', '"10Mbps"')
    )
    r = run(tmp_path, text)
    (s,) = r.summary_json["sources"]
    cubic = r.summary_json["flows"][0]["goodput_bps"]
    ceiling = (20e6 - s["delivered_bps"]) * 1448 / 1500
    assert 0.85 * ceiling <= cubic <= ceiling
    assert s["loss_rate"] < 0.02
    # Utilization counts TCP goodput only: about half the link here.
    assert r.summary_json["aggregate"]["utilization"] == pytest.approx(cubic / 20e6, rel=0.01)


@pytest.mark.engine
def test_an_exponential_on_off_source_sends_about_half_its_rate(tmp_path):
    # Means on = off = 50 ms over 60 s: about n = 600 cycles; the on fraction has standard
    # deviation sqrt(2) / (4 sqrt(n)) = 0.0144, so 3 sd = 0.043 around 0.5.
    text = (
        BASE.replace('"10s"', '"60s"')
        + SOURCE
        + 'onoff = { on = "50ms", off = "50ms", dist = "exponential" }\n'
    )
    r = run(tmp_path, text)
    (s,) = r.summary_json["sources"]
    assert abs(s["sent_packets"] / 30_000 - 0.5) < 0.043  # 30 000 sends if always on
    assert abs(s["delivered_bps"] / 6e6 - 0.5) < 0.043
    assert abs(s["on_fraction"] - 0.5) < 0.043


@pytest.mark.engine
def test_same_seed_same_output(tmp_path):
    text = BASE + CUBIC + SOURCE + 'onoff = { on = "200ms", off = "300ms", dist = "exponential" }\n'
    a = run(tmp_path, text, "a").summary_json
    b = run(tmp_path, text, "b").summary_json
    assert a["sources"] == b["sources"] and a["flows"] == b["flows"]
    c = run(tmp_path, text.replace("seed = 1", "seed = 2"), "c").summary_json
    assert c["sources"][0]["sent_packets"] != a["sources"][0]["sent_packets"]


def test_specs_without_sources_have_none_in_the_engine_config():
    cfg = world_config(parse_spec(tomllib.loads(BASE + CUBIC)))
    assert cfg["sources"] == []


@pytest.mark.parametrize(
    "extra, field",
    [
        ('rate = "6Mbps"\npacket = "2pkt"\n', "sources[0].packet"),
        ('rate = "6Mbps"\nrtt = "10ms"\n', "sources[0].rtt"),
        ('rate = "6Mbps"\nstart = "10s"\n', "sources[0].stop"),
        ('rate = "6Mbps"\nonoff = { on = "0s", off = "1s" }\n', "sources[0].onoff.on"),
        (
            'rate = "6Mbps"\nonoff = { on = "1s", off = "1s", dist = "pareto" }\n',
            "sources[0].onoff.dist",
        ),
        ('rate = "6Mbps"\nburst = 3\n', "sources[0].burst"),
    ],
)
def test_bad_sources_are_named(extra, field):
    with pytest.raises(SpecError) as e:
        parse_spec(tomllib.loads(BASE + CUBIC + "[[sources]]\n" + extra))
    assert field in str(e.value)


def test_sources_need_the_dumbbell():
    text = BASE + '[[links]]\nname = "l2"\nrate = "10Mbps"\n' + CUBIC + SOURCE
    with pytest.raises(SpecError) as e:
        parse_spec(tomllib.loads(text))
    assert "sources" in str(e.value) and "dumbbell" in str(e.value)


@pytest.mark.engine
def test_an_on_off_cubic_flow_gets_about_half_a_bulk_flows_goodput(tmp_path):
    # 10 Mbit/s, 40 ms RTT, 1 BDP buffer, on = off = 1 s for 20 s (10 on periods). Half the
    # goodput ceiling 10e6 x 1448/1500 is 4.83 Mbit/s; at most 0.4 Mbit/s more drains while
    # off (cwnd <= BDP + buffer = 100 kB per off period), and at least 85 % of it is
    # reached (slow start and restarts cost a few 40 ms RTTs per 1 s period): 4.10-5.23.
    text = BASE.replace('"10s"', '"20s"') + CUBIC + 'onoff = { on = "1s", off = "1s" }\n'
    r = run(tmp_path, text)
    assert 4.10e6 <= r.summary_json["flows"][0]["goodput_bps"] <= 5.23e6
    cfg = world_config(parse_spec(tomllib.loads(text)))
    assert cfg["flows"][0]["onoff"] == {"on_ns": 10**9, "off_ns": 10**9, "exponential": False}


def test_bad_flow_onoff_is_named():
    with pytest.raises(SpecError) as e:
        parse_spec(tomllib.loads(BASE + CUBIC + 'onoff = { on = "1s", off = "0s" }\n'))
    assert "flows[0].onoff.off" in str(e.value)


@pytest.mark.engine
def test_pcap_shows_source_packets_as_udp(tmp_path):
    # A 6 Mbit/s source next to a CUBIC flow, bottleneck captured: every departure is a
    # frame; the source's are UDP (1500-byte IP packets: the engine's wire size) and
    # their count is the bottleneck departures of the source: received + those still in
    # flight beyond the bottleneck at the end (receiver access link, 1 Gbit/s, 10 ms).
    scapy_all = pytest.importorskip("scapy.all")
    text = (
        BASE.replace("seed = 1", 'seed = 1\npcap = ["bottleneck"]').replace('"10s"', '"3s"')
        + CUBIC
        + SOURCE
    )
    r = run(tmp_path, text)
    pkts = scapy_all.rdpcap(str(tmp_path / "run" / "bottleneck.pcap"))
    udp = [p for p in pkts if p.haslayer("UDP")]
    tcp = [p for p in pkts if p.haslayer("TCP")]
    bq = next(q for q in r.run.queues if q["name"] == "bottleneck")
    assert len(udp) + len(tcp) == bq["departed"]
    assert all(p["IP"].len == 1500 and p["IP"].src == "10.3.0.1" for p in udp)
    (s,) = r.summary_json["sources"]
    assert (
        s["received_packets"] <= len(udp) <= s["received_packets"] + s["in_flight_packets_at_end"]
    )
