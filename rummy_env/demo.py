"""Seeded random agents play one hand of each game; the hands are printed (G10 of docs/rules.md).

    python -m rummy_env.demo --seed 7
    python -m rummy_env.demo --players 5      # Indian Rummy only: Basic and römi seat 2-4 (B1, R1)

A game that cannot seat ``--players`` is skipped, saying so.
"""

from __future__ import annotations

import argparse
import os
import random
import sys

from .cards import format_cards, sort_key
from .game import GameState
from .melds import table_meld_cards
from .games import game_spec
from .ruleset import GAMES, make_ruleset


def play_random_hand(game: str, num_players: int, seed: int) -> GameState:
    """One hand of ``game`` where every seat picks uniformly among its legal moves."""
    state = GameState.new(game, num_players, seed=seed)
    rng = random.Random(seed)
    while not state.is_over:
        state.apply(rng.choice(state.legal_moves()))
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
            print(describe_hand(play_random_hand(game, args.players, args.seed)))
        else:
            print(f"{game_spec(game).title}: skipped: {seating_problem(game, args.players)}")
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
