"""``python train.py`` / ``rummy-train``: the trainer's command line (docs/training.md).

tyro turns ``TrainConfig``'s fields into the options; ``--config``, ``--resume`` and
``--print-config`` are read first, since they decide the values the options start from.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

import tyro

from .config import ConfigError, TrainConfig, find_recipe, load_yaml, make_config, to_yaml, validate

IMMUTABLE_ON_RESUME = ("game", "num_players", "network", "channels", "global_size", "mlp_hidden", "seed")


def program_name() -> str:
    """``rummy-train`` when run as the console script, else ``train.py``."""
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    return name if name.startswith("rummy-") else "train.py"


def starting_point(recipe: str | None, resume: str | None) -> TrainConfig:
    """The values the options override: a recipe's, a resumed run's own, or the defaults."""
    if recipe and resume:
        raise ConfigError("--config and --resume together: a resumed run keeps its own config.yaml")
    if resume:
        saved = Path(resume) / "config.yaml"
        if not saved.is_file():
            raise ConfigError(f"run folder {resume!r}: no config.yaml, not a training run folder")
        return make_config(load_yaml(saved), f"run folder {resume!r}")
    if recipe:
        path = find_recipe(recipe)
        return make_config(load_yaml(path), f"config file {str(path)!r}")
    return TrainConfig()


def parse(argv: Sequence[str] | None = None) -> tuple[TrainConfig, argparse.Namespace]:
    """The checked config and the ``--config``/``--resume``/``--print-config`` options; a bad value
    exits with a one-line error, a bad option with tyro's short message."""
    first = argparse.ArgumentParser(add_help=False)
    first.add_argument("--config")
    first.add_argument("--resume")
    first.add_argument("--print-config", action="store_true")
    options, rest = first.parse_known_args(argv)
    try:
        base = starting_point(options.config, options.resume)
        config = tyro.cli(TrainConfig, args=rest, default=base, prog=program_name(),
                          config=(tyro.conf.FlagConversionOff,))
        if options.resume:
            changed = [n for n in IMMUTABLE_ON_RESUME if getattr(config, n) != getattr(base, n)]
            if changed:
                raise ConfigError(f"--resume: field {changed[0]!r} cannot change in a resumed run")
        validate(config, "command line")
    except ConfigError as error:
        print(f"{program_name()}: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    return config, options


def main(argv: Sequence[str] | None = None) -> int:
    config, options = parse(argv)
    if options.print_config:
        print(to_yaml(config), end="")
        return 0
    from agents.policy import CheckpointError

    from .interrupts import Terminated
    from .trainer import train

    try:
        train(config, resume=options.resume)
    except CheckpointError as error:
        print(f"{program_name()}: error: {error}", file=sys.stderr)
        return 2
    except Terminated:
        return 143  # 128 + SIGTERM, as a shell reports it
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
