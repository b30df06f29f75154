"""The standard benchmark: one agent against the game's panel, on a fixed, versioned set of deals.

    rummy-bench rule --game indian
    rummy-bench examples/my_agent.py:GreedyAgent --game basic --players 4 --hands 1000
    rummy-bench --leaderboard bench/

**The deals.** ``BENCHMARK_DEALS_V1`` names the deal set: the arena's duplicate deals (each deal
played once per seat rotation) from the seed ``crc32("bench-v1:GAME:N")``, so that any cell can be
played again with ``python -m agents.arena ... --table --seed SEED``. Its id, printed with the
results, is ``bench-v1/GAME-Np/HANDS``; a run with more hands plays the same deals and more. These
deals are the same for everyone, forever: changing how they are made is a new version
(``BENCHMARK_DEALS_V2``), never an edit of this one.

**The panel** is ``agents.panel``'s (random, rule, ``rule:hold_until=3`` where the game lays melds
on the table, ``pretrained:GAME`` where a policy ships for N players, ``search`` at 2 players);
the members a table goes without are listed with the reason. The agent sits in one seat, the
panel member in every other (the arena's ``--table``). The search agent plays the first
``SEARCH_HANDS`` hands only: it is slow (about a second a hand on one core).

**The rating** (docs/agents.md "The standard benchmark"): Elo-scale, under the Luce choice model
(``agents.stats.choice_ratings``: a seat wins a decided hand with probability proportional to
``10 ** (rating / 400)``, Bradley-Terry at two players). The panel members, search aside, play
each other on the same deals (each pair: one in a seat, the other in every other seat); their
ratings are fitted from those hands with the rule agent at 1500, so they are the same in every
run on the deal set. The agent's rating is then the one that best explains its own hands against
them (maximum likelihood, the panel held). The search agent's hands do not enter it.

Written to ``--out`` (default ``bench/SPEC-GAME-Np/``): ``bench.md``, ``bench.csv``,
``bench.json`` and ``bench.png``; ``--record`` writes the agent's hands as game records.
``--leaderboard DIR`` merges the ``bench.json`` files under DIR into one table per deal set.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import re
import sys
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, combinations
from pathlib import Path

from rummy_env.games import GAME_SPECS
from rummy_env.records import write_records
from rummy_env.ruleset import GAMES, make_ruleset

from .arena import (MAX_DEFAULT_WORKERS, ArenaConfig, available_cores, check_config, display_names, hand_records,
                    json_safe, program_name, run_arena, summarize, total_units)
from .base import AgentError
from .panel import is_search, left_out, panel
from .registry import AGENT_NAMES
from .stats import choice_ratings, percent_text, points_text

BENCHMARK_DEALS_V1 = "bench-v1"
"""The deal set's version: part of every id and of the deals' seed. Never change it in place."""
SEARCH_HANDS = 100
"""The search agent plays the first this many hands of the deal set (fewer when the run has fewer)."""
DEFAULT_HANDS = 2000
ANCHOR = "rule"
ANCHOR_RATING = 1500.0
"""The panel's ratings are placed so that the rule agent has this one."""
FORMAT = "rummy-bench"
FILES = ("bench.md", "bench.csv", "bench.json", "bench.png")
CSV_COLUMNS = ("deal_set", "spec", "opponent", "hands", "decided", "wins", "share", "share_low", "share_high",
               "fair_share", "points", "points_low", "points_high", "rating")


@dataclass(frozen=True)
class DealSet:
    """The benchmark deals of one game and table size: the first ``hands`` of the version's deals."""

    game: str
    num_players: int
    hands: int

    @property
    def seed(self) -> int:
        """The arena seed of the deals: the same whatever the number of hands."""
        return zlib.crc32(f"{BENCHMARK_DEALS_V1}:{self.game}:{self.num_players}".encode())

    @property
    def id(self) -> str:
        return f"{BENCHMARK_DEALS_V1}/{self.game}-{self.num_players}p/{self.hands}"

    def hands_against(self, opponent: str) -> int:
        """The hands played against ``opponent``: all of them, the first ``SEARCH_HANDS`` against a search."""
        return min(self.hands, SEARCH_HANDS) if is_search(opponent) else self.hands

    def config(self, spec: str, opponent: str) -> ArenaConfig:
        """``spec`` in one seat, ``opponent`` in every other, on these deals (every rotation)."""
        return ArenaConfig(game=self.game, agents=(spec,) + (opponent,) * (self.num_players - 1),
                           hands=self.hands_against(opponent), num_players=self.num_players, seed=self.seed,
                           table=True)

    def command(self, spec: str, opponent: str) -> str:
        """The arena command that plays the same hands."""
        config = self.config(spec, opponent)
        return (f"python -m agents.arena --game {self.game} --agents {' '.join(config.agents)} --table "
                f"--hands {config.hands} --seed {self.seed}")


def deal_set(game: str, num_players: int, hands: int) -> DealSet:
    """The deal set of ``hands`` hands (rounded up to whole deals), or an ``AgentError`` naming bad input."""
    if game not in GAMES:
        raise AgentError(f"unknown game {game!r}: expected one of {', '.join(GAME_SPECS)}")
    try:
        make_ruleset(game, num_players)
    except ValueError as error:
        raise AgentError(str(error)) from None
    if hands < 1:
        raise AgentError(f"--hands {hands}: expected at least 1")
    return DealSet(game, num_players, -(-hands // num_players) * num_players)


# ----------------------------------------------------------------------------- playing


def bench(spec: str, deals: DealSet, workers: int | None = None, progress: bool = True) -> tuple[dict, list]:
    """Play ``spec`` against the panel on ``deals``: (the results, every hand's arena record with its
    config, for ``--record``). ``workers`` None: one per core (at most the arena's ``MAX_DEFAULT_WORKERS``)."""
    members = panel(deals.game, deals.num_players)
    check_config(deals.config(spec, members[0]))  # a bad spec fails before any hand is played
    rated = [m for m in members if not is_search(m)]
    pairs = list(combinations(rated, 2))
    configs = [deals.config(spec, m) for m in members] + [deals.config(a, b) for a, b in pairs]
    workers = workers or min(available_cores(), MAX_DEFAULT_WORKERS)
    bar = _bar(sum(total_units(c) for c in configs), progress)
    played = []
    try:
        for config in configs:
            played.append((config, run_arena(config, workers=workers, bar=bar)))
    finally:
        bar.close()
    opponents = []
    for member, (config, records) in zip(members, played):
        row = summarize(config, records)["agents"][0]
        opponents.append({
            "opponent": member, "hands": row["units"], "decided": row["decided"], "wins": row["wins"],
            "share": row["share"], "share_low": row["share_low"], "share_high": row["share_high"],
            "fair_share": row["fair_share"], "points": row["mean_points"], "points_low": row["points_low"],
            "points_high": row["points_high"], "command": deals.command(spec, member)})
    pair_wins = [_wins(summarize(config, records)["agents"][0]) for config, records in played[len(members):]]
    panel_ratings, rating = _ratings(rated, pairs, pair_wins,
                                     [_wins(o) for o in opponents if not is_search(o["opponent"])],
                                     deals.num_players)
    result = {
        "format": FORMAT, "deal_set": deals.id, "game": deals.game, "num_players": deals.num_players,
        "hands": deals.hands, "search_hands": min(deals.hands, SEARCH_HANDS), "seed": deals.seed,
        "spec": spec, "name": display_names([spec])[0], "rating": rating, "panel_ratings": panel_ratings,
        "opponents": opponents, "left_out": left_out(deals.game, deals.num_players),
    }
    return result, played[:len(members)]


def _wins(row: dict) -> tuple[float, float]:
    """(decided hands the lone seat won, decided hands the other seats won)."""
    return row["wins"], row["decided"] - row["wins"]


def _ratings(rated: list[str], pairs: list[tuple[str, str]], pair_wins: list[tuple[float, float]],
             spec_wins: list[tuple[float, float]], num_players: int) -> tuple[dict[str, float], float]:
    """(the panel's ratings, the agent's): the panel fitted on its own pairs with the rule agent at
    ``ANCHOR_RATING``; then the agent (index ``len(rated)``) against the panel held fixed."""
    index = {m: i for i, m in enumerate(rated)}
    others = num_players - 1
    tables = [((index[a],) + (index[b],) * others, {index[a]: won, index[b]: lost})
              for (a, b), (won, lost) in zip(pairs, pair_wins)]
    fitted = choice_ratings(len(rated), tables)
    shift = ANCHOR_RATING - fitted[index[ANCHOR]]
    fixed = {i: r + shift for i, r in enumerate(fitted)}
    agent = len(rated)
    own = [((agent,) + (i,) * others, {agent: won, i: lost}) for i, (won, lost) in enumerate(spec_wins)]
    rating = choice_ratings(agent + 1, own, fixed=fixed)[agent]
    return {m: fixed[i] for m, i in index.items()}, rating


class _Lines:
    """Progress as plain lines (when stderr is no terminal): one at every tenth of the hands; none when quiet."""

    def __init__(self, total: int, quiet: bool = False):
        self.total, self.done, self.shown, self.quiet = total, 0, 0, quiet

    def update(self, n: int) -> None:
        self.done += n
        tenth = 10 * self.done // max(1, self.total)
        if tenth > self.shown and not self.quiet:
            self.shown = tenth
            print(f"{self.done:,} of {self.total:,} hands played", file=sys.stderr, flush=True)

    def close(self) -> None:
        pass


def _bar(total: int, enabled: bool):
    """A tqdm bar on a terminal, else plain lines (or nothing when not ``enabled``)."""
    if enabled and sys.stderr.isatty():
        from tqdm import tqdm

        return tqdm(total=total, unit="hand", dynamic_ncols=True, file=sys.stderr)
    return _Lines(total, quiet=not enabled)


# ----------------------------------------------------------------------------- output


def _share(row: dict) -> str:
    return percent_text(row["share"], row["share_low"], row["share_high"])


def _points(row: dict) -> str:
    return points_text(row["points"], row["points_low"], row["points_high"])


def markdown(result: dict) -> str:
    """The run as a Markdown section: a row per panel member, the rating, what was left out."""
    fair = 100 / result["num_players"]
    lines = [f"### `{result['name']}`, {result['game']}, {result['num_players']} players, deal set "
             f"`{result['deal_set']}`", "",
             f"| opponent | hands | decided | share of decided [95%] (fair {fair:.1f}%) | points per hand [95%] |",
             "|---|---:|---:|---|---|"]
    for row in result["opponents"]:
        lines.append(f"| `{row['opponent']}` | {row['hands']:,} | {row['decided']:,} | {_share(row)} | "
                     f"{_points(row)} |")
    ratings = ", ".join(f"`{m}` {r:.0f}" for m, r in result["panel_ratings"].items())
    lines += ["", f"Rating **{result['rating']:.0f}** (Elo scale, Luce choice model; the panel: {ratings})."]
    lines += [f"Left out: `{spec}`: {why}." for spec, why in result["left_out"].items()]
    return "\n".join(lines) + "\n"


def print_result(result: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console() if sys.stdout.isatty() else Console(width=140)
    table = Table(title=f"{result['name']} on {result['deal_set']} (seed {result['seed']})")
    for column in ("opponent", "hands", "decided", f"share of decided [95%] (fair {100 / result['num_players']:.1f}%)",
                   "points per hand [95%]"):
        table.add_column(column, justify="left" if column == "opponent" else "right")
    for row in result["opponents"]:
        table.add_row(row["opponent"], f"{row['hands']:,}", f"{row['decided']:,}", _share(row), _points(row))
    console.print(table)
    ratings = ", ".join(f"{m} {r:.0f}" for m, r in result["panel_ratings"].items())
    print(f"rating {result['rating']:.0f} (Elo scale; panel: {ratings}; search on the first "
          f"{result['search_hands']} hands, not in the rating)")
    for spec, why in result["left_out"].items():
        print(f"left out: {spec}: {why}")


def csv_rows(result: dict) -> list[dict]:
    return [{"deal_set": result["deal_set"], "spec": result["spec"], "rating": result["rating"], **row}
            for row in result["opponents"]]


def write_csv(rows: Sequence[dict], path: Path) -> None:
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)


def plot(groups: dict[str, list[dict]], path: Path) -> None:
    """One row per deal set: each run's share of decided hands against each opponent, and the ratings
    of the runs and the panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(len(groups), 2, figsize=(12, 3.8 * len(groups)), squeeze=False)
    for (set_id, runs), (shares, ratings) in zip(groups.items(), axes):
        opponents = _opponents(runs)
        width = 0.8 / len(runs)
        for k, run in enumerate(runs):
            by = {row["opponent"]: row for row in run["opponents"]}
            xs = [i + k * width for i, o in enumerate(opponents) if o in by]
            rows = [by[o] for o in opponents if o in by]
            shares.bar(xs, [r["share"] for r in rows], width, label=run["name"],
                       yerr=[[r["share"] - r["share_low"] for r in rows], [r["share_high"] - r["share"] for r in rows]],
                       capsize=3)
        shares.axhline(1 / runs[0]["num_players"], color="grey", linestyle="--", linewidth=1)
        shares.set_xticks([i + 0.4 - width / 2 for i in range(len(opponents))], opponents, rotation=15)
        shares.set(ylim=(0, 1), ylabel="share of decided hands (95%)", title=set_id)
        shares.legend(fontsize=8)
        entries = sorted([(r["rating"], r["name"], "tab:orange") for r in runs]
                         + [(v, f"panel: {m}", "tab:grey") for m, v in runs[0]["panel_ratings"].items()])
        base = min(v for v, _, _ in entries) - 100
        ratings.barh([name for _, name, _ in entries], [v - base for v, _, _ in entries], left=base,
                     color=[colour for _, _, colour in entries])
        for y, (value, _, _) in enumerate(entries):
            ratings.annotate(f"{value:.0f}", (value, y), xytext=(3, 0), textcoords="offset points", va="center",
                             fontsize=8)
        ratings.set(xlabel=f"rating (Elo scale, {ANCHOR} = {ANCHOR_RATING:.0f})", title="ratings (the panel in grey)")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def write_run(result: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.md").write_text(markdown(result))
    write_csv(csv_rows(result), out / "bench.csv")
    (out / "bench.json").write_text(json.dumps(json_safe(result), indent=2) + "\n")
    plot({result["deal_set"]: [result]}, out / "bench.png")


def default_out(spec: str, deals: DealSet) -> Path:
    """``bench/<spec-name>-<game>-<N>p``, the spec's name made safe for a folder."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", display_names([spec])[0]).strip("_.")
    return Path("bench") / f"{name}-{deals.game}-{deals.num_players}p"


# ----------------------------------------------------------------------------- leaderboard


def load_runs(folder: Path) -> dict[str, list[dict]]:
    """The runs (``bench.json``) under ``folder``, by deal set, best rating first; an ``AgentError``
    when there are none, or a deal set holds one agent twice or two different panels (whose
    ratings do not compare)."""
    if not folder.is_dir():
        raise AgentError(f"--leaderboard {folder}: no such folder")
    groups: dict[str, list[dict]] = {}
    for path in sorted(folder.rglob("bench.json")):
        try:
            run = json.loads(path.read_text())
        except (OSError, ValueError) as error:
            raise AgentError(f"--leaderboard: {path} is not a benchmark's JSON: {error}") from None
        if not isinstance(run, dict) or run.get("format") != FORMAT:
            continue
        run["path"] = str(path)
        run["opponents"] = [{k: math.nan if v is None else v for k, v in row.items()} for row in run["opponents"]]
        runs = groups.setdefault(run["deal_set"], [])
        for other in runs:
            if other["spec"] == run["spec"]:
                raise AgentError(f"--leaderboard: {run['spec']} on {run['deal_set']} twice: {other['path']} and "
                                 f"{path}; keep one")
            if other["panel_ratings"].keys() != run["panel_ratings"].keys() or any(
                    abs(other["panel_ratings"][m] - r) > 0.5 for m, r in run["panel_ratings"].items()):
                raise AgentError(f"--leaderboard: {other['path']} and {path} were played against different panels "
                                 f"on {run['deal_set']} (the panel's ratings differ); their ratings do not compare")
        runs.append(run)
    if not groups:
        raise AgentError(f"--leaderboard {folder}: no benchmark runs (bench.json) found under it")
    return {k: sorted(v, key=lambda r: -r["rating"]) for k, v in sorted(groups.items())}


def _opponents(runs: list[dict]) -> list[str]:
    return list(dict.fromkeys(row["opponent"] for run in runs for row in run["opponents"]))


def _cell(row: dict) -> str:
    """A run's result against one opponent in a leaderboard: share of decided hands [95%], points per hand."""
    return f"{_share(row)}, {'n/a' if math.isnan(row['points']) else format(row['points'], '+.1f')}"


def leaderboard_markdown(groups: dict[str, list[dict]]) -> str:
    """One table per deal set: a row per agent, its rating, and against each opponent its share of
    decided hands with the 95% interval and its points per hand."""
    out = []
    for set_id, runs in groups.items():
        opponents = _opponents(runs)
        out += [f"#### Deal set `{set_id}`", "",
                "| agent | rating | " + " | ".join(f"vs `{o}`" for o in opponents) + " |",
                "|---|---:|" + "---|" * len(opponents)]
        for run in runs:
            by = {row["opponent"]: row for row in run["opponents"]}
            cells = [_cell(by[o]) if o in by else "" for o in opponents]
            out.append(f"| `{run['name']}` | {run['rating']:.0f} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def write_leaderboard(groups: dict[str, list[dict]], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "leaderboard.md").write_text(leaderboard_markdown(groups))
    write_csv(list(chain.from_iterable(csv_rows(r) for runs in groups.values() for r in runs)),
              out / "leaderboard.csv")
    plot(groups, out / "leaderboard.png")


# ----------------------------------------------------------------------------- CLI


def build_parser() -> argparse.ArgumentParser:
    prog = program_name("agents.bench")
    parser = argparse.ArgumentParser(
        prog=prog,
        description="The standard benchmark: SPEC against the game's panel on the fixed, versioned benchmark deals "
                    "(duplicate-dealt, seats rotated): share of decided hands and points per hand against each "
                    "member with 95% intervals, and a rating (docs/agents.md, The standard benchmark).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"Agent specs: {', '.join(AGENT_NAMES)} (docs/agents.md).\n"
               f"Examples:\n  {prog} rule --game indian\n"
               f"  {prog} examples/my_agent.py:GreedyAgent --game basic --players 4 --hands 1000\n"
               f"  {prog} pretrained:romi --game romi --record romi.jsonl\n"
               f"  {prog} --leaderboard bench/",
    )
    parser.add_argument("spec", nargs="?", metavar="SPEC", help="the agent to benchmark (any agent spec)")
    parser.add_argument("--game", choices=GAMES, help="the game (needed unless --leaderboard)")
    parser.add_argument("--players", type=int, default=2, help="seats at the table (default 2)")
    parser.add_argument("--hands", type=int, default=DEFAULT_HANDS,
                        help=f"hands against each opponent, rounded up to whole deals (default {DEFAULT_HANDS}; "
                             f"the search agent plays the first {SEARCH_HANDS}); part of the deal set's id")
    parser.add_argument("--workers", type=int, default=None,
                        help=f"processes (default: one per core, at most {MAX_DEFAULT_WORKERS}); the results do not "
                             "depend on it")
    parser.add_argument("--out", metavar="DIR",
                        help="where to write bench.md, .csv, .json, .png (default bench/SPEC-GAME-Np); with "
                             "--leaderboard, leaderboard.md, .csv, .png (default: its folder)")
    parser.add_argument("--record", metavar="FILE.jsonl",
                        help="write the agent's hands as game records (docs/records.md)")
    parser.add_argument("--leaderboard", metavar="DIR",
                        help="merge the runs (bench.json) under DIR into one table per deal set, instead of a run")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``rummy-bench`` and ``python -m agents.bench``; the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.leaderboard:
            if args.spec:
                parser.error(f"give SPEC or --leaderboard, not both (got {args.spec!r} and --leaderboard)")
            groups = load_runs(Path(args.leaderboard))
            out = Path(args.out or args.leaderboard)
            write_leaderboard(groups, out)
            print(leaderboard_markdown(groups))
            print(f"written: {out / 'leaderboard.md'}, leaderboard.csv, leaderboard.png")
            return 0
        if not args.spec or not args.game:
            parser.error("give SPEC and --game (or --leaderboard DIR)")
        if args.workers is not None and args.workers < 1:
            parser.error(f"--workers {args.workers}: expected at least 1")
        deals = deal_set(args.game, args.players, args.hands)
        out = Path(args.out) if args.out else default_out(args.spec, deals)
        print(f"{args.spec} against the {deals.game} panel at {deals.num_players} players on deal set {deals.id}; "
              f"writing {out}/", flush=True)
        for spec, why in left_out(deals.game, deals.num_players).items():
            print(f"left out: {spec}: {why}", flush=True)
        start = time.monotonic()
        result, played = bench(args.spec, deals, args.workers)
    except AgentError as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    print_result(result)
    write_run(result, out)
    print(f"{time.monotonic() - start:.0f} s; written: {', '.join(str(out / f) for f in FILES)}")
    if args.record:
        written = write_records(args.record, chain.from_iterable(hand_records(c, r) for c, r in played))
        print(f"{written} hands recorded in {args.record} (python -m rummy_env.records check {args.record})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
