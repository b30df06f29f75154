"""Pretrained opponents per table size (docs/export.md "Pretrained opponents"): ``pretrained:GAME``
picks the policy shipped for the table's player count, ``ship`` writes the count into the file
names and the table results into the card, and a count with none is refused naming those there are."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

import agents.pretrained as pretrained
from agents import arena
from agents.base import AgentError
from agents.onnx_agent import OnnxAgent
from agents.registry import make_agent
from rummy_env.games import game_spec
from rummy_env.ruleset import GAMES, make_ruleset

torch = pytest.importorskip("torch")

from agents.policy import MaskedActorCritic, save_checkpoint  # noqa: E402
from agents.pretrained.ship import ship, summary_line  # noqa: E402
from rummy_env.encoding import num_actions, observation_size  # noqa: E402

SHIPPED = pretrained.PRETRAINED_DIR


def make_run(folder: Path, game: str, players: int, seed: int = 0, config: dict | None = None) -> Path:
    """A run folder with a small untrained policy as its best.pt (trained, it says, with ``config``)
    and the trainer's results.json."""
    torch.manual_seed(seed)
    model = MaskedActorCritic(observation_size(game, players), num_actions(game), hidden=[16])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps({"cpu_seconds_main_process": 7.5, "wall_seconds": 9.0}))
    return save_checkpoint(folder / "best.pt", model, game, players, config or {"num_players": players})


@pytest.fixture(scope="module")
def shipped_dir(tmp_path_factory) -> Path:
    """A pretrained folder holding Indian policies for 2 and 4 players, installed by ``ship``."""
    root = tmp_path_factory.mktemp("pretrained")
    dest = root / "shipped"
    for players in (2, 4):
        ship(make_run(root / f"indian-{players}", "indian", players, seed=players), hands=2 * players, seed=1,
             dest=dest, search_hands=2)
    return dest


@pytest.fixture
def installed(shipped_dir, monkeypatch) -> Path:
    monkeypatch.setattr(pretrained, "PRETRAINED_DIR", shipped_dir)
    return shipped_dir


# ----------------------------------------------------------------------------- shipping at N seats


def test_ship_names_the_files_by_game_and_player_count_and_cards_hold_the_table_results(installed):
    assert sorted(p.name for p in installed.iterdir()) == ["indian-2p.json", "indian-2p.onnx", "indian-4p.json",
                                                           "indian-4p.onnx"]
    card = pretrained.model_card("indian", 4)
    assert card["num_players"] == 4 and card["cpu_time_s"] == 7.5
    assert card["play"] == "python -m rummy_apps.play --game indian --players 4 --opponents pretrained:indian"
    assert [row["opponent"] for row in card["arena"]] == ["random", "rule"]
    for row in card["arena"]:
        assert (row["num_players"], row["opponents"], row["hands"], row["fair_share"]) == (4, 3, 8, 0.25)
        assert row["command"] == (f"python -m agents.arena --game indian --agents pretrained:indian "
                                  f"{' '.join([row['opponent']] * 3)} --table --hands 8 --seed 1")
        assert row["kind"] == "openskill" and row["wins"] <= row["decided"] <= row["hands"]
        assert 0 <= row["share_low"] <= row["share_high"] <= 1
    assert card["summary"] == [summary_line(row) for row in card["arena"]]
    assert "3 x rule (4 seats)" in card["summary"][1] and "fair share 25.0%" in card["summary"][1]
    assert card["replaces"] is None  # the first policy of its table replaces none
    two = pretrained.model_card("indian", 2)
    assert [row["opponent"] for row in two["arena"]] == ["random", "rule", "search"]  # agents.panel at 2 seats
    assert two["num_players"] == 2 and [row["opponents"] for row in two["arena"]] == [1, 1, 1]
    assert [row["hands"] for row in two["arena"]] == [4, 4, 2]  # the search agent on --search-hands
    assert two["arena"][0]["command"].endswith("--agents pretrained:indian random --table --hands 4 --seed 1")


def test_shipping_over_a_policy_plays_the_one_it_replaces_and_names_it(tmp_path):
    """The card's panel holds the policy being replaced (in Basic also ``rule:hold_until=3``), played
    from its file before it is overwritten; the card says which one it was."""
    dest, kept = tmp_path / "dest", tmp_path / "kept"
    first = ship(make_run(tmp_path / "first", "basic", 4, seed=1), hands=4, seed=2, dest=dest)[0]
    shutil.copytree(dest, kept)
    ship(make_run(tmp_path / "second", "basic", 4, seed=2), hands=4, seed=2, dest=dest)
    old = json.loads((kept / "basic-4p.json").read_text())["model_card"]
    card = json.loads((dest / "basic-4p.json").read_text())["model_card"]
    assert [row["opponent"] for row in old["arena"]] == ["random", "rule", "rule:hold_until=3"]
    assert [row["opponent"] for row in card["arena"]] == ["random", "rule", "rule:hold_until=3", "previous"]
    assert card["replaces"] == {"file": first.name, "shipped": old["shipped"], "run_dir": None,
                                "summary": old["summary"]}
    previous = card["arena"][3]
    assert previous["command"] is None and previous["opponents"] == 3 and previous["hands"] == 4
    assert card["summary"][3].startswith("against 3 x the policy it replaces (4 seats): won ")
    # the row again: the new policy against 3 copies of the kept old one, on the same deals
    again = arena.one_against_many(f"onnx:{dest / 'basic-4p.onnx'}", f"onnx:{kept / 'basic-4p.onnx'}", "basic", 4,
                                   4, seed=2)
    assert (again["wins"], again["decided"], again["mean_points"]) == (previous["wins"], previous["decided"],
                                                                       previous["mean_points"])


# ----------------------------------------------------------------------------- choosing by player count


def test_pretrained_picks_the_policy_of_the_table_s_player_count(installed):
    for players in (2, 4):
        agent = make_agent("pretrained:indian", make_ruleset("indian", players))
        assert isinstance(agent, OnnxAgent) and agent.num_players == players
        assert agent.policy.path == installed / f"indian-{players}p.onnx"
    assert pretrained.shipped_counts("indian") == [2, 4] and pretrained.shipped() == ["indian"]
    assert pretrained.shipped_for("indian", 4) and not pretrained.shipped_for("indian", 3)
    assert not pretrained.shipped_for("basic", 2) and not pretrained.shipped_for("chess", 2)


@pytest.mark.parametrize("players", [3, 5, 6])
def test_a_count_with_no_policy_is_refused_naming_the_counts_there_are(installed, players):
    with pytest.raises(AgentError) as refused:
        make_agent("pretrained:indian", make_ruleset("indian", players))
    message = str(refused.value)
    assert f"no policy for 'indian' at a table of {players}" in message
    assert "shipped for 2 players and 4 players only" in message
    assert f"indian-{players}p.onnx" in message and "python -m agents.pretrained.ship" in message


def test_a_game_with_no_policy_at_all_says_so(installed):
    with pytest.raises(AgentError, match=r"pretrained:romi: no policy for 'romi' at a table of 2 .*none is shipped "
                                         r"for any table size yet.*python -m agents.pretrained.ship"):
        make_agent("pretrained:romi", make_ruleset("romi", 2))
    with pytest.raises(AgentError, match="expected pretrained:GAME"):
        make_agent("pretrained:chess", make_ruleset("basic", 2))
    with pytest.raises(AgentError, match="pretrained:indian plays 'indian', not 'basic'"):
        make_agent("pretrained:indian", make_ruleset("basic", 2))
    with pytest.raises(AgentError, match="no policy for 'indian' at a table of 3"):
        pretrained.model_card("indian", 3)


def test_a_policy_filed_under_the_wrong_count_is_refused_naming_the_file_and_both_counts(installed, tmp_path,
                                                                                         monkeypatch):
    wrong = tmp_path / "wrong"
    wrong.mkdir()
    for suffix in (".onnx", ".json"):
        shutil.copyfile(installed / f"indian-2p{suffix}", wrong / f"indian-3p{suffix}")
    monkeypatch.setattr(pretrained, "PRETRAINED_DIR", wrong)
    with pytest.raises(AgentError) as refused:
        make_agent("pretrained:indian", make_ruleset("indian", 3))
    assert str(refused.value) == (f"pretrained:indian policy {str(wrong / 'indian-3p.onnx')!r} was exported for "
                                  "'indian' with 2 players, not 'indian' with 3 players")


def test_files_under_the_game_s_bare_name_are_still_read_for_their_own_count(installed, tmp_path, monkeypatch):
    """What an installation before per-count names holds: ``indian.onnx`` for the count its card names."""
    old = tmp_path / "old"
    old.mkdir()
    for suffix in (".onnx", ".json"):
        shutil.copyfile(installed / f"indian-2p{suffix}", old / f"indian{suffix}")
    monkeypatch.setattr(pretrained, "PRETRAINED_DIR", old)
    assert pretrained.shipped_counts("indian") == [2] and pretrained.model_path("indian", 2) == old / "indian.onnx"
    assert make_agent("pretrained:indian", make_ruleset("indian", 2)).policy.path == old / "indian.onnx"
    assert pretrained.model_card("indian", 2)["num_players"] == 2
    with pytest.raises(AgentError, match="shipped for 2 players only"):
        make_agent("pretrained:indian", make_ruleset("indian", 4))
    for suffix in (".onnx", ".json"):  # a per-count file, when there is one, wins over the bare name
        shutil.copyfile(installed / f"indian-2p{suffix}", old / f"indian-2p{suffix}")
    assert pretrained.model_path("indian", 2) == old / "indian-2p.onnx"


# ----------------------------------------------------------------------------- at any seat, before any hand


@pytest.fixture
def played(monkeypatch):
    calls: list = []
    monkeypatch.setattr(arena, "play_deals", lambda *args, **kwargs: calls.append(args) or [])
    return calls


def test_the_arena_refuses_a_count_with_no_policy_at_any_seat_before_any_hand(installed, played, capsys):
    with pytest.raises(SystemExit) as exit_info:
        arena.main(["--game", "indian", "--agents", "rule", "rule", "pretrained:indian", "--table", "--hands", "3"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "no policy for 'indian' at a table of 3" in err and "shipped for 2 players and 4 players only" in err
    assert played == []


def test_a_mixed_table_with_the_policy_of_its_count_plays(installed):
    config = arena.ArenaConfig("indian", ("pretrained:indian", "rule", "random", "rule"), hands=4, num_players=4,
                               seed=2, table=True)
    summary = arena.summarize(config, arena.run_arena(config, progress=False))
    assert [row["units"] for row in summary["agents"]] == [4, 4, 4, 4]


def test_play_seats_a_person_among_the_policy_of_the_table_s_count(installed):
    from rummy_apps.play import main as play_main

    out = io.StringIO()
    argv = ["--game", "indian", "--players", "4", "--opponents", "pretrained:indian"]
    assert play_main(argv, stdin=io.StringIO("draw\n"), stdout=out) == 0
    text = out.getvalue()
    assert all(f"player_{p} (pretrained:indian)" in text for p in (1, 2, 3)) and "bye" in text


def test_the_web_table_offers_the_policy_only_where_one_is_shipped_for_its_size(installed):
    from rummy_apps.web.opponents import AgentSource

    source = AgentSource()
    offered = {n: source.offered("indian", n) for n in game_spec("indian").player_counts}
    assert [n for n, specs in offered.items() if "pretrained:indian" in specs] == [2, 4]
    assert source.default("indian", 4) == "pretrained:indian" and source.default("indian", 3) == "rule"


# ----------------------------------------------------------------------------- what this version ships


@pytest.mark.parametrize("game", GAMES)
def test_every_shipped_policy_is_named_for_its_count_and_its_card_agrees(game, monkeypatch):
    monkeypatch.setattr(pretrained, "PRETRAINED_DIR", SHIPPED)
    counts = pretrained.shipped_counts(game)
    assert 2 in counts, f"the 2-player {game} policy is shipped"
    for players in counts:
        path = pretrained.model_path(game, players)
        assert path.name == f"{game}-{players}p.onnx"
        card = pretrained.model_card(game, players)
        assert (card["game"], card["num_players"]) == (game, players)
        assert json.loads(path.with_suffix(".json").read_text())["num_players"] == players
        assert make_agent(f"pretrained:{game}", make_ruleset(game, players)).num_players == players
    for players in set(game_spec(game).player_counts) - set(counts):
        with pytest.raises(AgentError, match=f"at a table of {players}"):
            make_agent(f"pretrained:{game}", make_ruleset(game, players))


@pytest.mark.parametrize("argv, message", [(["--hands", "0"], "--hands and --workers must be at least 1"),
                                           (["--search-hands", "-1"], "--search-hands must be 0 or more, not -1")])
def test_ship_refuses_bad_counts_before_reading_the_checkpoint(argv, message, capsys):
    from agents.pretrained.ship import main

    with pytest.raises(SystemExit) as stopped:
        main(["no-such-run"] + argv)
    assert stopped.value.code == 2 and message in capsys.readouterr().err


def test_recard_plays_the_installed_policy_on_the_panel_again_and_keeps_the_rest(tmp_path):
    """A card from before the panel (random and rule only) gets the panel's rows; the file and the
    card's other fields do not change, and the new rows equal a fresh ship's on the same seed."""
    from agents.pretrained.ship import recard

    dest = tmp_path / "dest"
    model, card_file = ship(make_run(tmp_path / "run", "romi", 2, seed=3), hands=2, seed=4, dest=dest, search_hands=0)
    metadata = json.loads(card_file.read_text())
    fresh = metadata["model_card"]["arena"]
    metadata["model_card"]["arena"] = fresh[:2]  # as an older card had it
    metadata["model_card"].pop("replaces")
    card_file.write_text(json.dumps(metadata))
    before = model.read_bytes()
    recard(model, hands=2, seed=4, search_hands=0)
    card = json.loads(card_file.read_text())["model_card"]
    assert [row["opponent"] for row in card["arena"]] == ["random", "rule", "rule:hold_until=3"]
    assert card["arena"] == fresh and card["replaces"] is None and "panel_played" in card
    assert model.read_bytes() == before
    assert {k: v for k, v in card.items() if k not in ("arena", "summary", "panel_played", "replaces")} == {
        k: v for k, v in metadata["model_card"].items() if k not in ("arena", "summary")}


def test_the_card_names_the_recipe_the_run_resolves_from(tmp_path):
    from agents.training.config import CONFIGS, load_yaml, make_config, to_dict

    settings = to_dict(make_config(load_yaml(CONFIGS / "romi-2p.yaml"))) | {"num_workers": 7, "run_dir": "runs/x"}
    _, card_file = ship(make_run(tmp_path / "run", "romi", 2, seed=3, config=settings), hands=2, seed=4,
                        dest=tmp_path / "dest", search_hands=0)
    assert json.loads(card_file.read_text())["model_card"]["recipe"] == "configs/romi-2p.yaml"
    _, card_file = ship(make_run(tmp_path / "own", "romi", 2, seed=3, config=settings | {"learning_rate": 0.123}),
                        hands=2, seed=4, dest=tmp_path / "dest2", search_hands=0)
    assert json.loads(card_file.read_text())["model_card"]["recipe"] is None


def test_recard_of_a_file_without_a_card_names_it(tmp_path):
    from agents.pretrained.ship import recard

    lost = tmp_path / "basic-2p.onnx"
    lost.write_bytes(b"not a model")
    with pytest.raises(AgentError, match="--recard '.*basic-2p.onnx': no readable model card at '.*basic-2p.json'"):
        recard(lost)
