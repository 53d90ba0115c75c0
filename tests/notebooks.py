"""Running a shipped notebook in a test: its committed form has no outputs, and it runs
top to bottom in a fresh kernel (nbclient) with its ``parameters`` cell replaced."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def assert_committed_without_outputs(nbformat: Any, path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


def run_with_parameters(
    nbformat: Any, nbclient: Any, path: Path, parameters: list[str], cwd: Path
) -> tuple[Any, list[str]]:
    """Execute the notebook at ``path`` in ``cwd`` with its one ``parameters`` cell
    replaced by ``parameters`` (lines); the executed notebook and its text outputs.
    Raises nbclient's CellExecutionError, with the cell and traceback, on failure."""
    nb = nbformat.read(path, as_version=4)
    params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1
    params[0].source = "\n".join(parameters)
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    )
    client.execute()
    texts = [
        o.get("data", {}).get("text/plain", "")
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
    ]
    return nb, texts
