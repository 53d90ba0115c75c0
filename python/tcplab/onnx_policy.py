"""ONNX policies (``cc = "policy:FILE.onnx"``): an MLP exported by ``torch.onnx.export``
(or written with ``onnx.helper``) translated into the engine's JSON MLP policy
(``format = "tcplab-policy/1"``, crates/controllers/src/policy/mlp.rs), so that both
backends run it with the code that runs JSON policies: the simulator's in-engine agent
and the kernel backend's agent (tcplab/backends/kernel/policy_agent.py) read the
translated policy from the engine config (the translation enters the config, not the
path), and a run's digest covers the model file's bytes as it covers a JSON policy's.

The model: the graph is read with the ``onnx`` package (``pip install 'tcplab[onnx]'``)
and walked as a chain from its one input to its one output. Each node takes the chain's
value and constants (initializers, ``Constant`` nodes, or an ``Identity`` of either, as
torch's TorchScript exporter shares equal initializers) and becomes dense layers
``activation(W x + b)``:

- ``Gemm`` (ONNX operator spec: ``alpha * A' B' + beta * C``, transB as torch's
  ``nn.Linear`` exports it) and ``MatMul`` (then an ``Add`` of a constant fills its bias);
  an ``Add`` of a constant after anything else is an identity layer with that bias;
- ``Relu``, ``Tanh``, ``Sigmoid``: the activation of the layer the node before made, or
  an identity layer carrying it (after another activation);
- ``Sub``, ``Mul``, ``Div`` by a constant (observation normalisation written into the
  graph, ``(obs - mean) / std``): a diagonal layer each (``Div`` as a product by 1 / c);
- ``Clip(x, lo, hi)``: two layers, ``lo + relu(x - lo) - relu(x - hi)`` (equal to the clip
  within a rounding of f64; one of the two terms when a bound is absent);
- ``Identity``, ``Flatten`` and a ``Reshape`` keeping a ``[1, n]`` row: nothing.

Any other op, a node reading a value the chain has left (a branch, a skip connection),
or a node reading two chain values is refused naming the node, its op and what is
allowed. The input's width is checked against the preset's observation (3 x history
for Aurora, 7 x history for Orca, plus 1 with the ``aurora_log`` transform) and the
output's against its action (1 value), naming both.

What the policy file says beyond the network comes from the model's metadata
(``onnx.helper.set_model_props``), keys ``tcplab.name`` (default: the file's stem),
``tcplab.preset`` ("aurora"), ``tcplab.history`` (10), ``tcplab.transform`` ("none"),
``tcplab.rtt_fraction`` (0.5) and ``tcplab.interval_ns`` (absent: per RTT); they mean
what the JSON fields mean (tcplab.policy). Another ``tcplab.`` key is refused, naming it.

Deviations: the engine evaluates in f64 what ONNX Runtime or PyTorch evaluate in float32
(the weights are float32 values, carried exactly; ``Div`` by c becomes a product by the
f64 1 / c), so actions agree to float32's rounding (tests/gym/test_onnx_policy.py:
1e-6), not bit for bit. Observation normalisation kept outside the graph (SB3's
VecNormalize statistics, a pickle) is not read from a file: :func:`fold_vecnormalize`
writes it into the graph before the model is saved (``Sub``, ``Div``, ``Clip``: SB3's
``VecNormalize.normalize_obs``, ``clip((obs - mean) / sqrt(var + epsilon), -clip_obs,
clip_obs)``), which the translation above then reads as any normaliser in the graph.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ALLOWED = "Gemm, MatMul, Add, Sub, Mul, Div, Relu, Tanh, Sigmoid, Clip, Identity, Flatten, Reshape"
INSTALL = "pip install 'tcplab[onnx]'"
ACTIVATIONS = {"Relu": "relu", "Tanh": "tanh", "Sigmoid": "sigmoid"}
PASS_THROUGH = {"Identity", "Flatten", "Reshape"}
ELEMENTWISE = {"Sub", "Mul", "Div"}  # with a constant
META_KEYS = ("name", "preset", "history", "transform", "rtt_fraction", "interval_ns")


def is_onnx(p: Path) -> bool:
    return p.suffix.lower() == ".onnx"


def load(p: Path) -> dict[str, Any]:
    """The ONNX model at ``p`` as a JSON policy dictionary (ValueError naming what is
    wrong: the node, its op, the field)."""
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError:
        raise ValueError(f"reading an ONNX policy needs the onnx package: {INSTALL}") from None
    try:
        model = onnx.load(str(p))
        onnx.checker.check_model(model)
    except Exception as exc:  # protobuf's DecodeError, the checker's ValidationError
        raise ValueError(f"not a valid ONNX model ({type(exc).__name__}: {exc})") from None
    meta = _metadata(model, p)
    return {**meta, "layers": _layers(model.graph, meta, numpy_helper)}


def _metadata(model: Any, p: Path) -> dict[str, Any]:
    """The policy fields of the model's ``tcplab.*`` metadata, with their defaults."""
    props = {m.key: m.value for m in model.metadata_props}
    out: dict[str, Any] = {
        "format": "tcplab-policy/1",
        "name": p.stem,
        "preset": "aurora",
        "history": 10,
        "transform": "none",
    }
    for key, value in props.items():
        if not key.startswith("tcplab."):
            continue  # an exporter's own (torch writes none; others may)
        field = key[len("tcplab.") :]
        if field not in META_KEYS:
            raise ValueError(
                f"metadata {key!r}: not a policy field; allowed: "
                + ", ".join(f"tcplab.{k}" for k in META_KEYS)
            )
        try:
            if field in ("history", "interval_ns"):
                out[field] = int(value)
            elif field == "rtt_fraction":
                out[field] = float(value)
            else:
                out[field] = value
        except ValueError:
            raise ValueError(f"metadata {key!r}: {value!r} is not a number") from None
    return out


# Features per interval of each preset's observation (crates/controllers/src/policy/
# mod.rs, Preset::features); a preset not listed is refused by the engine's check.
FEATURES = {"aurora": 3, "orca": 7}


def _observation_width(meta: dict[str, Any]) -> tuple[int, str]:
    h = meta["history"]
    extra = 1 if meta["transform"] == "aurora_log" else 0
    what = f"the {meta['preset']} preset with history {h} and transform {meta['transform']}"
    return FEATURES.get(meta["preset"], 3) * h + extra, what


def _dims(value_info: Any) -> list[int | str]:
    t = value_info.type.tensor_type
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in t.shape.dim]


def _width(value_info: Any, role: str) -> int:
    """The width of a [n], [1, n] or [batch, n] input or output."""
    dims = _dims(value_info)
    leading, last = dims[:-1], dims[-1:] if dims else []
    if not last or not isinstance(last[0], int) or last[0] <= 0:
        raise ValueError(f"{role} {value_info.name!r}: shape {dims} has no fixed width")
    if len(leading) > 1 or (leading and isinstance(leading[0], int) and leading[0] != 1):
        raise ValueError(
            f"{role} {value_info.name!r}: shape {dims}; a policy reads one observation, "
            "[n] or [1, n]"
        )
    return last[0]


def _layers(graph: Any, meta: dict[str, Any], numpy_helper: Any) -> list[dict[str, Any]]:
    import numpy as np

    consts = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    inputs = [i for i in graph.input if i.name not in consts]
    if len(inputs) != 1 or len(graph.output) != 1:
        raise ValueError(
            f"the graph has {len(inputs)} inputs and {len(graph.output)} outputs; a policy "
            "has one of each (the observation, the action)"
        )
    n_in = _width(inputs[0], "input")
    want, what = _observation_width(meta)
    if n_in != want:
        raise ValueError(f"input {inputs[0].name!r} is {n_in} wide; {what} observes {want} values")
    n_out = _width(graph.output[0], "output")
    if n_out != 1:
        raise ValueError(
            f"output {graph.output[0].name!r} is {n_out} wide; the {meta['preset']} "
            "preset's action is 1 value"
        )

    layers: list[dict[str, Any]] = []
    cur, width = inputs[0].name, n_in
    left: dict[str, str] = {}  # chain values already consumed -> the node that consumed it
    fresh = False  # the last layer was made by the node just before (its activation is free)

    def identity(bias: Any = None, activation: str = "linear") -> dict[str, Any]:
        b = np.zeros(width) if bias is None else bias
        return _layer(np.eye(width), b, activation)

    for node in graph.node:
        where = f"node {node.name or '(unnamed)'!r} (op {node.op_type})"
        if node.op_type == "Constant":
            (out,) = node.output
            value = _attr(node.attribute[0])
            # value (a TensorProto, as torch.onnx.export writes Clip's bounds) or
            # value_float(s) / value_int(s) (plain numbers).
            tensor = hasattr(value, "raw_data")
            consts[out] = numpy_helper.to_array(value) if tensor else np.asarray(value)
            continue
        chain = [x for x in node.input if x and x not in consts]
        if not chain and node.op_type == "Identity":
            # torch's TorchScript exporter shares equal initializers (e.g. two zero
            # biases) through Identity nodes: a copy of a constant is that constant.
            consts[node.output[0]] = consts[node.input[0]]
            continue
        if not chain:
            raise ValueError(f"{where}: computes from constants only; allowed: {ALLOWED}")
        for x in chain:
            if x != cur:
                by = left.get(x)
                raise ValueError(
                    f"{where}: reads {x!r}"
                    + (f", which {by} also reads" if by else "")
                    + "; a policy's graph is a chain (no branch or skip connection)"
                )
        if len(chain) != 1:
            raise ValueError(f"{where}: reads the chain's value twice; not a chain")
        if len(node.output) != 1:
            raise ValueError(f"{where}: has {len(node.output)} outputs; a chain node has one")
        op = node.op_type
        attrs = {a.name: _attr(a) for a in node.attribute}
        args = [consts.get(x) if x in consts else None for x in node.input]
        if op == "Gemm":
            if attrs.get("transA", 0):
                raise ValueError(f"{where}: transA = 1; the observation is a row (transA = 0)")
            if node.input[0] != cur or len(node.input) < 2 or args[1] is None:
                raise ValueError(f"{where}: needs the chain's value as A and constant B")
            b = args[1].astype(np.float64)
            w = b.T if attrs.get("transB", 0) else b  # [in, out]
            w = attrs.get("alpha", 1.0) * w
            c = args[2] if len(args) > 2 and args[2] is not None else np.zeros(w.shape[1])
            bias = attrs.get("beta", 1.0) * _row(where, c, w.shape[1])
            _check_in(where, w, width)
            layers.append(_layer(w.T, bias, "linear"))
            width, fresh = w.shape[1], True
        elif op == "MatMul":
            if node.input[0] != cur or args[1] is None or args[1].ndim != 2:
                raise ValueError(f"{where}: needs the chain's value times a constant matrix")
            w = args[1].astype(np.float64)
            _check_in(where, w, width)
            layers.append(_layer(w.T, np.zeros(w.shape[1]), "linear"))
            width, fresh = w.shape[1], True
        elif op == "Add":
            (c,) = [a for a in args if a is not None]
            bias = _row(where, c, width)
            last = layers[-1] if layers else None
            if fresh and last is not None and not any(last["bias"]):
                last["bias"] = [float(v) for v in bias]
            else:
                layers.append(identity(bias))
            fresh = True
        elif op in ELEMENTWISE:
            # Observation normalisation exported inside the graph ((obs - mean) / std, or
            # * scale): one diagonal layer each, so the float32 evaluator's order holds.
            c = _row(where, [a for a in args if a is not None][0], width)
            first = node.input[0] == cur
            if op == "Sub":
                w, b = (np.eye(width), -c) if first else (-np.eye(width), c)
            elif op == "Mul":
                w, b = np.diag(c), np.zeros(width)
            elif first and not c.all():
                raise ValueError(f"{where}: divides by 0")
            elif first:  # Div(x, c)
                w, b = np.diag(1.0 / c), np.zeros(width)
            else:
                raise ValueError(f"{where}: divides a constant by the chain's value")
            layers.append(_layer(w, b, "linear"))
            fresh = True
        elif op in ACTIVATIONS:
            if fresh and layers[-1]["activation"] == "linear":
                layers[-1]["activation"] = ACTIVATIONS[op]
            else:
                layers.append(identity(activation=ACTIVATIONS[op]))
            fresh = False
        elif op == "Clip":
            lo, hi = _clip_bounds(where, node, attrs, args)
            layers.extend(_clip(lo, hi, width, np))
            fresh = False
        elif op in PASS_THROUGH:
            if op == "Reshape":
                _check_reshape(where, args[1] if len(args) > 1 else None, width)
            if op == "Flatten" and attrs.get("axis", 1) != 1:
                raise ValueError(f"{where}: axis {attrs['axis']}; a [1, n] row flattens on axis 1")
        else:
            raise ValueError(f"{where}: not supported; an ONNX policy is a chain of {ALLOWED}")
        left[cur] = where
        cur = node.output[0]
    if cur != graph.output[0].name:
        raise ValueError(
            f"output {graph.output[0].name!r} is not the end of the chain ({cur!r} is)"
        )
    if not layers:
        raise ValueError("the graph has no Gemm, MatMul or Add: no network to run")
    return layers


def _attr(a: Any) -> Any:
    from onnx import helper

    return helper.get_attribute_value(a)


def _layer(w: Any, b: Any, activation: str) -> dict[str, Any]:
    return {
        "weights": [[float(v) for v in row] for row in w],
        "bias": [float(v) for v in b],
        "activation": activation,
    }


def _row(where: str, c: Any, width: int) -> Any:
    """A constant bias as a row of ``width`` values (a scalar or [1] broadcast)."""
    import numpy as np

    v = np.asarray(c, dtype=np.float64).reshape(-1)
    if v.size not in (1, width):
        raise ValueError(f"{where}: a bias of {v.size} values for a value {width} wide")
    return np.broadcast_to(v, (width,))


def _check_in(where: str, w: Any, width: int) -> None:
    if w.ndim != 2 or w.shape[0] != width:
        raise ValueError(f"{where}: weights of shape {list(w.shape)} for an input {width} wide")


def _check_reshape(where: str, shape: Any, width: int) -> None:
    dims = [] if shape is None else [int(d) for d in shape.reshape(-1)]
    row = [d for d in dims[:-1] if d not in (1, -1, 0)]
    if shape is None or row or not dims or dims[-1] not in (width, -1):
        raise ValueError(f"{where}: to shape {dims}; a policy's value stays a [1, {width}] row")


def _clip_bounds(where: str, node: Any, attrs: dict, args: list) -> tuple[Any, Any]:
    lo, hi = attrs.get("min"), attrs.get("max")  # opset < 11: attributes
    if len(node.input) > 1 and node.input[1]:
        if args[1] is None:
            raise ValueError(f"{where}: its min is not a constant")
        lo = float(args[1].reshape(-1)[0])
    if len(node.input) > 2 and node.input[2]:
        if args[2] is None:
            raise ValueError(f"{where}: its max is not a constant")
        hi = float(args[2].reshape(-1)[0])
    if lo is None and hi is None:
        raise ValueError(f"{where}: no bound")
    return lo, hi


def _clip(lo: Any, hi: Any, width: int, np: Any) -> list[dict[str, Any]]:
    """clip(x, lo, hi) = lo + relu(x - lo) - relu(x - hi), as two dense layers."""
    eye = np.eye(width)
    if hi is None:  # lo + relu(x - lo)
        return [_layer(eye, np.full(width, -lo), "relu"), _layer(eye, np.full(width, lo), "linear")]
    if lo is None:  # hi - relu(hi - x)
        return [
            _layer(-eye, np.full(width, hi), "relu"),
            _layer(-eye, np.full(width, hi), "linear"),
        ]
    first = _layer(
        np.vstack([eye, eye]), np.concatenate([np.full(width, -lo), np.full(width, -hi)]), "relu"
    )
    return [first, _layer(np.hstack([eye, -eye]), np.full(width, lo), "linear")]


def with_normalisation(
    model: Any, mean: Any, var: Any, epsilon: float = 1e-8, clip: float = 10.0
) -> Any:
    """``model`` (an ``onnx.ModelProto``) with its input normalised first as SB3's
    VecNormalize normalises observations (stable_baselines3/common/vec_env/
    vec_normalize.py ``normalize_obs``): ``clip((obs - mean) / sqrt(var + epsilon), -clip,
    clip)``, written as ``Sub``, ``Div`` and ``Clip`` nodes on float32 constants before the
    graph's first node, under the graph's own input name. A new model; ``model`` is left
    as it is. ValueError when ``mean`` or ``var`` is not one value per input (naming
    both widths), a variance is negative, or ``epsilon`` / ``clip`` is not positive."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    if len(g.input) != 1:
        raise ValueError(f"a policy graph has one input; this one has {len(g.input)}")
    width = _width(g.input[0], "input")
    mean = np.asarray(mean, dtype=np.float64).reshape(-1)
    var = np.asarray(var, dtype=np.float64).reshape(-1)
    if mean.shape != (width,) or var.shape != (width,):
        raise ValueError(
            f"mean and var: one value per input ({width}); got {mean.size} and {var.size}"
        )
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(var)) and np.all(var >= 0)):
        raise ValueError("mean and var: finite, var >= 0")
    if not (epsilon > 0 and clip > 0):
        raise ValueError(f"epsilon and clip: both > 0; got {epsilon!r} and {clip!r}")
    name = g.input[0].name
    inner = f"{name}__normalised"
    for node in g.node:  # the original graph now reads the normalised observation
        node.input[:] = [inner if x == name else x for x in node.input]
    consts = {
        f"{name}__mean": mean,
        f"{name}__std": np.sqrt(var + epsilon),
        f"{name}__lo": np.float64(-clip),
        f"{name}__hi": np.float64(clip),
    }
    for c, v in consts.items():
        g.initializer.append(numpy_helper.from_array(np.asarray(v, dtype=np.float32), c))
    first = [
        helper.make_node("Sub", [name, f"{name}__mean"], [f"{name}__c"], name="vecnormalize_sub"),
        helper.make_node(
            "Div", [f"{name}__c", f"{name}__std"], [f"{name}__z"], name="vecnormalize_div"
        ),
        helper.make_node(
            "Clip", [f"{name}__z", f"{name}__lo", f"{name}__hi"], [inner], name="vecnormalize_clip"
        ),
    ]
    rest = list(g.node)
    del g.node[:]
    g.node.extend(first + rest)
    onnx.checker.check_model(m)
    return m


def fold_vecnormalize(model: Any, vec_normalize: Any) -> Any:
    """``model`` with a stable-baselines3 ``VecNormalize``'s observation statistics
    written into it (:func:`with_normalisation` with its ``obs_rms.mean``,
    ``obs_rms.var``, ``epsilon`` and ``clip_obs``), so that the exported actor acts on raw
    observations as the trained agent acted on normalised ones; unchanged when the
    wrapper did not normalise observations (``norm_obs`` False). Dict observation
    spaces (one statistic per key) are refused: a policy's observation is one vector."""
    if not getattr(vec_normalize, "norm_obs", True):
        return model
    rms = vec_normalize.obs_rms
    if isinstance(rms, dict):
        raise ValueError("VecNormalize over a Dict observation space: a policy reads one vector")
    return with_normalisation(
        model, rms.mean, rms.var, float(vec_normalize.epsilon), float(vec_normalize.clip_obs)
    )
