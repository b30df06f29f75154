"""Basic Rummy (``docs/rules.md`` B1–B6): one deck, melds and lay-offs on the table, out with an empty hand."""

from __future__ import annotations

from ..melds import MeldRules
from .spec import GameSpec, RuleIds

SPEC = GameSpec(
    name="basic",
    title="Basic Rummy",
    label="Basic",
    env_name="basic_rummy_v0",
    players=(2, 4),
    hand_sizes={2: 10, 3: 7, 4: 7},  # B1
    decks=1,
    printed_jokers=0,
    rank_values=(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10),  # B5: A = 1, J Q K = 10
    melds=MeldRules(ace_high=False, max_jokers=0),  # B1, B2
    table_melds=True,  # B3
    declares=False,
    lives=False,
    cut_card=False,
    later_take_must_be_placed=False,
    layoff_needs_own_meld=False,
    out_without_discard=True,  # B4
    unopened_penalty=None,
    low_total_wins=False,  # B6
    options={"rummy_bonus": False, "match_target": 100, "max_turns": 500},
    rule_ids=RuleIds(players="B1", runs="B2", payment="B5", match="B6"),
    compiled_core="rummy_env.compiled.basic:BasicCore",
)

SPECS = (SPEC,)
"""The games this module registers (``rummy_env.games``)."""
