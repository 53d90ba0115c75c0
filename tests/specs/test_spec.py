"""Spec parsing, resolution and every error case of the spec: each bad input named by
its field."""

import pytest
from tcplab.errors import SpecError
from tcplab.lowering import resolve, size_to_packets, world_config
from tcplab.specs.load import load_spec, parse_spec
from tcplab.specs.units import Size

BASE = """
[experiment]
name = "t"
duration = "10s"

[bottleneck]
rate = "50Mbps"
delay = "2ms"
buffer = "0.5bdp"

[[flows]]
cc = "bbr"
rtt = "10ms"
count = 2

[[flows]]
cc = "cubic"
rtt = "40ms"
"""


def problems(path, **kw):
    with pytest.raises(SpecError) as info:
        load_spec(path, **kw)
    return info.value


def test_base_spec_parses(fake_engine, write_spec):
    s = load_spec(write_spec(BASE))
    assert s.flow_count() == 3
    assert s.bottleneck.rate == 50_000_000


def test_unknown_algorithm_lists_known_ones(fake_engine, write_spec):
    err = problems(write_spec(BASE.replace('cc = "cubic"', 'cc = "bbbr"')))
    assert str(err).endswith(
        "spec.toml: flows[1].cc: unknown algorithm 'bbbr'; known: reno, cubic, bbr"
    )


def test_unknown_field_names_allowed_fields(fake_engine, write_spec):
    err = problems(write_spec(BASE.replace('delay = "2ms"', 'delay = "2ms"\nbufer = "1bdp"')))
    assert (
        "bottleneck.bufer: unknown field 'bufer'; allowed: rate, delay, buffer, loss, bdp_rtt"
        in str(err)
    )


def test_bad_unit_names_field_and_units(fake_engine, write_spec):
    err = problems(write_spec(BASE.replace('rtt = "40ms"', 'rtt = "40 parsecs"')))
    assert "flows[1].rtt: unknown time unit 'parsecs'" in str(err)
    assert "allowed: ns, us, ms, s, min" in str(err)


def test_negative_rate_is_rejected(fake_engine, write_spec):
    err = problems(write_spec(BASE.replace('rate = "50Mbps"', 'rate = "-50Mbps"')))
    assert "bottleneck.rate: rate must be > 0, got '-50Mbps'" in str(err)


def test_zero_buffer_is_rejected(fake_engine, write_spec):
    err = problems(write_spec(BASE.replace('buffer = "0.5bdp"', 'buffer = "0pkt"')))
    assert "bottleneck.buffer: size must be > 0" in str(err)


def test_receive_buffer_model_and_truesize_are_checked(fake_engine, write_spec):
    err = problems(
        write_spec(BASE.replace("[bottleneck]", '[tcp]\nreceive_buffer = "big"\n\n[bottleneck]'))
    )
    assert "tcp.receive_buffer: Input should be 'linux' or 'unlimited'" in str(err)
    err = problems(
        write_spec(
            BASE.replace("[bottleneck]", "[tcp]\nmss = 1000\nrcv_truesize = 1000\n\n[bottleneck]")
        )
    )
    assert "tcp.rcv_truesize: must be > mss (1000) and <= 256 x mss bytes, got 1000" in str(err)


def test_receive_buffer_reaches_the_engine(fake_engine, write_spec):
    tcp = world_config(load_spec(write_spec(BASE)))["tcp"]
    assert tcp["receive_buffer"] == "linux" and tcp["rcv_truesize"] is None
    text = BASE.replace(
        "[bottleneck]", '[tcp]\nreceive_buffer = "unlimited"\nrcv_truesize = 4096\n\n[bottleneck]'
    )
    tcp = world_config(load_spec(write_spec(text)))["tcp"]
    assert (tcp["receive_buffer"], tcp["rcv_truesize"]) == ("unlimited", 4096)


def test_start_after_stop_is_rejected(fake_engine, write_spec):
    err = problems(write_spec(BASE + 'start = "5s"\nstop = "3s"\n'))
    assert "flows[1].start: 5s is not before stop (3s)" in str(err)


def test_stop_after_the_end_is_rejected(fake_engine, write_spec):
    err = problems(write_spec(BASE + 'stop = "11s"\n'))
    assert "flows[1].stop: 11s is after the end of the experiment (10s)" in str(err)


def test_unknown_and_out_of_range_params_are_rejected(fake_engine, write_spec):
    # The engine checks parameters (tcplab_sim::config::check_cc) and names the first
    # problem; one spec per problem.
    err = problems(
        write_spec(BASE.replace("count = 2", "count = 2\nparams = { cwnd_gain = 50.0 }"))
    )
    assert (
        "flows[0].params.cwnd_gain: parameter 'cwnd_gain' of bbr: 50.0 is outside the allowed range [0.1, 10]"
        in str(err)
    )
    err = problems(write_spec(BASE.replace("count = 2", "count = 2\nparams = { gian = 1 }")))
    assert (
        "flows[0].params.gian: unknown parameter 'gian' for bbr; known: cwnd_gain, probe_rtt_ms"
        in str(err)
    )


def test_set_override_path_must_name_a_field(fake_engine, write_spec):
    err = problems(write_spec(BASE), overrides={"bottleneck.bufer": "1bdp"})
    assert "--set bottleneck.bufer: 'bottleneck.bufer' names no field; bottleneck has:" in str(err)


def test_set_override_changes_the_value(fake_engine, write_spec):
    s = load_spec(
        write_spec(BASE), overrides={"flows[1].cc": "reno", "bottleneck.buffer": "100pkt"}
    )
    assert s.flows[1].cc == "reno"
    assert s.bottleneck.buffer == Size(100, "pkt")


def test_missing_required_field(fake_engine, write_spec):
    err = problems(write_spec(BASE.replace('duration = "10s"', "")))
    assert "experiment.duration: required field is missing" in str(err)


def test_bdp_buffer_resolves_to_packets_of_wire_size():
    from decimal import Decimal

    # 0.5 * 50e6 bit/s * 0.010 s / 8 = 31 250 bytes; / 1500 = 20.83 -> 21 packets
    assert size_to_packets(Size(Decimal("0.5"), "bdp"), 50_000_000, 10_000_000, 1500) == 21
    # 1.5 * 50e6 * 0.01 / 8 = 93 750 bytes = 62.5 packets -> rounds half up to 63
    assert size_to_packets(Size(Decimal("1.5"), "bdp"), 50_000_000, 10_000_000, 1500) == 63


def test_rtt_becomes_receiver_access_delay(fake_engine, write_spec):
    s = resolve(load_spec(write_spec(BASE)))
    # bdp_rtt defaults to the smallest flow RTT (10 ms); 0.5 BDP = 21 packets (above)
    assert s.bottleneck.bdp_rtt == 10_000_000
    assert s.bottleneck.buffer == Size(21, "pkt")
    # flow group 1: rtt 40 ms -> one way 20 ms - 2 ms bottleneck = 18 ms on the receiver side
    assert s.flows[1].access.delay == 0
    assert s.flows[1].receiver_access.delay == 18_000_000
    # access links: 100 x the bottleneck rate
    assert s.flows[1].access.rate == 5_000_000_000
    cfg = world_config(s)
    assert [f["receiver_access"]["delay_ns"] for f in cfg["flows"]] == [
        3_000_000,
        3_000_000,
        18_000_000,
    ]
    assert cfg["bottleneck"]["buffer"] == {"packets": 21}


def test_rtt_shorter_than_bottleneck_delay_is_rejected(fake_engine, write_spec):
    with pytest.raises(
        SpecError,
        match=r"flows\[0\].rtt: 3ms is shorter than the path's fixed delays; "
        r"allowed: rtt >= 2 x \(bottleneck.delay \+ given access delays\) = 4ms",
    ):
        resolve(load_spec(write_spec(BASE.replace('rtt = "10ms"', 'rtt = "3ms"'))))


def test_explicit_access_links_fill_the_rest_of_the_rtt(fake_engine, write_spec):
    text = BASE.replace('rtt = "40ms"', 'rtt = "40ms"\naccess = { rate = "40Mbps", delay = "8ms" }')
    s = resolve(load_spec(write_spec(text)))
    # 20 ms one way - 2 ms bottleneck - 8 ms sender access = 10 ms receiver access
    assert s.flows[1].access.rate == 40_000_000
    assert s.flows[1].receiver_access.delay == 10_000_000


def test_stagger_spreads_group_starts(fake_engine, write_spec):
    text = BASE.replace("count = 2", 'count = 2\nstart = "1s"\nstagger = "2.5s"')
    cfg = world_config(load_spec(write_spec(text)))
    assert [f["start_ns"] for f in cfg["flows"]] == [1_000_000_000, 3_500_000_000, 0]


def test_resolved_spec_round_trips(fake_engine, write_spec):
    from tcplab.specs.load import tomllib
    from tcplab.storage.directory import spec_toml

    s = resolve(load_spec(write_spec(BASE)))
    again = parse_spec(tomllib.loads(spec_toml(s)))
    assert resolve(again) == s
    assert world_config(again) == world_config(s)


def test_netems_percentages_are_probabilities(fake_engine, write_spec):
    # Before: loss = "1%" (netem's `loss 1%`) was refused, "must be a number, got str",
    # without suggesting 0.01. It is not ambiguous: it reads as 0.01, here and wherever a
    # probability is asked (an event's loss, netem's reorder and correlations).
    text = BASE.replace('buffer = "0.5bdp"', 'buffer = "0.5bdp"\nloss = "1%"\nreorder = "2.5%"')
    s = load_spec(write_spec(text + '\n[[events]]\nat = "5s"\nloss = "0.5 %"\n'))
    assert s.bottleneck.loss == 0.01 and s.bottleneck.reorder == 0.025
    assert s.events[0].loss == 0.005
    assert s.to_dict()["bottleneck"]["loss"] == 0.01  # the resolved spec writes the number
    err = problems(write_spec(BASE.replace('buffer = "0.5bdp"', 'loss = "1 percent"')))
    assert "bottleneck.loss" in str(err) and "'1%'" in str(err) and "0.01" in str(err)
    err = problems(write_spec(BASE.replace('buffer = "0.5bdp"', 'loss = "100%"')))
    assert "bottleneck.loss" in str(err) and "less than 1" in str(err)


def test_a_table_where_a_list_of_tables_belongs_says_double_brackets(fake_engine, write_spec):
    # Before: [flows] instead of [[flows]] answered "flows: Input should be a valid list",
    # which does not say what TOML wants.
    err = problems(write_spec(BASE.replace("[[flows]]", "[flows]", 1).split("[[flows]]")[0]))
    assert "flows: a list of tables, written [[flows]] in TOML" in str(err), str(err)
    assert "[flows] makes a single table" in str(err)
    err = problems(write_spec(BASE + '\n[events]\nat = "1s"\nrate = "5Mbps"\n'))
    assert "events: a list of tables, written [[events]]" in str(err), str(err)
    err = problems(write_spec(BASE.replace('rtt = "40ms"', 'rtt = "40ms"\npath = "bottleneck"')))
    assert "flows[1].path: a list, written [a, b, ...] in TOML; got a string" in str(err)
