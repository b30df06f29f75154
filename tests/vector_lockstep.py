"""Helpers of the lockstep tests of the numba backends against the Python engine
(``from vector_lockstep import …``): the buffers compared, the comparison, and a refusal both
backends must give alike."""

from __future__ import annotations

import numpy as np
import pytest

from rummy_env.vector import IllegalActionError, VectorGame

BUFFERS = ("observations", "action_masks", "to_act", "rewards", "terminated", "truncated")


def assert_same(python: VectorGame, numba: VectorGame, where: str) -> None:
    """Every buffer and result of the two backends equal; else the differing rows, named."""
    for name in BUFFERS:
        a, b = getattr(python, name), getattr(numba, name)
        if not np.array_equal(a, b):
            rows = np.flatnonzero((a != b).reshape(len(a), -1).any(axis=1))
            raise AssertionError(f"{where}: {name} differ in rows {rows.tolist()}")
    assert python.results == numba.results, where


def refuse_both(python: VectorGame, numba: VectorGame, actions: np.ndarray, rng: np.random.Generator,
                out_of_range: float = 0.0) -> bool:
    """Send one row an action its mask forbids (with probability ``out_of_range`` one past the
    last action id instead): both backends refuse it with the same message and change no buffer."""
    row = int(rng.integers(len(actions)))
    forbidden = np.flatnonzero(python.action_masks[row] == 0)
    bad = actions.copy()
    bad[row] = int(forbidden[rng.integers(forbidden.size)])
    if out_of_range and rng.random() >= 1.0 - out_of_range:
        bad[row] = python.num_actions
    before = {name: getattr(numba, name).copy() for name in BUFFERS}
    messages = []
    for vector in (python, numba):
        with pytest.raises(IllegalActionError) as err:
            vector.step(bad)
        messages.append(str(err.value))
    assert messages[0] == messages[1]
    for name in BUFFERS:
        np.testing.assert_array_equal(getattr(numba, name), before[name])
    return True
