"""Game records at the web table (docs/web.md "Records" and "Replays"): each finished hand kept as a
record, refused before the match is over and served after (``python -m rummy_env.records check``
accepts them), ``--record-dir``, and the replay viewer's API: a good record stepped through face up,
a tampered one refused naming its line and action, an oversize file refused unread."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("starlette", reason="the web table needs the [web] extra (pip install -e '.[web]')")
pytest.importorskip("uvicorn", reason="the web table needs the [web] extra (pip install -e '.[web]')")
httpx = pytest.importorskip("httpx", reason="the API tests need httpx (pip install httpx)")

from web_helpers import running_server  # noqa: E402

from rummy_env.cards import parse_card  # noqa: E402
from rummy_env.game import GameState  # noqa: E402
from rummy_env.records import main as records_main, replay  # noqa: E402
from rummy_env.ruleset import make_ruleset  # noqa: E402
from rummy_apps.web.app import MAX_RECORDS_BODY, TableDefaults, create_app  # noqa: E402
from rummy_apps.web.archive import RecordDir  # noqa: E402
from rummy_apps.web import replays  # noqa: E402
from rummy_apps.web.replays import MAX_ACTIONS  # noqa: E402
from rummy_apps.web.session import SEAT  # noqa: E402
from rummy_apps.web.view import sorted_cards  # noqa: E402


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A live server that also keeps every finished hand in a records folder, and an httpx client on it."""
    folder = tmp_path_factory.mktemp("web-records")
    app = create_app(TableDefaults(delay_ms=0), new_games_per_minute=100_000, record_dir=RecordDir(folder))
    with running_server(app) as url, httpx.Client(base_url=url, timeout=60) as client:
        yield app, client, folder


def play_turns(client, game_id: str, table: dict, until) -> dict:
    """Play (the person follows the hint, the agents move) until ``until(table)``; that table."""
    for _ in range(5000):
        if until(table):
            return table
        if table["result"] is not None:
            reply = client.post(f"/api/games/{game_id}/next")
        elif table["view"]["to_act"] == SEAT:
            hint = client.get(f"/api/games/{game_id}/hint").json()["hint"]
            reply = client.post(f"/api/games/{game_id}/move", json={"action": hint["action"]})
        else:
            reply = client.post(f"/api/games/{game_id}/opponent")
        assert reply.status_code == 200, reply.text
        table = reply.json()["table"]
    raise AssertionError("the match did not end")


def finished_match(client, game: str, opponents: list[str], seed: int, target: int) -> tuple[str, dict, list]:
    """A practice match played to its end; its id, last table, and the records refused on the way (409s)."""
    body = client.post("/api/games", json={"game": game, "opponents": opponents, "seed": seed,
                                           "options": {"match_target": target}})
    assert body.status_code == 201, body.text
    game_id = body.json()["id"]
    refusals = []

    def over(table):
        if table["result"] is not None and not table["match"]["over"]:
            refusals.append(client.get(f"/api/games/{game_id}/records"))  # a finished hand, the match goes on
        return table["match"]["over"]

    return game_id, play_turns(client, game_id, body.json()["table"], over), refusals


@pytest.fixture(scope="module")
def romi_match(server):
    """A römi match of at least two hands (target 60, R8), played to its end; its id, last table and refusals."""
    _, client, _ = server
    return finished_match(client, "romi", ["rule"], 5, 60)


# ----------------------------------------------------------------------------- records of the table's hands


def test_records_are_refused_until_the_match_is_over_then_served(server, romi_match):
    _, client, _ = server
    game_id, table, refusals = romi_match
    assert len(table["finished"]) >= 2 and refusals  # the records were asked for between hands
    for reply in refusals:
        assert reply.status_code == 409
        error = reply.json()["error"]
        assert "once the match is over" in error and "R8" in error
    served = client.get(f"/api/games/{game_id}/records")
    assert served.status_code == 200
    assert served.headers["content-type"].startswith("application/x-ndjson")
    assert served.headers["content-disposition"] == f'attachment; filename="romi-match-{table["seed"]}.jsonl"'
    records = [json.loads(line) for line in served.text.splitlines()]
    assert len(records) == len(table["finished"])
    for k, (record, hand) in enumerate(zip(records, table["finished"])):
        assert record["players"] == ["human", "rule"] and record["game"] == "romi"
        assert record["seed"] == f"{table['seed']}:{k}" and record["first_player"] == k % 2  # G6
        assert record["source"] == {"program": "web", "hand": k + 1}
        assert record["result"]["outcome"] == hand["outcome"] and record["result"]["winner"] == hand["winner"]
        assert list(replay(record).result.payments) == record["result"]["payments"]


def test_records_check_accepts_what_the_web_serves_and_refuses_them_tampered(server, romi_match, tmp_path, capsys):
    _, client, _ = server
    text = client.get(f"/api/games/{romi_match[0]}/records").text
    path = tmp_path / "web.jsonl"
    path.write_text(text, encoding="utf-8")
    assert records_main(["check", str(path)]) == 0
    assert "every action and result agrees" in capsys.readouterr().out
    records = [json.loads(line) for line in text.splitlines()]
    records[1]["actions"][4], records[1]["actions"][5] = records[1]["actions"][5], records[1]["actions"][4]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert records_main(["check", str(path)]) == 1
    assert "line 2, actions[4]" in capsys.readouterr().err


def test_record_dir_keeps_every_finished_hand_one_file_a_match(server, romi_match, capsys):
    _, client, folder = server
    served = client.get(f"/api/games/{romi_match[0]}/records").text
    files = [p for p in folder.glob("*-romi-*.jsonl") if p.read_text(encoding="utf-8") == served]
    assert len(files) == 1, sorted(p.name for p in folder.iterdir())
    assert records_main(["check", str(files[0])]) == 0
    capsys.readouterr()


def test_a_record_dir_that_cannot_be_written_is_refused(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(OSError):
        RecordDir(tmp_path / "file" / "below")


# ----------------------------------------------------------------------------- the replay viewer's API


def test_replay_steps_through_a_hand_face_up(server, romi_match):
    _, client, _ = server
    text = client.get(f"/api/games/{romi_match[0]}/records").text
    records = [json.loads(line) for line in text.splitlines()]
    reply = client.post("/api/replays?hand=2", content=text.encode())
    assert reply.status_code == 200, reply.text
    body = reply.json()
    record = records[1]
    assert body["hand"] == 2 and body["line"] == 2
    assert [h["line"] for h in body["hands"]] == list(range(1, len(records) + 1))
    assert body["players"] == ["human", "rule"] and body["seed"] == record["seed"]
    steps = body["steps"]
    assert [s["step"] for s in steps] == list(range(len(record["actions"]) + 1))
    assert [s["action"] for s in steps[1:]] == record["actions"]
    rules = make_ruleset("romi", 2, **record["options"])
    dealt = GameState.from_deck(rules, [parse_card(c) for c in record["deck"]][::-1], record["first_player"])
    assert steps[0]["hands"] == [sorted_cards(h) for h in dealt.hands]  # every hand face up, as dealt (G6)
    assert steps[0]["stock_top"] == dealt.stock[-1] and steps[0]["cut_card"] == dealt.cut_card  # R2
    end = replay(record)
    assert steps[-1]["hands"] == [sorted_cards(h) for h in end.hands] and steps[-1]["to_act"] is None
    assert body["result"]["payments"] == record["result"]["payments"]
    draws = [s for s, text in zip(steps[1:], record["action_text"]) if text == "draw"]
    assert draws and all(s["text"].startswith("drew from the stock (") for s in draws)  # the card drawn, face up
    for before, after in zip(steps, steps[1:]):
        if after["text"].startswith("drew from the stock"):
            assert after["stock"] == before["stock"] - 1 and before["stock_top"] in after["hands"][after["seat"]]


def test_replay_of_a_tampered_record_is_a_400_naming_line_and_action(server, romi_match):
    _, client, _ = server
    text = client.get(f"/api/games/{romi_match[0]}/records").text
    lines = text.splitlines()
    record = json.loads(lines[1])
    record["actions"][3] = record["actions"][0]  # a second draw in one turn, or a take where a discard goes
    tampered = "\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n"
    for hand in (1, 2):  # every record is checked, whichever hand is shown
        reply = client.post(f"/api/replays?hand={hand}", content=tampered.encode())
        assert reply.status_code == 400 and reply.json()["error"].startswith("line 2, actions[3]: "), reply.text
    record = json.loads(lines[0])
    record["action_text"][2] = "discard A♠"
    reply = client.post("/api/replays", content=json.dumps(record).encode())
    assert reply.status_code == 400 and "line 1, actions[2]" in reply.json()["error"]
    assert "the record's text says 'discard A♠'" in reply.json()["error"]


@pytest.mark.parametrize("body, words", [
    (b"", "no records"), (b"\n\n", "no records"),
    (b'{"format": "rummy-env-hand"}\nnot json\n', "line 2: malformed JSON"),
    (b'{"format": "rummy-env-hand"}\n[1]\n', "line 2: the request body is a JSON list"),
    (b'{"format": "rummy-env-hand", "version": 9}\n', "line 1: version 9"),
    (b'{"format": "chess"}\n', "line 1: format 'chess'"), (b"\xff\xfe", "not UTF-8"),
    (b'{"seed": ' + b"9" * 30 + b"}", "line 1: the number"),
])
def test_bad_records_files_are_a_400_naming_the_line(server, body, words):
    _, client, _ = server
    reply = client.post("/api/replays", content=body)
    assert reply.status_code == 400 and words in reply.json()["error"], reply.text


def test_replay_hand_out_of_range_or_not_a_number_is_a_400(server, romi_match):
    _, client, _ = server
    text = client.get(f"/api/games/{romi_match[0]}/records").text.encode()
    count = text.count(b"\n")
    for hand, words in ((0, "counted from 1"), (count + 1, f"holds {count} hands"), ("x", "hand 'x'"),
                        ("-1", "hand '-1'"), ("1" * 30, "expected a hand's number")):
        reply = client.post(f"/api/replays?hand={hand}", content=text)
        assert reply.status_code == 400 and words in reply.json()["error"], reply.text


def test_an_oversize_records_file_is_a_413(server, romi_match):
    _, client, _ = server
    text = client.get(f"/api/games/{romi_match[0]}/records").text
    line = text.splitlines()[0] + "\n"
    fits = (line * (MAX_RECORDS_BODY // len(line)))[:MAX_RECORDS_BODY]
    big = fits + line
    reply = client.post("/api/replays", content=big.encode())
    assert reply.status_code == 413 and f"at most {MAX_RECORDS_BODY}" in reply.json()["error"]
    chunks = (big[i:i + 4096].encode() for i in range(0, len(big), 4096))  # no Content-Length: read in chunks
    reply = client.post("/api/replays", content=chunks)
    assert reply.status_code == 413 and f"over {MAX_RECORDS_BODY} bytes" in reply.json()["error"]


def test_a_hand_longer_than_the_viewer_steps_through_is_a_413(server, romi_match, monkeypatch):
    _, client, _ = server
    line = client.get(f"/api/games/{romi_match[0]}/records").text.splitlines()[0]
    actions = len(json.loads(line)["actions"])
    assert actions < MAX_ACTIONS
    monkeypatch.setattr(replays, "MAX_ACTIONS", actions - 1)
    reply = client.post("/api/replays", content=line.encode())
    assert reply.status_code == 413 and f"line 1: the hand has {actions} actions" in reply.json()["error"]
    monkeypatch.setattr(replays, "MAX_ACTIONS", actions)
    assert client.post("/api/replays", content=line.encode()).status_code == 200


def test_replays_are_rate_limited_per_client_apart_from_new_games(romi_match, server):
    _, client, _ = server
    text = client.get(f"/api/games/{romi_match[0]}/records").text.encode()
    now = [0.0]
    app = create_app(TableDefaults(game="basic", opponents=("rule",), delay_ms=0), new_games_per_minute=2,
                     clock=lambda: now[0])
    with running_server(app) as url, httpx.Client(base_url=url, timeout=60) as other:
        assert [other.post("/api/replays", content=text).status_code for _ in range(3)] == [200, 200, 429]
        refused = other.post("/api/replays", content=text)
        assert refused.status_code == 429 and "too many replays" in refused.json()["error"]
        assert other.post("/api/games", json={}).status_code == 201  # new games have their own bound
        now[0] += 30
        assert other.post("/api/replays", content=text).status_code == 200


def test_the_replay_page_is_served(server):
    _, client, _ = server
    page = client.get("/replay")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert '<script src="/static/replay.js">' in page.text and '<input id="file" type="file"' in page.text
    for name in ("replay.js", "cards.js"):
        assert client.get(f"/static/{name}").status_code == 200
