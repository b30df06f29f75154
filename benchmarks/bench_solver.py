"""Solver speed: hands per second of the exact solver, one core, CPU time.

Three kinds of hands (each case's name says which):

* **random**: cards dealt at random from the game's decks. Most random 13-card Indian hands hold
  no pure run, so the quick answer (I5: no lives, pay everything) settles them;
* **structured** (``*_structured``): hands dealt like mid-game hands (``structured_hand``): a
  pure run, a run of four or five with one card missing, two cards in a row, pairs and sets of
  a rank, jokers, a wild-rank card in the wild case, then random cards to the hand's size.
  Nearly every one needs the full search;
* **played** (``*_played``, with ``--played``): the hand of the seat to act at each decision of
  rule-agent self-play (``rummy_env.vector.VectorGame``, numba backend, 2 players), as the
  trainer's shaping potential sees them; Indian: the 13-card hands of the draw decisions.
  The hands of one run are drawn from a pool of ``--played-hands`` decisions, so consecutive
  hands share suits as in play, and each suit is met many times: a warm-cache figure.

Cases (``--cases`` picks some):

* ``indian_penalty``: ``solver.indian_penalty``, 13 cards from two decks and two printed jokers
  (106 cards), no wild rank; ``indian_penalty_wild``: with a random wild rank (I2);
* ``declare_discards``: 14 cards, the same decks (the engine asks this at every Indian discard);
  ``declare_discards_wild``: with a random wild rank; ``declare_discards_structured``: 14
  structured cards (most pass the quick tests and need the search);
* ``min_deadwood_basic``: 10 cards from one deck; ``min_deadwood_romi``: 13 cards from 106;
* ``hand_penalty_text``: the public ``rules.hand_penalty("indian", text)``, parsing included (13
  cards in G2 notation); ``hand_penalty_array``: the same hands as int64 count arrays;
  ``hand_penalty_structured``: structured hands as float32 count arrays (an observation's plane);
* ``hand_penalties_<game>_structured_<N>`` (with ``--batch N,...``): ``solver.hand_penalties``
  on batches of N structured hands of each game (``indian_wild``: a random wild rank per hand),
  counting every hand of a batch; ``hand_penalties_<game>_played_<N>`` with ``--played`` too.

The solver's compiled search is used unless ``--python`` (``solver.use_compiled(False)``); with
``--compare`` both are timed in the same run and the ratio is printed.

The solver memoises suit profiles across hands, so a long training run gets faster as it goes:
each figure is the median of ``--runs`` runs of about ``--seconds`` CPU seconds, each on freshly
dealt hands from its own seed, taken after a warm-up of ``--warmup`` CPU seconds (default: as
long as one run) on hands from another seed; ``indian_penalty_cold`` is the first random hands
of a fresh process, before any warm-up. Dealing is not timed. Time is CPU time of this process
(``time.process_time``), so other work on the machine counts against it only through shared
caches.

    python benchmarks/bench_solver.py --seconds 1 --runs 5 --compare
    python benchmarks/bench_solver.py --cases indian_penalty_structured,hand_penalty_structured --batch 64,1024
    python benchmarks/bench_solver.py --played --cases indian_penalty_played,min_deadwood_romi_played
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rummy_env.ruleset import make_ruleset
from rummy_env import rules, solver
from rummy_env.cards import JOKER, NUM_RANKS, NUM_TYPES, format_cards, from_counts, to_counts

TWO_DECKS = [c for c in range(52) for _ in range(2)] + [JOKER, JOKER]
ONE_DECK = list(range(52))
DECKS = {"indian": TWO_DECKS, "basic": ONE_DECK, "romi": TWO_DECKS}
HAND_SIZES = {"indian": 13, "basic": 10, "romi": 13}
"""Cards dealt to each of 2 players (I1, B1, R1)."""

Hand = tuple  # (53 counts, wild rank or None)


# ------------------------------------------------------------------ dealing


def random_hand(rng: random.Random, deck: list[int], size: int, wild: bool) -> Hand:
    return to_counts(rng.sample(deck, size)), (rng.randrange(NUM_RANKS) if wild else None)


def structured_hand(rng: random.Random, game: str, size: int, wild: bool = False) -> Hand:
    """A hand dealt like a mid-game hand of ``game``: pieces of melds, then random cards.

    Pieces, each with its chance: a pure run of 3 or 4 (80%); a run of 4 or 5 with one inner card
    missing (70%); two cards in a row of one suit (40%); one to three groups of one rank in two
    or three suits (pairs and sets); 0 to 2 printed jokers (Indian and römi); with ``wild``, a
    random wild rank (I2) and one of its cards (50%). The pieces go into the hand in random
    order until it is full (a piece may be cut), and random cards of the deck fill the rest.
    Runs start anywhere a run of that length fits, the ace low, or high where the game allows.
    """
    deck = DECKS[game]
    left = to_counts(deck)
    counts = [0] * NUM_TYPES
    held = 0
    high = game != "basic"  # the ace may end a run high (I3, R3; not B2)
    wild_rank = rng.randrange(NUM_RANKS) if wild else None

    def run(length: int) -> list[int]:
        suit = rng.randrange(4)
        start = rng.randrange(NUM_RANKS - length + 1 + high)  # a start at 13 - length + 1 ends on the ace
        return [suit * NUM_RANKS + p % NUM_RANKS for p in range(start, start + length)]

    pieces = []
    if rng.random() < 0.8:
        pieces.append(run(rng.choice((3, 3, 4))))
    if rng.random() < 0.7:
        gapped = run(rng.choice((4, 5)))
        del gapped[rng.randrange(1, len(gapped) - 1)]
        pieces.append(gapped)
    if rng.random() < 0.4:
        pieces.append(run(2))
    for _ in range(rng.choice((1, 1, 2, 3))):
        rank = rng.randrange(NUM_RANKS)
        pieces.append([s * NUM_RANKS + rank for s in rng.sample(range(4), rng.choice((2, 2, 3)))])
    if left[JOKER]:
        pieces.append([JOKER] * rng.choice((0, 0, 1, 1, 2)))
    if wild_rank is not None and rng.random() < 0.5:
        pieces.append([rng.randrange(4) * NUM_RANKS + wild_rank])
    rng.shuffle(pieces)
    for card in [c for piece in pieces for c in piece]:
        if held < size and left[card]:
            left[card] -= 1
            counts[card] += 1
            held += 1
    rest = [c for c in range(NUM_TYPES) for _ in range(left[c])]
    for card in rng.sample(rest, size - held):
        counts[card] += 1
    return counts, wild_rank


_PLAYED: dict[tuple[str, int, int], list[Hand]] = {}


def played_hands(game: str, count: int, seed: int = 0, wild: bool = False) -> list[Hand]:
    """``count`` hands of the seat to act in rule-agent self-play (2 players, numba backend).

    Indian: the 13 cards held at each draw decision (the hand the trainer's potential scores at
    the start of a turn); Basic and römi: the hand at every decision. ``wild``: Indian with the
    wild joker on (I2), each hand with its deal's wild rank. Memoised per (game, count, seed).
    """
    key = (game + "_wild" * wild, count, seed)
    if key in _PLAYED:
        return _PLAYED[key]
    from agents.registry import make_agent
    from rummy_env.encoding import layout_for
    from rummy_env.vector import VectorGame

    options = {"wild_joker": True} if wild else {}
    envs = VectorGame(game, num_envs=64, num_players=2, seed=seed, backend="numba", **options)
    agent = make_agent("rule", make_ruleset(game, 2, **options), seed=seed)
    parts = layout_for(envs.rules).slices
    hand, wild_plane, phase = parts["hand"], parts["wild_card"] if wild else None, parts["phase"].start
    observations, masks, _ = envs.reset(seed=seed)
    out: list[Hand] = []
    while len(out) < count:
        for row in observations:
            counts = np.rint(row[hand]).astype(np.int64)
            if game == "indian" and (row[phase] < 0.5 or counts.sum() != 13):
                continue  # Indian: the draw decisions only
            wild_rank = None
            if wild:
                card = int(np.flatnonzero(row[wild_plane])[0])
                wild_rank = 0 if card == JOKER else card % NUM_RANKS  # a printed joker face up: aces are wild
            out.append((counts.tolist(), wild_rank))
        observations, masks, *_ = envs.step(agent.act_batch(observations, masks))
    _PLAYED[key] = out = out[:count]
    return out


# ------------------------------------------------------------------ cases


@dataclass(frozen=True)
class Case:
    """One benchmark case: how a hand is dealt, handed over and solved."""

    solve: Callable
    """Called with what ``prepare`` makes of a list of hands, once per item."""
    deal: Callable[[random.Random], Hand]
    prepare: Callable[[list[Hand]], list] = lambda hands: hands
    batch: int = 0
    """Hands per call to ``solve`` (0: one)."""


def _indian(size: int = 13, wild: bool = False):
    return lambda rng: random_hand(rng, TWO_DECKS, size, wild)


def _structured(game: str, wild: bool = False, size: int | None = None):
    return lambda rng: structured_hand(rng, game, size or HAND_SIZES[game], wild)


def _played(game: str, wild: bool = False):
    def deal(rng: random.Random) -> Hand:
        return rng.choice(played_hands(game, POOL_SIZE[0], 0, wild))
    return deal


POOL_SIZE = [20_000]
"""Decisions per played pool (``--played-hands``)."""


def _penalty(hand, wild):
    return solver.indian_penalty(hand, wild)


def _deadwood(game: str):
    return lambda hand, wild: solver.min_deadwood(hand, game)


def _arrays(dtype):
    return lambda hands: [(np.asarray(counts, dtype), wild) for counts, wild in hands]


def _batched(size: int):
    """Hands packed ``size`` a batch: (counts (size, 53) uint8, wild ranks or None)."""
    def prepare(hands: list[Hand]) -> list:
        out = []
        for i in range(0, len(hands) - size + 1, size):
            part = hands[i:i + size]
            counts = np.array([c for c, _ in part], np.uint8)
            wilds = None if part[0][1] is None else np.array([w for _, w in part], np.int64)
            out.append((counts, wilds))
        return out
    return prepare


CASES: dict[str, Case] = {
    "indian_penalty": Case(_penalty, _indian()),
    "indian_penalty_wild": Case(_penalty, _indian(wild=True)),
    "indian_penalty_structured": Case(_penalty, _structured("indian")),
    "indian_penalty_structured_wild": Case(_penalty, _structured("indian", wild=True)),
    "declare_discards": Case(solver.declare_discards, _indian(14)),
    "declare_discards_wild": Case(solver.declare_discards, _indian(14, wild=True)),
    "declare_discards_structured": Case(solver.declare_discards, _structured("indian", size=14)),
    "min_deadwood_basic": Case(_deadwood("basic"), lambda rng: random_hand(rng, ONE_DECK, 10, False)),
    "min_deadwood_basic_structured": Case(_deadwood("basic"), _structured("basic")),
    "min_deadwood_romi": Case(_deadwood("romi"), _indian()),
    "min_deadwood_romi_structured": Case(_deadwood("romi"), _structured("romi")),
    "hand_penalty_text": Case(lambda text, wild: rules.hand_penalty("indian", text), _indian(),
                              lambda hands: [(format_cards(from_counts(c)), w) for c, w in hands]),
    "hand_penalty_array": Case(lambda counts, wild: rules.hand_penalty("indian", counts), _indian(),
                               _arrays(np.int64)),
    "hand_penalty_structured": Case(lambda counts, wild: rules.hand_penalty("indian", counts),
                                    _structured("indian"), _arrays(np.float32)),
}
PLAYED_CASES: dict[str, Case] = {
    "indian_penalty_played": Case(_penalty, _played("indian")),
    "indian_penalty_played_wild": Case(_penalty, _played("indian", wild=True)),
    "min_deadwood_basic_played": Case(_deadwood("basic"), _played("basic")),
    "min_deadwood_romi_played": Case(_deadwood("romi"), _played("romi")),
}
BATCH_GAMES = {"indian": "indian", "indian_wild": "indian", "basic": "basic", "romi": "romi"}


def batch_cases(sizes: list[int], played: bool = False) -> dict[str, Case]:
    """``solver.hand_penalties`` on batches of each size, every game, structured (and played) hands."""
    out = {}
    for size in sizes:
        for name, game in BATCH_GAMES.items():
            wild = name.endswith("_wild")

            def solve(counts, wilds, game=game):
                solver.hand_penalties(game, counts, wilds)

            out[f"hand_penalties_{name}_structured_{size}"] = Case(solve, _structured(game, wild), _batched(size), size)
            if played:
                out[f"hand_penalties_{name}_played_{size}"] = Case(solve, _played(game, wild), _batched(size), size)
    return out


# ------------------------------------------------------------------ timing


def hands_per_second(case: Case, seconds: float, seed: int) -> float:
    """Hands/s of one case on fresh hands from ``seed`` for about ``seconds`` of CPU time."""
    rng = random.Random(seed)
    done = 0
    spent = 0.0
    while spent < seconds:
        hands = [case.deal(rng) for _ in range(max(500, case.batch))]
        calls = case.prepare(hands)
        start = time.process_time()
        for args in calls:
            case.solve(*args)
        spent += time.process_time() - start
        done += len(calls) * case.batch if case.batch else len(calls)
    return done / spent


def warm_up(case: Case, seconds: float, seed: int = 20_000) -> None:
    """Solve hands of one case from ``seed`` for about ``seconds`` of CPU time, filling the caches."""
    if seconds > 0:
        hands_per_second(case, seconds, seed)


def solver_figures(seconds: float = 1.0, runs: int = 5, warmup: float | None = None,
                   cases: dict[str, Case] | None = None) -> dict[str, float]:
    """Hands/s per case (median of ``runs`` runs of about ``seconds`` each), plus the cold start.

    Each case is first warmed up for ``warmup`` CPU seconds (default ``seconds``).
    """
    warmup = seconds if warmup is None else warmup
    cases = CASES if cases is None else cases
    out = {}
    solver.clear_caches()
    out["indian_penalty_cold"] = hands_per_second(CASES["indian_penalty"], min(seconds, 0.5), seed=10_000)
    for name, case in cases.items():
        warm_up(case, warmup)
        out[name] = statistics.median(hands_per_second(case, seconds, seed=r) for r in range(runs))
    return out


def compare_figures(seconds: float, runs: int, warmup: float | None,
                    cases: dict[str, Case] | None = None) -> dict[str, tuple[float, float]]:
    """{case: (compiled hands/s, Python hands/s)}, both timed in this run."""
    before = solver.use_compiled(True)
    try:
        fast = solver_figures(seconds, runs, warmup, cases)
        solver.use_compiled(False)
        slow = solver_figures(seconds, runs, warmup, cases)
    finally:
        solver.use_compiled(before)
    return {name: (fast[name], slow[name]) for name in fast}


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--batch {text!r}: expected sizes like 64,256,1024") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"--batch {text!r}: every size is at least 1")
    return sizes


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds of one timed run per case (default 1)")
    parser.add_argument("--runs", type=int, default=5, help="runs per case; the median is printed (default 5)")
    parser.add_argument("--warmup", type=float, default=None,
                        help="CPU seconds of solving before timing each case (default: --seconds)")
    parser.add_argument("--python", action="store_true", help="time the Python search (the reference)")
    parser.add_argument("--compare", action="store_true", help="time the compiled and the Python search")
    parser.add_argument("--played", action="store_true",
                        help="add the cases on hands from rule-agent self-play (plays them first: seconds)")
    parser.add_argument("--played-hands", type=int, default=POOL_SIZE[0],
                        help=f"decisions per game in the played pool (default {POOL_SIZE[0]:,})")
    parser.add_argument("--batch", type=_sizes, default=[], metavar="N,...",
                        help="add solver.hand_penalties on batches of these sizes, e.g. 64,256,1024")
    parser.add_argument("--cases", default=None, metavar="NAME,...", help="only these cases (default: all)")
    args = parser.parse_args(argv)
    if not args.seconds > 0 or args.runs < 1 or (args.warmup is not None and args.warmup < 0):
        parser.error("--seconds must be > 0, --runs >= 1 and --warmup >= 0")
    if args.played_hands < 1:
        parser.error("--played-hands must be >= 1")
    POOL_SIZE[0] = args.played_hands
    known = dict(CASES)
    if args.played:
        known |= PLAYED_CASES
    known |= batch_cases(args.batch, args.played)
    if args.cases is not None:
        names = [n for n in args.cases.split(",") if n]
        unknown = [n for n in names if n not in known]
        if unknown or not names:
            parser.error(f"--cases: unknown case {unknown[0] if unknown else '(none)'!r}; "
                         f"known here: {', '.join(known)} (played cases need --played, batch cases --batch)")
        known = {n: known[n] for n in names}
    if args.compare:
        both = compare_figures(args.seconds, args.runs, args.warmup, known)
        width = max(map(len, both)) + 2
        print(f"{'case':<{width}}{'compiled/s':>12}{'python/s':>12}{'ratio':>8}")
        for name, (fast, slow) in both.items():
            print(f"{name:<{width}}{fast:>12,.0f}{slow:>12,.0f}{fast / slow:>8.2f}")
        return
    solver.use_compiled(not args.python)
    figures = solver_figures(args.seconds, args.runs, args.warmup, known)
    width = max(map(len, figures)) + 2
    print(f"{'case':<{width}}{'hands/s':>12}")
    for name, rate in figures.items():
        print(f"{name:<{width}}{rate:>12,.0f}")


if __name__ == "__main__":
    main()
