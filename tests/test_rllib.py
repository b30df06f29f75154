"""Ray RLlib integration (docs/rllib.md): the turn-based multi-agent env, the masked model, the
self-play mapping, bad input refused before any worker starts, and a smoke run per game that
trains, converts to our checkpoint and plays in the arena. Skipped when ray is not installed."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

pytestmark = pytest.mark.slow  # RLlib: the slow tier

ray = pytest.importorskip("ray")
torch = pytest.importorskip("torch")

from agents.arena import run_cli as arena_cli  # noqa: E402
from agents.policy import load_checkpoint  # noqa: E402
from rummy_env.encoding import num_actions, observation_size  # noqa: E402
from rummy_env.integrations import rllib  # noqa: E402
from rummy_env.integrations.rllib import RLlibSettings, RLlibSetupError, seat_module  # noqa: E402
from rummy_env.integrations.rllib_env import RummyMultiAgentEnv  # noqa: E402
from rummy_env.integrations.rllib_model import MaskedMLPModule, check_model_config, policy_network  # noqa: E402
from rummy_env.ruleset import GAMES  # noqa: E402

SHORT = {"max_turns": 40}  # G9: hands of an untrained policy end at the turn cap, so keep them short


def tiny(game: str, **changes) -> RLlibSettings:
    """One small PPO iteration against every kind of opponent."""
    values = dict(game=game, iterations=1, num_env_runners=1, train_batch=96, minibatch=48, epochs=1,
                  model={"hidden": [16], "activation": "relu"}, opponents=("self", "frozen", "rule"),
                  freeze_every=1, options=dict(SHORT))
    values.update(changes)
    return RLlibSettings(**values)


# ------------------------------------------------------------------ the environment


@pytest.mark.parametrize("game", GAMES)
def test_the_env_is_turn_based_with_our_spaces_and_ends_with_every_agent_rewarded(game):
    env = RummyMultiAgentEnv({"game": game, "num_players": 2, "max_turns": 5})
    assert env.observation_spaces["player_0"]["observation"].shape == (observation_size(game, 2),)
    assert env.action_spaces["player_1"].n == num_actions(game)
    observations, _ = env.reset(seed=3)
    steps = 0
    while True:
        (agent, seen), = observations.items()
        assert seen["action_mask"].sum() >= 1
        action = int(np.flatnonzero(seen["action_mask"])[0])
        observations, rewards, terminated, truncated, infos = env.step({agent: action})
        steps += 1
        if terminated["__all__"] or truncated["__all__"]:
            break
        assert len(observations) == 1, "only the agent to act observes mid-hand"
    assert set(observations) == set(rewards) == set(infos) == {"player_0", "player_1"}
    assert all(info["illegal_actions"] == 0 for info in infos.values())
    assert (env.legal_actions, env.illegal_actions) == (steps, 0)


def test_an_action_the_mask_forbids_is_counted_and_ends_the_episode_without_touching_the_game():
    env = RummyMultiAgentEnv({"game": "indian", "num_players": 2})
    observations, _ = env.reset(seed=0)
    (agent, seen), = observations.items()
    forbidden = int(np.flatnonzero(seen["action_mask"] == 0)[0])  # a discard before drawing (I4)
    hand = list(env.aec.game_state.hands[0])
    with pytest.warns(UserWarning, match="draw first"):
        _, rewards, terminated, _, infos = env.step({agent: forbidden})
    assert terminated["__all__"] and env.illegal_actions == 1 and env.legal_actions == 0
    assert rewards[agent] < 0 and "I4" in infos[agent]["illegal_action"]
    assert list(env.aec.game_state.hands[0]) == hand


def test_the_env_refuses_options_it_sets_itself():
    with pytest.raises(ValueError, match="illegal_action"):
        RummyMultiAgentEnv({"game": "indian", "illegal_action": "raise"})


# ------------------------------------------------------------------ the model and the mapping


def test_the_masked_model_gives_forbidden_actions_no_probability_and_values_per_row():
    env = RummyMultiAgentEnv({"game": "basic"})
    module = MaskedMLPModule(observation_space=env.observation_spaces["player_0"],
                             action_space=env.action_spaces["player_0"], model_config={"hidden": [8]})
    observations, _ = env.reset(seed=1)
    seen = next(iter(observations.values()))
    batch = {"obs": {"observation": torch.as_tensor(seen["observation"])[None],
                     "action_mask": torch.as_tensor(seen["action_mask"])[None]}}
    out = module.forward_exploration(batch)
    probabilities = torch.softmax(out["action_dist_inputs"], dim=-1)[0].detach().numpy()
    assert probabilities[seen["action_mask"] == 0].max() == 0.0
    assert probabilities[seen["action_mask"] == 1].sum() == pytest.approx(1.0)
    assert module.compute_values(batch).shape == (1,)
    assert policy_network(module) is module.net


def test_self_play_maps_one_seat_per_episode_to_the_learner_and_the_others_to_the_opponents():
    seats = [f"player_{i}" for i in range(4)]
    learner_seats = set()
    seen = set()
    for episode in range(200):
        modules = [seat_module(a, f"episode-{episode}", opponents=("frozen", "rule"), num_players=4) for a in seats]
        assert modules.count("main") == 1
        learner_seats.add(modules.index("main"))
        seen |= set(modules)
        assert modules == [seat_module(a, f"episode-{episode}", opponents=("frozen", "rule"), num_players=4)
                           for a in seats]
    assert learner_seats == {0, 1, 2, 3} and seen == {"main", "frozen", "rule"}
    assert {seat_module(a, "e", opponents=("self",), num_players=4) for a in seats} == {"main"}


# ------------------------------------------------------------------ bad input, before any worker


@pytest.mark.parametrize("change, named", [
    ({"game": "gin"}, "unknown game 'gin'"),
    ({"model": {"observation_size": 100}}, "observation_size=100 does not fit 'indian' with 2 players, whose "
                                           "observation size is 488"),
    ({"model": {"num_actions": 1285}}, "num_actions=1285 does not fit 'indian'"),
    ({"model": {"hidden": [0]}}, "hidden=[0]"),
    ({"model": {"activation": "gelu"}}, "activation='gelu'"),
    ({"model": {"kind": "card"}}, "kind 'card'"),
    ({"model": {"width": 3}}, "unknown key 'width'"),
    ({"opponents": ("self", "search")}, "opponents"),
    ({"minibatch": 200, "train_batch": 100}, "minibatch=200"),
    ({"num_players": 7}, "num_players"),
    ({"options": {"max_turns": 0}}, "max_turns"),
])
def test_bad_settings_are_refused_by_name_before_ray_starts(change, named):
    settings = RLlibSettings(**{"game": "indian", **change})
    with pytest.raises(RLlibSetupError) as refused:
        rllib.train(settings, "unused-out", address=None)
    assert named in str(refused.value)
    assert not ray.is_initialized()


def test_the_model_config_is_checked_against_each_game_s_sizes():
    for game in GAMES:
        sizes = {"observation_size": observation_size(game, 3), "num_actions": num_actions(game)}
        assert check_model_config(game, 3, {"hidden": [4], **sizes}) == {"kind": "mlp", "hidden": [4],
                                                                         "activation": "tanh"}


@pytest.mark.parametrize("address, named", [
    ("127.0.0.1:9", "cluster address '127.0.0.1:9' cannot be reached within"),
    ("ray://127.0.0.1:9", "cluster address 'ray://127.0.0.1:9' cannot be reached"),
    ("no-port-here", "expected auto, HOST:PORT or ray://HOST:PORT"),
])
@pytest.mark.timeout(rllib.CONNECT_TIMEOUT_S + 30)  # refused within the connect timeout, not after a hang
def test_an_unreachable_cluster_is_refused_quickly_and_starts_nothing(address, named):
    with pytest.raises(RLlibSetupError) as refused:
        rllib.train(tiny("indian"), "unused-out", address=address)
    assert named in str(refused.value)
    assert not ray.is_initialized()


def test_no_cluster_at_auto_is_refused_naming_the_address(monkeypatch):
    def no_cluster(*args, **kwargs):  # what ray.init(address="auto") raises with no `ray start` here
        raise ConnectionError("Could not find any running Ray instance. Please specify the one to connect to.")

    monkeypatch.setattr(ray, "init", no_cluster)
    with pytest.raises(RLlibSetupError, match="cluster address 'auto': Could not find any running Ray instance"):
        rllib.train(tiny("indian"), "unused-out", address="auto")


def test_the_cli_has_help_and_exits_2_naming_bad_input(capsys):
    with pytest.raises(SystemExit) as done:
        rllib.main(["--help"])
    assert done.value.code == 0 and "--address" in capsys.readouterr().out
    with pytest.raises(SystemExit) as done:
        rllib.main(["--game", "indian", "--model", '{"observation_size": 5}'])
    assert done.value.code == 2 and "observation_size=5 does not fit 'indian'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as done:
        rllib.main(["--game", "indian", "--model", "[256"])
    assert done.value.code == 2 and "--model: '[256' is not JSON" in capsys.readouterr().err
    with pytest.raises(SystemExit) as done:
        rllib.main(["--game", "indian", "--convert", "no-such-run"])
    assert done.value.code == 2 and "--convert 'no-such-run'" in capsys.readouterr().err


# ------------------------------------------------------------------ smoke: train, convert, play


@pytest.fixture(scope="module")
def ray_session():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield
    ray.shutdown()


def test_every_game_trains_with_the_mask_converts_and_plays_in_the_arena(ray_session, tmp_path):
    """One test, so that pytest-xdist does not start Ray in two workers."""
    for game in GAMES:
        settings = tiny(game)
        summary = rllib.train(settings, tmp_path / game, log=lambda line: None)
        (figures,) = summary["history"]
        assert figures["env_steps"] >= settings.train_batch, game
        assert figures["legal_actions"] == figures["env_steps"], f"{game}: every sampled action was checked"
        assert figures["illegal_actions"] == 0, game

        policy, meta = load_checkpoint(summary["policy"], game, 2)
        assert meta["model"] == {"kind": "mlp", "hidden": [16], "activation": "relu"}
        learned = policy_network(f"{summary['rllib_checkpoint']}/learner_group/learner/rl_module/main")
        env = RummyMultiAgentEnv({"game": game})
        seen = next(iter(env.reset(seed=5)[0].values()))
        inputs = (torch.as_tensor(seen["observation"])[None], torch.as_tensor(seen["action_mask"])[None])
        assert torch.equal(policy(*inputs)[0], learned(*inputs)[0]), f"{game}: the conversion changed the policy"

        with contextlib.redirect_stdout(io.StringIO()):
            result = arena_cli(["--game", game, "--agents", f"ppo:{summary['policy']}", "random", "--hands", "2",
                                "--workers", "1", "--no-progress", "--option", "max_turns=40"])
        assert [row["units"] for row in result["agents"]] == [2, 2], game

    converted = rllib.convert(tmp_path / "indian" / "rllib", tmp_path / "again.pt", "indian", 2)
    again, _ = load_checkpoint(converted, "indian", 2)
    first, _ = load_checkpoint(tmp_path / "indian" / "policy.pt", "indian", 2)
    assert all(torch.equal(a, b) for a, b in zip(first.state_dict().values(), again.state_dict().values()))
