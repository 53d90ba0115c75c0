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


def test_bash_completion_offers_backends_and_catalogue_entries(tmp_path, capsys):
    import shutil
    import subprocess

    if shutil.which("bash") is None:
        pytest.skip("no bash on this machine")
    assert main(["completion", "bash"]) == 0
    script = tmp_path / "tcplab.bash"
    script.write_text(capsys.readouterr().out)

    def complete(line: str) -> list[str]:
        words = line.split(" ")
        shell = (
            f"source {script}; COMP_WORDS=({' '.join(repr(w) for w in words)}); "
            f"COMP_CWORD={len(words) - 1}; COMP_LINE={line!r}; COMP_POINT=${{#COMP_LINE}}; "
            '_shtab_tcplab; echo "${COMPREPLY[@]}"'
        )
        out = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, check=True)
        return out.stdout.split()

    assert complete("tcplab run s.toml --backend ") == ["sim", "kernel", "sim,kernel"]
    assert complete("tcplab reproduce tum-fig0") == [
        "tum-fig03-cpu-load",
        "tum-fig04-changing-conditions",
        "tum-fig05a-rtt-unfairness",
        "tum-fig05b-rtt-groups",
        "tum-fig06-bdp-overestimation",
        "tum-fig06-kernel-6.18-control",
        "tum-fig07-probe-rtt-overlap",
        "tum-fig08-kernel-6.18-control",
        "tum-fig08-retransmissions-vs-buffer",
        "tum-fig09-bbr-cubic-oscillation",
    ]
    assert "cws" in complete("tcplab reproduce c")
