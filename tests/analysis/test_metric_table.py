"""The one table of metrics (python/tcplab/metric_table.py): docs/METRICS.md's generated
section is the table's; every function it names exists; the lists of names derived from
it are the ones the rest of tcplab reads; summary.json writes exactly its keys."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from tcplab import metric_table as t

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "snapshots" / "summaries"


def test_metrics_md_is_generated_from_the_table():
    doc = (ROOT / "docs" / "METRICS.md").read_text()
    assert t.BEGIN in doc and t.END in doc, "docs/METRICS.md lost its generated section"
    assert t.with_table(doc) == doc, (
        "docs/METRICS.md differs from python/tcplab/metric_table.py; regenerate it with "
        "`python -m tcplab.metric_table docs/METRICS.md`"
    )


def test_the_five_keys_the_doc_lacked_are_in_it():
    doc = (ROOT / "docs" / "METRICS.md").read_text()
    for key in (
        "p10_backlog_pkts",
        "marked_packets",
        "mean_sojourn_ms",
        "probe_rtt_sync_s",
        "bw_estimate_sum_over_rate_mean",
    ):
        assert f"| `{key}` |" in doc


def test_every_named_function_exists():
    for x in t.TABLE:
        module, name = ("tcplab." + x.compute).rsplit(".", 1)
        assert callable(getattr(importlib.import_module(module), name)), x


def test_rows_are_well_formed():
    seen = set()
    for x in t.TABLE:
        assert x.scope in t.SCOPES, x
        assert (x.scope, x.name) not in seen, f"{x.name} twice in scope {x.scope}"
        seen.add((x.scope, x.name))
        assert x.definition.endswith("."), x.name
        assert not x.summed or x.checks, x.name
    for place in ("compare", "sweep"):  # positions are 1, 2, ... without gaps per scope
        for scope in t.SCOPES:
            pos = sorted(
                getattr(x, place) for x in t.TABLE if x.scope == scope and getattr(x, place)
            )
            assert pos == list(range(1, len(pos) + 1)), (place, scope)


def test_derived_lists_are_read_where_they_are_used():
    from tcplab.analysis import summary
    from tcplab.report import compare
    from tcplab.runs import sweep
    from tcplab.specs import checks

    assert checks.AGGREGATE_KEYS is t.AGGREGATE_KEYS is summary.AGGREGATE_KEYS
    assert checks.WINDOW_AGGREGATE is t.WINDOW_AGGREGATE
    assert checks.PER_FLOW is t.PER_FLOW and checks.WINDOW_PER_FLOW is t.WINDOW_PER_FLOW
    assert compare.AGGREGATE_METRICS is t.COMPARE_AGGREGATE
    assert compare.FLOW_METRICS is t.COMPARE_FLOW
    assert sweep.DEFAULT_METRICS == t.SWEEP_DEFAULT
    # The lists as they were before the table (hand-copied from main at 5f864bf): the
    # table changed no list, only where the lists come from.
    assert t.SWEEP_DEFAULT == [
        "total_goodput_bps",
        "jain_index",
        "utilization",
        "retransmitted_packets",
        "mean_queueing_delay_ms",
    ]
    assert t.COMPARE_AGGREGATE[:3] == ["utilization", "total_goodput_bps", "jain_index"]
    assert t.COMPARE_FLOW[:3] == ["share", "goodput_bps", "throughput_bps"]
    assert t.WINDOW_AGGREGATE == [
        "jain_index",
        "utilization",
        "total_goodput_bps",
        "retransmitted_packets",
        "mean_backlog_pkts",
        "p10_backlog_pkts",
        "mean_queueing_delay_ms",
    ]
    assert t.BY_CC == {"share", "share_minus_fair_share"}
    assert len(t.AGGREGATE_KEYS) == 22 and len(t.PER_FLOW) == 24 and len(t.SUMMED) == 12


@pytest.mark.parametrize("name", ["mixed", "aqm_fct", "many", "sync"])
def test_the_table_lists_every_key_summary_json_writes(name):
    doc = json.loads((FIXTURES / f"{name}.summary.json").read_text())
    assert list(doc["aggregate"]) == t.AGGREGATE_KEYS
    flow_keys = set(t.names("flow")) | {"flow"}
    for f in doc["flows"]:
        assert set(f) <= flow_keys, set(f) - flow_keys
    for cc in doc["by_cc"].values():
        assert set(cc) == set(t.names("by_cc"))
    if "fct" in doc:
        assert list(doc["fct"]) == t.names("fct")
    for w in [doc.get("window"), *doc.get("windows", {}).values()]:
        if w is None:
            continue
        assert set(w["aggregate"]) == set(t.WINDOW_AGGREGATE)
        for f in w["flows"]:
            assert set(f) == set(t.names("window_flow")) | {"flow"}
        for cc in w["by_cc"].values():
            assert set(cc) == set(t.names("window_by_cc"))


def test_units_come_from_the_reports_unit_rule():
    from tcplab.report.units import unit

    assert unit("goodput_bps[flow0]") == (1e6, "Mbit/s")
    assert unit("window.share[bbr]") == (1.0, "fraction")
    assert unit("cc_min_rtt_us") == (1e3, "ms")
    by_name = {x.name: x for x in t.AGGREGATE}
    assert by_name["total_goodput_bps"].unit == "Mbit/s"
    assert by_name["mean_queueing_delay_ms"].unit == "ms"
    assert by_name["jain_index"].unit == "index, 1 = fair"


def test_compare_names_and_scales_by_the_unit_rule():
    from tcplab.report.compare import shown_metric

    assert shown_metric("goodput_bps") == ("goodput_mbps", 1e6)
    assert shown_metric("total_goodput_bps") == ("total_goodput_mbps", 1e6)
    assert shown_metric("share[bbr]") == ("share[bbr]", 1.0)
    assert shown_metric("mean_rtt_ms") == ("mean_rtt_ms", 1.0)
    assert shown_metric("cc_min_rtt_us") == ("cc_min_rtt_ms", 1e3)


def test_report_panel_lines():
    lines = t.panel_lines(
        {
            "total_goodput_bps": 12.345e6,
            "utilization": 0.95,
            "jain_index": 0.5,
            "jain_index_mean": None,
            "t_f95_s": 2.25,
            "f_avg": 0.875,
            "retransmitted_packets": 12,
            "mean_backlog_pkts": 3.25,
            "max_backlog_pkts": 9.0,
            "mean_queueing_delay_ms": 1.5,
        }
    )
    assert lines == [
        "total goodput   12.35 Mbit/s",
        "utilization     0.950",
        "Jain F_tp       0.500   mean F n/a",
        "T_F95           2.2 s   F_avg 0.875",
        "retransmitted   12 packets",
        "mean backlog    3.2 packets   max 9 packets",
        "queueing delay  1.50 ms",
    ]


def test_every_aggregate_row_names_the_function_that_fills_it():
    from tcplab.analysis import summary

    for x in t.AGGREGATE:
        assert x.compute == f"analysis.summary.aggregate_{x.name}", x.name
    assert list(summary._row_functions()) == t.AGGREGATE_KEYS


@pytest.mark.engine
def test_a_row_added_to_the_table_is_computed(monkeypatch):
    """The table drives the aggregate block: a row added (here a second name for
    jain_index's function) appears in the block, after the others, with that function's
    value, and nothing else has to change."""
    import tcplab
    from tcplab.analysis import per_flow, summary

    r = tcplab.run(FIXTURES / "sync.toml", report=False)
    extra = t.Metric("jain_again", "aggregate", "analysis.summary.aggregate_jain_index", "x.")
    monkeypatch.setattr(summary, "AGGREGATE", [*t.AGGREGATE, extra])
    summary._row_functions.cache_clear()
    try:
        agg = summary.aggregate(summary.AggregateInputs(r.run, per_flow.flow_metrics(r.run)))
    finally:
        monkeypatch.undo()
        summary._row_functions.cache_clear()
    assert list(agg) == [*t.AGGREGATE_KEYS, "jain_again"]
    assert agg["jain_again"] == r.summary_json["aggregate"]["jain_index"] > 0.5
