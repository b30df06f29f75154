"""The trainer's settings: one dataclass, the single source of every field, default and doc.

``TrainConfig``'s fields, each with its one-line docstring, are the command line (tyro turns them
into ``--field-name`` flags and ``--help``) and the keys of a recipe file (``configs/*.yaml``,
loaded with pyyaml). A recipe sets the fields first, the command line overrides them. Every value
is checked before training starts: an unknown field (with the closest name), a value of the wrong
type or out of range, or fields that do not go together are a ``ConfigError`` naming the field.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, get_type_hints

import yaml
from tyro.constructors import PrimitiveConstructorSpec

from rummy_env.ruleset import make_ruleset


class ConfigError(ValueError):
    """A config field that is unknown, of the wrong type or out of range; the message names it."""


def _parse_bool(arguments: list[str]) -> bool:
    text = arguments[0].lower()
    if text in ("true", "yes", "on", "1", "false", "no", "off", "0"):
        return text in ("true", "yes", "on", "1")
    raise ValueError(f"{arguments[0]!r} is not true or false")


Bool = Annotated[bool, PrimitiveConstructorSpec(
    nargs=1, metavar="{true,false}", instance_from_str=_parse_bool, is_instance=lambda x: isinstance(x, bool),
    str_from_instance=lambda x: [str(x).lower()])]
"""A setting given as ``--shaping false`` on the command line (the recipes' spelling)."""


def _f(default, **checks):
    """A field with range checks (``low``, ``high``); a list default is copied per instance."""
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=checks)
    return field(default=default, metadata=checks)


@dataclass
class TrainConfig:
    """Self-play PPO for Indian Rummy, Basic Rummy and Indiai römi: clone the rule agent, then improve by PPO
    against a pool of past selves, the rule agent and random, with potential-based reward shaping (docs/training.md;
    rule ids such as I5 refer to docs/rules.md). With no arguments: the default run, Indian Rummy for 2 players,
    11-15 minutes on 2 free cores. Also: --config RECIPE (a YAML file, or a name in configs/ such as indian-2p;
    the options below override it), --resume RUN_DIR (continue a run from its checkpoint.pt, with its config.yaml),
    --print-config (print the resolved settings as YAML and exit)."""

    # --- the game
    game: Literal["indian", "basic", "romi"] = "indian"
    """the game (docs/rules.md)"""
    num_players: int = _f(2, low=2, high=6)
    """players at the table (Indian 2-6, Basic and römi 2-4)"""
    # --- the run
    seed: int = _f(1, low=0)
    """seed of the deals, the networks and every sampler (same seed, same run on CPU)"""
    run_dir: str = ""
    """folder of the run (TensorBoard logs, checkpoints, plots); empty: runs/GAME_Np_sSEED_TIME"""
    total_steps: int = _f(4_000_000, low=0)
    """learner decisions to train on with PPO (after cloning; the learning rate anneals over them)"""
    time_limit_minutes: float = _f(0.0, low=0.0)
    """stop PPO after this many minutes of wall time (0: no limit)"""
    cpu_limit_minutes: float = _f(0.0, low=0.0)
    """stop PPO once every process of the run together has used this many CPU minutes, cloning included
    (0: no limit; 120 is one hour of 2 cores)"""
    num_envs: int = _f(256, low=1)
    """hands stepped together in each collecting process"""
    num_workers: int = _f(2, low=0, high=64)
    """collecting processes (0: collect in the training process)"""
    torch_threads: int = _f(1, low=1)
    """torch threads of each process (1 is fastest with one process per core)"""
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """where the learner runs: auto (a GPU when torch sees one, else the CPU), cpu, or cuda (an error without a
    GPU); on the CPU the collecting processes learn (DD-PPO)"""
    progress: Bool = True
    """show progress (a bar on a terminal; otherwise plain lines, at most one every 30 s per stage)"""
    # --- the network
    network: Literal["card", "mlp"] = "card"
    """card: per-card features shared across cards (agents/networks.py); mlp: a plain MLP"""
    channels: int = _f(32, low=4)
    """card network: features per card"""
    global_size: int = _f(128, low=8)
    """card network: size of the global summary"""
    mlp_hidden: list[int] = _f([256, 256])
    """mlp network: hidden layer sizes"""
    # --- PPO (CleanRL's names)
    rollout_size: int = _f(8192, low=64)
    """learner decisions collected per update (all processes together)"""
    learning_rate: float = _f(3e-4, low=1e-7, high=1.0)
    """Adam step size of PPO"""
    anneal_lr: Bool = True
    """decay the PPO learning rate linearly to 0"""
    gamma: float = _f(0.995, low=0.0, high=1.0)
    """discount per decision of the same seat"""
    gae_lambda: float = _f(0.95, low=0.0, high=1.0)
    """GAE lambda"""
    update_epochs: int = _f(1, low=1)
    """passes over each rollout (fresh decisions are cheap: one pass learns most per CPU-second)"""
    minibatch_size: int = _f(512, low=8)
    """samples per gradient step (all processes together)"""
    clip_coef: float = _f(0.2, low=0.0, high=10.0)
    """PPO ratio clip"""
    ent_coef: float = _f(0.005, low=0.0)
    """entropy bonus (entropy over legal actions only)"""
    vf_coef: float = _f(0.5, low=0.0)
    """value loss weight"""
    max_grad_norm: float = _f(0.5, low=0.0)
    """gradient norm clip"""
    target_kl: float = _f(0.03, low=0.0)
    """stop an update's epochs once the approximate KL passes this (0: never)"""
    reward_scale: float = _f(0.01, low=1e-9, high=1e3)
    """points to reward units (a 100-point hand is a reward of 1)"""
    win_bonus: float = _f(1.0, low=0.0)
    """reward units the winner of a hand gets on top of its points, taken in equal shares from the other seats
    (zero-sum; 0: points alone; 1 is about a typical hand's points)"""
    oracle_decisions: int = _f(0, low=0)
    """oracle guiding: the learner's observations also show the other seats' hands (in their known-cards rows)
    on a share of its decisions that falls linearly from all to none over this many PPO decisions; evaluation
    and play never see them (0: off)"""
    # --- getting past the sparse reward
    shaping: Bool = True
    """potential-based shaping from the hand's penalty by the exact solver (rummy_env.shaping)"""
    shaping_coef: float = _f(1.0, low=0.0)
    """weight of the shaping potential (in reward units per point)"""
    bc_warm_start: Bool = True
    """clone a teacher's moves before PPO"""
    bc_teacher: str = "rule"
    """the teacher, an agent spec (docs/agents.md): rule, search, or one with settings such as rule:hold_until=3
    (Basic, römi: keeps melds in hand; it beats the default rule agent)"""
    bc_decisions: int = _f(100_000, low=100)
    """teacher decisions recorded for cloning"""
    bc_epochs: int = _f(8, low=1)
    """passes over the cloning data"""
    value_warmup_updates: int = _f(2, low=0)
    """first PPO updates that train the value head alone (every other weight, so every policy output, stays as
    cloned)"""
    # --- the opponent pool
    pool_self_fraction: float = _f(0.2, low=0.0, high=1.0)
    """share of hands the learner plays against itself (all seats learn)"""
    pool_rule_min: float = _f(0.4, low=0.0, high=1.0)
    """least share of the other hands against the rule agent (the rest: random, snapshots and pool_opponents,
    drawn by PFSP)"""
    pool_opponents: list[str] = _f([])
    """more fixed opponents in the pool, agent specs (docs/agents.md), e.g. pretrained:basic or
    rule:hold_until=3; drawn by PFSP like the snapshots"""
    pool_opponents_only: Bool = False
    """the pool's fixed opponents are pool_opponents alone, without the rule agent and random (self-play and
    snapshots as their settings say): a best response to those agents (rummy-exploit)"""
    pool_snapshot_every: int = _f(25, low=0)
    """updates between snapshots of the learner added to the pool (0: none)"""
    pool_max_snapshots: int = _f(4, low=0)
    """snapshots kept (the oldest leaves first)"""
    # --- evaluation and checkpoints
    eval_every: int = _f(100, low=0)
    """updates between evaluations (0: only at the end)"""
    eval_deals: int = _f(100, low=1)
    """duplicate deals per opponent at each evaluation, each played once per seat (2 hands a deal at 2 players)"""
    final_eval_deals: int = _f(1000, low=1)
    """duplicate deals per opponent in the final evaluation, each played once per seat (1,000 deals: 2,000 hands
    at 2 players, about ±2 points of win rate)"""
    eval_opponents: list[str] = _f(["panel"])
    """agent specs to evaluate against; panel is the game's fixed panel (docs/training.md, Evaluation panel);
    best.pt is chosen on them"""
    final_eval_search_deals: int = _f(25, low=0)
    """duplicate deals against the panel's search agent in the final evaluation (it is slow; the periodic
    evaluations skip it)"""
    checkpoint_every: int = _f(20, low=1)
    """updates between checkpoints (and on Ctrl-C)"""


FIELDS = {f.name: f for f in dataclasses.fields(TrainConfig)}
"""Field name -> dataclass field, in the dataclass's order."""
TYPES = get_type_hints(TrainConfig, include_extras=False)
"""Field name -> its type (``Literal`` for the fields with choices)."""
CONFIGS = Path(__file__).resolve().parents[2] / "configs"
"""The recipes: one YAML file per shipped policy, and the default run's (``configs/``)."""
MACHINE_SETTINGS = frozenset({"run_dir", "num_workers", "device", "torch_threads", "learner_threads", "progress"})
"""Settings of the machine a run used, not of its recipe."""


def _check_type(name: str, value: Any, where: str) -> Any:
    """``value`` as field ``name``'s type (an int is a float too), or a ``ConfigError``."""
    kind = TYPES[name]
    choices = getattr(kind, "__args__", ()) if getattr(kind, "__origin__", None) is Literal else ()
    if choices:
        if value not in choices:
            raise ConfigError(f"{where}: {value!r}: expected one of {', '.join(choices)}")
        return value
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if kind is float and isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{where}: {value!r} is not a finite number")
    item = getattr(kind, "__args__", (None,))[0]
    if kind in (bool, int, float, str) and type(value) is not kind:
        expected = {bool: "true or false", int: "an integer", float: "a finite number", str: "a string"}[kind]
        raise ConfigError(f"{where}: {value!r} is not {expected}")
    if kind not in (bool, int, float, str) and not (isinstance(value, list) and all(type(v) is item for v in value)):
        raise ConfigError(f"{where}: {value!r} is not a list of {item.__name__}")
    return value


def _check_range(name: str, value: Any, where: str) -> None:
    checks = FIELDS[name].metadata
    if "low" in checks and value < checks["low"]:
        raise ConfigError(f"{where}: {value!r} is out of range: expected >= {checks['low']}")
    if "high" in checks and value > checks["high"]:
        raise ConfigError(f"{where}: {value!r} is out of range: expected <= {checks['high']}")
    if name == "mlp_hidden" and not all(size >= 1 for size in value):
        raise ConfigError(f"{where}: {value!r}: every layer size must be >= 1")


def make_config(values: dict | None = None, source: str = "config") -> TrainConfig:
    """A checked ``TrainConfig`` from ``values`` (defaults for the fields left out)."""
    checked = {}
    for name, value in (values or {}).items():
        key = str(name).replace("-", "_")
        if key not in FIELDS:
            close = difflib.get_close_matches(key, list(FIELDS), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{source}: unknown field {name!r}{hint}; see --help for the fields")
        checked[key] = _check_type(key, value, f"{source}: field {key!r}")
    return validate(TrainConfig(**checked))


def validate(config: TrainConfig, source: str = "config") -> TrainConfig:
    """Check every field's range and the fields together; returns ``config``."""
    for name in FIELDS:
        _check_range(name, getattr(config, name), f"{source}: field {name!r}")
    try:
        make_ruleset(config.game, config.num_players)
    except ValueError as error:
        raise ConfigError(f"{source}: fields 'game' and 'num_players': {error}") from None
    if config.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise ConfigError(f"{source}: field 'device': 'cuda', but torch sees no GPU (torch.cuda.is_available() "
                              "is False: no NVIDIA GPU here, or a CPU build of torch); use auto or cpu")
    if config.minibatch_size < max(1, config.num_workers):
        raise ConfigError(f"{source}: field 'minibatch_size' ({config.minibatch_size}) is smaller than "
                          f"'num_workers' ({config.num_workers}): each process takes a share of every minibatch")
    updates = math.ceil(config.total_steps / config.rollout_size)
    if config.pool_snapshot_every and config.pool_max_snapshots > max(updates, 1):
        raise ConfigError(f"{source}: field 'pool_max_snapshots' ({config.pool_max_snapshots}) is more than the "
                          f"run's {updates} PPO updates ('total_steps' / 'rollout_size'): at most one snapshot is "
                          "taken per update, so the pool could never hold them")
    if config.minibatch_size > config.rollout_size:
        raise ConfigError(f"{source}: field 'minibatch_size' ({config.minibatch_size}) is larger than "
                          f"'rollout_size' ({config.rollout_size})")
    from agents.base import AgentError
    from agents.registry import make_agent

    from .evaluate import expand
    from .pool import fixed_entries

    if config.pool_opponents_only and not config.pool_opponents:
        raise ConfigError(f"{source}: field 'pool_opponents_only' is true but 'pool_opponents' is empty: "
                          "name the agents the learner plays")
    entries = ["self", *fixed_entries(tuple(config.pool_opponents), config.pool_opponents_only)]
    for spec in config.pool_opponents:
        if entries.count(spec) > 1:
            raise ConfigError(f"{source}: field 'pool_opponents': {spec!r} is in the pool already")
    opponents = expand(config.eval_opponents, config.game, config.num_players)
    rules = make_ruleset(config.game, config.num_players)
    for name, specs in (("bc_teacher", [config.bc_teacher]), ("eval_opponents", opponents),
                        ("pool_opponents", config.pool_opponents)):
        for spec in specs:
            try:
                make_agent(spec, rules)
            except AgentError as error:
                raise ConfigError(f"{source}: field {name!r}: {error}") from None
    return config


def find_recipe(name: str | Path) -> Path:
    """The recipe file ``name``: a path, or a name in ``configs/`` (``indian-2p`` or ``indian-2p.yaml``);
    a missing one is an error listing what ``configs/`` holds."""
    given = Path(name)
    for candidate in (given, CONFIGS / given, CONFIGS / f"{given}.yaml"):
        if candidate.is_file():
            return candidate
    names = ", ".join(sorted(p.stem for p in CONFIGS.glob("*.yaml")))
    raise ConfigError(f"config {str(name)!r}: no such file, and no recipe of that name in {CONFIGS}: "
                      f"expected a path or one of {names}")


def recipe_of(settings: dict) -> Path | None:
    """The recipe in ``configs/`` that resolves to a run's ``settings`` (machine settings apart; a
    setting a run predates counts at its default), or None when none does (settings of its own)."""
    wanted = to_dict(TrainConfig()) | settings
    for path in sorted(CONFIGS.glob("*.yaml")):
        resolved = to_dict(make_config(load_yaml(path), f"config file {str(path)!r}"))
        if all(resolved.get(k) == v for k, v in wanted.items() if k not in MACHINE_SETTINGS):
            return path
    return None


def load_yaml(path: str | Path) -> dict:
    """The fields of a YAML config file (a mapping); a bad file is an error naming it."""
    source = Path(path)
    if not source.is_file():
        raise ConfigError(f"config file {str(source)!r}: no such file")
    try:
        data = yaml.safe_load(source.read_text())
    except yaml.YAMLError as error:
        raise ConfigError(f"config file {str(source)!r}: not valid YAML ({error})") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {str(source)!r}: expected a mapping of field: value")
    return {str(k): v for k, v in data.items()}


def resolve_device(config: TrainConfig):
    """The ``torch.device`` the learner runs on (``device``, with auto resolved)."""
    import torch

    if config.device == "cpu" or (config.device == "auto" and not torch.cuda.is_available()):
        return torch.device("cpu")
    return torch.device("cuda")


def default_run_dir(config: TrainConfig) -> str:
    """runs/GAME_Np_sSEED_TIME (CleanRL names runs env__exp__seed__time)."""
    return f"runs/{config.game}_{config.num_players}p_s{config.seed}_{time.strftime('%Y%m%d-%H%M%S')}"


def to_dict(config: TrainConfig) -> dict:
    """The config as plain values (what is saved in the run folder and in checkpoints)."""
    return dataclasses.asdict(config)


def to_yaml(config: TrainConfig) -> str:
    """The config as a YAML file (``--print-config``, the run folder's ``config.yaml``)."""
    return yaml.safe_dump(to_dict(config), sort_keys=False, allow_unicode=True)
