"""Indian Rummy (``docs/rules.md`` I1–I9): declare from the hand with two runs, one of them pure."""

from __future__ import annotations

from ..melds import MeldRules
from .spec import GameSpec, RuleIds

SPEC = GameSpec(
    name="indian",
    title="Indian Rummy",
    label="Indian",
    env_name="indian_rummy_v0",
    players=(2, 6),
    hand_sizes={n: 13 for n in range(2, 7)},  # I1
    decks=2,
    printed_jokers=2,
    max_printed_jokers=8,
    rank_values=(10, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10),  # I7: A K Q J pay 10
    melds=MeldRules(ace_high=True, max_jokers=None),  # I3
    table_melds=False,
    declares=True,  # I4, I5
    lives=True,  # I5, I7
    cut_card=False,
    later_take_must_be_placed=False,
    layoff_needs_own_meld=False,
    out_without_discard=False,
    unopened_penalty=None,
    low_total_wins=True,  # I8
    options={"printed_jokers": 2, "wild_joker": False, "penalty_cap": None, "match_target": 400, "max_turns": 500},
    rule_ids=RuleIds(players="I1", runs="I3", payment="I7", match="I8"),
    free_arrangement_game="romi",
    compiled_core="rummy_env.compiled.indian:IndianCore",
)

SPECS = (SPEC,)
"""The games this module registers (``rummy_env.games``)."""
