"""Self-play PPO with Ray RLlib on one machine or a Ray cluster (``docs/rllib.md``).

Needs the ``ray`` extra: ``pip install -e ".[ray]"``. RLlib's new API stack (RLModule, Learner,
EnvRunner) with:

* ``rllib_env.RummyMultiAgentEnv``: our AEC environment, turn based, registered per game;
* ``rllib_model.MaskedMLPModule``: the learning policy, an ``agents.policy.MaskedActorCritic``
  whose logits the observation's action mask cuts down to the legal moves;
* self-play mapping: each episode one seat plays ``main`` (the one policy trained, shared by
  all seats that map to it); every other seat plays an opponent drawn from ``--opponents``:
  ``self`` (``main`` again), ``frozen`` (a copy of ``main`` refreshed every ``--freeze-every``
  iterations, never trained) or ``rule`` (``agents.rule_agent.RuleAgent``);
* at the end ``main`` is written as our policy checkpoint, ``OUT/policy.pt``, for the arena.

    python -m rummy_env.integrations.rllib --game indian --num-env-runners 2 --iterations 20
    python -m rummy_env.integrations.rllib --game indian --address auto --num-env-runners 8 ...
    python -m agents.arena --game indian --agents ppo:runs/rllib-indian/policy.pt random rule

Bad input (an unknown game, a model config that does not fit the game's observation and action
sizes, an unreachable cluster) is an error naming it before Ray or any worker starts.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import socket
import sys
import time
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

from rummy_env.ruleset import GAMES, make_ruleset, parse_option

OPPONENTS = ("self", "frozen", "rule")
MODULE_OF = {"self": "main", "frozen": "frozen", "rule": "rule"}
CONNECT_TIMEOUT_S = 5.0


class RLlibSetupError(ValueError):
    """Settings that cannot run; the message names the setting."""


@dataclass
class RLlibSettings:
    """What one RLlib run trains; ``check()`` refuses bad values by name."""

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
    minibatch: int = 500
    """SGD minibatch"""
    epochs: int = 4
    """passes over each batch"""
    lr: float = 3e-4
    """Adam learning rate"""
    gamma: float = 0.995
    """discount"""
    entropy: float = 0.01
    """entropy bonus coefficient"""
    reward_scale: float = 0.01
    """env reward_scale: rewards are points times this"""
    model: dict = field(default_factory=lambda: {"hidden": [256, 256], "activation": "tanh"})
    """the MLP: hidden widths and activation (tanh or relu); may state observation_size, num_actions"""
    opponents: tuple = ("self",)
    """opponent seats: self, frozen, rule (one drawn per seat and episode)"""
    freeze_every: int = 5
    """iterations between refreshes of the frozen copy"""
    seed: int = 0
    """seed of RLlib and of the deals"""
    options: dict = field(default_factory=dict)
    """rule options of the game (docs/rules.md), e.g. max_turns"""

    def check(self) -> dict:
        """Refuse bad settings by name; the checked model config."""
        if self.game not in GAMES:
            raise RLlibSetupError(f"unknown game {self.game!r}: expected one of {', '.join(GAMES)}")
        try:
            make_ruleset(self.game, self.num_players, **self.options)
        except (TypeError, ValueError) as error:
            raise RLlibSetupError(str(error)) from None
        for name in ("iterations", "num_env_runners", "envs_per_env_runner", "train_batch", "minibatch", "epochs",
                     "freeze_every"):
            value = getattr(self, name)
            low = 0 if name == "num_env_runners" else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise RLlibSetupError(f"{name}={value!r}: expected an int >= {low}")
        if self.minibatch > self.train_batch:
            raise RLlibSetupError(f"minibatch={self.minibatch} is larger than train_batch={self.train_batch}")
        bad = [o for o in self.opponents if o not in OPPONENTS]
        if bad or not self.opponents:
            raise RLlibSetupError(f"opponents {list(self.opponents)!r}: expected one or more of {', '.join(OPPONENTS)}")
        from .rllib_model import ModelConfigError, check_model_config

        try:
            return check_model_config(self.game, self.num_players, self.model)
        except ModelConfigError as error:
            raise RLlibSetupError(str(error)) from None


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


def seat_module(agent_id: str, episode, opponents: tuple = ("self",), num_players: int = 2, **kwargs) -> str:
    """The module that plays ``agent_id`` in ``episode``: ``main`` in one seat, opponents elsewhere.

    Drawn from the episode's id, so every seat of one episode agrees on who learns.
    """
    episode_id = str(getattr(episode, "id_", episode))
    learner_seat = zlib.crc32(episode_id.encode()) % num_players
    seat = int(agent_id.rsplit("_", 1)[1])
    if seat == learner_seat:
        return "main"
    draw = zlib.crc32(f"{episode_id}/{agent_id}".encode()) % len(opponents)
    return MODULE_OF[opponents[draw]]


def build_config(settings: RLlibSettings):
    """The ``PPOConfig`` of ``settings`` (checked first)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from .rllib_env import ENV_IDS, LegalityCallback, register_games
    from .rllib_model import MaskedMLPModule, RuleAgentModule

    model = settings.check()
    register_games()
    modules = {"main": RLModuleSpec(module_class=MaskedMLPModule, model_config=model)}
    if "frozen" in settings.opponents:
        modules["frozen"] = RLModuleSpec(module_class=MaskedMLPModule, model_config=model)
    if "rule" in settings.opponents:
        modules["rule"] = RLModuleSpec(module_class=RuleAgentModule, model_config={
            "game": settings.game, "num_players": settings.num_players, "options": dict(settings.options)})
    env_config = {"num_players": settings.num_players, "reward_scale": settings.reward_scale, **settings.options}
    config = (
        PPOConfig()
        # RLlib's env checker steps random actions, which the mask forbids; tests/test_rllib.py checks the env
        .environment(ENV_IDS[settings.game], env_config=env_config, disable_env_checking=True)
        .framework("torch")
        .env_runners(num_env_runners=settings.num_env_runners, num_envs_per_env_runner=settings.envs_per_env_runner,
                     num_cpus_per_env_runner=1, rollout_fragment_length="auto")
        .training(train_batch_size_per_learner=settings.train_batch, minibatch_size=settings.minibatch,
                  num_epochs=settings.epochs, lr=settings.lr, gamma=settings.gamma, entropy_coeff=settings.entropy)
        .multi_agent(policies=set(modules), policies_to_train=["main"],
                     policy_mapping_fn=functools.partial(seat_module, opponents=tuple(settings.opponents),
                                                         num_players=settings.num_players))
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=modules))
        .callbacks(LegalityCallback)
        .debugging(seed=settings.seed)
    )
    return config


def refresh_frozen(algorithm) -> None:
    """Copy ``main``'s weights into ``frozen`` on the learner and every env runner."""
    learners = algorithm.learner_group
    learners.set_weights({"frozen": learners.get_weights(["main"])["main"]})
    algorithm.env_runner_group.sync_weights(from_worker_or_learner_group=learners, policies=["frozen"],
                                            inference_only=True)


def iteration_figures(result: dict) -> dict:
    """The figures one ``algorithm.train()`` result reports, by our names."""
    runners = result.get("env_runners", {})
    return {
        "env_steps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
        "episodes": int(runners.get("num_episodes_lifetime", 0)),
        "legal_actions": int(runners.get("legal_actions", 0)),
        "illegal_actions": int(runners.get("illegal_actions", 0)),
        "main_return": runners.get("module_episode_returns_mean", {}).get("main"),
    }


def train(settings: RLlibSettings, out: str | os.PathLike, address: str | None = None, log=print) -> dict:
    """Train on Ray (local, or the cluster at ``address``), write ``out``/policy.pt; the summary.

    Checks everything it can before Ray starts; shuts Ray down only if it started it here.
    """
    settings.check()
    check_address(address)
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise RLlibSetupError(f"--out {str(out)!r} is a file, not a folder")
    import ray

    from .rllib_model import to_checkpoint

    started = not ray.is_initialized()
    if started:
        start_ray(address, settings.num_env_runners)
    algorithm = None
    try:
        algorithm = build_config(settings).build_algo()
        history = []
        begun = time.perf_counter()
        for iteration in range(1, settings.iterations + 1):
            started_at = time.perf_counter()
            result = algorithm.train()
            figures = iteration_figures(result)
            figures["iteration"] = iteration
            figures["iteration_s"] = round(time.perf_counter() - started_at, 2)
            figures["seconds"] = round(time.perf_counter() - begun, 2)
            figures["env_steps_per_s"] = round(figures["env_steps"] / max(figures["seconds"], 1e-9), 1)
            history.append(figures)
            main_return = figures["main_return"]
            log(f"iteration {iteration}: {figures['env_steps']} env steps, {figures['episodes']} hands, "
                f"{figures['env_steps_per_s']:.0f} steps/s since the start ({figures['iteration_s']:.1f} s this "
                f"iteration), main return {'-' if main_return is None else f'{main_return:+.3f}'}, "
                f"illegal actions {figures['illegal_actions']}")
            if figures["illegal_actions"]:
                raise RuntimeError(f"iteration {iteration}: {figures['illegal_actions']} illegal actions were "
                                   "played: the action mask was not applied")
            if "frozen" in settings.opponents and iteration % settings.freeze_every == 0:
                refresh_frozen(algorithm)
        out.mkdir(parents=True, exist_ok=True)
        rllib_dir = algorithm.save_to_path(str((out / "rllib").resolve()))
        policy = to_checkpoint(algorithm.get_module("main"), out / "policy.pt", settings.game, settings.num_players,
                               _plain_settings(settings))
    finally:
        if algorithm is not None:
            algorithm.stop()  # its env runners, also on a cluster that outlives this run
        if started:
            ray.shutdown()
    summary = {"settings": _plain_settings(settings), "address": address or "local", "history": history,
               "policy": str(policy), "rllib_checkpoint": str(rllib_dir)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def _plain_settings(settings: RLlibSettings) -> dict:
    plain = asdict(settings)
    plain["opponents"] = list(settings.opponents)
    return plain


# ------------------------------------------------------------------ CLI


def build_parser() -> argparse.ArgumentParser:
    defaults = RLlibSettings()
    parser = argparse.ArgumentParser(
        prog="python -m rummy_env.integrations.rllib",
        description="Self-play PPO with Ray RLlib (new API stack) and an action-masked MLP, on this machine or a "
                    "Ray cluster; writes OUT/policy.pt for the arena (docs/rllib.md).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Examples:\n"
               "  python -m rummy_env.integrations.rllib --game indian --num-env-runners 2 --iterations 20\n"
               "  python -m rummy_env.integrations.rllib --game basic --address auto --num-env-runners 16\n"
               "  python -m rummy_env.integrations.rllib --game indian --convert runs/rllib-indian/rllib\n"
               "  python -m agents.arena --game indian --agents ppo:runs/rllib-indian/policy.pt random rule")
    parser.add_argument("--game", required=True, help=f"the game: {', '.join(GAMES)}")
    parser.add_argument("--num-players", type=int, default=defaults.num_players, help="seats (default 2)")
    parser.add_argument("--iterations", type=int, default=defaults.iterations,
                        help=f"PPO iterations (default {defaults.iterations})")
    parser.add_argument("--num-env-runners", type=int, default=defaults.num_env_runners,
                        help=f"sampling processes, one CPU each (default {defaults.num_env_runners})")
    parser.add_argument("--envs-per-env-runner", type=int, default=defaults.envs_per_env_runner,
                        help="games each env runner steps together (default 1)")
    parser.add_argument("--train-batch", type=int, default=defaults.train_batch,
                        help=f"env steps per iteration (default {defaults.train_batch})")
    parser.add_argument("--minibatch", type=int, default=defaults.minibatch,
                        help=f"SGD minibatch (default {defaults.minibatch})")
    parser.add_argument("--epochs", type=int, default=defaults.epochs,
                        help=f"passes per batch (default {defaults.epochs})")
    parser.add_argument("--lr", type=float, default=defaults.lr, help=f"learning rate (default {defaults.lr})")
    parser.add_argument("--model", type=_model_json, default=defaults.model, metavar="JSON",
                        help='the MLP, e.g. \'{"hidden": [256, 256], "activation": "tanh"}\' (default)')
    parser.add_argument("--opponents", nargs="+", default=list(defaults.opponents), metavar="NAME",
                        help=f"opponent seats, drawn per seat and episode: {', '.join(OPPONENTS)} (default self)")
    parser.add_argument("--freeze-every", type=int, default=defaults.freeze_every,
                        help=f"iterations between refreshes of the frozen copy (default {defaults.freeze_every})")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="a rule option of the game (docs/rules.md), e.g. max_turns=200; repeatable")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument("--address", default=None,
                        help="join a Ray cluster: auto (the one `ray start` runs here), HOST:PORT or "
                             "ray://HOST:PORT; default: start Ray on this machine")
    parser.add_argument("--out", default=None, help="output folder (default runs/rllib-GAME)")
    parser.add_argument("--convert", metavar="RLLIB_CHECKPOINT",
                        help="only convert a saved run (OUT/rllib) to --out/policy.pt, no training")
    return parser


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
    from .rllib_model import to_checkpoint

    return to_checkpoint(str(module_dir.resolve()), out, game, num_players, {"converted_from": str(source)})


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m rummy_env.integrations.rllib``; the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        options = dict(_option(o) for o in args.option)
        settings = RLlibSettings(game=args.game, num_players=args.num_players, iterations=args.iterations,
                                 num_env_runners=args.num_env_runners, envs_per_env_runner=args.envs_per_env_runner,
                                 train_batch=args.train_batch, minibatch=args.minibatch, epochs=args.epochs,
                                 lr=args.lr, model=args.model, opponents=tuple(args.opponents),
                                 freeze_every=args.freeze_every, seed=args.seed, options=options)
        try:
            import ray  # noqa: F401
        except ImportError:
            raise RLlibSetupError('ray is not installed: pip install -e ".[ray]"') from None
        settings.check()
        out = Path(args.out or f"runs/rllib-{args.game}")
        if args.convert:
            print(f"wrote {convert(args.convert, out / 'policy.pt', args.game, args.num_players)}")
            return 0
        summary = train(settings, out, args.address)
    except RLlibSetupError as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    print(f"wrote {summary['policy']} (RLlib checkpoint {summary['rllib_checkpoint']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
