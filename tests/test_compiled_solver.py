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
import sys
from contextlib import contextmanager
from pathlib import Path

import numpy as np
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


# ------------------------------------------------------------------ structured hands
# Hands dealt like mid-game hands (the benchmark's ``structured_hand``: pure runs, runs with a
# gap, pairs and sets, jokers, a wild-rank card): nearly all need the full search, where random
# 13-card hands mostly end at the quick answer (no pure run, I5).

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_solver import structured_hand  # noqa: E402


@pytest.mark.parametrize("game", ["indian", "basic", "romi"])
def test_structured_hands_match_python(game):
    rng = random.Random(f"structured {game}")
    size = {"indian": 13, "basic": 10, "romi": 13}[game]
    for i in range(400):
        counts, wild = structured_hand(rng, game, size + (i % 2 if game == "indian" else 0), wild=game == "indian")
        check(counts, game, wild if i % 3 else None)


# ------------------------------------------------------------------ batches (hand_penalties)


def reference_penalties(game: str, hands, wilds=None) -> list[int]:
    """``hand_penalties`` row by row through the Python search: what the batch must return."""
    with search(False):
        out = []
        for i, row in enumerate(np.asarray(hands)):
            counts = [int(x) for x in row]
            wild = None if wilds is None or wilds[i] < 0 else int(wilds[i])
            out.append(solver.indian_penalty(counts, wild) if game == "indian" else solver.min_deadwood(counts, game))
        return out


def structured_batch(game: str, n: int, seed: int, wild: bool = False) -> tuple[np.ndarray, np.ndarray]:
    rng = random.Random(seed)
    size = {"indian": 13, "basic": 10, "romi": 13}[game]
    hands = [structured_hand(rng, game, size, wild) for _ in range(n)]
    return np.array([c for c, _ in hands], np.uint8), np.array([-1 if w is None else w for _, w in hands])


@pytest.mark.parametrize("game", ["indian", "basic", "romi"])
def test_I7_B5_R7_hand_penalties_match_python_on_structured_and_random_hands(game):
    counts, _ = structured_batch(game, 300, seed=1)
    rng = random.Random(2)
    deck, size, jokers = (ONE_DECK, 10, 0) if game == "basic" else (TWO_DECKS, 13, 2)
    dealt = np.array([deal(rng, deck, rng.choice([size, size + 1, 7]), jokers) for _ in range(300)], np.int64)
    for hands in (counts, dealt):
        want = reference_penalties(game, hands)
        assert solver.hand_penalties(game, hands).tolist() == want
        with search(False):
            assert solver.hand_penalties(game, hands).tolist() == want


def test_I2_hand_penalties_take_one_wild_rank_or_one_per_hand():
    counts, wilds = structured_batch("indian", 300, seed=3, wild=True)
    wilds[::4] = -1  # some hands without one
    assert solver.hand_penalties("indian", counts, wilds).tolist() == reference_penalties("indian", counts, wilds)
    same = np.full(len(counts), 6)
    assert solver.hand_penalties("indian", counts, 6).tolist() == reference_penalties("indian", counts, same)
    assert solver.hand_penalties("indian", counts, np.int8(6)).tolist() == reference_penalties("indian", counts, same)


def test_hand_penalties_read_observation_planes_as_they_are():
    """Float rows holding whole numbers, cut out of a wider array (strided), give the same answers."""
    counts, _ = structured_batch("indian", 100, seed=4)
    observations = np.zeros((len(counts), 200), np.float32)
    observations[:, 17:17 + 53] = counts
    planes = observations[:, 17:17 + 53]
    assert not planes.flags.c_contiguous
    assert solver.hand_penalties("indian", planes).tolist() == reference_penalties("indian", counts)
    assert solver.hand_penalties("romi", counts.astype(np.float16)).tolist() == reference_penalties("romi", counts)
    assert solver.hand_penalties("basic", np.zeros((0, 53), np.uint8)).tolist() == []


def test_hand_penalties_of_a_hand_too_large_for_the_compiled_search_come_from_python():
    big = [0] * 53
    for r in (0, 4, 8):  # every suit twice at three ranks: more ways to take sets out than scratch rows
        for s in range(4):
            big[s * 13 + r] = 2
    big[JOKER] = 2
    from rummy_env.compiled import solver as fast

    assert fast.value(bytes(big), fast.rules("romi", None), fast.FREE, 2, 255, solver.INF) == fast.OVERFLOW
    hands = np.array([big, to_counts(parse_cards("Ah 2h 3h Kd"))], np.int64)
    assert solver.hand_penalties("romi", hands).tolist() == reference_penalties("romi", hands) == [0, 10]


@settings(max_examples=200, deadline=None)
@given(
    game=st.sampled_from(["indian", "basic", "romi"]),
    rows=st.lists(st.tuples(st.lists(st.integers(0, 51), max_size=15), st.integers(0, 3), st.integers(-1, 12)),
                  min_size=1, max_size=12),
)
def test_hypothesis_hand_penalties_match_python(game, rows):
    copies = 1 if game == "basic" else 2
    hands = np.array([[min(n, copies) for n in to_counts(cards)[:52]] + [0 if game == "basic" else jokers]
                      for cards, jokers, _ in rows], np.uint8)
    wilds = np.array([w for *_, w in rows]) if game == "indian" else None
    assert solver.hand_penalties(game, hands, wilds).tolist() == reference_penalties(game, hands, wilds)


@pytest.mark.parametrize("game, counts, wild, named", [
    ("indian", [[0] * 52], None, r"an \(N, 53\) array of counts.*not an array of shape \(1, 52\)"),
    ("indian", [0] * 53, None, r"not an array of shape \(53,\)"),
    ("romi", np.zeros((2, 53), bool), None, "not dtype bool"),
    ("indian", [[0] * 52 + [1], [0.5] + [0] * 52], None, r"row 1: the count of As \(index 0\) is 0.5, not a whole"),
    ("indian", [[0] * 13 + [3] + [0] * 39], None,
     r"row 0: 3 copies of Ah \(index 13\): a natural card is held at most"),
    ("romi", [[0] * 53, [-1] + [0] * 52], None, r"row 1: -1 copies of As \(index 0\): a count is never negative"),
    ("romi", [[np.nan] + [0] * 52], None, r"row 0: the count of As \(index 0\) is nan"),
    ("basic", [[0] * 52 + [1]], None, "row 0: 'basic' has no jokers, not 1"),
    ("indian", [[0] * 52 + [256]], None, "row 0: 256 jokers, more than 255"),
    ("basic", [[0] * 53], 3, r"only Indian has a wild rank \(I2\), not 'basic'"),
    ("indian", [[0] * 53], 13, "wild_rank 13 is not a rank 0..12"),
    ("indian", [[0] * 53], True, "not bool"),
    ("indian", [[0] * 53] * 2, [1], r"2 integer ranks.*shape \(1,\)"),
    ("indian", [[0] * 53] * 2, [1, -2], "row 1: wild_rank -2 is not a rank 0..12"),
    ("gin", [[0] * 53], None, "unknown game 'gin'"),
])
def test_hand_penalties_name_what_is_wrong_with_either_search(game, counts, wild, named):
    for compiled in (True, False):
        with search(compiled), pytest.raises(ValueError, match=named):
            solver.hand_penalties(game, np.asarray(counts), wild)


def test_hand_penalties_refuse_the_first_bad_row_before_answering():
    hands = np.zeros((3, 53), np.int64)
    hands[1, 0] = 3
    hands[2, 1] = 3
    with pytest.raises(ValueError, match="row 1: 3 copies of As"):
        solver.hand_penalties("indian", hands)


def test_count_arrays_go_to_the_compiled_search_as_they_are_and_are_refused_as_before():
    counts, _ = structured_batch("indian", 50, seed=5)
    for row in counts:
        want = reference_penalties("indian", row[None])[0]
        for dtype in (np.uint8, np.int16, np.int64, np.uint64):
            assert solver.indian_penalty(row.astype(dtype)) == want
        assert solver.min_deadwood(row.astype(np.int32), "romi") == reference_penalties("romi", row[None])[0]
    with pytest.raises(ValueError, match="0..255"):
        solver.indian_penalty(np.array([-1] + [0] * 52))
    for short in (np.zeros(52, np.int64), np.zeros(52, np.uint8)):  # never read past the end
        with pytest.raises(ValueError, match="53 entries"):
            solver.indian_penalty(short)
        with pytest.raises(ValueError, match="53 entries"):
            solver.min_deadwood(short, "romi")
    assert rules_hand_penalty_refuses(np.zeros(52, np.float32))
    with pytest.raises(ValueError, match="at most twice"):
        solver.indian_penalty(np.array([3] + [0] * 52, np.uint8))


def rules_hand_penalty_refuses(counts) -> bool:
    from rummy_env import rules
    from rummy_env.cards import CardError

    with pytest.raises(CardError, match="shape"):
        rules.hand_penalty("indian", counts)
    return solver.indian_penalty_within(counts, None, 2, 8, 14) is None


# ------------------------------------------------------------------ the compiled module's parts


@settings(max_examples=100, deadline=None)
@given(keys=st.lists(st.integers(1, (1 << 62) - 1), unique=True, max_size=80))
def test_memo_table_finds_what_it_stored_and_refuses_past_half_full(keys):
    from rummy_env.compiled import solver as fast

    slots = 64
    table = np.zeros(2 * slots + 1, np.int64)
    stored = {}
    for i, key in enumerate(keys):
        if fast._store(table, key, i):
            stored[key] = i
        else:
            assert len(stored) == slots // 2  # refused only when half full
    assert len(stored) == min(len(keys), slots // 2)
    assert all(fast._find(table, key) == value for key, value in stored.items())
    assert all(fast._find(table, key) == -1 for key in keys if key not in stored)


@settings(max_examples=100, deadline=None)
@given(keys=st.lists(st.integers(-(1 << 62), 1 << 62), max_size=60), extra=st.integers(0, 5))
def test_heap_sort_sorts_the_first_n_and_leaves_the_rest(keys, extra):
    from rummy_env.compiled import solver as fast

    array = np.array(keys + [7] * extra, np.int64)
    fast._sort(array, len(keys))
    assert array.tolist() == sorted(keys) + [7] * extra


def test_compiled_and_python_views_of_the_workspace_are_the_same_arrays():
    """``_carve`` (compiled, views by address) and the Python views cut the buffer alike."""
    from numba import literal_unroll, njit

    from rummy_env.compiled import solver as fast

    @njit
    def mark(work):  # the last element of each array, in order: 1, 2, 3, ...
        state, scratch, out, memo, pmemo, counts = fast._carve(work)
        i = 1
        for a in literal_unroll(state + scratch + out + (memo, pmemo, counts)):
            a.reshape(a.size)[a.size - 1] = i
            i += 1

    work = np.zeros_like(fast.workspace().buffer)
    mark(work)
    views = fast._python_views(work)
    assert [v.shape for v in views] == [((n,) if w == 1 else (n, w)) for w, n in fast._WORK_LAYOUT]
    assert [int(v.flat[-1]) for v in views] == list(range(1, len(views) + 1))
    assert int(np.count_nonzero(work)) == len(views)


# ------------------------------------------------------------------ declarations (I5)


def declarable_fourteen(rng: random.Random) -> list[int]:
    """A pure run, a second run (a joker in it now and then), sets or runs to 13 cards, then one
    card more; now and then one card swapped for a random one (a near miss)."""
    cards: list[int] = []
    suit, start = rng.randrange(4), rng.randrange(11)
    cards += [suit * 13 + start + k for k in range(3 + rng.randrange(2))]
    suit, start = rng.randrange(4), rng.randrange(10)
    run = [suit * 13 + start + k for k in range(3 + rng.randrange(2))]
    if rng.random() < 0.5:
        run[rng.randrange(1, len(run))] = JOKER
    cards += run
    while len(cards) < 13:
        if rng.random() < 0.5:
            rank = rng.randrange(13)
            cards += [s * 13 + rank for s in rng.sample(range(4), 3)]
        else:
            suit, start = rng.randrange(4), rng.randrange(11)
            cards += [suit * 13 + start + k for k in range(3)]
    cards = cards[:13] + [rng.randrange(53)]
    if rng.random() < 0.3:
        cards[rng.randrange(14)] = rng.randrange(53)
    counts = to_counts(cards)
    for c in range(52):  # two decks: at most two copies of a card
        counts[c] = min(counts[c], 2)
    return counts


def test_I5_declare_discards_compiled_match_python():
    """The compiled last step of ``declare_discards`` (penalty 0 after the discard) against the
    Python search, on hands built to declare, near misses, structured and random 14-card hands."""
    rng = random.Random("declare")
    declaring = 0
    for i in range(1500):
        wild = rng.choice([None, None, rng.randrange(13)])
        if i % 3 == 0:
            counts, _ = structured_hand(rng, "indian", 14, wild=False)
        elif i % 5 == 1:
            counts = deal(rng, TWO_DECKS, 14, 2)
        else:
            counts = declarable_fourteen(rng)
        with search(False):
            want = solver.declare_discards(counts, wild)
        with search(True):
            got = solver.declare_discards(counts, wild)
        assert got == want, f"declare_discards of {counts} (wild {wild}): compiled {got} != python {want}"
        declaring += bool(want)
    assert declaring > 300  # the hands do exercise declarations
