"""Seeded random agents play one hand of each game; the hands are printed (RULES G10).

    python -m rummy_env.demo --seed 7
"""

from __future__ import annotations

import argparse
import random

from .cards import format_cards, sort_key
from .game import GameState
from .melds import table_meld_cards

GAMES = ("indian", "basic", "romi")
TITLES = {"indian": "Indian Rummy", "basic": "Basic Rummy", "romi": "Indiai römi"}


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
    lines = [f"{TITLES[rules.game]}, {rules.num_players} players, seed {state.seed}: "
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0, help="seed of every deal and every random choice")
    parser.add_argument("--players", type=int, default=2, help="players at the table (2 fits every game)")
    args = parser.parse_args(argv)
    for game in GAMES:
        print(describe_hand(play_random_hand(game, args.players, args.seed)))
        print()


if __name__ == "__main__":
    main()
