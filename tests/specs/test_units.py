from decimal import Decimal

import pytest
from tcplab.specs.units import Size, format_rate, format_time, parse_rate, parse_size, parse_time


def test_rates_parse_to_exact_bits_per_second():
    assert parse_rate("10Mbps") == 10_000_000
    assert parse_rate("500kbps") == 500_000
    assert parse_rate("2.5Gbps") == 2_500_000_000
    assert parse_rate("1.5 mbit/s") == 1_500_000


def test_times_parse_to_exact_nanoseconds():
    assert parse_time("40ms") == 40_000_000
    assert parse_time("2.5s") == 2_500_000_000
    assert parse_time("250us") == 250_000
    assert parse_time("0s") == 0


def test_sizes_keep_their_kind():
    assert parse_size("100pkt") == Size(Decimal(100), "pkt")
    assert parse_size("150KB") == Size(Decimal(150_000), "bytes")
    assert parse_size("64KiB") == Size(Decimal(65_536), "bytes")
    assert parse_size("1.5bdp") == Size(Decimal("1.5"), "bdp")
    assert parse_size("unlimited").unit == "unlimited"


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("10", "has no unit"),
        ("10 furlongs", "unknown rate unit"),
        ("-5Mbps", "must be > 0"),
        ("0Mbps", "must be > 0"),
        ("0.5bps", "not a whole number"),
    ],
)
def test_bad_rates_say_what_is_allowed(text, fragment):
    with pytest.raises(ValueError, match=fragment):
        parse_rate(text)


def test_bare_number_rate_is_rejected_with_an_example():
    with pytest.raises(ValueError, match="10Mbps"):
        parse_rate(10_000_000)


@pytest.mark.parametrize("text", ["0pkt", "0bdp", "0KB", "1.5pkt", "3 parsecs"])
def test_bad_sizes_are_rejected(text):
    with pytest.raises(ValueError):
        parse_size(text)


def test_formatting_round_trips():
    for ns in [0, 1, 1500, 2_500_000, 40_000_000, 2_500_000_000, 60_000_000_000]:
        assert parse_time(format_time(ns)) == ns
    for bps in [1, 999, 500_000, 1_500_000, 50_000_000, 10**10]:
        assert parse_rate(format_rate(bps)) == bps
    assert format_time(2_500_000_000) == "2.5s"
    assert format_rate(50_000_000) == "50Mbps"


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@given(st.integers(min_value=0, max_value=10**15))
def test_any_time_survives_format_and_parse(ns):
    assert parse_time(format_time(ns)) == ns


@given(st.integers(min_value=1, max_value=10**13))
def test_any_rate_survives_format_and_parse(bps):
    assert parse_rate(format_rate(bps)) == bps


@pytest.mark.parametrize(
    "text, bps",
    [
        ("10mbit", 10_000_000),
        ("500kbit", 500_000),
        ("1gbit", 10**9),
        ("64bit", 64),
        ("2tbit", 2 * 10**12),
    ],
)
def test_tc_rate_units_are_bits_per_second(text, bps):
    assert parse_rate(text) == bps


@pytest.mark.parametrize(
    "text, ns", [("20msec", 20_000_000), ("5usec", 5_000), ("2sec", 2 * 10**9)]
)
def test_tc_time_units(text, ns):
    assert parse_time(text) == ns


@pytest.mark.parametrize(
    "text", ["50mbps", "50MBps", "50gbps", "50GBps", "50KBps", "50MBPS", "5Bps"]
)
def test_byte_or_tc_spellings_of_bps_are_refused_as_ambiguous(text):
    # tc reads '50mbps' as 50 megabytes per second (400 Mbit/s) and 'MBps' reads as
    # bytes: taking either as 50 Mbit/s would be an 8x error without a word.
    with pytest.raises(ValueError, match="ambiguous rate unit") as e:
        parse_rate(text)
    assert "Mbps" in str(e.value) and "mbit" in str(e.value)


@pytest.mark.parametrize(
    "text, bps",
    [("50Mbps", 50_000_000), ("50Kbps", 50_000), ("50Mbit", 50_000_000), ("50MBIT/S", 50_000_000)],
)
def test_the_papers_bit_spellings_still_read_as_bits(text, bps):
    assert parse_rate(text) == bps
