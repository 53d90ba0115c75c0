"""The shipped examples' objects (tcplab.bpf_shipped): where clang or libbpf's headers are
missing, an unmodified example runs from the object the wheel carries; an edited copy,
or a flow with build flags, still needs clang and says so. The objects are built here as
scripts/build_wheel.sh builds them (scripts/build_bpf_objects.py), so this needs clang
to set up; it skips, saying why, without it."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from script_module import script_module
from tcplab import bpf, bpf_build, bpf_shipped

pytestmark = pytest.mark.skipif(
    bpf.compiler_missing() is not None,
    reason="building the objects needs clang and libbpf-dev's headers",
)


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """The objects built into a directory of the test's, then clang hidden."""
    monkeypatch.setenv("TCPLAB_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "objects"
    monkeypatch.setattr(bpf_shipped, "OBJECTS", out)
    monkeypatch.setattr(bpf_shipped, "MANIFEST", out / "objects.json")
    script_module("build_bpf_objects").build(out)
    monkeypatch.setattr(bpf_build, "compiler_missing", lambda: "clang")  # object_for asks there
    return out


def test_every_example_is_built_with_its_inputs_recorded(shipped):
    manifest = json.loads((shipped / "objects.json").read_text())
    assert sorted(manifest["objects"]) == [f"{n}.bpf.c" for n in bpf.example_names()]
    reno = manifest["objects"]["reno.bpf.c"]
    source = (bpf.EXAMPLES / "reno.bpf.c").read_bytes()
    assert reno["inputs"]["source"] == hashlib.sha256(source).hexdigest()
    assert set(reno["inputs"]) == {"source", "tcplab_cc.h", "vmlinux.h.gz"}
    assert manifest["clang"]


@pytest.mark.engine
def test_an_example_runs_from_its_object_without_clang(shipped):
    obj = bpf.object_for(bpf.EXAMPLES / "reno.bpf.c")
    assert obj.read_bytes() == (shipped / "reno.bpf.o").read_bytes()
    assert bpf.program("bpf:cubic").name == "bpf_cubic"


def test_an_edited_copy_still_needs_clang(shipped, tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    copy = tmp_path / "reno.bpf.c"
    copy.write_text((bpf.EXAMPLES / "reno.bpf.c").read_text() + "\n// edited\n")
    with pytest.raises(bpf.BpfBuildError, match="needs clang"):
        bpf.object_for(copy)
    # The very example, but with a flow's define: compiled, so clang again.
    with pytest.raises(bpf.BpfBuildError, match="needs clang"):
        bpf.object_for(bpf.EXAMPLES / "reno.bpf.c", bpf.Build(define=(("X", "1"),)))


def test_a_damaged_object_is_not_used(shipped, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda _name: None)
    obj = shipped / "reno.bpf.o"
    obj.write_bytes(obj.read_bytes()[:-8])
    with pytest.raises(bpf.BpfBuildError, match="needs clang"):
        bpf.object_for(bpf.EXAMPLES / "reno.bpf.c")
    # Nor one whose source differs from what it was built from.
    assert bpf_shipped.object_for(bpf.EXAMPLES / "cubic.bpf.c", b"// another\n") is None


def test_the_objects_are_never_committed():
    # scripts/build_wheel.sh writes them into the package for one build and removes them
    # after; they are not in .gitignore because maturin leaves gitignored files out of
    # the wheel. A `git add -A` during a wheel build once committed them: this says so.
    import subprocess

    from tcplab.bpf_shipped import OBJECTS

    repo = OBJECTS.parents[4]
    r = subprocess.run(
        ["git", "-C", str(repo), "ls-files", str(OBJECTS.relative_to(repo))],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0:
        pytest.skip("not a git checkout")
    assert r.stdout == "", r.stdout
