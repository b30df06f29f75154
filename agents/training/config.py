"""The trainer's settings: one dataclass, the single source of every field, default and doc.

``TrainConfig`` is read from a YAML file (``--config``), then overridden field by field on the
command line (``--field-name value``); ``--help`` lists every field with its doc, generated from
the ``help`` metadata below. Every value is checked before training starts: an unknown or
mistyped field, a value of the wrong type or out of range is a ``ConfigError`` naming the field.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rummy_env.ruleset import GAMES, make_ruleset
from rummy_env.compiled.vector import COMPILED_GAMES
from rummy_env.vector import BACKENDS


class ConfigError(ValueError):
    """A config field that is unknown, of the wrong type or out of range; the message names it."""


POTENTIALS = ("deadwood", "payment")
"""What a seat's shaping potential counts (``shaping_potential``): ``deadwood``, the hand's least
penalty by the exact solver (Indian: I7; Basic and römi: the least deadwood); ``payment``, what
the seat would pay if another player went out now (Indian: I7 as well; Basic: every card in
hand, B5; römi: every card in hand, or the flat penalty while the seat has laid no meld, R7)."""
ORACLE_REVEALS = ("decision", "card")
"""What oracle guiding's share counts (``oracle_reveal``): whole hands on a share of the
decisions (``decision``) or each hidden card by itself (``card``)."""


def _f(default, help: str, **checks):
    """A config field with its one-line doc and its range checks (a list default is copied per instance)."""
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata={"help": help, **checks})
    return field(default=default, metadata={"help": help, **checks})


@dataclass
class TrainConfig:
    """Self-play PPO with a cloning warm start, reward shaping and an opponent pool (docs/training.md)."""

    # --- the game
    game: str = _f("indian", "the game: indian, basic or romi (docs/rules.md)", choices=GAMES)
    num_players: int = _f(2, "players at the table (Indian 2-6, Basic and römi 2-4)", low=2, high=6)
    # --- the run
    seed: int = _f(1, "seed of the deals, the networks and every sampler (same seed, same run on CPU)", low=0)
    run_dir: str = _f("", "folder of the run (TensorBoard logs, checkpoints, plots); empty: runs/GAME_Np_sSEED_TIME")
    total_steps: int = _f(4_000_000, "learner decisions to train on with PPO (after cloning; the learning rate "
                          "anneals over them)", low=0)
    time_limit_minutes: float = _f(0.0, "stop PPO after this many minutes of wall time (0: no limit)", low=0.0)
    cpu_limit_minutes: float = _f(0.0, "stop PPO once every process of the run together has used this many CPU "
                                  "minutes, cloning included (0: no limit; 120 is one hour of 2 cores)", low=0.0)
    num_envs: int = _f(256, "hands stepped together in each collecting process", low=1)
    num_workers: int = _f(2, "collecting processes (0: collect in the training process)", low=0, high=64)
    backend: str = _f("auto", "engine of the collecting loop (rummy_env.vector): auto is numba for every game "
                      "(Indian Rummy, Basic Rummy, römi); python is the reference engine", choices=("auto", *BACKENDS))
    torch_threads: int = _f(1, "torch threads per collecting process, which also learns (1 is fastest with one "
                            "process per core)", low=1)
    learner_threads: int = _f(1, "torch threads of the training process (it learns itself only with "
                              "num_workers 0 or a GPU learner)", low=1)
    device: str = _f("auto", "where the learner runs: auto (a GPU when torch sees one, else the CPU), cpu, or cuda "
                     "(an error without a GPU); on the CPU the collecting processes learn (DD-PPO)",
                     choices=("auto", "cpu", "cuda"))
    progress: bool = _f(True, "show a progress bar")
    # --- the network
    network: str = _f("card", "card: per-card features shared across cards; mlp: a plain MLP", choices=("card", "mlp"))
    channels: int = _f(32, "card network: features per card", low=4)
    global_size: int = _f(128, "card network: size of the global summary", low=8)
    card_layout: int = _f(2, "card network: layout 2 (own features, narrow neighbour reads, a card embedding) or "
                          "1 (the first layout; agents/networks.py)", choices=(1, 2))
    card_rank: int = _f(8, "card network, layout 2: features each card reads from each neighbour", low=1)
    card_layers: int = _f(2, "card network, layout 2: mixing layers (each card reads its run and set neighbours; "
                          "more layers reach further along a suit)", low=2, high=8)
    solver_plane: bool = _f(False, "card network, layout 2: also read the solver plane (the cards the hand's best "
                            "arrangement leaves outside melds, agents.solver_planes)")
    mlp_hidden: list = _f([256, 256], "mlp network: hidden layer sizes")
    # --- PPO (CleanRL's names)
    rollout_size: int = _f(8192, "learner decisions collected per update (all processes together)", low=64)
    learning_rate: float = _f(3e-4, "Adam step size of PPO", low=1e-7, high=1.0)
    anneal_lr: bool = _f(True, "decay the PPO learning rate linearly to 0")
    gamma: float = _f(0.995, "discount per decision of the same seat", low=0.0, high=1.0)
    gae_lambda: float = _f(0.95, "GAE lambda", low=0.0, high=1.0)
    update_epochs: int = _f(1, "passes over each rollout (fresh decisions are cheap: one pass learns most per "
                            "CPU-second)", low=1)
    minibatch_size: int = _f(512, "samples per gradient step (all processes together)", low=8)
    clip_coef: float = _f(0.2, "PPO ratio clip", low=0.0, high=10.0)
    clip_value: bool = _f(False, "clip the value loss as well (PPO2 style)")
    ent_coef: float = _f(0.005, "entropy bonus (entropy over legal actions only)", low=0.0)
    vf_coef: float = _f(0.5, "value loss weight", low=0.0)
    max_grad_norm: float = _f(0.5, "gradient norm clip", low=0.0)
    target_kl: float = _f(0.03, "stop an update's epochs once the approximate KL passes this (0: never)", low=0.0)
    reward_scale: float = _f(0.01, "points to reward units (a 100-point hand is a reward of 1)", low=1e-9, high=1e3)
    win_bonus: float = _f(1.0, "reward units the winner of a hand gets on top of its points, taken in equal shares "
                          "from the other seats (zero-sum; 0: points alone; 1 is about a typical hand's points, "
                          "docs/training.md)", low=0.0)
    critic: str = _f("observation", "what the advantages' values come from: observation (the policy's own value head) "
                     "or oracle (a critic that also sees the other hands, for training only; docs/training.md)",
                     choices=("observation", "oracle"))
    oracle_decisions: int = _f(0, "oracle guiding: the learner's observations also show the other seats' hands "
                               "(in their known-cards rows) at first, on a share of its decisions that falls "
                               "linearly from all to none over this many PPO decisions; evaluation and play never "
                               "see them (0: off; docs/training.md)", low=0)
    oracle_reveal: str = _f("decision", "what oracle guiding's share counts: decision (a share of the decisions "
                            "see the other hands whole) or card (every decision sees each hidden card of the "
                            "other hands with that chance, as Suphx drops its oracle features; docs/training.md)",
                            choices=ORACLE_REVEALS)
    # --- getting past the sparse reward
    shaping: bool = _f(True, "potential-based shaping from the hand's penalty by the exact solver")
    shaping_potential: str = _f("deadwood", "what the potential counts: deadwood (the solver's least penalty) or "
                                "payment (what the seat would pay now: B5, R7; Indian: the same as deadwood)",
                                choices=POTENTIALS)
    shaping_coef: float = _f(1.0, "weight of the shaping potential (in reward units per point)", low=0.0)
    bc_warm_start: bool = _f(True, "clone a teacher's moves before PPO")
    bc_teacher: str = _f("rule", "the teacher, an agent spec (docs/agents.md): rule, search, or one with settings "
                         "such as rule:hold_until=3 (Basic, römi: keeps melds in hand; it beats the default rule "
                         "agent)")
    bc_decisions: int = _f(100_000, "teacher decisions recorded for cloning", low=100)
    bc_epochs: int = _f(8, "passes over the cloning data", low=1)
    bc_learning_rate: float = _f(1e-3, "Adam step size of cloning", low=1e-7, high=1.0)
    bc_batch_size: int = _f(512, "samples per cloning step", low=8)
    bc_holdout: float = _f(0.1, "share of the cloning data held out to measure agreement", low=0.01, high=0.5)
    bc_dagger_rounds: int = _f(0, "DAgger rounds after cloning: the clone plays (round r: a share 1 - 1/2^r of the "
                               "moves), the teacher labels the positions, and the clone trains again on all of it",
                               low=0)
    bc_dagger_decisions: int = _f(50_000, "teacher-labelled decisions recorded in each DAgger round", low=100)
    value_warmup_updates: int = _f(2, "first PPO updates that train the value head alone (every other weight, "
                                   "so every policy output, stays as cloned)", low=0)
    # --- expert iteration: the policy learns the moves a search with itself prefers (docs/training.md)
    expert_every: int = _f(0, "updates between searches of the learner's own positions (0: no expert iteration)",
                           low=0)
    expert_positions: int = _f(256, "positions of the last rollout searched each time (all processes together)",
                               low=1)
    expert_search: str = _f("worlds=8,candidates=3", "the search's budget: settings of search:policy=... "
                            "(docs/agents.md, Search with a policy), without the policy")
    expert_worlds: str = _f("true", "the worlds the search plays its rollouts in: true (the hand's true hands, the "
                            "stock reshuffled, and the opponent it was dealt against: exact samples of what the "
                            "learner cannot see) or observation (guessed from the observation alone, as the "
                            "search:policy= agent guesses at play time); docs/training.md",
                            choices=("true", "observation"))
    expert_target: str = _f("gain", "what the policy learns from a searched position: gain (the policy gradient "
                            "over every searched candidate, by its searched value: unbiased with the true worlds) or "
                            "move (the cross-entropy to the move the search chose, classic expert iteration; with "
                            "the true worlds it copies choices made knowing the hidden cards)",
                            choices=("gain", "move"))
    expert_coef: float = _f(1.0, "weight of the expert loss (expert_target) in every PPO minibatch", low=0.0)
    expert_buffer: int = _f(4096, "searched positions kept for learning (all processes together; the oldest leave "
                            "first)", low=1)
    # --- the opponent pool
    pool_self_fraction: float = _f(0.2, "share of hands the learner plays against itself (all seats learn)",
                                   low=0.0, high=1.0)
    pool_rule_min: float = _f(0.4, "least share of the other hands against the rule agent", low=0.0, high=1.0)
    pool_shared_seats: float = _f(0.0, "at a table of 3 or more: the chance that each other seat of a hand against a "
                                  "pool opponent is the learner's too (a mixed table: the learner's copies and "
                                  "the opponent share it; one seat stays the opponent's); 0: one learner seat",
                                  low=0.0, high=0.95)
    pool_random: bool = _f(True, "keep the random agent in the pool")
    pool_opponents: list = _f([], "more fixed opponents in the pool, agent specs (docs/agents.md), e.g. "
                              "pretrained:basic or rule:hold_until=3; drawn by PFSP like the snapshots")
    pool_snapshot_every: int = _f(25, "updates between snapshots of the learner added to the pool (0: none)", low=0)
    pool_max_snapshots: int = _f(4, "snapshots kept (the oldest leaves first)", low=0)
    pfsp_power: float = _f(2.0, "prioritised fictitious self-play: opponent weight (1 - win rate) ** power", low=0.0)
    # --- evaluation and checkpoints
    eval_every: int = _f(100, "updates between evaluations (0: only at the end)", low=0)
    eval_deals: int = _f(100, "duplicate deals per opponent at each evaluation (2 hands each for 2 players)", low=1)
    final_eval_deals: int = _f(1000, "duplicate deals per opponent in the final evaluation (1,000 deals: 2,000 "
                                "hands at 2 players, about ±2 points of win rate)", low=1)
    eval_opponents: list = _f(["panel"], "agent specs to evaluate against; panel is the game's fixed panel "
                              "(docs/training.md, Evaluation panel); best.pt is chosen on them")
    eval_search_deals: int = _f(4, "duplicate deals against the panel's search agent at each evaluation (it is slow)",
                                low=0)
    final_eval_search_deals: int = _f(25, "duplicate deals against the panel's search agent in the final evaluation",
                                      low=0)
    checkpoint_every: int = _f(20, "updates between checkpoints (and on Ctrl-C)", low=1)


def fields() -> dict[str, dataclasses.Field]:
    """Field name -> dataclass field, in the dataclass's order."""
    return {f.name: f for f in dataclasses.fields(TrainConfig)}


def _type_of(name: str) -> type:
    default = TrainConfig()
    return type(getattr(default, name))


def coerce(name: str, value: Any, source: str = "config") -> Any:
    """``value`` as field ``name``'s type; a wrong type or an out-of-range value names the field."""
    known = fields()
    if name not in known:
        close = difflib.get_close_matches(name, list(known), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"{source}: unknown field {name!r}{hint}; see --help for the fields")
    meta = known[name].metadata
    kind = _type_of(name)
    where = f"{source}: field {name!r}"
    if kind is bool:
        if isinstance(value, str) and value.lower() in ("true", "1", "yes", "on", "false", "0", "no", "off"):
            value = value.lower() in ("true", "1", "yes", "on")
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: {value!r} is not true or false")
    elif kind is int:
        if isinstance(value, str):
            try:
                value = int(value.replace("_", ""))
            except ValueError:
                raise ConfigError(f"{where}: {value!r} is not an integer") from None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: {value!r} is not an integer")
    elif kind is float:
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise ConfigError(f"{where}: {value!r} is not a number") from None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ConfigError(f"{where}: {value!r} is not a finite number")
        value = float(value)
    elif kind is str:
        if not isinstance(value, str):
            raise ConfigError(f"{where}: {value!r} is not a string")
    elif kind is list:
        if isinstance(value, str):
            value = [v for v in value.replace(",", " ").split() if v]
        if not isinstance(value, list):
            raise ConfigError(f"{where}: {value!r} is not a list")
        if name == "mlp_hidden":
            value = [coerce_item(where, v) for v in value]
        elif not all(isinstance(v, str) and v for v in value):
            raise ConfigError(f"{where}: {value!r}: expected a list of agent specs")
    if "choices" in meta and value not in meta["choices"]:
        raise ConfigError(f"{where}: {value!r}: expected one of {', '.join(map(str, meta['choices']))}")
    if "low" in meta and value < meta["low"]:
        raise ConfigError(f"{where}: {value!r} is out of range: expected >= {meta['low']}")
    if "high" in meta and value > meta["high"]:
        raise ConfigError(f"{where}: {value!r} is out of range: expected <= {meta['high']}")
    return value


def coerce_item(where: str, value: Any) -> int:
    """One hidden-layer size: a positive int."""
    try:
        size = int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: layer size {value!r} is not an integer") from None
    if isinstance(value, bool) or size < 1 or (isinstance(value, float) and not value.is_integer()):
        raise ConfigError(f"{where}: layer size {value!r}: expected an integer >= 1")
    return size


def validate(config: TrainConfig) -> TrainConfig:
    """Check every field and the fields together; returns ``config``."""
    for name in fields():
        setattr(config, name, coerce(name, getattr(config, name)))
    try:
        make_ruleset(config.game, config.num_players)
    except ValueError as error:
        raise ConfigError(f"config: fields 'game' and 'num_players': {error}") from None
    if config.backend == "numba" and config.game not in COMPILED_GAMES:
        raise ConfigError(f"config: field 'backend': 'numba' plays {' and '.join(COMPILED_GAMES)} only, "
                          f"not {config.game!r} (use auto or python)")
    if config.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise ConfigError("config: field 'device': 'cuda', but torch sees no GPU (torch.cuda.is_available() "
                              "is False: no NVIDIA GPU here, or a CPU build of torch); use auto or cpu")
    if config.solver_plane and (config.network != "card" or config.card_layout != 2):
        raise ConfigError("config: field 'solver_plane' needs the card network with card_layout 2 "
                          f"(network is {config.network!r}, card_layout {config.card_layout})")
    if config.card_layers != 2 and (config.network != "card" or config.card_layout != 2):
        raise ConfigError("config: field 'card_layers' needs the card network with card_layout 2 "
                          f"(network is {config.network!r}, card_layout {config.card_layout})")
    if config.minibatch_size < max(1, config.num_workers):
        raise ConfigError(f"config: field 'minibatch_size' ({config.minibatch_size}) is smaller than "
                          f"'num_workers' ({config.num_workers}): each process takes a share of every minibatch")
    updates = math.ceil(config.total_steps / config.rollout_size)
    if config.pool_snapshot_every and config.pool_max_snapshots > max(updates, 1):
        raise ConfigError(f"config: field 'pool_max_snapshots' ({config.pool_max_snapshots}) is more than the run's "
                          f"{updates} PPO updates ('total_steps' / 'rollout_size'): at most one snapshot is taken "
                          "per update, so the pool could never hold them")
    if config.pool_shared_seats and config.num_players < 3:
        raise ConfigError(f"config: field 'pool_shared_seats' ({config.pool_shared_seats}) needs a table of 3 or more "
                          f"('num_players' is {config.num_players}: the one other seat is the opponent's)")
    if config.bc_dagger_rounds and not config.bc_warm_start:
        raise ConfigError(f"config: field 'bc_dagger_rounds' ({config.bc_dagger_rounds}) needs a clone to play: "
                          "'bc_warm_start' is false")
    if config.oracle_decisions and config.expert_every:
        raise ConfigError(f"config: field 'oracle_decisions' ({config.oracle_decisions}) cannot go with "
                          f"'expert_every' ({config.expert_every}): the search would read the revealed hands")
    if config.oracle_reveal != "decision" and not config.oracle_decisions:
        raise ConfigError(f"config: field 'oracle_reveal' ({config.oracle_reveal!r}) needs oracle guiding: "
                          "'oracle_decisions' is 0")
    if config.minibatch_size > config.rollout_size:
        raise ConfigError(f"config: field 'minibatch_size' ({config.minibatch_size}) is larger than "
                          f"'rollout_size' ({config.rollout_size})")
    from agents.base import AgentError
    from agents.registry import make_agent

    from .evaluate import expand

    opponents = expand(config.eval_opponents, config.game, config.num_players)
    from agents.policy_search import budget_from_settings

    try:
        budget_from_settings(config.expert_search)
    except AgentError as error:
        raise ConfigError(f"config: field 'expert_search': {error}") from None
    from .pool import fixed_entries

    entries = ["self", *fixed_entries(config.pool_random, tuple(config.pool_opponents))]
    for spec in config.pool_opponents:
        if entries.count(spec) > 1:
            raise ConfigError(f"config: field 'pool_opponents': {spec!r} is in the pool already")
    for name, specs in (("bc_teacher", [config.bc_teacher]), ("eval_opponents", opponents),
                        ("pool_opponents", config.pool_opponents)):
        for spec in specs:
            try:
                make_agent(spec, config.game, config.num_players)
            except AgentError as error:
                raise ConfigError(f"config: field {name!r}: {error}") from None
    return config


def resolve_device(config: TrainConfig):
    """The ``torch.device`` the learner runs on (``device``, with auto resolved)."""
    import torch

    if config.device == "cpu" or (config.device == "auto" and not torch.cuda.is_available()):
        return torch.device("cpu")
    return torch.device("cuda")


CONFIGS = Path(__file__).resolve().parents[2] / "configs"
"""The recipes: one YAML file per shipped policy, and the default run's (``configs/``)."""


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


def make_config(values: dict | None = None, source: str = "config") -> TrainConfig:
    """A checked ``TrainConfig`` from ``values`` (defaults for the fields left out)."""
    config = TrainConfig()
    for name, value in (values or {}).items():
        key = name.replace("-", "_")
        setattr(config, key, coerce(key, value, source))
    return validate(config)


def default_run_dir(config: TrainConfig) -> str:
    """runs/GAME_Np_sSEED_TIME (CleanRL names runs env__exp__seed__time)."""
    return f"runs/{config.game}_{config.num_players}p_s{config.seed}_{time.strftime('%Y%m%d-%H%M%S')}"


def to_dict(config: TrainConfig) -> dict:
    """The config as plain values (what is saved in the run folder and in checkpoints)."""
    return dataclasses.asdict(config)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """One ``--field-name`` option per field, documented from the dataclass; values are checked later."""
    group = parser.add_argument_group("training fields (defaults shown; a --config file sets them first)")
    default = TrainConfig()
    for name, spec in fields().items():
        value = getattr(default, name)
        if isinstance(value, bool):
            shown, metavar = str(value).lower(), "{true,false}"
        elif isinstance(value, list):
            shown, metavar = " ".join(map(str, value)), "V"
        else:
            shown, metavar = value, ("{" + ",".join(map(str, spec.metadata["choices"])) + "}"
                                     if "choices" in spec.metadata else type(value).__name__.upper())
        default_text = f" (default: {shown})" if shown != "" else ""
        help_text = f"{spec.metadata['help']}{default_text}".replace("%", "%%")
        flag = "--" + name.replace("_", "-")
        if isinstance(value, list):
            group.add_argument(flag, dest=name, nargs="+", default=None, metavar=metavar, help=help_text)
        else:
            group.add_argument(flag, dest=name, default=None, metavar=metavar, help=help_text)


def render_yaml(values: dict, header: str) -> str:
    """A config file: ``header``, then every field with its doc as a comment (``values`` override defaults)."""
    config = make_config(values)
    lines = [f"# {line}" if line else "#" for line in header.splitlines()] + [""]
    for name, spec in fields().items():
        value = getattr(config, name)
        lines.append(f"# {spec.metadata['help']}")
        lines.append(f"{name}: {json.dumps(value, ensure_ascii=False)}")
    return "\n".join(lines) + "\n"


def vector_backend(config: dict | TrainConfig) -> str:
    """The ``rummy_env.vector`` backend a run collects with (``backend``, ``auto`` resolved)."""
    get = config.get if isinstance(config, dict) else lambda name: getattr(config, name)
    backend = get("backend") or "auto"
    if backend == "auto":
        return "numba" if get("game") in COMPILED_GAMES else "python"
    return backend
