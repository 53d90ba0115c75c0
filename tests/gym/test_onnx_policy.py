"""ONNX policies (tcplab.onnx_policy): a small MLP built by hand in numpy and written as
ONNX with ``onnx.helper`` (no torch needed) gives inside the engine the actions ONNX's
reference evaluator gives on the same observations (to 1e-6: the engine runs the
float32 weights in f64, the evaluator in float32), runs as ``policy:FILE.onnx`` in a
simulated run exactly as its JSON translation does, and graphs the engine cannot run are
refused naming the node, its op and what is allowed. tests/backends/test_kernel_policy.py
runs an ONNX policy on the kernel backend."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="needs the onnx package: pip install 'tcplab[onnx]'")
pytest.importorskip("tcplab._engine", reason="needs the compiled engine")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402
from tcplab import api, policy  # noqa: E402
from tcplab.engine import engine  # noqa: E402
from tcplab.lowering import world_config  # noqa: E402
from tcplab.runs.digest import run_digest  # noqa: E402
from tcplab.specs.load import as_spec  # noqa: E402

pytestmark = pytest.mark.engine
OPSET = [helper.make_opsetid("", 17)]


def _const(name: str, a: np.ndarray) -> TensorProto:
    return numpy_helper.from_array(np.asarray(a, dtype=np.float32), name)


def _model(
    nodes: list,
    inits: list,
    n_in: int = 30,
    n_out: int = 1,
    out: str = "action",
    meta: dict | None = None,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "policy",
        [helper.make_tensor_value_info("obs", TensorProto.FLOAT, [1, n_in])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, n_out])],
        inits,
    )
    m = helper.make_model(graph, opset_imports=OPSET)
    if meta:
        helper.set_model_props(m, meta)
    return m


def _mlp() -> onnx.ModelProto:
    """30 -> 8 (Gemm as torch's nn.Linear exports it, transB = 1; Tanh) -> 6 (MatMul +
    Add; Relu) -> 1 (Gemm; Sigmoid; Clip to [0.2, 0.7]), after a Flatten, weights from a
    seeded generator, scaled so that the Clip cuts some actions on both sides."""
    rng = np.random.default_rng(38)
    w1, b1 = rng.normal(0, 0.5, (8, 30)), rng.normal(0, 0.1, 8)
    w2, b2 = rng.normal(0, 0.7, (8, 6)), rng.normal(0, 0.1, 6)
    w3, b3 = rng.normal(0, 1.5, (1, 6)), np.array([0.1])
    nodes = [
        helper.make_node("Flatten", ["obs"], ["x0"], name="flatten"),
        helper.make_node("Gemm", ["x0", "w1", "b1"], ["h1"], name="fc1", transB=1),
        helper.make_node("Tanh", ["h1"], ["a1"], name="tanh1"),
        helper.make_node("MatMul", ["a1", "w2"], ["m2"], name="fc2_matmul"),
        helper.make_node("Add", ["m2", "b2"], ["h2"], name="fc2_add"),
        helper.make_node("Relu", ["h2"], ["a2"], name="relu2"),
        helper.make_node("Gemm", ["a2", "w3", "b3"], ["h3"], name="fc3", transB=1),
        helper.make_node("Sigmoid", ["h3"], ["s3"], name="sigmoid3"),
        helper.make_node("Clip", ["s3", "lo", "hi"], ["action"], name="clamp"),
    ]
    inits = [
        _const("w1", w1),
        _const("b1", b1),
        _const("w2", w2),
        _const("b2", b2),
        _const("w3", w3),
        _const("b3", b3),
        _const("lo", np.float32(0.2)),
        _const("hi", np.float32(0.7)),
    ]
    return _model(nodes, inits, meta={"tcplab.name": "hand-mlp"})


def _observations(n: int) -> np.ndarray:
    """Aurora-like observations (per interval: latency gradient, latency ratio >= 1,
    sending ratio >= 0), seeded."""
    rng = np.random.default_rng(7)
    obs = np.empty((n, 30), dtype=np.float32)
    obs[:, 0::3] = rng.normal(0, 0.3, (n, 10))
    obs[:, 1::3] = 1 + rng.exponential(0.3, (n, 10))
    obs[:, 2::3] = rng.exponential(1.0, (n, 10))
    return obs


def _save(m: onnx.ModelProto, tmp_path: Path, name: str = "p.onnx") -> str:
    p = tmp_path / name
    onnx.save(m, str(p))
    return f"{policy.PREFIX}{p}"


def test_the_engine_acts_as_onnx_reference_evaluator(tmp_path):
    m = _mlp()
    cc = _save(m, tmp_path)
    translated = policy.load(cc)
    assert translated["name"] == "hand-mlp" and translated["preset"] == "aurora"
    # Gemm+Tanh, MatMul+Add+Relu, Gemm+Sigmoid, then the Clip's two layers.
    assert [layer["activation"] for layer in translated["layers"]] == [
        "tanh",
        "relu",
        "sigmoid",
        "relu",
        "linear",
    ]
    net = engine().Policy(json.dumps(translated))
    ref = ReferenceEvaluator(m)
    obs = _observations(200)
    want = np.array([ref.run(None, {"obs": o[None, :]})[0][0, 0] for o in obs], dtype=float)
    got = np.array([net.act(o.tolist()) for o in obs])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    # The clamp is exercised on both sides, and between them the actions vary.
    assert (want == np.float32(0.2)).sum() > 5 and (want == np.float32(0.7)).sum() > 5
    assert len(np.unique(want)) > 50


def test_normalisation_inside_the_graph_runs_as_the_reference_evaluates_it(tmp_path):
    """(obs - mean) / std, then x 0.5, a Gemm and Tanh, as a policy wrapping its
    observation normaliser exports it; a constant divided by the observation is refused."""
    rng = np.random.default_rng(5)
    mean, std = rng.normal(1, 0.5, 30), rng.uniform(0.1, 2.0, 30)
    nodes = [
        helper.make_node("Sub", ["obs", "mean"], ["c"], name="center"),
        helper.make_node("Div", ["c", "std"], ["z"], name="scale"),
        helper.make_node("Mul", ["half", "z"], ["h"], name="half"),
        helper.make_node("Gemm", ["h", "w"], ["g"], name="fc", transB=1),
        helper.make_node("Tanh", ["g"], ["action"], name="tanh"),
    ]
    inits = [
        _const("mean", mean),
        _const("std", std),
        _const("half", np.float32(0.5)),
        _const("w", rng.normal(0, 0.3, (1, 30))),
    ]
    m = _model(nodes, inits)
    net = engine().Policy(json.dumps(policy.load(_save(m, tmp_path))))
    ref = ReferenceEvaluator(m)
    obs = _observations(100)
    want = np.array([ref.run(None, {"obs": o[None, :]})[0][0, 0] for o in obs], dtype=float)
    got = np.array([net.act(o.tolist()) for o in obs])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    assert want.std() > 0.1  # the actions vary: the normaliser is not a no-op
    nodes[1] = helper.make_node("Div", ["std", "c"], ["z"], name="scale")
    assert "node 'scale' (op Div): divides a constant by the chain's value" in _refused(
        _model(nodes, inits), tmp_path
    )


def test_constants_as_torch_writes_them_run_as_the_reference_evaluates_them(tmp_path):
    """torch.onnx.export writes Clip's bounds as Constant nodes holding tensors and shares
    equal initializers through Identity nodes (tests/gym/test_torch_export.py meets both
    with torch; this test, without torch, runs in CI): a Gemm whose bias is an Identity
    copy of another's, then Clip(lo, hi) from Constant tensors."""
    rng = np.random.default_rng(11)
    zeros = np.zeros(8)
    nodes = [
        helper.make_node("Identity", ["b1"], ["b2"], name="shared_bias"),
        helper.make_node("Gemm", ["obs", "w1", "b1"], ["h1"], name="fc1", transB=1),
        helper.make_node("Tanh", ["h1"], ["a1"], name="tanh1"),
        helper.make_node("Gemm", ["a1", "w2", "b2"], ["h2"], name="fc2", transB=1),
        helper.make_node("Tanh", ["h2"], ["a2"], name="tanh2"),
        helper.make_node("Gemm", ["a2", "w3"], ["h3"], name="fc3", transB=1),
        helper.make_node("Constant", [], ["lo"], name="c_lo", value=_const("v_lo", -2.0)),
        helper.make_node("Constant", [], ["hi"], name="c_hi", value=_const("v_hi", 2.0)),
        helper.make_node("Clip", ["h3", "lo", "hi"], ["action"], name="clip"),
    ]
    inits = [
        _const("w1", rng.normal(0, 0.5, (8, 30))),
        _const("b1", zeros),
        _const("w2", rng.normal(0, 0.7, (8, 8))),
        _const("w3", rng.normal(0, 1.5, (1, 8))),
    ]
    m = _model(nodes, inits)
    net = engine().Policy(json.dumps(policy.load(_save(m, tmp_path))))
    ref = ReferenceEvaluator(m)
    obs = _observations(200)
    want = np.array([ref.run(None, {"obs": o[None, :]})[0][0, 0] for o in obs], dtype=float)
    got = np.array([net.act(o.tolist()) for o in obs])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    assert (want == -2.0).sum() > 5 and (want == 2.0).sum() > 5
    assert len(np.unique(want)) > 50


def _spec(cc: str) -> dict:
    return {
        "experiment": {"duration": "3s", "sample_interval": "100ms", "seed": 3},
        "bottleneck": {"rate": "10Mbps", "delay": "5ms", "buffer": "1bdp"},
        "flows": [{"cc": cc, "rtt": "40ms"}],
    }


def test_an_onnx_policy_runs_in_the_engine_as_its_json_translation(tmp_path):
    """The same run with the .onnx file and with its translation written as JSON: the
    same agent in the engine config and identical series; the flow is reported as
    policy:<the model's tcplab.name>."""
    cc = _save(_mlp(), tmp_path)
    as_json = tmp_path / "p.json"
    as_json.write_text(json.dumps(policy.load(cc)))
    specs = [as_spec(_spec(c)) for c in (cc, f"{policy.PREFIX}{as_json}")]
    assert world_config(specs[0])["agents"] == world_config(specs[1])["agents"]
    a, b = (api.run(s, report=False) for s in specs)
    assert a.summary.iloc[0]["cc"] == "policy:hand-mlp"
    assert a.series.equals(b.series)
    # The policy moved the rate: the Clip keeps its action in [0.2, 0.7], and Aurora's
    # rate grows by 1 + 0.025 x action at each interval with a positive action.
    rates = a.series[a.series["flow"] == 0]["pacing_rate_bps"].to_numpy(dtype=float)
    assert rates[-1] > rates[rates > 0][0]


def test_the_digest_covers_the_models_weights_not_its_path(tmp_path):
    cc = _save(_mlp(), tmp_path)
    before = run_digest(as_spec(_spec(cc)))
    assert run_digest(as_spec(_spec(cc))) == before  # the same file: the same digest
    m = _mlp()
    m.graph.initializer[5].CopyFrom(_const("b3", np.array([0.2])))  # one bias changed
    _save(m, tmp_path)  # over the same path
    assert run_digest(as_spec(_spec(cc))) != before


def _refused(m: onnx.ModelProto, tmp_path: Path) -> str:
    cc = _save(m, tmp_path)
    with pytest.raises(ValueError) as e:
        policy.load(cc)
    # And through the spec check a user meets: the same words under the flow's cc.
    (problem,) = policy.check(cc, {})
    assert problem[0] == "cc" and str(e.value).split(": ", 1)[1] in problem[1]
    # The file is named once (the check once prefixed it to load's words, which name it).
    assert problem[1].count(str(policy.path(cc))) == 1, problem[1]
    return str(e.value)


def test_a_conv_node_is_refused_naming_it(tmp_path):
    nodes = [
        helper.make_node("Conv", ["obs", "k"], ["c"], name="conv0"),
        helper.make_node("Gemm", ["c", "w"], ["action"], name="fc", transB=1),
    ]
    m = _model(nodes, [_const("k", np.ones((1, 1, 1))), _const("w", np.ones((1, 30)))])
    msg = _refused(m, tmp_path)
    assert "node 'conv0' (op Conv): not supported" in msg
    assert "Gemm, MatMul, Add, Sub, Mul, Div, Relu, Tanh, Sigmoid, Clip" in msg


def test_a_branch_is_refused_naming_the_node(tmp_path):
    nodes = [
        helper.make_node("Gemm", ["obs", "w1"], ["h"], name="fc1", transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Tanh", ["h"], ["t"], name="tanh"),
        helper.make_node("Add", ["r", "t"], ["s"], name="skip"),
        helper.make_node("Gemm", ["s", "w2"], ["action"], name="fc2", transB=1),
    ]
    m = _model(nodes, [_const("w1", np.ones((4, 30))), _const("w2", np.ones((1, 4)))])
    msg = _refused(m, tmp_path)
    assert "node 'tanh' (op Tanh): reads 'h', which node 'relu' (op Relu) also reads" in msg
    assert "chain" in msg


def test_wrong_input_and_output_widths_are_refused_naming_both(tmp_path):
    node = helper.make_node("Gemm", ["obs", "w"], ["action"], name="fc", transB=1)
    m = _model([node], [_const("w", np.ones((1, 29)))], n_in=29)
    msg = _refused(m, tmp_path)
    assert "input 'obs' is 29 wide" in msg
    assert "the aurora preset with history 10 and transform none observes 30 values" in msg
    m = _model([node], [_const("w", np.ones((2, 30)))], n_out=2)
    msg = _refused(m, tmp_path)
    assert "output 'action' is 2 wide; the aurora preset's action is 1 value" in msg
    # The metadata sets the history and the transform: 3 x 5 + 1 = 16 inputs.
    m = _model(
        [node],
        [_const("w", np.ones((1, 16)))],
        n_in=16,
        meta={"tcplab.history": "5", "tcplab.transform": "aurora_log"},
    )
    assert len(policy.load(_save(m, tmp_path))["layers"][0]["weights"][0]) == 16
    m = _model([node], [_const("w", np.ones((1, 30)))], meta={"tcplab.start_fraction": "1"})
    assert "metadata 'tcplab.start_fraction': not a policy field" in _refused(m, tmp_path)


def test_a_file_that_is_not_onnx_is_refused(tmp_path):
    p = tmp_path / "p.onnx"
    p.write_bytes(b"\x00not a model")
    with pytest.raises(ValueError, match="not a valid ONNX model"):
        policy.load(f"{policy.PREFIX}{p}")


def test_without_the_onnx_package_the_error_says_what_to_install(tmp_path, monkeypatch):
    cc = _save(_mlp(), tmp_path)
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx raises ImportError
    with pytest.raises(ValueError, match=r"pip install 'tcplab\[onnx\]'"):
        policy.load(cc)


def _orca_actor() -> onnx.ModelProto:
    """An Orca-shaped actor (70 -> 16 Tanh -> 1 Tanh, the last Tanh Orca's action range
    [-1, 1]), seeded, with the preset and Orca's 20 ms report period in its metadata."""
    rng = np.random.default_rng(20)
    w1, b1 = rng.normal(0, 0.3, (16, 70)), rng.normal(0, 0.1, 16)
    w2, b2 = rng.normal(0, 0.5, (1, 16)), np.array([0.05])
    nodes = [
        helper.make_node("Gemm", ["obs", "w1", "b1"], ["h1"], name="fc1", transB=1),
        helper.make_node("Tanh", ["h1"], ["a1"], name="tanh1"),
        helper.make_node("Gemm", ["a1", "w2", "b2"], ["h2"], name="fc2", transB=1),
        helper.make_node("Tanh", ["h2"], ["action"], name="tanh2"),
    ]
    inits = [_const("w1", w1), _const("b1", b1), _const("w2", w2), _const("b2", b2)]
    meta = {"tcplab.name": "orca-actor", "tcplab.preset": "orca", "tcplab.interval_ns": "20000000"}
    return _model(nodes, inits, n_in=70, meta=meta)


def test_an_orca_actor_in_onnx_acts_as_the_reference_and_drives_cubic(tmp_path):
    """The engine's actions equal ONNX's reference evaluator's on Orca-like observations
    (to 1e-6), and as policy:FILE.onnx the flow runs CUBIC underneath, driven by it."""
    m = _orca_actor()
    cc = _save(m, tmp_path, "orca.onnx")
    translated = policy.load(cc)
    assert (translated["preset"], translated["interval_ns"]) == ("orca", 20_000_000)
    net = engine().Policy(json.dumps(translated))
    ref = ReferenceEvaluator(m)
    rng = np.random.default_rng(5)
    obs = rng.uniform(0, 1.5, (200, 70)).astype(np.float32)  # ratios, rates, times
    want = np.array([ref.run(None, {"obs": o[None, :]})[0][0, 0] for o in obs], dtype=float)
    got = np.array([net.act(o.tolist()) for o in obs])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    assert len(np.unique(want)) > 50
    spec = as_spec(_spec(cc))
    config = world_config(spec)
    assert config["flows"][0]["cc"] == "cubic" and config["agents"][0]["flow"] == 0
    r = api.run(spec, report=False)
    assert r.summary.iloc[0]["cc"] == "policy:orca-actor"


def test_vecnormalize_statistics_folded_into_the_graph_act_as_sb3_normalises(tmp_path):
    """An actor trained behind SB3's VecNormalize sees clip((obs - mean) / sqrt(var +
    eps), -clip_obs, clip_obs) (vec_normalize.py normalize_obs). Folded into the model,
    the engine on raw observations gives the reference evaluator's actions on the
    normalised ones, to 1e-6; clip_obs = 1.5 cuts some features on both sides."""
    from types import SimpleNamespace

    from tcplab.onnx_policy import fold_vecnormalize

    rng = np.random.default_rng(11)
    actor = _mlp()
    obs = _observations(150)
    mean = obs.mean(axis=0) + rng.normal(0, 0.2, 30)
    var = obs.var(axis=0) * rng.uniform(0.3, 1.5, 30)
    vn = SimpleNamespace(
        norm_obs=True, obs_rms=SimpleNamespace(mean=mean, var=var), epsilon=1e-8, clip_obs=1.5
    )
    folded = fold_vecnormalize(actor, vn)
    assert [n.op_type for n in folded.graph.node[:3]] == ["Sub", "Div", "Clip"]
    assert len(actor.graph.node) == len(folded.graph.node) - 3  # the actor is left as it was
    z = np.clip((obs - mean) / np.sqrt(var + 1e-8), -1.5, 1.5).astype(np.float32)
    assert (z == np.float32(1.5)).sum() > 20 and (z == np.float32(-1.5)).sum() > 20
    ref = ReferenceEvaluator(actor)
    want = np.array([ref.run(None, {"obs": x[None, :]})[0][0, 0] for x in z], dtype=float)
    net = engine().Policy(json.dumps(policy.load(_save(folded, tmp_path))))
    got = np.array([net.act(o.tolist()) for o in obs])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
    assert len(np.unique(want)) > 20  # the actions vary (the actor's own clip holds many)
    assert fold_vecnormalize(actor, SimpleNamespace(norm_obs=False)) is actor
    with pytest.raises(ValueError, match=r"one value per input \(30\); got 29 and 30"):
        fold_vecnormalize(
            actor,
            SimpleNamespace(**{**vars(vn), "obs_rms": SimpleNamespace(mean=mean[:29], var=var)}),
        )
