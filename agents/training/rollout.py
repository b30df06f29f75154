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

from dataclasses import dataclass, field

import numpy as np
import torch

from agents.policy import sample_actions
from agents.policy_search import win_share
from rummy_env.cards import NUM_TYPES
from rummy_env.encoding import action_layout, observation_layout
from rummy_env.shaping import Potential
from rummy_env.vector import VectorGame

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

    def __len__(self) -> int:
        return len(self.actions)

    @staticmethod
    def concatenate(parts: list[Rollout]) -> Rollout:
        """One rollout of several (chains keep pointing inside their own part)."""
        offsets = np.cumsum([0] + [len(p) for p in parts[:-1]])
        next_index = [np.where(p.next_index >= 0, p.next_index + off, -1) for p, off in zip(parts, offsets)]
        return Rollout(*(np.concatenate([getattr(p, name) for p in parts]) for name in
                         ("observations", "masks", "actions", "logp", "values", "rewards")),
                       np.concatenate(next_index), np.concatenate([p.done for p in parts]),
                       np.concatenate([p.bootstrap for p in parts]),
                       [h for p in parts for h in p.hands], sum(p.env_steps for p in parts))


class Collector:
    """Plays ``num_envs`` hands against the pool and records the learner's decisions."""

    def __init__(self, game: str, num_players: int, num_envs: int, seed: int, model: torch.nn.Module,
                 reward_scale: float, gamma: float, shaping: bool, shaping_coef: float, backend: str = "numba",
                 pool: tuple | None = None, win_bonus: float = 0.0, **rule_options):
        self.game = game
        self.num_players = num_players
        self.venv = VectorGame(game, num_envs, num_players, seed=seed, reward_scale=reward_scale,
                               backend=backend, **rule_options)
        self.model = model
        self.win_bonus = float(win_bonus)
        parts = observation_layout(game, num_players)
        self.hand = parts["hand"]
        known = parts["known"]
        self.others_known = slice(known.start + NUM_TYPES, known.stop)  # rows 1..: the other seats, in turn
        self.oracle_rng = np.random.default_rng([seed, 11])  # its own stream: off, it changes no hand
        self.gamma = gamma
        self.shaping_scale = shaping_coef * reward_scale if shaping else 0.0
        self.potential = Potential(game, num_players)
        self.rng = np.random.default_rng(seed)
        self.generator = torch.Generator()
        self.generator.manual_seed(seed)
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
        """Draw the next hand's opponent and the learner's seat (every seat in self-play)."""
        name = self.pool_names[self.rng.choice(len(self.pool_names), p=self.pool_probs)]
        self.opponent[i] = name
        self.learner[i] = name == "self"
        if name != "self":
            self.learner[i, self.rng.integers(self.num_players)] = True

    # ------------------------------------------------------------------ acting

    @torch.no_grad()
    def _policy(self, model, observations: np.ndarray, masks: np.ndarray):
        logits, values = model(torch.from_numpy(observations), torch.from_numpy(masks))
        log_p = torch.log_softmax(logits, dim=-1)
        # softmax, not log_p.exp(): exp is ten times slower on the masked entries' -3.4e38
        actions = sample_actions(torch.softmax(logits, dim=-1), self.generator)
        return actions.numpy(), log_p.gather(1, actions[:, None]).squeeze(1).numpy(), values.numpy()

    def _bonus(self, winner: int | None, seat: int) -> float:
        """``win_bonus`` for the hand's winner, its share taken from every other seat (zero-sum)."""
        return win_share(self.win_bonus, winner, seat, self.num_players)

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

    def collect(self, target: int, teacher=None, oracle_share: float = 0.0) -> Rollout:
        """At least ``target`` learner decisions (an ``oracle_share`` of them seeing the other hands:
        ``reveal``).

        With a ``teacher`` (cloning), the teacher plays every seat of every hand, every seat's
        decisions are kept, and the hands in progress when ``target`` is reached are played to
        their end, so that every chain ends with the hand's result (nothing to bootstrap); a slot
        whose hand has ended by then waits at the start of its next hand, unplayed, so the teacher
        is asked only for decisions that are kept, and the next call records whole hands."""
        venv = self.venv
        n, players = venv.num_envs, self.num_players
        last = np.full((n, players), -1, np.int64)
        last_potential = np.zeros((n, players))
        obs_parts, mask_parts, action_parts, logp_parts, value_parts = [], [], [], [], []
        rewards: list[float] = []
        next_index: list[int] = []
        done: list[bool] = []
        hands = []
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
                       bootstrap, hands, env_steps)

    def reveal(self, observations: np.ndarray, rows: np.ndarray, seats: np.ndarray, share: float) -> None:
        """Oracle guiding (Suphx, Li et al. 2020), in place: on a ``share`` of the decisions, drawn
        one by one, the known-cards rows of the other seats show their whole hands. The learner's
        rollout keeps what it saw, so PPO's ratios stay exact; as the share falls to 0 the policy
        learns to do without."""
        if not share:
            return
        shown = np.flatnonzero(self.oracle_rng.random(len(rows)) < share)
        if shown.size:
            observations[shown, self.others_known] = self.other_hands(rows[shown], seats[shown])

    def other_hands(self, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """``(len(rows), (players − 1) · 53)``: for each (row, seat), the hands of the seats after it."""
        out = np.zeros((len(rows), (self.num_players - 1) * NUM_TYPES), np.float32)
        for k, (i, seat) in enumerate(zip(rows.tolist(), seats.tolist())):
            for offset in range(1, self.num_players):
                other = (seat + offset) % self.num_players
                out[k, (offset - 1) * NUM_TYPES:offset * NUM_TYPES] = self.venv.observe(i, other)[self.hand]
        return out
