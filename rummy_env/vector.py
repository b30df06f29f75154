"""Many hands of one game stepped together: arrays in, arrays out.

``VectorGame`` holds ``num_envs`` independent hands (or matches) of one game and steps them all
at once, which is how the trainer, the arena and the benchmarks play in bulk. Each call writes
into preallocated buffers:

==================  ====================  =====================================================
attribute           shape, dtype          contents
==================  ====================  =====================================================
``observations``    (N, obs) float32      the observation of the seat to act in each hand
``action_masks``    (N, actions) int8     its legal actions (1 = legal)
``to_act``          (N,) int64            the seat to act
``rewards``         (N, players) float32  at a hand's (or match's) end, each seat's reward
``terminated``      (N,) bool             the hand (match) ended this step (win or stalemate)
``truncated``       (N,) bool             it was cut off (turn cap G9; ``max_hands`` in a match)
==================  ====================  =====================================================

The observations, masks and rewards are those of the PettingZoo environment
(``rummy_env.env``) for the same seeds and actions: slot ``i`` deals as ``env.reset(seed=seed +
i)`` followed by resets without a seed, and a test steps both in lockstep. A hand that ends is
replaced at once by the next deal (automatic reset, in the same step): after ``step`` the row of
a finished hand already shows the new hand, and ``results[i]`` holds what the old one ended with
(outcome, winner, payments, points, turns), else None.

Rewards are zero-sum points times ``reward_scale`` (docs/rules.md, "Rewards for learning"): the winner
receives what the others pay; stalemate (G8) and cut-off (G9) hands give 0. With ``match=True``
hands are dealt until the match target (I8, B6, R8) and rewards come at the match's end, as in
the environment.

``step`` checks every action against its row's mask before changing anything: an action of the
wrong shape or dtype, or an illegal action in any row, raises ``IllegalActionError`` naming the
row, the action and why, and no row changes.

``settlements[i]`` holds how the hand that ended in row ``i`` this call settled
(``rummy_env.episode.Settlement``: its ``HandResult``, the match, and the infos the environments
hand out, ``info(agents)``), else None.

``load(i, state)`` puts a chosen ``GameState`` (a duplicate deal, a guess of the hidden cards)
into slot ``i``, and ``step_rows(rows, actions)`` steps only some slots, leaving the others as
they are: the arena and the search agent's rollouts play fixed sets of hands this way, and a
slot whose hand is done waits instead of playing one nobody wants.

Backends: ``backend="python"`` is the reference engine (``rummy_env.game``), for every game.
``backend="numba"`` (every game: Indian Rummy, 2 to 6 players; Basic Rummy and römi, 2 to 4
players; hand and match mode) steps all slots in compiled kernels (``rummy_env.compiled.indian``,
``rummy_env.compiled.basic``, ``rummy_env.compiled.romi``) with the same deals, observations, masks,
rewards and results for the same seeds and actions (``tests/test_vector_compiled.py``,
``tests/test_vector_compiled_basic.py`` and ``tests/test_vector_compiled_romi.py`` step both in
lockstep); its ``state(i)`` is a new ``GameState`` rebuilt from the arrays, and ``load`` copies the
state it is given. The first process compiles a game's kernels (Indian about 7 CPU seconds, römi
about 20; Basic's few own kernels call römi's) and caches them on disk; later processes load them
in well under a second (``docs/env.md``, "Backends").
"""

from __future__ import annotations

from .batch import BACKEND_CLASSES, BACKENDS, HandEnd, IllegalActionError, VectorGame
from .compiled.vector import CompiledVectorGame

BACKEND_CLASSES["numba"] = CompiledVectorGame

__all__ = ["VectorGame", "HandEnd", "IllegalActionError", "BACKENDS"]
