"""``python train.py`` / ``rummy-train``: the trainer's command line (docs/training.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

import yaml

from .config import ConfigError, add_arguments, fields, find_recipe, load_yaml, make_config, to_dict

IMMUTABLE_ON_RESUME = ("game", "num_players", "network", "channels", "global_size", "mlp_hidden", "seed")


def program_name() -> str:
    """``rummy-train`` when run as the console script, else ``train.py``."""
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    return name if name.startswith("rummy-") else "train.py"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name(),
        description="Self-play PPO for Indian Rummy, Basic Rummy and Indiai römi: clone the rule agent, then "
                    "improve by PPO against a pool of past selves, the rule agent and random, with "
                    "potential-based reward shaping. With no arguments: Indian Rummy, 2 players, 11-15 "
                    "minutes on 2 cores. Rule ids (I5, R4 ...) refer to docs/rules.md.",
        epilog="Examples:  python train.py --config romi-2p --seed 3  |  "
               "python train.py --game basic --total-steps 200000  |  python train.py --resume runs/NAME  |  "
               "tensorboard --logdir runs")
    parser.add_argument("--config", metavar="RECIPE",
                        help="a recipe: a YAML file of fields, or the name of one in configs/ (indian-2p, "
                             "basic-4p ...); options below override it")
    parser.add_argument("--print-config", action="store_true",
                        help="print the resolved settings as YAML and exit")
    parser.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR from its checkpoint.pt "
                        "(its config.yaml is used; --total-steps and the like may extend it)")
    add_arguments(parser)
    return parser


def resolve(arguments: argparse.Namespace):
    """The checked config from the defaults, the config file (or the resumed run's) and the options."""
    values: dict = {}
    if arguments.resume:
        saved = Path(arguments.resume) / "config.yaml"
        if not saved.is_file():
            raise ConfigError(f"run folder {arguments.resume!r}: no config.yaml, not a training run folder")
        values = load_yaml(saved)
    if arguments.config:
        if arguments.resume:
            raise ConfigError("--config and --resume together: a resumed run keeps its own config.yaml")
        values = load_yaml(find_recipe(arguments.config))
    source = f"config file {arguments.config!r}" if arguments.config else "config"
    config = make_config(values, source)
    overrides = {name: getattr(arguments, name) for name in fields() if getattr(arguments, name) is not None}
    if arguments.resume:
        changed = [n for n in overrides if n in IMMUTABLE_ON_RESUME and str(overrides[n]) != str(getattr(config, n))]
        if changed:
            raise ConfigError(f"--resume: field {changed[0]!r} cannot change in a resumed run")
    merged = {name: getattr(config, name) for name in fields()} | overrides
    return make_config(merged, "command line")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    arguments = parser.parse_args(argv)
    try:
        config = resolve(arguments)
    except ConfigError as error:
        parser.error(str(error))
    if arguments.print_config:
        print(yaml.safe_dump(to_dict(config), sort_keys=False, allow_unicode=True), end="")
        return 0
    from agents.policy import CheckpointError

    from .interrupts import Terminated
    from .trainer import train

    try:
        train(config, resume=arguments.resume)
    except CheckpointError as error:
        print(f"train.py: error: {error}", file=sys.stderr)
        return 2
    except Terminated:
        return 143  # 128 + SIGTERM, as a shell reports it
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
