"""A policy trained in PyTorch deploys as ``policy:FILE.onnx`` (issue 38): a torch MLP
exported by ``torch.onnx.export`` (both of torch's exporters) gives inside the engine the
actions torch computes on the same observations, to 1e-6 (the engine runs the float32
weights in f64, torch in float32: tcplab/onnx_policy.py's Deviations), and runs a
simulated flow; a stable-baselines3 PPO actor exported by examples/gym_ppo.py gives the
engine the actions SB3's ``predict(deterministic=True)`` gives, its clip included.

Needs torch (the ``rl`` extra, ~5 GB with its CUDA libraries): skipped in CI, which
installs ``dev`` only. tests/gym/test_onnx_policy.py covers the ONNX reader without torch.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install 'tcplab[rl]' (~5 GB)")
onnx = pytest.importorskip("onnx", reason="needs the onnx package: pip install 'tcplab[rl]'")
pytest.importorskip("tcplab._engine", reason="needs the compiled engine")

from tcplab import api, policy  # noqa: E402
from tcplab.engine import engine  # noqa: E402
from test_onnx_policy import _observations  # noqa: E402  (the same seeded observations)

pytestmark = pytest.mark.engine
REPO = Path(__file__).resolve().parents[2]


def _mlp() -> torch.nn.Module:
    """Linear(30, 16) - Tanh - Linear(16, 1), torch's default initialisation from a fixed
    seed; the last layer's weights scaled x 4 so that the actions spread over several
    units of Aurora's [-10, 10] (not all near 0, where an error would hide)."""
    torch.manual_seed(38)
    net = torch.nn.Sequential(torch.nn.Linear(30, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    with torch.no_grad():
        net[2].weight.mul_(4.0)
    return net.eval()


def _export(net: torch.nn.Module, path: Path, dynamo: bool) -> str:
    with torch.no_grad():
        torch.onnx.export(
            net,
            (torch.zeros(1, 30),),
            str(path),
            input_names=["obs"],
            output_names=["action"],
            dynamo=dynamo,
        )
    m = onnx.load(str(path))
    onnx.helper.set_model_props(m, {"tcplab.name": "torch-mlp"})
    onnx.save(m, str(path))
    return f"{policy.PREFIX}{path}"


def _exporters() -> list:
    """torch's TorchScript exporter (``dynamo=False``, no further package) and its
    dynamo exporter (the default since torch 2.9; needs onnxscript)."""
    has_onnxscript = importlib.util.find_spec("onnxscript") is not None
    return [
        pytest.param(False, id="torchscript"),
        pytest.param(
            True,
            id="dynamo",
            marks=pytest.mark.skipif(not has_onnxscript, reason="needs onnxscript"),
        ),
    ]


@pytest.mark.parametrize("dynamo", _exporters())
def test_the_engine_acts_as_torch_does(tmp_path, dynamo):
    net = _mlp()
    cc = _export(net, tmp_path / "p.onnx", dynamo)
    translated = policy.load(cc)
    # Gemm (transB = 1, nn.Linear's export) + Tanh, then Gemm: two dense layers.
    assert [layer["activation"] for layer in translated["layers"]] == ["tanh", "linear"]
    eng = engine().Policy(json.dumps(translated))
    obs = _observations(200)
    with torch.no_grad():
        want = net(torch.from_numpy(obs)).numpy()[:, 0].astype(float)
    got = np.array([eng.act(o.tolist()) for o in obs])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    # The actions spread: a constant network would pass the comparison too.
    assert want.std() > 0.5 and len(np.unique(want)) > 150


@pytest.mark.parametrize("dynamo", _exporters())
def test_the_exported_policy_runs_a_simulated_flow(tmp_path, dynamo):
    cc = _export(_mlp(), tmp_path / "p.onnx", dynamo)
    spec = {
        "experiment": {"duration": "3s", "sample_interval": "100ms", "seed": 3},
        "bottleneck": {"rate": "10Mbps", "delay": "5ms", "buffer": "1bdp"},
        "flows": [{"cc": cc, "rtt": "40ms"}],
    }
    f0 = api.run(spec, report=False).summary.iloc[0]
    assert f0["cc"] == "policy:torch-mlp"
    assert f0["goodput_bps"] > 0


def _example():
    spec = importlib.util.spec_from_file_location("gym_ppo", REPO / "examples" / "gym_ppo.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_ppo_actor_exported_by_the_example_acts_as_sb3_predicts(tmp_path):
    """An untrained SB3 PPO model (its initialisation from a seed; training changes the
    weights, not the graph), exported by examples/gym_ppo.py: the engine's actions are
    ``model.predict(obs, deterministic=True)``'s, the clip to [-10, 10] included. The
    clip is reached by shifting the action head's bias to +10, then -10 (its weights,
    initialised with gain 0.01, spread the actions by ~0.3 around it): about half the
    actions are clipped, the others are within float32's rounding of 10 (half an ulp
    is 4.8e-7 there, under the 1e-6 tolerance; scaling the weights up instead makes
    float32's error in the 64-term sums exceed 1e-6, which is torch's, not the engine's).
    """
    pytest.importorskip("stable_baselines3", reason="needs stable-baselines3: tcplab[rl]")
    from stable_baselines3 import PPO

    ex = _example()
    torch.manual_seed(0)
    model = PPO("MlpPolicy", ex.make_env(), seed=1, device="cpu")
    obs = _observations(200)
    for shift in (0.0, 10.0, -10.0):
        with torch.no_grad():
            model.policy.action_net.bias.fill_(shift)
        path = ex.export(model, tmp_path / "ppo.onnx")
        translated = policy.load(f"{policy.PREFIX}{path}")
        assert translated["name"] == "ppo-aurora" and translated["rtt_fraction"] == 0.5
        eng = engine().Policy(json.dumps(translated))
        want = np.array([model.predict(o, deterministic=True)[0][0] for o in obs], dtype=float)
        got = np.array([eng.act(o.tolist()) for o in obs])
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
        assert len(np.unique(want)) > 50
        if shift:
            clipped = (want == shift).sum()
            assert 20 < clipped < 180, clipped
