"""The arena (docs/agents.md "The arena"): statistics, duplicate deals, reproducibility, the CLI, rule vs random."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents import arena
from agents.arena import ArenaConfig, rotations, run_arena, seat_tables, summarize
from agents.base import Agent, AgentError
from agents.random_agent import RandomAgent
from agents.rule_agent import RuleAgent
from agents.stats import (
    elo_ratings, expected_score, mean_interval, openskill_ratings, percent_text, points_text, wilson_interval,
)
from agents.view import ObservationReader
from rummy_env.encoding import DISCARD_BASE, DRAW_ACTION
from rummy_env.game import GameState
from rummy_env.ruleset import make_ruleset

BASIC_2P = make_ruleset("basic", 2)

# ----------------------------------------------------------------------------- interval math


def test_wilson_interval_known_values():
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(0.403832, abs=1e-6) and high == pytest.approx(0.596168, abs=1e-6)
    assert wilson_interval(0, 10) == (0.0, pytest.approx(0.277533, abs=1e-6))
    assert wilson_interval(10, 10) == (pytest.approx(0.722467, abs=1e-6), 1.0)
    assert wilson_interval(1, 4) == (pytest.approx(0.045587, abs=1e-6), pytest.approx(0.699358, abs=2e-6))
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(5, 3)


def test_mean_interval_known_values():
    mean, low, high = mean_interval([1, 2, 3, 4, 5])
    half = 1.959963984540054 * math.sqrt(2.5 / 5)
    assert mean == 3 and low == pytest.approx(3 - half) and high == pytest.approx(3 + half)
    assert mean_interval([7.0, 7.0, 7.0]) == (7.0, 7.0, 7.0)
    single = mean_interval([4.0])
    assert single[0] == 4.0 and math.isnan(single[1]) and math.isnan(single[2])


def test_rates_and_points_are_written_as_percent_and_signed_points_with_their_intervals():
    assert percent_text(0.543, 0.503, 0.583) == "54.3% [50.3, 58.3]"
    assert percent_text(math.nan, 0.0, 1.0) == "n/a"  # nothing decided: no placeholder rate
    assert points_text(10.8, 7.1, 14.5) == "+10.8 [+7.1, +14.5]"
    assert points_text(-0.24, -0.61, 0.13) == "-0.2 [-0.6, +0.1]"
    assert points_text(3.0, math.nan, math.nan) == "+3.0 n/a"


def test_the_printed_table_shows_rates_in_percent(capsys):
    config = ArenaConfig("basic", ("random", "rule"), hands=8, seed=2)
    summary = summarize(config, run_arena(config, progress=False))
    arena.print_summary(summary)
    out = capsys.readouterr().out
    for row in summary["agents"]:
        assert percent_text(row["win_rate"], row["win_rate_low"], row["win_rate_high"]) in out
        assert points_text(row["mean_points"], row["points_low"], row["points_high"]) in out
    assert "0." + "000 [" not in out and "%" in out


def test_elo_of_a_planted_case():
    """A beats B 100 times: with half a win each way added, the gap is 400 log10(100.5 / 0.5)."""
    a, b = elo_ratings(2, [(0, 1, 1.0)] * 100)
    assert a - b == pytest.approx(400 * math.log10(201), rel=1e-6)
    assert (a + b) / 2 == pytest.approx(1500)
    assert expected_score(a, b) == pytest.approx(100.5 / 101, rel=1e-6)


def test_elo_is_even_for_even_results_and_ordered_for_a_chain():
    assert elo_ratings(2, [(0, 1, 1.0), (1, 0, 1.0)] * 20) == pytest.approx([1500, 1500])
    strong, middle, weak = elo_ratings(3, [(0, 1, 0.7), (1, 2, 0.7), (0, 2, 0.9)] * 30)
    assert strong > middle > weak


def test_openskill_ranks_the_usual_winner_first():
    games = [([0, 1, 2], [1, 2, 3])] * 30
    ratings = openskill_ratings(3, games)
    assert ratings[0]["ordinal"] > ratings[1]["ordinal"] > ratings[2]["ordinal"]


# ----------------------------------------------------------------------------- the summary on a planted case


def planted_records(deals: int) -> list[dict]:
    """Agent 0 wins every hand from either seat and takes 30 points off agent 1."""
    records = []
    for deal in range(deals):
        for rotation, seats in enumerate(([0, 1], [1, 0])):
            winner = seats.index(0)
            points = [30 if s == winner else -30 for s in range(2)]
            records.append({"table": 0, "deal": deal, "rotation": rotation, "seats": seats, "deal_key": deal,
                            "outcome": "declare", "winner": winner, "payments": [0 if p > 0 else 30 for p in points],
                            "points": points, "turns": 20})
    return records


def test_summary_of_an_agent_that_always_wins_against_one_that_cannot():
    config = ArenaConfig(game="indian", agents=("winner", "loser"), hands=100)
    summary = summarize(config, planted_records(50))
    winner, loser = summary["agents"]
    assert (winner["units"], winner["wins"], loser["wins"]) == (100, 100, 0)
    assert winner["win_rate"] == 1.0 and loser["win_rate"] == 0.0
    assert (winner["win_rate_low"], winner["win_rate_high"]) == wilson_interval(100, 100)
    assert loser["win_rate_high"] == pytest.approx(0.036994, abs=1e-6)
    assert (winner["mean_points"], winner["points_low"], winner["points_high"]) == (30.0, 30.0, 30.0)
    assert loser["mean_points"] == -30.0
    assert winner["rating"] - loser["rating"] == pytest.approx(400 * math.log10(201), rel=1e-6)
    assert summary["tables"][0]["wins"] == {"winner": 100, "loser": 0}


class NeverMelds(Agent):
    """Basic Rummy: draws from the stock and throws the drawn card back, so it can never go out."""

    name = "never-melds"

    def __init__(self, game, num_players):
        super().__init__(make_ruleset(game, num_players))
        self.reader = ObservationReader(make_ruleset(game, num_players))
        self.before: list[int] = []

    def act(self, observation, action_mask):
        hand = self.reader.hand(observation)
        if action_mask[DRAW_ACTION] and not action_mask[DISCARD_BASE:DISCARD_BASE + 53].any():
            self.before = hand
            return DRAW_ACTION
        drawn = next(c for c in range(53) if hand[c] > self.before[c])
        return DISCARD_BASE + drawn


def test_planted_real_games_the_agent_that_cannot_win_never_does():
    config = ArenaConfig(game="basic", agents=("rule", "never"), hands=24, seed=3)

    def factory(spec, index):
        return RuleAgent(make_ruleset("basic", 2)) if spec == "rule" else NeverMelds("basic", 2)

    records = run_arena(config, progress=False, factory=factory)
    summary = summarize(config, records)
    rule, never = summary["agents"]
    assert never["wins"] == 0 and never["win_rate_low"] == 0.0
    assert rule["wins"] + rule["stalemates"] + rule["cut_offs"] == rule["units"] == 24
    assert rule["wins"] >= 20 and rule["mean_points"] > 0


# ----------------------------------------------------------------------------- tables, seats, duplicate deals


def test_seat_tables_round_robin_and_alternate_fill():
    assert seat_tables(3, 2) == [(0, 1), (0, 2), (1, 2)]
    assert seat_tables(4, 3) == [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]
    assert seat_tables(2, 3) == [(0, 1, 0), (1, 0, 1)]
    assert seat_tables(2, 4) == [(0, 1, 0, 1)]
    assert seat_tables(1, 2) == [(0, 0)]
    assert rotations((0, 1, 2)) == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    for table in seat_tables(2, 3):  # every agent sits in every seat across the rotations
        for agent in set(table):
            assert all(any(r[s] == agent for r in rotations(table)) for s in range(3))


class FirstLook(Agent):
    """Plays like a random agent and records every hand it is shown before drawing."""

    def __init__(self, game, num_players, tag, shown):
        super().__init__(make_ruleset(game, num_players))
        self.name = tag
        self.inner = RandomAgent(make_ruleset(game, num_players))
        self.reader = ObservationReader(make_ruleset(game, num_players))
        self.shown = shown

    def reset(self, seed=None):
        self.inner.reset(seed)

    def act(self, observation, action_mask):
        if action_mask[DRAW_ACTION]:
            self.shown.setdefault(self.name, []).append(tuple(self.reader.hand(observation)))
        return self.inner.act(observation, action_mask)


@pytest.mark.parametrize("game,players", [("indian", 2), ("romi", 3), ("basic", 4)])
def test_duplicate_deals_replay_the_same_shuffle_with_seats_rotated(game, players):
    """Every agent is dealt every seat's cards of each deal: one rotation of the seating per hand."""
    config = ArenaConfig(game=game, agents=tuple(f"a{i}" for i in range(players)), num_players=players,
                         hands=2 * players, seed=7, options={"max_turns": 3 * players})
    shown: dict = {}
    records = run_arena(config, progress=False, factory=lambda spec, i: FirstLook(game, players, spec, shown))
    assert len(records) == 2 * players
    for deal in (0, 1):
        hands = [r for r in records if r["deal"] == deal]
        assert len({r["deal_key"] for r in hands}) == 1
        assert [r["seats"] for r in hands] == [list(r) for r in rotations(tuple(range(players)))]
        dealt = GameState(make_ruleset(game, players, max_turns=3 * players), arena.deal_seed(7, deal), 0).hands
        for name in config.agents:  # each agent was shown each seat's dealt hand at its first draw
            assert all(tuple(hand) in shown[name] for hand in dealt)
    assert records[0]["deal_key"] != records[players]["deal_key"]


# Records of runs recorded when the arena still played each hand on its own, one move at a time
# (before it played through rummy_env.vector): every record (deal, seats, outcome, winner,
# payments, points, turns) must be the same, so the CRC-32 of their JSON is pinned, with the
# per-agent wins and mean points to read at a glance. The hands' action ids, kept since for
# game records, are left out of the pinned JSON (tests/test_records.py replays them).


def pinned_json(records: list[dict]) -> bytes:
    import json

    return json.dumps([{k: v for k, v in r.items() if k != "hands"} for r in records], sort_keys=True).encode()


PINNED_RUNS = [
    (("indian", ("random", "rule"), 2, 12, False, {}), [(0, -95.8333), (12, 95.8333)], 0xa1829bc2),
    (("basic", ("random", "rule"), 2, 12, False, {}), [(0, -45.5833), (10, 45.5833)], 0x89b594e1),
    (("romi", ("random", "rule"), 2, 12, False, {}), [(4, -32.9167), (8, 32.9167)], 0xd99dccf1),
    (("indian", ("rule", "rule"), 2, 12, False, {}), [(6, 0.0), (6, 0.0)], 0xfc56eab1),
    (("basic", ("rule", "rule"), 2, 12, False, {}), [(6, 0.0), (6, 0.0)], 0x20dd70),
    (("romi", ("rule", "rule", "random"), 3, 12, False, {}), [(6, 27.0), (5, 17.3333), (1, -44.3333)], 0xf74d347d),
    (("basic", ("rule", "rule"), 2, 12, True, {}), [(6, 0.0), (6, 0.0)], 0x9e9e6df1),
    (("indian", ("random", "rule"), 2, 12, True, {"match_target": 120}), [(0, -185.3333), (12, 185.3333)], 0x2109033f),
]


@pytest.mark.parametrize(("case", "results", "crc"), PINNED_RUNS, ids=lambda v: str(v)[:40])
def test_same_seed_same_records_as_before_the_vector_loop(case, results, crc):
    """Seed 4: the hands, wins and points of each game (hands and matches, I8, B6, R8) are unchanged."""
    import zlib

    game, agents, players, hands, matches, options = case
    config = ArenaConfig(game=game, agents=agents, hands=hands, num_players=players, seed=4, matches=matches,
                         options=options)
    records = run_arena(config, progress=False)
    summary = summarize(config, records)
    assert [(row["wins"], round(row["mean_points"], 4)) for row in summary["agents"]] == results
    assert zlib.crc32(pinned_json(records)) == crc


def test_same_records_as_before_over_several_tasks():
    """20 deals are two tasks of DEALS_PER_TASK deals; the records are those of hands played one by one."""
    import zlib

    assert arena.DEALS_PER_TASK < 20
    config = ArenaConfig(game="basic", agents=("random", "rule"), hands=40, seed=9)
    records = run_arena(config, progress=False)
    assert zlib.crc32(pinned_json(records)) == 0xfc97001e


class Batched(Agent):
    """A random player with its own act_batch (so one instance plays every hand); counts its calls."""

    name = "batched"

    def __init__(self, game, num_players):
        super().__init__(make_ruleset(game, num_players))
        self.inner = RandomAgent(make_ruleset(game, num_players))
        self.rows: list[int] = []

    def act(self, observation, action_mask):
        return self.inner.act(observation, action_mask)

    def act_batch(self, observations, masks):
        self.rows.append(len(masks))
        return np.array([self.inner.act(o, m) for o, m in zip(observations, masks)], dtype=np.int64)


def test_an_agent_with_act_batch_acts_for_many_hands_at_once():
    """One Batched instance is asked for the rows of many hands in one call; a plain agent gets one
    instance per hand in play (it may keep state within a hand)."""
    built: list[Agent] = []

    def factory(spec, index):
        built.append(Batched("basic", 2) if spec == "batched" else RandomAgent(make_ruleset("basic", 2)))
        return built[-1]

    config = ArenaConfig(game="basic", agents=("batched", "random"), hands=2 * arena.DEALS_PER_TASK, seed=1)
    records = run_arena(config, progress=False, factory=factory)
    assert len(records) == 2 * arena.DEALS_PER_TASK
    batched = [a for a in built if isinstance(a, Batched)]
    assert len(batched) == 1 and sum(isinstance(a, RandomAgent) for a in built) == 2 * arena.DEALS_PER_TASK
    rows = batched[0].rows
    assert max(rows) > arena.DEALS_PER_TASK // 2  # the seats of many hands in one call
    assert sum(rows) > sum(r["turns"] for r in records) // 2 - len(rows)  # every one of its decisions came through


def test_results_do_not_depend_on_the_number_of_workers():
    config = ArenaConfig(game="basic", agents=("random", "rule"), hands=8, seed=5)
    one = run_arena(config, workers=1, progress=False)
    two = run_arena(config, workers=2, progress=False)
    assert one == two
    assert len(one) == 8
    again = run_arena(ArenaConfig(game="basic", agents=("random", "rule"), hands=8, seed=6), workers=1, progress=False)
    assert again != one


def test_full_matches_reach_the_target():
    config = ArenaConfig(game="basic", agents=("random", "rule"), hands=2, matches=True, seed=1)
    records = run_arena(config, progress=False)
    assert len(records) == 2
    for record in records:
        assert record["outcome"] == "match"
        assert max(record["totals"]) >= 100 and record["winners"]
        assert record["hands_played"] >= 1
    summary = summarize(config, records)
    assert summary["unit"] == "match" and summary["agents"][1]["wins"] == 2


def test_three_players_get_openskill_ratings():
    config = ArenaConfig(game="romi", agents=("random", "rule", "random"), num_players=3, hands=6, seed=2)
    summary = summarize(config, run_arena(config, progress=False))
    kinds = {row["kind"] for row in summary["agents"]}
    assert kinds == {"openskill"}
    names = [row["agent"] for row in summary["agents"]]
    assert names == ["random", "rule", "random#2"]
    assert summary["agents"][1]["rating"] > max(summary["agents"][0]["rating"], summary["agents"][2]["rating"])


# ----------------------------------------------------------------------------- mixed tables


def test_a_mixed_table_seats_exactly_the_agents_given_in_every_rotation():
    """``ppo:X rule rule random``-style tables: one table of exactly those specs (one repeated), rotated."""
    config = ArenaConfig(game="basic", agents=("rule", "random", "rule", "random"), num_players=4, hands=8, seed=3,
                         table=True)
    assert config.tables == [(0, 1, 2, 3)] and config.fair_share == 0.25
    records = run_arena(config, progress=False)
    assert [r["seats"] for r in records] == [list(r) for r in rotations((0, 1, 2, 3))] * 2
    summary = summarize(config, records)
    rows = summary["agents"]
    assert [r["agent"] for r in rows] == ["rule", "random", "rule#2", "random#2"]
    assert [r["units"] for r in rows] == [8, 8, 8, 8] and {r["kind"] for r in rows} == {"openskill"}
    decided_hands = sum(r["winner"] is not None for r in records)
    assert sum(r["wins"] for r in rows) == decided_hands and all(r["decided"] == decided_hands for r in rows)
    assert all(r["fair_share"] == 0.25 for r in rows)
    rule_share = rows[0]["wins"] + rows[2]["wins"]
    assert rule_share > rows[1]["wins"] + rows[3]["wins"]


def test_round_robin_and_a_table_of_as_many_agents_as_seats_play_the_same_hands():
    """The round robin stays the default; with one agent per seat it is that one table."""
    agents = ("rule", "random", "random")
    table = ArenaConfig(game="romi", agents=agents, num_players=3, hands=6, seed=1, table=True)
    robin = ArenaConfig(game="romi", agents=agents, num_players=3, hands=6, seed=1)
    assert run_arena(table, progress=False) == run_arena(robin, progress=False)
    assert ArenaConfig(game="romi", agents=agents, num_players=2).tables == [(0, 1), (0, 2), (1, 2)]


def planted_three_seat_records() -> list[dict]:
    """Three deals at a table of 3: agent 0 wins every hand of deals 0 and 1 from any seat, and
    deal 2 is a stalemate (G8) in every rotation; the winner takes 20 from each other seat."""
    records = []
    for deal in range(3):
        for rotation, seats in enumerate(rotations((0, 1, 2))):
            if deal == 2:
                winner, points, outcome = None, [0, 0, 0], "stalemate"
            else:
                winner = seats.index(0)
                points, outcome = [40 if s == winner else -20 for s in range(3)], "declare"
            records.append({"table": 0, "deal": deal, "rotation": rotation, "seats": list(seats), "deal_key": deal,
                            "outcome": outcome, "winner": winner, "points": points, "turns": 30,
                            "payments": [0 if p >= 0 else 20 for p in points]})
    return records


def test_shares_count_decided_hands_only_against_the_fair_share():
    config = ArenaConfig(game="romi", agents=("winner", "b", "c"), num_players=3, hands=9, table=True)
    rows = summarize(config, planted_three_seat_records())["agents"]
    winner, b, c = rows
    assert (winner["units"], winner["wins"], winner["decided"]) == (9, 6, 6)
    assert winner["win_rate"] == pytest.approx(6 / 9) and winner["share"] == 1.0
    assert (winner["share_low"], winner["share_high"]) == wilson_interval(6, 6)
    assert b["share"] == c["share"] == 0.0 and b["share_high"] == wilson_interval(0, 6)[1]
    assert [r["fair_share"] for r in rows] == [1 / 3] * 3
    assert winner["mean_points"] == pytest.approx((40 * 6 + 0 * 3) / 9)
    assert winner["rating"] > b["rating"] and winner["stalemates"] == 3


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_summary_invariants_of_any_table(data):
    """Any results at a table of N: the wins add up to the decided hands, each seat's share is its
    wins over the decided hands it sat in, and the points of a zero-sum game add up to zero."""
    players = data.draw(st.integers(2, 6), label="players")
    deals = data.draw(st.integers(1, 4), label="deals")
    records = []
    for deal in range(deals):
        for rotation, seats in enumerate(rotations(tuple(range(players)))):
            winner = data.draw(st.none() | st.integers(0, players - 1))
            owed = data.draw(st.lists(st.integers(0, 80), min_size=players, max_size=players))
            payments = [0 if s == winner else owed[s] for s in range(players)] if winner is not None else [0] * players
            points = [sum(payments) if s == winner else -payments[s] for s in range(players)]
            records.append({"table": 0, "deal": deal, "rotation": rotation, "seats": list(seats), "deal_key": deal,
                            "outcome": "stalemate" if winner is None else "declare", "winner": winner,
                            "points": points, "payments": payments, "turns": 10})
    game = "indian" if players > 4 else "basic"
    config = ArenaConfig(game=game, agents=tuple(f"a{i}" for i in range(players)), num_players=players,
                         hands=deals * players, table=True)
    rows = summarize(config, records)["agents"]
    decided_hands = sum(r["winner"] is not None for r in records)
    assert sum(r["wins"] for r in rows) == decided_hands
    assert all(r["decided"] == decided_hands and r["units"] == len(records) for r in rows)
    for r in rows:
        if decided_hands:
            assert r["share"] == r["wins"] / decided_hands and r["share_low"] <= r["share"] <= r["share_high"]
        else:
            assert math.isnan(r["share"])
    assert sum(r["mean_points"] for r in rows) == pytest.approx(0.0, abs=1e-9)
    assert {r["kind"] for r in rows} == {"elo" if players == 2 else "openskill"}


def test_the_cli_seats_a_mixed_table_and_prints_shares_against_the_fair_share(tmp_path, capsys):
    out = tmp_path / "table.json"
    summary = arena.run_cli(["--game", "basic", "--agents", "rule", "rule", "random", "random", "--table", "--hands",
                             "4", "--workers", "1", "--no-progress", "--json", str(out)])
    assert summary["config"]["num_players"] == 4 and summary["config"]["table"] is True
    assert summary["config"]["tables"] == [[0, 1, 2, 3]]
    printed = capsys.readouterr().out
    assert "one mixed table" in printed and "fair 25.0%" in printed
    for row in summary["agents"]:
        assert percent_text(row["share"], row["share_low"], row["share_high"]) in printed
    assert json.loads(out.read_text())["agents"][0]["fair_share"] == 0.25


# ----------------------------------------------------------------------------- rule beats random


@pytest.mark.parametrize("game", ["indian", "basic", "romi"])
def test_rule_agent_beats_random_clearly(game):
    config = ArenaConfig(game=game, agents=("random", "rule"), hands=240, seed=11)
    summary = summarize(config, run_arena(config, progress=False))
    random_row, rule_row = summary["agents"]
    assert rule_row["win_rate_low"] > 0.8, rule_row
    assert rule_row["points_low"] > 20, rule_row
    assert random_row["wins"] < 0.1 * random_row["units"]
    assert rule_row["rating"] > random_row["rating"] + 300


# ----------------------------------------------------------------------------- the CLI


def test_cli_help(capsys):
    with pytest.raises(SystemExit) as exit_info:
        arena.main(["--help"])
    assert exit_info.value.code == 0
    assert "--agents" in capsys.readouterr().out


def test_cli_bad_agent_fails_before_any_game(capsys, tmp_path, monkeypatch):
    played = []
    monkeypatch.setattr(arena, "play_deals", lambda *a, **k: played.append(a))
    with pytest.raises(SystemExit) as exit_info:
        arena.main(["--game", "indian", "--agents", "random", f"ppo:{tmp_path / 'missing.pt'}", "--hands", "4"])
    assert exit_info.value.code == 2
    assert "missing.pt" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        arena.main(["--game", "indian", "--agents", "random", "bogus", "--hands", "4"])
    assert "unknown agent spec 'bogus'" in capsys.readouterr().err
    assert played == []


def test_cli_writes_csv_json_and_png(tmp_path):
    out = tmp_path / "r"
    summary = arena.run_cli(["--game", "basic", "--agents", "random", "rule", "--hands", "4", "--workers", "1",
                          "--no-progress", "--csv", f"{out}.csv", "--json", f"{out}.json", "--plot", f"{out}.png"])
    rows = list(csv.DictReader(open(f"{out}.csv")))
    assert [r["agent"] for r in rows] == ["random", "rule"]
    assert int(rows[0]["units"]) == 4
    data = json.loads(open(f"{out}.json").read())
    assert data["config"]["game"] == "basic" and data["agents"][1]["wins"] == summary["agents"][1]["wins"]
    png = open(f"{out}.png", "rb").read()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000


def test_arena_refuses_bad_configs():
    with pytest.raises(AgentError, match="num_players=9"):
        run_arena(ArenaConfig(game="romi", agents=("random",), num_players=9), progress=False)
    with pytest.raises(AgentError, match="unknown game"):
        run_arena(ArenaConfig(game="gin", agents=("random",)), progress=False)
    with pytest.raises(AgentError, match="unknown option"):
        run_arena(ArenaConfig(game="basic", agents=("random",), options={"wild_joker": True}), progress=False)


def test_agents_that_break_the_mask_are_stopped():
    class Cheater(Agent):
        name = "cheater"

        def act(self, observation, action_mask):
            return int(np.flatnonzero(action_mask == 0)[0])

    config = ArenaConfig(game="basic", agents=("cheater", "random"), hands=2)
    with pytest.raises(AgentError, match="'cheater' in seat 0 chose action .* which its mask forbids"):
        run_arena(config, progress=False,
                  factory=lambda spec, i: Cheater(BASIC_2P) if spec == "cheater" else RandomAgent(BASIC_2P))


@pytest.mark.slow
@pytest.mark.timeout(600)  # the hang this guards against is a worker that never answers
def test_policy_checkpoint_with_two_workers_does_not_hang(tmp_path):
    """A parent that loaded torch (and started its threads) must not fork arena workers: a forked
    child could hang in its first torch call. The run finishes, with the same records as one worker."""
    import subprocess
    import sys

    torch = pytest.importorskip("torch")
    from agents.policy import build_network, save_checkpoint

    torch.manual_seed(0)
    path = save_checkpoint(tmp_path / "mlp.pt", build_network("indian", 2, {"kind": "mlp", "hidden": [32]}),
                           "indian", 2)
    results = []
    for workers in ("2", "1"):
        out = tmp_path / f"w{workers}.json"
        subprocess.run([sys.executable, "-m", "agents.arena", "--game", "indian", "--agents", f"ppo:{path}", "rule",
                        "--hands", "8", "--workers", workers, "--json", str(out), "--no-progress"],
                       check=True, timeout=240, capture_output=True)
        results.append(json.loads(out.read_text())["agents"])
    assert results[0] == results[1]
