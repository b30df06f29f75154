"""Indiai römi (``docs/rules.md`` R1–R8): a cut card, joker swaps, at most two jokers a meld, 80 for not opening."""

from __future__ import annotations

from ..melds import MeldRules
from .spec import GameSpec, RuleIds

SPEC = GameSpec(
    name="romi",
    title="Indiai römi",
    label="römi",
    env_name="indian_romi_v1",
    players=(2, 4),
    hand_sizes={2: 13, 3: 13, 4: 13},  # R1
    decks=2,
    printed_jokers=2,
    rank_values=(10, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10),  # R7: A = 10, J Q K = 10
    melds=MeldRules(ace_high=True, max_jokers=2),  # R3
    table_melds=True,  # R5
    declares=False,
    lives=False,
    cut_card=True,  # R2, R4
    later_take_must_be_placed=True,  # R4
    layoff_needs_own_meld=True,  # R5
    out_without_discard=False,  # R6
    unopened_penalty=80,  # R7
    low_total_wins=True,  # R8
    options={"match_target": 250, "max_turns": 500},
    rule_ids=RuleIds(players="R1", runs="R3", payment="R7", match="R8"),
    compiled_core="rummy_env.compiled.romi:RomiCore",
)

SPECS = (SPEC,)
"""The games this module registers (``rummy_env.games``)."""
