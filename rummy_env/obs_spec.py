"""The observation spec: every part of the observation vector, defined once (``docs/env.md``).

``OBSERVATION_PLANES`` lists the parts in vector order. Each ``Plane`` says which games have it,
its size (a row of ``width`` entries, once, per player or per table meld slot), its bounds, its
scale, how the encoder writes it (``write``: its entries as int8 bytes, before scaling), how the
incremental tracker keeps it (``keep``), how an agent reads it back (``read``, into the fields of
``agents.view.View``), and what it holds (``doc``). Everything else follows from this table:

* ``layout_for(rules)`` (here; ``rummy_env.encoding`` hands it on): the slices and the ``Box``
  bounds (``aec_env``);
* ``ObservationEncoder.encode``: the planes' writers, joined, then scaled once;
* ``ObservationTracker``: the planes kept ``"observe"`` are rewritten each time a seat looks,
  those kept ``"moves"`` are brought up to date by the move made (its own code, one branch per
  plane named in ``MOVE_KEPT``), ``"deal"`` planes never change within a hand;
* ``agents.view``: ``View``'s fields and ``ObservationReader.read``;
* the observation table of ``docs/env.md`` (``markdown_table()``; ``python -m rummy_env.obs_spec
  --write-docs`` rewrites it, ``tests/test_observation_spec.py`` checks it).

Adding a plane is one entry here, placed where it should lie in the vector: give it a writer and,
if agents should read it, a reader and its ``View`` fields; keep it ``"observe"`` (the tracker
rewrites it from its writer whenever a seat looks) unless it is worth a branch in
``ObservationTracker.moved``. Then run ``python -m rummy_env.obs_spec --write-docs``. A new plane
changes the vector, so it is a new environment version (``docs/env.md`` "Version history").

Per-player rows are in seat order relative to the observer: row 0 is the observer, row 1 the next
seat to play, and so on. Planes have 53 entries, one per card type (``rummy_env.cards``).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from .cards import JOKER, NUM_NATURAL, NUM_RANKS, NUM_TYPES
from .games import GAMES, GameSpec, by_game, game_spec
from .ruleset import RuleSet, make_ruleset

ONE, PLAYERS, SLOTS = "one", "players", "slots"
"""How many rows a plane has: one, one per player, one per table meld slot."""

DEAL, OBSERVE, MOVES, MATCH = "deal", "observe", "moves", "match"
"""How ``ObservationTracker`` keeps a plane: fixed for the hand, rewritten whenever a seat looks,
brought up to date by each move, or set from the match totals."""

MOVE_KEPT = ("hand", "discard_rest", "table_cards", "table_melds", "known", "discarded", "hand_sizes", "opened")
"""The planes ``ObservationTracker.moved`` keeps up to date itself."""


@dataclass(frozen=True)
class Plane:
    """One named part of the observation vector."""

    name: str
    width: int
    """Entries per row: 53 for a card plane, else the scalars' count."""
    rows: str
    """``ONE``, ``PLAYERS`` or ``SLOTS``."""
    present: Callable[[GameSpec], bool]
    """Which games have it (from the game's rule data, ``rummy_env.ruleset``)."""
    high: Callable[[RuleSet], Any]
    """The largest value of each entry of a row (a number, or ``width`` numbers), after scaling."""
    write: Callable | None
    """``(encoder, state, observer) -> bytes``: the plane's int8 entries before scaling (``len`` =
    its size). None only for a plane another one's writer writes with it (see ``written_with``)."""
    keep: str
    """``DEAL``, ``OBSERVE``, ``MOVES`` or ``MATCH`` (how the tracker keeps it)."""
    doc: str
    """What it holds, with the rules it serves (the docs table's last column)."""
    read: Callable | None = None
    """``(counts, obs, part, reader) ->`` the value of its one ``View`` field, or a tuple of the
    values of its fields (``obs``: the float32 vector, ``counts``: the same as int64, ``part``:
    the plane's slice); None: agents do not read it."""
    view: tuple[tuple[str, Any, Any, str], ...] = ()
    """The ``View`` fields ``read`` fills: (name, type, value when the game lacks the plane, or a
    function of the reader giving it, doc)."""
    low: float = 0.0
    scale: Callable[[RuleSet], float] | None = None
    """The factor its int8 entries are multiplied by (None: 1)."""
    written_with: str | None = None
    """The plane whose writer also writes this one (the table is read once for both)."""


# ----------------------------------------------------------------------------- writers

ZERO_PLANE = bytes(NUM_TYPES)
ONE_HOT = {card: bytes(card) + b"\x01" + bytes(NUM_TYPES - card - 1) for card in range(NUM_TYPES)}
"""Card -> its one-hot plane."""
_PHASES = (b"\x01\x00", b"\x00\x01", b"\x00\x00")  # draw, play, over


def one_hot(card: int) -> bytes:
    """The one-hot plane of ``card``, or zeros for -1."""
    return ONE_HOT[card] if card != -1 else ZERO_PLANE


def _write_hand(enc, state, observer: int) -> bytes:
    return bytes(state.hands[observer])


def _write_discard_top(enc, state, observer: int) -> bytes:
    return ONE_HOT[state.discard[-1]] if state.discard else ZERO_PLANE


def _write_discard_rest(enc, state, observer: int) -> bytes:
    return enc.discard_rest_bytes(state.discard)


def _write_just_taken(enc, state, observer: int) -> bytes:
    return one_hot(state.taken_card)


def _write_must_place(enc, state, observer: int) -> bytes:
    if state.owed_card == -1 and not state.owed_jokers:
        return ZERO_PLANE
    plane = bytearray(NUM_TYPES)
    if state.owed_card != -1:
        plane[state.owed_card] = 1
    plane[JOKER] = state.owed_jokers
    return bytes(plane)


def _write_cut_card(enc, state, observer: int) -> bytes:
    return one_hot(state.cut_card)


def _write_wild_card(enc, state, observer: int) -> bytes:
    return one_hot(state.wild_card)


def _write_table(enc, state, observer: int) -> bytes:
    return enc.table_bytes(state.table)  # table_cards, then table_melds


def _write_known(enc, state, observer: int) -> bytes:
    return b"".join(map(bytes, enc.rows_of(observer)(state.known)))


def _write_discarded(enc, state, observer: int) -> bytes:
    return b"".join(map(enc.capped_discards, enc.rows_of(observer)(state.discarded)))


def _write_phase(enc, state, observer: int) -> bytes:
    return _PHASES[state.phase]


def _write_to_act(enc, state, observer: int) -> bytes:
    return enc.to_act_bytes[(state.current - observer) % state.rules.num_players]


def _write_stock_size(enc, state, observer: int) -> bytes:
    return bytes((len(state.stock),))


def _write_stock_rebuilt(enc, state, observer: int) -> bytes:
    return b"\x01" if state.rebuilds else b"\x00"


def _write_hand_sizes(enc, state, observer: int) -> bytes:
    return bytes(map(sum, enc.rows_of(observer)(state.hands)))


def _write_opened(enc, state, observer: int) -> bytes:
    return bytes(enc.rows_of(observer)(state.opened))


def _write_match_scores(enc, state, observer: int) -> bytes:
    return bytes(state.rules.num_players)  # set from the match totals (``ObservationEncoder.finish``)


def _write_turn(enc, state, observer: int) -> bytes:
    return bytes((min(state.turn * 127 // state.rules.max_turns, 127),))


# ----------------------------------------------------------------------------- bounds and scales


def copies(rules: RuleSet) -> np.ndarray:
    """The copies of each card type in the deck (a joker row entry at least 1)."""
    row = np.full(NUM_TYPES, float(rules.decks), np.float32)
    row[JOKER] = float(max(1, rules.printed_jokers))
    return row


def discard_cap(decks: int, printed_jokers: int) -> int:
    """The cap on each ``discarded`` count: the most copies of any card type in the deck."""
    return max(decks, printed_jokers, 1)


def _owed_high(rules: RuleSet) -> np.ndarray:
    row = np.ones(NUM_TYPES, np.float32)
    row[JOKER] = float(max(1, rules.printed_jokers))  # jokers owed (R4, R5)
    return row


def _meld_slot_high(rules: RuleSet) -> np.ndarray:
    row = np.ones(NUM_TYPES, np.float32)
    row[JOKER] = 2.0  # römi: at most 2 jokers a meld (R3); Basic has none
    return row


def _deck_scale(rules: RuleSet) -> float:
    return 1.0 / (NUM_NATURAL * rules.decks + rules.printed_jokers)


def _one(rules: RuleSet) -> float:
    return 1.0


def _two(rules: RuleSet) -> float:
    return 2.0


def _always(spec: GameSpec) -> bool:
    return True


def _has_table(spec: GameSpec) -> bool:
    return spec.table_melds


# ----------------------------------------------------------------------------- readers
# A reader gets the whole observation twice, as whole numbers (int64, the planes' counts) and as
# it is (float32, for scaled scalars), its plane's slice and the ``ObservationReader``; it returns
# the value of its plane's one ``View`` field, or a tuple of them when the plane fills several.


def _counts(counts: np.ndarray, obs: np.ndarray, part: slice, reader) -> list[int]:
    return counts[part].tolist()


def _index_of_one(counts: np.ndarray, obs: np.ndarray, part: slice, reader) -> int:
    plane = counts[part].tolist()
    return plane.index(1) if 1 in plane else -1


def _player_rows(counts: np.ndarray, obs: np.ndarray, part: slice, reader) -> list[list[int]]:
    flat = counts[part].tolist()
    return [flat[i:i + NUM_TYPES] for i in range(0, len(flat), NUM_TYPES)]


def _read_must_place(counts: np.ndarray, obs: np.ndarray, part: slice, reader) -> tuple[int, int]:
    owed = counts[part].tolist()
    return owed.index(1) if 1 in owed[:JOKER] else -1, owed[JOKER]


def _read_wild_card(counts: np.ndarray, obs: np.ndarray, part: slice, reader) -> tuple[int, int | None]:
    wild = _index_of_one(counts, obs, part, reader)
    return wild, None if wild < 0 else (0 if wild == JOKER else wild % NUM_RANKS)


def _read_table_melds(counts: np.ndarray, obs: np.ndarray, part: slice, reader) -> np.ndarray:
    return counts[part].reshape(-1, NUM_TYPES)


def _read_phase(counts: np.ndarray, obs: np.ndarray, part: slice, reader) -> int:
    draw, play = counts[part].tolist()
    return 0 if draw else (1 if play else -1)


def _read_stock_size(counts: np.ndarray, obs: np.ndarray, part: slice, reader) -> int:
    return int(round(obs[part.start].item() * reader.deck_size))


def _read_stock_rebuilt(counts: np.ndarray, obs: np.ndarray, part: slice, reader) -> bool:
    return bool(obs[part.start])


def _read_hand_sizes(counts: np.ndarray, obs: np.ndarray, part: slice, reader) -> list[int]:
    return [int(round(x * reader.rules.hand_size)) for x in obs[part].tolist()]


def _read_opened(counts: np.ndarray, obs: np.ndarray, part: slice, reader) -> list[bool]:
    return [bool(x) for x in counts[part].tolist()]


def _read_turn(counts: np.ndarray, obs: np.ndarray, part: slice, reader) -> float:
    return obs[part.start].item()


_NO_TABLE = np.zeros((0, NUM_TYPES), np.int64)


# ----------------------------------------------------------------------------- the table

OBSERVATION_PLANES: tuple[Plane, ...] = (
    Plane("hand", NUM_TYPES, ONE, _always, copies, _write_hand, MOVES,
          "the observer's cards, counts",
          _counts, (("hand", list[int], None, "The observer's counts per card type."),)),
    Plane("discard_top", NUM_TYPES, ONE, _always, _one, _write_discard_top, OBSERVE,
          "one-hot of the discard top",
          _index_of_one, (("discard_top", int, None, "The card on top of the discard pile, or -1."),)),
    Plane("discard_rest", NUM_TYPES, ONE, _always, copies, _write_discard_rest, MOVES,
          "counts of the cards under the top",
          _counts, (("discard_rest", list[int], None, "Counts of the cards under the top."),)),
    Plane("just_taken", NUM_TYPES, ONE, _always, _one, _write_just_taken, OBSERVE,
          "one-hot of the card the player to act took this turn from the pile or as the cut card (G7)",
          _index_of_one,
          (("just_taken", int, None, "The card the player to act took this turn (discard top or cut card), or -1."),)),
    Plane("must_place", NUM_TYPES, ONE, lambda spec: spec.later_take_must_be_placed, _owed_high, _write_must_place,
          OBSERVE,
          "the cards owed to the table this turn (R4, R5): 1 at the discard top taken after the first turn, "
          "and at entry 52 the jokers owed (from swaps or the pile, 0–2)",
          _read_must_place,
          (("must_place", int, -1, "römi: the natural card owed to the table by the end of this turn (R4), or -1."),
           ("owed_jokers", int, 0, "römi: jokers owed to the table by the end of this turn (taken by swaps or "
                                   "from the pile, R4, R5)."))),
    Plane("cut_card", NUM_TYPES, ONE, lambda spec: spec.cut_card, _one, _write_cut_card, OBSERVE,
          "one-hot of the cut card while it lies there (R2)",
          _index_of_one, (("cut_card", int, -1, "römi: the cut card while it lies there (R2), or -1."),)),
    Plane("wild_card", NUM_TYPES, ONE, lambda spec: "wild_joker" in spec.options, _one, _write_wild_card, DEAL,
          "one-hot of the wild joker card turned up (I2; 0 when off)",
          _read_wild_card,
          (("wild_card", int, -1, "Indian with a wild joker: the card turned up beside the stock (I2), else -1."),
           ("wild_rank", int | None, None, "Indian with a wild joker: the wild rank (I2), else None."))),
    Plane("table_cards", NUM_TYPES, ONE, _has_table, copies, _write_table, MOVES,
          "counts of the physical cards on the table",
          _counts, (("table_cards", list[int], [0] * NUM_TYPES, "Counts of the physical cards on the table."),)),
    Plane("table_melds", NUM_TYPES, SLOTS, _has_table, _meld_slot_high, None, MOVES,
          "per table meld: +1 where a natural card stands, −1 where a joker stands for that card; entry 52 counts "
          "its jokers (S = 17 Basic, 35 römi)",
          _read_table_melds,
          (("table_melds", np.ndarray, _NO_TABLE, "(slots, 53) int array: +1 a natural stands for the card, -1 a "
                                                  "joker does; column 52 counts jokers."),),
          low=-1.0, written_with="table_cards"),
    Plane("known", NUM_TYPES, PLAYERS, _always, copies, _write_known, MOVES,
          "per player, cards known to be in their hand: taken from the pile (or a swapped joker) and not yet played",
          _player_rows, (("known", list[list[int]], None, "Per player, cards known to be in their hand."),)),
    Plane("discarded", NUM_TYPES, PLAYERS, _always, lambda r: float(discard_cap(r.decks, r.printed_jokers)),
          _write_discarded, MOVES,
          "per player, how many of each card they discarded this hand, capped at the copies of a card (2; Basic 1)",
          _player_rows,
          (("discarded", list[list[int]], None, "Per player, how many of each card they discarded (capped)."),)),
    Plane("phase", 2, ONE, _always, _one, _write_phase, OBSERVE,
          "one-hot draw, play (both 0 once the hand is over)",
          _read_phase, (("phase", int, None, "0 draw, 1 play, -1 over."),)),
    Plane("to_act", 1, PLAYERS, _always, _one, _write_to_act, OBSERVE,
          "one-hot relative seat of the player to act"),
    Plane("stock_size", 1, ONE, _always, _one, _write_stock_size, OBSERVE,
          "cards in the stock / cards in the deck",
          _read_stock_size, (("stock_size", int, None, "Cards in the stock."),), scale=_deck_scale),
    Plane("stock_rebuilt", 1, ONE, _always, _one, _write_stock_rebuilt, OBSERVE,
          "1 once the stock was rebuilt from the discards (G8: the next empty stock ends the hand)",
          _read_stock_rebuilt,
          (("stock_rebuilt", bool, None, "Whether the stock was rebuilt from the discards once already (G8)."),)),
    Plane("hand_sizes", 1, PLAYERS, _always, _two, _write_hand_sizes, MOVES,
          "cards in each hand / the game's hand size",
          _read_hand_sizes, (("hand_sizes", list[int], None, "Cards in each hand."),),
          scale=lambda rules: 1.0 / rules.hand_size),
    Plane("opened", 1, PLAYERS, _has_table, _one, _write_opened, MOVES,
          "1 for each player with a meld on the table",
          _read_opened,
          (("opened", list[bool], lambda reader: [False] * reader.num_players,
            "Per player, whether they have a meld on the table."),)),
    Plane("match_scores", 1, PLAYERS, _always, _two, _write_match_scores, MATCH,
          "match totals / `match_target`, capped at 2; 0 outside a match"),
    Plane("turn", 1, ONE, _always, _one, _write_turn, OBSERVE,
          "turns played this hand / `max_turns`, in steps of 1/127",
          _read_turn,
          (("turn_fraction", float, None, "Turns played / max_turns (coarse: steps of 1/127)."),),
          scale=lambda rules: 1.0 / 127),
)
"""Every part of the observation, in vector order."""

MAX_TABLE_MELDS = by_game("max_table_melds")
"""Table meld slots per game (``GameSpec.max_table_melds``: Basic 17, römi 35, Indian 0)."""


def plane(name: str) -> Plane:
    """The plane named ``name``; an unknown name is an error naming it."""
    for entry in OBSERVATION_PLANES:
        if entry.name == name:
            return entry
    raise KeyError(f"no observation plane {name!r}: expected one of {', '.join(p.name for p in OBSERVATION_PLANES)}")


def planes_of(game: str) -> tuple[Plane, ...]:
    """The planes ``game`` has, in vector order."""
    spec = game_spec(game)
    return tuple(p for p in OBSERVATION_PLANES if p.present(spec))


def row_count(entry: Plane, game: str, num_players: int) -> int:
    """How many rows of ``entry.width`` entries the plane has."""
    return {ONE: 1, PLAYERS: num_players, SLOTS: game_spec(game).max_table_melds}[entry.rows]


def plane_size(entry: Plane, game: str, num_players: int) -> int:
    return entry.width * row_count(entry, game, num_players)


# ----------------------------------------------------------------------------- the layout


@dataclass(frozen=True)
class ObservationLayout:
    """Where each named part of one game's observation lies, and its bounds."""

    game: str
    num_players: int
    size: int
    slices: dict[str, slice]
    low: np.ndarray
    high: np.ndarray
    planes: tuple[Plane, ...] = ()
    """The spec's planes this game has, in vector order."""


@cache
def layout_for(rules: RuleSet) -> ObservationLayout:
    """The observation layout (slices and bounds) for a rule set, from ``OBSERVATION_PLANES``."""
    planes = planes_of(rules.game)
    slices: dict[str, slice] = {}
    offset = 0
    for entry in planes:
        size = plane_size(entry, rules.game, rules.num_players)
        slices[entry.name] = slice(offset, offset + size)
        offset += size
    low = np.zeros(offset, np.float32)
    high = np.ones(offset, np.float32)
    for entry in planes:
        part = slices[entry.name]
        low[part] = entry.low
        row = np.broadcast_to(np.asarray(entry.high(rules), np.float32), (entry.width,))
        high[part] = np.tile(row, row_count(entry, rules.game, rules.num_players))
    low.setflags(write=False)
    high.setflags(write=False)
    return ObservationLayout(rules.game, rules.num_players, offset, slices, low, high, planes)


def rules_for(game: str, num_players: int, printed_jokers: int = 2) -> RuleSet:
    """The rule set whose observation layout ``observation_layout`` describes (default options,
    ``printed_jokers`` where the game takes it)."""
    options = {"printed_jokers": printed_jokers} if "printed_jokers" in game_spec(game).options else {}
    return make_ruleset(game, num_players, **options)


def observation_layout(game: str, num_players: int, printed_jokers: int = 2) -> dict[str, slice]:
    """Name -> slice of the observation vector of ``game`` for ``num_players`` players."""
    return dict(layout_for(rules_for(game, num_players, printed_jokers)).slices)


def observation_size(game: str, num_players: int) -> int:
    """The length of ``game``'s observation vector for ``num_players`` players."""
    return layout_for(rules_for(game, num_players)).size


# ----------------------------------------------------------------------------- the docs table

_SIZE_TEXT = {ONE: "{width}", PLAYERS: "n × {width}", SLOTS: "S × {width}"}
DOCS_PAGE = Path(__file__).resolve().parents[1] / "docs" / "env.md"
TABLE_START = ("<!-- observation table: generated from rummy_env/obs_spec.py "
               "(python -m rummy_env.obs_spec --write-docs) -->")
TABLE_END = "<!-- end of the generated observation table -->"


def _size_text(entry: Plane) -> str:
    if entry.width == 1:
        return {ONE: "1", PLAYERS: "n", SLOTS: "S"}[entry.rows]
    return _SIZE_TEXT[entry.rows].format(width=entry.width)


def _bounds_text(entry: Plane) -> str:
    texts = []
    for game in GAMES:
        layout = layout_for(make_ruleset(game, 2))
        part = layout.slices.get(entry.name)
        if part is None:
            continue
        low, high = float(layout.low[part].min()), float(layout.high[part].max())
        texts.append((game_spec(game).label, f"{low:g}–{high:g}".replace("-", "−")))
    first = texts[0][1]
    others = [f"{label} {text}" for label, text in texts if text != first]
    return first + (f" ({', '.join(others)})" if others else "")


def markdown_table() -> str:
    """The observation table of ``docs/env.md``: offsets for 2 players, bounds, contents."""
    layouts = [observation_layout(game, 2) for game in GAMES]
    rows = [["name", "size", *(f"{game_spec(game).label} (2p)" for game in GAMES), "bounds", "contents"]]
    for entry in OBSERVATION_PLANES:
        cells = [f"`{entry.name}`", _size_text(entry)]
        for layout in layouts:
            part = layout.get(entry.name)
            if part is None:
                cells.append("–")
            else:
                cells.append(f"{part.start}" if part.stop - part.start == 1 else f"{part.start}–{part.stop - 1}")
        rows.append(cells + [_bounds_text(entry), entry.doc])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    lines = ["| " + " | ".join(cell.ljust(width) for cell, width in zip(row, widths)) + f" | {row[-1]} |"
             for row in rows]
    lines.insert(1, "|" + "|".join("-" * (width + 2) for width in widths) + "|----------|")
    return "\n".join(lines)


def docs_section(text: str) -> str:
    """The generated table in a docs page's text (between the markers)."""
    match = re.search(re.escape(TABLE_START) + r"\n(.*?)\n" + re.escape(TABLE_END), text, flags=re.S)
    if match is None:
        raise ValueError(f"{DOCS_PAGE.name} lacks the observation table markers {TABLE_START!r} … {TABLE_END!r}")
    return match.group(1)


def write_docs(page: Path = DOCS_PAGE) -> bool:
    """Rewrite the generated table in ``page``; whether it changed."""
    text = page.read_text(encoding="utf-8")
    old = docs_section(text)
    new = markdown_table()
    if old == new:
        return False
    page.write_text(text.replace(f"{TABLE_START}\n{old}\n{TABLE_END}", f"{TABLE_START}\n{new}\n{TABLE_END}"),
                    encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Print the observation table of docs/env.md, or rewrite it there.")
    parser.add_argument("--write-docs", action="store_true", help=f"rewrite the table in {DOCS_PAGE}")
    args = parser.parse_args(argv)
    if args.write_docs:
        print(f"{DOCS_PAGE}: {'rewritten' if write_docs() else 'already up to date'}")
    else:
        print(markdown_table())


if __name__ == "__main__":
    main()
