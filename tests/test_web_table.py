"""What the web table says, checked through its API: moves and refusals in plain words ("you",
"lay 5♥ on meld 2"), the log numbered by the hand, each player's whole last turn and the melds the
others just laid, the moves that end the hand, finished hands with what each added to its total,
hand-over messages that agree with the match, and the rule book the page links rule ids to
(docs/web.md "The page")."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("starlette", reason="the web table needs the [web] extra (pip install -e '.[web]')")
pytest.importorskip("uvicorn", reason="the web table needs the [web] extra (pip install -e '.[web]')")
httpx = pytest.importorskip("httpx", reason="the web API tests use httpx (installed with starlette's test deps)")

from web_helpers import running_server  # noqa: E402

from rummy_env.cards import parse_card  # noqa: E402
from rummy_env.game import DECLARE, DISCARD, DRAW, MELD, PLACE  # noqa: E402
from rummy_env.ruleset import GAME_SPECS  # noqa: E402
from rummy_apps.web.app import TableDefaults, create_app  # noqa: E402
from rummy_apps.web.rulebook import render  # noqa: E402
from rummy_apps.web.session import LOG_SHOWN  # noqa: E402
from rummy_apps.web.store import GameStore  # noqa: E402
from rummy_apps.web.words import card_words, done_words, move_words, plain_reason, turn_words  # noqa: E402

G2_CODE = re.compile(r"(?<![\w*=])[A2-9TJQK][shdc](?!\w)")
"""A card in G2 notation (``5h``): the page's words never use it."""
RULE_IDS = re.compile(r"\b[GIBR]\d{1,2}\b")


@pytest.fixture(scope="module")
def server():
    app = create_app(TableDefaults(delay_ms=0), GameStore(max_games=200), new_games_per_minute=100_000)
    with running_server(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield app, client


def new_game(client, **fields) -> dict:
    reply = client.post("/api/games", json=fields)
    assert reply.status_code == 201, reply.text
    return reply.json()


def step(client, table: dict) -> dict:
    """One move: the person's (the hint's) or the agent's to act; the reply."""
    game_id = table["id"]
    if table["table"]["view"]["to_act"] == 0:
        hint = client.get(f"/api/games/{game_id}/hint").json()["hint"]
        reply = client.post(f"/api/games/{game_id}/move", json={"action": hint["action"]})
    else:
        reply = client.post(f"/api/games/{game_id}/opponent")
    assert reply.status_code == 200, reply.text
    return reply.json()


def play_to_end(client, body: dict, check=None, limit: int = 600) -> dict:
    for _ in range(limit):
        if body["table"]["result"] is not None:
            return body
        body = step(client, body)
        if check is not None:
            check(body)
    raise AssertionError(f"the hand did not end in {limit} moves")


# ----------------------------------------------------------------------------- plain words


def test_refusals_say_you_and_name_cards_and_melds_as_the_page_does(server):
    """I4: discarding before drawing is refused in the page's words, the rule id kept for the page's link."""
    app, client = server
    body = new_game(client, game="romi", opponents=["rule"], seed=1)
    card = body["table"]["view"]["hand"][0]
    error = client.post(f"/api/games/{body['id']}/move", json={"kind": "discard", "card": card}).json()["error"]
    assert error.startswith(f"you cannot discard {card_words(card)}: draw first")
    assert "player_" not in error and not G2_CODE.search(error) and RULE_IDS.findall(error) == ["I4", "B3", "R4"]


def test_engine_reasons_become_the_pages_words():
    """Card codes, 0-based slots and seat names of the engine's refusals become the page's."""
    reason = ("illegal move (place Qh on table meld 0) for player_0: Qh is not of the suit of the run on "
              "table meld 0 (G4); player_1 holds * and Td")
    said = plain_reason(reason, ["you", "player 1"])
    assert said == "Q♥ is not of the suit of the run on meld 1 (G4); player 1 holds joker and 10♦"


def test_a_refused_meld_and_lay_off_use_the_pages_meld_numbers(server):
    """B3, G3, G4: meld refusals name cards by symbol; a lay-off's refusal counts table melds from 1."""
    app, client = server
    for seed in range(60):
        body = new_game(client, game="basic", opponents=["rule"], seed=seed)
        while body["table"]["result"] is None and not (body["table"]["view"]["table"]
                                                       and body["table"]["view"]["to_act"] == 0
                                                       and body["table"]["view"]["phase"] == "play"):
            body = step(client, body)
        if body["table"]["result"] is None:
            break
    else:
        pytest.fail("no deal of 60 put a meld on the table at the person's play phase")
    view = body["table"]["view"]
    slots = len(view["table"])
    laid = {(m["card"], m["slot"]) for m in view["legal"] if m["kind"] == "place"}
    card, slot = next((c, s) for c in view["hand"] for s in range(slots) if (c, s) not in laid)
    error = client.post(f"/api/games/{body['id']}/move", json={"kind": "place", "card": card, "slot": slot}).json()
    assert error["refused"] and error["error"].startswith(f"you cannot lay {card_words(card)} on meld {slot + 1}: ")
    assert not G2_CODE.search(error["error"]) and "player_" not in error["error"]
    hand = view["hand"]
    refused = client.post(f"/api/games/{body['id']}/move", json={"kind": "meld", "cards": hand[:2]}).json()
    assert refused["error"].startswith(f"you cannot meld {card_words(hand[0])} {card_words(hand[1])}: ")
    assert RULE_IDS.search(refused["error"]) and not G2_CODE.search(refused["error"])


def test_legal_moves_hints_and_log_are_in_plain_words(server):
    """The buttons' words (``lay 5♥ on meld 2``), the hint's and the log's: no G2 codes, no seat numbers."""
    _, client = server
    body = new_game(client, game="basic", players=3, opponents=["rule"], seed=2)
    texts = []

    def check(reply):
        texts.extend(m["text"] for m in reply["table"]["view"]["legal"])
        texts.extend(f"{e['name']}: {e['text']}" for e in reply["table"]["log"])

    end = play_to_end(client, body, check)
    assert texts and not [t for t in texts if G2_CODE.search(t) or "player_" in t]
    assert end["table"]["names"] == ["you", "player 1", "player 2"]
    assert any(t.startswith(("lay ", "meld ")) for t in texts)
    assert all(re.fullmatch(r"(you|player \d): (drew|took|discarded|laid|swapped|declared) .*", t)
               for t in texts if ": " in t and t.split(": ")[0] in end["table"]["names"])


# ----------------------------------------------------------------------------- the log and the turns


def test_the_log_is_numbered_by_the_hand_and_ends_with_the_newest_move(server):
    """Past ``LOG_SHOWN`` moves the reply carries the last ones, each with its number in the hand."""
    _, client = server
    body = new_game(client, game="romi", opponents=["rule"], seed=5)
    longest = 0

    def check(reply):
        nonlocal longest
        t = reply["table"]
        if t["result"] is None or reply["event"]:
            numbers = [e["number"] for e in t["log"]]
            assert numbers == list(range(max(1, t["moves_made"] - LOG_SHOWN + 1), t["moves_made"] + 1))
            assert t["log"][-1] == reply["event"]
            longest = max(longest, t["moves_made"])

    play_to_end(client, body, check)
    assert longest > LOG_SHOWN


def test_each_opponents_whole_last_turn_and_the_melds_it_laid(server):
    """B3: an opponent's turn of several plays (draw, melds, lay-offs, discard) is shown whole; the melds
    the others laid or extended since the person's last turn are named, the person's own never."""
    _, client = server
    whole_turns = fresh_seen = 0
    for seed in range(6):
        body = new_game(client, game="basic", players=3, opponents=["rule"], seed=seed)
        log: list[dict] = []
        fresh: set[int] = set()
        while body["table"]["result"] is None:
            before = body["table"]["view"]["to_act"]
            body = step(client, body)
            event, t = body["event"], body["table"]
            if log and log[-1]["seat"] != event["seat"] and log[-1]["seat"] == 0:
                fresh.clear()  # the person's turn is over
            if event["seat"] != 0:
                found = re.search(r"(?:as|on) meld (\d+)", event["text"])
                if found:
                    fresh.add(int(found[1]) - 1)
            log.append(event)
            assert t["fresh_melds"] == sorted(fresh)
            turn = []
            for e in reversed(log):
                if e["seat"] != event["seat"]:
                    break
                turn.insert(0, e)
            said = t["last_turns"][event["seat"]]
            assert said.startswith(turn[0]["text"]) and said.endswith(turn[-1]["text"])
            for e in turn:
                if not e["text"].startswith("laid ") or " as meld " not in e["text"]:
                    assert e["text"] in said
            if event["seat"] != 0 and before != t["view"]["to_act"] and len(turn) >= 3:
                whole_turns += 1
            fresh_seen += bool(fresh)
    assert whole_turns and fresh_seen


def test_turn_words_count_a_run_of_melds():
    moves = [((DRAW, 0, 0), "drew from the stock"), ((MELD, 1, 0), "laid 5♥ 6♥ 7♥ as meld 1"),
             ((MELD, 2, 0), "laid 8♣ 8♦ 8♠ as meld 2"), ((PLACE, 3, 0), "laid off 9♥ on meld 1"),
             ((DISCARD, 4, 0), "discarded K♠")]
    assert turn_words(moves) == ("drew from the stock, laid 2 melds (5♥ 6♥ 7♥ as meld 1; 8♣ 8♦ 8♠ as meld 2), "
                                 "laid off 9♥ on meld 1, discarded K♠")


# ----------------------------------------------------------------------------- ending a hand


@pytest.mark.parametrize("game, seed", [("indian", 2), ("basic", 2), ("romi", 11)])
def test_the_moves_that_end_the_hand_are_marked(server, game, seed):
    """I5 (a declaration), B4 and R6 (the last card), R4 (the cut card, taken only to go out): a legal
    move ``finishes`` exactly when playing it ends the hand, or commits to going out (the cut card)."""
    app, client = server
    body = new_game(client, game=game, opponents=["rule"], seed=seed)
    marked = 0
    for _ in range(600):
        t = body["table"]
        if t["result"] is not None:
            break
        if t["view"]["to_act"] == 0:
            game_state = app.state.store.get(body["id"]).state
            for m in t["view"]["legal"]:
                trial = game_state.clone()
                trial.apply(app.state.store.get(body["id"]).layout.move(m["action"]))
                assert m["finishes"] == (trial.is_over or m["kind"] == "take_cut"), m
                marked += m["finishes"]
        body = step(client, body)
    assert body["table"]["result"] is not None
    if body["table"]["result"]["winner"] == 0:
        assert marked  # the person's own end of the hand was marked before it was played


def test_finished_hands_list_what_each_added_to_its_total(server):
    """I8, R8: what each pays adds to the totals (lowest wins); B6: the winner scores (highest wins)."""
    _, client = server
    for game in ("romi", "basic"):
        body = new_game(client, game=game, opponents=["rule"], seed=3)
        end = play_to_end(client, body)["table"]
        result, finished = end["result"], end["finished"]
        assert [h["hand"] for h in finished] == [1] and finished[0]["outcome"] == result["outcome"]
        assert finished[0]["totals"] == end["match"]["totals"]
        assert end["match"]["lowest_wins"] == GAME_SPECS[game].low_total_wins
        if GAME_SPECS[game].low_total_wins:
            assert finished[0]["added"] == result["payments"]
        elif result["winner"] is not None:
            assert finished[0]["added"][result["winner"]] == sum(result["payments"])
            assert sum(finished[0]["added"]) == sum(result["payments"])
        nxt = client.post(f"/api/games/{body['id']}/next").json()["table"]
        assert nxt["finished"] == finished and nxt["result"] is None


def test_hand_over_messages_agree_with_the_match(server):
    """After a hand the calls that play say to deal the next hand; after the match's last hand (B6) they say
    the match is over too, never both."""
    _, client = server
    for options, words, not_words in (({}, "ask for the next hand", "match"),
                                      ({"match_target": 1}, "the hand and the match are over", "next hand")):
        for seed in range(20):
            body = new_game(client, game="basic", opponents=["rule"], seed=seed, options=options)
            end = play_to_end(client, body)["table"]
            if end["match"]["over"] == bool(options):
                break
        else:
            pytest.fail(f"no hand of 20 ended the way wanted ({options})")
        for call in (lambda: client.post(f"/api/games/{body['id']}/move", json={"kind": "draw"}),
                     lambda: client.post(f"/api/games/{body['id']}/opponent"),
                     lambda: client.get(f"/api/games/{body['id']}/hint")):
            error = call().json()["error"]
            assert words in error and not_words not in error, error


# ----------------------------------------------------------------------------- the rule book


def test_the_rule_book_page_holds_every_rule_the_table_cites(server):
    """``/rules`` serves docs/rules.md with an anchor per rule id, under the page's security headers."""
    _, client = server
    reply = client.get("/rules")
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in reply.headers["content-security-policy"]
    anchors = set(re.findall(r'<li id="([GIBR]\d+)">', reply.text))
    assert {"G1", "G9", "I5", "B6", "R4", "R8"} <= anchors
    for spec in GAME_SPECS.values():
        assert {spec.rule_ids.match, spec.rule_ids.payment} <= anchors
    assert "<script" not in reply.text and "&lt;" not in reply.text.split("<body>")[0]
    assert client.get("/static/rules.css").status_code == 200


def test_the_rule_book_page_escapes_the_book():
    page = render("# Rules <b>\n\n- **G1 Cards.** a <script> and `code`\n  more\n  - nested *\n\nafter")
    rule = '<li id="G1"><strong>G1 Cards.</strong> a &lt;script&gt; and <code>code</code> more<p>nested *</p></li>'
    assert rule in page
    assert "<h1>Rules &lt;b&gt;</h1>" in page and "<p>after</p>" in page and "<script>" not in page


def test_move_words_name_each_kind_of_move():
    """G7, R4, R5, I5: the words of each move kind, as the page's buttons show them."""
    from rummy_env.game import GameState
    from rummy_env.ruleset import make_ruleset

    state = GameState(make_ruleset("indian", 2), 4, 0)
    state.apply((DRAW, 0, 0))
    card = next(c for c in range(53) if state.hands[0][c])
    assert move_words(state, (DISCARD, card, 0)).startswith("discard ")
    assert move_words(state, (DECLARE, card, 0)).startswith("declare, discarding ")
    discard = (DISCARD, card, 0)
    assert done_words(state, discard) == move_words(state, discard).replace("discard", "discarded")
    assert parse_card(move_words(state, (DISCARD, card, 0)).split()[-1]) == card
