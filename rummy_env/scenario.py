"""Build a game state from hand diagrams in G2 notation, for tests, puzzles and examples.

    state = make_state("romi", hands=["5h 6h 7h 9c Kd", "2s 2d 8c"], discard="Qs 4d",
                       stock="Ac 3c", table=["9s 9h *"], cut_card="Js", opened=[True, False])

Lists read bottom to top: the last card of ``discard`` is its top, the last of ``stock`` is
drawn first. The cards need not make up a full deck.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import JOKER, NUM_RANKS, parse_card, parse_cards, to_counts
from .game import PHASE_DRAW, GameState
from .games import game_spec
from .melds import is_meld_cards, meld_templates, table_meld_from_template
from .ruleset import make_ruleset


def parse_table_meld(game: str, text: str) -> list:
    """A table meld from text; jokers stand where the cards listed leave a gap.

    A run is listed low to high (``"5h * 7h"``, ``"Qd Kd Ad"``); a set lists a joker as
    ``*`` or as ``*=9d`` to say which card it stands for.
    """
    tokens = text.split()
    stands_for = []
    physical = []
    for token in tokens:
        if token.startswith("*="):
            stands_for.append(parse_card(token[2:]))
            physical.append(JOKER)
        else:
            card = parse_card(token)
            stands_for.append(card)
            physical.append(card)
    rules = game_spec(game).melds
    if not is_meld_cards(physical, rules):
        raise ValueError(f"table meld {text!r} is not a meld in {game!r}")
    naturals = [c for c in stands_for if c != JOKER]
    for template in meld_templates(rules.ace_high):
        if len(template.cards) != len(tokens):
            continue
        if _matches(template.cards, stands_for, naturals, template.kind):
            return table_meld_from_template(template, _physical_for(template, stands_for, physical))
    raise ValueError(f"table meld {text!r}: cannot tell which cards its jokers stand for")


def _matches(cards, stands_for, naturals, kind) -> bool:
    if kind == 1:  # a run, position by position
        return all(s == JOKER or s == c for s, c in zip(stands_for, cards))
    return all(c in cards for c in naturals) and len(set(naturals)) == len(naturals)


def _physical_for(template, stands_for, physical) -> list[int]:
    if template.kind == 1:
        return list(physical)
    named = {s: p for s, p in zip(stands_for, physical) if s != JOKER}
    return [named.get(card, JOKER) for card in template.cards]


def make_state(
    game: str,
    hands: Sequence[str],
    discard: str = "",
    stock: str = "",
    table: Sequence[str] = (),
    cut_card: str | None = None,
    wild_card: str | None = None,
    current: int = 0,
    opened: Sequence[bool] | None = None,
    turns_taken: Sequence[int] | None = None,
    seed: int | str = 0,
    **options,
) -> GameState:
    """A state at the start of ``current``'s turn with exactly the cards given."""
    num_players = len(hands)
    if wild_card is not None:
        options.setdefault("wild_joker", True)
    rules = make_ruleset(game, num_players, **options)
    state = GameState(rules, seed, 0)
    state.hands = [to_counts(parse_cards(h)) for h in hands]
    state.discard = parse_cards(discard)
    state.stock = parse_cards(stock)
    state.table = [parse_table_meld(game, m) for m in table]
    state.cut_card = -1 if cut_card is None else parse_card(cut_card)
    state.wild_card = -1 if wild_card is None else parse_card(wild_card)
    if state.wild_card == -1:
        state.wild_rank = None
    else:
        state.wild_rank = 0 if state.wild_card == JOKER else state.wild_card % NUM_RANKS
    state.current = current
    state.phase = PHASE_DRAW
    state.opened = list(opened) if opened is not None else [False] * num_players
    state.turns_taken = list(turns_taken) if turns_taken is not None else [1] * num_players
    state.known = [[0] * 53 for _ in range(num_players)]
    state.discarded = [[0] * 53 for _ in range(num_players)]
    state.changed()
    return state
