"""series.csv and queue.csv are written with each float column pre-formatted
(storage/directory.py csv_text_floats): the bytes must be those of pandas'
``to_csv(float_format="%.9g")``, which every stored run's sha256 records."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
from tcplab.storage.directory import csv_text_floats


def test_each_kind_of_value_is_written_as_percent_9g_writes_it():
    values = [np.nan, -0.0, 0.0, 1e9, 999999999.0, -999999999.0, 0.1, 2.5e-05, 12345678901.0]
    values += [np.inf, 7760000.0, 37.03, 2.0**63]
    text = csv_text_floats(pd.DataFrame({"x": values}))["x"].tolist()
    # by hand: %.9g switches to an exponent at 1e9 (10 digits) and below 1e-4
    assert text == [
        "",
        "-0",
        "0",
        "1e+09",
        "999999999",
        "-999999999",
        "0.1",
        "2.5e-05",
        "1.23456789e+10",
        "inf",
        "7760000",
        "37.03",
        "9.22337204e+18",
    ]


def _csv(df: pd.DataFrame, fast: bool) -> str:
    buf = io.StringIO()
    (csv_text_floats(df) if fast else df).to_csv(buf, index=False, float_format="%.9g")
    return buf.getvalue()


def test_the_file_is_pandas_own_byte_for_byte():
    rng = np.random.default_rng(7)
    n = 3000
    x = np.concatenate(
        [
            rng.integers(-(2 * 10**9), 2 * 10**9, n).astype(float),
            rng.normal(0.0, 1e9, n),
            10.0 ** rng.uniform(-12.0, 20.0, n),
        ]
    )
    x[::97] = np.nan
    df = pd.DataFrame(
        {
            "time_s": np.arange(len(x)) / 100.0,
            "flow": np.arange(len(x)) % 3,
            "cc": pd.array(["bbr", "cubic", None] * n, dtype="string"),
            "x": x,
            "f32": x.astype(np.float32),
            "nullable": pd.array([1.5, None, 2.0] * n, dtype="Float64"),
        }
    )
    assert _csv(df, fast=True) == _csv(df, fast=False)
    # a one-column table (Python's csv writer quotes a row's only empty field) and an
    # empty one
    assert _csv(pd.DataFrame({"x": [np.nan, 1.0]}), True) == _csv(
        pd.DataFrame({"x": [np.nan, 1.0]}), False
    )
    empty = pd.DataFrame({"x": pd.Series([], dtype=float), "k": pd.Series([], dtype=int)})
    assert _csv(empty, True) == _csv(empty, False)


def test_repeated_column_names_are_left_to_pandas():
    df = pd.DataFrame([[1.0, 2.5]], columns=["a", "a"])
    assert csv_text_floats(df) is df
