"""Game records (docs/records.md): written by the arena and the terminal game, replayed from their
deck order alone (G10 without the seed), a stock rebuild kept (G8), tampering refused with the line
and the action named."""

from __future__ import annotations

import copy
import io
import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from agents import arena
from agents.registry import make_agent
from rummy_env import records
from rummy_env.encoding import action_layout
from rummy_env.game import GameState, InvalidStateError, shuffled_deck
from rummy_apps.play import PlaySession
from rummy_env.records import RecordError, RecordFile, record_of_state, replay, write_records
from rummy_env.ruleset import make_ruleset
from rummy_env.vector import VectorGame

TABLES = [("indian", 2), ("indian", 3), ("basic", 2), ("basic", 4), ("romi", 2), ("romi", 3)]


def random_hand(game: str, players: int, seed: int, first_player: int = 0, **options) -> GameState:
    """A hand of ``game`` played to its end by uniformly random legal moves."""
    state = GameState(make_ruleset(game, players, **options), seed, first_player)
    rng = random.Random(seed)
    while not state.is_over:
        state.apply(rng.choice(state.legal_moves()))
    return state


def without_dealing_source(state: GameState) -> dict:
    """The state's fields, less what says how it was dealt (a seed, or a deck order)."""
    data = state.to_dict()
    data.pop("seed")
    data.pop("rebuilt_stock", None)
    return data


def check(path, capsys) -> tuple[int, str]:
    code = records.main(["check", str(path)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def rebuilding_record() -> dict:
    """A record of a hand whose stock was rebuilt from the discards (G8)."""
    for seed in range(50):
        state = random_hand("basic", 2, seed)
        if state.rebuilds:
            return record_of_state(state, ["random", "random"])
    raise AssertionError("no random Basic hand rebuilt its stock")


# ----------------------------------------------------------------------------- the engine's deck path


@pytest.mark.parametrize("game, players", TABLES)
def test_G10_a_hand_dealt_from_the_seeds_deck_order_is_the_seeded_hand(game, players):
    """The seeded path is unchanged and the deck path deals the same cards (R2 cut card, I2 wild joker)."""
    rules = make_ruleset(game, players)
    seeded = GameState(rules, "deal:7", 1)
    dealt = GameState.from_deck(rules, shuffled_deck(rules, "deal:7"), 1)
    assert seeded.to_dict()["rebuilt_stock"] is None and seeded.rebuilt_stock is None  # rebuilt from the seed
    assert without_dealing_source(dealt) == without_dealing_source(seeded)
    assert dealt.seed is None and dealt.rebuilt_stock == ()
    again = GameState.from_dict(dealt.to_dict())
    assert again.to_dict() == dealt.to_dict()


def test_G1_a_deck_that_is_not_the_games_cards_is_refused_naming_a_card():
    rules = make_ruleset("basic", 2)
    deck = shuffled_deck(rules, 3)
    with pytest.raises(InvalidStateError, match=r"deck: 51 cards .* played with 52 cards .*\(G1\)"):
        GameState.from_deck(rules, deck[:-1])
    deck[0] = deck[1]
    with pytest.raises(InvalidStateError, match=r"52 cards with [02] \w+, but .* 52 cards with 1 \w+ \(G1\)"):
        GameState.from_deck(rules, deck)
    with pytest.raises(InvalidStateError, match=r"deck\[0\]='Ah' is not a card type"):
        GameState.from_deck(rules, ["Ah"] + deck[1:])


def test_G8_the_compiled_core_refuses_a_deck_dealt_hand_it_would_rebuild_from_a_seed():
    rules = make_ruleset("indian", 2)
    vector = VectorGame("indian", 1, 2, backend="numba")
    vector.reset(seed=0)
    with pytest.raises(ValueError, match=r"deck order .*\(G8\)"):
        vector.load(0, GameState.from_deck(rules, shuffled_deck(rules, 1)))


# ----------------------------------------------------------------------------- replaying records


@settings(max_examples=24, deadline=None)
@given(table=st.sampled_from(TABLES), seed=st.integers(0, 10**6), first=st.integers(0, 5))
def test_G10_random_legal_play_replays_identically_from_the_record_alone(table, seed, first):
    """Property: any hand of random legal moves, written as a record, replays from its deck order to the
    same state (hands, table, piles, result), without its seed; the JSON line reads back the same."""
    game, players = table
    state = random_hand(game, players, seed, first % players)
    record = record_of_state(state, ["random"] * players)
    record = json.loads(records.dumps(record))
    without_seed = dict(record, seed=None)
    replayed = replay(without_seed)
    assert without_dealing_source(replayed) == without_dealing_source(state)
    assert record["result"]["points"] == list(state.result.rewards)
    assert (record["rebuilt_stock"] is not None) == bool(state.rebuilds)


def test_G8_a_hand_with_a_stock_rebuild_round_trips_and_a_wrong_rebuilt_stock_is_refused():
    record = rebuilding_record()
    assert record["rebuilt_stock"]
    replayed = replay(dict(record, seed=None))  # the rebuilt stock's order comes from the record, not a shuffle
    assert replayed.rebuilds == 1
    rebuilt_at = rebuild_index(record)
    with pytest.raises(RecordError, match=r"no rebuilt stock order") as refused:
        replay(dict(record, rebuilt_stock=None))
    assert refused.value.action == rebuilt_at
    wrong = copy.deepcopy(record)
    wrong["rebuilt_stock"][0] = "A♠" if wrong["rebuilt_stock"][0] != "A♠" else "2♠"
    with pytest.raises(RecordError, match=r"rebuilt stock given .* is not the discard pile .*G8") as refused:
        replay(wrong)
    assert refused.value.action == rebuilt_at
    seed = next(seed for seed in range(50) if not random_hand("basic", 2, seed).rebuilds)
    short = record_of_state(random_hand("basic", 2, seed), ["random", "random"])
    with pytest.raises(RecordError, match=r"never rebuilt it \(G8\)"):
        replay(short | {"rebuilt_stock": ["A♠"]})


def rebuild_index(record: dict) -> int:
    """The index of the action whose end of turn rebuilt the stock (G8), replayed from the seed."""
    state = GameState(make_ruleset(record["game"], record["num_players"]), record["seed"], record["first_player"])
    layout = action_layout(record["game"])
    for index, action in enumerate(record["actions"]):
        state.apply(layout.move(action))
        if state.rebuilds:
            return index
    raise AssertionError("the hand never rebuilt its stock")


def test_a_changed_action_is_refused_naming_the_line_and_the_action(tmp_path, capsys):
    hands = [record_of_state(random_hand("basic", 2, seed), ["random", "random"]) for seed in (1, 2)]
    path = tmp_path / "hands.jsonl"
    write_records(path, hands)
    assert check(path, capsys)[0] == 0
    tampered = copy.deepcopy(hands)
    index = next(i for i, a in enumerate(tampered[1]["actions"]) if 2 <= a <= 54)  # a discard: drawing is illegal
    tampered[1]["actions"][index] = 0
    write_records(path, tampered)
    code, text = check(path, capsys)
    assert code == 1
    assert f"line 2, actions[{index}]: action 0 is illegal" in text
    text_only = copy.deepcopy(hands)
    text_only[0]["action_text"][3] = "discard K♠"
    write_records(path, text_only)
    code, text = check(path, capsys)
    assert code == 1 and "line 1, actions[3]: " in text and "the record's text says 'discard K♠'" in text


def test_a_changed_result_is_refused_at_the_last_action(tmp_path, capsys):
    record = record_of_state(random_hand("romi", 2, 5), ["random", "random"])
    record["result"]["points"] = [p + 1 for p in record["result"]["points"]]
    path = tmp_path / "hands.jsonl"
    write_records(path, [record])
    code, text = check(path, capsys)
    assert code == 1 and f"line 1, actions[{len(record['actions']) - 1}]: a different result" in text


def test_G1_a_changed_deck_order_is_refused_at_the_first_action_it_makes_illegal(tmp_path, capsys):
    """Basic, one deck: the card the first discard throws is moved to the stock's bottom, so the player
    cannot hold it then, and that discard is refused by name."""
    record = record_of_state(random_hand("basic", 2, 8), ["random", "random"])
    index = next(i for i, a in enumerate(record["actions"]) if 2 <= a <= 54)
    card = record["action_text"][index].split()[1]
    deck = record["deck"]
    where = deck.index(card)
    deck[where], deck[-1] = deck[-1], deck[where]
    path = tmp_path / "hands.jsonl"
    write_records(path, [record])
    code, text = check(path, capsys)
    assert code == 1 and f"line 1, actions[{index}]: action {record['actions'][index]} is illegal" in text


@pytest.mark.parametrize("line, message", [
    ("{not json", r"line 2: not JSON"),
    ("[1, 2]", r"line 2: a record is a JSON object, not list"),
    ('{"format": "other"}', r"line 2: format 'other': expected 'rummy-env-hand'"),
])
def test_a_malformed_line_is_refused_naming_it(tmp_path, capsys, line, message):
    good = record_of_state(random_hand("indian", 2, 1), ["random", "random"])
    path = tmp_path / "hands.jsonl"
    path.write_text(records.dumps(good) + "\n" + line + "\n", encoding="utf-8")
    code, text = check(path, capsys)
    assert code == 1 and re.search(message, text), text


@pytest.mark.parametrize("change, message", [
    ({"version": 2}, r"version 2: this reader reads version 1"),
    ({"players": ["random"]}, r"players must be a list of 2 strings"),
    ({"first_player": 2}, r"first_player 2: expected a seat 0..1"),
    ({"game": "chess"}, r"game 'chess'"),
    ({"actions": [0, "draw"]}, r"action_text must be a list of 2 strings"),
    ({"extra": 1}, r"unknown field 'extra'"),
])
def test_a_record_with_a_bad_field_is_refused_naming_the_field(change, message):
    good = record_of_state(random_hand("indian", 2, 1), ["random", "random"])
    with pytest.raises(RecordError, match=message):
        replay(good | change)
    bad_card = copy.deepcopy(good)
    bad_card["deck"][4] = "Zz"
    with pytest.raises(RecordError, match=r"deck\[4\]: bad card 'Zz'"):
        replay(bad_card)
    missing = dict(good)
    del missing["result"]
    with pytest.raises(RecordError, match=r"missing field 'result'"):
        replay(missing)


def test_show_into_a_reader_that_stops_early_exits_quietly(tmp_path):
    """``show FILE | head``: a reader that leaves before the hand is printed (here one that reads
    nothing) ends the command with status 0 and no BrokenPipeError."""
    path = tmp_path / "hands.jsonl"
    write_records(path, [record_of_state(random_hand("romi", 3, 1), ["random", "rule", "random"])])
    command = f"{sys.executable} -m rummy_env.records show {path} | true; echo status ${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).parent.parent)
    assert done.stdout == "status 0\n" and done.stderr == "", done.stderr


def test_show_prints_a_hand_move_by_move_with_every_hand_face_up(tmp_path, capsys):
    hands = [record_of_state(random_hand("romi", 3, seed), ["random", "rule", "random"]) for seed in (1, 2)]
    path = tmp_path / "hands.jsonl"
    write_records(path, hands)
    assert records.main(["show", str(path), "--hand", "2"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"{path}: hand 2 (line 2)")
    assert "player_1 (rule): " in text and "cut card " in text and "(R2)" in text
    first = hands[1]["action_text"][0]
    assert re.search(rf"^\s+0  player_{hands[1]['first_player']} \(\w+\)\s+{hands[1]['actions'][0]}  {first}", text,
                     re.M)
    assert "♥" in text and "result after" in text
    with pytest.raises(SystemExit) as stopped:
        records.main(["show", str(path), "--hand", "3"])
    assert stopped.value.code == 2 and "holds 2 hands" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["check", "show"])
def test_help_of_each_command(capsys, command):
    with pytest.raises(SystemExit) as stopped:
        records.main([command, "--help"])
    assert stopped.value.code == 0
    text = capsys.readouterr().out
    assert "PATH" in text
    assert ("deck order" in text) if command == "check" else ("--hand" in text)


def test_a_missing_file_and_an_empty_file(tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        records.main(["check", str(tmp_path / "none.jsonl")])
    assert stopped.value.code == 2 and "no such file" in capsys.readouterr().err
    (tmp_path / "empty.jsonl").write_text("")
    code, text = check(tmp_path / "empty.jsonl", capsys)
    assert code == 1 and "no records" in text


# ----------------------------------------------------------------------------- who writes records


@pytest.mark.parametrize("game, workers", [("indian", 1), ("basic", 1), ("romi", 2)])
def test_G10_the_arenas_records_pass_check(tmp_path, capsys, game, workers):
    path = tmp_path / "arena" / "hands.jsonl"
    hands = 40 if workers > 1 else 6  # 20 deals are two tasks: two processes play them
    arena.run_cli(["--game", game, "--agents", "rule", "random", "--hands", str(hands), "--no-progress",
                   "--workers", str(workers), "--record", str(path)])
    out = capsys.readouterr().out
    assert f"{hands} hands recorded in {path}" in out
    code, text = check(path, capsys)
    assert code == 0 and f"{hands} hands replayed" in text
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["source"]["rotation"] for r in lines[:2]] == [0, 1]
    assert lines[0]["players"] == ["rule", "random"] and lines[1]["players"] == ["random", "rule"]
    assert lines[0]["seed"] == arena.deal_seed(0, 0) and lines[0]["deck"] == lines[1]["deck"]  # duplicate deals


def test_I8_the_arenas_match_records_hold_every_hand_of_every_match(tmp_path, capsys):
    path = tmp_path / "matches.jsonl"
    arena.run_cli(["--game", "indian", "--agents", "rule", "random", "--hands", "2", "--matches",
                   "--option", "match_target=250", "--no-progress", "--record", str(path)])
    out = capsys.readouterr().out
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert f"{len(lines)} hands recorded" in out and len(lines) > 2  # every hand of the two matches
    first_match = [r["source"]["match_hand"] for r in lines if r["source"]["rotation"] == 0]
    assert first_match == list(range(len(first_match))) and len(first_match) > 1
    assert {r["first_player"] for r in lines if r["source"]["rotation"] == 0} == {0, 1}  # the start moves (G6)
    assert check(path, capsys)[0] == 0


def test_the_terminal_game_saves_each_hand_and_says_where(tmp_path, capsys):
    from test_play import Scripted, opponents

    path = tmp_path / "play.jsonl"
    rules = make_ruleset("basic", 2, match_target=1)
    player = Scripted(rules, opponents("basic", 2), seed=21, mangle=0.0, match=True)
    player.session.record = RecordFile(path)
    assert player.session.run() == 0
    player.session.record.close()
    text = player.output()
    saved = re.findall(r"hand (\d+) saved to (\S+), line (\d+)", text)
    assert saved and saved[0] == ("1", str(path), "1")
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == len(saved) and lines[0]["players"] == ["human", "rule"]
    assert lines[0]["source"] == {"program": "play", "hand": 1}
    code, out = check(path, capsys)
    assert code == 0, out


def test_the_terminal_game_record_flag(tmp_path):
    """``--record`` on the command line: the file is made at the start; a hand left unfinished is not saved;
    a path that cannot be written stops the program before any hand."""
    from rummy_apps.play import main

    path = tmp_path / "one.jsonl"
    moves = io.StringIO("quit\n")
    out = io.StringIO()
    assert main(["--game", "indian", "--opponents", "rule", "--record", str(path)], stdin=moves, stdout=out) == 0
    assert path.exists() and path.read_text() == ""  # the hand was left before its end: nothing saved
    with pytest.raises(SystemExit) as stopped:
        main(["--game", "indian", "--record", str(tmp_path)], stdin=io.StringIO(""), stdout=io.StringIO())
    assert stopped.value.code == 2


def test_a_record_of_a_person_and_agents_names_each_seat():
    rules = make_ruleset("romi", 3)
    agents = [make_agent("random", make_ruleset("romi", 3), seed=s) for s in (1, 2)]
    session = PlaySession(rules, agents, Console(file=io.StringIO()), lambda prompt: None, seat=1,
                          names=["random", "random#2"])
    assert session.players == ["random#2", "human", "random"]  # the opponents sit in seat order after yours
