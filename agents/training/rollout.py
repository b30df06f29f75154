"""Collecting learner decisions: many hands stepped together through ``rummy_env.vector``.

Each tick, every hand's seat to act is either the learner's (one forward pass for all of them)
or an opponent's from the pool (the rule agent, random, or a frozen snapshot: each kind acts on
its rows in one batch). Each hand draws its opponent from the pool's current probabilities when
it is dealt; against ``self`` the learner holds every seat and every seat's decisions are kept.

Rewards (in reward units: points × ``reward_scale``) reach each seat's last decision of the hand
(``rollout.py`` chains, see ``agents.training.ppo``). With shaping on, each decision also gets
``γ Φ(s') − Φ(s)`` (Ng, Harada & Russell 1999), where ``Φ`` is minus the seat's hand penalty by
the exact solver at the start of its current turn (Indian: the I7 penalty; Basic and römi: the
least deadwood, B5, R7), times ``shaping_coef × reward_scale``, and ``Φ`` = 0 once the hand is
over. The shaping terms of a seat's hand add up to ``γ``-discounted differences of potentials, so
the best policy of the game is unchanged; logged win rates and points always come from the true
result. A chain still running when the rollout ends is bootstrapped with the value of the
seat's observation at that moment.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import torch

from agents.policy import sample_actions
from agents.policy_search import win_share
from rummy_env import solver
from rummy_env.cards import NUM_TYPES
from rummy_env.encoding import action_layout, observation_layout
from rummy_env.ruleset import make_ruleset
from rummy_env.vector import VectorGame

from .config import ORACLE_REVEALS, POTENTIALS
from .critic import HiddenHands

DECISION_TYPES = ("draw", "discard", "declare", "meld", "place")
"""Decision types for cloning accuracy, by the block of the action taken."""

_BLOCK_TYPE = {"draw": 0, "take_discard": 0, "take_cut": 0, "discard": 1, "declare": 2, "meld": 3, "place": 4}


def decision_types(game: str) -> np.ndarray:
    """Per action id of ``game``, the index in ``DECISION_TYPES`` of the decision it makes."""
    layout = action_layout(game)
    types = np.zeros(layout.num_actions, np.int8)
    for name, ids in layout.blocks.items():
        types[ids.start:ids.stop] = _BLOCK_TYPE.get(name, 4)
    return types


class Potential:
    """Minus the seat's hand penalty (``POTENTIALS``), memoised by hand: the shaping potential."""

    def __init__(self, game: str, num_players: int, kind: str = "deadwood"):
        if kind not in POTENTIALS:
            raise ValueError(f"shaping potential {kind!r}: expected one of {', '.join(POTENTIALS)}")
        parts = observation_layout(game, num_players)
        self.hand = parts["hand"]
        self.phase = parts["phase"].start
        self.rules = make_ruleset(game, num_players)
        # with the lives rule (I7) what a seat would pay is its penalty, the deadwood potential itself
        self.by_payment = kind == "payment" and not self.rules.spec.lives
        self.opened = parts["opened"].start if self.by_payment and "opened" in parts else None
        self._memo: dict[bytes, float] = {}

    def penalty_of(self, observation: np.ndarray) -> float:
        counts = np.rint(observation[self.hand]).astype(np.uint8)
        if self.by_payment:
            opened = self.opened is None or observation[self.opened] >= 0.5
            return float(self.rules.payment(counts.tolist(), opened))
        value = self._memo.get(counts.tobytes())
        return value if value is not None else float(self._solve(counts[None], [counts.tobytes()])[0])

    def is_draw_phase(self, observation: np.ndarray) -> bool:
        return bool(observation[self.phase] > 0.5)

    def draw_phase_rows(self, observations: np.ndarray) -> np.ndarray:
        """Per row of ``observations``: is the seat at the start of its turn (its draw)?"""
        return observations[:, self.phase] > 0.5

    def penalties(self, observations: np.ndarray) -> np.ndarray:
        """``penalty_of`` for every row of ``observations``: the hands not yet memoised solved in
        one batched call (``solver.hand_penalties``)."""
        if self.by_payment:
            return np.array([self.penalty_of(row) for row in observations], np.float64)
        counts = np.rint(observations[:, self.hand]).astype(np.uint8)
        keys = [row.tobytes() for row in counts]
        memo = self._memo
        out = np.array([memo.get(key, np.nan) for key in keys], np.float64)
        missing = np.flatnonzero(np.isnan(out))
        if missing.size:
            out[missing] = self._solve(counts[missing], [keys[i] for i in missing.tolist()])
        return out

    def _solve(self, counts: np.ndarray, keys: list[bytes]) -> np.ndarray:
        """The penalties of hands not memoised, in one batched solver call; memoised after."""
        if len(self._memo) > 200_000:
            self._memo.clear()
        solved = solver.hand_penalties(self.rules.game, counts).astype(np.float64)
        self._memo.update(zip(keys, solved.tolist()))
        return solved


@dataclass(frozen=True)
class Capture:
    """A learner decision kept with the true state of its hand, for the search of expert iteration
    with the true worlds (``expert_worlds: true``; ``agents.policy_search.true_worlds``)."""

    index: int
    """The decision's row in the rollout."""
    state: object
    """The hand's ``GameState`` at the decision (every hand, the stock: training only)."""
    seat: int
    """The learner's seat."""
    opponent: str
    """The pool entry the other seats play as (``self``: the learner holds every seat)."""
    opponent_seats: tuple[int, ...]
    """The seats the opponent holds (none against ``self``)."""


@dataclass
class Rollout:
    """Learner decisions in the order they were made (see ``agents.training.ppo``)."""

    observations: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    logp: np.ndarray
    values: np.ndarray
    rewards: np.ndarray
    next_index: np.ndarray
    done: np.ndarray
    bootstrap: np.ndarray
    hands: list = field(default_factory=list)
    """Per finished hand: (opponent name, learner seats, outcome, winner, points per seat, turns)."""
    env_steps: int = 0
    hidden: np.ndarray | None = None
    """With the oracle critic: per decision, the other seats' hands (``agents.training.critic``)."""
    captures: list = field(default_factory=list)
    """With ``capture_rate`` > 0: some decisions with the true state of their hand (``Capture``)."""

    def __len__(self) -> int:
        return len(self.actions)

    @staticmethod
    def concatenate(parts: list[Rollout]) -> Rollout:
        """One rollout of several (chains keep pointing inside their own part)."""
        offsets = np.cumsum([0] + [len(p) for p in parts[:-1]])
        next_index = [np.where(p.next_index >= 0, p.next_index + off, -1) for p, off in zip(parts, offsets)]
        hidden = None if parts[0].hidden is None else np.concatenate([p.hidden for p in parts])
        captures = [dataclasses.replace(c, index=c.index + int(off)) for p, off in zip(parts, offsets)
                    for c in p.captures]
        return Rollout(*(np.concatenate([getattr(p, name) for p in parts]) for name in
                         ("observations", "masks", "actions", "logp", "values", "rewards")),
                       np.concatenate(next_index), np.concatenate([p.done for p in parts]),
                       np.concatenate([p.bootstrap for p in parts]),
                       [h for p in parts for h in p.hands], sum(p.env_steps for p in parts), hidden, captures)


class Collector:
    """Plays ``num_envs`` hands against the pool and records the learner's decisions."""

    def __init__(self, game: str, num_players: int, num_envs: int, seed: int, model: torch.nn.Module,
                 reward_scale: float, gamma: float, shaping: bool, shaping_coef: float, backend: str = "python",
                 shaping_potential: str = "deadwood", pool: tuple | None = None, critic: torch.nn.Module | None = None,
                 win_bonus: float = 0.0, capture_rate: float = 0.0, shared_seats: float = 0.0,
                 oracle_reveal: str = "decision", **rule_options):
        self.game = game
        self.num_players = num_players
        self.venv = VectorGame(game, num_envs, num_players, seed=seed, reward_scale=reward_scale,
                               backend=backend, **rule_options)
        self.model = model
        self.win_bonus = float(win_bonus)
        self.shared_seats = float(shared_seats)
        self.critic = critic
        self.hidden_hands = HiddenHands(game, num_players)
        known = observation_layout(game, num_players)["known"]
        self.others_known = slice(known.start + NUM_TYPES, known.stop)  # rows 1..: the other seats, in turn
        self.oracle_rng = np.random.default_rng([seed, 11])  # its own stream: off, it changes no hand
        if oracle_reveal not in ORACLE_REVEALS:
            raise ValueError(f"oracle_reveal must be one of {ORACLE_REVEALS}, not {oracle_reveal!r}")
        self.oracle_reveal = oracle_reveal
        self.gamma = gamma
        self.shaping_scale = shaping_coef * reward_scale if shaping else 0.0
        self.potential = Potential(game, num_players, shaping_potential)
        self.rng = np.random.default_rng(seed)
        self.generator = torch.Generator()
        self.generator.manual_seed(seed)
        self.capture_rate = float(capture_rate)
        self.capture_rng = np.random.default_rng([seed, 7])  # its own stream: capturing changes no hand
        self.opponents: dict[str, object] = {}
        self.pool_names: list[str] = ["self"]
        self.pool_probs = np.ones(1)
        n = num_envs
        self.opponent = [""] * n
        self.learner = np.zeros((n, num_players), bool)
        self.turn_potential = np.zeros((n, num_players), np.float64)
        if pool is not None:  # the first hands are dealt against the configured pool, not self-play
            self.set_pool(*pool)
        self.venv.reset(seed)
        for i in range(n):
            self._deal_opponent(i)

    # ------------------------------------------------------------------ the pool

    def set_pool(self, names: list[str], probs: np.ndarray, opponents: dict[str, object]) -> None:
        """Opponents (agents with ``act_batch``, or networks) by name, and the chance of each per hand.

        The new chances apply to hands dealt from now on. An opponent that leaves the pool is kept
        until the hands still being played against it end."""
        missing = [name for name in names if name != "self" and name not in opponents]
        if missing:
            raise ValueError(f"pool entries {missing} have no opponent")
        playing = {name for name in self.opponent if name and name != "self"}
        kept = {name: self.opponents[name] for name in playing - set(opponents) if name in self.opponents}
        self.pool_names = list(names)
        self.pool_probs = np.asarray(probs, np.float64) / np.sum(probs)
        self.opponents = {**kept, **opponents}

    def _deal_opponent(self, i: int) -> None:
        """Draw the next hand's opponent and the learner's seats: every seat in self-play, else one
        seat, and with ``shared_seats`` > 0 each other seat is the learner's too with that chance
        (a mixed table; at least one seat stays the opponent's)."""
        name = self.pool_names[self.rng.choice(len(self.pool_names), p=self.pool_probs)]
        self.opponent[i] = name
        self.learner[i] = name == "self"
        if name != "self":
            seat = self.rng.integers(self.num_players)
            if self.shared_seats:
                shared = self.rng.random(self.num_players) < self.shared_seats
                shared[seat] = True
                if shared.all():
                    shared[(seat + 1 + self.rng.integers(self.num_players - 1)) % self.num_players] = False
                self.learner[i] = shared
            self.learner[i, seat] = True

    # ------------------------------------------------------------------ acting

    @torch.no_grad()
    def _policy(self, model, observations: np.ndarray, masks: np.ndarray, sample: bool = True):
        logits, values = model(torch.from_numpy(observations), torch.from_numpy(masks))
        log_p = torch.log_softmax(logits, dim=-1)
        if sample:  # softmax, not log_p.exp(): exp is ten times slower on the masked entries' -3.4e38
            actions = sample_actions(torch.softmax(logits, dim=-1), self.generator)
        else:
            actions = logits.argmax(dim=-1)
        return actions.numpy(), log_p.gather(1, actions[:, None]).squeeze(1).numpy(), values.numpy()

    def _bonus(self, winner: int | None, seat: int) -> float:
        """``win_bonus`` for the hand's winner, its share taken from every other seat (zero-sum)."""
        return win_share(self.win_bonus, winner, seat, self.num_players)

    @torch.no_grad()
    def _critic_values(self, observations: np.ndarray, hidden: np.ndarray) -> np.ndarray:
        return self.critic(torch.from_numpy(observations), torch.from_numpy(hidden)).numpy().astype(np.float32)

    def _opponent_actions(self, rows: np.ndarray, observations: np.ndarray, masks: np.ndarray,
                          actions: np.ndarray) -> None:
        names = [self.opponent[i] for i in rows]
        for name in sorted(set(names)):
            chosen = rows[[k for k, n in enumerate(names) if n == name]]
            opponent = self.opponents[name]
            if isinstance(opponent, torch.nn.Module):
                actions[chosen] = self._policy(opponent, observations[chosen], masks[chosen])[0]
            else:
                actions[chosen] = opponent.act_batch(observations[chosen], masks[chosen])

    # ------------------------------------------------------------------ collecting

    def collect(self, target: int, teacher=None, learner_share: float = 0.0, oracle_share: float = 0.0) -> Rollout:
        """At least ``target`` learner decisions (an ``oracle_share`` of them seeing the other hands:
        ``reveal``).

        With a ``teacher`` (cloning), the teacher plays every seat of every hand, every seat's
        decisions are kept, and the hands in progress when ``target`` is reached are played to
        their end, so that every chain ends with the hand's result (nothing to bootstrap); a slot
        whose hand has ended by then waits at the start of its next hand, unplayed, so the teacher
        is asked only for decisions that are kept, and the next call records whole hands. With a
        ``learner_share`` (DAgger), that share of the decisions, drawn one by one, is played by the
        network's greedy move instead; the teacher's move is still the one recorded, so the
        network learns what the teacher would do in the positions its own play leads to."""
        venv = self.venv
        n, players = venv.num_envs, self.num_players
        last = np.full((n, players), -1, np.int64)
        last_potential = np.zeros((n, players))
        obs_parts, mask_parts, action_parts, logp_parts, value_parts, hidden_parts = [], [], [], [], [], []
        rewards: list[float] = []
        next_index: list[int] = []
        done: list[bool] = []
        hands = []
        captures: list[Capture] = []
        count = 0
        env_steps = 0
        actions = np.zeros(n, np.int64)
        gamma, shaping = self.gamma, self.shaping_scale
        potential = self.potential
        recording = np.ones(n, bool)  # teacher: hands dealt after the target is reached are not kept
        rows = np.arange(n)
        while count < target or (teacher is not None and recording.any()):
            observations, masks, to_act = venv.observations, venv.action_masks, venv.to_act
            if teacher is None:
                mine = np.flatnonzero(self.learner[rows, to_act])
                others = np.setdiff1d(rows, mine, assume_unique=True)
            else:  # only the slots still recording play on: a finished one waits at its next hand
                mine, others = np.flatnonzero(recording), np.zeros(0, np.int64)
                teacher_actions = np.asarray(teacher.act_batch(observations[mine], masks[mine]), np.int64)
                actions[mine] = teacher_actions
                if learner_share:
                    own = mine[self.rng.random(mine.size) < learner_share]
                    if own.size:
                        actions[own] = self._policy(self.model, observations[own], masks[own], sample=False)[0]
            if mine.size:
                obs, msk = observations[mine].copy(), masks[mine].copy()
                seats = to_act[mine]
                if oracle_share and teacher is None:
                    self.reveal(obs, mine, seats, oracle_share)
                if teacher is None:
                    chosen, logp, values = self._policy(self.model, obs, msk)
                    actions[mine] = chosen
                else:
                    chosen = teacher_actions
                    logp, values = np.zeros(mine.size, np.float32), np.zeros(mine.size, np.float32)
                if self.critic is not None:
                    hidden = self.hidden_hands.read(venv, mine, seats)
                    hidden_parts.append(hidden)
                    if teacher is None:
                        values = self._critic_values(obs, hidden)
                if self.capture_rate and teacher is None:
                    captures.extend(self._captures(mine, seats, msk, count))
                obs_parts.append(obs)
                mask_parts.append(msk)
                action_parts.append(np.asarray(chosen, np.int64))
                logp_parts.append(logp)
                value_parts.append(values)
                if shaping:
                    drawing = potential.draw_phase_rows(obs)
                    if drawing.any():
                        self.turn_potential[mine[drawing], seats[drawing]] = -potential.penalties(obs[drawing])
                for k, i in enumerate(mine.tolist()):
                    seat = seats[k]
                    phi = self.turn_potential[i, seat] * shaping
                    index = count + k
                    previous = last[i, seat]
                    if previous >= 0:
                        next_index[previous] = index
                        rewards[previous] += gamma * phi - last_potential[i, seat]
                    last[i, seat] = index
                    last_potential[i, seat] = phi
                    rewards.append(0.0)
                    next_index.append(-1)
                    done.append(False)
                count += mine.size
            if others.size:
                self._opponent_actions(others, observations, masks, actions)
            stepped = rows if teacher is None else mine
            if stepped.size == n:
                venv.step(actions)
            else:
                venv.step_rows(stepped, actions[stepped])
            env_steps += stepped.size
            for i in np.flatnonzero(venv.terminated | venv.truncated):
                result = venv.results[i]
                seats = np.flatnonzero(self.learner[i]) if teacher is None else np.arange(players)
                if recording[i]:
                    for seat in seats:
                        previous = last[i, seat]
                        if previous >= 0:
                            rewards[previous] += (float(venv.rewards[i, seat]) + self._bonus(result.winner, seat)
                                                  - last_potential[i, seat])
                            done[previous] = True
                            last[i, seat] = -1
                    hands.append((self.opponent[i], tuple(int(s) for s in seats), result.outcome, result.winner,
                                  result.points, result.turns))
                    recording[i] = teacher is None or count < target
                self.turn_potential[i] = 0.0
                self._deal_opponent(i)
        bootstrap = np.zeros(count, np.float32)
        cut = np.argwhere(last >= 0)
        if len(cut) and teacher is None:
            views = np.stack([venv.observe(i, seat) for i, seat in cut])
            if oracle_share:
                self.reveal(views, cut[:, 0], cut[:, 1], oracle_share)
            if self.critic is not None:
                values = self._critic_values(views, self.hidden_hands.read(venv, cut[:, 0], cut[:, 1]))
            else:
                with torch.no_grad():
                    values = self.model(torch.from_numpy(views),
                                        torch.zeros(len(cut), venv.num_actions, dtype=torch.int8))[1].numpy()
            for (i, seat), view, value in zip(cut, views, values):
                previous = last[i, seat]
                bootstrap[previous] = value
                if shaping:
                    to_act_now = venv.to_act[i] == seat and not potential.is_draw_phase(view)
                    phi = self.turn_potential[i, seat] if to_act_now else -potential.penalty_of(view)
                    rewards[previous] += gamma * phi * shaping - last_potential[i, seat]
        return Rollout(np.concatenate(obs_parts), np.concatenate(mask_parts), np.concatenate(action_parts),
                       np.concatenate(logp_parts).astype(np.float32), np.concatenate(value_parts).astype(np.float32),
                       np.asarray(rewards, np.float32), np.asarray(next_index, np.int64), np.asarray(done, bool),
                       bootstrap, hands, env_steps,
                       np.concatenate(hidden_parts) if hidden_parts else None, captures)

    def reveal(self, observations: np.ndarray, rows: np.ndarray, seats: np.ndarray, share: float) -> None:
        """Oracle guiding (Suphx, Li et al. 2020), in place: the known-cards rows of the other seats
        (the known cards are part of their hands) also show hidden cards of those hands. By
        ``oracle_reveal``: ``decision``, a ``share`` of the decisions, drawn one by one, see the
        whole hands; ``card``, each hidden card is seen with chance ``share`` (Suphx's dropout of
        its oracle features), so the rows fill gradually as the share rises. The learner's rollout
        keeps what it saw, so PPO's ratios stay exact; as the share falls to 0 the policy learns to
        do without."""
        if not share:
            return
        if self.oracle_reveal == "card":
            hands = self.hidden_hands.read(self.venv, rows, seats)
            known = observations[:, self.others_known]
            hidden = np.maximum(hands - known, 0).astype(np.int64)
            observations[:, self.others_known] = known + self.oracle_rng.binomial(hidden, min(share, 1.0))
            return
        shown = np.flatnonzero(self.oracle_rng.random(len(rows)) < share)
        if shown.size:
            observations[shown, self.others_known] = self.hidden_hands.read(self.venv, rows[shown], seats[shown])

    def _captures(self, rows: np.ndarray, seats: np.ndarray, masks: np.ndarray, first_index: int) -> list[Capture]:
        """A ``capture_rate`` share of the learner's decisions in ``rows`` with more than one legal
        move, each with its hand's true state; none against random (nothing to search there)."""
        drawn = self.capture_rng.random(len(rows)) < self.capture_rate
        captures = []
        for k in np.flatnonzero(drawn & ((masks != 0).sum(axis=1) > 1)).tolist():
            i = int(rows[k])
            name = self.opponent[i]
            if name == "random":
                continue
            opponent_seats = () if name == "self" else tuple(int(s) for s in np.flatnonzero(~self.learner[i]))
            captures.append(Capture(first_index + k, self.venv.state(i), int(seats[k]), name, opponent_seats))
        return captures
