"""The report's entry line names the kernel profile and, for tcp_bbr.c-based algorithms,
whether BBR's ACK-aggregation allowance (extra_acked, Linux 5.1) was in it."""

from tcplab.reproduce.kernel_profile import profile_line


def test_a_bbr_entry_on_an_old_profile_runs_without_extra_acked():
    raw = {"tcp": {"kernel": "4.17"}, "flows": [{"cc": "bbr-acd"}]}
    assert profile_line(raw) == (
        "kernel profile 4.17; BBR's ACK-aggregation allowance (extra_acked): "
        "off (the profile predates 5.1)"
    )


def test_the_default_profile_has_it_and_a_swept_bbr_counts():
    raw = {"flows": [{"cc": "cubic"}], "sweep": {"flows[0].cc": ["cubic", "bbr"]}}
    assert profile_line(raw) == (
        "kernel profile 6.18; BBR's ACK-aggregation allowance (extra_acked): on"
    )


def test_entries_without_tcp_bbr_say_only_the_profile():
    assert profile_line({"flows": [{"cc": "cubic"}, {"cc": "vegas"}]}) == "kernel profile 6.18"


def test_an_entry_that_sets_it_says_so():
    raw = {"flows": [{"cc": "bbr", "params": {"extra_acked": False}}]}
    assert profile_line(raw).endswith("(extra_acked): set by the entry")
    raw = {"flows": [{"cc": "bbr-cws"}], "sweep": {"flows[0].params.kernel": [618, 414]}}
    assert profile_line(raw).endswith("set per flow by the entry (`params.kernel`)")
