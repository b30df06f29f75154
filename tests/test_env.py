"""The PettingZoo AEC environment (docs/env.md; docs/rules.md "Rewards for learning", I8, B6, R8, G9)."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import rummy_env
from rummy_env import encoding as E
from rummy_env.aec_env import ENV_NAMES, IllegalActionError, env, raw_env
from rummy_env.game import GameState

SETUPS = [("indian", 2), ("indian", 3), ("indian", 6), ("basic", 2), ("basic", 4), ("romi", 2), ("romi", 4)]


def random_action(observation, rng: random.Random) -> int:
    legal = np.flatnonzero(observation["action_mask"])
    return int(legal[rng.randrange(legal.size)])


def eager_action(observation, rng: random.Random) -> int:
    """A random legal action, preferring declarations, melds, lay-offs and the cut card (ids >= 55)."""
    legal = np.flatnonzero(observation["action_mask"])
    eager = legal[legal >= 55]
    pool = eager if eager.size and rng.random() < 0.9 else legal
    return int(pool[rng.randrange(pool.size)])


def greedy_indian_action(e, observation) -> int:
    """Indian: declare when possible, else draw from the stock and discard the card whose loss leaves
    the lowest I7 penalty (reads only the player's own hand)."""
    from rummy_env import solver

    legal = np.flatnonzero(observation["action_mask"])
    declares = legal[legal >= E.INDIAN_DECLARE_BASE]
    if declares.size:
        return int(declares[0])
    if E.DRAW_ACTION in legal:
        return E.DRAW_ACTION
    hand = list(e.game_state.hands[e.game_state.current])
    best = None
    for action in legal:
        card = int(action) - E.DISCARD_BASE
        hand[card] -= 1
        penalty = solver.indian_penalty(hand)
        hand[card] += 1
        if best is None or penalty < best[0]:
            best = (penalty, int(action))
    return best[1]


def play_out(e, rng: random.Random, on_step=None, policy=random_action) -> None:
    """Play legal actions until every agent is done, stepping None for the done ones."""
    for agent in e.agent_iter(100_000):
        observation, reward, terminated, truncated, info = e.last()
        if on_step:
            on_step(agent, observation, reward, terminated, truncated, info)
        e.step(None if terminated or truncated else policy(observation, rng))


# ----------------------------------------------------------------------------- PettingZoo conformance


@pytest.mark.parametrize("game, players", SETUPS)
def test_pettingzoo_api_test(game, players):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test's generic advice for dict observations
        api_test(env(game, players), num_cycles=200)


@pytest.mark.parametrize("game, players", SETUPS)
def test_pettingzoo_seed_test(game, players):
    seed_test(lambda: env(game, players), num_cycles=200)


def test_the_package_exports_env_and_raw_env_functions():
    built = rummy_env.env("basic", 3)
    assert isinstance(built, raw_env) and built.possible_agents == ["player_0", "player_1", "player_2"]
    assert isinstance(rummy_env.raw_env("romi"), raw_env)
    from rummy_env import env as imported

    assert callable(imported) and not isinstance(imported, type(rummy_env))
    assert isinstance(imported("indian"), raw_env)


@pytest.mark.parametrize("game", ["indian", "basic", "romi"])
def test_metadata_spaces_and_names(game):
    e = env(game)
    assert e.metadata["name"] == ENV_NAMES[game] == {"indian": "indian_rummy_v0", "basic": "basic_rummy_v0",
                                                      "romi": "indian_romi_v1"}[game]  # docs/env.md
    assert str(e) == ENV_NAMES[game]
    assert e.action_space("player_1").n == E.NUM_ACTIONS[game]
    space = e.observation_space("player_0")
    assert space["observation"].shape == (E.observation_size(game, 2),)
    assert space["observation"].dtype == np.float32 and space["action_mask"].dtype == np.int8
    assert e.observation_space("player_0") is e.observation_space("player_0")


# ----------------------------------------------------------------------------- seeding


@pytest.mark.parametrize("game", ["indian", "basic", "romi"])
def test_reset_with_a_seed_reproduces_the_game_exactly(game):
    def trajectory(seed):
        e = env(game)
        e.reset(seed=seed)
        rng = random.Random(0)
        out = []
        for _ in range(60):
            observation, reward, terminated, truncated, _ = e.last()
            if terminated or truncated:
                break
            action = random_action(observation, rng)
            out.append((e.agent_selection, observation["observation"].tobytes(), action, reward))
            e.step(action)
        return out

    assert trajectory(7) == trajectory(7)
    assert trajectory(7) != trajectory(8)


def test_resets_without_a_seed_continue_from_the_last_seed():
    a, b = env("basic"), env("basic")
    a.reset(seed=3)
    b.reset(seed=3)
    a.reset()
    b.reset()
    assert a.game_state.hands == b.game_state.hands
    first = env("basic")
    first.reset(seed=3)
    assert first.game_state.hands != a.game_state.hands


# ----------------------------------------------------------------------------- observation and mask


@pytest.mark.parametrize("game, players", [("indian", 3), ("basic", 2), ("romi", 2), ("romi", 3)])
def test_env_observations_equal_the_encoder_and_masks_follow_the_turn(game, players):
    """The env's cached path gives the same vectors as a fresh encoding, for every agent, whenever asked."""
    e = env(game, players)
    rng = random.Random(players)
    for episode in range(3):
        e.reset(seed=episode)
        while True:
            state = e.game_state
            agent = e.agent_selection
            if e.terminations[agent] or e.truncations[agent]:
                break
            if rng.random() < 0.4:  # some steps unobserved, so the env's caches must catch up later
                e.step(rng.choice(E.legal_actions(state)))
                continue
            for other in e.possible_agents:
                if other == agent or rng.random() < 0.5:  # observe others only now and then
                    seat = int(other.split("_")[1])
                    observed = e.observe(other)
                    assert np.array_equal(observed["observation"], E.encode_observation(state, seat))
                    if other == agent:
                        assert np.array_equal(observed["action_mask"], E.action_mask(state))
                    else:
                        assert not observed["action_mask"].any()
            e.step(random_action(e.observe(agent), rng))
        for other in e.possible_agents:
            assert not e.observe(other)["action_mask"].any()


def test_step_and_observe_before_reset_are_errors():
    e = env("indian")
    with pytest.raises(RuntimeError, match="reset"):
        e.step(0)
    with pytest.raises(RuntimeError, match="reset"):
        e.observe("player_0")


# ----------------------------------------------------------------------------- illegal actions


@pytest.mark.parametrize("game", ["indian", "basic", "romi"])
def test_an_illegal_action_raises_naming_it_and_changes_nothing(game):
    e = env(game)
    e.reset(seed=1)
    before = e.game_state.to_dict()
    mask = e.observe("player_0")["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[5])
    with pytest.raises(IllegalActionError,
                       match=rf"illegal action {illegal} \(.*\) for player_0: draw first") as refused:
        e.step(illegal)
    assert str(refused.value).count("player_0") == 1  # the player is named once
    assert e.game_state.to_dict() == before
    assert e.agent_selection == "player_0" and not any(e.terminations.values())
    e.step(int(np.flatnonzero(mask)[0]))  # the game goes on
    assert e.game_state.phase == 1


@pytest.mark.parametrize("bad", [-1, 10**6, 2.0, "draw", None, True, np.bool_(False)])
def test_an_action_outside_the_space_is_an_error_naming_it(bad):
    e = env("basic")
    e.reset(seed=0)
    before = e.game_state.to_dict()
    with pytest.raises(IllegalActionError, match=f"illegal action {bad!r}".replace("(", r"\(").replace(".", r"\.")):
        e.step(bad)
    assert e.game_state.to_dict() == before


def test_a_discard_of_the_card_just_taken_names_rule_g7():
    e = env("indian")
    e.reset(seed=2)
    e.step(E.TAKE_DISCARD_ACTION)
    taken = e.game_state.taken_card
    with pytest.raises(IllegalActionError, match="G7"):
        e.step(E.DISCARD_BASE + taken)


def test_terminate_option_follows_pettingzoo_convention():
    e = env("romi", 3, illegal_action="terminate", illegal_reward=-5.0)
    e.reset(seed=0)
    e.step(E.DRAW_ACTION)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(E.DRAW_ACTION)  # drawing twice is illegal
    assert all(e.terminations.values()) and all(e.truncations.values())
    assert e.rewards == {"player_0": -5.0, "player_1": 0.0, "player_2": 0.0}
    assert e._cumulative_rewards["player_0"] == -5.0
    assert "draw" in e.infos["player_0"]["illegal_action"]
    for agent in e.agent_iter():
        e.step(None)
    assert e.agents == []


def test_default_illegal_reward_is_the_worst_hand_loss():
    e = env("basic", 3, illegal_action="terminate", reward_scale=0.5)
    assert e.illegal_reward == -0.5 * 70 == -0.5 * e.rules.max_hand_payment
    assert env("indian", penalty_cap=80, illegal_action="terminate").illegal_reward == -80
    assert env("romi", match=True, match_reward="win").illegal_reward == -1


# ----------------------------------------------------------------------------- rewards


@pytest.mark.parametrize("game, players",
                         [("indian", 2), ("indian", 4), ("basic", 2), ("basic", 3), ("romi", 2), ("romi", 4)])
def test_rewards_are_zero_sum_and_equal_the_engine_result(game, players):
    rng = random.Random(4)
    outcomes = set()
    scale = 0.01
    for episode in range(8):
        e = env(game, players, reward_scale=scale)
        e.reset(seed=episode)
        totals = dict.fromkeys(e.possible_agents, 0.0)

        def record(agent, observation, reward, terminated, truncated, info):
            totals[agent] += reward

        play_out(e, rng, record, policy=eager_action)
        result = e.game_state.result
        outcomes.add(result.outcome)
        assert sum(totals.values()) == pytest.approx(0.0)
        assert [totals[a] for a in e.possible_agents] == pytest.approx([scale * r for r in result.rewards])
    assert "out" in outcomes or game == "indian"


def test_a_declaration_pays_the_declarer_the_penalties_of_the_others():
    """I5–I7: player_0 draws Ks and declares discarding 9d; player_1 pays the penalty of their best arrangement."""
    from rummy_env import solver
    from rummy_env.scenario import make_state

    e = env("indian", 2)
    e.reset(seed=0)
    from rummy_env.cards import parse_card

    state = make_state("indian", hands=["As 2s 3s 4s 4h 5h 6h 7c 7d 7h Kd Kc 9d",
                                        "2c 5c 8d Jd 3h 6s 9h Qc 4d 7s Tc Kh 9c"],
                       discard="2d", stock="Ac Ks")
    e._start_hand(state)
    assert not e.observe("player_0")["action_mask"][E.INDIAN_DECLARE_BASE:].any()
    e.step(E.DRAW_ACTION)
    declare = E.INDIAN_DECLARE_BASE + parse_card("9d")
    assert e.observe("player_0")["action_mask"][declare] == 1
    e.step(declare)
    penalty = solver.indian_penalty(state.hands[1])
    assert penalty > 0
    assert e.rewards == {"player_0": penalty, "player_1": -penalty}
    assert all(e.terminations.values())
    info = e.infos["player_1"]["hand_result"]
    assert info == {"outcome": "declare", "winner": "player_0", "payments": {"player_0": 0, "player_1": penalty},
                    "points": {"player_0": penalty, "player_1": -penalty}}


def test_a_won_hand_pays_the_winner_what_the_others_pay():
    rng = random.Random(0)
    for seed in range(30):
        e = env("basic", 3)
        e.reset(seed=seed)
        final = {}

        def record(agent, observation, reward, terminated, truncated, info):
            if terminated or truncated:
                final[agent] = (reward, info["hand_result"])

        play_out(e, rng, record)
        result = e.game_state.result
        if result.winner is None:
            continue
        winner = f"player_{result.winner}"
        info = final[winner][1]
        assert info["winner"] == winner and info["outcome"] == "out"
        assert final[winner][0] == sum(info["payments"].values()) > 0
        for agent, (reward, _) in final.items():
            if agent != winner:
                assert reward == -info["payments"][agent]
        return
    pytest.fail("no hand of 30 was won")


def test_turn_cap_truncates_with_zero_rewards():
    e = env("basic", max_turns=3)
    e.reset(seed=0)
    seen = {}

    def record(agent, observation, reward, terminated, truncated, info):
        seen[agent] = (reward, terminated, truncated, info.get("hand_result", {}).get("outcome"))

    play_out(e, random.Random(0), record)
    assert seen == {a: (0.0, False, True, "cut_off") for a in ("player_0", "player_1")}


def test_stalemate_terminates_with_zero_rewards():
    rng = random.Random(1)
    for seed in range(40):
        e = env("indian")
        e.reset(seed=seed)
        play_out(e, rng)
        if e.game_state.result.outcome == "stalemate":
            assert all(v == 0 for v in e.game_state.result.rewards)
            return
    pytest.fail("no stalemate in 40 random Indian hands")


# ----------------------------------------------------------------------------- match mode


@pytest.mark.parametrize("game, players, target", [("indian", 2, 120), ("basic", 3, 40), ("romi", 2, 100)])
def test_match_mode_sums_hands_and_rewards_only_at_the_end(game, players, target):
    e = env(game, players, match=True, match_target=target, max_turns=150)
    e.reset(seed=5)
    rng = random.Random(5)
    hand_points = dict.fromkeys(e.possible_agents, 0)
    payments = dict.fromkeys(e.possible_agents, 0)
    scores = dict.fromkeys(e.possible_agents, 0)
    starters = []
    last_hand = 0
    rewards = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter(200_000):
        observation, reward, terminated, truncated, info = e.last()
        rewards[agent] += reward
        if not (terminated or truncated) and reward:
            pytest.fail("a reward arrived before the match ended")
        if info.get("hands_played", 0) > last_hand and not (terminated or truncated):
            last_hand = info["hands_played"]
            result = info["hand_result"]
            for a in e.possible_agents:
                hand_points[a] += result["points"][a]
                payments[a] += result["payments"][a]
                if result["winner"] == a:
                    scores[a] += sum(result["payments"].values())
            starters.append(e.game_state.first_player)
        if terminated or truncated:
            final_info = info
            e.step(None)
            continue
        e.step(greedy_indian_action(e, observation) if game == "indian" else eager_action(observation, rng))
    assert e.agents == []
    result = final_info["hand_result"]
    for a in e.possible_agents:
        hand_points[a] += result["points"][a]
        payments[a] += result["payments"][a]
        if result["winner"] == a:
            scores[a] += sum(result["payments"].values())
    totals = final_info["match_totals"]
    if game == "basic":
        assert totals == scores and max(totals.values()) >= target
        best = max(totals.values())
    else:
        assert totals == payments and max(totals.values()) >= target
        best = min(totals.values())
    assert final_info["match_winners"] == [a for a in e.possible_agents if totals[a] == best]
    assert rewards == pytest.approx({a: float(p) for a, p in hand_points.items()})
    assert sum(rewards.values()) == pytest.approx(0.0)
    assert final_info["hands_played"] >= 2
    assert starters[: players - 1] == list(range(1, players))[: len(starters)]  # G6: the start moves a seat


def test_match_win_rewards_split_plus_and_minus_one():
    e = env("basic", 3, match=True, match_target=30, match_reward="win", max_turns=150)
    e.reset(seed=2)
    rewards = {}

    def record(agent, observation, reward, terminated, truncated, info):
        if terminated or truncated:
            rewards[agent] = (reward, info["match_winners"])

    play_out(e, random.Random(2), record)
    winners = next(iter(rewards.values()))[1]
    assert sum(r for r, _ in rewards.values()) == pytest.approx(0.0)
    for agent, (reward, _) in rewards.items():
        expected = 1 / len(winners) if agent in winners else -1 / (3 - len(winners))
        assert reward == pytest.approx(0.0 if len(winners) == 3 else expected)


def test_a_match_longer_than_max_hands_is_truncated():
    e = env("basic", match=True, match_target=1000, max_hands=2, max_turns=20)
    e.reset(seed=0)
    ends = []

    def record(agent, observation, reward, terminated, truncated, info):
        if terminated or truncated:
            ends.append((reward, terminated, truncated, info["hands_played"]))

    play_out(e, random.Random(0), record)
    assert ends and all(end == (0.0, False, True, 2) for end in ends)


def test_match_scores_reach_the_observation():
    e = env("romi", match=True, match_target=100, max_turns=60)
    e.reset(seed=3)
    rng = random.Random(3)
    for _ in range(5000):
        agent = e.agent_selection
        observation, _, terminated, truncated, _ = e.last()
        if terminated or truncated:
            break
        totals = e.match.totals
        seat = int(agent.split("_")[1])
        part = E.split_observation(observation["observation"], "romi", 2)["match_scores"]
        assert list(part) == pytest.approx([min(totals[(seat + i) % 2] / 100, 2.0) for i in range(2)])
        e.step(random_action(observation, rng))
    assert e.match.hands_played >= 1


# ----------------------------------------------------------------------------- options


@pytest.mark.parametrize("kwargs, named", [
    ({"game": "gin"}, "'gin'"),
    ({"game": "basic", "num_players": 5}, "num_players=5"),
    ({"game": "indian", "rummy_bonus": True}, "'rummy_bonus'"),
    ({"game": "indian", "illegal_action": "ignore"}, "illegal_action='ignore'"),
    ({"game": "indian", "match_reward": "elo"}, "match_reward='elo'"),
    ({"game": "indian", "reward_scale": 0}, "reward_scale=0"),
    ({"game": "indian", "max_hands": 0}, "max_hands=0"),
    ({"game": "indian", "match": "yes"}, "match='yes'"),
    ({"game": "indian", "render_mode": "rgb_array"}, "render_mode='rgb_array'"),
    ({"game": "romi", "max_turns": -1}, "max_turns=-1"),
])
def test_bad_options_are_errors_naming_them(kwargs, named):
    with pytest.raises(ValueError, match=named.replace("(", r"\(")):
        env(**kwargs)


# ----------------------------------------------------------------------------- render


def test_ansi_render_shows_the_acting_players_view_in_g2_notation():
    e = env("romi", render_mode="ansi")
    e.reset(seed=3)
    rng = random.Random(3)
    for _ in range(25):
        e.step(random_action(e.observe(e.agent_selection), rng))
    text = e.render()
    state = e.game_state
    assert "Indiai römi" in text and f"player_{state.current}'s hand" in text
    assert "\x1b[" not in text
    assert any(s in text for s in "♠♥♦♣")
    other = sum(state.hands[1 - state.current])
    assert f"{other} cards" in text


def test_human_render_prints_and_colours_on_request(capsys):
    from rummy_env.render import card_text, render_text

    e = env("basic", render_mode="human")
    e.reset(seed=0)
    e.step(E.DRAW_ACTION)  # human mode renders after each step
    assert "Basic Rummy" in capsys.readouterr().out
    assert card_text(13, color=True).startswith("\x1b[31m")  # Ah is red
    assert render_text(GameState.new("basic", 2, seed=0), color=False).count("\x1b[") == 0


def test_render_without_a_mode_warns_and_returns_none():
    e = env("basic")
    e.reset(seed=0)
    with pytest.warns(UserWarning):
        assert e.render() is None
