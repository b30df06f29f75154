"""The evaluation arena: agents play each other on duplicate deals, and the results are summed up.

    python -m agents.arena --game indian --agents random rule --hands 2000
    python -m agents.arena --game romi --agents random rule ppo:runs/x/best.pt --players 3 --workers 2 \\
        --csv results.csv --json results.json --plot results.png
    python -m agents.arena --game basic --agents random rule --matches --hands 200
    python -m agents.arena --game indian --agents ppo:runs/x/best.pt rule rule random --table
    python -m agents.arena --game basic --agents examples/my_agent.py:GreedyAgent rule --record hands.jsonl

How games are set up
    * Tables (round robin, the default): with at least as many agents as seats, every combination
      of ``--players`` agents (for two players: every pairing). With fewer agents than seats,
      every pair of agents fills the seats alternately (A B A, and B A B).
    * A mixed table (``--table``): the agents given are the seats of one table, one spec per seat
      (a spec may repeat: ``ppo:X rule rule random`` is one policy, two rule agents and a random
      agent at a table of 4); ``--players`` is their number. More agents than the game seats is
      an error naming the game's range (I1, B1, R1).
    * Duplicate deals: each deal (one shuffle, seed ``arena:{seed}:{deal}``) is played once per
      rotation of the table's seating, so every agent gets every seat's cards on the same shuffle
      (two players: the seats swapped). Every table plays the same deals.
    * ``--hands`` is per table and rounded up to whole deals (a multiple of the seat count).
    * Play goes through ``rummy_env.vector``: a task (``DEALS_PER_TASK`` deals of one table, every
      rotation of each) loads its hands into one ``VectorGame`` and steps them together; at each
      step every agent is asked once, with ``act_batch``, for the rows where it is to act. Agents
      see only their observation and mask (``rummy_env.encoding``, the vectors the PettingZoo env
      gives). An agent with its own ``act_batch`` (a policy) plays all the task's hands with one
      instance; any other gets one instance per hand, reset before each hand with a seed made
      from (seed, table, deal, rotation, seat), so results are those of hands played one by one
      and do not depend on ``--workers`` or the order work is done in.
    * ``--matches``: each deal seeds a whole match (to 400 / 100 / 250 points, I8, B6, R8 of docs/rules.md)
      instead of one hand; a match longer than ``--max-match-hands`` hands is cut off.

Per agent (one row per spec given; a spec given twice is two agents, ``rule`` and ``rule#2``):
hands (or matches) played, won, win rate with its 95% Wilson interval; its **share** of the
decided hands (those with a winner) it sat in, with its 95% Wilson interval, against the fair
share 1/N of a table of N; mean points per hand (zero-sum rewards, docs/rules.md "Rewards for
learning") with a 95% interval computed over duplicate deals (the deal, not the hand, is the
independent unit), stalemates (G8) and cut-off hands (G9), and a rating: Elo (Bradley-Terry fit)
with two players, openskill (Plackett-Luce ordinal) with more. An agent that holds several seats
of a table (A B A) counts once per seat. ``--record`` writes every hand as a game record
(``rummy_env.records``, docs/records.md).
"""

from __future__ import annotations

import argparse
import csv
import itertools
import json
import math
import multiprocessing
import os
import sys
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from rummy_env.encoding import action_layout
from rummy_env.game import GameState
from rummy_env.match import Match
from rummy_env.records import record_hand, write_records
from rummy_env.games import GAME_SPECS, game_spec, is_game
from rummy_env.ruleset import GAMES, RuleSet, make_ruleset, parse_option
from rummy_env.vector import VectorGame

from .base import Agent, AgentError, plays_many_hands
from .batch import act_for_rows
from .registry import AGENT_NAMES, is_plugin
from .stats import elo_ratings, mean_interval, openskill_ratings, percent_text, points_text, wilson_interval


@dataclass(frozen=True)
class ArenaConfig:
    """One arena run: what plays, how much, and the seed."""

    game: str
    agents: tuple[str, ...]
    """Agent specs (``random``, ``rule``, ``search``, ``ppo:PATH``); see ``agents.registry``."""
    hands: int = 2000
    """Hands (or matches) per table, rounded up to whole deals."""
    num_players: int = 2
    seed: int = 0
    matches: bool = False
    max_match_hands: int = 200
    options: dict = field(default_factory=dict)
    """Rule options of the game (docs/rules.md), e.g. ``{"wild_joker": True}``."""
    table: bool = False
    """A mixed table: ``agents`` are the seats of one table (as many as ``num_players``), rotated;
    else the round robin of ``seat_tables``."""

    @property
    def rules(self) -> RuleSet:
        """The table's rules: the game at ``num_players`` with ``options`` (``rummy_env.ruleset``)."""
        return make_ruleset(self.game, self.num_players, **self.options)

    @property
    def tables(self) -> list[tuple[int, ...]]:
        if self.table:
            return [tuple(range(len(self.agents)))]
        return seat_tables(len(self.agents), self.num_players)

    @property
    def fair_share(self) -> float:
        """The share of decided hands one seat wins at a table of equals: 1/N."""
        return 1.0 / self.num_players

    @property
    def deals(self) -> int:
        return max(1, math.ceil(self.hands / self.num_players))


def seat_tables(num_agents: int, num_players: int) -> list[tuple[int, ...]]:
    """The agents (by index) at each table's seats, before rotation."""
    if num_agents < 1:
        raise AgentError("the arena needs at least one agent")
    if num_agents == 1:
        return [(0,) * num_players]
    if num_agents >= num_players:
        return list(itertools.combinations(range(num_agents), num_players))
    out = []
    for i, j in itertools.combinations(range(num_agents), 2):
        out.append(tuple(i if s % 2 == 0 else j for s in range(num_players)))
        if num_players % 2:
            out.append(tuple(j if s % 2 == 0 else i for s in range(num_players)))
    return out


def rotations(table: Sequence[int]) -> list[tuple[int, ...]]:
    """Every rotation of a seating: seat s of rotation r holds ``table[(s + r) % n]``."""
    n = len(table)
    return [tuple(table[(s + r) % n] for s in range(n)) for r in range(n)]


def deal_seed(seed: int, deal: int) -> str:
    """The shuffle seed of deal ``deal``: the same at every table and every rotation."""
    return f"arena:{seed}:{deal}"


def agent_seed(seed: int, table: int, deal: int, rotation: int, seat: int) -> int:
    """The seed an agent is reset with before one hand."""
    return zlib.crc32(f"{seed}:{table}:{deal}:{rotation}:{seat}".encode())


# ----------------------------------------------------------------------------- playing


DEALS_PER_TASK = 16
"""Deals played together (every rotation of each, in one ``VectorGame``): the unit of work of a worker."""


def task_deals(config: ArenaConfig) -> list[range]:
    """The deals of each task, the same whatever the number of workers."""
    return [range(start, min(start + DEALS_PER_TASK, config.deals)) for start in range(0, config.deals, DEALS_PER_TASK)]


def deal_key(state: GameState) -> int:
    """A fingerprint of a freshly dealt hand (every hand, the stock, the pile, cut and wild cards)."""
    data = (state.hands, state.stock, state.discard, state.cut_card, state.wild_card, state.first_player)
    return zlib.crc32(repr(data).encode())


class _AgentPool:
    """Agents built once per process: one instance per (agent, occurrence at the table), and for an
    agent that cannot play several hands at once (``plays_many_hands``) one per hand in play too."""

    def __init__(self, config: ArenaConfig, factory: Callable[[str, int], Agent] | None = None):
        self.config = config
        self.factory = factory or self._make
        self.instances: dict[tuple[int, int, int], Agent] = {}

    def _make(self, spec: str, index: int) -> Agent:
        from .registry import make_agent

        return make_agent(spec, self.config.rules, seed=index)

    def _get(self, key: tuple[int, int, int]) -> Agent:
        if key not in self.instances:
            self.instances[key] = self.factory(self.config.agents[key[0]], key[0])
        return self.instances[key]

    def lineup(self, lineup: tuple[int, ...], slot: int = 0) -> list[Agent]:
        """The agents of each seat for the hand in ``slot`` (slot 0 for agents shared by every hand)."""
        out = []
        seen: dict[int, int] = {}
        for agent_index in lineup:
            occurrence = seen.get(agent_index, 0)
            seen[agent_index] = occurrence + 1
            agent = self._get((agent_index, occurrence, 0))
            if slot and not plays_many_hands(agent):
                agent = self._get((agent_index, occurrence, slot))
            out.append(agent)
        return out


def play_deals(config: ArenaConfig, table_index: int, deals: Sequence[int], pool: _AgentPool) -> list[dict]:
    """Every rotation of table ``table_index`` on each of ``deals``, all in play together in one
    ``VectorGame``: one record per hand (or match), in (deal, rotation) order. A record's ``hands``
    keeps each hand played (its seed, first player and action ids), for ``--record``.

    An agent with its own ``act_batch`` plays every hand at once and is reset once, with a seed made
    from (seed, table, first deal, agent, occurrence); any other has one instance per hand, reset
    before each hand (of a match too) with the seed of ``agent_seed``, as when hands were played
    one by one.
    """
    rules = config.rules
    table = config.tables[table_index]
    lineups = rotations(table)
    hands = [(deal, rotation) for deal in deals for rotation in range(len(lineups))]
    layout = action_layout(config.game)
    vector = VectorGame(config.game, len(hands), config.num_players, match=config.matches,
                        max_hands=config.max_match_hands, **config.options)
    seats = [pool.lineup(lineups[rotation], slot) for slot, (_, rotation) in enumerate(hands)]
    reset_seeds = [[agent_seed(config.seed, table_index, deal, rotation, s) for s in range(config.num_players)]
                   for deal, rotation in hands]
    shared = {id(agent): agent for agents in seats for agent in agents if plays_many_hands(agent)}
    for key, agent in pool.instances.items():
        if id(agent) in shared:
            agent.reset(seed=zlib.crc32(f"{config.seed}:{table_index}:{deals[0]}:{key[0]}:{key[1]}".encode()))
    states: list[GameState] = []
    matches: list[Match | None] = []
    records = []
    for slot, (deal, rotation) in enumerate(hands):
        match = Match(rules, deal_seed(config.seed, deal)) if config.matches else None
        state = match.deal() if match is not None else GameState(rules, deal_seed(config.seed, deal), 0)
        records.append({"table": table_index, "deal": deal, "rotation": rotation, "seats": list(lineups[rotation]),
                        "deal_key": deal_key(state), "hands": []})
        vector.load(slot, state, match)
        states.append(state)
        matches.append(match)
        _reset_hand_agents(seats[slot], reset_seeds[slot], None if match is None else match.hands_played)
    points = [[0] * config.num_players for _ in hands]
    outcomes = [{"stalemate": 0, "cut_off": 0} for _ in hands]
    active = list(range(len(hands)))
    while active:
        vector.step_rows(active, _choose(vector, active, seats))
        still = []
        for i in active:
            state = states[i]
            if not state.is_over:
                still.append(i)
                continue
            result = state.result
            match = matches[i]
            records[i]["hands"].append({"seed": state.seed, "first_player": state.first_player,
                                        "actions": layout.ids_of(state.history)})
            if match is None:
                records[i] |= {"outcome": result.outcome, "winner": result.winner, "payments": list(result.payments),
                               "points": list(result.rewards), "turns": state.turn}
                continue
            points[i] = [p + r for p, r in zip(points[i], result.rewards)]
            if result.outcome in outcomes[i]:
                outcomes[i][result.outcome] += 1
            if vector.results[i] is None:  # the match goes on: the slot dealt its next hand
                states[i] = vector.state(i)
                _reset_hand_agents(seats[i], reset_seeds[i], match.hands_played)
                still.append(i)
                continue
            records[i] |= {"outcome": "match" if match.is_over else "cut_off", "winners": match.winners,
                           "totals": list(match.totals), "points": points[i], "hands_played": match.hands_played,
                           "stalemates": outcomes[i]["stalemate"], "cut_offs": outcomes[i]["cut_off"]}
        active = still
    return records


def hand_records(config: ArenaConfig, records: Sequence[dict]) -> Iterator[dict]:
    """The game record (``rummy_env.records``, docs/records.md) of every hand of ``records`` (of
    ``run_arena``), in order: each replayed from its seed, and checked by replaying it from its deck."""
    rules = config.rules
    for record in records:
        players = [config.agents[agent] for agent in record["seats"]]
        where = {"program": "arena", "table": record["table"], "deal": record["deal"], "rotation": record["rotation"]}
        for number, hand in enumerate(record["hands"]):
            source = where | ({"match_hand": number} if config.matches else {})
            yield record_hand(rules, hand["seed"], hand["first_player"], hand["actions"], players, source)


def _reset_hand_agents(agents: Sequence[Agent], seeds: Sequence[int], hands_played: int | None) -> None:
    """A new hand: reset the agents that play only this hand (one hand of a match: its own seed)."""
    for agent, seed in zip(agents, seeds):
        if not plays_many_hands(agent):
            agent.reset(seed=seed if hands_played is None else zlib.crc32(f"{seed}:{hands_played}".encode()))


def _choose(vector: VectorGame, rows: list[int], seats: list[list[Agent]]) -> np.ndarray:
    """The action of the seat to act in each of ``rows``: each agent is asked once, for all its rows."""
    to_act = [int(vector.to_act[i]) for i in rows]
    return act_for_rows([seats[i][seat] for i, seat in zip(rows, to_act)], vector.observations, vector.action_masks,
                        rows, to_act)


_WORKER: dict = {}

HANDS_PER_WORKER = 100
"""The default worker count starts one process per this many hands, so that a small run stays in one."""

MAX_DEFAULT_WORKERS = 8


def available_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def default_workers(config: ArenaConfig, cores: int | None = None) -> int:
    """Processes for a run when none are asked for: one per ``HANDS_PER_WORKER`` hands played, at
    most the cores available (and ``MAX_DEFAULT_WORKERS``), so that a short run pays no start-up."""
    cores = available_cores() if cores is None else cores
    return max(1, min(cores, MAX_DEFAULT_WORKERS, total_units(config) // HANDS_PER_WORKER))


def _init_worker(config: ArenaConfig) -> None:
    pool = _AgentPool(config)
    for index in range(len(config.agents)):
        pool.lineup((index,))  # build every agent now, so that the thread setting below covers them
    torch = sys.modules.get("torch")  # only when a policy agent imported it: torch is heavy to import
    if torch is not None:
        torch.set_num_threads(1)  # one process per core already
    _WORKER["pool"] = pool
    _WORKER["config"] = config


def _run_task(task: tuple[int, range]) -> list[dict]:
    table_index, deals = task
    return play_deals(_WORKER["config"], table_index, deals, _WORKER["pool"])


def check_table(config: ArenaConfig) -> None:
    """A mixed table seats one agent per seat, within the game's range (I1, B1, R1); else an ``AgentError``."""
    if not config.table:
        return
    spec = game_spec(config.game)
    low, high = spec.players
    seated = len(config.agents)
    if not low <= seated <= high:
        raise AgentError(f"a table of {seated} agent{'s' * (seated != 1)}: {spec.title} seats {low} to {high} players "
                         f"({spec.rule_ids.players}); give {low} to {high} agent specs")
    if seated != config.num_players:
        raise AgentError(f"a table of {seated} agents at {config.num_players} seats: a mixed table seats one agent "
                         f"per seat; give {config.num_players} specs, or leave the player count to the specs")


def check_config(config: ArenaConfig, factory: Callable[[str, int], Agent] | None = None) -> _AgentPool:
    """Build every agent once (so a bad spec or checkpoint fails before any game); the built pool."""
    if not is_game(config.game):
        raise AgentError(f"unknown game {config.game!r}: expected one of {', '.join(GAME_SPECS)}")
    check_table(config)
    try:
        config.rules
    except ValueError as error:
        raise AgentError(str(error)) from None
    if config.hands < 1:
        raise AgentError(f"hands={config.hands}: expected at least 1")
    pool = _AgentPool(config, factory)
    for index in range(len(config.agents)):
        pool.lineup((index,))
    return pool


def run_arena(config: ArenaConfig, workers: int = 1, progress: bool = True,
              factory: Callable[[str, int], Agent] | None = None, bar=None) -> list[dict]:
    """Play every table on every deal; records in (table, deal, rotation) order whatever ``workers``.

    ``factory(spec, index)`` builds an agent (default: ``agents.registry.make_agent``); a custom
    factory runs in this process only. ``bar``: a progress bar of the caller's (``update(n)``) to
    advance by the hands played, instead of a bar of this run's own.
    """
    pool = check_config(config, factory)
    tasks = [(t, deals) for t in range(len(config.tables)) for deals in task_deals(config)]
    total = total_units(config)
    unit = "match" if config.matches else "hand"
    own_bar = bar is None
    bar = _progress(total, unit, progress) if own_bar else bar
    records: list[dict] = []
    try:
        if workers <= 1 or factory is not None or len(tasks) == 1:
            for task in tasks:
                got = play_deals(config, task[0], task[1], pool)
                records.extend(got)
                bar.update(len(got))
        else:
            # a forked child of a process whose torch has started OpenMP threads can hang in its
            # first torch call: fork only while torch is not loaded here
            methods = multiprocessing.get_all_start_methods()
            if "fork" in methods and "torch" not in sys.modules:
                method = "fork"
            else:
                method = "forkserver" if "forkserver" in methods else "spawn"
            context = multiprocessing.get_context(method)
            with context.Pool(workers, initializer=_init_worker, initargs=(config,)) as workers_pool:
                for got in workers_pool.imap(_run_task, tasks, chunksize=1):
                    records.extend(got)
                    bar.update(len(got))
    finally:
        if own_bar:
            bar.close()
    return records


def total_units(config: ArenaConfig) -> int:
    """The hands (or matches) a run plays: every table, every deal, every rotation."""
    return len(config.tables) * config.deals * config.num_players


def _progress(total: int, unit: str, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, disable=not enabled, dynamic_ncols=True, file=sys.stderr)


# ----------------------------------------------------------------------------- summary


def _match_ranks(totals: Sequence[int], low_wins: bool) -> list[int]:
    keys = [t if low_wins else -t for t in totals]
    return [1 + sum(k < mine for k in keys) for mine in keys]


def _hand_ranks(record: dict) -> list[int]:
    winner = record["winner"]
    keys = [-1 if s == winner else pay for s, pay in enumerate(record["payments"])]
    return [1 + sum(k < mine for k in keys) for mine in keys]


def summarize(config: ArenaConfig, records: Sequence[dict]) -> dict:
    """Per agent and per table statistics, and ratings, from the records of ``run_arena``."""
    names = display_names(config.agents)
    k = len(config.agents)
    low_wins = config.rules.low_total_wins
    units = [0] * k
    wins = [0] * k
    decided = [0] * k
    stalemates = [0] * k
    cut_offs = [0] * k
    cut_off_matches = [0] * k
    group_points: dict[tuple[int, int, int], list[float]] = {}
    pair_results: list[tuple[int, int, float]] = []
    ranked_games: list[tuple[list[int], list[int]]] = []
    tables: dict[int, dict] = {}
    for record in records:
        seats = record["seats"]
        table = tables.setdefault(record["table"], {
            "agents": [names[a] for a in config.tables[record["table"]]],
            "units": 0, "wins": [0] * k, "points": [0.0] * k, "seat_units": [0] * k})
        table["units"] += 1
        if config.matches:
            winners = set(record["winners"])
            finished = record["outcome"] == "match"
        else:
            winners = set() if record["winner"] is None else {record["winner"]}
            finished = record["winner"] is not None
        for seat, agent in enumerate(seats):
            units[agent] += 1
            decided[agent] += finished
            table["seat_units"][agent] += 1
            if seat in winners:
                wins[agent] += 1
                table["wins"][agent] += 1
            table["points"][agent] += record["points"][seat]
            group_points.setdefault((record["table"], record["deal"], agent), []).append(record["points"][seat])
            if config.matches:
                stalemates[agent] += record["stalemates"]
                cut_offs[agent] += record["cut_offs"]
                cut_off_matches[agent] += record["outcome"] == "cut_off"
            else:
                stalemates[agent] += record["outcome"] == "stalemate"
                cut_offs[agent] += record["outcome"] == "cut_off"
        if not finished:
            continue
        if config.num_players == 2:
            a, b = seats
            if a != b:
                if config.matches:
                    score = 0.5 if len(winners) == 2 else float(0 in winners)
                else:
                    score = float(record["winner"] == 0)
                pair_results.append((a, b, score))
        else:
            ranks = _match_ranks(record["totals"], low_wins) if config.matches else _hand_ranks(record)
            ranked_games.append((list(seats), ranks))
    per_group: list[list[float]] = [[] for _ in range(k)]
    for (_, _, agent), values in sorted(group_points.items()):
        per_group[agent].append(sum(values) / len(values))
    if config.num_players == 2:
        elo = elo_ratings(k, pair_results)
        ratings = [{"kind": "elo", "rating": r} for r in elo]
    else:
        skill = openskill_ratings(k, ranked_games)
        ratings = [{"kind": "openskill", "rating": s["ordinal"], "mu": s["mu"], "sigma": s["sigma"]} for s in skill]
    agents = []
    for i in range(k):
        low, high = wilson_interval(wins[i], units[i])
        share_low, share_high = wilson_interval(wins[i], decided[i])
        mean, mean_low, mean_high = mean_interval(per_group[i])
        row = {
            "agent": names[i], "spec": config.agents[i], "units": units[i], "wins": wins[i],
            "win_rate": wins[i] / units[i] if units[i] else math.nan, "win_rate_low": low, "win_rate_high": high,
            "decided": decided[i], "share": wins[i] / decided[i] if decided[i] else math.nan,
            "share_low": share_low, "share_high": share_high, "fair_share": config.fair_share,
            "mean_points": mean, "points_low": mean_low, "points_high": mean_high,
            "stalemates": stalemates[i], "cut_offs": cut_offs[i], **ratings[i],
        }
        if config.matches:
            row["cut_off_matches"] = cut_off_matches[i]
        agents.append(row)
    table_rows = []
    for index in sorted(tables):
        t = tables[index]
        table_rows.append({
            "table": index, "agents": t["agents"], "units": t["units"],
            "wins": {names[a]: t["wins"][a] for a in set(config.tables[index])},
            "mean_points": {names[a]: t["points"][a] / t["seat_units"][a] for a in set(config.tables[index])},
        })
    unit = "match" if config.matches else "hand"
    return {"config": _config_dict(config), "unit": unit, "agents": agents, "tables": table_rows}


def one_against_many(spec: str, opponent: str, game: str, num_players: int, hands: int, seed: int = 0,
                     workers: int = 1, **options) -> dict:
    """``spec`` in one seat against ``num_players`` − 1 copies of ``opponent`` at a mixed table, on
    duplicate deals (``spec`` holds every seat in turn): its row of the summary."""
    lineup = (spec,) + (opponent,) * (num_players - 1)
    config = ArenaConfig(game=game, agents=lineup, hands=hands, num_players=num_players, seed=seed, table=True,
                         options=dict(options))
    return summarize(config, run_arena(config, workers=workers, progress=False))["agents"][0]


def _config_dict(config: ArenaConfig) -> dict:
    out = asdict(config)
    out["agents"] = list(config.agents)
    out["deals_per_table"] = config.deals
    out["tables"] = [list(t) for t in config.tables]
    return out


def display_names(specs: Sequence[str]) -> list[str]:
    """Unique short names for the agents of a run (a checkpoint by its file name)."""
    names = []
    for spec in specs:
        name = spec
        if spec.startswith("ppo:"):
            path = Path(spec[4:])
            name = f"ppo:{path.parent.name}/{path.name}" if path.parent.name else f"ppo:{path.name}"
        elif is_plugin(spec):  # a plug-in from a file: by its file name
            target, _, attribute = spec.rpartition(":")
            name = f"{Path(target).name}:{attribute}"
        base, n = name, 2
        while name in names:
            name = f"{base}#{n}"
            n += 1
        names.append(name)
    return names


# ----------------------------------------------------------------------------- output


def print_summary(summary: dict) -> None:
    """The per-agent table (and per-table results when there are several tables), with rich."""
    from rich.console import Console
    from rich.table import Table

    config = summary["config"]
    unit = summary["unit"]
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)
    players = config["num_players"]
    title = (f"{config['game']}, {players} players{', one mixed table' if config.get('table') else ''}, "
             f"{config['deals_per_table']} deals x {players} seatings per table, seed {config['seed']}")
    table = Table(title=title)
    fair = f"share of decided [95%] (fair {100 / players:.1f}%)"
    for column in ("agent", f"{unit}es" if unit == "match" else f"{unit}s", "won", "win rate [95%]", fair,
                   f"mean points / {unit} [95%]", "stalemates", "cut off", summary["agents"][0]["kind"]):
        table.add_column(column, justify="left" if column == "agent" else "right")
    for row in summary["agents"]:
        table.add_row(
            row["agent"], str(row["units"]), str(row["wins"]),
            percent_text(row["win_rate"], row["win_rate_low"], row["win_rate_high"]),
            percent_text(row["share"], row["share_low"], row["share_high"]),
            points_text(row["mean_points"], row["points_low"], row["points_high"]),
            str(row["stalemates"]), str(row["cut_offs"]), f"{row['rating']:.1f}",
        )
    console.print(table)
    if len(summary["tables"]) > 1:
        heads = Table(title="per table")
        for column in ("table", f"{unit}s", "won", "mean points"):
            heads.add_column(column)
        for row in summary["tables"]:
            heads.add_row(" vs ".join(row["agents"]), str(row["units"]),
                          ", ".join(f"{a} {w}" for a, w in row["wins"].items()),
                          ", ".join(f"{a} {p:+.1f}" for a, p in row["mean_points"].items()))
        console.print(heads)


ROW_FIGURES = ("units", "wins", "win_rate", "win_rate_low", "win_rate_high", "decided", "share", "share_low",
               "share_high", "fair_share", "mean_points", "points_low", "points_high", "stalemates", "cut_offs", "kind",
               "rating")
"""The figures of an agent's row of the summary (what model cards and run summaries keep)."""
CSV_COLUMNS = ("agent", "spec") + ROW_FIGURES


def write_csv(summary: dict, path: str | Path) -> None:
    """One row per agent."""
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for row in summary["agents"]:
            writer.writerow(row)


def json_safe(value):
    """``value`` with NaN written as None (JSON has no NaN), through dicts, lists and tuples."""
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def write_json(summary: dict, path: str | Path) -> None:
    """The whole summary (config, agents, tables); NaN written as null."""
    Path(path).write_text(json.dumps(json_safe(summary), indent=2) + "\n")


def plot_summary(summary: dict, path: str | Path) -> None:
    """A PNG: win rates with their 95% intervals, and ratings."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = summary["agents"]
    names = [r["agent"] for r in rows]
    rates = np.array([r["win_rate"] for r in rows], dtype=float)
    errors = np.array([[r["win_rate"] - r["win_rate_low"] for r in rows],
                       [r["win_rate_high"] - r["win_rate"] for r in rows]])
    figure, (left, right) = plt.subplots(1, 2, figsize=(4 + 1.6 * len(rows), 4))
    x = np.arange(len(rows))
    left.bar(x, rates, yerr=errors, capsize=6, color="tab:blue")
    left.set_xticks(x, names, rotation=20, ha="right")
    left.set_ylim(0, 1)
    left.set_ylabel(f"{summary['unit']} win rate (95% Wilson)")
    ratings = np.array([r["rating"] for r in rows], dtype=float)
    base = float(min(0.0, ratings.min()) if rows[0]["kind"] != "elo" else ratings.min() - 100.0)
    right.bar(x, ratings - base, bottom=base, color="tab:orange")
    for xi, value in zip(x, ratings):
        right.annotate(f"{value:.0f}" if rows[0]["kind"] == "elo" else f"{value:.1f}", (xi, value),
                       ha="center", va="bottom", fontsize=9)
    right.set_xticks(x, names, rotation=20, ha="right")
    kind = rows[0]["kind"]
    right.set_ylabel("Elo (Bradley-Terry)" if kind == "elo" else "openskill ordinal (mu - 3 sigma)")
    config = summary["config"]
    figure.suptitle(f"{config['game']}, {config['num_players']} players, seed {config['seed']}")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def check_output_paths(**paths: str | None) -> None:
    """Make sure each output file can be written before any game is played (missing folders are
    created); a path that is a folder, or one that cannot be written, is an ``AgentError`` naming it.

    ``plot`` must end in a format matplotlib writes (``.png``, ``.pdf``, ``.svg``).
    """
    for option, text in paths.items():
        if not text:
            continue
        path = Path(text)
        flag = f"--{option}"
        if path.is_dir() or text.endswith(("/", os.sep)):
            raise AgentError(f"{flag} {text}: is a folder; give a file name, "
                             f"e.g. {path / ('arena.' + _SUFFIX[option])}")
        if option == "plot" and path.suffix.lower() not in (".png", ".pdf", ".svg"):
            raise AgentError(f"{flag} {text}: expected a file name ending .png (or .pdf, .svg)")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise AgentError(f"{flag} {text}: cannot create its folder: {error.strerror}") from None
        if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
            raise AgentError(f"{flag} {text}: cannot be written (no permission)")


_SUFFIX = {"csv": "csv", "json": "json", "plot": "png", "record": "jsonl"}


# ----------------------------------------------------------------------------- CLI


def program_name(module: str) -> str:
    """``rummy-…`` when run as a console script, else ``python -m module`` (not ``__main__.py``)."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return name if name.startswith("rummy-") else f"python -m {module}"


def _parse_option(text: str) -> tuple[str, object]:
    try:
        return parse_option(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("agents.arena"),
        description="Arena on duplicate deals, a round robin or one mixed table (--table): win rates and shares "
                    "of decided hands against the fair share 1/N with 95% intervals, mean points, ratings.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"Agent specs: {', '.join(AGENT_NAMES)} (see docs/agents.md).\n"
               "Examples:\n  python -m agents.arena --game indian --agents random rule --hands 2000\n"
               "  python -m agents.arena --game basic --agents pretrained:basic rule rule random --table",
    )
    parser.add_argument("--game", required=True, choices=GAMES, help="the game to play")
    parser.add_argument("--agents", required=True, nargs="+", metavar="SPEC", help="agents to compare (at least one)")
    parser.add_argument("--hands", type=int, default=2000,
                        help="hands (matches with --matches) per table, rounded up to whole deals (default 2000)")
    parser.add_argument("--players", type=int, default=None,
                        help="seats at each table (default 2; with --table, one per agent)")
    parser.add_argument("--table", action="store_true",
                        help="seat exactly the agents given at one table, one per seat (a spec may repeat), "
                             "every rotation of each deal; default: a round robin of tables of --players")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deals and of the agents (default 0)")
    parser.add_argument("--workers", type=int, default=None,
                        help=f"processes (default: one per {HANDS_PER_WORKER} hands, at most the cores or "
                             f"{MAX_DEFAULT_WORKERS}); results do not depend on it")
    parser.add_argument("--matches", action="store_true",
                        help="play full matches (to 400 / 100 / 250 points) instead of single hands")
    parser.add_argument("--max-match-hands", type=int, default=200,
                        help="hands after which a match is cut off (default 200)")
    parser.add_argument("--option", action="append", default=[], type=_parse_option, metavar="KEY=VALUE",
                        help="a rule option of the game (docs/rules.md), e.g. wild_joker=true; repeatable")
    parser.add_argument("--csv", metavar="FILE", help="write the per-agent table as CSV")
    parser.add_argument("--json", metavar="FILE", help="write the summary (config, agents, tables) as JSON")
    parser.add_argument("--plot", metavar="FILE.png",
                        help="write a chart of win rates and ratings (.png, .pdf or .svg)")
    parser.add_argument("--record", metavar="FILE.jsonl",
                        help="write every hand as a game record (JSON Lines, docs/records.md), each checked by "
                             "replaying it from its deck order")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    return parser


def run_cli(argv: Sequence[str] | None = None) -> dict:
    """The command line: parse ``argv``, play, print and write; the summary."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.hands < 1:
        parser.error(f"--hands {args.hands}: expected at least 1")
    if args.max_match_hands < 1:
        parser.error(f"--max-match-hands {args.max_match_hands}: expected at least 1")
    if args.workers is not None and args.workers < 1:
        parser.error(f"--workers {args.workers}: expected at least 1")
    players = args.players if args.players is not None else len(args.agents) if args.table else 2
    config = ArenaConfig(game=args.game, agents=tuple(args.agents), hands=args.hands, num_players=players,
                         seed=args.seed, matches=args.matches, max_match_hands=args.max_match_hands,
                         options=dict(args.option), table=args.table)
    try:
        check_config(config)
        check_output_paths(csv=args.csv, json=args.json, plot=args.plot, record=args.record)
    except AgentError as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    workers = args.workers if args.workers is not None else default_workers(config)
    records = run_arena(config, workers=workers, progress=not args.no_progress)
    summary = summarize(config, records)
    print_summary(summary)
    if args.csv:
        write_csv(summary, args.csv)
    if args.json:
        write_json(summary, args.json)
    if args.plot:
        plot_summary(summary, args.plot)
    if args.record:
        written = write_records(args.record, hand_records(config, records))
        print(f"{written} hands recorded in {args.record} (python -m rummy_env.records check {args.record})")
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m agents.arena`` and ``rummy-arena``; the exit status."""
    run_cli(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
