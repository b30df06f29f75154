"""The web table's JSON API (docs/web.md "API"), over HTTP to a live server: every endpoint, whole
hands of each game with every reply checked against the hidden cards, bad input (a 4xx with a
reason, the game unchanged), expiry, isolation of many concurrent games, and the command line."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web table needs the [web] extra (pip install -e '.[web]')")
pytest.importorskip("uvicorn", reason="the web table needs the [web] extra (pip install -e '.[web]')")
httpx = pytest.importorskip("httpx", reason="the API tests need httpx (pip install httpx)")

from conftest import cites  # noqa: E402
from web_helpers import hidden_cards, hidden_variant, public_cards, running_server  # noqa: E402

from rummy_env.cards import format_card, parse_card  # noqa: E402
from rummy_env.encoding import action_layout  # noqa: E402
from rummy_env.game import MELD  # noqa: E402
from rummy_env.ruleset import GAME_SPECS, GAMES  # noqa: E402
from rummy_env.web.__main__ import build_parser, main  # noqa: E402
from rummy_env.web.app import TableDefaults, create_app  # noqa: E402
from rummy_env.web.store import GameStore  # noqa: E402
from rummy_env.web.view import seat_view  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CARD_TOKEN = re.compile(r"(?<![\w*=])(?:[A2-9TJQK][shdc]|\*)(?![\w])")


@pytest.fixture(scope="module")
def server():
    """A live server (its app, for looking at the hidden state) and an httpx client on it."""
    app = create_app(TableDefaults(delay_ms=0), GameStore(max_games=500))
    with running_server(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield app, client


def new_game(client, **fields) -> dict:
    reply = client.post("/api/games", json=fields)
    assert reply.status_code == 201, reply.text
    return reply.json()


def hidden_state(app, game_id: str):
    """The server's game (tests only: the browser never sees it)."""
    return app.state.store.get(game_id)


def play_to_end(client, game_id: str, check=None, limit: int = 600) -> dict:
    """Play the hand out: the person follows the hint, the agents move one at a time; ``check`` sees every reply."""
    table = client.get(f"/api/games/{game_id}").json()["table"]
    for _ in range(limit):
        if table["result"] is not None:
            return table
        if table["view"]["to_act"] == table["seat"]:
            hint = client.get(f"/api/games/{game_id}/hint").json()["hint"]
            assert hint["action"] in {m["action"] for m in table["view"]["legal"]}
            reply = client.post(f"/api/games/{game_id}/move", json={"action": hint["action"]})
        else:
            reply = client.post(f"/api/games/{game_id}/opponent")
        assert reply.status_code == 200, reply.text
        body = reply.json()
        if check is not None:
            check(body)
        table = body["table"]
    raise AssertionError(f"the hand did not end in {limit} moves")


# ----------------------------------------------------------------------------- the page and the facts


def test_page_and_static_files_are_served(server):
    _, client = server
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert '<script src="/static/table.js">' in page.text
    for name, kind in (("table.js", "javascript"), ("table.css", "css")):
        reply = client.get(f"/static/{name}")
        assert reply.status_code == 200 and kind in reply.headers["content-type"]


def test_meta_lists_games_table_sizes_agents_and_card_names(server):
    _, client = server
    meta = client.get("/api/meta").json()
    assert list(meta["games"]) == list(GAMES)
    for game, spec in GAME_SPECS.items():
        entry = meta["games"][game]
        assert entry["players"] == list(spec.players)
        assert set(entry["agents"]) == {str(n) for n in range(spec.players[0], spec.players[1] + 1)}
        assert entry["agents"]["2"][0] == f"pretrained:{game}"  # the shipped policies play two-player tables
        assert {"rule", "search", "random"} <= set(entry["agents"]["3"])
        assert f"pretrained:{game}" not in entry["agents"]["3"]
    assert [c["name"] for c in meta["cards"]] == [format_card(c) for c in range(53)]
    assert meta["defaults"]["delay_ms"] == 0


@pytest.mark.parametrize("game", GAMES)
def test_new_game_of_every_table_size_deals_the_persons_hand(server, game):
    app, client = server
    low, high = GAME_SPECS[game].players
    for players in range(low, high + 1):
        body = new_game(client, game=game, players=players, opponents=["rule"], seed=5)
        table = body["table"]
        state = hidden_state(app, body["id"]).state
        assert table["players"] == players and len(table["names"]) == players
        assert table["view"]["hand"] == sorted(state.hand_cards(0), key=lambda c: (c == 52, c // 13, c % 13))
        assert [p["hand_size"] for p in table["view"]["players"]] == [sum(h) for h in state.hands]
        assert table["specs"] == [None] + ["rule"] * (players - 1)


# ----------------------------------------------------------------------------- whole hands, nothing hidden


@pytest.mark.parametrize("game, players, opponents", [
    ("indian", 2, ["pretrained:indian"]), ("indian", 3, ["rule", "random"]),
    ("basic", 2, ["pretrained:basic"]), ("basic", 4, ["rule"]),
    ("romi", 2, ["pretrained:romi"]), ("romi", 3, ["rule", "random"]),
])
def test_whole_hands_never_send_a_hidden_card(server, game, players, opponents):
    """Every reply's view is what a state with the hidden cards dealt anew would give, and every card an
    opponent's move names is public once it is made; at the end every hand is shown as it is."""
    app, client = server
    rng = random.Random(7)
    body = new_game(client, game=game, players=players, opponents=opponents, seed=3)
    game_id = body["id"]
    seen = []

    def check(reply):
        state = hidden_state(app, game_id).state
        view = reply["table"]["view"]
        if reply["table"]["result"] is None:
            assert view == seat_view(state, 0)
            for _ in range(3):
                assert seat_view(hidden_variant(state, 0, rng), 0) == view
            assert sorted(hidden_cards(state, 0)) == sorted(hidden_cards(hidden_variant(state, 0, rng), 0))
        event = reply["event"]
        if event["seat"] != 0:
            named = {parse_card(t) for t in CARD_TOKEN.findall(event["text"])}
            assert named <= public_cards(state), (event, named - public_cards(state))
        seen.append(event)

    table = play_to_end(client, game_id, check)
    state = hidden_state(app, game_id).state
    result = table["result"]
    assert result["outcome"] == state.result.outcome and result["payments"] == list(state.result.payments)
    for shown in result["hands"]:
        assert sorted(shown["cards"]) == state.hand_cards(shown["seat"])
        arranged = [c for meld in shown["arrangement"]["melds"] for c in meld] + shown["arrangement"]["loose"]
        assert sorted(arranged) == state.hand_cards(shown["seat"])
    if GAME_SPECS[game].low_total_wins:  # I8, R8: penalties add up
        assert table["match"]["totals"] == result["payments"]
    elif result["winner"] is not None:  # B6: the winner scores what the others pay
        assert table["match"]["totals"][result["winner"]] == sum(result["payments"])
    assert len(seen) == len(state.history)
    assert any(e["seat"] != 0 for e in seen) and any(e["seat"] == 0 for e in seen)


def test_hidden_variant_changes_hidden_cards_but_not_the_view(server):
    """The check above can fail: a variant really moves hidden cards, and a view that read one would differ."""
    app, client = server
    body = new_game(client, game="romi", opponents=["rule"], seed=9)
    state = hidden_state(app, body["id"]).state
    rng = random.Random(1)
    variants = [hidden_variant(state, 0, rng) for _ in range(5)]
    assert any(v.hands[1] != state.hands[1] for v in variants)
    assert any(v.stock != state.stock for v in variants)
    assert all(v.hands[0] == state.hands[0] for v in variants)
    leaky = [dict(seat_view(v, 0), other=v.hand_cards(1)) for v in variants]
    assert any(view != dict(seat_view(state, 0), other=state.hand_cards(1)) for view in leaky)


# ----------------------------------------------------------------------------- moves


def test_refused_move_names_the_rule_and_changes_nothing(server):
    app, client = server
    body = new_game(client, game="indian", opponents=["rule"], seed=1)
    game_id = body["id"]
    game = hidden_state(app, game_id)
    before = game.state.to_dict()
    card = body["table"]["view"]["hand"][0]
    reply = client.post(f"/api/games/{game_id}/move", json={"kind": "discard", "card": card})
    assert reply.status_code == 409
    data = reply.json()
    assert data["refused"] is True and cites(data["error"], "I4") and "draw first" in data["error"]
    assert data["table"]["view"] == body["table"]["view"]
    assert game.state.to_dict() == before


def test_move_by_kind_and_by_action_id_are_the_same_move(server):
    app, client = server
    first = new_game(client, game="basic", opponents=["rule"], seed=2)
    second = new_game(client, game="basic", opponents=["rule"], seed=2)
    a = client.post(f"/api/games/{first['id']}/move", json={"action": 0}).json()
    b = client.post(f"/api/games/{second['id']}/move", json={"kind": "draw"}).json()
    assert a["table"]["view"] == b["table"]["view"] and a["event"] == b["event"]
    assert a["event"]["text"].startswith("draw (")  # the person's own log shows the card drawn


def test_meld_by_cards_lays_the_template_or_explains(server):
    """Selecting cards to meld (B3, R5): the server finds the template; cards that are no meld are refused (G3, G4)."""
    app, client = server
    for seed in range(40):
        body = new_game(client, game="basic", opponents=["rule"], seed=seed)
        game_id = body["id"]
        table = client.post(f"/api/games/{game_id}/move", json={"kind": "draw"}).json()["table"]
        melds = [m for m in table["view"]["legal"] if m["kind"] == "meld"]
        if melds:
            break
    else:
        pytest.fail("no deal of the first 40 seeds lets the person meld at once")
    game = hidden_state(app, game_id)
    before = game.state.to_dict()
    hand = table["view"]["hand"]
    not_a_meld = [hand[0], hand[1], hand[2]]
    if any(sorted(m["cards"]) == sorted(not_a_meld) for m in melds):
        not_a_meld = [hand[0], hand[-1], hand[-2]]
    refused = client.post(f"/api/games/{game_id}/move", json={"kind": "meld", "cards": not_a_meld})
    assert refused.status_code == 409 and refused.json()["refused"], refused.text
    assert cites(refused.json()["error"], "G3") or cites(refused.json()["error"], "B2")
    assert game.state.to_dict() == before
    meld = melds[0]
    reply = client.post(f"/api/games/{game_id}/move", json={"kind": "meld", "cards": list(reversed(meld["cards"]))})
    assert reply.status_code == 200, reply.text
    assert game.state.history[-1] == (MELD, action_layout("basic").move(meld["action"])[1], 0)
    assert reply.json()["table"]["view"]["table"][-1]["cards"]


def test_opponent_moves_one_at_a_time_and_only_on_their_turn(server):
    app, client = server
    body = new_game(client, game="romi", opponents=["pretrained:romi"], seed=4)
    game_id = body["id"]
    game = hidden_state(app, game_id)
    before = game.state.to_dict()
    early = client.post(f"/api/games/{game_id}/opponent")
    assert early.status_code == 409 and "your turn" in early.json()["error"]
    assert game.state.to_dict() == before
    table = client.post(f"/api/games/{game_id}/move", json={"kind": "draw"}).json()["table"]
    hand = table["view"]["hand"]
    discard = next(m for m in table["view"]["legal"] if m["kind"] == "discard")
    client.post(f"/api/games/{game_id}/move", json={"action": discard["action"]})
    moves = len(game.state.history)
    reply = client.post(f"/api/games/{game_id}/opponent")
    assert reply.status_code == 200 and reply.json()["event"]["seat"] == 1
    assert len(game.state.history) == moves + 1
    assert "game;dur=" in reply.headers["server-timing"]
    out_of_turn = client.post(f"/api/games/{game_id}/move", json={"kind": "discard", "card": hand[0]})
    if game.state.current != 0:
        assert out_of_turn.status_code == 409 and "not your turn" in out_of_turn.json()["error"]


def test_hint_is_a_legal_move_of_the_chosen_agent(server):
    _, client = server
    for hint in ("rule", "pretrained:indian", "random"):
        body = new_game(client, game="indian", opponents=["rule"], hint=hint, seed=6)
        reply = client.get(f"/api/games/{body['id']}/hint").json()["hint"]
        assert reply["by"] == hint
        assert reply["action"] in {m["action"] for m in body["table"]["view"]["legal"]}


def test_next_hand_rotates_the_start_and_keeps_the_totals(server):
    app, client = server
    body = new_game(client, game="romi", opponents=["pretrained:romi"], seed=3)
    game_id = body["id"]
    early = client.post(f"/api/games/{game_id}/next")
    assert early.status_code == 409 and "still being played" in early.json()["error"]
    ended = play_to_end(client, game_id)
    for call in (lambda: client.post(f"/api/games/{game_id}/move", json={"kind": "draw"}),
                 lambda: client.post(f"/api/games/{game_id}/opponent"),
                 lambda: client.get(f"/api/games/{game_id}/hint")):
        reply = call()
        assert reply.status_code == 409 and "hand is over" in reply.json()["error"]
    nxt = client.post(f"/api/games/{game_id}/next").json()["table"]
    assert nxt["hand_number"] == 2 and nxt["result"] is None
    assert nxt["match"]["totals"] == ended["match"]["totals"]
    assert hidden_state(app, game_id).state.first_player == 1  # G6
    assert nxt["log"] == []


def test_match_over_offers_no_next_hand(server):
    _, client = server
    for seed in range(10):
        body = new_game(client, game="basic", opponents=["rule"], seed=seed, options={"match_target": 1})
        ended = play_to_end(client, body["id"])
        if ended["match"]["over"]:
            break
    else:
        pytest.fail("no hand of ten went out")
    assert ended["match"]["winners"] == [ended["result"]["winner"]]
    reply = client.post(f"/api/games/{body['id']}/next")
    assert reply.status_code == 409 and "match is over" in reply.json()["error"]


def test_same_seed_same_game(server):
    _, client = server
    tables = []
    for _ in range(2):
        body = new_game(client, game="indian", players=3, opponents=["rule", "random"], seed=21)
        tables.append(play_to_end(client, body["id"]))
    assert tables[0]["log"] == tables[1]["log"] and tables[0]["result"] == tables[1]["result"]


def test_delete_forgets_the_game(server):
    _, client = server
    body = new_game(client, game="indian", opponents=["rule"])
    assert client.delete(f"/api/games/{body['id']}").status_code == 204
    assert client.get(f"/api/games/{body['id']}").status_code == 404


# ----------------------------------------------------------------------------- bad input


BAD_NEW_GAMES = [
    ({"game": "poker"}, "unknown game 'poker'"),
    ({"game": 3}, "unknown game 3"),
    ({"game": "romi", "players": 9}, "num_players=9"),
    ({"game": "romi", "players": "two"}, "players 'two' is not an int"),
    ({"game": "romi", "opponents": ["grandmaster"]}, "'grandmaster' is not offered"),
    ({"game": "romi", "opponents": ["onnx:/etc/passwd"]}, "is not offered"),
    ({"game": "romi", "players": 3, "opponents": ["pretrained:romi"]}, "2 players"),
    ({"game": "romi", "players": 4, "opponents": ["rule", "rule"]}, "2 opponents for 4 players"),
    ({"game": "romi", "opponents": []}, "expected a list of agent specs"),
    ({"game": "romi", "hint": "oracle"}, "'oracle' is not offered"),
    ({"game": "romi", "seed": "x"}, "seed 'x' is not an int"),
    ({"game": "romi", "seed": True}, "seed True is not an int"),
    ({"game": "romi", "options": {"wild_joker": True}}, "unknown option 'wild_joker'"),
    ({"game": "indian", "options": {"max_turns": 0}}, "max_turns=0"),
    ({"game": "indian", "options": [1]}, "expected an object of rule options"),
    ({"game": "romi", "colour": "red"}, "unknown field 'colour'"),
]


@pytest.mark.parametrize("fields, words", BAD_NEW_GAMES)
def test_bad_new_game_is_a_400_naming_the_field(server, fields, words):
    app, client = server
    count = len(app.state.store)
    reply = client.post("/api/games", json=fields)
    assert reply.status_code == 400 and words in reply.json()["error"], reply.text
    assert len(app.state.store) == count


@pytest.mark.parametrize("body, status, words", [
    (b"{not json", 400, "malformed JSON"),
    (b"[1, 2]", 400, "JSON list: expected an object"),
    (b"\xff\xfe", 400, "malformed JSON"),
    (json.dumps({"action": -1}).encode(), 400, "out of range"),
    (json.dumps({"action": 10**6}).encode(), 400, "out of range"),
    (json.dumps({"action": "0"}).encode(), 400, "is not an int"),
    (json.dumps({"action": True}).encode(), 400, "is not an int"),
    (json.dumps({"action": 0, "kind": "draw"}).encode(), 400, "not both"),
    (json.dumps({"kind": "fold"}).encode(), 400, "got 'fold'"),
    (json.dumps({}).encode(), 400, "needs \"action\""),
    (json.dumps({"kind": "discard"}).encode(), 400, "has the fields ['card', 'kind']"),
    (json.dumps({"kind": "discard", "card": 53}).encode(), 400, "expected a card type 0..52"),
    (json.dumps({"kind": "place", "card": 3, "slot": 99}).encode(), 400, "has no action id"),
    (json.dumps({"kind": "place", "card": 3, "slot": "a"}).encode(), 400, "slot 'a' is not an int"),
    (json.dumps({"kind": "meld", "cards": "5h 6h 7h"}).encode(), 400, "expected a list of card types"),
    (json.dumps({"kind": "take_cut"}).encode(), 409, "R4"),
    (json.dumps({"kind": "declare", "card": 0}).encode(), 400, "has no action id in 'romi'"),
    (json.dumps({"kind": "discard", "card": 0}).encode(), 409, "draw first"),
    (b"x" * 20_000, 413, "at most"),
])
def test_bad_move_is_a_4xx_with_a_reason_and_changes_nothing(server, body, status, words):
    app, client = server
    game_id = new_game(client, game="romi", opponents=["rule"], seed=8)["id"]
    game = hidden_state(app, game_id)
    before = game.state.to_dict()
    reply = client.post(f"/api/games/{game_id}/move", content=body)
    assert reply.status_code == status and words in reply.json()["error"], reply.text
    assert game.state.to_dict() == before and game.log == []


def test_unknown_game_id_route_or_method(server):
    _, client = server
    for method, path in (("GET", "/api/games/nope"), ("POST", "/api/games/nope/move"),
                         ("POST", "/api/games/nope/opponent"), ("GET", "/api/games/nope/hint"),
                         ("POST", "/api/games/nope/next"), ("DELETE", "/api/games/nope")):
        reply = client.request(method, path, json={"action": 0} if path.endswith("move") else None)
        assert reply.status_code == 404 and "no game 'nope'" in reply.json()["error"], (method, path, reply.text)
    assert (client.get("/api/nothing").status_code == 404
            and "no such page" in client.get("/api/nothing").json()["error"])
    reply = client.put("/api/games")
    assert reply.status_code == 405 and "PUT is not allowed" in reply.json()["error"]


def test_a_game_id_is_unguessable_and_matched_whole(server):
    """Ids are 128 random bits; a near miss (a prefix, another case) finds no game."""
    _, client = server
    ids = {new_game(client, game="indian", opponents=["rule"], seed=1)["id"] for _ in range(20)}
    assert len(ids) == 20 and all(re.fullmatch(r"[A-Za-z0-9_-]{22}", i) for i in ids)
    some = next(iter(ids))
    for near in (some[:-1], some.swapcase() if some.swapcase() != some else some + "x", some + " "):
        assert client.get(f"/api/games/{near}").status_code == 404


# ----------------------------------------------------------------------------- many games


def test_abandoned_games_expire_and_memory_is_bounded():
    now = [0.0]
    store = GameStore(max_games=50, idle_seconds=100, clock=lambda: now[0])
    app = create_app(TableDefaults(game="indian", opponents=("rule",), delay_ms=0), store)
    with running_server(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        ids = [new_game(client, seed=i)["id"] for i in range(300)]
        assert len(store) == 50
        assert client.get(f"/api/games/{ids[0]}").status_code == 404  # dropped, the least recently used
        assert client.get(f"/api/games/{ids[-1]}").status_code == 200
        kept = ids[-50]
        now[0] += 60
        assert client.get(f"/api/games/{kept}").status_code == 200  # used: its idle time restarts
        now[0] += 60
        assert len(store) == 1
        assert client.get(f"/api/games/{ids[-1]}").status_code == 404
        reply = client.get(f"/api/games/{kept}")
        assert reply.status_code == 200
        now[0] += 101
        gone = client.get(f"/api/games/{kept}")
        assert gone.status_code == 404 and "expired" in gone.json()["error"]


def _play_some(client, game_id: str, steps: int) -> list[int]:
    """``steps`` calls on one game (the hint's move or an opponent's); the person's actions, in order."""
    actions = []
    table = client.get(f"/api/games/{game_id}").json()["table"]
    for _ in range(steps):
        if table["result"] is not None:
            break
        if table["view"]["to_act"] == 0:
            action = client.get(f"/api/games/{game_id}/hint").json()["hint"]["action"]
            reply = client.post(f"/api/games/{game_id}/move", json={"action": action})
            actions.append(action)
        else:
            reply = client.post(f"/api/games/{game_id}/opponent")
        assert reply.status_code == 200, reply.text
        table = reply.json()["table"]
    return actions


def test_a_hundred_concurrent_games_do_not_talk_to_each_other(server):
    """100 games played at once from 16 threads stand exactly where each does when played alone afterwards."""
    app, client = server
    kinds = ("rule", "pretrained:{}", "random")  # random draws from its own seeded generator: cross-talk would show
    settings = [{"game": GAMES[i % 3], "opponents": [kinds[i // 3 % 3].format(GAMES[i % 3])], "seed": i}
                for i in range(100)]
    ids = [new_game(client, **s)["id"] for s in settings]
    with ThreadPoolExecutor(16) as pool:
        played = list(pool.map(lambda game_id: _play_some(client, game_id, 12), ids))
    for s, game_id, actions in zip(settings, ids, played):
        together = client.get(f"/api/games/{game_id}").json()["table"]
        alone_id = new_game(client, **s)["id"]
        assert _play_some(client, alone_id, 12) == actions
        alone = client.get(f"/api/games/{alone_id}").json()["table"]
        assert alone == together
        assert hidden_state(app, alone_id).state.to_dict() == hidden_state(app, game_id).state.to_dict()


# ----------------------------------------------------------------------------- the command line


def test_command_line_refuses_bad_settings_before_serving(capsys):
    for argv, words in ((["--game", "romi", "--opponents", "grandmaster"], "'grandmaster'"),
                        (["--game", "basic", "--players", "7"], "num_players=7"),
                        (["--game", "indian", "--players", "4", "--opponents", "rule", "rule"], "2 opponents"),
                        (["--game", "indian", "--option", "colour=1"], "unknown option 'colour'"),
                        (["--game", "romi", "--opponents", "onnx:missing.onnx"], "no such file")):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2
        assert words in capsys.readouterr().err


def test_command_line_binds_localhost_by_default():
    assert build_parser().parse_args([]).host == "127.0.0.1"
    text = build_parser().format_help()
    for flag in ("--host", "--port", "--game", "--players", "--opponents", "--seed"):
        assert flag in text


def test_serves_with_the_base_install_and_no_torch(tmp_path):
    """``python -m rummy_env.web`` with torch made unimportable: it serves, and a pretrained game plays."""
    script = tmp_path / "serve.py"
    script.write_text(textwrap.dedent("""
        import runpy, sys
        sys.modules["torch"] = None  # any import of torch now fails
        sys.argv = ["rummy-web", "--port", "0", "--game", "romi", "--seed", "4"]
        runpy.run_module("rummy_env.web", run_name="__main__")
    """))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env, cwd=tmp_path)
    try:
        line = process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, line + process.stderr.read() if process.poll() is not None else line
        with httpx.Client(base_url=f"http://127.0.0.1:{match.group(1)}", timeout=60) as client:
            body = client.post("/api/games", json={}).json()
            assert body["table"]["specs"] == [None, "pretrained:romi"]
            assert len(_play_some(client, body["id"], 12)) >= 3
    finally:
        process.terminate()
        process.wait(10)


def test_web_extra_and_console_script():
    import importlib
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert {"starlette", "uvicorn"} <= {re.split(r"[<>=\[ ]", d)[0] for d in project["optional-dependencies"]["web"]}
    module, _, function = project["scripts"]["rummy-web"].partition(":")
    assert getattr(importlib.import_module(module), function) is main
