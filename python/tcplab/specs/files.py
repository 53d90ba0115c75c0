"""Reading the files a spec names (the spec itself, a workload's CDF, a link's trace):
only regular files, and only up to a size bound. `tcplab run /dev/zero` read forever,
a CDF that was /dev/zero exhausted memory, and a spec that was a FIFO hung waiting for
a writer; ``os.stat`` answers without opening, so none of them blocks here.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_INPUT_BYTES = 64 * 1024 * 1024
"""The largest spec, CDF or trace file read (a trace of 64 MB holds millions of
delivery opportunities, far more than any run replays)."""


def read_bounded(path: str | Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file ``path``.

    Raises
    ------
    OSError
        The file cannot be read (FileNotFoundError, IsADirectoryError, PermissionError
        as ``open`` raises them).
    ValueError
        It is not a regular file (a device, a FIFO, a socket), or larger than ``limit``;
        the message says which.
    """
    p = Path(path)
    st = os.stat(p)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "Is a directory", str(p))
    if not stat.S_ISREG(st.st_mode):
        raise ValueError("is not a regular file (a device, FIFO or socket); give a file")
    if st.st_size > limit:
        raise ValueError(f"is {st.st_size:,} bytes; the limit is {limit:,}")
    with open(p, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:  # grew while we read it
        raise ValueError(f"is larger than the limit of {limit:,} bytes")
    return data
