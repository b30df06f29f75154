"""Compiled (numba) hot paths behind the Python reference engine.

The Python engine (``rummy_env.game``, ``rummy_env.solver``) stays the reference: every compiled
function here is tested against it in lockstep, and callers choose with a switch
(``VectorGame(backend=...)``). Compilation is cached on disk (``cache=True``), so only the first
process after an install pays for it.

numba's cache notices a change to a kernel's own file only, not to the modules it calls, and the
three cores call the shared ``skeleton`` and ``table``: so when any source file of this package
changes, the package's cached kernels are dropped on import (``drop_stale_kernels``) and compiled
afresh.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def drop_stale_kernels(folder: Path = Path(__file__).parent) -> None:
    """Remove the numba cache of this package when its sources differ from those it was built from."""
    cache = folder / "__pycache__"
    stamp = cache / "numba-sources.stamp"
    sources = sorted(folder.glob("*.py"))
    fingerprint = hashlib.sha256("".join(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns};"
                                         for p in sources).encode()).hexdigest()
    try:
        if stamp.read_text() == fingerprint:
            return
    except OSError:
        pass
    try:
        for path in [*cache.glob("*.nbi"), *cache.glob("*.nbc")]:
            path.unlink(missing_ok=True)
        cache.mkdir(exist_ok=True)
        stamp.write_text(fingerprint)
    except OSError:  # a read-only install: numba keeps its cache elsewhere, and its sources do not change
        pass


drop_stale_kernels()
