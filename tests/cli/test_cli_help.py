"""Every command's --help ends with examples."""

import argparse

import pytest
from tcplab.cli.app import build_parser, main


def _subcommands() -> list[str]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(action.choices)


def test_the_parser_has_the_commands_the_readme_lists():
    assert set(_subcommands()) >= {
        "run",
        "sweep",
        "reproduce",
        "report",
        "compare",
        "algorithms",
        "validate",
        "doctor",
        "import-tum",
        "completion",
    }


@pytest.mark.parametrize("command", [[]] + [[c] for c in _subcommands()])
def test_help_has_an_examples_section(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    head, _, examples = out.partition("\nexamples:\n")
    assert examples, f"tcplab {' '.join(command)} --help has no examples section"
    lines = [x for x in examples.splitlines() if x.strip()]
    # at least one example, each line laid out as written (indented, not re-wrapped)
    assert lines and all(x.startswith("  ") for x in lines)
    # and they use the command they document
    assert any(f"tcplab {command[0]}" in x for x in lines) if command else len(lines) >= 3
