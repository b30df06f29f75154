"""The one play loop: a hand played move by move, and what happens when it ends (``docs/design.md``).

Two parts, shared by every front door:

* ``HandPlay``: one hand being played on the Python engine: apply a move, bring the
  observations up to date (``ObservationTracker``), build the action mask of the seat to act
  (``ActionLayout.mask_of``, the one mask builder). The PettingZoo env holds one; ``VectorGame``
  (``backend="python"``) holds one per slot, and the single-agent wrapper plays through
  ``VectorGame``.
* ``settle``: a hand that ended, turned into rewards, termination or truncation, the infos the
  environments hand out (``Settlement.info``) and, in match mode, the match's bookkeeping (I8, B6,
  R8): the totals, the points of the match reward, the match's end, ``max_hands``. The PettingZoo
  env and ``VectorGame`` (both backends) call it.

Rewards are zero-sum points times ``reward_scale`` (``docs/rules.md``, "Rewards for learning"); a
stalemate (G8) terminates and a cut-off hand (G9) truncates, both with 0. This module imports no
RL library: the batched loop (``rummy_env.vector``) builds on it without PettingZoo.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .encoding import ActionLayout, ObservationEncoder, ObservationTracker
from .game import DRAW, GameState, HandResult
from .match import Match

MATCH_REWARDS = ("points", "win")
"""``match_reward``: the sum of the hand rewards, or +1 split among the winners and −1 among the others."""

ILLEGAL_ACTION_MODES = ("raise", "terminate")


class IllegalActionError(ValueError):
    """An action the mask forbids, or one outside the action space; the game is left as it was."""


def check_seed(seed) -> int | None:
    """``seed`` as a Python int (numpy ints accepted), or None; anything else is a ``ValueError``.

    Negative seeds are refused, as Gymnasium does: ``random.Random`` would deal ``-1`` like ``1``.
    """
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)):
        raise ValueError(f"seed={seed!r}: expected an int >= 0 or None, not a bool")
    try:
        value = operator.index(seed)
    except TypeError:
        raise ValueError(f"seed={seed!r}: expected an int >= 0 or None, not {type(seed).__name__}") from None
    if value < 0:
        raise ValueError(f"seed={seed!r}: expected an int >= 0 or None")
    return value


def is_number(value) -> bool:
    """Whether ``value`` is a real number (numpy numbers too), not a bool."""
    return not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))


def check_illegal_options(illegal_action: str, illegal_reward) -> None:
    """``illegal_action`` and ``illegal_reward`` of the environments; a bad one names itself."""
    if illegal_action not in ILLEGAL_ACTION_MODES:
        raise ValueError(f"option illegal_action={illegal_action!r}: expected 'raise' or 'terminate'")
    if illegal_reward is not None and (not is_number(illegal_reward) or not math.isfinite(illegal_reward)):
        raise ValueError(f"option illegal_reward={illegal_reward!r}: expected a finite number or None")


def illegal_action_message(index: int, agent: str, engine_message: str) -> str:
    """The engine's refusal restated for action ``index``, naming ``agent`` once."""
    reason = engine_message.removeprefix("illegal move ")
    move, colon, why = reason.partition(": ")
    if not colon:
        move, why = "", reason
    move = move.removesuffix(f" for {agent}")
    return f"illegal action {index}{' ' + move if move else ''} for {agent}: {why}"


@dataclass(frozen=True)
class EpisodeOptions:
    """The options every rummy environment shares: one hand or a match, and the reward's form."""

    match: bool = False
    """Play whole matches (I8, B6, R8) instead of single hands."""
    match_reward: str = "points"
    """``MATCH_REWARDS``."""
    max_hands: int = 100
    """A match longer than this is truncated with 0 rewards."""
    reward_scale: float = 1.0
    """Every reward is multiplied by it."""

    def __post_init__(self) -> None:
        if not isinstance(self.match, bool):
            raise ValueError(f"option match={self.match!r} must be True or False")
        if self.match_reward not in MATCH_REWARDS:
            raise ValueError(f"option match_reward={self.match_reward!r}: expected 'points' or 'win'")
        if isinstance(self.max_hands, bool) or not isinstance(self.max_hands, int) or self.max_hands < 1:
            raise ValueError(f"option max_hands={self.max_hands!r} is out of range: expected an int >= 1")
        if not is_number(self.reward_scale) or not 0 < self.reward_scale < math.inf:
            raise ValueError(f"option reward_scale={self.reward_scale!r}: expected a finite number > 0")
        object.__setattr__(self, "reward_scale", float(self.reward_scale))

    def default_illegal_reward(self, max_hand_payment: int) -> float:
        """Minus the most a player can pay in one hand, times ``reward_scale`` (-1 times it with
        ``match_reward="win"``)."""
        worst = -1.0 if (self.match and self.match_reward == "win") else -float(max_hand_payment)
        return worst * self.reward_scale


@dataclass(frozen=True)
class HandEnd:
    """How one hand (or, in match mode, one match) in a slot ended."""

    outcome: str
    """``"win"``, ``"stalemate"`` (G8), ``"cut_off"`` (G9) or, in match mode, ``"match"``."""
    winner: int | None
    """The winning seat of a hand; None for a stalemate, a cut-off or a match."""
    payments: tuple[int, ...]
    """What each seat paid (a hand) or its match total (a match)."""
    points: tuple[float, ...]
    """Each seat's reward before ``reward_scale`` (zero-sum points, or the match reward)."""
    turns: int
    """Turns played in the hand (a match: hands played)."""


def match_rewards(points: Sequence[float], winners: Sequence[int], match_reward: str) -> list[float]:
    """Each seat's reward at a match's end, before scaling (``MATCH_REWARDS``)."""
    n = len(points)
    if match_reward == "points":
        return [float(p) for p in points]
    if len(winners) == n:
        return [0.0] * n
    return [1.0 / len(winners) if p in winners else -1.0 / (n - len(winners)) for p in range(n)]


@dataclass(frozen=True)
class Settlement:
    """What a finished hand means for its episode (``settle``)."""

    result: HandResult
    """How the hand ended."""
    match: Match | None
    """The match it belongs to (its totals already count the hand), or None."""
    rewards: tuple[float, ...]
    """Each seat's reward, scaled; zero unless the episode ended with a result."""
    terminated: bool
    """The episode ended: a hand's win or stalemate, or the match's end."""
    truncated: bool
    """The episode was cut off: the turn cap (G9), or ``max_hands`` in a match."""
    end: HandEnd | None
    """How the episode ended, or None while the match goes on."""

    @property
    def episode_over(self) -> bool:
        return self.terminated or self.truncated

    def info(self, agents: Sequence[str]) -> dict:
        """The environments' info after the hand: its ``hand_result`` (outcome, winner, payments
        and points by agent name) and, in a match, ``match_totals``, ``hands_played`` and, at
        its end, ``match_winners``."""
        result = self.result
        info: dict = {"hand_result": {
            "outcome": result.outcome,
            "winner": None if result.winner is None else agents[result.winner],
            "payments": {agents[p]: pay for p, pay in enumerate(result.payments)},
            "points": {agents[p]: pts for p, pts in enumerate(result.rewards)},
        }}
        match = self.match
        if match is not None:
            info["match_totals"] = {agents[p]: t for p, t in enumerate(match.totals)}
            info["hands_played"] = match.hands_played
            if match.is_over:
                info["match_winners"] = [agents[p] for p in match.winners]
        return info


def settle(result: HandResult, turns: int, match: Match | None, points: list[float],
           options: EpisodeOptions) -> Settlement:
    """A hand of ``turns`` turns ended with ``result``: its rewards and what follows.

    In match mode the hand is recorded in ``match`` and its points added to ``points`` (each
    seat's running sum of hand rewards, for ``match_reward="points"``); the episode ends when the
    match does (I8, B6, R8) or after ``options.max_hands`` hands (truncated, 0 rewards).
    """
    scale = options.reward_scale
    hand_points = result.rewards
    if match is None:
        cut_off = result.outcome == "cut_off"
        end = HandEnd(result.outcome, result.winner, tuple(result.payments), tuple(float(p) for p in hand_points),
                      turns)
        return Settlement(result, None, tuple(p * scale for p in hand_points), not cut_off, cut_off, end)
    match.record(result)
    for p, got in enumerate(hand_points):
        points[p] += got
    zeros = (0.0,) * len(points)
    if match.is_over:
        reward = match_rewards(points, match.winners, options.match_reward)
        end = HandEnd("match", None, tuple(match.totals), tuple(reward), match.hands_played)
        return Settlement(result, match, tuple(r * scale for r in reward), True, False, end)
    if match.hands_played >= options.max_hands:
        return Settlement(result, match, zeros, False, True,
                          HandEnd("cut_off", None, tuple(match.totals), zeros, match.hands_played))
    return Settlement(result, match, zeros, False, False, None)


class HandPlay:
    """One hand on the Python engine: apply → observe → mask, for any seat.

    ``mask()`` lists the legal moves of the seat to act and keeps that list, so that ``play``
    of an action the mask allows skips the engine's search for the move (``GameState.apply_listed``).
    """

    __slots__ = ("layout", "tracker", "state", "_moves", "_listed", "_allowed")

    def __init__(self, layout: ActionLayout, encoder: ObservationEncoder):
        self.layout = layout
        self.tracker = ObservationTracker(encoder)
        self.state: GameState | None = None
        self._moves = layout.moves
        self._listed: tuple | None = None
        self._allowed = b""

    def start(self, state: GameState) -> None:
        """Play ``state`` (the object itself) from now on."""
        self.state = state
        self.tracker.start(state)
        self._listed = None

    def observe(self, seat: int, match_totals=None) -> np.ndarray:
        """The observation of ``seat`` now (a new array)."""
        return self.tracker.observe(self.state, seat, match_totals)

    def mask(self) -> bytes:
        """The action mask of the seat to act, as bytes 0/1."""
        moves = self.state.legal_moves()
        self._listed = moves
        mask = self._allowed = bytes(self.layout.mask_of(moves))
        return mask

    def play(self, action: int) -> None:
        """Play action id ``action`` (0 <= action < the layout's size) for the seat to act.

        An action the last ``mask()`` allowed is played at once; any other is checked by the
        engine, which raises ``IllegalMoveError`` and changes nothing when it is illegal.
        """
        state = self.state
        move = self._moves[action]
        seat = state.current
        drawn = state.stock[-1] if move[0] == DRAW and state.stock else -1  # for the tracker
        if self._listed is not None and self._allowed[action]:
            state.apply_listed(move, self._listed)
        else:
            state.apply(move)
        self.tracker.moved(seat, move, state, drawn)
