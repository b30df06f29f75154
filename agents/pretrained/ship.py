"""Turn a trainer run's best checkpoint into a shipped pretrained policy and its model card.

    python -m agents.pretrained.ship runs/indian/best.pt --hands 2000 --workers 2
    python -m agents.pretrained.ship runs/indian-6p          # a run folder: its best.pt

Steps: export the checkpoint to ONNX (``agents.export``, checked against torch within 1e-5);
play the exported policy at a full table of the checkpoint's size N, in one seat against N − 1
copies of each member of the game's evaluation panel (``agents.panel``: random, the rule agent,
``rule:hold_until=3`` in Basic and römi, **the policy this one replaces** where ``--dest`` holds
one, and at 2 players the search agent on ``--search-hands``), over ``--hands`` duplicate-dealt
hands each (every rotation of each deal: the policy holds every seat in turn); write
``agents/pretrained/<game>-<N>p.onnx`` and ``<game>-<N>p.json`` (the export metadata plus a
``model_card``: the trainer config, the network, the CPU time of training, and the table
results: win rate, share of decided hands against the fair share 1/N, points per hand with 95%
intervals, and the rating). Nothing is written there unless every step succeeds.

    python -m agents.pretrained.ship --recard agents/pretrained/basic-2p.onnx

plays an installed policy on today's panel again and rewrites its card's table results (the
rest of the card stays; a policy shipped before the card held the panel gets it this way).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from ..base import AgentError
from ..panel import is_search, panel
from . import CARD_FORMAT, PRETRAINED_DIR, policy_name

CPU_TIME_KEYS = ("cpu_seconds", "cpu_seconds_main_process", "cpu_time_s")
"""Where a run records its CPU time: the trainer's ``results.json`` beside the checkpoint, or the
checkpoint's config (the first key found is used)."""
PREVIOUS = "previous"
"""The card's name for the policy a new one replaces (its file is gone once replaced)."""
SEARCH_HANDS = 50


def resolve_checkpoint(path: str | os.PathLike) -> Path:
    """A checkpoint file, or a run folder's ``best.pt``."""
    source = Path(path)
    if source.is_dir():
        best = source / "best.pt"
        if not best.is_file():
            raise AgentError(f"run folder {str(source)!r} holds no best.pt")
        return best
    return source


def run_results(checkpoint: Path) -> dict:
    """The trainer's ``results.json`` beside ``checkpoint`` ({} when there is none or it is not JSON)."""
    path = checkpoint.parent / "results.json"
    try:
        results = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return results if isinstance(results, dict) else {}


def cpu_time(meta: dict, results: dict, given: float | None) -> tuple[float | None, str]:
    """(CPU seconds of the run, where the figure came from): ``given``, else results.json, else the config."""
    if given is not None:
        return float(given), "given on the command line"
    for where, values in (("results.json", results), ("checkpoint config", meta.get("config") or {})):
        for key in CPU_TIME_KEYS:
            if isinstance(values.get(key), (int, float)):
                return float(values[key]), f"{where}: {key}"
    return None, "not recorded"


def card_opponents(game: str, num_players: int, previous: Path | None) -> list[tuple[str, str]]:
    """(name on the card, agent spec) of the panel the card reports: ``agents.panel``'s members, with
    the shipped policy replaced by ``previous`` (the file the new policy replaces; left out if none)."""
    opponents = [(spec, spec) for spec in panel(game, num_players) if spec != f"pretrained:{game}"]
    if previous is not None:
        search = [i for i, (spec, _) in enumerate(opponents) if is_search(spec)]
        opponents.insert(search[0] if search else len(opponents), (PREVIOUS, f"onnx:{previous}"))
    return opponents


def previous_card(previous: Path | None) -> dict | None:
    """What the card says of the policy replaced: when it was shipped and from which run."""
    if previous is None:
        return None
    from ..export import metadata_path

    try:
        card = json.loads(metadata_path(previous).read_text()).get("model_card") or {}
    except (OSError, ValueError):
        card = {}
    config = card.get("trainer_config") or {}
    return {"file": previous.name, "shipped": card.get("shipped"), "run_dir": config.get("run_dir"),
            "summary": card.get("summary")}


def arena_result(onnx_path: Path, game: str, num_players: int, opponent: tuple[str, str], hands: int, seed: int,
                 workers: int) -> dict:
    """The exported policy in one seat against ``num_players`` − 1 agents ``opponent`` (name, spec), on
    duplicate deals (a mixed table, every rotation): its row of the arena summary. The row's command
    replays it with the installed file (none for the policy it replaces: that file is gone)."""
    from ..arena import ROW_FIGURES, one_against_many

    name, spec = opponent
    row = one_against_many(f"onnx:{onnx_path}", spec, game, num_players, hands, seed, workers)
    seats = " ".join((f"pretrained:{game}",) + (name,) * (num_players - 1))
    command = (None if name == PREVIOUS else
               f"python -m agents.arena --game {game} --agents {seats} --table --hands {hands} --seed {seed}")
    return {"opponent": name, "opponents": num_players - 1, "num_players": num_players, "hands": row["units"],
            "seed": seed, "command": command, **{k: row[k] for k in ROW_FIGURES}}


def panel_results(model: Path, game: str, num_players: int, previous: Path | None, hands: int, search_hands: int,
                  seed: int, workers: int) -> list[dict]:
    """The card's rows: ``model`` against each of ``card_opponents``, the search agent on ``search_hands``
    hands (left out when 0), the others on ``hands``."""
    return [arena_result(model, game, num_players, opponent, search_hands if is_search(opponent[1]) else hands,
                         seed, workers)
            for opponent in card_opponents(game, num_players, previous) if search_hands or not is_search(opponent[1])]


def ship(checkpoint: str | os.PathLike, hands: int = 2000, workers: int = 1, seed: int = 0,
         cpu_seconds: float | None = None, dest: str | os.PathLike = PRETRAINED_DIR,
         tolerance: float | None = None, search_hands: int = SEARCH_HANDS) -> tuple[Path, Path]:
    """Export, evaluate on the panel and install ``checkpoint`` as ``dest/<game>-<N>p.onnx`` + ``.json``
    (N: its players); the search agent plays ``search_hands`` hands (none when 0)."""
    from ..export import TOLERANCE, export_policy, metadata_path
    from ..policy import load_checkpoint

    source = resolve_checkpoint(checkpoint)
    _, meta = load_checkpoint(source)
    game, players = meta["game"], int(meta["num_players"])
    name = policy_name(game, players)
    results_json = run_results(source)
    cpu_seconds_used, cpu_source = cpu_time(meta, results_json, cpu_seconds)
    replaced = Path(dest) / f"{name}.onnx"
    previous = replaced if replaced.is_file() else None
    with tempfile.TemporaryDirectory(prefix="ship-") as work:
        model, metadata_file = export_policy(source, "onnx", Path(work) / f"{name}.onnx",
                                                tolerance=TOLERANCE if tolerance is None else tolerance)
        results = panel_results(model, game, players, previous, hands, search_hands, seed, workers)
        metadata = json.loads(metadata_file.read_text())
        metadata["model_card"] = {
            "format": CARD_FORMAT,
            "game": game,
            "num_players": players,
            "checkpoint": source.name,
            "shipped": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "network": meta.get("model"),
            "trainer_config": meta.get("config"),
            "recipe": _recipe_name(meta.get("config") or {}),
            "cpu_time_s": cpu_seconds_used,
            "cpu_time_source": cpu_source,
            "wall_time_s": results_json.get("wall_seconds"),
            "env_steps": results_json.get("env_steps"),
            "arena": results,
            "replaces": previous_card(previous),
            "summary": [summary_line(row) for row in results],
            "play": f"python -m rummy_apps.play --game {game} --players {players} --opponents pretrained:{game}",
        }
        metadata_file.write_text(json.dumps(metadata, indent=1) + "\n")
        target = Path(dest)
        target.mkdir(parents=True, exist_ok=True)
        installed = target / f"{name}.onnx"
        shutil.copyfile(model, installed)
        card = metadata_path(installed)
        shutil.copyfile(metadata_file, card)
    return installed, card


def recard(model: str | os.PathLike, hands: int = 2000, workers: int = 1, seed: int = 0,
           search_hands: int = SEARCH_HANDS) -> Path:
    """Play the installed policy ``model`` (``GAME-Np.onnx``) on the panel again and rewrite its card's
    ``arena`` and ``summary`` in place (atomically); the card's other fields stay. Returns the card."""
    from ..export import metadata_path

    model = Path(model)
    card_file = metadata_path(model)
    try:
        metadata = json.loads(card_file.read_text())
        card = metadata["model_card"]
        game, players = metadata["game"], int(metadata["num_players"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise AgentError(f"--recard {str(model)!r}: no readable model card at {str(card_file)!r} ({error})") from None
    if not model.is_file():
        raise AgentError(f"--recard {str(model)!r}: no such policy file")
    results = panel_results(model, game, players, None, hands, search_hands, seed, workers)
    card.update(arena=results, summary=[summary_line(row) for row in results],
                panel_played=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    card.setdefault("replaces", None)
    with tempfile.NamedTemporaryFile("w", dir=card_file.parent, suffix=".json", delete=False) as out:
        out.write(json.dumps(metadata, indent=1) + "\n")
    os.replace(out.name, card_file)
    return card_file


def _recipe_name(settings: dict) -> str | None:
    """The card's ``recipe``: the file in ``configs/`` the run's settings resolve from, if any."""
    from ..training.config import CONFIGS, recipe_of

    recipe = recipe_of(settings)
    return None if recipe is None else str(recipe.relative_to(CONFIGS.parent))


def summary_line(row: dict) -> str:
    """One table result in words, with its 95% intervals (``agents.stats`` formats)."""
    from ..stats import percent_text, points_text

    players = row.get("num_players", 2)
    name = "the policy it replaces" if row["opponent"] == PREVIOUS else row["opponent"]
    against = name if players == 2 else f"{players - 1} x {name} ({players} seats)"
    text = (f"against {against}: won {percent_text(row['win_rate'], row['win_rate_low'], row['win_rate_high'])} "
            f"of {row['hands']} hands")
    if "share" in row:
        text += (f", {percent_text(row['share'], row['share_low'], row['share_high'])} of the "
                 f"{row['decided']} decided (fair share {100 * row['fair_share']:.1f}%)")
    return text + f", {points_text(row['mean_points'], row['points_low'], row['points_high'])} points per hand"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m agents.pretrained.ship",
        description="Export a trainer run's best checkpoint as the shipped pretrained policy of its game and "
                    "table size N (agents/pretrained/<game>-<N>p.onnx) with a model card (<game>-<N>p.json): "
                    "trainer config, CPU time, and its results in one seat against N-1 copies of each member of "
                    "the game's evaluation panel (random, rule, rule:hold_until=3 in Basic and romi, the policy "
                    "it replaces, and at 2 players the search agent) on duplicate deals (win rate, share of "
                    "decided hands against 1/N, points per hand, with 95% intervals).",
        epilog="Example: python -m agents.pretrained.ship runs/indian/best.pt --hands 2000 --workers 2",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("checkpoint", help="the run's best checkpoint (agents.policy), or its run folder; with "
                                           "--recard, an installed policy (GAME-Np.onnx)")
    parser.add_argument("--recard", action="store_true",
                        help="play the installed policy CHECKPOINT names on the panel again and rewrite its card's "
                             "table results (nothing else changes)")
    parser.add_argument("--hands", type=int, default=2000,
                        help="arena hands against each opponent, rounded up to whole deals (default 2000)")
    parser.add_argument("--workers", type=int, default=1, help="arena processes (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="arena seed (default 0)")
    parser.add_argument("--cpu-time", type=float, metavar="SECONDS",
                        help="CPU seconds the training took (default: read from the checkpoint's config)")
    parser.add_argument("--search-hands", type=int, default=SEARCH_HANDS,
                        help=f"hands against the search agent at 2 players (it is slow; 0 leaves it out; "
                             f"default {SEARCH_HANDS})")
    parser.add_argument("--dest", default=str(PRETRAINED_DIR),
                        help="where to install (default: the package); a policy there for the same game and "
                             "table is played as 'previous' before it is replaced")
    parser.add_argument("--tolerance", type=float, default=None,
                        help="largest difference from torch allowed in the export check (default 1e-05; "
                             "python -m agents.export --help)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.hands < 1 or args.workers < 1:
        parser.error("--hands and --workers must be at least 1")
    if args.search_hands < 0:
        parser.error(f"--search-hands must be 0 or more, not {args.search_hands}")
    try:
        if args.recard:
            installed = Path(args.checkpoint)
            card = recard(installed, args.hands, args.workers, args.seed, args.search_hands)
        else:
            installed, card = ship(args.checkpoint, args.hands, args.workers, args.seed, args.cpu_time, args.dest,
                                   args.tolerance, args.search_hands)
    except AgentError as error:
        parser.exit(2, f"ship: error: {error}\n")
    for line in json.loads(card.read_text())["model_card"]["summary"]:
        print(line)
    print(f"{'played the panel again for' if args.recard else 'installed'} {installed} and {card}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
