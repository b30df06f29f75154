"""``VectorGame(backend="numba")``: the same interface, every game stepped by compiled kernels.

``VectorGame.__new__`` hands out a ``CompiledVectorGame`` when asked for the numba backend. It
keeps ``VectorGame``'s buffers, checks, rewards and match bookkeeping (``_end_hand``, ``load``'s
checks, ``Match``) and replaces the per-slot Python engine with the arrays of the game's core
(``rummy_env.compiled.indian.IndianCore``, ``rummy_env.compiled.basic.BasicCore`` and
``rummy_env.compiled.romi.RomiCore``, each a ``rummy_env.compiled.skeleton.Core``), named by the
game spec's ``compiled_core``.
Differences a caller can see:

* ``state(i)`` rebuilds a new ``GameState`` from the arrays (``GameState.from_dict``) on each
  call: changing it changes nothing in the slot. Hands longer than the core's ``HISTORY_LIMIT``
  moves (Indian: a ``max_turns`` above 4095; Basic and römi: a hand of more than 8192 moves) keep no full
  history and have no ``state``.
* ``load(i, state)`` copies the state into the slot instead of playing the object itself.
"""

from __future__ import annotations

import importlib
import operator

import numpy as np

from ..batch import VectorGame
from ..episode import IllegalActionError
from ..game import GameState, HandResult
from ..games import GAMES, GameSpec, game_spec


def core_class(spec: GameSpec) -> type | None:
    """The compiled core that plays ``spec`` (its ``compiled_core``, imported when first asked for), or None."""
    if spec.compiled_core is None:
        return None
    module, _, name = spec.compiled_core.partition(":")
    return getattr(importlib.import_module(module), name)


COMPILED_GAMES = tuple(game for game in GAMES if game_spec(game).compiled_core)
"""The shipped games ``backend="numba"`` plays."""

__all__ = ["CompiledVectorGame", "COMPILED_GAMES"]


class _Ended:
    """What ``VectorGame._end_hand`` reads of a finished hand: its result and turns."""

    __slots__ = ("result", "turn")

    def __init__(self, result: HandResult, turn: int):
        self.result = result
        self.turn = turn


class CompiledVectorGame(VectorGame):
    """``VectorGame`` for Indian Rummy, Basic Rummy or römi on a numba core; see the module docstring."""

    def _init_slots(self) -> None:
        core = core_class(self.rules.spec)
        if core is None:
            raise ValueError("backend='numba' plays game=" + ", game=".join(repr(g) for g in COMPILED_GAMES)
                             + f" only, not game={self.game!r}: use backend='python' for {self.name}")
        n = self.num_envs
        self._core = core(self.rules, n, self.observations, self.action_masks, self.to_act, self.match_mode)
        self._all_rows = np.arange(n, dtype=np.int64)
        self._matches = [None] * n
        self._match_points = [[0.0] * self.num_players for _ in range(n)]
        self._rngs = []
        self._seeds: list = [None] * n  # the seed each slot's hand was dealt with (None: no hand yet)
        self._pending: list[tuple[int, int]] = []  # (slot, seed) of hands to deal in one batch
        self._result_rows: list[int] = []  # slots whose ``results`` entry is set
        self.seed = None

    # ------------------------------------------------------------------ dealing

    def reset(self, seed: int | None = None):
        super().reset(seed)  # the seeds and the slot generators; each slot's hand waits in ``_pending``
        self._deal_pending()
        self._result_rows = []
        return self.observations, self.action_masks, self.to_act

    def _new_episode(self, i: int) -> None:
        if self.match_mode:
            super()._new_episode(i)  # a Match, whose first hand ``_start_hand`` copies in
            return
        self._pending.append((i, self._rngs[i].getrandbits(64)))

    def _deal_pending(self) -> None:
        if not self._pending:
            return
        rows = [i for i, _ in self._pending]
        seeds = [seed for _, seed in self._pending]
        self._core.deal(rows, seeds, [0] * len(rows))
        for i, seed in self._pending:
            self._seeds[i] = seed
        self._pending = []

    def _start_hand(self, i: int, state: GameState) -> None:
        self._core.totals[i] = self._matches[i].totals if self._matches[i] is not None else 0
        self._core.load(i, state, self._ids)
        self._seeds[i] = state.seed

    # ------------------------------------------------------------------ stepping

    def step(self, actions):
        rows = self._all_rows
        values = self._checked_values(rows, actions, "one per hand", empty_ok=False)
        self._clear()
        for i in self._result_rows:
            self.results[i] = None
            self.settlements[i] = None
        self._play(rows, values)
        return self.observations, self.action_masks, self.to_act, self.rewards, self.terminated, self.truncated

    def step_rows(self, rows, actions):
        rows = np.asarray(self._checked_rows(rows), np.int64)
        values = self._checked_values(rows, actions, "one per row", empty_ok=True)
        self._clear()
        self.results = [None] * self.num_envs
        self.settlements = [None] * self.num_envs
        self._play(rows, values)
        return self.observations, self.action_masks, self.to_act, self.rewards, self.terminated, self.truncated

    def _clear(self) -> None:
        self.rewards.fill(0.0)
        self.terminated.fill(False)
        self.truncated.fill(False)

    def _play(self, rows: np.ndarray, values: np.ndarray) -> None:
        ended = self._core.step(rows, values)
        self._result_rows = ended
        core = self._core
        for i in ended:
            self._end_hand(i, _Ended(*core.ended_hand(i)))
        self._deal_pending()

    def _checked_values(self, rows: np.ndarray, actions, one_per: str, empty_ok: bool) -> np.ndarray:
        """``actions`` as int64, each allowed by its row's mask; else ``VectorGame``'s error naming the row."""
        array = np.asarray(actions)
        if array.shape != (len(rows),):
            raise IllegalActionError(f"actions of shape {array.shape}: expected ({len(rows)},), {one_per}")
        if (array.size or not empty_ok) and array.dtype.kind not in "iu":
            raise IllegalActionError(f"actions of dtype {array.dtype}: expected integer action ids")
        if array.dtype == np.uint64:
            values = np.minimum(array, self.num_actions).astype(np.int64)  # out of range stays out of range
        else:
            values = array.astype(np.int64)
        k, code = self._core.first_refusal(rows, values)
        if k < 0:
            return values
        i, action = int(rows[k]), int(array[k])
        if code == 1:
            raise IllegalActionError(f"row {i}: action {action} is out of range: expected 0..{self.num_actions - 1}")
        self._refuse(i, action)

    @property
    def core(self):
        """The compiled core that steps the slots (``IndianCore``, ``BasicCore`` or ``RomiCore``), whose
        arrays (``core.hands`` …) tests and benchmarks may read."""
        return self._core

    def _has_hand(self, i: int) -> bool:
        return self._seeds[i] is not None

    # ------------------------------------------------------------------ looking in

    def observe(self, i: int, seat: int) -> np.ndarray:
        return self._core.observe(self._observed_slot(i, seat), seat)

    def state(self, i: int) -> GameState:
        """A new ``GameState`` equal to slot ``i``'s hand (rebuilt from the arrays: changing it
        changes nothing in the slot)."""
        index = operator.index(i)
        if self._seeds[index] is None:
            raise RuntimeError("call reset() first")
        return GameState.from_dict(self._core.state_dict(index, self._seeds[index], self._moves))
