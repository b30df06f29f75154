"""The benchmark scripts: their options are honoured and their output is meant for people."""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import ablations  # noqa: E402
import bench_clone  # noqa: E402
import bench_env  # noqa: E402
import bench_play  # noqa: E402
import bench_solver  # noqa: E402
import bench_train  # noqa: E402
import run_all  # noqa: E402
from rummy_env.cards import to_counts  # noqa: E402


@pytest.mark.timeout(60)  # a fixed warm-up of 20,000 hands a case took ~30 CPU seconds
def test_bench_solver_seconds_bounds_the_whole_run_warm_up_included(capsys):
    bench_solver.main(["--seconds", "0.02", "--runs", "1"])
    out = capsys.readouterr().out
    assert "indian_penalty_cold" in out and "min_deadwood_romi" in out


def test_bench_clone_counts_the_positions_its_teacher_is_asked(capsys):
    """Every position the teacher decides is a kept decision (docs/training.md, "What a run does")."""
    figures = bench_clone.main(["--decisions", "200", "--runs", "1", "--game", "basic", "--players", "3"])
    assert figures["kept"] >= 200 and figures["asked_per_kept"] == 1.0
    assert 0 < figures["teacher_share"] < 1
    assert "positions asked per kept one" in capsys.readouterr().out


@pytest.mark.parametrize("argv", [["--decisions", "0"], ["--runs", "0"], ["--teacher", "nope"],
                                  ["--game", "romi", "--teacher", "lookahead"], ["--players", "9"]])
def test_bench_clone_refuses_bad_options(argv):
    with pytest.raises(SystemExit):
        bench_clone.main(argv)


def test_bench_env_judges_targets_per_cpu_second():
    busy_machine = {"target": 20_000, "steps_per_s": 9_000, "steps_per_cpu_s": 25_000}
    slow_code = {"target": 20_000, "steps_per_s": 30_000, "steps_per_cpu_s": 15_000}
    assert bench_env.target_verdict(busy_machine) == "meets"
    assert bench_env.target_verdict(slow_code) == "below"


def test_bench_env_says_which_figure_is_judged(capsys):
    bench_env.main(["--seconds", "0.05", "--runs", "1", "--games", "basic", "--no-references"])
    assert "target (judged per CPU second)" in capsys.readouterr().out


def test_run_all_prints_tables_not_json():
    figures = {
        "machine": {"python": "3.11.9", "cpus": 2, "load": (1.0, 1.5, 2.0)},
        "engine": {"indian-2p": {"games_per_s": 167.0, "moves_per_s": 105_000.0}},
        "solver": {"indian_penalty": 86_000.0},
        "env": {"basic": {"env": "basic_rummy_v0", "players": 2, "steps_per_s": 27_000.0,
                          "steps_per_cpu_s": 28_000.0, "runs": [(27_000.0, 28_000.0)], "target": 20_000}},
        "agents": {"rule": {"indian": 3300.0, "basic": 4800.0}},
    }
    figures["play"] = {"basic": {"arena random-rule": 210.0, "arena rule-rule": 205.5, "search": 12.25}}
    text = run_all.report(figures)
    assert "{" not in text and '"' not in text
    assert "arena random-rule" in text and "205.5" in text and "12.2" in text
    assert "basic_rummy_v0" in text and "27,000" in text and "(meets)" in text
    assert "rule" in text and "3,300.0" in text and "105,000" in text


@pytest.mark.parametrize("argv", [["--seconds", "0"], ["--runs", "0"], ["--warmup", "-1"], ["--cases", "nope"],
                                  ["--cases", "indian_penalty_played"], ["--batch", "0"], ["--batch", "64,x"],
                                  ["--played-hands", "0"]])
def test_bench_solver_refuses_bad_options(argv):
    with pytest.raises(SystemExit):
        bench_solver.main(argv)


def test_bench_solver_times_the_cases_asked_for_batches_included(capsys):
    bench_solver.main(["--seconds", "0.01", "--runs", "1", "--batch", "64",
                       "--cases", "hand_penalty_structured,hand_penalties_romi_structured_64"])
    out = capsys.readouterr().out
    assert "hand_penalties_romi_structured_64" in out and "hand_penalty_structured" in out
    assert "min_deadwood_basic" not in out


@settings(max_examples=200, deadline=None)
@given(game=st.sampled_from(["indian", "basic", "romi"]), seed=st.integers(0, 10**6), wild=st.booleans())
def test_structured_hands_are_dealt_from_the_games_decks(game, seed, wild):
    size = bench_solver.HAND_SIZES[game]
    counts, wild_rank = bench_solver.structured_hand(random.Random(seed), game, size, wild and game == "indian")
    assert sum(counts) == size
    assert all(0 <= n <= c for n, c in zip(counts, to_counts(bench_solver.DECKS[game])))
    assert (wild_rank is not None) == (wild and game == "indian") and wild_rank in (None, *range(13))


def test_bench_play_prints_arena_and_search_rates(capsys):
    figures = bench_play.main(["--games", "basic", "--runs", "1", "--hands", "4", "--positions", "2"])
    assert set(figures["basic"]) == {"arena random-rule", "arena rule-rule", "search"}
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.split()[:1] == ["basic"])
    printed = [float(cell.replace(",", "")) for cell in row.split()[1:]]
    assert printed == pytest.approx([figures["basic"][c] for c in figures["basic"]], rel=1e-3, abs=0.05)
    assert all(0 < rate < float("inf") for rate in printed)  # rates over CPU time actually spent
    assert "decisions/s" in out


@pytest.mark.parametrize("argv", [["--runs", "0"], ["--hands", "1"], ["--positions", "0"]])
def test_bench_play_refuses_bad_options(argv):
    with pytest.raises(SystemExit):
        bench_play.main(argv)


# ------------------------------------------------------------------ ablations.py


@pytest.mark.parametrize("variant", sorted(ablations.VARIANTS))
def test_ablation_variants_are_valid_trainer_commands(variant, tmp_path):
    """Every variant's options parse into the trainer's config and change what they say."""
    from agents.training.cli import parse

    namespace = type("Arguments", (), {"game": "indian", "players": 2, "cpu_minutes": 8.0, "total_steps": 1_000_000,
                                       "workers": 1, "deals": 50, "opponents": None, "out": tmp_path, "extra": []})
    command = ablations.train_command(namespace, variant, seed=3)
    config = parse(command[2:])[0]
    defaults = parse(ablations.train_command(namespace, "defaults", seed=3)[2:])[0]
    changed = {name for name in vars(config) if getattr(config, name) != getattr(defaults, name)}
    assert config.seed == 3 and config.cpu_limit_minutes == 8.0 and config.run_dir.endswith(f"{variant}_s3")
    assert config.eval_opponents == ["rule", "pretrained:indian"]
    wanted = {"defaults": set(), "no-cloning": {"bc_warm_start"}, "no-shaping": {"shaping"},
              "self-play-only": {"pool_self_fraction"}, "wide-network": {"channels", "global_size"}}[variant]
    assert changed - {"run_dir"} == wanted


def test_ablation_table_gives_the_mean_and_t_interval_over_seeds(tmp_path):
    for seed, won, points in [(1, 0.50, 10.0), (2, 0.56, 14.0), (3, 0.62, 12.0)]:
        folder = tmp_path / f"defaults_s{seed}"
        folder.mkdir()
        result = {"hands": 400, "win_rate": won, "points": points}
        (folder / "results.json").write_text(__import__("json").dumps(
            {"final_evaluation": {"rule": result}, "learner_steps": 1_000_000, "cpu_seconds": 480.0}))
    table = ablations.collect(tmp_path, ["defaults", "no-shaping"], [1, 2, 3])
    assert list(table) == ["defaults"]  # a variant with no finished run is left out
    mean, low, high = table["defaults"]["opponents"]["rule"]["won"]
    assert mean == pytest.approx(56.0)
    assert high - mean == pytest.approx(4.303 * 6.0 / 3 ** 0.5)  # t(0.975, 2 df) x sd / sqrt(n)
    text = ablations.markdown(table)
    assert "| defaults | rule | 3 | 56.0% [41.1, 70.9] | +12.0 [+7.0, +17.0] | 50.0, 56.0, 62.0 | 1.00 | 8.0 |" in text
    assert ablations.t_interval([5.0]) == (5.0, 5.0, 5.0)


def test_ablation_table_leaves_out_a_cpu_total_below_its_part():
    good = {"cpu_seconds": 480.0, "cpu_seconds_main_process": 30.0}
    undercounted = {"cpu_seconds": 6.8, "cpu_seconds_main_process": 9.9}
    assert ablations._cpu_minutes(good) == 8.0
    assert math.isnan(ablations._cpu_minutes(undercounted))
    assert ablations._known_mean([8.0, math.nan, 6.0]) == "7.0" and ablations._known_mean([math.nan]) == "n/a"


def test_bench_train_times_the_table_size_asked_and_refuses_one_the_game_lacks(capsys, monkeypatch):
    """benchmarks/bench_train.py --players: every measured run is at that table; a count outside the
    game's range (römi seats 2-4, R1) or a rollout the trainer refuses is an error before any run."""
    for mode in bench_train.MODES.values():
        config = bench_train.bench_config("romi", 4, 3, 0, 1024, mode, {}, "cpu", "unused")
        assert (config.game, config.num_players, config.rollout_size) == ("romi", 4, 1024)
    asked = []
    figures = {"env_steps_per_s": 1.0, "learner_decisions_per_s": 1.0, "decisions_per_cpu_s": 1.0, "collect_share": 0.5}
    monkeypatch.setattr(bench_train, "measure", lambda *args: asked.append(args) or figures)
    assert bench_train.main(["--game", "romi", "--players", "4", "--settings", "default"]) == 0
    assert len(asked) == len(bench_train.MODES) and all(args[0] == "romi" and args[-1] == 4 for args in asked)
    assert capsys.readouterr().out.startswith("romi, 4 players")
    with pytest.raises(SystemExit):
        bench_train.main(["--game", "romi", "--players", "5"])
    assert "num_players=5 is out of range for 'romi'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench_train.main(["--rollout", "64"])
    assert "'minibatch_size' (512) is larger than 'rollout_size' (64)" in capsys.readouterr().err
