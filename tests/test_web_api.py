"""The web table's JSON API (docs/web.md "API"), over HTTP to a live server: every endpoint, whole
hands of each game with every reply checked against the hidden cards, bad input (a 4xx with a
reason, the game unchanged), expiry, isolation of many concurrent games, and the command line."""

from __future__ import annotations

import json
import os
import random
import re
import socket
import subprocess
import sys
import textwrap
import threading
import time
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
from rummy_env.match import Match  # noqa: E402
from rummy_env.ruleset import GAME_SPECS, GAMES  # noqa: E402
from rummy_apps.web.__main__ import build_parser, main  # noqa: E402
from rummy_apps.web.app import MAX_BODY, MAX_NUMBER, TableDefaults, create_app  # noqa: E402
from rummy_apps.web.guard import SECURITY_HEADERS, NewGameLimiter, host_name, served_names  # noqa: E402
from rummy_apps.web.session import SEAT, agent_seed  # noqa: E402
from rummy_apps.web.store import GameStore  # noqa: E402
from rummy_apps.web.view import seat_view  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CARD_TOKEN = re.compile(r"(?:10|[A2-9JQK])[♠♥♦♣]|\bjoker\b")
"""A card as the page's words name it (``10♥``, ``Q♠``, ``joker``)."""


def named_cards(text: str) -> set[int]:
    return {parse_card("*" if t == "joker" else t) for t in CARD_TOKEN.findall(text)}


@pytest.fixture(scope="module")
def server():
    """A live server (its app, for looking at the hidden state) and an httpx client on it."""
    app = create_app(TableDefaults(delay_ms=0), GameStore(max_games=500), new_games_per_minute=100_000)
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
            named = named_cards(event["text"])
            assert named <= public_cards(state), (event, named - public_cards(state))
            if event["text"].startswith("discarded"):
                assert len(named) == 1  # the words name the card
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
    assert a["event"]["text"].startswith("drew from the stock (")  # the person's own log shows the card drawn


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
    ({"game": "romi", "seed": "x"}, "seed 'x': expected a whole number from 0 to 9007199254740991"),
    ({"game": "romi", "seed": True}, "seed True: expected a whole number"),
    ({"game": "romi", "seed": -5}, "seed -5: expected a whole number from 0"),
    ({"game": "romi", "seed": 1.5}, "seed 1.5: expected a whole number"),
    ({"game": "romi", "seed": 3, "practice": False}, "a seed chooses a practice deal"),
    ({"game": "romi", "practice": "yes"}, "practice 'yes': expected true or false"),
    ({"game": "romi", "players": 2.0}, "players 2.0 is not an int"),
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


# ----------------------------------------------------------------------------- no reply rebuilds a deal


NUMBER = re.compile(rb"-?\d+")


def numbers_in(reply) -> set[int]:
    """Every whole number a reply holds: in its JSON (recursively, strings included) and its headers."""
    found = set()
    for text in [reply.content] + [f"{k}: {v}".encode() for k, v in reply.headers.items()]:
        found.update(int(n) for n in NUMBER.findall(text) if len(n) <= 40)

    def walk(item):
        if isinstance(item, bool):
            return
        if isinstance(item, int):
            found.add(item)
        elif isinstance(item, dict):
            for v in item.values():
                walk(v)
        elif isinstance(item, list):
            for v in item:
                walk(v)
    if reply.headers.get("content-type", "").startswith("application/json") and reply.content:
        walk(reply.json())
    return found


def deal_of(rules, seed, hand: int):
    match = Match(rules, seed)
    match.hands_played = hand
    state = match.deal()
    return state.hands, state.stock


@pytest.mark.parametrize("game, opponents", [("romi", ["random"]), ("indian", ["pretrained:indian"]),
                                             ("basic", ["random", "rule"])])
def test_no_reply_rebuilds_the_deal_before_the_match_is_over(server, game, opponents):
    """Every reply of a secret-seed match, at every step and from every endpoint (errors and the meta
    included): no number in it re-deals any of its hands, and the seed and the agents' seeds never
    appear; once the match is over its seed is shown, and it does re-deal them (the check can fail)."""
    app, client = server
    players = len(opponents) + 1
    replies = [client.get("/api/meta"), client.get("/api/games/nope"), client.post("/api/nothing")]
    first = client.post("/api/games", json={"game": game, "players": players, "opponents": opponents,
                                            "options": {"match_target": 1}})
    assert first.status_code == 201, first.text
    game_id = first.json()["id"]
    hidden = hidden_state(app, game_id)
    assert first.json()["table"]["practice"] is False and first.json()["table"]["seed"] is None
    secrets = {str(hidden.seed)} | {str(agent_seed(hidden.seed, 0, p)) for p in range(players)}
    other_id = new_game(client, game="indian", opponents=["rule"])["id"]
    replies += [client.get("/"), client.post(f"/api/games/{game_id}/move", content=b"x" * (MAX_BODY + 1)),
                client.post("/api/games", json={}, headers={"Origin": "http://evil.example"}),
                client.get(f"/api/games/{game_id}", headers={"Host": "evil.example"}),
                client.delete(f"/api/games/{other_id}"), client.delete(f"/api/games/{other_id}")]
    assert [r.status_code for r in replies[-6:]] == [200, 413, 403, 421, 204, 404]
    replies.append(first)
    hands = 0
    while True:
        table = replies[-1].json()["table"]
        if table["result"] is not None:
            hands += 1
            if table["match"]["over"]:
                break
            replies.append(client.post(f"/api/games/{game_id}/next"))
            continue
        replies.append(client.get(f"/api/games/{game_id}"))
        if table["view"]["to_act"] == SEAT:
            replies.append(client.get(f"/api/games/{game_id}/records"))  # a 409: the match goes on
            assert replies[-1].status_code == 409 and "once the match is over" in replies[-1].json()["error"]
            replies.append(client.post(f"/api/games/{game_id}/opponent"))  # a 409: not their turn
            replies.append(client.post(f"/api/games/{game_id}/move", json={"kind": "fold"}))  # a 400
            hint = client.get(f"/api/games/{game_id}/hint")
            replies.append(hint)
            replies.append(client.post(f"/api/games/{game_id}/move", json={"action": hint.json()["hint"]["action"]}))
        else:
            replies.append(client.post(f"/api/games/{game_id}/next"))  # a 409: the hand goes on
            replies.append(client.post(f"/api/games/{game_id}/opponent"))
        assert replies[-1].status_code == 200, replies[-1].text
    over = replies.pop()
    for reply in replies:
        assert not any(secret.encode() in reply.content for secret in secrets), reply.text
    numbers = set().union(*(numbers_in(r) for r in replies))
    assert len(numbers) > 50  # cards, action ids, sizes, totals, timings
    true_deals = [deal_of(hidden.rules, hidden.seed, k) for k in range(hands)]
    for n in numbers:
        for k, deal in enumerate(true_deals):
            assert deal_of(hidden.rules, n, k) != deal, f"the number {n} re-deals hand {k + 1}"
    shown = over.json()["table"]["seed"]
    assert over.json()["table"]["match"]["over"] and shown == hidden.seed
    assert deal_of(hidden.rules, shown, 0) == true_deals[0]


def test_practice_deal_is_asked_for_shown_and_can_be_refused(server):
    _, client = server
    chosen = new_game(client, game="romi", opponents=["rule"], seed=12345)["table"]
    assert chosen["practice"] is True and chosen["seed"] == 12345
    fresh = new_game(client, game="romi", opponents=["rule"], practice=True)["table"]
    assert fresh["practice"] is True and 0 <= fresh["seed"] <= MAX_NUMBER
    secret = new_game(client, game="romi", opponents=["rule"])["table"]
    assert secret["practice"] is False and secret["seed"] is None
    assert client.get("/api/meta").json()["practice"] is True
    app = create_app(TableDefaults(delay_ms=0), practice=False)
    with running_server(app) as url, httpx.Client(base_url=url, timeout=60) as other:
        for fields in ({"seed": 4}, {"practice": True}):
            reply = other.post("/api/games", json=fields)
            assert reply.status_code == 403 and "--no-practice" in reply.json()["error"], reply.text
        assert other.post("/api/games", json={}).status_code == 201
        assert other.get("/api/meta").json()["practice"] is False
        assert len(app.state.store) == 1


def test_secret_deals_differ_and_agents_seeds_are_a_one_way_hash(server):
    app, client = server
    ids = [new_game(client, game="indian", opponents=["rule"])["id"] for _ in range(5)]
    seeds = {hidden_state(app, i).seed for i in ids}
    assert len(seeds) == 5
    seed = next(iter(seeds))
    agents = {agent_seed(seed, hand, p) for hand in range(3) for p in range(4)}
    assert len(agents) == 12 and not agents & {seed, seed + 1, seed + 2}
    assert agent_seed(seed, 0, 1) == agent_seed(seed, 0, 1)


# ----------------------------------------------------------------------------- 4xx, never 5xx


HOSTILE_BODIES = [
    b"[" * 8000, b"{" * 8000, b'{"a":' * 5000 + b"1" + b"}" * 5000, b'{"a": [[[[[[[[[[1]]]]]]]]]]}',
    b"\xff\xfe\x00", b"NaN", b'{"seed": NaN}', b'{"seed": Infinity}', b'{"seed": -Infinity}', b'{"seed": 1e400}',
    b'{"seed": -5}', b'{"seed": ' + b"9" * 400 + b"}", b'{"seed": ' + b"9" * 5000 + b"}", b'{"seed": 1.5}',
    b'{"seed": 9007199254740992}', b'{"players": 1e308}', b'{"players": -1}', b'{"players": 0}',
    b'{"action": -1}', b'{"action": 1.0}', b'{"action": 99999999}', b'{"card": 1e20, "kind": "discard"}',
    b'{"kind": "meld", "cards": [1e5]}', b'{"kind": "meld", "cards": [[1]]}',
    b'{"kind": "place", "card": 1, "slot": -7}',
    b'{"options": {"max_turns": -1}}', b'{"options": {"match_target": 0}}', b'{"options": {"max_turns": 1.5}}',
    b'{"options": {"match_target": 9007199254740991, "max_turns": 9007199254740991, "x": 1}}',
    b'{"opponents": [1]}', b'{"opponents": "' + b"a" * 15000 + b'"}', b'{"hint": null}', b'{"game": null}',
    b'"text"', b"12", b"null", b"\x00", b'{"a": "\\ud800"}', b'{"\\ud800": 1}', b'{"game": "\\ud800"}',
    b'{"options": {"\\ud800": 1}}', b'{"opponents": ["\\ud800"]}', b'{"hint": "\\udfff"}', b'{"kind": "\\ud800"}',
    b'{"kind": "discard", "card": "\\ud800"}',
]


@pytest.mark.parametrize("body", HOSTILE_BODIES, ids=lambda b: repr(b[:24]))
def test_hostile_bodies_on_every_endpoint_are_4xx_never_5xx(server, body):
    app, client = server
    game_id = new_game(client, game="romi", opponents=["rule"], seed=8)["id"]
    before = hidden_state(app, game_id).state.to_dict()
    count = len(app.state.store)
    for method, path in (("POST", "/api/games"), ("POST", f"/api/games/{game_id}/move"),
                         ("POST", f"/api/games/{game_id}/opponent"), ("POST", f"/api/games/{game_id}/next"),
                         ("GET", f"/api/games/{game_id}/hint"), ("GET", "/api/meta"), ("DELETE", "/api/games/x"),
                         ("PUT", "/api/games"), ("POST", "/api/replays"), ("GET", f"/api/games/{game_id}/records")):
        reply = client.request(method, path, content=body, headers={"content-type": "application/json"})
        assert reply.status_code < 500, (method, path, reply.text)
        if reply.status_code >= 400:
            assert reply.json()["error"], reply.text
    assert hidden_state(app, game_id).state.to_dict() == before
    assert len(app.state.store) <= count + 1  # at most a valid new game (a body that is a proper request)


def raw_post(url: str, path: str, size: int, chunked: bool) -> tuple[float, bytes]:
    """Send a ``size``-byte body (chunked, or with its Content-Length) while reading the reply; the seconds
    until the reply's first bytes, and those bytes."""
    host, port = url.split("//")[1].split(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    head = f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
    head += "Transfer-Encoding: chunked\r\n\r\n" if chunked else f"Content-Length: {size}\r\n\r\n"
    stop = threading.Event()

    def pump():
        block = b" " * 65536
        sent = 0
        try:
            while sent < size and not stop.is_set():
                sock.sendall(b"10000\r\n" + block + b"\r\n" if chunked else block)
                sent += len(block)
        except OSError:
            pass  # the server closed the connection after its reply

    started = time.perf_counter()
    sock.sendall(head.encode())
    sender = threading.Thread(target=pump, daemon=True)
    sender.start()
    try:
        first = sock.recv(4096)
        return time.perf_counter() - started, first
    finally:
        stop.set()
        sock.close()
        sender.join(10)


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_64_mb_body_is_refused_in_under_2_seconds_unread(server, chunked):
    app, client = server
    game_id = new_game(client, game="romi", opponents=["rule"], seed=8)["id"]
    url = str(client.base_url).rstrip("/")
    for path in ("/api/games", f"/api/games/{game_id}/move"):
        seconds, reply = raw_post(url, path, 64 << 20, chunked)
        assert reply.startswith(b"HTTP/1.1 413"), reply
        assert seconds < 2, f"{path}: {seconds:.2f} s"
        assert b"at most 16384" in reply or b"content-length" in reply
    assert client.get(f"/api/games/{game_id}").status_code == 200  # the server goes on serving


def test_a_server_bug_is_still_a_500_naming_no_details(server, monkeypatch):
    app, client = server
    game_id = new_game(client, game="romi", opponents=["rule"], seed=8)["id"]
    game = hidden_state(app, game_id)

    def broken():
        raise KeyError("internal detail")
    monkeypatch.setattr(game, "next_hand", broken)
    with httpx.Client(base_url=client.base_url, timeout=60) as own:  # uvicorn closes the connection after a bug
        reply = own.post(f"/api/games/{game_id}/next")
    assert reply.status_code == 500 and "KeyError" in reply.json()["error"]
    assert "internal detail" not in reply.text
    assert all(reply.headers[k] == v for k, v in SECURITY_HEADERS.items())


# ----------------------------------------------------------------------------- only the table's own page acts


def test_another_sites_state_changing_calls_are_refused(server):
    app, client = server
    game_id = new_game(client, game="romi", opponents=["rule"], seed=8)["id"]
    count = len(app.state.store)
    own = str(client.base_url).rstrip("/")
    for headers in ({"Origin": "http://evil.example"}, {"Origin": "null"},
                    {"Origin": own.replace("127.0.0.1", "localhost")}, {"Origin": own + "0"},
                    {"Sec-Fetch-Site": "cross-site"}, {"Sec-Fetch-Site": "same-site"},
                    {"Origin": own, "Sec-Fetch-Site": "cross-site"}):
        for method, path, body in (("POST", "/api/games", b"{}"),
                                   ("POST", f"/api/games/{game_id}/move", b'{"kind": "draw"}'),
                                   ("POST", "/api/replays", b"{}"), ("DELETE", f"/api/games/{game_id}", b"")):
            # a form's text/plain POST needs no CORS preflight: the server itself must refuse it
            reply = client.request(method, path, content=body, headers={**headers, "content-type": "text/plain"})
            assert reply.status_code == 403 and "refused" in reply.json()["error"], (headers, path, reply.text)
    assert len(app.state.store) == count and hidden_state(app, game_id).log == []
    mine = client.post("/api/games", json={}, headers={"Origin": own, "Sec-Fetch-Site": "same-origin"})
    assert mine.status_code == 201
    assert client.get("/api/meta", headers={"Origin": "http://evil.example"}).status_code == 200  # reads change nothing


def test_a_foreign_host_name_is_refused(server):
    _, client = server
    port = str(client.base_url).rstrip("/").rsplit(":", 1)[1]
    for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", "[::2]", ""):
        for method, path in (("GET", "/"), ("GET", "/api/meta"), ("POST", "/api/games"), ("GET", "/static/table.js")):
            reply = client.request(method, path, headers={"Host": host})
            assert reply.status_code == 421 and "--allowed-host" in reply.json()["error"], (host, path, reply.text)
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST:{port}", f"[::1]:{port}"):
        assert client.get("/api/meta", headers={"Host": host}).status_code == 200, host


def test_allowed_host_names():
    assert served_names("127.0.0.1") == {"127.0.0.1", "localhost", "::1"}
    assert served_names("0.0.0.0", ["Table.Local", "[fe80::1]"]) == {"127.0.0.1", "localhost", "::1", "table.local",
                                                                     "fe80::1"}
    assert "192.168.1.5" in served_names("192.168.1.5")
    names = [host_name(h) for h in ("a.b:80", "[::1]:8000", "[::1]", "::1", "A.B")]
    assert names == ["a.b", "::1", "::1", "::1", "a.b"]
    app = create_app(TableDefaults(delay_ms=0), host_names=served_names("127.0.0.1", ["table.local"]))
    with running_server(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        assert client.get("/api/meta", headers={"Host": "table.local:8000"}).status_code == 200
        assert client.get("/api/meta", headers={"Host": "other.local"}).status_code == 421


def test_every_reply_carries_the_security_headers(server):
    app, client = server
    game_id = new_game(client, game="romi", opponents=["rule"], seed=8)["id"]
    replies = [client.get("/"), client.get("/static/table.js"), client.get("/static/nothing.js"),
               client.get("/api/meta"), client.get(f"/api/games/{game_id}"), client.get(f"/api/games/{game_id}/hint"),
               client.put("/api/games"),
               client.post(f"/api/games/{game_id}/move", content=b"x" * (MAX_BODY + 1)),
               client.get("/", headers={"Host": "evil.example"}),
               client.post("/api/games", json={}, headers={"Origin": "http://evil.example"}),
               client.post("/api/games", json={"game": "poker"}), client.post("/api/games", json={})]
    assert {r.status_code for r in replies} == {200, 201, 400, 403, 404, 405, 409, 413, 421} - {409}
    for reply in replies:
        for name, value in SECURITY_HEADERS.items():
            assert reply.headers.get(name) == value, (reply.request.url, reply.status_code, name)
    csp = SECURITY_HEADERS["content-security-policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp


def test_new_games_are_rate_limited_per_client():
    now = [0.0]
    app = create_app(TableDefaults(game="indian", opponents=("rule",), delay_ms=0), new_games_per_minute=3,
                     clock=lambda: now[0])
    with running_server(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        game_id = client.post("/api/games", json={}).json()["id"]
        assert [client.post("/api/games", json={}).status_code for _ in range(2)] == [201, 201]
        refused = client.post("/api/games", json={})
        assert refused.status_code == 429 and refused.headers["retry-after"] == "20"
        assert "at most 3 a minute" in refused.json()["error"] and "try again in 20 s" in refused.json()["error"]
        assert client.get(f"/api/games/{game_id}").status_code == 200  # playing goes on
        now[0] += 20
        assert client.post("/api/games", json={}).status_code == 201
        assert client.post("/api/games", json={}).status_code == 429
    limiter = NewGameLimiter(2, clock=lambda: now[0])
    assert [limiter.wait("a"), limiter.wait("a"), limiter.wait("b")] == [0, 0, 0]
    assert limiter.wait("a") == pytest.approx(30)
    with pytest.raises(ValueError, match="per_minute=0"):
        NewGameLimiter(0)


def test_a_full_store_drops_the_opening_clients_own_games_first():
    store = GameStore(max_games=3)
    person = store.add(object(), "10.0.0.1")
    flood = [store.add(object(), "10.0.0.66") for _ in range(50)]
    assert len(store) == 3 and store.get(person) is not None
    assert all(store.get(i) is not None for i in flood[-2:])
    newcomer = store.add(object(), "10.0.0.2")  # holds none: the least recently used game goes
    assert store.get(newcomer) is not None and len(store) == 3


def test_one_games_slow_agent_does_not_hold_up_another_game(server):
    """A hint that takes long (a search) holds its own game's lock only: another game plays meanwhile."""
    app, client = server
    slow_id = new_game(client, game="romi", opponents=["rule"], seed=8)["id"]
    other_id = new_game(client, game="romi", opponents=["rule"], seed=9)["id"]
    slow = hidden_state(app, slow_id)
    entered, release = threading.Event(), threading.Event()

    class SlowAgent:
        def reset(self, seed=None):
            pass

        def act(self, observation, mask):
            entered.set()
            release.wait(30)
            return int(mask.nonzero()[0][0])
    slow._hint_agent = SlowAgent()
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(client.get, f"/api/games/{slow_id}/hint")
        assert entered.wait(30)
        started = time.perf_counter()
        played = _play_some(client, other_id, 6)
        took = time.perf_counter() - started
        assert not pending.done()  # the slow hint is still thinking
        release.set()
        assert pending.result(30).status_code == 200
    assert played and took < 20


# ----------------------------------------------------------------------------- many games


def test_abandoned_games_expire_and_memory_is_bounded():
    now = [0.0]
    store = GameStore(max_games=50, idle_seconds=100, clock=lambda: now[0])
    app = create_app(TableDefaults(game="indian", opponents=("rule",), delay_ms=0), store, new_games_per_minute=1000)
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
                        (["--new-games-per-minute", "0"], "--new-games-per-minute must be a positive number"),
                        (["--game", "romi", "--opponents", "onnx:missing.onnx"], "no such file"),
                        (["--record-dir", "/proc/no-records-here"], "--record-dir /proc/no-records-here: cannot be")):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 2
        assert words in capsys.readouterr().err


def test_command_line_binds_localhost_by_default():
    assert build_parser().parse_args([]).host == "127.0.0.1"
    text = build_parser().format_help()
    for flag in ("--host", "--allowed-host", "--port", "--game", "--players", "--opponents", "--no-practice",
                 "--new-games-per-minute", "--record-dir"):
        assert flag in text


def test_serves_with_the_base_install_and_no_torch(tmp_path):
    """``python -m rummy_apps.web`` with torch made unimportable: it serves, and a pretrained game plays."""
    script = tmp_path / "serve.py"
    script.write_text(textwrap.dedent("""
        import runpy, sys
        sys.modules["torch"] = None  # any import of torch now fails
        sys.argv = ["rummy-web", "--port", "0", "--game", "romi"]
        runpy.run_module("rummy_apps.web", run_name="__main__")
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


def test_load_benchmark_plays_against_a_local_server_and_counts_errors():
    """``benchmarks/bench_web.py`` (docs/web.md "Measured"), briefly: games played, server times, no errors."""
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_web.py"), "--games", "4", "--seconds", "2",
                           "--game", "romi", "--pause-ms", "0"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "machine: " in done.stdout and "cores" in done.stdout
    figures = re.search(r"(\d+) moves, \d+ moves/s, (\d+) errors", done.stdout)
    assert figures and int(figures.group(1)) > 20 and figures.group(2) == "0", done.stdout
    assert re.search(r"server time per move: median [\d.]+ ms · p95 [\d.]+ ms", done.stdout), done.stdout
