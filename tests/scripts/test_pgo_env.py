"""scripts/pgo_env.sh, which install.sh and build_wheel.sh source: with the committed
profile it points rustc at an unpacked copy named by the profile's hash (so a new profile
is a new flag and cargo rebuilds), keeps flags already set, and does nothing with
TCPLAB_PGO=0."""

from __future__ import annotations

import gzip
import hashlib
import os
import shlex
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
PROFILE = ROOT / "crates" / "py" / "pgo" / "engine.profdata.gz"


def _env_after_sourcing(tmp_path: Path, **env: str) -> dict[str, str]:
    base = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), **env}
    script = f". {shlex.quote(str(ROOT / 'scripts' / 'pgo_env.sh'))}; env -0"
    out = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        env=base,
        cwd=tmp_path,
        capture_output=True,
        check=True,
    ).stdout
    return dict(kv.split("=", 1) for kv in out.decode().split("\0") if "=" in kv)


def test_the_profile_is_unpacked_under_its_hash_and_named_to_rustc(tmp_path):
    env = _env_after_sourcing(tmp_path, CARGO_TARGET_DIR=str(tmp_path / "t"), RUSTFLAGS="-Dx")
    digest = hashlib.sha256(PROFILE.read_bytes()).hexdigest()[:16]
    unpacked = tmp_path / "t" / f"engine-{digest}.profdata"
    assert unpacked.read_bytes() == gzip.decompress(PROFILE.read_bytes())
    assert env["RUSTFLAGS"] == (
        f"-Dx -Cprofile-use={unpacked} -Cllvm-args=-pgso=false -Cllvm-args=-no-pgo-warn-mismatch"
    )
    assert env["CARGO_TARGET_DIR"] == str(tmp_path / "t")


def test_without_a_target_directory_it_builds_in_target_pgo(tmp_path):
    env = _env_after_sourcing(tmp_path)
    assert env["CARGO_TARGET_DIR"] == str(ROOT / "target" / "pgo")
    assert env["RUSTFLAGS"].startswith(f"-Cprofile-use={ROOT / 'target' / 'pgo'}/engine-")


def test_a_relative_target_directory_gives_rustc_an_absolute_path(tmp_path):
    env = _env_after_sourcing(tmp_path, CARGO_TARGET_DIR="rel")
    flag = env["RUSTFLAGS"].split()[0]
    assert flag.startswith(f"-Cprofile-use={tmp_path}/rel/engine-"), flag
    assert Path(flag.removeprefix("-Cprofile-use=")).is_file()


def test_tcplab_pgo_0_leaves_the_build_alone(tmp_path):
    env = _env_after_sourcing(tmp_path, TCPLAB_PGO="0")
    assert "RUSTFLAGS" not in env and "CARGO_TARGET_DIR" not in env
