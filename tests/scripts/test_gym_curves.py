"""scripts/gym_curves.py reads gym_cem.py's printed validation scores in order and draws
them; a log without them, or out of order, is refused with no figure left behind."""

from __future__ import annotations

from script_module import script_module

LOG = """iteration 1/3: validation score -0.225
iteration 2/3: validation score 0.274
some table line
iteration 3/3: validation score 0.4
"""


def test_scores_are_read_in_order(tmp_path):
    p = tmp_path / "s0.log"
    p.write_text(LOG)
    assert script_module("gym_curves").curve(p) == [-0.225, 0.274, 0.4]


def test_a_figure_is_drawn(tmp_path):
    p = tmp_path / "s0.log"
    p.write_text(LOG)
    out = tmp_path / "c.png"
    assert script_module("gym_curves").main([str(p), "-o", str(out), "--baseline", "0.1"]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"


def test_bad_logs_are_refused_and_nothing_is_written(tmp_path, capsys):
    empty, shuffled = tmp_path / "empty.log", tmp_path / "shuffled.log"
    empty.write_text("nothing\n")
    shuffled.write_text("iteration 2/3: validation score 0.1\n")
    out = tmp_path / "c.png"
    for log, why in ((empty, "no 'iteration"), (shuffled, "out of order")):
        assert script_module("gym_curves").main([str(log), "-o", str(out)]) == 2
        assert why in capsys.readouterr().err
    assert list(tmp_path.glob("*.png")) == []
