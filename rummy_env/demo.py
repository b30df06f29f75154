"""One hand of each game played to its result by plain seeded players; the ends are printed (G10).

    python -m rummy_env.demo --seed 7
    python -m rummy_env.demo --players 5      # Indian Rummy only: Basic and römi seat 2-4 (B1, R1)

Each seat plays the same plain policy (``plain_move``): it declares or goes out when it can (I5,
R4), lays every meld and lay-off it may (B3, R5), takes the discard top when that lowers its
hand's deadwood, else draws, and discards the card that leaves the least deadwood (the exact
solver's, ``rummy_env.solver.min_deadwood``; ties broken by the seeded generator). Random play
almost never ends a hand (G8 stalemates); this ends nearly every one with a winner, so the demo
shows how each game is won and scored. A game that cannot seat ``--players`` is skipped, saying so.
"""

from __future__ import annotations

import argparse
import os
import random
import sys

from . import solver
from .cards import NUM_TYPES, format_cards, sort_key
from .game import DECLARE, DISCARD, DRAW, MELD, PLACE, PLACE_JOKER_LOW, TAKE_CUT, TAKE_DISCARD, GameState, Move
from .melds import table_meld_cards
from .games import game_spec
from .ruleset import GAMES, make_ruleset


_ENDING = (DECLARE, TAKE_CUT)
_PLAYS = (MELD, PLACE, PLACE_JOKER_LOW)


def _deadwood(state: GameState, hand) -> int:
    """The least value ``hand`` leaves outside melds, arranged freely (``GameSpec.arrangement_game``)."""
    return solver.min_deadwood(hand, state.rules.spec.arrangement_game)


def _without(hand, card: int) -> list[int]:
    return [n - (c == card) for c, n in enumerate(hand)]


def plain_move(state: GameState, rng: random.Random) -> Move:
    """The plain policy's move for the player to act (the module docstring says what it does)."""
    moves = state.legal_moves()
    for kinds in (_ENDING, _PLAYS):
        chosen = [m for m in moves if m[0] in kinds]
        if chosen:
            return chosen[0]
    hand = state.hands[state.current]
    if (TAKE_DISCARD, 0, 0) in moves:
        top = state.discard[-1]
        with_top = list(hand)
        with_top[top] += 1
        after = min((_deadwood(state, _without(with_top, c)) for c in range(NUM_TYPES) if with_top[c] and c != top),
                    default=None)
        if after is not None and after < _deadwood(state, hand):
            return (TAKE_DISCARD, 0, 0)
    if (DRAW, 0, 0) in moves:
        return (DRAW, 0, 0)
    values = state.rules.values
    return min((_deadwood(state, _without(hand, m[1])), -values[m[1]], rng.random(), m) for m in moves
               if m[0] == DISCARD)[3]


def play_hand(game: str, num_players: int, seed: int) -> GameState:
    """One hand of ``game`` dealt from ``seed``, every seat playing ``plain_move``."""
    state = GameState.new(game, num_players, seed=seed)
    rng = random.Random(seed)
    while not state.is_over:
        state.apply(plain_move(state, rng))
    return state


def describe_hand(state: GameState) -> str:
    """The end of a hand in words: outcome, each player's cards and payment, the table."""
    rules = state.rules
    result = state.result
    lines = [f"{rules.spec.title}, {rules.num_players} players, seed {state.seed}: "
             f"{result.outcome} after {state.turn} turns"
             + (f", player_{result.winner} wins" if result.winner is not None else "")]
    for p in range(rules.num_players):
        cards = sorted(state.hand_cards(p), key=sort_key)
        lines.append(f"  player_{p}: pays {result.payments[p]:>3}  reward {result.rewards[p]:>4}  "
                     f"hand: {format_cards(cards, symbols=True) or '(empty)'}")
    for slot, meld in enumerate(state.table):
        lines.append(f"  table [{slot}]: {format_cards([phys for _, phys in table_meld_cards(meld)], symbols=True)}")
    if state.cut_card != -1:
        lines.append(f"  cut card: {format_cards([state.cut_card], symbols=True)}")
    return "\n".join(lines)


def seating_problem(game: str, num_players: int) -> str | None:
    """Why ``game`` cannot seat ``num_players`` (the rule set's message), or None if it can."""
    try:
        make_ruleset(game, num_players)
    except ValueError as error:
        return str(error)
    return None


def program_name(module: str) -> str:
    """``rummy-…`` when run as a console script, else ``python -m module`` (not ``__main__.py``)."""
    name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return name if name.startswith("rummy-") else f"python -m {module}"


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m rummy_env.demo`` and ``rummy-demo``; the exit status."""
    parser = argparse.ArgumentParser(prog=program_name("rummy_env.demo"), description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0, help="seed of every deal and every random choice")
    parser.add_argument("--players", type=int, default=2,
                        help="players at the table: 2-6 for Indian Rummy, 2-4 for Basic and römi (default 2)")
    args = parser.parse_args(argv)
    playable = [game for game in GAMES if seating_problem(game, args.players) is None]
    if not playable:
        parser.error(f"--players {args.players}: no game seats that many (Indian Rummy 2-6, Basic and römi 2-4)")
    for game in GAMES:
        if game in playable:
            print(describe_hand(play_hand(game, args.players, args.seed)))
        else:
            print(f"{game_spec(game).title}: skipped: {seating_problem(game, args.players)}")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
