"""Römi against random play: how many lost hands could any player have won?

    python experiments/romi_random_races.py [--agents rule] [--hands 4000] [--seed 7]

Plays each agent against the random agent on duplicate deals (the arena's deals and seats) and
looks at every hand random won. Random went out on its own turn t; the script asks whether the
agent's seat could have gone out on one of its turns before that *even knowing the stock*: a
clairvoyant that draws the same stock cards the seat drew (every other card, as when both draw
from the stock) and may also take the cut card (R4) and the first discard top (R4), needs the cards
it holds by then to leave at most as many cards outside melds as the discards it has made, one a
turn (R6). Cards outside melds are counted by ``solver.min_loose_cards``, a relaxation of the römi
meld rules (any number of jokers a meld, ace high), so the test is generous to the clairvoyant.

A hand that fails this test was lost to random by any player who drew from the stock alone. The
count leaves out what a clairvoyant could gain from the discard pile or lay-offs on random's
melds (R5), and that its own choices change random's draws and choices; so it is an estimate of
the hands no player wins, not a proof. Figures are over decided hands (stalemates left out).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.arena import ArenaConfig, check_config, deal_seed, play_deals  # noqa: E402
from agents.stats import wilson_interval  # noqa: E402
from rummy_env import solver  # noqa: E402
from rummy_env.game import GameState  # noqa: E402
from rummy_env.ruleset import make_ruleset  # noqa: E402


def could_go_out_by(state: GameState, seat: int, turns: int) -> bool:
    """Whether ``seat``, knowing the stock of this freshly dealt ``state``, could pass the
    meld-count test (module docstring) by its own turn ``turns`` (2 players, both drawing)."""
    if turns < 1:
        return False
    counts = list(state.hands[seat])
    for card in state.stock[::-1][seat::2][:turns]:  # the stock's top is its last card
        counts[card] += 1
    extras = [state.cut_card, state.discard[-1]]
    for chosen in range(4):  # with or without the cut card, with or without the first discard top
        pool = counts[:]
        for i, card in enumerate(extras):
            if chosen >> i & 1:
                pool[card] += 1
        if solver.min_loose_cards(pool) <= turns:
            return True
    return False


def races(agent: str, hands: int, seed: int) -> dict:
    """The agent against random: decided hands, hands lost, and lost hands no stock-clairvoyant wins."""
    rules = make_ruleset("romi", 2)
    config = ArenaConfig("romi", (agent, "random"), hands=hands, seed=seed)
    records = play_deals(config, 0, range(config.deals), check_config(config))
    decided = lost = beyond = 0
    for record in records:
        if record["outcome"] != "out":
            continue
        decided += 1
        ours, winner = record["seats"].index(0), record["winner"]
        if winner == ours:
            continue
        lost += 1
        random_turn = (record["turns"] - winner) // 2 + 1  # the first player sits in seat 0
        last_chance = random_turn if ours == 0 else random_turn - 1  # our last own turn before it
        dealt = GameState(rules, deal_seed(seed, record["deal"]), 0)
        if not could_go_out_by(dealt, ours, last_chance):
            beyond += 1
    return {"agent": agent, "decided": decided, "lost": lost, "beyond": beyond}


def percent(count: int, total: int) -> str:
    low, high = wilson_interval(count, total)
    return f"{100 * count / total:5.2f}% [{100 * low:.2f}, {100 * high:.2f}]"


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(prog="python experiments/romi_random_races.py",
                                     description=__doc__.split("\n\n")[2].replace("\n", " "))
    parser.add_argument("--agents", nargs="+", default=["rule"],
                        help="agent specs to play against random (default: rule)")
    parser.add_argument("--hands", type=int, default=4000, help="hands per agent, on duplicate deals (default 4000)")
    parser.add_argument("--seed", type=int, default=7, help="seed of the deals (default 7)")
    args = parser.parse_args(argv)
    if args.hands < 2:
        parser.error(f"--hands {args.hands}: expected at least 2")
    rows = []
    print(f"römi, 2 players, {args.hands} hands against random per agent, seed {args.seed}; % of decided hands [95%]")
    for agent in args.agents:
        row = races(agent, args.hands, args.seed)
        rows.append(row)
        print(f"{agent:>24}: lost {percent(row['lost'], row['decided'])}; lost with no stock-clairvoyant "
              f"way out first {percent(row['beyond'], row['decided'])}  (of {row['decided']} decided)")
    return rows


if __name__ == "__main__":
    main()
