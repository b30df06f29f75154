"""Helpers for the web table's tests: a live server on a free port, headless Chromium, hidden-card
swaps, and the cards a reply may name.

    python tests/web_helpers.py --screenshot docs/images/web-romi.png   # the docs' römi table
    python tests/web_helpers.py --screenshot docs/images/web-phone.png --phone
"""

from __future__ import annotations

import contextlib
import random
import shutil
import tempfile
from pathlib import Path

from rummy_env.cards import NUM_TYPES, from_counts
from rummy_env.game import GameState
from rummy_env.melds import table_meld_cards

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def running_server(app):
    """Serve ``app`` on a free localhost port in a background thread; yields the base URL."""
    from rummy_apps.web.serve import serving_in_thread

    return serving_in_thread(app)


def chromium_path() -> str | None:
    """The system Chromium (Debian's package), or None where none is installed."""
    if Path(CHROMIUM).is_file():
        return CHROMIUM
    return shutil.which("chromium") or shutil.which("chromium-browser")


PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
"""A phone's screen for ``browser_context(..., **PHONE)``: 390 CSS pixels wide, touch only."""


@contextlib.contextmanager
def browser_context(playwright, enforce_csp: bool = False, **screen):
    """A headless Chromium context with a fresh profile, on the system browser (never Playwright's download),
    1280 × 860 unless ``screen`` says otherwise (``PHONE``).

    Playwright's ``wait_for_function`` evaluates its string, which the page's Content-Security-Policy
    forbids; contexts bypass the policy unless ``enforce_csp``."""
    profile = tempfile.mkdtemp(prefix="rummy-web-chromium-")
    context = playwright.chromium.launch_persistent_context(
        profile, executable_path=chromium_path(), headless=True, args=CHROMIUM_FLAGS,
        bypass_csp=not enforce_csp, **({"viewport": {"width": 1280, "height": 860}} | screen))
    try:
        yield context
    finally:
        context.close()
        shutil.rmtree(profile, ignore_errors=True)


# ----------------------------------------------------------------------------- driving the page

MY_TURN = ("(() => { const p = window.rummyPage, t = p.table; return t !== null && !p.busy && "
           "(t.result !== null || (t.view.to_act === t.seat && p.timer === null)); })()")
"""True once the page waits for the person: their turn (no opponent move pending), or the hand's end."""


def table(page) -> dict:
    """The last snapshot the page took in."""
    return page.evaluate("window.rummyPage.table")


def wait_for_reply(page, replies: int) -> None:
    page.wait_for_function(f"window.rummyPage.replies > {replies} && !window.rummyPage.busy")


def play_hint(page) -> None:
    """The person plays the hint agent's move through the page's own calls (no pointing: fast)."""
    replies = page.evaluate("window.rummyPage.replies")
    page.evaluate("(async () => { await askHint(); await send({action: window.rummyPage.hint.action}); })()")
    wait_for_reply(page, replies)


def play_until(page, done, limit: int = 300) -> dict:
    """Follow the hints until ``done(table)`` holds at the person's turn or the hand's end; that table."""
    for _ in range(limit):
        page.wait_for_function(MY_TURN)
        t = table(page)
        if done(t) or t["result"] is not None:
            return t
        play_hint(page)
    raise AssertionError(f"nothing wanted came in {limit} moves")


# ----------------------------------------------------------------------------- hidden cards


def hidden_variant(state: GameState, seat: int, rng: random.Random) -> GameState:
    """``state`` with every card ``seat`` cannot see dealt anew: the other hands' unknown cards and the
    stock, shuffled among the same places. Public facts (sizes, known cards, table, pile) stay."""
    data = state.to_dict()
    others = [p for p in range(state.rules.num_players) if p != seat]
    pool = list(data["stock"])
    unknown = {}
    for p in others:
        hand, known = data["hands"][p], data["known"][p]
        unknown[p] = [c for c in range(NUM_TYPES) for _ in range(hand[c] - known[c])]
        pool += unknown[p]
    rng.shuffle(pool)
    data["stock"] = pool[:len(data["stock"])]
    rest = pool[len(data["stock"]):]
    for p in others:
        hand = list(data["known"][p])
        for card in rest[:len(unknown[p])]:
            hand[card] += 1
        rest = rest[len(unknown[p]):]
        data["hands"][p] = hand
    return GameState.from_dict(data)


def hidden_cards(state: GameState, seat: int) -> list[int]:
    """The cards ``seat`` cannot see: the others' unknown cards and the stock."""
    cards = list(state.stock)
    for p in range(state.rules.num_players):
        if p != seat:
            cards += [c for c in range(NUM_TYPES) for _ in range(state.hands[p][c] - state.known[p][c])]
    return cards


def public_cards(state: GameState) -> set[int]:
    """Card types anyone at the table can see: the pile, the table, the cut or wild card, the known cards."""
    cards = set(state.discard)
    for meld in state.table:
        for stands, physical in table_meld_cards(meld):
            cards.update((stands, physical))
    cards.update(c for c in (state.cut_card, state.wild_card) if c != -1)
    for known in state.known:
        cards.update(from_counts(known))
    return cards


# ----------------------------------------------------------------------------- the docs' screenshot


def take_screenshot(path: str, seed: int = 11, moves: int = 14, phone: bool = False) -> None:
    """A römi table against pretrained:romi some turns in (melds on the table), written to ``path``
    (at 1280 px, or on a 390-px phone)."""
    from playwright.sync_api import sync_playwright

    from rummy_apps.web.app import TableDefaults, create_app

    app = create_app(TableDefaults(game="romi", opponents=("pretrained:romi",), delay_ms=0))
    screen = PHONE if phone else {}
    with running_server(app) as url, sync_playwright() as playwright, browser_context(playwright, **screen) as context:
        page = context.new_page()
        page.goto(f"{url}/?delay=0&seed={seed}")  # a practice deal: the same picture every time
        page.wait_for_function("window.rummyPage.table !== null")
        for _ in range(moves):
            page.wait_for_function("(() => { const t = window.rummyPage.table; return t.result || "
                                   "(t.view.to_act === t.seat && !window.rummyPage.busy); })()")
            if page.evaluate("window.rummyPage.table.result !== null"):
                break
            page.click("#hint")
            page.wait_for_function("window.rummyPage.hint !== null")
            action = page.evaluate("window.rummyPage.hint.action")
            page.evaluate(f"send({{action: {action}}})")
        page.wait_for_function("(() => { const t = window.rummyPage.table; "
                               "return t.result || t.view.to_act === t.seat; })()")
        page.click("#hint")
        page.wait_for_function("window.rummyPage.hint !== null")
        page.screenshot(path=path, full_page=True)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Write the docs' screenshot of a römi table (docs/web.md).")
    parser.add_argument("--screenshot", default="docs/images/web-romi.png")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--moves", type=int, default=14, help="your moves (the hint's) before the picture")
    parser.add_argument("--phone", action="store_true", help="a 390-px phone's screen (docs/images/web-phone.png)")
    args = parser.parse_args()
    take_screenshot(args.screenshot, args.seed, args.moves, args.phone)
    print(f"wrote {args.screenshot}")
