"""The compiled search (``rummy_env.compiled.solver``) against the Python one, in lockstep.

The Python search (``rummy_env.solver`` with ``use_compiled(False)``) is the reference, itself
checked against a brute force in ``tests/test_solver.py``. The compiled search must give the same
answers and the same *arrangements* (melds in the same order, the same deadwood), since the rule
agent's decisions read them. Hands: seeded random deals of every game (Indian with and without a
wild rank, I2; Basic; römi), Hypothesis hands, and corner cases (all jokers, both copies of
every card, one suit only).
"""

from __future__ import annotations

import random
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rummy_env import solver
from rummy_env.cards import JOKER, parse_cards, to_counts

TWO_DECKS = [c for c in range(52) for _ in range(2)]
ONE_DECK = list(range(52))


@contextmanager
def search(compiled: bool):
    before = solver.use_compiled(compiled)
    try:
        yield
    finally:
        solver.use_compiled(before)


def answers(counts: list[int], game: str, wild: int | None) -> dict:
    """Every answer the compiled search gives for ``counts``."""
    out = {"min_deadwood": solver.min_deadwood(counts, game, wild),
           "free": solver.best_arrangement(counts, game, wild, lives=False)}
    if game == "indian":
        out["penalty"] = solver.indian_penalty(counts, wild)
        out["lives"] = solver.best_arrangement(counts, game, wild)
    return out


def check(counts: list[int], game: str, wild: int | None = None) -> None:
    with search(False):
        expected = answers(counts, game, wild)
    with search(True):
        got = answers(counts, game, wild)
    for key, want in expected.items():
        assert got[key] == want, f"{key} of {counts} ({game}, wild {wild}): compiled {got[key]} != python {want}"


def deal(rng: random.Random, deck: list[int], size: int, jokers: int) -> list[int]:
    return to_counts(rng.sample(deck + [JOKER] * jokers, size))


def test_compiled_search_is_selected_by_default_and_switches():
    assert solver.compiled_in_use()  # RUMMY_COMPILED is not set to 0 in the test run
    with search(False):
        assert not solver.compiled_in_use()
        assert solver.min_deadwood(to_counts(parse_cards("Ah 2h 3h Kd")), "basic") == 10
    assert solver.compiled_in_use()
    assert solver.min_deadwood(to_counts(parse_cards("Ah 2h 3h Kd")), "basic") == 10


@pytest.mark.parametrize("size", [7, 10, 11, 13, 14])
def test_I7_indian_random_hands_match_python(size):
    rng = random.Random(size)
    for _ in range(300):
        check(deal(rng, TWO_DECKS, size, 2), "indian")


@pytest.mark.parametrize("jokers", [0, 2, 4, 8])
def test_I2_indian_wild_rank_random_hands_match_python(jokers):
    rng = random.Random(100 + jokers)
    for _ in range(250):
        check(deal(rng, TWO_DECKS, rng.choice([13, 14]), jokers), "indian", rng.randrange(13))


@pytest.mark.parametrize("size", [7, 10, 11])
def test_B5_basic_random_hands_match_python(size):
    rng = random.Random(200 + size)
    for _ in range(300):
        check(deal(rng, ONE_DECK, size, 0), "basic")


@pytest.mark.parametrize("size", [4, 13, 14, 16])
def test_R7_romi_random_hands_match_python(size):
    rng = random.Random(300 + size)
    for _ in range(300):
        check(deal(rng, TWO_DECKS, size, 2), "romi")


def test_rich_hands_match_python():
    """Hands dealt from few ranks or one suit: many sets and runs compete."""
    rng = random.Random(7)
    for _ in range(200):
        ranks = rng.sample(range(13), 4)
        deck = [s * 13 + r for s in range(4) for r in ranks for _ in range(2)]
        check(deal(rng, deck, 13, 2), "indian", rng.choice([None, ranks[0]]))
        check(deal(rng, deck, 13, 2), "romi")
        suit = rng.randrange(4)
        deck = [suit * 13 + r for r in range(13) for _ in range(2)]
        check(deal(rng, deck, 13, 2), "indian", rng.choice([None, rng.randrange(13)]))
        check(deal(rng, deck, 14, 2), "romi")


def test_I3_all_jokers_match_python():
    for jokers in range(1, 9):
        counts = [0] * 53
        counts[JOKER] = jokers
        check(counts, "indian")
        check(counts, "indian", 4)
    counts = [0] * 53
    counts[JOKER] = 2
    check(counts, "romi")
    wild = [0] * 53  # eight wild cards and six printed jokers: every card a joker (I2)
    for s in range(4):
        wild[s * 13 + 6] = 2
    wild[JOKER] = 6
    check(wild, "indian", 6)


def test_G3_both_copies_of_cards_match_python():
    """Two decks: pairs of identical cards, which never share a set but may sit in two runs."""
    rng = random.Random(11)
    for _ in range(200):
        cards = rng.sample(range(52), 6)
        counts = [0] * 53
        for c in cards:
            counts[c] = 2
        counts[JOKER] = rng.randrange(3)
        check(counts, "indian", rng.choice([None, rng.randrange(13)]))
        check(counts, "romi")
    twice = to_counts(parse_cards("Ah Ah 2h 2h 3h 3h 4h 4h 5h 5h Ks Ks *"))
    check(twice, "indian")
    check(twice, "indian", 0)
    check(twice, "romi")


@settings(max_examples=300, deadline=None)
@given(
    game=st.sampled_from(["indian", "basic", "romi"]),
    cards=st.lists(st.integers(0, 51), min_size=1, max_size=14),
    jokers=st.integers(0, 4),
    wild=st.one_of(st.none(), st.integers(0, 12)),
)
def test_hypothesis_hands_match_python(game, cards, jokers, wild):
    counts = to_counts(cards)
    copies = 1 if game == "basic" else 2
    counts = [min(n, copies) for n in counts[:52]] + [0 if game == "basic" else jokers]
    check(counts, game, wild if game == "indian" else None)


def test_compiled_search_refuses_what_python_refuses():
    with search(True):
        with pytest.raises(ValueError, match="at most twice"):
            solver.indian_penalty([3] + [0] * 52)
        with pytest.raises(ValueError, match="has no jokers"):
            solver.min_deadwood([0] * 52 + [1], "basic")
        with pytest.raises(ValueError, match="53 entries"):
            solver.best_arrangement([0] * 52, "romi")


def test_clearing_the_caches_changes_no_answer():
    """Memo tables are keyed by rule set; tables built before a clear must not read another game's."""
    rng = random.Random(5)
    hands = [deal(rng, TWO_DECKS, 13, 2) for _ in range(50)]
    with search(True):
        before = [solver.best_arrangement(h, "romi") for h in hands]
        solver.clear_caches()
        assert [solver.best_arrangement(h, "indian", lives=False) for h in hands] == \
            [solver.best_arrangement(h, "indian", lives=False) for h in hands]
        assert [solver.best_arrangement(h, "romi") for h in hands] == before


# ------------------------------------------------------------------ römi going out (R4)
# ``min_loose_cards``: the relaxation that bounds the römi going-out search (``game._may_go_out``),
# Indian meld rules counted in natural cards (any number of jokers a meld, ace high or low).


def loose(counts: list[int], compiled: bool) -> int:
    with search(compiled):
        solver._LOOSE.clear()  # its answers are memoised by hand: ask the selected search afresh
        return solver.min_loose_cards(counts)


def check_loose(counts: list[int]) -> int:
    want = loose(counts, False)
    got = loose(counts, True)
    assert got == want, f"min_loose_cards of {counts}: compiled {got} != python {want}"
    return want


@pytest.mark.parametrize("text, want", [
    ("Ah 2h 3h", 0),  # R3: ace low
    ("Qh Kh Ah", 0),  # R3: ace high
    ("Kh Ah 2h", 3),  # no run turns the corner
    ("Ah * * * *", 0),  # the relaxation: any number of jokers a meld, unlike römi's two (G5)
    ("Ah Ah 2h 2h 3h 3h", 0),  # G3: both copies, two runs
    ("Ah Ah Ad Ac", 1),  # two copies never share a set: one Ah is loose
    ("4c 9d Kh", 3),
])
def test_R4_min_loose_cards_known_hands_match_python(text, want):
    assert check_loose(to_counts(parse_cards(text))) == want


@pytest.mark.parametrize("jokers", [0, 2, 4, 8, 12])
def test_R4_min_loose_cards_random_hands_match_python(jokers):
    """Relaxed hands: cards that could go on the table count as jokers, so there may be many."""
    rng = random.Random(400 + jokers)
    for _ in range(250):
        check_loose(deal(rng, TWO_DECKS, rng.choice([2, 5, 8, 11, 14, 16]), jokers))


def test_R4_min_loose_cards_rich_hands_match_python():
    rng = random.Random(13)
    for _ in range(150):
        ranks = rng.sample(range(1, 12), 3) + [0, 12]  # aces and kings: runs high and low (R3)
        deck = [s * 13 + r for s in range(4) for r in ranks for _ in range(2)]
        check_loose(deal(rng, deck, rng.choice([8, 14]), rng.randrange(4)))


@settings(max_examples=300, deadline=None)
@given(cards=st.lists(st.integers(0, 51), min_size=0, max_size=16), jokers=st.integers(0, 10))
def test_R4_hypothesis_min_loose_cards_match_python(cards, jokers):
    counts = [min(n, 2) for n in to_counts(cards)[:52]] + [jokers]
    check_loose(counts)


def test_R4_min_loose_cards_refuses_what_python_refuses():
    for compiled in (False, True):
        with pytest.raises(ValueError, match="at most twice"):
            loose([3] + [0] * 52, compiled)


@pytest.mark.parametrize("jokers", [3, 4])
def test_G5_romi_hands_with_more_jokers_than_a_meld_holds_match_python(jokers):
    rng = random.Random(500 + jokers)
    for _ in range(150):
        check(deal(rng, TWO_DECKS, rng.choice([5, 13, 14]), jokers), "romi")


def test_R4_romi_games_play_the_same_with_either_search():
    """The römi engine's look-aheads (cut card R4, taking the discard) read ``min_loose_cards``:
    random games list the same legal moves at every step with the compiled search and without."""
    from rummy_env import game as engine

    def play(compiled: bool, seed: int) -> list:
        with search(compiled):
            solver._LOOSE.clear()
            engine._GOING_OUT.clear()
            rng = random.Random(seed)
            state = engine.GameState.new("romi", 2, seed=seed)
            seen = []
            for _ in range(400):
                moves = state.legal_moves()
                if not moves:
                    break
                seen.append(moves)
                state.apply(rng.choice(moves))
            return seen

    cut = 0
    for seed in range(30):
        python = play(False, seed)
        assert play(True, seed) == python
        cut += sum(engine.TAKE_CUT in (m[0] for m in moves) for moves in python)
    assert cut, "no position offered the cut card: the look-ahead was not exercised"
