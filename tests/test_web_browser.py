"""The web table in a real browser: headless Chromium (the system's, through Playwright) plays whole
hands of each game by pointing: clicks on the stock, the pile and the cut card, cards selected and
melded, double-clicks and drops on the pile to discard, drags onto table melds, a refused move,
the hand's end with every hand shown, the finished hands, the next hand and a new match (docs/web.md
"The page"). tests/test_web_page.py checks the page's layout and words."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("starlette", reason="the web table needs the [web] extra (pip install -e '.[web]')")
pytest.importorskip("uvicorn", reason="the web table needs the [web] extra (pip install -e '.[web]')")
sync_api = pytest.importorskip("playwright.sync_api",
                               reason="the browser tests need playwright (pip install playwright)")

from web_helpers import (MY_TURN, browser_context, chromium_path, play_until, running_server, table,  # noqa: E402
                         wait_for_reply)

from rummy_apps.web.app import TableDefaults, create_app  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(chromium_path() is None,
                       reason="no Chromium installed (/usr/bin/chromium): .ci/run installs Debian's "
                              "with apt-get install -y chromium"),
]

TIMEOUT_MS = 15_000


@pytest.fixture(scope="module")
def playwright():
    with sync_api.sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(playwright):
    """A page factory on one live server and one headless Chromium."""
    app = create_app(TableDefaults(game="romi", delay_ms=0))
    with running_server(app) as url, browser_context(playwright) as context:
        context.set_default_timeout(TIMEOUT_MS)

        def open_page(query: str):
            page = context.new_page()
            errors = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(f"{url}/?delay=0&{query}")
            page.wait_for_function("window.rummyPage.table !== null")
            page.errors = errors
            return page

        yield app, open_page


def hand_card(page, card: int, skip: int = 0):
    """The ``skip``-th card of type ``card`` in the person's hand on the page (two decks hold two)."""
    return page.locator(f'#hand .card[data-card="{card}"]').nth(skip)


class Pointer:
    """Plays moves on the page as a person would, cycling through the ways each can be pointed at."""

    def __init__(self, page):
        self.page = page
        self.discards = 0
        self.clicks = 0
        self.used = set()

    def play(self, move: dict) -> None:
        page = self.page
        kind = move["kind"]
        replies = page.evaluate("window.rummyPage.replies")
        if kind in ("draw", "take_discard", "take_cut"):
            page.click({"draw": "#stock", "take_discard": "#pile", "take_cut": "#cut"}[kind])
            self.clicks += 1
            self.used.add(kind)
        elif kind == "discard":
            way = ("double-click", "select and button", "drag to the pile",
                   "select and click the pile")[self.discards % 4]
            self.discards += 1
            card = hand_card(page, move["card"])
            if way == "double-click":
                card.dblclick()
            elif way == "select and button":
                card.click()
                page.get_by_role("button", name=move["text"], exact=True).click()
            elif way == "drag to the pile":
                card.drag_to(page.locator("#pile"))
            else:
                card.click()
                page.click("#pile")
            self.clicks += 2
            self.used.add(way)
        elif kind == "declare":
            hand_card(page, move["card"]).click()
            page.get_by_role("button", name="declare, discarding", exact=False).click()
            self.clicks += 2
            self.used.add(kind)
        elif kind == "meld":
            seen: dict[int, int] = {}
            for card in move["cards"]:
                hand_card(page, card, seen.get(card, 0)).click()
                seen[card] = seen.get(card, 0) + 1
            page.get_by_role("button", name=move["text"], exact=True).click()
            self.clicks += len(move["cards"]) + 1
            self.used.add(kind)
        elif kind in ("place", "place_joker_low"):
            meld = page.locator(f'.meld[data-slot="{move["slot"]}"]')
            box = meld.bounding_box()
            x = 4 if move["end"] == "low" else box["width"] - 4
            hand_card(page, move["card"]).drag_to(meld, target_position={"x": x, "y": box["height"] / 2})
            self.clicks += 1
            self.used.add("swap" if move.get("swap") else kind)
        else:
            raise AssertionError(f"no gesture for {move}")
        wait_for_reply(page, replies)


def follow_hint(page, pointer: Pointer) -> dict:
    """Ask the hint button and play its move by pointing; the table after it."""
    t = table(page)
    page.click("#hint")
    pointer.clicks += 1
    page.wait_for_function("window.rummyPage.hint !== null")
    hint = page.evaluate("window.rummyPage.hint")
    move = next(m for m in t["view"]["legal"] if m["action"] == hint["action"])
    pointer.play(move)
    after = table(page)
    assert page.locator("#message.refused").count() == 0, page.inner_text("#message")
    assert after["moves_made"] > t["moves_made"] or after["hand_number"] != t["hand_number"], (move, after["log"][-2:])
    return after


def play_hand(page, pointer: Pointer, limit: int = 150) -> dict:
    """Follow the hint button's advice by pointing until the hand ends; the last table."""
    for _ in range(limit):
        page.wait_for_function(MY_TURN)
        t = table(page)
        if t["result"] is not None:
            return t
        follow_hint(page, pointer)
    raise AssertionError(f"the hand did not end in {limit} moves")


def check_hand_end(page, t: dict) -> None:
    """Every hand revealed with what it pays (I6, I7, B5, R7), and the match line."""
    page.wait_for_selector("#end:not([hidden])")
    rows = page.locator("#end-hands tr[data-seat]")
    assert rows.count() == t["players"]
    added = t["finished"][-1]["added"]
    for h in t["result"]["hands"]:
        row = page.locator(f'#end-hands tr[data-seat="{h["seat"]}"]')
        assert row.locator(".revealed .card").count() == len(h["cards"])
        assert row.locator("td").nth(2).inner_text() == str(added[h["seat"]])
        assert row.locator("td").nth(3).inner_text() == str(t["match"]["totals"][h["seat"]])
    assert "total wins" in page.inner_text("#end-match")


@pytest.mark.parametrize("game, players, seed", [("indian", 2, 2), ("basic", 3, 2), ("romi", 2, 0)])
def test_whole_hand_by_pointing_then_the_next_hand(browser, game, players, seed):
    app, open_page = browser
    page = open_page(f"game={game}&players={players}&seed={seed}")
    t = table(page)
    assert t["game"] == game and t["players"] == players
    assert page.locator(".opponent").count() == players - 1
    assert page.locator("#hand .card").count() == len(t["view"]["hand"])
    if t["view"]["to_act"] != 0:
        page.wait_for_function(MY_TURN)

    # a refused move: discarding before drawing is refused with the engine's rule, and changes nothing
    t = table(page)
    game_state = app.state.store.get(page.evaluate("window.rummyPage.id")).state
    before = game_state.to_dict()
    replies = page.evaluate("window.rummyPage.replies")
    hand_card(page, t["view"]["hand"][0]).dblclick()
    wait_for_reply(page, replies)
    assert page.inner_text("#message.refused").startswith("you cannot discard ")
    assert "draw first (I4, B3, R4)" in page.inner_text("#message.refused")
    assert game_state.to_dict() == before and table(page)["view"] == t["view"]

    started = time.monotonic()
    pointer = Pointer(page)
    t = play_hand(page, pointer)
    seconds = time.monotonic() - started
    print(f"{game}: a hand by pointing in {seconds:.1f} s, {pointer.clicks} clicks; gestures {sorted(pointer.used)}")
    check_hand_end(page, t)
    assert "draw" in pointer.used or "take_discard" in pointer.used
    if game == "indian":
        assert "declare" in pointer.used  # this deal's hand ends by the person's declaration (I5)
    if game == "basic":
        assert {"meld", "place"} <= pointer.used  # this deal's hints lay a meld and lay off by dropping (B3)

    page.click("#next-hand")
    page.wait_for_function("window.rummyPage.table.hand_number === 2 && window.rummyPage.table.result === null")
    assert page.locator("#end").is_hidden()
    assert "hand 2" in page.inner_text("#subtitle")
    finished = page.locator("#finished li")  # the list of finished hands keeps the first one's result
    assert finished.count() == 1 and finished.inner_text().startswith("hand 1: ")
    assert all(str(a) in finished.inner_text() for a in t["finished"][0]["added"])
    assert page.errors == []


@pytest.mark.parametrize("seed, wanted", [(9, "swap"), (0, "place_joker_low")])
def test_joker_swap_and_joker_at_a_runs_low_end_by_dropping(browser, seed, wanted):
    """Römi R5: a natural card dropped on the meld whose joker stands for it swaps them (the joker is then
    owed to the table); a joker dropped on a run's left end goes to its low end."""
    app, open_page = browser
    page = open_page(f"game=romi&seed={seed}&opponents=rule")
    pointer = Pointer(page)
    for _ in range(40):
        page.wait_for_function(MY_TURN)
        t = table(page)
        assert t["result"] is None, "the hand ended before the move was possible"
        moves = [m for m in t["view"]["legal"] if (m.get("swap") if wanted == "swap" else m["kind"] == wanted)
                 and m["kind"].startswith("place")]
        if moves:
            break
        follow_hint(page, pointer)
    else:
        pytest.fail(f"no {wanted} was offered")
    move = moves[0]
    pointer.play(move)
    game = app.state.store.get(page.evaluate("window.rummyPage.id"))
    assert game.layout.action(game.state.history[-1]) == move["action"]
    after = table(page)
    if wanted == "swap":
        assert after["view"]["owed"] == [52] and "must put joker" in page.inner_text("#status")
        assert page.locator("#hand .card.owed").count() == 1
    play_hand(page, pointer)
    assert page.errors == []


def test_hand_order_drag_and_sorting(browser):
    _, open_page = browser
    page = open_page("game=indian&seed=3")
    page.wait_for_function(MY_TURN)
    faces = page.evaluate("window.rummyPage.meta.cards")
    order = page.evaluate("window.rummyPage.order")
    cards = page.locator("#hand .card")
    cards.nth(0).drag_to(cards.nth(len(order) - 1), target_position={"x": 30, "y": 20})
    moved = page.evaluate("window.rummyPage.order")
    assert moved == order[1:] + order[:1] and page.evaluate("window.rummyPage.sortMode") == "manual"
    assert [int(c) for c in cards.evaluate_all("els => els.map(e => e.dataset.card)")] == moved
    page.click('#hand-tools button[data-sort="rank"]')
    by_rank = page.evaluate("window.rummyPage.order")
    keys = [(faces[c]["rank_index"] if faces[c]["suit"] else 99) for c in by_rank]
    assert keys == sorted(keys) and sorted(by_rank) == sorted(order)
    page.click('#hand-tools button[data-sort="suit"]')
    assert page.evaluate("window.rummyPage.order") == order


def test_new_game_form_and_new_match(browser):
    _, open_page = browser
    page = open_page("game=romi&seed=4")
    page.click("#show-setup")
    page.select_option("#setup-game", "basic")
    page.select_option("#setup-players", "3")
    selects = page.locator(".setup-opponent")
    assert selects.count() == 2
    options = selects.nth(0).locator("option").all_inner_texts()
    assert "rule" in options and "pretrained:basic" not in options  # the shipped policy plays two-player tables
    selects.nth(0).select_option("random")
    selects.nth(1).select_option("rule")
    page.fill("#setup-seed", "9")
    replies = page.evaluate("window.rummyPage.replies")
    page.click("#start")
    wait_for_reply(page, replies)
    t = table(page)
    assert (t["game"], t["players"], t["seed"], t["specs"]) == ("basic", 3, 9, [None, "random", "rule"])
    assert t["practice"] and page.inner_text("#deal-seed") == "practice deal, seed 9"
    assert page.inner_text("#title") == "Basic Rummy"
    t = play_hand(page, Pointer(page))
    check_hand_end(page, t)
    page.click("#new-match")
    page.wait_for_function("window.rummyPage.table.seed === 10")
    t = table(page)
    assert t["hand_number"] == 1 and t["match"]["totals"] == [0, 0, 0] and t["specs"] == [None, "random", "rule"]
    assert page.errors == []


def test_practice_deal_is_labelled_and_a_secret_deal_shows_no_seed(browser):
    """A seed in the link (or ticked in the form) is a practice deal, labelled with its seed; without one the
    deal is the server's secret: no seed on the page, and the form starts a secret deal again."""
    app, open_page = browser
    page = open_page("game=romi&seed=7")
    assert page.is_visible("#deal-seed") and page.inner_text("#deal-seed") == "practice deal, seed 7"
    secret = open_page("game=romi")
    t = table(secret)
    assert t["practice"] is False and t["seed"] is None and secret.is_hidden("#deal-seed")
    hidden_seed = str(app.state.store.get(secret.evaluate("window.rummyPage.id")).seed)
    assert hidden_seed not in secret.content()
    secret.click("#show-setup")
    assert not secret.is_checked("#setup-practice")
    secret.check("#setup-practice")
    replies = secret.evaluate("window.rummyPage.replies")
    secret.click("#start")
    wait_for_reply(secret, replies)
    t = table(secret)
    assert t["practice"] is True and secret.inner_text("#deal-seed") == f"practice deal, seed {t['seed']}"
    assert page.errors == [] and secret.errors == []


def test_the_page_runs_under_its_content_security_policy(playwright):
    """With the policy enforced (``default-src 'self'``), the page loads its script and style, deals, and plays
    a move by a click, and the browser reports no violation."""
    app = create_app(TableDefaults(game="romi", opponents=("rule",), delay_ms=0))
    with running_server(app) as url, browser_context(playwright, enforce_csp=True) as context:
        context.set_default_timeout(TIMEOUT_MS)
        page = context.new_page()
        problems = []
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.on("console", lambda m: problems.append(m.text) if "Content Security Policy" in m.text else None)
        page.goto(f"{url}/?delay=0&seed=5")
        page.wait_for_selector("#hand .card")
        assert page.inner_text("#deal-seed") == "practice deal, seed 5"
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(31, 95, 58)"  # table.css applied
        game = app.state.store.get(page.evaluate("window.rummyPage.id"))
        assert game.state.current == 0  # the first hand starts at the person's seat (G6)
        page.click("#stock")
        deadline = time.monotonic() + 10
        while not game.state.history and time.monotonic() < deadline:
            time.sleep(0.05)
        assert game.state.history[:1] == [(0, 0, 0)]  # drawn from the stock (G7)
        assert problems == []


# ----------------------------------------------------------------------------- records and replays


def test_the_match_end_offers_its_records_for_download(browser, tmp_path, capsys):
    """Once the match is over the end panel links the records (an attachment), which the records check accepts."""
    from rummy_env.records import main as records_main

    _, open_page = browser
    page = open_page("game=basic&seed=1")
    replies = page.evaluate("window.rummyPage.replies")
    page.evaluate('startMatch({game: "basic", players: 2, opponents: ["rule"], seed: 1, options: {match_target: 1}})')
    wait_for_reply(page, replies)
    t = play_until(page, lambda t: False)
    assert t["match"]["over"]  # a one-point match ends with its first hand (B6)
    link = page.locator("#records-link")
    game_id = page.evaluate("window.rummyPage.id")
    assert link.is_visible() and link.get_attribute("href") == f"/api/games/{game_id}/records"
    with page.expect_download() as download:
        link.click()
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    assert saved.name == f"basic-match-{t['seed']}.jsonl"
    assert records_main(["check", str(saved)]) == 0
    assert "1 hands replayed" in capsys.readouterr().out
    assert page.errors == []


def replay_file(path) -> list[dict]:
    """Two hands of a römi match between rule agents written as a records file at ``path``; their records."""
    from agents.registry import make_agent
    from rummy_env.encoding import ObservationEncoder, action_layout, action_mask
    from rummy_env.match import Match
    from rummy_env.records import record_of_state, write_records
    from rummy_env.ruleset import make_ruleset

    rules = make_ruleset("romi", 2)
    match, encoder, layout = Match(rules, 7), ObservationEncoder(rules), action_layout("romi")
    agents = [make_agent("rule", rules, seed=p) for p in range(2)]
    records = []
    for _ in range(2):
        state = match.deal()
        while not state.is_over:
            p = state.current
            state.apply(layout.move(int(agents[p].act(encoder.encode(state, p, match.totals), action_mask(state)))))
        match.record(state.result)
        records.append(record_of_state(state, ["rule", "rule"]))
    write_records(path, records)
    return records


@pytest.mark.parametrize("screen", ["wide", "phone"])
def test_replay_viewer_opens_a_record_and_steps_forward_and_back(playwright, tmp_path, screen):
    """The viewer (/replay) reads a records file, shows every hand face up and steps with ⟨ ⟩ and the arrow
    keys, the move's words and the step number shown; on a 1280-px screen and a 390-px phone alike."""
    from web_helpers import PHONE

    path = tmp_path / "two-hands.jsonl"
    records = replay_file(path)
    app = create_app(TableDefaults(game="romi", delay_ms=0))
    with running_server(app) as url, browser_context(playwright, **(PHONE if screen == "phone" else {})) as context:
        context.set_default_timeout(TIMEOUT_MS)
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(f"{url}/replay")
        page.set_input_files("#file", str(path))
        page.wait_for_selector("#stepper:not([hidden])")
        steps = page.evaluate("window.rummyReplay.data.steps")
        record = records[0]
        assert len(steps) == len(record["actions"]) + 1
        last = len(steps) - 1
        assert page.inner_text("#step-number").startswith(f"step 0 of {last}")
        assert page.inner_text("#move").startswith("the deal: player 0 (rule) plays first")
        seats = page.locator("#seats .seat")
        assert seats.count() == 2
        for seat in range(2):  # every hand face up, as dealt (G6)
            cards = seats.nth(seat).locator(".card").evaluate_all("els => els.map(e => e.dataset.card)")
            assert [int(c) for c in cards] == steps[0]["hands"][seat]
        assert page.locator("#cut-card .card").get_attribute("data-card") == str(steps[0]["cut_card"])  # R2
        assert page.is_disabled("#back")

        page.click("#forward")
        assert page.inner_text("#step-number").startswith(f"step 1 of {last}")
        assert page.inner_text("#move") == f"1. player 0 (rule) {steps[1]['text']}"
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert page.inner_text("#step-number").startswith(f"step 3 of {last}")
        assert page.inner_text("#move") == f"3. player {steps[3]['seat']} (rule) {steps[3]['text']}"
        page.keyboard.press("ArrowLeft")
        page.click("#back")
        assert page.inner_text("#step-number").startswith(f"step 1 of {last}")
        page.keyboard.press("End")
        assert page.inner_text("#step-number").startswith(f"step {last} of {last}")
        assert page.is_disabled("#forward") and page.locator("#result").is_visible()
        assert "the hand is over" in page.inner_text("#result")
        if page.locator("#table .meld").count():
            assert page.locator("#table .meld").count() == len(steps[-1]["table"])

        page.select_option("#hand-choice", "2")  # the file's second hand
        page.wait_for_function("window.rummyReplay.data.hand === 2")
        assert page.inner_text("#step-number").startswith(f"step 0 of {len(records[1]['actions'])}")
        assert page.inner_text("#move").startswith("the deal: player 1 (rule) plays first")  # G6
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= (390 if screen == "phone" else 1280), width
        assert errors == []
