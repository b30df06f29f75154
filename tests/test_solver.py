"""The exact solver against a brute force, and scenario tests named after rule ids.

The reference (``brute_force``) knows nothing of the solver: it enumerates every partition of a
hand into melds and deadwood, checking each meld with ``melds.is_meld_cards`` (the plain
statement of G3–G5, I2, I3, B2, R3) and telling runs from sets with ``melds.classify``.
Its only pruning: a meld holding a natural card ``c`` (not wild) holds only cards of ``c``'s rank
(then it is a set) or of ``c``'s suit (then a run), plus jokers and wild cards.
"""

from __future__ import annotations

import itertools
import random
from functools import cache

import pytest

from rummy_env import solver
from rummy_env.cards import JOKER, format_cards, from_counts, parse_cards, rank_of, suit_of, to_counts
from rummy_env.games import game_spec
from rummy_env.melds import RUN, classify, is_meld_cards

# Lives classes as (has a pure run, runs counted up to two); both lives is (1, 2).
LIVES = (1, 2)


def hand(text: str) -> list[int]:
    return to_counts(parse_cards(text))


def values_of(game: str, wild: int | None) -> list[int]:
    values = list(game_spec(game).values)
    if wild is not None:
        for s in range(4):
            values[s * 13 + wild] = 0
    return values


def meld_kind(cards: list[int], game: str, wild: int | None) -> tuple[int, int]:
    """(can be a pure run, can be a run) of a valid meld, over every role of its wild cards."""
    rules = game_spec(game).melds
    fixed = [c for c in cards if c != JOKER and (wild is None or rank_of(c) != wild)]
    wilds = [c for c in cards if c != JOKER and wild is not None and rank_of(c) == wild]
    printed = len(cards) - len(fixed) - len(wilds)
    run = pure = 0
    for as_joker in itertools.product((False, True), repeat=len(wilds)):
        naturals = fixed + [c for c, j in zip(wilds, as_joker) if not j]
        jokers = printed + sum(as_joker)
        kind = classify(naturals, jokers, rules)
        # one natural and jokers: classify calls it a set, but the same cards make a run too
        if kind == RUN or (kind is not None and len(naturals) == 1):
            run = 1
            pure |= jokers == 0
    return pure, run


@cache
def meld_info(cards: tuple, game: str, wild: int | None) -> tuple[int, int] | None:
    """``meld_kind`` of the cards if ``is_meld_cards`` says they are a meld, else None."""
    if not is_meld_cards(list(cards), game_spec(game).melds, wild):
        return None
    return meld_kind(list(cards), game, wild)


def brute_force(counts: list[int], game: str, wild: int | None = None) -> dict:
    """Every lives class an arrangement can reach -> (least deadwood value, fewest deadwood cards)."""
    values = values_of(game, wild)
    capable = [t == JOKER or (wild is not None and t < 52 and rank_of(t) == wild) for t in range(53)]
    order = [t for t in range(53) if not capable[t]] + [t for t in range(53) if capable[t]]

    @cache
    def best(rest: tuple) -> dict:
        c = next((t for t in order if rest[t]), None)
        if c is None:
            return {(0, 0): (0, 0)}
        out: dict = {}

        def put(cls, value, count):
            old = out.get(cls)
            out[cls] = (value, count) if old is None else (min(old[0], value), min(old[1], count))

        after = list(rest)
        after[c] -= 1
        for cls, (value, count) in best(tuple(after)).items():  # c is deadwood
            put(cls, value + values[c], count + 1)
        if capable[c]:  # only joker-capable cards are left
            groups = [([t for t in range(53) if after[t]], 12)]
        else:
            jokers = [t for t in range(53) if after[t] and capable[t]]
            same_rank = [t for t in range(52) if after[t] and not capable[t] and rank_of(t) == rank_of(c) and t != c]
            same_suit = [t for t in range(52) if after[t] and not capable[t] and suit_of(t) == suit_of(c) and t != c]
            groups = [(same_rank + jokers, 3), (same_suit + jokers, 12)]  # a set holds 4 cards, a run 13
        seen = set()
        for group, most in groups:
            for extra in submultisets(group, after, most):
                if len(extra) < 2:
                    continue
                key = tuple(sorted([c] + extra))
                if key in seen:
                    continue
                seen.add(key)
                kind = meld_info(key, game, wild)
                if kind is None:
                    continue
                left = list(after)
                for t in extra:
                    left[t] -= 1
                for (p, r), (value, count) in best(tuple(left)).items():
                    put((min(1, p + kind[0]), min(2, r + kind[1])), value, count)
        return out

    return best(tuple(counts))


def submultisets(types: list[int], counts, most: int):
    """Every multiset of at most ``most`` cards drawn from ``types`` (with ``counts`` copies)."""
    if not types:
        yield []
        return
    first, rest = types[0], types[1:]
    for k in range(min(counts[first], most) + 1):
        for tail in submultisets(rest, counts, most - k):
            yield [first] * k + tail


def bf_penalty(counts, game, wild=None) -> int:
    found = brute_force(counts, game, wild)
    if game == "indian":
        total = sum(v * n for v, n in zip(values_of(game, wild), counts))
        return min(total, found.get(LIVES, (total, 0))[0])
    return min(v for v, _ in found.values())


def bf_declare(counts, wild=None) -> bool:
    return brute_force(counts, "indian", wild).get(LIVES, (0, 1))[1] == 0


# ---------------------------------------------------------------------------------------------
# Random hands


def two_decks(jokers: int) -> list[int]:
    return [c for c in range(52) for _ in range(2)] + [JOKER] * jokers


def meld_rich(rng: random.Random, size: int, game: str) -> list[int]:
    """A hand built from runs, sets, jokers and stray cards, so lives and declarations occur."""
    cards: list[int] = []
    top = 12 if game == "basic" else 13
    while len(cards) < size:
        k = rng.random()
        suit, rank = rng.randrange(4), rng.randrange(13)
        if k < 0.4:
            cards += [suit * 13 + (rank + i) % 13 for i in range(rng.randint(3, 6)) if rank + i <= top]
        elif k < 0.6:
            cards += [s * 13 + rank for s in rng.sample(range(4), rng.randint(2, 4))]
        elif k < 0.75 and game != "basic":
            cards.append(JOKER)
        else:
            cards.append(rng.randrange(52))
    counts = to_counts(cards[:size])
    copies = 1 if game == "basic" else 2
    for t in range(52):
        counts[t] = min(counts[t], copies)
    if game == "romi":
        counts[JOKER] = min(counts[JOKER], 2)
    return counts


def random_hand(rng: random.Random, size: int, game: str) -> list[int]:
    if rng.random() < 0.5:
        return meld_rich(rng, size, game)
    deck = list(range(52)) if game == "basic" else two_decks(rng.randint(0, 3) if game == "indian" else 2)
    return to_counts(rng.sample(deck, size))


def check_arrangement(counts, game, wild, arrangement) -> None:
    """The melds are melds, and melds plus deadwood are exactly the hand."""
    seen = [0] * 53
    for meld in arrangement.melds:
        assert is_meld_cards(list(meld), game_spec(game).melds, wild), format_cards(meld)
        for t in meld:
            seen[t] += 1
    for t in arrangement.deadwood:
        seen[t] += 1
    assert seen == list(counts)
    assert arrangement.penalty == sum(values_of(game, wild)[t] for t in arrangement.deadwood)


@pytest.mark.parametrize("game", ["indian", "basic", "romi"])
def test_random_hands_match_brute_force(game):
    rng = random.Random({"indian": 1, "basic": 2, "romi": 3}[game])
    count = {"indian": 700, "basic": 350, "romi": 450}[game]
    for _ in range(count):
        wild = rng.choice([None, None, rng.randrange(13)]) if game == "indian" else None
        counts = random_hand(rng, rng.randint(3, 14), game)
        found = brute_force(counts, game, wild)
        shown = f"{format_cards(from_counts(counts))} wild={wild}"
        arrangement = solver.best_arrangement(counts, game, wild)
        check_arrangement(counts, game, wild, arrangement)
        free = min(v for v, _ in found.values())
        assert solver.min_deadwood(counts, game, wild) == free, shown
        if game == "indian":
            loose = solver.best_arrangement(counts, game, wild, lives=False)
            check_arrangement(counts, game, wild, loose)
            assert loose.penalty == free, shown
        if game == "indian":
            total = sum(v * n for v, n in zip(values_of(game, wild), counts))
            penalty = min(total, found.get(LIVES, (total, 0))[0])
            assert solver.indian_penalty(counts, wild) == penalty, shown
            assert arrangement.penalty == penalty, shown
            declares = found.get(LIVES, (0, 1))[1] == 0
            assert solver.can_declare(counts, wild) == declares, shown
        else:
            assert arrangement.penalty == free, shown


def test_I5_random_13_card_declarations_match_brute_force():
    rng = random.Random(4)
    declared = 0
    for _ in range(300):
        wild = rng.choice([None, rng.randrange(13)])
        counts = meld_rich(rng, 13, "indian")
        expected = bf_declare(counts, wild)
        declared += expected
        assert solver.can_declare(counts, wild) == expected, format_cards(from_counts(counts))
    assert declared > 40  # the hands do exercise declarations


def test_I5_declare_discards_match_brute_force():
    rng = random.Random(5)
    nonempty = 0
    for _ in range(22):
        wild = rng.choice([None, rng.randrange(13)])
        counts = meld_rich(rng, 14, "indian")
        expected = []
        for d in range(53):
            if counts[d]:
                counts[d] -= 1
                if bf_declare(counts, wild):
                    expected.append(d)
                counts[d] += 1
        nonempty += bool(expected)
        assert solver.declare_discards(counts, wild) == expected, format_cards(from_counts(counts))
    assert nonempty >= 5


def test_I5_declare_discards_match_can_declare():
    rng = random.Random(6)
    nonempty = 0
    for i in range(600):
        wild = rng.choice([None, rng.randrange(13)])
        counts = meld_rich(rng, 14, "indian") if i % 3 else to_counts(rng.sample(two_decks(2), 14))
        expected = []
        for d in range(53):
            if counts[d]:
                counts[d] -= 1
                if solver.can_declare(counts, wild):
                    expected.append(d)
                counts[d] += 1
        nonempty += bool(expected)
        assert solver.declare_discards(counts, wild) == expected, format_cards(from_counts(counts))
    assert nonempty > 100


def test_larger_hands_match_brute_force():
    # Hands beyond 16 cards, where a leftover joker may find no room (every run at 13, or only the
    # pure run left to take it), and hands of 15-18 cards in general.
    rng = random.Random(7)
    for _ in range(12):
        wild = rng.choice([None, rng.randrange(13)])
        counts = meld_rich(rng, rng.randint(15, 18), "indian")
        shown = format_cards(from_counts(counts))
        assert solver.can_declare(counts, wild) == bf_declare(counts, wild), shown
        assert solver.indian_penalty(counts, wild) == bf_penalty(counts, "indian", wild), shown
    for text, expected in [
        ("3h 4h 5h 9s" + " *" * 13, False),  # 9s and 12 jokers make 13; the last joker would spoil the pure run
        ("3h 4h 5h 9s" + " *" * 12, True),
        ("3h 4h 5h 9s 9d" + " *" * 13, True),  # 9s 9d * * is a set: room for two more jokers
        ("3h 4h 5h 6h 7h 9s" + " *" * 12, True),  # 3-4-5 stays pure, 6h 7h * … takes jokers
    ]:
        counts = hand(text)
        assert bf_declare(counts) == expected, text
        assert solver.can_declare(counts) == expected, text


# ---------------------------------------------------------------------------------------------
# Scenarios


def test_I5_declare_needs_pure_run():
    #   4h 5h *   9s * Js   7c 7d 7s   Kc Kd Kh Ks
    #   two runs, both with a joker; two sets: everything melds, but no pure run
    no_pure = hand("4h 5h * 9s * Js 7c 7d 7s Kc Kd Kh Ks")
    assert bf_declare(no_pure) is False
    assert solver.can_declare(no_pure) is False
    #   4h 5h 6h   9s * Js   7c 7d 7s   Kc Kd Kh Ks      (pure run, second life, sets)
    with_pure = hand("4h 5h 6h 9s * Js 7c 7d 7s Kc Kd Kh Ks")
    assert solver.can_declare(with_pure) is True


def test_I5_declare_needs_second_run():
    #   4h 5h 6h       pure run (first life)
    #   7c 7d 7s  Kc Kd Kh  2c 2d 2s 2h   sets only: no second life
    only_sets = hand("4h 5h 6h 7c 7d 7s Kc Kd Kh 2c 2d 2s 2h")
    assert solver.can_declare(only_sets) is False
    #   the same with 2c 2d 2s 2h split off as a run of clubs
    second_run = hand("4h 5h 6h 7c 7d 7s Kc Kd Kh 2c 3c 4c 5c")
    assert solver.can_declare(second_run) is True


def test_I5_set_of_kings_is_no_run():
    #   Qh Kh Ah (pure run)  Ks Kd Kc (set, not a second run)  …  the rest deadwood
    counts = hand("Qh Kh Ah Ks Kd Kc 2s 5d 8c 9h 3c 6s Td")
    total = sum(values_of("indian", None)[t] * n for t, n in enumerate(counts))
    assert solver.indian_penalty(counts) == total


def test_I5_leftover_joker_joins_the_second_run():
    #   2s 3s 4s (pure)  6h 7h 8h  9d 9c 9h  Jc Qc Kc  + a joker with nowhere else to go
    counts = hand("2s 3s 4s 6h 7h 8h 9d 9c 9h Jc Qc Kc *")
    assert bf_declare(counts) and solver.can_declare(counts)


def test_I5_declare_discards_only_what_cannot_meld():
    #   2s 3s 4s   6h 7h 8h   9d 9c 9h   Jc Qc Kc   + 5d: a lone card, no joker to help it
    assert not solver.can_declare(hand("2s 3s 4s 6h 7h 8h 9d 9c 9h Jc Qc Kc 5d"))
    #   … + 5d 5d: one 5d always stays behind
    assert solver.declare_discards(hand("2s 3s 4s 6h 7h 8h 9d 9c 9h Jc Qc Kc 5d 5d")) == []
    #   … + 5d Ks: two lone cards, one discard
    assert solver.declare_discards(hand("2s 3s 4s 6h 7h 8h 9d 9c 9h Jc Qc Kc 5d Ks")) == []
    #   … + Ac 5d: Jc Qc Kc Ac is a run (ace high), so discarding 5d declares, and only that
    fourteen = hand("2s 3s 4s 6h 7h 8h 9d 9c 9h Jc Qc Kc Ac 5d")
    assert solver.declare_discards(fourteen) == parse_cards("5d")
    #   … + 5d * : 5d would need two jokers, so it goes; the joker joins a run
    fourteen = hand("2s 3s 4s 6h 7h 8h 9d 9c 9h Jc Qc Kc 5d *")
    assert solver.declare_discards(fourteen) == parse_cards("5d")


def test_I7_no_second_life_pays_all_cards():
    #   5s 6s 7s is a pure run, and nothing else makes a run: every card pays, the run too
    #   2h 5h 9h   Kd 8d Ad 4d   Qc 3c Jc
    counts = hand("5s 6s 7s 2h 9h Kd Qc 3c 8d Ad 5h Jc 4d")
    total = sum(values_of("indian", None)[t] * n for t, n in enumerate(counts))
    assert solver.indian_penalty(counts) == total == bf_penalty(counts, "indian")
    arrangement = solver.best_arrangement(counts, "indian")
    assert arrangement.melds == () and arrangement.penalty == total


def test_I7_both_lives_pay_deadwood_only():
    #   5s 6s 7s pure;  * Kd Ad (the joker as Qd, ace high) second life
    #   deadwood 2h 4h Qc 8d Jh 9c 9d = 2 + 4 + 10 + 8 + 10 + 9 + 9 = 52
    #   (2h * 4h would be a second life too, but it leaves Kd and Ad: 66)
    counts = hand("5s 6s 7s 2h * 4h Kd Qc 8d Ad Jh 9c 9d")
    assert solver.indian_penalty(counts) == 52 == bf_penalty(counts, "indian")
    assert solver.best_arrangement(counts, "indian").penalty == 52


def test_I7_jokers_and_wild_cards_pay_nothing():
    #   wild rank 9:  5s 6s 7s   2h 3h 4h   9c 9d Kd (both nines as jokers)
    counts = hand("5s 6s 7s 2h 3h 4h 9c 9d Kd")
    assert solver.indian_penalty(counts, wild_rank=8) == 0
    assert solver.indian_penalty(counts) == 28  # without the wild rank: 9 + 9 + 10
    #   no lives: all cards pay, the wild nine and the joker nothing
    assert solver.indian_penalty(hand("2h 9h *"), wild_rank=8) == 2
    assert solver.indian_penalty(hand("2h 9h *")) == 11


def test_I2_wild_card_as_itself_in_pure_run():
    #   wild rank 5: 4h 5h 6h is pure with 5h as itself; 9c * Jc is the second life
    counts = hand("4h 5h 6h 9c * Jc")
    assert solver.can_declare(counts, wild_rank=4)
    #   without 5h as itself there is no pure run: 4h 6h + joker and 9c + joker + Jc
    arrangement = solver.best_arrangement(counts, "indian", wild_rank=4)
    assert arrangement.penalty == 0 and len(arrangement.melds) == 2
    assert solver.can_declare(hand("4h 5s 6h 9c * Jc"), wild_rank=4) is False


def test_I2_wild_card_as_joker():
    #   wild rank 2: 2d stands for 6h in 5h 2d 7h; 9s Ts Js is pure
    counts = hand("5h 2d 7h 9s Ts Js")
    assert solver.can_declare(counts, wild_rank=1)
    assert not solver.can_declare(counts)
    #   two wild 2s: one in a pure run as itself (As 2s 3s), one as a joker
    counts = hand("As 2s 3s 2s 8d 9d")
    assert solver.can_declare(counts, wild_rank=1)
    assert bf_declare(counts, 1)


def test_I3_ace_high_and_low_runs():
    #   Qh Kh Ah and Ah 2h 3h are both pure runs in Indian (two aces: one each)
    counts = hand("Qh Kh Ah Ah 2h 3h")
    assert solver.can_declare(counts)
    #   one ace cannot stand at both ends
    assert not solver.can_declare(hand("Qh Kh Ah 2h 3h"))


def test_G4_no_wrap_around():
    #   K-A-2 is not a run: all three are deadwood in basic and römi
    for game in ("basic", "romi"):
        counts = hand("Kh Ah 2h")
        assert solver.min_deadwood(counts, game) == sum(values_of(game, None)[t] for t in parse_cards("Kh Ah 2h"))


def test_B2_ace_low_only():
    #   basic: Qh Kh Ah is no run (Q 10 + K 10 + A 1); Ah 2h 3h is
    assert solver.min_deadwood(hand("Qh Kh Ah"), "basic") == 21
    assert solver.min_deadwood(hand("Ah 2h 3h"), "basic") == 0
    assert solver.min_deadwood(hand("Qh Kh Ah"), "romi") == 0


def test_R3_at_most_two_jokers_per_meld():
    #   2h … 6h with three jokers: one run in Indian; in römi at most two jokers a meld,
    #   so the best is 6h * * with 2h (2 points) left over
    counts = hand("2h 6h * * *")
    assert solver.min_deadwood(counts, "indian") == 0
    assert solver.min_deadwood(counts, "romi") == 2 == bf_penalty(counts, "romi")


def test_G3_identical_cards_never_in_one_set():
    #   7h 7h 7s: not a set; 7h 7s 7d is, leaving the second 7h
    assert solver.min_deadwood(hand("7h 7h 7s"), "romi") == 21
    assert solver.min_deadwood(hand("7h 7h 7s 7d"), "romi") == 7


def test_G4_identical_cards_in_two_runs():
    #   5h 6h 7h and 7h 8h 9h: the two 7h stand in two runs
    counts = hand("5h 6h 7h 7h 8h 9h")
    assert solver.min_deadwood(counts, "romi") == 0
    assert solver.can_declare(counts)


def test_G5_meld_needs_a_natural_card():
    #   5s 6s 7s   * * *: the jokers alone are no second run, so no lives: all 18 points pay
    counts = hand("5s 6s 7s * * *")
    assert solver.indian_penalty(counts) == 18 == bf_penalty(counts, "indian")
    assert not solver.can_declare(counts)
    #   with 9h they make a second run: 9h * * *
    assert solver.indian_penalty(hand("5s 6s 7s 9h * * *")) == 0


def test_I3_jokers_fill_sets_and_long_runs():
    #   Ac * * … * Kc: thirteen cards, one run with eleven jokers, and 2d 3d 4d pure
    counts = hand("Ac" + " *" * 11 + " Kc 2d 3d 4d")
    assert bf_declare(counts) and solver.can_declare(counts)
    #   9d 9h * is a set
    assert solver.min_deadwood(hand("9d 9h *"), "romi") == 0


def test_arrangement_lays_runs_in_order():
    arrangement = solver.best_arrangement(hand("5h * 7h 9s Ts Js 4d 4c 4s Kd"), "indian")
    assert arrangement.penalty == 10
    assert sorted(map(len, arrangement.melds)) == [3, 3, 3]
    assert tuple(parse_cards("5h * 7h")) in arrangement.melds


def test_bad_counts_are_refused():
    with pytest.raises(ValueError):
        solver.indian_penalty([0] * 52)
    with pytest.raises(ValueError):
        solver.indian_penalty([3] + [0] * 52)
    with pytest.raises(ValueError):
        solver.min_deadwood(hand("Ah 2h 3h"), "gin")
    with pytest.raises(ValueError):
        solver.min_deadwood(hand("Ah 2h *"), "basic")
    with pytest.raises(ValueError):
        solver.min_deadwood(hand("Ah 2h 3h"), "romi", wild_rank=3)
