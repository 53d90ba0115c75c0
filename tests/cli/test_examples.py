"""``tcplab examples``: the shipped specs, notebook and BPF programs, listed by name and
copied out without replacing anything."""

from __future__ import annotations

from pathlib import Path

from tcplab.cli.app import main
from tcplab.examples import example_path

REPO = Path(__file__).resolve().parents[2]


def test_the_list_names_each_kind_and_how_to_use_it(capsys):
    assert main(["examples"]) == 0
    rows = {
        line.split()[0]: line.split()[1:3]
        for line in capsys.readouterr().out.splitlines()[1:]
        if line.strip() and not line.startswith("copy")
    }
    assert rows["quickstart"] == ["spec", "quickstart.toml"]
    assert rows["first_hour"] == ["notebook", "first_hour.ipynb"]
    assert rows["cubic"] == ["bpf", "bpf:cubic"]


def test_the_checkouts_experiments_are_the_shipped_files():
    # The README's commands and the wheel's examples agree: experiments/*.toml and
    # examples/first_hour.ipynb are byte-identical copies of the files the wheel ships.
    # Copies, not links, so that `cp -r examples/ elsewhere` gives working files
    # (issue 45). After editing the shipped file, refresh the checkout's copy with
    # `cp python/tcplab/data/examples/NAME experiments/NAME` (or examples/).
    for copy, name in [
        (REPO / "experiments" / "quickstart.toml", "quickstart"),
        (REPO / "experiments" / "buffer_sweep.toml", "buffer_sweep"),
        (REPO / "experiments" / "bpf_cubic.toml", "bpf_cubic"),
        (REPO / "examples" / "first_hour.ipynb", "first_hour"),
        (REPO / "examples" / "gym_cem.py", "gym/gym_cem.py"),
        (REPO / "examples" / "gym_cem.ipynb", "gym/gym_cem.ipynb"),
        (REPO / "examples" / "gym_ppo.py", "gym/gym_ppo.py"),
        (REPO / "experiments" / "gym" / "train.toml", "gym/train.toml"),
        (REPO / "experiments" / "gym" / "heldout.toml", "gym/heldout.toml"),
    ]:
        assert not copy.is_symlink(), f"{copy} must be a copy, not a link"
        shipped = _shipped(name)
        assert copy.read_bytes() == shipped.read_bytes(), (
            f"{copy} differs from {shipped}: cp the shipped file over it"
        )


def _shipped(name: str) -> Path:
    """An example's file, or a file inside a bundle ("gym/train.toml")."""
    bundle, _, inner = name.partition("/")
    return example_path(bundle) / inner if inner else example_path(name)


def test_copies_are_refused_whole_when_one_target_exists(tmp_path, capsys):
    (tmp_path / "cubic.bpf.c").write_text("my own cubic")
    assert main(["examples", "quickstart", "cubic", "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "cubic.bpf.c" in err and "already there" in err, err
    assert (tmp_path / "cubic.bpf.c").read_text() == "my own cubic"
    assert not (tmp_path / "quickstart.toml").exists()  # nothing copied


def test_an_unknown_name_lists_the_known_ones(tmp_path, capsys):
    assert main(["examples", "qickstart", "-o", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "'qickstart'" in err and "quickstart" in err and "cubic" in err, err
    assert list(tmp_path.iterdir()) == []


def test_a_copied_spec_is_the_shipped_one(tmp_path, capsys):
    assert main(["examples", "quickstart", "-o", str(tmp_path / "new")]) == 0
    assert capsys.readouterr().out.strip() == str(tmp_path / "new" / "quickstart.toml")
    assert (tmp_path / "new" / "quickstart.toml").read_bytes() == example_path(
        "quickstart"
    ).read_bytes()
