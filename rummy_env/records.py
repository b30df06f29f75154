"""Game records: one hand a line of JSON (JSON Lines), replayed from its deck order alone (docs/records.md).

    python -m rummy_env.records check hands.jsonl            # replay every record; exit 1 naming the first disagreement
    python -m rummy_env.records show hands.jsonl --hand 3    # hand 3 move by move, every hand face up

A record holds the game, its rule options, each seat's player (an agent spec, or ``human``), the
seed the hand was dealt from (if any), the deck in the order it is dealt, the stock after its one
rebuild (G8) if the hand rebuilt it, the first player (G6), every action as its id (the action ids
of docs/env.md "Actions") and its text, and the result. Cards are in G2 notation with suit
symbols (``5♥``, ``T♣``, ``*``); letters (``5h``) are read too.

``record_hand`` writes the record of a hand dealt from a seed and played by action ids: it replays
the hand from the seed (to learn the deck and the rebuilt stock), then checks the record by
replaying it from its deck order (``replay``), so a record that is written replays. ``replay``
refuses a record that disagrees with the rules (a malformed field, an illegal action, text or a
result other than the replay's) with a ``RecordError`` naming the action.

The engine layer: nothing here imports ``agents``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from .cards import CardError, format_card, format_cards, parse_card, sort_key
from .encoding import EncodingError, action_layout
from .game import DRAW, TAKE_DISCARD, GameState, InvalidStateError, Move, shuffled_deck
from .render import hand_text, table_text
from .ruleset import RuleSet, make_ruleset

FORMAT = "rummy-env-hand"
"""The ``format`` field of every record."""
VERSION = 1
"""The ``version`` field this module writes and reads."""

FIELDS = ("format", "version", "game", "num_players", "options", "players", "seed", "first_player", "deck",
          "rebuilt_stock", "actions", "action_text", "result", "source")
"""A record's fields, in the order written (``source`` is optional)."""

RESULT_FIELDS = ("outcome", "winner", "payments", "points", "turns")


class RecordError(ValueError):
    """A record that is malformed or that the replay disagrees with; names the line and the action."""

    def __init__(self, message: str, line: int | None = None, action: int | None = None):
        self.message = message
        self.line = line
        self.action = action
        super().__init__(message)

    def at_line(self, line: int) -> RecordError:
        """The same error, placed on ``line`` of a file."""
        return RecordError(self.message, line, self.action)

    def __str__(self) -> str:
        where = [f"line {self.line}"] if self.line is not None else []
        where += [f"actions[{self.action}]"] if self.action is not None else []
        return f"{', '.join(where)}: {self.message}" if where else self.message


# ----------------------------------------------------------------------------- writing


def action_text(state: GameState, move: Move) -> str:
    """The text of ``move`` for the player to act in ``state`` (``GameState.describe_move``, with suit symbols)."""
    return state.describe_move(move, symbols=True).removeprefix("(").removesuffix(")")


def record_hand(rules: RuleSet, seed: int | str, first_player: int, actions: Sequence[int], players: Sequence[str],
                source: dict | None = None) -> dict:
    """The record of the hand dealt from ``seed`` from ``first_player`` on and played by ``actions``
    (action ids, to the hand's end); ``players`` names each seat. The record is checked by replaying
    it from its deck order; a hand that is not over, or an action the rules refuse, is a ``RecordError``."""
    if len(players) != rules.num_players:
        raise ValueError(f"{len(players)} players for a table of {rules.num_players}")
    state = GameState(rules, seed, first_player)
    deck = shuffled_deck(rules, seed)
    layout = action_layout(rules.game)
    texts: list[str] = []
    rebuilt = None
    for index, action in enumerate(actions):
        move = _legal_move(state, layout, action, index)
        texts.append(action_text(state, move))
        state.apply(move)
        if state.rebuilds and rebuilt is None:
            rebuilt = state.stock[:]  # right after the rebuild (G8), before anything is drawn from it
    if not state.is_over:
        raise RecordError(f"the hand is not over after its {len(actions)} actions: player_{state.current} to act",
                          action=len(actions))
    result = state.result
    record = {
        "format": FORMAT, "version": VERSION, "game": rules.game, "num_players": rules.num_players,
        "options": dict(rules.options), "players": list(players), "seed": seed, "first_player": first_player,
        "deck": _card_texts(reversed(deck)),
        "rebuilt_stock": None if rebuilt is None else _card_texts(reversed(rebuilt)),
        "actions": [int(a) for a in actions], "action_text": texts,
        "result": {"outcome": result.outcome, "winner": result.winner, "payments": list(result.payments),
                   "points": list(result.rewards), "turns": state.turn},
    }
    if source:
        record["source"] = dict(source)
    replay(record)
    return record


def record_of_state(state: GameState, players: Sequence[str], source: dict | None = None) -> dict:
    """The record of ``state``, a finished hand dealt from a seed (its moves are its history)."""
    if state.seed is None:
        raise ValueError("the hand was dealt from a deck order, not a seed: its record is the one it was read from")
    layout = action_layout(state.rules.game)
    return record_hand(state.rules, state.seed, state.first_player, layout.ids_of(state.history), players, source)


def dumps(record: dict) -> str:
    """One record as one line of JSON (no newline), cards with their suit symbols as written."""
    return json.dumps(record, ensure_ascii=False)


class RecordFile:
    """A records file written hand by hand, each line flushed as it is written, so that a run that
    stops keeps the hands it finished. ``write`` returns the line number."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.handle = open(self.path, "w", encoding="utf-8")
        self.lines = 0

    def write(self, record: dict) -> int:
        self.handle.write(dumps(record) + "\n")
        self.handle.flush()
        self.lines += 1
        return self.lines

    def close(self) -> None:
        self.handle.close()

    def __enter__(self) -> RecordFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def write_records(path: str | Path, records: Iterable[dict]) -> int:
    """Write ``records`` to ``path`` (replacing it), one a line; the number written."""
    with RecordFile(path) as out:
        for record in records:
            out.write(record)
        return out.lines


# ----------------------------------------------------------------------------- reading and replaying


def read_records(path: str | Path) -> Iterator[tuple[int, dict]]:
    """(line number, record) for each non-blank line of ``path``; a line that is not a JSON object
    is a ``RecordError`` naming it (the fields are checked by ``replay``)."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line.rstrip("\r\n"))
            except json.JSONDecodeError as error:
                raise RecordError(f"not JSON: {error.msg} at column {error.colno}", number) from None
            if not isinstance(record, dict):
                raise RecordError(f"a record is a JSON object, not {type(record).__name__}", number)
            yield number, record


def replay(record: dict) -> GameState:
    """The hand ``record`` describes, played from its deck order alone (its seed is not used), every
    action checked against the rules and its text, and the result against the record's; the finished
    state. Any disagreement is a ``RecordError`` naming the field or the action."""
    rules = _check_fields(record)
    deck = _cards(record, "deck")
    rebuilt = None if record["rebuilt_stock"] is None else _cards(record, "rebuilt_stock")
    try:
        state = GameState.from_deck(rules, deck[::-1], record["first_player"],
                                    None if rebuilt is None else rebuilt[::-1])
    except (InvalidStateError, ValueError) as error:
        raise RecordError(str(error)) from None
    layout = action_layout(rules.game)
    actions, texts = record["actions"], record["action_text"]
    for index, action in enumerate(actions):
        if state.is_over:
            raise RecordError(f"the hand ended ({state.result.outcome}) before this action, but the record goes on "
                              f"with {len(actions) - index} more", action=index)
        move = _legal_move(state, layout, action, index)
        text = action_text(state, move)
        if text != texts[index]:
            raise RecordError(f"action {action} is {text!r} here, but the record's text says {texts[index]!r}",
                              action=index)
        try:
            state.apply(move)
        except InvalidStateError as error:  # the rebuilt stock given is not the discards (G8)
            raise RecordError(str(error), action=index) from None
    if not state.is_over:
        raise RecordError(f"the record ends after {len(actions)} actions, but the hand goes on: "
                          f"player_{state.current} to act", action=len(actions))
    if rebuilt is not None and not state.rebuilds:
        raise RecordError("the record gives a rebuilt stock, but the hand never rebuilt it (G8)",
                          action=len(actions) - 1)
    _check_result(record["result"], state, len(actions) - 1)
    return state


def _legal_move(state: GameState, layout, action, index: int) -> Move:
    """The engine move of action id ``action`` if the rules allow it now; else a ``RecordError``."""
    if isinstance(action, bool) or not hasattr(type(action), "__index__"):
        raise RecordError(f"{action!r} is not an action id (an int)", action=index)
    try:
        move = layout.move(action)
    except EncodingError as error:
        raise RecordError(str(error), action=index) from None
    if move not in state.legal_moves():
        raise RecordError(f"action {action} is illegal for player_{state.current}: {state.why_illegal(move)}",
                          action=index)
    return move


def _check_result(given, state: GameState, last: int) -> None:
    result = state.result
    replayed = {"outcome": result.outcome, "winner": result.winner, "payments": list(result.payments),
                "points": list(result.rewards), "turns": state.turn}
    if not isinstance(given, dict):
        raise RecordError(f"result must be an object with {', '.join(RESULT_FIELDS)}")
    for key in RESULT_FIELDS:
        if given.get(key) != replayed[key]:
            raise RecordError(f"a different result: the replay ends with {key} {replayed[key]!r}, "
                              f"the record says {given.get(key)!r}", action=last)


def _check_fields(record: dict) -> RuleSet:
    """The record's rule set, once every field has the form docs/records.md gives; else a ``RecordError``."""
    if record.get("format") != FORMAT:
        raise RecordError(f"format {record.get('format')!r}: expected {FORMAT!r}")
    if record.get("version") != VERSION:
        raise RecordError(f"version {record.get('version')!r}: this reader reads version {VERSION}")
    unknown = [key for key in record if key not in FIELDS]
    if unknown:
        raise RecordError(f"unknown field {unknown[0]!r}: expected {', '.join(FIELDS)}")
    missing = [key for key in FIELDS if key not in record and key != "source"]
    if missing:
        raise RecordError(f"missing field {missing[0]!r}")
    options = record["options"]
    if not isinstance(options, dict):
        raise RecordError(f"options must be an object of rule options, not {type(options).__name__}")
    try:
        rules = make_ruleset(record["game"], record["num_players"], **options)
    except (TypeError, ValueError) as error:
        raise RecordError(f"game {record['game']!r} at {record['num_players']!r} players: {error}") from None
    n = rules.num_players
    players = record["players"]
    if not isinstance(players, list) or len(players) != n or not all(isinstance(p, str) for p in players):
        raise RecordError(f"players must be a list of {n} strings (one per seat), not {players!r}")
    if record["seed"] is not None and (isinstance(record["seed"], bool) or not isinstance(record["seed"], (int, str))):
        raise RecordError(f"seed {record['seed']!r}: expected an int, a string or null")
    first = record["first_player"]
    if isinstance(first, bool) or not isinstance(first, int) or not 0 <= first < n:
        raise RecordError(f"first_player {first!r}: expected a seat 0..{n - 1}")
    actions, texts = record["actions"], record["action_text"]
    if not isinstance(actions, list):
        raise RecordError(f"actions must be a list of action ids, not {type(actions).__name__}")
    if not isinstance(texts, list) or len(texts) != len(actions):
        raise RecordError(f"action_text must be a list of {len(actions)} strings, one per action")
    if "source" in record and not isinstance(record["source"], dict):
        raise RecordError(f"source must be an object, not {type(record['source']).__name__}")
    return rules


def _cards(record: dict, name: str) -> list[int]:
    cards = record[name]
    if not isinstance(cards, list):
        raise RecordError(f"{name} must be a list of cards in G2 notation, not {type(cards).__name__}")
    out = []
    for i, text in enumerate(cards):
        try:
            out.append(parse_card(text))
        except CardError as error:
            raise RecordError(f"{name}[{i}]: {error}") from None
    return out


def _card_texts(cards: Iterable[int]) -> list[str]:
    return [format_card(c, symbols=True) for c in cards]


# ----------------------------------------------------------------------------- showing


def show_lines(record: dict) -> list[str]:
    """A checked hand move by move for people: the deal, each action with the card drawn, the result."""
    layout = action_layout(record["game"])
    rules = _check_fields(record)
    deck = _cards(record, "deck")
    rebuilt = None if record["rebuilt_stock"] is None else _cards(record, "rebuilt_stock")[::-1]
    state = GameState.from_deck(rules, deck[::-1], record["first_player"], rebuilt)
    names = [f"player_{p} ({spec})" for p, spec in enumerate(record["players"])]
    seed = "" if record["seed"] is None else f", seed {record['seed']!r}"
    options = ", ".join(f"{k}={v}" for k, v in sorted(record["options"].items()))
    lines = [f"{rules.spec.title}, {rules.num_players} players ({options}){seed}; "
             f"{names[record['first_player']]} plays first (G6)", "dealt:"]
    for p in range(rules.num_players):
        lines.append(f"  {names[p]}: {format_cards(sorted(state.hand_cards(p), key=sort_key), symbols=True)}")
    shown = [f"discard pile {format_card(state.discard[-1], symbols=True)}", f"stock {len(state.stock)} cards"]
    if state.cut_card != -1:
        shown.append(f"cut card {format_card(state.cut_card, symbols=True)} (R2)")
    if state.wild_card != -1:
        shown.append(f"wild joker {format_card(state.wild_card, symbols=True)} (I2)")
    lines.append("  " + " · ".join(shown))
    lines.append("moves (actions[i], player, action id, text):")
    for index, action in enumerate(record["actions"]):
        move = layout.move(action)
        player = state.current
        text = action_text(state, move)
        if move[0] == DRAW:
            text += f" {format_card(state.stock[-1], symbols=True)}"
        elif move[0] == TAKE_DISCARD:
            text += f" {format_card(state.discard[-1], symbols=True)}"
        rebuilds = state.rebuilds
        state.apply(move)
        lines.append(f"  {index:4d}  {names[player]}  {action:5d}  {text}")
        if state.rebuilds != rebuilds:
            lines.append(f"        the stock is rebuilt from the discards: {len(state.stock)} cards (G8)")
    result = state.result
    how = {"declare": "declares (I5)", "out": "goes out"}.get(result.outcome)
    ending = (f"{names[result.winner]} {how}" if result.winner is not None
              else "stalemate, the stock ran out twice (G8)" if result.outcome == "stalemate"
              else "cut off at the turn cap (G9)")
    lines.append(f"result after {state.turn} turns: {ending}")
    for p in range(rules.num_players):
        lines.append(f"  {names[p]}: pays {result.payments[p]}, points {result.rewards[p]:+d} · "
                     f"hand {hand_text(state, p) or '(empty)'}")
    if state.table:
        lines += ["table melds:"] + [f"  {line}" for line in table_text(state)]
    return lines


# ----------------------------------------------------------------------------- command line


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m rummy_env.records",
        description="Game records (docs/records.md): JSON Lines, one hand a line, replayed from the deck order alone.",
        epilog="Examples:\n  python -m rummy_env.records check hands.jsonl\n"
               "  python -m rummy_env.records show hands.jsonl --hand 3",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True, metavar="{check,show}")
    check = commands.add_parser(
        "check", help="replay every record from its deck order; exit 1 naming the first line and action that disagree",
        description="Replay every record of PATH through the engine from its deck order alone (no seed needed). "
                    "Exit 0 with a one-line summary when every action is legal and every text and result agrees; "
                    "else exit 1 naming the first record (its line) and action (actions[i]) that disagree.")
    check.add_argument("path", metavar="PATH", help="a records file (JSON Lines)")
    show = commands.add_parser(
        "show", help="print one hand move by move, every hand face up",
        description="Print hand K of PATH move by move: the deal, each action with its id and text (the card "
                    "drawn or taken too), stock rebuilds (G8) and the result, cards like 5♥.")
    show.add_argument("path", metavar="PATH", help="a records file (JSON Lines)")
    show.add_argument("--hand", type=int, default=1, metavar="K", help="the hand to show, counted from 1 (default 1)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m rummy_env.records``; the exit status (0, 1 for a record that
    disagrees, 2 for a bad command line or a file that cannot be read)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    path = Path(args.path)
    if not path.is_file():
        parser.exit(2, f"{parser.prog}: error: {args.path}: no such file\n")
    if args.command == "show" and args.hand < 1:
        parser.exit(2, f"{parser.prog}: error: --hand {args.hand}: hands are counted from 1\n")
    count, line, games, chosen = 0, 0, {}, None
    try:
        for line, record in read_records(path):
            count += 1
            if args.command == "show":
                if count == args.hand:
                    replay(record)
                    chosen = (line, record)
                    break
                continue
            state = replay(record)
            key = f"{state.rules.game} {state.rules.num_players}p"
            games[key] = games.get(key, 0) + 1
    except RecordError as error:
        print(f"{args.path}: {error if error.line is not None else error.at_line(line)}", file=sys.stderr)
        return 1
    except (OSError, UnicodeDecodeError) as error:
        parser.exit(2, f"{parser.prog}: error: {args.path}: cannot be read: {error}\n")
    if args.command == "show":
        if chosen is None:
            parser.exit(2, f"{parser.prog}: error: --hand {args.hand}: {args.path} holds {count} hands\n")
        try:
            print(f"{args.path}: hand {args.hand} (line {chosen[0]})")
            print("\n".join(show_lines(chosen[1])))
            sys.stdout.flush()
        except BrokenPipeError:  # the reader stopped early (``| head``): end quietly
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    if not count:
        print(f"{args.path}: no records", file=sys.stderr)
        return 1
    tables = ", ".join(f"{n} {key}" for key, n in games.items())
    print(f"{args.path}: {count} hands replayed from their deck orders, every action and result agrees ({tables})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
