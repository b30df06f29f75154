"""The recipes in configs/: one per shipped policy, each resolving to what its model card records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from agents.training.cli import main as cli_main
from agents.training.config import (CONFIGS, MACHINE_SETTINGS, ConfigError, TrainConfig, find_recipe, load_yaml,
                                    make_config, recipe_of, to_dict)

CARDS = sorted((Path(__file__).parent.parent / "agents" / "pretrained").glob("*.json"))


def card_of(path: Path) -> dict:
    return json.loads(path.read_text())["model_card"]


@pytest.mark.parametrize("card_path", CARDS, ids=lambda p: p.stem)
def test_every_card_names_a_recipe_that_resolves_to_its_settings(card_path):
    card = card_of(card_path)
    assert card["recipe"] == f"configs/{card_path.stem}.yaml"
    recipe = CONFIGS.parent / card["recipe"]
    resolved = to_dict(make_config(load_yaml(recipe), recipe.name))
    recorded = {k: v for k, v in card["trainer_config"].items() if k not in MACHINE_SETTINGS}
    differing = {k: (v, resolved.get(k, "not a setting")) for k, v in recorded.items() if resolved.get(k) != v}
    assert not differing, f"{card['recipe']}: card value, recipe value: {differing}"


@pytest.mark.parametrize("card_path", CARDS, ids=lambda p: p.stem)
def test_a_cards_settings_lead_back_to_its_recipe_as_ship_finds_it(card_path):
    card = card_of(card_path)
    assert str(recipe_of(card["trainer_config"]).relative_to(CONFIGS.parent)) == card["recipe"]
    assert recipe_of(card["trainer_config"] | {"learning_rate": 0.123}) is None  # a run with a setting of its own


def test_configs_hold_one_recipe_per_shipped_policy_and_the_default_run():
    assert {p.stem for p in CONFIGS.glob("*.yaml")} == {p.stem for p in CARDS} | {"default"}
    assert to_dict(make_config(load_yaml(CONFIGS / "default.yaml"))) == to_dict(make_config({}))


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*.yaml")), ids=lambda p: p.name)
def test_every_recipe_sets_only_what_differs_from_the_defaults_each_with_a_comment(path):
    lines = path.read_text().splitlines()
    values = load_yaml(path)
    defaults = to_dict(TrainConfig())
    same = [k for k, v in values.items() if k not in ("game", "num_players") and v == defaults[k]]
    assert not same, f"{path.name} repeats defaults: {same}"
    for index, line in enumerate(lines):  # a setting opens its block under a comment, or follows one that did
        if line and not line.startswith("#"):
            assert index > 0 and lines[index - 1].strip(), f"{path.name}: {line!r} has no comment"


def test_a_recipe_is_found_by_name_or_path(tmp_path):
    assert find_recipe("indian-2p") == CONFIGS / "indian-2p.yaml"
    assert find_recipe("indian-2p.yaml") == CONFIGS / "indian-2p.yaml"
    own = tmp_path / "mine.yaml"
    own.write_text("game: basic\n")
    assert find_recipe(str(own)) == own


def test_a_missing_config_lists_what_configs_holds(capsys):
    with pytest.raises(ConfigError, match=r"'indian-3p'.*basic-2p, basic-4p, default, indian-2p, indian-6p, "
                                          r"romi-2p, romi-4p"):
        find_recipe("indian-3p")
    with pytest.raises(SystemExit):
        cli_main(["--config", "indian-3p"])
    assert "romi-4p" in capsys.readouterr().err


def test_print_config_prints_the_resolved_settings_and_exits(capsys):
    assert cli_main(["--config", "romi-2p", "--seed", "7", "--print-config"]) == 0
    printed = yaml.safe_load(capsys.readouterr().out)
    expected = to_dict(make_config(load_yaml(CONFIGS / "romi-2p.yaml") | {"seed": 7}))
    assert printed == expected
    assert printed["oracle_decisions"] == 8_000_000 and printed["seed"] == 7
