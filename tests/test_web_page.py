"""The web table's page as a person sees it, in headless Chromium at 1280 px and on a 390-px phone:
the newest move in view and numbered by the hand, each opponent's whole last turn and the melds it
just laid, no clipped column, what each pays or scores and which total wins, the phone's one column
with tap moves, no gap in the Indian layout, plain words with rule ids linked to the rule book, the
cue when a move ends the hand, and clear words for bad links (docs/web.md "The page")."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("starlette", reason="the web table needs the [web] extra (pip install -e '.[web]')")
pytest.importorskip("uvicorn", reason="the web table needs the [web] extra (pip install -e '.[web]')")
sync_api = pytest.importorskip("playwright.sync_api",
                               reason="the browser tests need playwright (pip install playwright)")

from web_helpers import (PHONE, browser_context, chromium_path, play_until, running_server,  # noqa: E402
                         table, wait_for_reply)

from rummy_apps.web.app import TableDefaults, create_app  # noqa: E402
from rummy_apps.web.session import LOG_SHOWN  # noqa: E402

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(chromium_path() is None,
                       reason="no Chromium installed (/usr/bin/chromium): .ci/run installs Debian's "
                              "with apt-get install -y chromium"),
]

TIMEOUT_MS = 15_000
RULE_ID = re.compile(r"\b[GIBR]\d{1,2}\b")


@pytest.fixture(scope="module")
def playwright():
    with sync_api.sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="module")
def served():
    """One live server for the module's pages: the app (for the hidden state) and its URL."""
    app = create_app(TableDefaults(game="romi", opponents=("rule",), delay_ms=0))
    with running_server(app) as url:
        yield app, url


def opener(context, url: str):
    def open_page(link: str, wait: bool = True):
        page = context.new_page()
        page.errors = []
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        page.goto(f"{url}/{link}")
        if wait:
            page.wait_for_function("window.rummyPage.table !== null")
        return page
    return open_page


@pytest.fixture(scope="module")
def wide(playwright, served):
    """Pages at 1280 × 860."""
    app, url = served
    with browser_context(playwright) as context:
        context.set_default_timeout(TIMEOUT_MS)
        yield app, url, opener(context, url)


def box(page, selector: str) -> dict:
    return page.locator(selector).first.bounding_box()


# ----------------------------------------------------------------------------- the log and the opponents


def test_the_newest_move_is_in_view_and_numbered_by_the_hand(wide):
    _, _, open_page = wide
    page = open_page("?delay=0&game=romi&seed=5")
    t = play_until(page, lambda t: t["moves_made"] > LOG_SHOWN + 5)
    items = page.locator("#log li")
    assert items.count() == LOG_SHOWN
    assert items.last.get_attribute("value") == str(t["moves_made"])
    assert items.first.get_attribute("value") == str(t["moves_made"] - LOG_SHOWN + 1)
    newest, log = box(page, "#log li:last-child"), box(page, "#log")
    assert log["y"] - 1 <= newest["y"] and newest["y"] + newest["height"] <= log["y"] + log["height"] + 1
    assert log["y"] + log["height"] <= page.evaluate("innerHeight")  # the log ends on the screen
    assert page.inner_text("#log-title") == f"hand 1: {t['moves_made']} moves"
    assert page.errors == []


def test_each_opponents_whole_turn_is_shown_and_the_melds_it_laid_marked(wide):
    """B3: at the person's turn each opponent's box tells its whole last turn; the melds the others laid
    or extended since then carry the class ``fresh``, the others do not."""
    _, _, open_page = wide
    for seed in range(8):
        page = open_page(f"?delay=0&game=basic&players=3&seed={seed}")
        t = play_until(page, lambda t: bool(t["fresh_melds"]))
        if t["result"] is None:
            break
        page.close()
    else:
        pytest.fail("no opponent laid a meld in 8 deals")
    fresh = [int(s) for s in page.locator("#table .meld.fresh").evaluate_all("els => els.map(e => e.dataset.slot)")]
    assert fresh == t["fresh_melds"]
    assert page.locator("#table .meld:not(.fresh)").count() == len(t["view"]["table"]) - len(fresh)
    for seat in (1, 2):
        said = page.inner_text(f'.opponent[data-seat="{seat}"] .last-turn')
        assert said == f"last turn: {t['last_turns'][seat]}"
    assert any(re.search(r"\blaid\b.*\bdiscarded\b", t["last_turns"][seat] or "") for seat in (1, 2))
    assert page.errors == []


# ----------------------------------------------------------------------------- scores


@pytest.mark.parametrize("game, players, added, wins", [("romi", 3, "pays", "lowest total wins"),
                                                        ("basic", 2, "scores", "highest total wins")])
def test_scores_fit_their_column_and_say_which_total_wins(wide, game, players, added, wins):
    """I8, R8: where the lowest total wins the hand's column is what each pays, with no "+" for the winner;
    B6: where the highest wins it is what each scored. No cell is cut off at 1280 px."""
    _, _, open_page = wide
    page = open_page(f"?delay=0&game={game}&players={players}&seed=3")
    t = play_until(page, lambda t: False, limit=400)
    assert t["result"] is not None
    page.click("#close-end")
    assert wins in page.inner_text("#score-rule")
    assert page.inner_text("#scores th.added") == added and "+" not in page.inner_text("#scores")
    board = box(page, "#scoreboard")
    for cell in page.locator("#scores th, #scores td").all():
        b = cell.bounding_box()
        assert board["x"] <= b["x"] and b["x"] + b["width"] <= board["x"] + board["width"], cell.inner_text()
        assert cell.evaluate("e => e.scrollWidth <= e.clientWidth"), cell.inner_text()
    rows = page.locator("#scores tr[data-seat]")
    for seat in range(players):
        cells = rows.nth(seat).locator("td")
        assert cells.nth(1).inner_text() == str(t["finished"][0]["added"][seat])
        assert cells.nth(2).inner_text() == str(t["match"]["totals"][seat])
    assert page.locator("#finished li").count() == 1
    assert page.errors == []


# ----------------------------------------------------------------------------- layout


def test_the_indian_layout_has_no_gap_above_the_hand(wide):
    """Indian lays no melds on the table (I9): the hand follows the piles, however long the log grows."""
    _, _, open_page = wide
    page = open_page("?delay=0&game=indian&seed=4")
    play_until(page, lambda t: t["moves_made"] >= 30)
    piles, mine = box(page, "#middle"), box(page, "#mine")
    assert mine["y"] - (piles["y"] + piles["height"]) <= 30
    assert page.errors == []


@pytest.mark.parametrize("game, seed", [("romi", 3), ("basic", 2)])
def test_a_phone_scrolls_only_down_shows_the_scores_and_plays_by_taps(playwright, served, game, seed):
    """At 390 px: no horizontal scroll, the scores on the first screen, and a turn by taps alone: tap the
    stock to draw, tap a card to select it, tap the discard pile to discard it (G7)."""
    app, url = served
    with browser_context(playwright, **PHONE) as context:
        context.set_default_timeout(TIMEOUT_MS)
        page = opener(context, url)(f"?delay=0&game={game}&seed={seed}")
        for _ in range(3):
            t = play_until(page, lambda t: t["view"]["phase"] == "draw")
            if t["result"] is not None:
                break
            game_state = app.state.store.get(page.evaluate("window.rummyPage.id")).state
            moves = len(game_state.history)
            replies = page.evaluate("window.rummyPage.replies")
            page.tap("#stock")
            wait_for_reply(page, replies)
            assert game_state.history[moves] == (0, 0, 0)  # drawn from the stock
            t = table(page)
            if any(m["finishes"] for m in t["view"]["legal"]):
                break
            card = next(m["card"] for m in t["view"]["legal"] if m["kind"] == "discard")
            page.locator(f'#hand .card[data-card="{card}"]').first.tap()
            assert page.locator("#hand .card.selected").count() == 1
            replies = page.evaluate("window.rummyPage.replies")
            page.tap("#pile")
            wait_for_reply(page, replies)
            assert game_state.history[moves + 1][:2] == (3, card)  # discarded
            width = page.evaluate("[document.scrollingElement.scrollWidth, innerWidth]")
            assert width[0] <= width[1] == 390, width
        scores = box(page, "#scores")
        assert 0 <= scores["x"] and scores["x"] + scores["width"] <= 390
        assert scores["y"] + scores["height"] <= page.evaluate("innerHeight")
        page.tap("#show-setup")  # the new-game form fits too
        assert page.evaluate("document.scrollingElement.scrollWidth") <= 390
        assert page.errors == []


# ----------------------------------------------------------------------------- words


def test_refusals_speak_plainly_and_rule_ids_link_to_the_rule_book(wide):
    """I4: the refusal says "you" and the card's name; every rule id on the page is a link into /rules."""
    _, url, open_page = wide
    page = open_page("?delay=0&game=romi&seed=1")
    t = play_until(page, lambda t: True)
    replies = page.evaluate("window.rummyPage.replies")
    page.locator(f'#hand .card[data-card="{t["view"]["hand"][0]}"]').first.dblclick()
    wait_for_reply(page, replies)
    message = page.inner_text("#message.refused")
    assert message.startswith("you cannot discard ") and "player_" not in message
    assert page.locator("#message a.rule").all_inner_texts() == ["I4", "B3", "R4"]
    links = page.locator("main a.rule")  # every rule id the table shows, and only those, is a link
    ids = links.all_inner_texts()
    assert ids == RULE_ID.findall(page.inner_text("main"))
    assert links.evaluate_all("els => els.map(e => e.getAttribute('href'))") == [f"/rules#{i}" for i in ids]
    page.goto(f"{url}/rules#I4")
    assert page.locator("li:target").inner_text().startswith("I4 Turn.")


@pytest.mark.parametrize("game, seed, kind, words", [("indian", 2, "declare", "you can declare now (I5)"),
                                                     ("romi", 11, "take_cut", "you can go out now")])
def test_a_cue_shows_when_a_move_ends_the_hand(wide, game, seed, kind, words):
    """I5: a declaration possible now; R4: the cut card that goes out. The cue shows exactly then."""
    _, _, open_page = wide
    page = open_page(f"?delay=0&game={game}&seed={seed}")
    seen = False

    def check(t) -> bool:
        nonlocal seen
        if t["result"] is not None:
            return True
        ends = [m for m in t["view"]["legal"] if m["finishes"]]
        assert page.is_visible("#cue") == bool(ends)
        if any(m["kind"] == kind for m in ends):
            seen = True
            assert page.inner_text("#cue").startswith(words)
            return True
        return False

    play_until(page, check)
    assert seen
    assert page.errors == []


def test_bad_links_say_what_is_wrong_and_deal_a_new_game(wide):
    """An unknown ``?game=``, a link whose id is no game id (``#../meta``) and an expired game each say so."""
    _, _, open_page = wide
    for link, words in (("?delay=0&game=chess", 'a game "chess" that this table does not play'),
                        ("?delay=0#../meta", 'game "../meta" is not a game id'),
                        ("?delay=0#" + "A" * 22, "game is gone: no game 'AAAAAAAAAAAAAAAAAAAAAA'")):
        page = open_page(link)
        assert page.inner_text("#message.notice").startswith(
            f"this link's {words}" if "chess" not in link else f"this link asks for {words}")
        assert "here is a new game of Indiai römi" in page.inner_text("#message")
        assert table(page)["game"] == "romi" and page.locator("#hand .card").count() == 13
        assert page.errors == []
        page.close()


def test_a_seed_on_a_server_without_practice_says_practice_is_off(playwright):
    """--no-practice: a link with ``?seed=`` says practice deals are off and deals a secret hand."""
    app = create_app(TableDefaults(game="romi", opponents=("rule",), delay_ms=0), practice=False)
    with running_server(app) as url, browser_context(playwright) as context:
        context.set_default_timeout(TIMEOUT_MS)
        page = opener(context, url)("?delay=0&seed=5")
        assert page.inner_text("#message.notice").startswith("practice deals (a chosen seed) are off on this server")
        t = table(page)
        assert t["practice"] is False and t["seed"] is None and page.is_hidden("#deal-seed")
        assert page.errors == []
