"""The single-agent wrapper plays through ``rummy_env.vector.VectorGame``; ``AecSingleAgent`` below is
the loop it replaced, over the PettingZoo env (``rummy_env.env``), kept as the reference. For the same
seeds, learner actions and opponents both give exactly the same observations, masks, rewards,
terminated/truncated and infos, in all three games, 2 and 3+ players, hand and match mode, with
illegal learner actions ("terminate" and "raise"), cut-off hands (G9) and truncated matches; with
``render_mode="ansi"`` in some cases, the rendered text too.

``python benchmarks/bench_env.py`` times ``AecSingleAgent`` against the wrapper (its "single-agent
wrapper" lines).
"""

from __future__ import annotations

import operator
import warnings
import zlib
from collections import Counter

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces

from rummy_env import make_single_agent
from rummy_env.aec_env import IllegalActionError, check_seed, raw_env, warn_reset_options
from rummy_env.single_agent import RandomOpponent


# ----------------------------------------------------------------------------- the reference


def _reference_policy(opponent):
    act_batch = getattr(opponent, "act_batch", None)
    if callable(act_batch):
        return lambda observation, mask: np.asarray(act_batch(observation[None, :], mask[None, :]))[0]
    if hasattr(opponent, "act") and callable(opponent.act):
        return opponent.act
    return opponent


class AecSingleAgent(gymnasium.Env):
    """The single-agent wrapper as it was before it played through ``VectorGame``: one hand at a time
    through the PettingZoo env, whose rewards, infos and illegal-action handling are the learner's."""

    def __init__(self, game="indian", num_players=None, opponents=None, seat=None, render_mode=None, **options):
        if opponents is not None and isinstance(opponents, (list, tuple)):
            opponent_list = list(opponents)
            num_players = len(opponent_list) + 1 if num_players is None else num_players
        else:
            num_players = 2 if num_players is None else num_players
            opponent_list = None if opponents is None else [opponents] * (num_players - 1)
        options.setdefault("illegal_action", "terminate")
        self.aec = raw_env(game, num_players, **options)
        self.render_mode = render_mode
        self.num_players = num_players
        self.fixed_seat = seat
        if opponent_list is None:
            self._random = [RandomOpponent() for _ in range(num_players - 1)]
            opponent_list = self._random
        else:
            self._random = [o for o in opponent_list if isinstance(o, RandomOpponent)]
        self.opponents = opponent_list
        self._policies = [_reference_policy(o) for o in opponent_list]
        inner = self.aec.observation_space("player_0")["observation"]
        self.observation_space = spaces.Box(inner.low, inner.high, dtype=np.float32)
        self.action_space = spaces.Discrete(self.aec.action_space("player_0").n)
        self.learner = "player_0"
        self._mask = np.zeros(self.action_space.n, np.int8)

    def reset(self, *, seed=None, options=None):
        seed = check_seed(seed)
        warn_reset_options(options)
        super().reset(seed=seed)
        rng = self.np_random
        seat = self.fixed_seat if self.fixed_seat is not None else int(rng.integers(self.num_players))
        self.learner = f"player_{seat}"
        others = [f"player_{(seat + i) % self.num_players}" for i in range(1, self.num_players)]
        self._opponent_of = dict(zip(others, self._policies))
        for opponent in self._random:
            opponent.seed(int(rng.integers(2**63)))
        aec = self.aec
        for _ in range(1000):
            aec.reset(seed=int(rng.integers(2**63)))
            self._hands_seen = -1
            self._new_hand_check()
            self._opponents_move()
            if not (aec.terminations[self.learner] or aec.truncations[self.learner]):
                break
        else:
            raise RuntimeError("1000 deals in a row ended before the learner could act")
        return self._observation()

    def step(self, action):
        aec = self.aec
        aec.step(action)
        reward = aec.rewards[self.learner]
        illegal = "illegal_action" in aec.infos[self.learner]
        reward += self._opponents_move()
        obs, info = self._observation()
        terminated = bool(aec.terminations[self.learner])
        truncated = bool(aec.truncations[self.learner]) and not illegal
        return obs, float(reward), terminated, truncated, info

    def action_masks(self):
        return self._mask.astype(bool)

    def render(self):
        from rummy_env.render import render_text

        aec = self.aec
        totals = aec.match.totals if aec.match is not None else None
        return render_text(aec.game_state, seat=int(self.learner.split("_")[1]), match_totals=totals, color=False)

    def _new_hand_check(self):
        match = self.aec.match
        key = 0 if match is None else match.hands_played
        if key != self._hands_seen:
            self._hands_seen = key
            for opponent in self.opponents:
                reset = getattr(opponent, "reset", None)
                if callable(reset) and not isinstance(opponent, RandomOpponent):
                    reset()

    def _opponents_move(self):
        aec = self.aec
        reward = 0.0
        while True:
            agent = aec.agent_selection
            if aec.terminations[agent] or aec.truncations[agent]:
                return reward
            self._new_hand_check()
            if agent == self.learner:
                return reward
            observed = aec.observe(agent)
            mask = observed["action_mask"]
            action = self._opponent_of[agent](observed["observation"], mask)
            index = operator.index(action)
            if not 0 <= index < mask.size or not mask[index]:
                raise ValueError(f"opponent {agent} chose an illegal action: {aec.describe_action(index)}")
            aec.step(index)
            reward += aec.rewards[self.learner]

    def _observation(self):
        observed = self.aec.observe(self.learner)
        self._mask = observed["action_mask"]
        info = {"action_mask": self._mask.copy(), "seat": self.learner}
        info.update(self.aec.infos.get(self.learner) or {})
        return observed["observation"].copy(), info


# ----------------------------------------------------------------------------- opponents


class LastLegal:
    """``act`` and ``reset``: plays the last legal action, counts its hands."""

    def __init__(self):
        self.resets = 0

    def reset(self):
        self.resets += 1

    def act(self, observation, action_mask):
        return int(np.flatnonzero(action_mask)[-1])


class ByObservation:
    """``act_batch``: a legal action chosen by a hash of the observation, so that any difference in
    what opponents are shown changes the game."""

    def __init__(self):
        self.resets = 0

    def reset(self):
        self.resets += 1

    def act_batch(self, observations, masks):
        out = []
        for observation, mask in zip(observations, masks):
            legal = np.flatnonzero(mask)
            out.append(legal[zlib.crc32(np.ascontiguousarray(observation).tobytes()) % legal.size])
        return np.array(out, dtype=np.int64)


def first_legal(observation, action_mask):
    return int(np.flatnonzero(action_mask)[0])


def opponent_sets(kind: str, players: int):
    """Two equal, independent sets of opponents (one per wrapper)."""
    def one():
        if kind == "random":
            return None
        if kind == "shared":
            return ByObservation()
        makers = [LastLegal, ByObservation, lambda: first_legal, lambda: RandomOpponent(5)]
        return [makers[i % len(makers)]() for i in range(players - 1)]
    return one(), one()


# ----------------------------------------------------------------------------- lockstep


def assert_same(got, want, where):
    assert len(got) == len(want), where
    names = ("observation", "reward", "terminated", "truncated", "info") if len(want) == 5 else ("observation", "info")
    for name, a, b in zip(names, got, want):
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), f"{where}: {name} differs"
        elif name == "info":
            assert a.keys() == b.keys(), f"{where}: info keys {sorted(a)} != {sorted(b)}"
            for key in b:
                if isinstance(b[key], np.ndarray):
                    assert a[key].dtype == b[key].dtype and np.array_equal(a[key], b[key]), f"{where}: info[{key!r}]"
                else:
                    assert a[key] == b[key], f"{where}: info[{key!r}] {a[key]!r} != {b[key]!r}"
        else:
            assert type(a) is type(b) and a == b, f"{where}: {name} {a!r} != {b!r}"


def run_lockstep(game, players, episodes, opponents="random", seed=0, illegal_every=0, seat=None, render=False,
                 **options):
    """Play ``episodes`` episodes in both wrappers, comparing every step (and the ``"ansi"`` rendering
    with ``render``); how the episodes ended, counted."""
    mine, theirs = opponent_sets(opponents, players)
    mode = "ansi" if render else None
    new = make_single_agent(game, opponents=mine, num_players=players, seat=seat, render_mode=mode, **options)
    old = AecSingleAgent(game, num_players=players, opponents=theirs, seat=seat, render_mode=mode, **options)
    assert new.observation_space == old.observation_space and new.action_space == old.action_space
    rng = np.random.default_rng(seed)
    steps = 0
    endings = Counter()
    for episode in range(episodes):
        reset_seed = seed * 1000 + episode if episode % 3 == 0 else None  # also resets without a seed
        got, want = new.reset(seed=reset_seed), old.reset(seed=reset_seed)
        assert_same(got, want, f"{game} episode {episode} reset")
        for t in range(100_000):
            mask = new.action_masks()
            assert np.array_equal(mask, old.action_masks())
            if illegal_every and rng.integers(illegal_every) == 0:
                action = int(rng.choice(np.flatnonzero(~mask)))
            else:
                action = int(rng.choice(np.flatnonzero(mask)))
            if options.get("illegal_action") == "raise" and not mask[action]:
                with pytest.raises(IllegalActionError) as error_new:
                    new.step(action)
                with pytest.raises(IllegalActionError) as error_old:
                    old.step(action)
                assert str(error_new.value) == str(error_old.value)
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the illegal-action warning, in both
                got, want = new.step(action), old.step(action)
            steps += 1
            assert_same(got, want, f"{game} episode {episode} step {t}")
            if render:
                assert new.render() == old.render(), f"{game} episode {episode} step {t}: render"
            if got[2] or got[3]:
                info = got[4]
                endings["terminated" if got[2] else "truncated"] += 1
                endings["illegal" if "illegal_action" in info else info["hand_result"]["outcome"]] += 1
                endings["match_winners"] += "match_winners" in info
                endings["steps"] += t + 1
                break
        else:
            raise AssertionError("episode did not end")
    assert not new.action_masks().any() and not old.action_masks().any()
    for a, b in zip(mine if isinstance(mine, list) else [mine], theirs if isinstance(theirs, list) else [theirs]):
        assert getattr(a, "resets", None) == getattr(b, "resets", None)  # the same new-hand calls
    return endings


CASES = [
    # game, players, episodes, opponents, options, endings that must occur
    ("indian", 2, 25, "random", {}, {"stalemate", "terminated"}),
    ("indian", 2, 20, "mixed", {"render": True}, {"declare"}),
    ("indian", 4, 15, "mixed", {"max_turns": 60}, {"cut_off", "truncated"}),
    ("basic", 2, 50, "mixed", {}, {"out"}),
    ("basic", 3, 30, "random", {"reward_scale": 0.01}, {"out"}),
    ("romi", 2, 30, "random", {}, {"out"}),
    ("romi", 3, 15, "shared", {"max_turns": 60}, {"cut_off"}),
    ("indian", 2, 6, "mixed", {"match": True, "match_target": 150}, {"match_winners"}),
    ("indian", 3, 6, "mixed", {"match": True, "match_target": 120, "match_reward": "win", "max_hands": 3},
     {"match_winners"}),
    ("indian", 2, 8, "random", {"match": True, "max_turns": 40, "max_hands": 3}, {"truncated"}),
    ("basic", 2, 8, "mixed", {"match": True, "match_target": 60, "reward_scale": 0.1, "render": True},
     {"match_winners"}),
    ("basic", 4, 5, "random", {"match": True, "match_target": 40, "max_turns": 80}, {"match_winners"}),
    ("romi", 2, 6, "shared", {"match": True, "match_target": 150, "max_hands": 4}, {"truncated"}),
    ("romi", 3, 5, "mixed", {"match": True, "match_target": 120, "max_turns": 80, "render": True}, {"match_winners"}),
]


CASE_IDS = [f"{c[0]}-{c[1]}p-{'match' if c[4].get('match') else 'hand'}-{i}" for i, c in enumerate(CASES)]


@pytest.mark.parametrize("game, players, episodes, opponents, options, expected", CASES, ids=CASE_IDS)
def test_the_wrapper_steps_as_the_pettingzoo_loop_did(game, players, episodes, opponents, options, expected):
    endings = run_lockstep(game, players, episodes, opponents, seed=players, **options)
    assert expected <= {name for name, count in endings.items() if count}, endings


@pytest.mark.parametrize("game", [pytest.param("indian", marks=pytest.mark.slow), "basic", "romi"])
@pytest.mark.parametrize("mode", ["terminate", "raise"])
def test_illegal_learner_actions_step_as_the_pettingzoo_loop_did(game, mode):
    endings = run_lockstep(game, 2, 12, "mixed", seed=7, illegal_every=25, illegal_action=mode, seat=1, max_turns=100)
    endings += run_lockstep(game, 3, 4, "random", seed=8, illegal_every=40, illegal_action=mode, match=True,
                            match_target=60, max_turns=100, illegal_reward=-3.5)
    assert (endings["illegal"] > 0) == (mode == "terminate"), endings


def test_odd_learner_actions_are_refused_with_the_pettingzoo_message():
    for action in (True, np.bool_(False), 5.0, "1", -1, 10**6, np.int64(10**6)):
        messages = []
        for env in (make_single_agent("basic", seat=0, illegal_action="raise"),
                    AecSingleAgent("basic", seat=0, illegal_action="raise")):
            env.reset(seed=0)
            with pytest.raises(IllegalActionError) as error:
                env.step(action)
            messages.append(str(error.value))
        assert messages[0] == messages[1], action


def test_human_rendering_prints_the_learners_view_after_every_step(capsys):
    env = make_single_agent("romi", seat=0, render_mode="human")
    text = make_single_agent("romi", seat=0, render_mode="ansi")
    env.reset(seed=3), text.reset(seed=3)
    assert capsys.readouterr().out == ""
    for _ in range(3):
        action = int(np.flatnonzero(env.action_masks())[0])
        env.step(action), text.step(action)
        assert env.render() is None
        printed = capsys.readouterr().out
        assert printed == 2 * (text.render() + "\n")  # once by step(), once by render()
