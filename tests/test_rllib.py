"""Ray RLlib integration (docs/rllib.md): the turn-based multi-agent env and its shaping, the masked
model (MLP or card network), starting from one of our checkpoints, the self-play mapping with past
snapshots, bad input refused before any worker starts, and a smoke run per game that trains,
converts to our checkpoint and plays in the arena. Skipped when ray is not installed."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]  # RLlib: the slow tier; Ray starts slowly on a busy machine

ray = pytest.importorskip("ray")
torch = pytest.importorskip("torch")

from agents.arena import run_cli as arena_cli  # noqa: E402
from agents.policy import build_network, load_checkpoint, save_checkpoint  # noqa: E402
from rummy_env.shaping import Potential  # noqa: E402
from rummy_env.encoding import num_actions, observation_size  # noqa: E402
from rummy_apps.rllib import trainer as rllib  # noqa: E402
from rummy_apps.rllib.trainer import RLlibSettings, RLlibSetupError, seat_module  # noqa: E402
from rummy_apps.rllib.env import RummyMultiAgentEnv  # noqa: E402
from rummy_apps.rllib.model import (  # noqa: E402
    PolicyModule, check_model_config, module_network_state, network_weights, policy_network,
)
from rummy_env.ruleset import GAMES  # noqa: E402

SHORT = {"max_turns": 40}  # G9: hands of an untrained policy end at the turn cap, so keep them short


def tiny(game: str, **changes) -> RLlibSettings:
    """One small PPO iteration against every kind of opponent."""
    values = dict(game=game, iterations=1, num_env_runners=1, train_batch=96, minibatch_size=48, update_epochs=1,
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


# ------------------------------------------------------------------ shaping (docs/rllib.md "Shaping")


def play_first_legal(env: RummyMultiAgentEnv, seed: int):
    """One hand, each agent playing its first legal action: per agent its (observation, reward) steps."""
    observations, _ = env.reset(seed=seed)
    steps: dict[str, list] = {a: [] for a in env.possible_agents}
    pending = {a: None for a in env.possible_agents}  # the observation each agent last acted on
    while True:
        (agent, seen), = observations.items()
        pending[agent] = seen["observation"]
        observations, rewards, terminated, truncated, _ = env.step(
            {agent: int(np.flatnonzero(seen["action_mask"])[0])})
        done = terminated["__all__"] or truncated["__all__"]
        for a, r in rewards.items():
            if pending[a] is not None and (a in observations or done):
                steps[a].append((pending[a], r, done))
        if done:
            return steps


@pytest.mark.parametrize("game", GAMES)
def test_shaping_with_gamma_1_adds_up_to_the_first_hand_s_penalty(game):
    """With γ = 1 the shaping terms of a hand telescope: each agent's rewards add up to its true
    reward plus its starting hand's penalty (minus the first potential) times the scale."""
    scale, options = 0.01, {"max_turns": 30}
    shaped = RummyMultiAgentEnv({"game": game, "reward_scale": scale, "shaping_coef": 1.0, "gamma": 1.0, **options})
    plain = RummyMultiAgentEnv({"game": game, "reward_scale": scale, **options})
    potential = Potential(game, 2, "deadwood")
    with_shaping, without = play_first_legal(shaped, 7), play_first_legal(plain, 7)
    for agent in shaped.possible_agents:
        first = with_shaping[agent][0][0]
        true_total = sum(r for _, r, _ in without[agent])
        assert all(r == 0 for _, r, done in without[agent] if not done), "no shaping: rewards only at the end"
        assert sum(r for _, r, _ in with_shaping[agent]) == pytest.approx(
            true_total + scale * potential.penalty_of(first), abs=1e-9)


def test_shaping_rewards_each_decision_by_the_change_of_its_turn_s_potential():
    """Within a turn (the draw, then the discard: I4, G7) the potential is the turn's, so the term
    is (γ − 1) Φ; from one turn to the next it is γ Φ(new turn) − Φ(old turn)."""
    gamma, scale = 0.9, 0.01
    env = RummyMultiAgentEnv({"game": "indian", "reward_scale": scale, "shaping_coef": 2.0, "gamma": gamma,
                              "max_turns": 20})
    potential = Potential("indian", 2, "deadwood")
    steps = play_first_legal(env, 3)["player_0"]
    phi, turns = None, 0
    for (observation, reward, _), (following, _, _) in zip(steps, steps[1:]):  # a decision and the next one
        if potential.is_draw_phase(observation):
            phi, turns = -potential.penalty_of(observation) * 2.0 * scale, turns + 1
        now = -potential.penalty_of(following) * 2.0 * scale if potential.is_draw_phase(following) else phi
        assert reward == pytest.approx(gamma * now - phi, abs=1e-12)
    assert turns >= 5 and len({round(r, 9) for _, r, _ in steps}) > 2


# ------------------------------------------------------------------ starting from one of our checkpoints


def card_checkpoint(path, game="indian", players=2, seed=0):
    torch.manual_seed(seed)
    network = build_network(game, players, {"kind": "card", "channels": 8, "global_size": 16, "layout": 2,
                                            "rank": 4})
    config = {"learning_rate": 1e-4, "gamma": 0.99, "ent_coef": 0.002, "reward_scale": 0.02, "shaping": True,
              "shaping_coef": 0.5, "shaping_potential": "payment"}
    return save_checkpoint(path, network, game, players, config)


def test_init_takes_the_network_game_and_ppo_settings_from_the_checkpoint(tmp_path):
    path = card_checkpoint(tmp_path / "best.pt", "basic", 3)
    settings = RLlibSettings.from_checkpoint(path, ent_coef=0.01)
    assert (settings.game, settings.num_players, settings.init) == ("basic", 3, str(path))
    assert settings.model == {"kind": "card", "channels": 8, "global_size": 16, "layout": 2, "rank": 4}
    assert (settings.learning_rate, settings.gamma, settings.reward_scale) == (1e-4, 0.99, 0.02)
    assert (settings.shaping_coef, settings.shaping_potential) == (0.5, "payment")
    assert settings.ent_coef == 0.01, "a setting given wins over the checkpoint's"
    assert settings.check()["kind"] == "card"
    args = rllib.build_parser().parse_args(["--init", str(path), "--learning-rate", "5e-5"])
    assert rllib.settings_from_args(args) == RLlibSettings.from_checkpoint(path, learning_rate=5e-5,
                                                                            opponents=("self",), options={})


def test_minutes_alone_are_the_only_limit_and_iterations_still_cap_them(tmp_path):
    path = card_checkpoint(tmp_path / "best.pt", "indian", 2)
    parse = rllib.build_parser().parse_args
    assert rllib.settings_from_args(parse(["--init", str(path)])).iterations == RLlibSettings.iterations
    timed = rllib.settings_from_args(parse(["--init", str(path), "--minutes", "20"]))
    assert timed.iterations == rllib.UNTIL_THE_MINUTES and timed.check()
    both = rllib.settings_from_args(parse(["--init", str(path), "--minutes", "20", "--iterations", "3"]))
    assert both.iterations == 3


def test_the_checkpoint_s_weights_become_the_module_s_state_and_back():
    network = build_network("romi", 2, {"kind": "card", "channels": 8, "global_size": 16, "layout": 2, "rank": 4})
    state = module_network_state(network_weights(network.state_dict()))
    assert state.keys() == network.state_dict().keys()
    assert all(torch.equal(state[k], v) for k, v in network.state_dict().items())


@pytest.mark.parametrize("problem", ["missing", "damaged", "foreign game", "other count", "not ours", "model"])
def test_a_foreign_or_damaged_init_checkpoint_is_refused_naming_it_before_ray_starts(problem, tmp_path, capsys):
    path = tmp_path / "best.pt"
    argv = ["--init", str(path), "--game", "indian"]
    if problem == "damaged":
        card_checkpoint(path)
        data = bytearray(path.read_bytes())
        data[len(data) // 2:len(data) // 2 + 64] = bytes(64)
        path.write_bytes(bytes(data))
        named = f"--init: checkpoint {str(path)!r}: corrupt"
    elif problem == "foreign game":
        card_checkpoint(path, "basic")
        named = f"--init: checkpoint {str(path)!r} was trained for 'basic' with 2 players, not 'indian' with 2 players"
    elif problem == "other count":
        card_checkpoint(path, "indian", 4)
        argv += ["--num-players", "2"]
        named = f"--init: checkpoint {str(path)!r} was trained for 'indian' with 4 players, not 'indian' with 2"
    elif problem == "not ours":
        torch.save({"weights": torch.zeros(3)}, path)
        named = f"--init: checkpoint {str(path)!r}: not a rummy-env policy checkpoint"
    elif problem == "model":
        card_checkpoint(path)
        argv += ["--model", '{"kind": "mlp", "hidden": [8]}']
        named = f"--init {str(path)!r} holds a network"
    else:
        named = f"--init: checkpoint {str(path)!r}: no such file"
    with pytest.raises(SystemExit) as done:
        rllib.main(argv)
    assert done.value.code == 2
    assert named in capsys.readouterr().err
    assert not ray.is_initialized()


# ------------------------------------------------------------------ the model and the mapping


def test_the_masked_model_gives_forbidden_actions_no_probability_and_values_per_row():
    env = RummyMultiAgentEnv({"game": "basic"})
    module = PolicyModule(observation_space=env.observation_spaces["player_0"],
                          action_space=env.action_spaces["player_0"],
                          model_config=check_model_config("basic", 2, {"hidden": [8]}))
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


def test_the_card_network_runs_as_a_module_whatever_keys_rllib_adds_to_its_config():
    env = RummyMultiAgentEnv({"game": "romi"})
    config = check_model_config("romi", 2, {"kind": "card", "channels": 8, "global_size": 16, "layout": 2})
    module = PolicyModule(observation_space=env.observation_spaces["player_0"],
                          action_space=env.action_spaces["player_0"],
                          model_config={**config, "vf_share_layers": True, "fcnet_hiddens": [256]})
    assert module.net.model_config == {"kind": "card", "channels": 8, "global_size": 16, "layout": 2, "rank": 8}
    seen = next(iter(env.reset(seed=2)[0].values()))
    batch = {"obs": {"observation": torch.as_tensor(seen["observation"])[None],
                     "action_mask": torch.as_tensor(seen["action_mask"])[None]}}
    logits = module.forward_inference(batch)["action_dist_inputs"]
    want, _ = module.net(batch["obs"]["observation"], batch["obs"]["action_mask"])
    assert torch.equal(logits, want)


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
    assert learner_seats == {0, 1, 2, 3} and seen == {"main", "frozen_0", "rule"}
    assert {seat_module(a, "e", opponents=("self",), num_players=4) for a in seats} == {"main"}
    snapshots = {seat_module(a, f"e{k}", opponents=("frozen",), num_players=4, snapshots=3)
                 for a in seats for k in range(100)}
    assert snapshots == {"main", "frozen_0", "frozen_1", "frozen_2"}  # every past copy gets seats


# ------------------------------------------------------------------ bad input, before any worker


@pytest.mark.parametrize("change, named", [
    ({"game": "gin"}, "unknown game 'gin'"),
    ({"model": {"observation_size": 100}}, "observation_size=100 does not fit 'indian' with 2 players, whose "
                                           "observation size is 488"),
    ({"model": {"num_actions": 1285}}, "num_actions=1285 does not fit 'indian'"),
    ({"model": {"hidden": [0]}}, "hidden=[0]"),
    ({"model": {"activation": "gelu"}}, "activation='gelu'"),
    ({"model": {"kind": "transformer"}}, "kind 'transformer': expected one of mlp, card"),
    ({"model": {"width": 3}}, "unknown key 'width'"),
    ({"model": {"kind": "card", "hidden": [8]}}, "unknown key 'hidden' for kind 'card'"),
    ({"model": {"kind": "card", "layout": 3}}, "card network layout 3"),
    ({"model": {"kind": "card", "channels": 0}}, "channels=0"),
    ({"learning_rate": -1.0}, "learning_rate=-1.0"),
    ({"shaping_coef": float("nan")}, "shaping_coef=nan"),
    ({"shaping_potential": "luck"}, "shaping_potential='luck'"),
    ({"snapshots": 0}, "snapshots=0"),
    ({"opponents": ("self", "search")}, "opponents"),
    ({"minibatch_size": 200, "train_batch": 100}, "minibatch_size=200"),
    ({"num_players": 7}, "num_players"),
    ({"options": {"max_turns": 0}}, "max_turns"),
])
def test_bad_settings_are_refused_by_name_before_ray_starts(change, named):
    settings = RLlibSettings(**{"game": "indian", **change})
    with pytest.raises(RLlibSetupError) as refused:
        rllib.train(settings, "unused-out", address=None)
    assert named in str(refused.value)
    assert not ray.is_initialized()


def test_the_ppo_config_is_our_trainer_s_and_waits_for_every_runner():
    config = rllib.build_config(tiny("indian", snapshots=2))
    assert (config.clip_param, config.lambda_, config.vf_loss_coeff, config.grad_clip) == (0.2, 0.95, 0.5, 0.5)
    assert config.sample_timeout_s is None, "samples later than RLlib's minute must not be dropped"
    assert set(config.policies) == {"main", "frozen_0", "frozen_1", "rule"}
    assert config.env_config["shaping_coef"] == 1.0 and config.env_config["gamma"] == 0.995


def test_the_model_config_is_checked_against_each_game_s_sizes():
    for game in GAMES:
        sizes = {"observation_size": observation_size(game, 3), "num_actions": num_actions(game)}
        assert check_model_config(game, 3, {"hidden": [4], **sizes}) == {"kind": "mlp", "hidden": [4],
                                                                         "activation": "tanh", "game": game,
                                                                         "num_players": 3}
        card = check_model_config(game, 3, {"kind": "card", "layout": 2, **sizes})
        assert card == {"kind": "card", "layout": 2, "game": game, "num_players": 3}


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


def test_a_run_from_a_checkpoint_starts_every_module_and_env_runner_from_its_weights(ray_session, tmp_path):
    """--init: the learner, its past copies and the env runners' modules hold the checkpoint's
    weights; with a learning rate of 0 the policy written at the end is the checkpoint itself."""
    path = card_checkpoint(tmp_path / "best.pt")
    given = {k: v for k, v in tiny("indian").__dict__.items() if k != "init"}
    settings = RLlibSettings.from_checkpoint(path, **{**given, "model": None, "game": None, "snapshots": 2,
                                                      "learning_rate": 0.0})
    algorithm = rllib.build_config(settings).build_algo()
    try:
        weights = network_weights(load_checkpoint(path)[0].state_dict())
        rllib.set_policy_weights(algorithm, weights, ["main", "frozen_0", "frozen_1"])
        runners = algorithm.env_runner_group.foreach_env_runner(
            lambda runner: {name: runner.module[name].get_state() for name in ("main", "frozen_1")},
            local_env_runner=False)
        for states in runners:
            for state in states.values():
                assert all(np.array_equal(state[k], v) for k, v in weights.items())
    finally:
        algorithm.stop()
    summary = rllib.train(settings, tmp_path / "out", log=lambda line: None)
    trained, meta = load_checkpoint(summary["policy"], "indian", 2)
    start, _ = load_checkpoint(path)
    assert meta["model"] == start.model_config
    assert all(torch.equal(a, b) for a, b in zip(trained.state_dict().values(), start.state_dict().values()))
    assert summary["history"][0]["illegal_actions"] == 0


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
