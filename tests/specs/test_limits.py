"""Runs the engine cannot do, or this machine cannot hold, are refused before they start,
naming the field, the estimate and the limit."""

import pytest
from tcplab.errors import SpecError
from tcplab.lowering import resolve
from tcplab.runs.sweep import plan_sweep
from tcplab.specs.load import parse_spec


def raw(rate="10Mbps", duration="1s", interval="100ms", count=1, events=None):
    r = {
        "experiment": {"duration": duration, "sample_interval": interval},
        "bottleneck": {"rate": rate, "delay": "10ms"},
        "flows": [{"cc": "bbr", "rtt": "40ms", "count": count}],
    }
    if events:
        r["events"] = events
    return r


def problems(r):
    with pytest.raises(SpecError) as err:
        resolve(parse_spec(r))
    return dict(err.value.problems)


def test_rate_above_bbrs_bandwidth_word_is_refused(fake_engine):
    # 256 packets/us x 1500 B x 8 = 3.072 Tbit/s
    p = problems(raw(rate="10000Gbps"))
    assert "3.072 Tbit/s" in p["bottleneck.rate"] and "BW_SCALE" in p["bottleneck.rate"]
    p = problems(raw(events=[{"at": "0.5s", "rate": "4Tbps"}]))
    assert "events[0].rate" in p


def test_one_terabit_fits_the_rate_and_memory_limits(fake_engine, monkeypatch):
    # 1e12 x 0.04 / 8 / 1500 = 3 333 333 packets in flight + a 1 BDP buffer of 3 333 333:
    # 6.67 M x 400 B = 2.7 GB, under 8 GB (the machine's own limit is read otherwise:
    # tests/specs/test_memory.py)
    monkeypatch.setenv("TCPLAB_MEMORY_LIMIT_GB", "8")
    resolve(parse_spec(raw(rate="1000Gbps")))
    resolve(parse_spec(raw(rate="1Tbps")))


def test_memory_estimate_names_the_limit(fake_engine, monkeypatch):
    monkeypatch.setenv("TCPLAB_MEMORY_LIMIT_GB", "1")
    p = problems(raw(rate="1000Gbps"))
    assert "about 2.7 GB" in p["bottleneck"] and "limit is 1.0 GB" in p["bottleneck"]


def test_microsecond_sampling_is_refused_with_the_row_count(fake_engine):
    # 1 s / 1 us + 1 = 1 000 001 samples x (2 flows + the queue) = 3 000 003 rows
    p = problems(raw(interval="1us", count=2))
    assert "3,000,003 series rows" in p["experiment.sample_interval"]


def test_event_delay_over_an_hour_is_refused(fake_engine):
    p = problems(raw(events=[{"at": "0.5s", "delay": "7200s"}]))
    assert "events[0].delay" in p


def test_huge_sweep_is_refused_before_expanding(fake_engine):
    r = raw()
    r["sweep"] = {"repeat": 1_000_000_000, "bottleneck.buffer": ["1bdp", "2bdp"]}
    # refused from the counts: expanding 2e9 jobs first would exhaust memory
    with pytest.raises(SpecError, match="2,000,000,000 runs"):
        plan_sweep(r)


def test_too_many_events_are_refused_before_validation():
    # Before: 300 000 [[events]] were accepted after 52 s and 1 GB of validation. Now the
    # count is checked on the raw document: these events are each invalid too, and only
    # the count is reported, since none of them was validated.
    from tcplab.specs.limits import MAX_EVENTS

    r = raw(events=[{"at": "not a time"}] * (MAX_EVENTS + 1))
    with pytest.raises(SpecError) as err:
        parse_spec(r)
    assert [p for p, _ in err.value.problems] == ["events"]
    msg = dict(err.value.problems)["events"]
    assert f"{MAX_EVENTS + 1:,} events" in msg and f"limit is {MAX_EVENTS:,}" in msg
    assert "trace" in msg


def test_events_up_to_the_limit_are_validated(fake_engine):
    from tcplab.specs.limits import MAX_EVENTS

    events = [{"at": f"{k}ms", "rate": "5Mbps"} for k in range(MAX_EVENTS)]
    assert len(parse_spec(raw(duration="20s", events=events)).events) == MAX_EVENTS


def test_too_many_event_headers_are_refused_before_the_toml_is_parsed(tmp_path):
    # tomllib takes about 40 us a table: 300 000 [[events]] cost 13 s before validation
    # began. The headers are counted in the text; the file here does not even parse (its
    # last line is broken), and the count is what is reported.
    from tcplab.specs.limits import MAX_EVENTS
    from tcplab.specs.load import load_spec

    spec = tmp_path / "many.toml"
    spec.write_text('[[events]]\nat = "1s"\n' * (MAX_EVENTS + 1) + "at = = broken\n")
    with pytest.raises(SpecError) as err:
        load_spec(spec)
    assert [p for p, _ in err.value.problems] == ["events"], err.value
    assert str(spec) in str(err.value)
