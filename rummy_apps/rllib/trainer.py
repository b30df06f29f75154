"""Self-play PPO with Ray RLlib on one machine or a Ray cluster (``docs/rllib.md``).

Needs the ``ray`` extra: ``pip install -e ".[ray]"``. RLlib's new API stack (RLModule, Learner,
EnvRunner) with:

* ``env.RummyMultiAgentEnv``: our AEC environment, turn based, registered per game, with
  our trainer's potential-based shaping (``rummy_env.shaping.Potential``);
* ``model.PolicyModule``: the learning policy, our network (the MLP or the card network,
  ``agents.policy.build_network``) whose logits the observation's action mask cuts down to the
  legal moves; ``--init CHECKPOINT`` starts it from one of our trainer's checkpoints (a clone of
  the rule agent, a finished run) with that run's PPO settings as defaults;
* self-play mapping: each episode one seat plays ``main`` (the one policy trained, shared by
  all seats that map to it); every other seat plays an opponent drawn from ``--opponents``:
  ``self`` (``main`` again), ``frozen`` (one of ``--snapshots`` past copies of ``main``, the
  oldest replaced by ``main`` every ``--freeze-every`` iterations, never trained; with
  ``--init`` they start as the checkpoint) or ``rule`` (``agents.rule_agent.RuleAgent``);
* at the end ``main`` is written as our policy checkpoint, ``OUT/policy.pt``, for the arena;
  ``--eval-hands N`` plays the starting checkpoint and the result against the rule agent first.

    python -m rummy_apps.rllib --game indian --num-env-runners 2 --iterations 20
    python -m rummy_apps.rllib --game indian --init runs/indian/best.pt --opponents frozen rule
    python -m rummy_apps.rllib --game indian --address auto --num-env-runners 8 ...
    python -m agents.arena --game indian --agents ppo:runs/rllib-indian/policy.pt random rule

Bad input (an unknown game, a model config that does not fit the game's observation and action
sizes, an ``--init`` checkpoint that is damaged or for another game or player count, an
unreachable cluster) is an error naming it before Ray or any worker starts.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import socket
import time
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

from agents.training.config import TrainConfig
from rummy_env.ruleset import GAMES, make_ruleset, parse_option
from rummy_env.shaping import POTENTIALS

OPPONENTS = ("self", "frozen", "rule")
CONNECT_TIMEOUT_S = 5.0
WORKER_NICENESS = "RAY_worker_niceness"
"""Ray's setting of its workers' niceness above the driver's (15 unless set)."""

INHERITED = ("learning_rate", "gamma", "gae_lambda", "clip_coef", "ent_coef", "vf_coef", "max_grad_norm",
             "reward_scale", "shaping_coef", "shaping_potential")
"""Settings that ``--init`` takes from the checkpoint's trainer config (the same names) unless given."""


class RLlibSetupError(ValueError):
    """Settings that cannot run; the message names the setting."""


@dataclass
class RLlibSettings:
    """What one RLlib run trains; ``check()`` refuses bad values by name.

    The PPO settings have our trainer's names and defaults (``agents.training.config.TrainConfig``,
    the one source; docs/training.md); with ``init``, ``from_checkpoint`` takes them from the
    checkpoint's own trainer config.
    """

    game: str = "indian"
    """the game (docs/rules.md)"""
    num_players: int = 2
    """seats at each table"""
    iterations: int = 10
    """PPO iterations (each samples train_batch env steps, then updates)"""
    num_env_runners: int = 2
    """sampling processes (Ray actors), one CPU each"""
    envs_per_env_runner: int = 1
    """games each env runner steps together"""
    train_batch: int = 4000
    """env steps per iteration (all env runners together)"""
    minibatch_size: int = 500
    """SGD minibatch"""
    update_epochs: int = 4
    """passes over each batch"""
    learning_rate: float = TrainConfig.learning_rate
    """Adam learning rate"""
    gamma: float = TrainConfig.gamma
    """discount"""
    gae_lambda: float = TrainConfig.gae_lambda
    """GAE lambda"""
    clip_coef: float = TrainConfig.clip_coef
    """PPO clip range"""
    ent_coef: float = TrainConfig.ent_coef
    """entropy bonus coefficient"""
    vf_coef: float = TrainConfig.vf_coef
    """weight of the value loss"""
    max_grad_norm: float = TrainConfig.max_grad_norm
    """largest global gradient norm"""
    reward_scale: float = TrainConfig.reward_scale
    """env reward_scale: rewards are points times this"""
    shaping_coef: float = TrainConfig.shaping_coef
    """weight of the shaping potential, in reward units per point (0: no shaping)"""
    shaping_potential: str = "deadwood"
    """what the potential counts: deadwood (the solver's least penalty) or payment"""
    model: dict = field(default_factory=lambda: {"kind": "mlp", "hidden": [256, 256], "activation": "tanh"})
    """the network (agents.policy.build_network): kind mlp (hidden, activation) or card (channels,
    global_size, layout, rank); may state observation_size, num_actions; with init, the checkpoint's"""
    init: str | None = None
    """one of our policy checkpoints to start from (its network and weights)"""
    opponents: tuple = ("self",)
    """opponent seats: self, frozen, rule (one drawn per seat and episode)"""
    snapshots: int = 1
    """past copies of the learner that frozen seats play (one drawn per seat)"""
    freeze_every: int = 5
    """iterations between refreshes of the oldest snapshot"""
    seed: int = 0
    """seed of RLlib and of the deals"""
    options: dict = field(default_factory=dict)
    """rule options of the game (docs/rules.md), e.g. max_turns"""

    @classmethod
    def from_checkpoint(cls, init: str | os.PathLike, **given) -> RLlibSettings:
        """Settings that start from checkpoint ``init``: its game, players and network, and the PPO
        settings of its trainer config (``INHERITED``) where ``given`` does not set them."""
        meta = load_init(init)[1]
        config = meta.get("config") or {}
        values = {"game": meta["game"], "num_players": meta["num_players"], "model": dict(meta["model"])}
        for name in INHERITED:
            if config.get(name) is not None:
                values[name] = config[name]
        if config.get("shaping") is False:
            values["shaping_coef"] = 0.0
        values.update({k: v for k, v in given.items() if v is not None})
        return cls(init=str(init), **values)

    def check(self) -> dict:
        """Refuse bad settings by name; the checked model config."""
        if self.game not in GAMES:
            raise RLlibSetupError(f"unknown game {self.game!r}: expected one of {', '.join(GAMES)}")
        try:
            make_ruleset(self.game, self.num_players, **self.options)
        except (TypeError, ValueError) as error:
            raise RLlibSetupError(str(error)) from None
        for name in ("iterations", "num_env_runners", "envs_per_env_runner", "train_batch", "minibatch_size",
                     "update_epochs", "freeze_every", "snapshots"):
            value = getattr(self, name)
            low = 0 if name == "num_env_runners" else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise RLlibSetupError(f"{name}={value!r}: expected an int >= {low}")
        for name in ("learning_rate", "gamma", "gae_lambda", "clip_coef", "ent_coef", "vf_coef", "max_grad_norm",
                     "reward_scale",
                     "shaping_coef"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
                raise RLlibSetupError(f"{name}={value!r}: expected a finite number >= 0")
        if self.shaping_potential not in POTENTIALS:
            raise RLlibSetupError(f"shaping_potential={self.shaping_potential!r}: expected one of "
                                  f"{', '.join(POTENTIALS)}")
        if self.minibatch_size > self.train_batch:
            raise RLlibSetupError(f"minibatch_size={self.minibatch_size} is larger than train_batch={self.train_batch}")
        bad = [o for o in self.opponents if o not in OPPONENTS]
        if bad or not self.opponents:
            raise RLlibSetupError(f"opponents {list(self.opponents)!r}: expected one or more of {', '.join(OPPONENTS)}")
        from .model import ModelConfigError, check_model_config, network_config

        try:
            model = check_model_config(self.game, self.num_players, self.model)
        except ModelConfigError as error:
            raise RLlibSetupError(str(error)) from None
        if self.init is not None:
            network, meta = load_init(self.init, self.game, self.num_players)
            if network_config(model) != network.model_config:
                raise RLlibSetupError(f"--init {str(self.init)!r} holds a network {network.model_config}, not the "
                                      f"{network_config(model)} of the model config: leave the model to the "
                                      "checkpoint")
        return model


def load_init(path: str | os.PathLike, game: str | None = None, num_players: int | None = None):
    """(network, metadata) of the ``--init`` checkpoint; an ``RLlibSetupError`` naming it when it is
    missing, damaged, not ours, or for another game or player count than ``game`` and ``num_players``."""
    from agents.base import AgentError
    from agents.policy import load_checkpoint

    try:
        return load_checkpoint(path, game, num_players)
    except AgentError as error:
        raise RLlibSetupError(f"--init: {error}") from None


# ------------------------------------------------------------------ cluster


def check_address(address: str | None, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """Refuse a cluster address that does not answer within ``timeout`` seconds, naming it.

    ``None`` starts Ray on this machine; ``auto`` joins the cluster ``ray start`` runs here;
    ``HOST:PORT`` (the head's GCS port, 6379 by default) or ``ray://HOST:PORT`` (Ray Client,
    10001) join a remote head.
    """
    if address is None or address in ("auto", "local"):
        return
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise RLlibSetupError(f"cluster address {address!r}: expected auto, HOST:PORT or ray://HOST:PORT")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as error:
        raise RLlibSetupError(f"cluster address {address!r} cannot be reached within {timeout:g} s "
                              f"({error.strerror or error}): is `ray start --head` running there?") from None


def start_ray(address: str | None, num_env_runners: int) -> None:
    """``ray.init`` locally or on the cluster at ``address``; refuse a cluster too small to host the runners."""
    import ray

    if address in (None, "local"):
        # Ray starts its workers 15 nice levels below the driver: on a busy machine the env runners,
        # which do the sampling, then starve; here they run at the driver's own niceness
        os.environ.setdefault(WORKER_NICENESS, "0")
        ray.init(num_cpus=max(os.cpu_count() or 1, num_env_runners), include_dashboard=False,
                 ignore_reinit_error=True, log_to_driver=False)
        return
    try:
        ray.init(address=address, ignore_reinit_error=True, log_to_driver=False)
    except (ConnectionError, RuntimeError) as error:
        raise RLlibSetupError(f"cluster address {address!r}: {str(error).splitlines()[0]}") from None
    cpus = ray.cluster_resources().get("CPU", 0)
    if cpus < num_env_runners:
        ray.shutdown()
        raise RLlibSetupError(f"num_env_runners={num_env_runners}: the cluster at {address!r} has {cpus:g} CPUs")


# ------------------------------------------------------------------ self-play


def seat_module(agent_id: str, episode, opponents: tuple = ("self",), num_players: int = 2, snapshots: int = 1,
                **kwargs) -> str:
    """The module that plays ``agent_id`` in ``episode``: ``main`` in one seat, opponents elsewhere.

    Drawn from the episode's id, so every seat of one episode agrees on who learns; a ``frozen``
    seat plays one of the ``snapshots`` past copies (``frozen_0`` …).
    """
    episode_id = str(getattr(episode, "id_", episode))
    learner_seat = zlib.crc32(episode_id.encode()) % num_players
    seat = int(agent_id.rsplit("_", 1)[1])
    if seat == learner_seat:
        return "main"
    draw = zlib.crc32(f"{episode_id}/{agent_id}".encode())
    opponent = opponents[draw % len(opponents)]
    if opponent == "self":
        return "main"
    if opponent == "frozen":
        return snapshot_name((draw // len(opponents)) % snapshots)
    return opponent


def snapshot_name(slot: int) -> str:
    """The module of past copy ``slot``."""
    return f"frozen_{slot}"


def snapshot_modules(settings: RLlibSettings) -> list[str]:
    """The past-copy modules of a run (none when no seat plays ``frozen``)."""
    return [snapshot_name(k) for k in range(settings.snapshots)] if "frozen" in settings.opponents else []


def build_config(settings: RLlibSettings):
    """The ``PPOConfig`` of ``settings`` (checked first)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from .env import ENV_IDS, LegalityCallback, register_games
    from .model import PolicyModule, RuleAgentModule

    model = settings.check()
    register_games()
    modules = {name: RLModuleSpec(module_class=PolicyModule, model_config=model)
               for name in ["main", *snapshot_modules(settings)]}
    if "rule" in settings.opponents:
        modules["rule"] = RLModuleSpec(module_class=RuleAgentModule, model_config={
            "game": settings.game, "num_players": settings.num_players, "options": dict(settings.options)})
    env_config = {"num_players": settings.num_players, "reward_scale": settings.reward_scale,
                  "shaping_coef": settings.shaping_coef, "shaping_potential": settings.shaping_potential,
                  "gamma": settings.gamma, **settings.options}
    config = (
        PPOConfig()
        # RLlib's env checker steps random actions, which the mask forbids; tests/test_rllib.py checks the env
        .environment(ENV_IDS[settings.game], env_config=env_config, disable_env_checking=True)
        .framework("torch")
        .env_runners(num_env_runners=settings.num_env_runners, num_envs_per_env_runner=settings.envs_per_env_runner,
                     num_cpus_per_env_runner=1, rollout_fragment_length="auto",
                     # wait for every runner's samples: RLlib drops those later than a minute, which on a
                     # busy machine can be all of them
                     sample_timeout_s=None)
        .training(train_batch_size_per_learner=settings.train_batch, minibatch_size=settings.minibatch_size,
                  num_epochs=settings.update_epochs, lr=settings.learning_rate, gamma=settings.gamma,
                  lambda_=settings.gae_lambda, clip_param=settings.clip_coef, entropy_coeff=settings.ent_coef,
                  vf_loss_coeff=settings.vf_coef, grad_clip=settings.max_grad_norm, grad_clip_by="global_norm")
        .multi_agent(policies=set(modules), policies_to_train=["main"],
                     policy_mapping_fn=functools.partial(seat_module, opponents=tuple(settings.opponents),
                                                         num_players=settings.num_players,
                                                         snapshots=settings.snapshots))
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=modules))
        .callbacks(LegalityCallback)
        .debugging(seed=settings.seed)
    )
    return config


def set_policy_weights(algorithm, weights: dict, modules: list[str]) -> None:
    """Give ``modules`` the ``PolicyModule`` state ``weights`` on the learner and every env runner,
    and check the learner holds them (RLlib loads states leniently, ignoring names that differ)."""
    import numpy as np

    learners = algorithm.learner_group
    learners.set_weights({name: weights for name in modules})
    held = learners.get_weights(modules)
    for name in modules:
        if set(held[name]) != set(weights) or not all(np.array_equal(held[name][k], v) for k, v in weights.items()):
            raise RuntimeError(f"module {name!r} did not take the weights given: its state has "
                               f"{sorted(held[name])[:3]} …, the weights {sorted(weights)[:3]} …")
    # wait for every runner (RLlib's default timeout of 0 sends and does not wait: a runner could
    # play its next hands with the old weights)
    algorithm.env_runner_group.sync_weights(from_worker_or_learner_group=learners, policies=modules,
                                            inference_only=True, timeout_seconds=None)


def refresh_snapshot(algorithm, slot: int) -> None:
    """Copy ``main``'s weights into past copy ``slot`` on the learner and every env runner."""
    main = algorithm.learner_group.get_weights(["main"])["main"]
    set_policy_weights(algorithm, main, [snapshot_name(slot)])


def iteration_figures(result: dict) -> dict:
    """The figures one ``algorithm.train()`` result reports, by our names."""
    runners = result.get("env_runners", {})
    timers = result.get("timers", {})
    return {
        "sampling_s": timers.get("env_runner_sampling_timer"),  # this iteration's (RLlib smooths them)
        "learning_s": timers.get("learner_update_timer"),
        "env_steps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
        "episodes": int(runners.get("num_episodes_lifetime", 0)),
        "legal_actions": int(runners.get("legal_actions", 0)),
        "illegal_actions": int(runners.get("illegal_actions", 0)),
        "main_return": runners.get("module_episode_returns_mean", {}).get("main"),
    }


def process_ids(algorithm) -> list[int]:
    """The driver's and every env runner's process id (the processes whose CPU time a run counts)."""
    pids = algorithm.env_runner_group.foreach_env_runner(lambda runner: os.getpid())
    return sorted({os.getpid(), *pids})


def cpu_seconds(pids: list[int]) -> float | None:
    """User plus system CPU seconds of the processes ``pids`` so far (None where one cannot be read:
    another machine's, on a cluster)."""
    try:
        import psutil

        return sum(sum(psutil.Process(pid).cpu_times()[:2]) for pid in pids)
    except Exception:  # noqa: BLE001 - no psutil, a process on another machine or gone
        return None


def against_rule(checkpoint: str | os.PathLike, settings: RLlibSettings, hands: int) -> dict:
    """The policy of ``checkpoint`` in one seat against ``num_players`` − 1 rule agents on ``hands``
    duplicate-dealt hands (``agents.arena.one_against_many``, seed 0): the figures a run reports."""
    from agents.arena import ROW_FIGURES, one_against_many

    row = one_against_many(f"ppo:{checkpoint}", "rule", settings.game, settings.num_players, hands, seed=0,
                           **settings.options)
    return {"checkpoint": str(checkpoint), **{k: row[k] for k in ROW_FIGURES}}


def describe_result(row: dict) -> str:
    """One result against the rule agent in the project's number format."""
    from agents.stats import percent_text, points_text

    return (f"won {percent_text(row['win_rate'], row['win_rate_low'], row['win_rate_high'])} of {row['units']} "
            f"hands against the rule agent (fair share {100 * row['fair_share']:.1f}%), "
            f"{points_text(row['mean_points'], row['points_low'], row['points_high'])} points per hand")


def train(settings: RLlibSettings, out: str | os.PathLike, address: str | None = None, log=print,
          minutes: float | None = None, eval_hands: int = 0) -> dict:
    """Train on Ray (local, or the cluster at ``address``), write ``out``/policy.pt; the summary.

    Stops after ``settings.iterations`` iterations, or once ``minutes`` of wall time have passed
    (at the end of an iteration). With ``eval_hands``, the starting checkpoint (``init``) and the
    result play the rule agent first (``against_rule``), outside the timed training. Checks
    everything it can before Ray starts; shuts Ray down only if it started it here.
    """
    settings.check()
    check_address(address)
    if minutes is not None and not minutes > 0:
        raise RLlibSetupError(f"--minutes {minutes!r}: expected a number of minutes > 0")
    if isinstance(eval_hands, bool) or not isinstance(eval_hands, int) or eval_hands < 0:
        raise RLlibSetupError(f"--eval-hands {eval_hands!r}: expected an int >= 0")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise RLlibSetupError(f"--out {str(out)!r} is a file, not a folder")
    import ray

    from .model import network_weights, to_checkpoint

    evaluation = {}
    if eval_hands and settings.init is not None:
        evaluation["before"] = against_rule(settings.init, settings, eval_hands)
        log(f"before: {describe_result(evaluation['before'])}")
    started = not ray.is_initialized()
    if started:
        start_ray(address, settings.num_env_runners)
    algorithm = None
    try:
        algorithm = build_config(settings).build_algo()
        snapshots = snapshot_modules(settings)
        if settings.init is not None:  # the checkpoint's weights, in the learner and its past copies
            set_policy_weights(algorithm, network_weights(load_init(settings.init)[0].state_dict()),
                               ["main", *snapshots])
        elif snapshots:
            set_policy_weights(algorithm, algorithm.learner_group.get_weights(["main"])["main"], snapshots)
        pids = process_ids(algorithm)
        history = []
        begun, cpu_begun, load_begun = time.perf_counter(), cpu_seconds(pids), os.getloadavg()[0]
        refreshed = 0
        for iteration in range(1, settings.iterations + 1):
            started_at = time.perf_counter()
            result = algorithm.train()
            figures = iteration_figures(result)
            figures["iteration"] = iteration
            figures["iteration_s"] = round(time.perf_counter() - started_at, 2)
            figures["seconds"] = round(time.perf_counter() - begun, 2)
            figures["env_steps_per_s"] = round(figures["env_steps"] / max(figures["seconds"], 1e-9), 1)
            cpu_now = cpu_seconds(pids)
            if cpu_now is not None and cpu_begun is not None:
                figures["cpu_s"] = round(cpu_now - cpu_begun, 2)
                figures["env_steps_per_cpu_s"] = round(figures["env_steps"] / max(figures["cpu_s"], 1e-9), 1)
            figures["load_average"] = round(os.getloadavg()[0], 2)
            history.append(figures)
            main_return = figures["main_return"]
            per_cpu = f", {figures['env_steps_per_cpu_s']:.0f} per CPU-second" if "cpu_s" in figures else ""
            log(f"iteration {iteration}: {figures['env_steps']} env steps, {figures['episodes']} hands, "
                f"{figures['env_steps_per_s']:.0f} steps/s since the start{per_cpu} ({figures['iteration_s']:.1f} s "
                f"this iteration, load {figures['load_average']:.1f}), main return "
                f"{'-' if main_return is None else f'{main_return:+.3f}'}, illegal actions "
                f"{figures['illegal_actions']}")
            if figures["illegal_actions"]:
                raise RuntimeError(f"iteration {iteration}: {figures['illegal_actions']} illegal actions were "
                                   "played: the action mask was not applied")
            if snapshots and iteration % settings.freeze_every == 0:
                refresh_snapshot(algorithm, refreshed % settings.snapshots)
                refreshed += 1
            if minutes is not None and figures["seconds"] >= 60 * minutes:
                break
        out.mkdir(parents=True, exist_ok=True)
        rllib_dir = algorithm.save_to_path(str((out / "rllib").resolve()))
        policy = to_checkpoint(algorithm.get_module("main"), out / "policy.pt", settings.game, settings.num_players,
                               _plain_settings(settings))
    finally:
        if algorithm is not None:
            algorithm.stop()  # its env runners, also on a cluster that outlives this run
        if started:
            ray.shutdown()
    if eval_hands:
        evaluation["after"] = against_rule(policy, settings, eval_hands)
        log(f"after: {describe_result(evaluation['after'])}")
    summary = {"settings": _plain_settings(settings), "address": address or "local", "history": history,
               "load_average_at_start": round(load_begun, 2), "cpus": os.cpu_count(),
               "policy": str(policy), "rllib_checkpoint": str(rllib_dir), "against_rule": evaluation}
    from agents.arena import json_safe

    (out / "summary.json").write_text(json.dumps(json_safe(summary), indent=2) + "\n")
    return summary


def _plain_settings(settings: RLlibSettings) -> dict:
    plain = asdict(settings)
    plain["opponents"] = list(settings.opponents)
    return plain


# ------------------------------------------------------------------ CLI


TUNED = ("num_players", "iterations", "num_env_runners", "envs_per_env_runner", "train_batch", "minibatch_size",
         "update_epochs", "learning_rate", "gamma", "gae_lambda", "clip_coef", "ent_coef", "vf_coef", "max_grad_norm",
         "reward_scale", "shaping_coef",
         "shaping_potential", "model", "snapshots", "freeze_every", "seed")
"""Settings the command line sets when given (argparse defaults of None): with ``--init`` the rest
come from the checkpoint (``INHERITED``), else from ``RLlibSettings``."""


def build_parser() -> argparse.ArgumentParser:
    d = RLlibSettings()
    parser = argparse.ArgumentParser(
        prog="python -m rummy_apps.rllib",
        description="Self-play PPO with Ray RLlib (new API stack) on our action-masked networks, with our "
                    "trainer's potential-based shaping, on this machine or a Ray cluster; starts from scratch or "
                    "from one of our checkpoints (--init); writes OUT/policy.pt for the arena (docs/rllib.md).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Examples:\n"
               "  python -m rummy_apps.rllib --game indian --num-env-runners 2 --iterations 20\n"
               "  python -m rummy_apps.rllib --init runs/indian/best.pt --opponents frozen rule "
               "--minutes 20 --eval-hands 400\n"
               "  python -m rummy_apps.rllib --game basic --address auto --num-env-runners 16\n"
               "  python -m rummy_apps.rllib --game indian --convert runs/rllib-indian/rllib\n"
               "  python -m agents.arena --game indian --agents ppo:runs/rllib-indian/policy.pt random rule")
    add = parser.add_argument
    add("--game", help=f"the game: {', '.join(GAMES)} (required unless --init names it)")
    add("--init", metavar="CHECKPOINT",
        help="start from this policy checkpoint of our trainer (its network and weights; its game, players and "
             "PPO settings are the defaults of the options below)")
    add("--num-players", type=int, help=f"seats (default {d.num_players})")
    add("--iterations", type=int, help=f"PPO iterations at most (default {d.iterations}; with --minutes, "
                                       "no limit but the minutes)")
    add("--minutes", type=float, help="stop after this many minutes of training (at the end of an iteration)")
    add("--num-env-runners", type=int, help=f"sampling processes, one CPU each (default {d.num_env_runners})")
    add("--envs-per-env-runner", type=int, help=f"games each env runner steps together (default "
                                                f"{d.envs_per_env_runner})")
    add("--train-batch", type=int, help=f"env steps per iteration, all runners together (default {d.train_batch})")
    add("--minibatch-size", type=int, help=f"SGD minibatch (default {d.minibatch_size})")
    add("--update-epochs", type=int, help=f"passes per batch (default {d.update_epochs})")
    add("--learning-rate", type=float, help=f"learning rate (default {d.learning_rate})")
    add("--gamma", type=float, help=f"discount (default {d.gamma})")
    add("--gae-lambda", type=float, help=f"GAE lambda (default {d.gae_lambda})")
    add("--clip-coef", type=float, help=f"PPO clip range (default {d.clip_coef})")
    add("--ent-coef", type=float, help=f"entropy bonus coefficient (default {d.ent_coef})")
    add("--vf-coef", type=float, help=f"weight of the value loss (default {d.vf_coef})")
    add("--max-grad-norm", type=float, help=f"largest global gradient norm (default {d.max_grad_norm})")
    add("--reward-scale", type=float, help=f"rewards are points times this (default {d.reward_scale})")
    add("--shaping-coef", type=float, help=f"weight of the shaping potential per point, 0 for none (default "
                                           f"{d.shaping_coef}; docs/rllib.md \"Shaping\")")
    add("--shaping-potential", choices=POTENTIALS, help=f"what the potential counts (default {d.shaping_potential})")
    add("--model", type=_model_json, metavar="JSON",
        help='the network, e.g. \'{"kind": "mlp", "hidden": [256, 256], "activation": "tanh"}\' (default) or '
             '\'{"kind": "card", "layout": 2}\'; with --init, the checkpoint\'s')
    add("--opponents", nargs="+", default=list(d.opponents), metavar="NAME",
        help=f"opponent seats, drawn per seat and episode: {', '.join(OPPONENTS)} (default self)")
    add("--snapshots", type=int, help=f"past copies of the learner that frozen seats play (default {d.snapshots})")
    add("--freeze-every", type=int, help=f"iterations between refreshes of the oldest past copy (default "
                                         f"{d.freeze_every})")
    add("--eval-hands", type=int, default=0,
        help="play the --init checkpoint before and the result after against the rule agent on this many "
             "duplicate-dealt hands (default 0: no evaluation)")
    add("--option", action="append", default=[], metavar="KEY=VALUE",
        help="a rule option of the game (docs/rules.md), e.g. max_turns=200; repeatable")
    add("--seed", type=int, help=f"seed (default {d.seed})")
    add("--address", default=None,
        help="join a Ray cluster: auto (the one `ray start` runs here), HOST:PORT or ray://HOST:PORT; default: "
             "start Ray on this machine")
    add("--out", default=None, help="output folder (default runs/rllib-GAME)")
    add("--convert", metavar="RLLIB_CHECKPOINT",
        help="only convert a saved run (OUT/rllib) to --out/policy.pt, no training")
    return parser


UNTIL_THE_MINUTES = 10**9
"""The iteration limit of a run given ``--minutes`` and no ``--iterations``: none in practice."""


def settings_from_args(args: argparse.Namespace) -> RLlibSettings:
    """The run's settings: the options given, then the ``--init`` checkpoint's, then the defaults."""
    given = {name: getattr(args, name) for name in TUNED if getattr(args, name) is not None}
    given["opponents"] = tuple(args.opponents)
    given["options"] = dict(_option(o) for o in args.option)
    if args.minutes is not None and args.iterations is None:  # --minutes alone: the minutes are the limit
        given["iterations"] = UNTIL_THE_MINUTES
    if args.game is not None:
        given["game"] = args.game
    if args.init is not None:
        return RLlibSettings.from_checkpoint(args.init, **given)
    if args.game is None:
        raise RLlibSetupError("--game is required (or --init, whose checkpoint names its game)")
    return RLlibSettings(**given)


def _model_json(text: str) -> dict:
    try:
        model = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"{text!r} is not JSON ({error.msg})") from None
    if not isinstance(model, dict):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a JSON object, e.g. '{{\"hidden\": [256, 256]}}'")
    return model


def _option(text: str) -> tuple[str, object]:
    try:
        return parse_option(text)
    except ValueError as error:
        raise RLlibSetupError(f"--{error}") from None


def convert(checkpoint: str | os.PathLike, out: str | os.PathLike, game: str, num_players: int) -> Path:
    """Our policy checkpoint ``out`` from a saved RLlib run (``OUT/rllib``) of ``game``."""
    source = Path(checkpoint)
    module_dir = source / "learner_group" / "learner" / "rl_module" / "main"
    if not module_dir.is_dir():
        raise RLlibSetupError(f"--convert {str(source)!r}: not a saved RLlib run of this module "
                              f"(no {module_dir.relative_to(source)})")
    from .model import to_checkpoint

    return to_checkpoint(str(module_dir.resolve()), out, game, num_players, {"converted_from": str(source)})


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m rummy_apps.rllib``; the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        try:
            import ray  # noqa: F401
        except ImportError:
            raise RLlibSetupError('ray is not installed: pip install -e ".[ray]"') from None
        settings = settings_from_args(args)
        settings.check()
        out = Path(args.out or f"runs/rllib-{settings.game}")
        if args.convert:
            print(f"wrote {convert(args.convert, out / 'policy.pt', settings.game, settings.num_players)}")
            return 0
        log = functools.partial(print, flush=True)  # a line per iteration as it ends, also into a file
        log(f"training {settings.game} at {settings.num_players} seats"
            f"{f' from {settings.init}' if settings.init else ''}; writing {out}/")
        summary = train(settings, out, args.address, log=log, minutes=args.minutes, eval_hands=args.eval_hands)
    except RLlibSetupError as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    print(f"wrote {summary['policy']} (RLlib checkpoint {summary['rllib_checkpoint']})")
    return 0

