"""The standard benchmark (``agents.bench``, docs/agents.md "The standard benchmark"): the versioned
deal set, the same figures whatever the workers and run, the rating, the leaderboard, a plug-in
benchmarked, bad input named.

The short runs play Indian Rummy at 3 players: its panel there is random and the rule agent (no
policy ships for 3 players, the search agent plays at 2 only), so every run is a few seconds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.arena import deal_seed
from agents.base import AgentError
from agents.bench import (BENCHMARK_DEALS_V1, DealSet, bench, deal_set, leaderboard_markdown, load_runs, main,
                          markdown, write_leaderboard, write_run)
from agents.panel import left_out, panel
from agents.stats import choice_ratings, elo_ratings
from rummy_env.game import shuffled_deck
from rummy_env.ruleset import make_ruleset

ROOT = Path(__file__).resolve().parents[1]
GREEDY = f"{ROOT / 'examples' / 'my_agent.py'}:GreedyAgent"
SHORT = deal_set("indian", 3, 51)
"""17 deals: two of the arena's tasks of 16, so that two workers split them."""


def figures(result: dict) -> dict:
    """What a run reports, without where it was played."""
    return {k: v for k, v in result.items() if k != "path"}


@pytest.fixture(scope="module")
def rule_run() -> dict:
    return bench("rule", SHORT, workers=1, progress=False)[0]


def test_the_deal_set_id_and_its_deals_never_change():
    deals = DealSet("indian", 2, 1000)
    assert BENCHMARK_DEALS_V1 == "bench-v1"
    assert deals.id == "bench-v1/indian-2p/1000"
    assert deals.seed == 3050263731 == DealSet("indian", 2, 40).seed  # more hands: the same deals and more
    assert DealSet("basic", 2, 1000).seed == 3806894872
    assert DealSet("indian", 6, 1000).seed != deals.seed
    first = shuffled_deck(make_ruleset("indian", 2), deal_seed(deals.seed, 0))
    assert first[-5:] == [41, 2, 39, 22, 4]  # the top of the first deal's deck, the same for everyone
    assert deal_set("indian", 3, 50).hands == 51  # whole deals: every seat rotation of each


def test_the_panel_says_what_a_table_goes_without():
    assert panel("indian", 3) == ["random", "rule"]
    notes = left_out("indian", 3)
    assert set(notes) == {"pretrained:indian", "search"}
    assert "no policy ships for 3 players (shipped for: 2 players, 6 players)" in notes["pretrained:indian"]
    assert panel("basic", 2) == ["random", "rule", "rule:hold_until=3", "pretrained:basic", "search"]
    assert left_out("basic", 2) == {}


def test_a_run_reports_each_opponent_and_a_rating(rule_run):
    assert rule_run["deal_set"] == "bench-v1/indian-3p/51"
    assert [row["opponent"] for row in rule_run["opponents"]] == ["random", "rule"]
    against_random, mirror = rule_run["opponents"]
    assert against_random["hands"] == mirror["hands"] == 51
    assert against_random["share"] > 0.8 > 1 / 3 == pytest.approx(mirror["fair_share"])
    assert mirror["points"] == pytest.approx(0.0)  # the same agent in every seat of every rotation
    assert rule_run["panel_ratings"]["rule"] == 1500.0
    assert rule_run["panel_ratings"]["random"] < 1200
    # the panel's rule agent met random with the seats the other way round, so the rule agent
    # benchmarked is near its rating, not on it
    assert abs(rule_run["rating"] - 1500.0) < 100
    assert "pretrained:indian" in rule_run["left_out"]
    text = markdown(rule_run)
    assert "`bench-v1/indian-3p/51`" in text and "Left out: `pretrained:indian`" in text


def test_a_deterministic_agent_gets_the_same_figures_in_every_run_and_with_any_workers(rule_run):
    again = bench("rule", SHORT, workers=1, progress=False)[0]
    two_workers = bench("rule", SHORT, workers=2, progress=False)[0]
    assert figures(again) == figures(rule_run) == figures(two_workers)
    random_runs = [bench("random", SHORT, workers=w, progress=False)[0] for w in (1, 2)]
    assert random_runs[0] == random_runs[1]
    assert random_runs[0]["panel_ratings"] == rule_run["panel_ratings"]  # the panel's ratings: the same in every run


def test_choice_ratings_are_elo_at_two_players_and_fair_at_any_table():
    elo = elo_ratings(2, [(0, 1, 1.0)] * 60 + [(0, 1, 0.0)] * 40)
    luce = choice_ratings(2, [((0, 1), {0: 60, 1: 40})])
    assert luce[0] - luce[1] == pytest.approx(elo[0] - elo[1])
    # one seat against three copies winning a quarter of the hands is level with them
    assert choice_ratings(2, [((0, 1, 1, 1), {0: 25, 1: 75})]) == pytest.approx([0.0, 0.0], abs=1e-6)
    # held fixed at 100, the other wins 10 to 1 (with the prior's half win each way): about 400 higher
    fitted = choice_ratings(2, [((0, 1), {0: 99.5, 1: 9.5})], fixed={1: 100.0})
    assert fitted[1] == 100.0 and fitted[0] == pytest.approx(500.0)


def test_the_leaderboard_merges_runs_one_table_per_deal_set(rule_run, tmp_path):
    random_run = bench("random", SHORT, workers=1, progress=False)[0]
    write_run(rule_run, tmp_path / "runs" / "rule")
    write_run(random_run, tmp_path / "runs" / "random")
    other = dict(rule_run, deal_set="bench-v1/indian-3p/99")
    write_run(other, tmp_path / "runs" / "rule-more")
    groups = load_runs(tmp_path / "runs")
    assert list(groups) == ["bench-v1/indian-3p/51", "bench-v1/indian-3p/99"]
    assert [run["spec"] for run in groups["bench-v1/indian-3p/51"]] == ["rule", "random"]  # best rating first
    text = leaderboard_markdown(groups)
    assert text.count("#### Deal set") == 2
    assert f"| `rule` | {rule_run['rating']:.0f} | " in text
    write_leaderboard(groups, tmp_path / "board")
    assert (tmp_path / "board" / "leaderboard.png").stat().st_size > 0
    rows = (tmp_path / "board" / "leaderboard.csv").read_text().splitlines()
    assert len(rows) == 1 + 3 * 2 and rows[0].startswith("deal_set,spec,opponent")


def test_the_leaderboard_refuses_one_agent_twice_or_two_panels(rule_run, tmp_path):
    write_run(rule_run, tmp_path / "a")
    write_run(rule_run, tmp_path / "b")
    with pytest.raises(AgentError, match="rule on bench-v1/indian-3p/51 twice"):
        load_runs(tmp_path)
    (tmp_path / "b" / "bench.json").unlink()
    moved = dict(rule_run, spec="rule#2", panel_ratings=dict(rule_run["panel_ratings"], random=0.0))
    write_run(moved, tmp_path / "c")
    with pytest.raises(AgentError, match="different panels"):
        load_runs(tmp_path)
    (tmp_path / "a" / "empty").mkdir()
    with pytest.raises(AgentError, match="no benchmark runs"):
        load_runs(tmp_path / "a" / "empty")


def test_a_plug_in_is_benchmarked_from_the_command_line_with_records(tmp_path, capsys):
    out = tmp_path / "greedy"
    record = tmp_path / "greedy.jsonl"
    assert main([GREEDY, "--game", "indian", "--players", "3", "--hands", "51", "--workers", "2",
                 "--out", str(out), "--record", str(record)]) == 0
    printed = capsys.readouterr().out
    assert "deal set bench-v1/indian-3p/51" in printed and "left out: search" in printed
    result = json.loads((out / "bench.json").read_text())
    assert result["name"] == "my_agent.py:GreedyAgent" and result["spec"] == GREEDY
    assert result["opponents"][0]["share"] > 1 / 3  # it lays its melds down: better than random
    assert result["rating"] < result["panel_ratings"]["rule"]
    assert all((out / name).stat().st_size > 0 for name in ("bench.md", "bench.csv", "bench.png"))
    lines = record.read_text().splitlines()
    assert len(lines) == 2 * 51 and json.loads(lines[0])["players"][0] == GREEDY

    from rummy_env.records import main as records_main

    assert records_main(["check", str(record)]) == 0


def test_the_default_folder_is_named_after_the_spec(tmp_path, monkeypatch):
    from agents.bench import default_out

    assert default_out("rule:hold_until=3", DealSet("basic", 2, 10)) == Path("bench/rule_hold_until_3-basic-2p")
    assert default_out(GREEDY, SHORT) == Path("bench/my_agent.py_GreedyAgent-indian-3p")


@pytest.mark.parametrize("argv, named", [
    (["rule", "--game", "gin"], "invalid choice: 'gin'"),
    (["rule", "--game", "basic", "--players", "7"], "7"),
    (["rule", "--game", "basic", "--hands", "0"], "--hands 0: expected at least 1"),
    (["rule"], "give SPEC and --game"),
    (["nonsense", "--game", "basic"], "unknown agent spec 'nonsense'"),
    (["missing/agent.py:Agent", "--game", "basic"], "no such file missing/agent.py"),
    (["rule", "--leaderboard", "bench"], "not both"),
    (["--leaderboard", "no/such/folder"], "no/such/folder: no such folder"),
])
def test_bad_input_is_named_before_any_hand_is_played(argv, named, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    assert named in capsys.readouterr().err
    assert not (tmp_path / "bench").exists()


def test_help_has_examples(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "rule --game indian" in text and "--leaderboard bench/" in text and "Examples" in text


def test_the_console_script_names_itself(monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["/venv/bin/rummy-bench"])
    with pytest.raises(SystemExit):
        main(["--help"])
    assert capsys.readouterr().out.startswith("usage: rummy-bench")
