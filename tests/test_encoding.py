"""Action ids, masks and observations (`docs/env.md` "Actions" and "Observation"; `rummy_env/encoding.py`)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from rummy_env import encoding as E
from rummy_env.cards import JOKER, NUM_TYPES, parse_card, parse_cards, to_counts
from rummy_env.game import (
    DISCARD, DRAW, MELD, PHASE_DRAW, PLACE, PLACE_JOKER_LOW, TAKE_CUT, TAKE_DISCARD, GameState, IllegalMoveError,
)
from rummy_env.scenario import make_state
from rummy_env.table import template_index

SETUPS = [("indian", 2), ("indian", 4), ("basic", 2), ("basic", 3), ("romi", 2), ("romi", 3)]


def random_states(game: str, players: int, games: int, seed: int = 0, **options):
    """Every state of ``games`` uniformly random hands (the same object, advanced in place)."""
    rng = random.Random(seed)
    for g in range(games):
        state = GameState.new(game, players, seed=f"{seed}:{g}", **options)
        while not state.is_over:
            yield state
            moves = state.legal_moves()
            state.apply(moves[rng.randrange(len(moves))])
        yield state


# ----------------------------------------------------------------------------- action ids


@pytest.mark.parametrize("game, size", [("indian", 108), ("basic", 1285), ("romi", 2319)])
def test_action_space_sizes_match_the_documented_table(game, size):
    layout = E.action_layout(game)
    assert layout.num_actions == size == E.NUM_ACTIONS[game] == E.num_actions(game)
    ids = sorted(i for block in layout.blocks.values() for i in block)
    assert ids == list(range(size)), "blocks must tile the id range without gaps or overlaps"


def test_named_constants_agree_with_the_engine_tables():
    assert len(template_index(False, 0).templates) == E.BASIC_NUM_TEMPLATES
    assert len(template_index(True, 2).templates) == E.ROMI_NUM_TEMPLATES
    basic, romi, indian = E.action_layout("basic"), E.action_layout("romi"), E.action_layout("indian")
    assert basic.blocks["meld"].start == E.BASIC_MELD_BASE and basic.blocks["place"].start == E.BASIC_PLACE_BASE
    assert romi.blocks["take_cut"].start == E.ROMI_TAKE_CUT_ACTION
    assert romi.blocks["meld"].start == E.ROMI_MELD_BASE and romi.blocks["place"].start == E.ROMI_PLACE_BASE
    assert indian.blocks["declare"].start == E.INDIAN_DECLARE_BASE
    for layout in (basic, romi, indian):
        assert layout.move(E.DRAW_ACTION) == (DRAW, 0, 0)
        assert layout.move(E.TAKE_DISCARD_ACTION) == (TAKE_DISCARD, 0, 0)
        assert layout.move(E.DISCARD_BASE + 7) == (DISCARD, 7, 0)
    assert romi.move(E.ROMI_TAKE_CUT_ACTION) == (TAKE_CUT, 0, 0)
    assert basic.move(E.BASIC_MELD_BASE + 5) == (MELD, 5, 0)
    assert romi.move(E.ROMI_PLACE_BASE + 53 * 34 + JOKER) == (PLACE, JOKER, 34)


@pytest.mark.parametrize("game", ["indian", "basic", "romi"])
def test_ids_and_moves_are_one_to_one(game):
    layout = E.action_layout(game)
    assert len(set(layout.moves)) == layout.num_actions
    for action in range(layout.num_actions):
        assert layout.action(layout.move(action)) == action


@pytest.mark.parametrize("bad", [-1, 108, 10**6, 1.5, "3", None])
def test_an_action_out_of_range_is_an_error_naming_it(bad):
    with pytest.raises(E.EncodingError, match=repr(bad).replace("(", r"\(").replace(".", r"\.")):
        E.action_to_move("indian", bad)


def test_a_move_without_an_id_is_an_error_naming_it():
    with pytest.raises(E.EncodingError, match="basic"):
        E.move_to_action("basic", (4, 3, 0))  # DECLARE: Indian only
    with pytest.raises(E.EncodingError, match=r"\(6, 3, 17\)"):
        E.move_to_action("basic", (PLACE, 3, 17))  # slot 17 is past Basic's 17 slots
    with pytest.raises(ValueError, match="'gin'"):
        E.action_layout("gin")


def test_numpy_integers_are_accepted_as_actions():
    assert E.action_to_move("basic", np.int32(2)) == (DISCARD, 0, 0)
    assert E.action_to_move("basic", np.int64(384)) == (PLACE, 0, 0)


# ----------------------------------------------------------------------------- masks against the engine


@pytest.mark.parametrize("game, players", SETUPS)
def test_mask_is_sound_and_complete_in_random_states(game, players):
    """In thousands of states the allowed ids map one-to-one onto the engine's legal moves."""
    layout = E.action_layout(game)
    checked = 0
    for state in random_states(game, players, games=40, seed=players):
        mask = E.action_mask(state)
        assert mask.dtype == np.int8 and mask.shape == (layout.num_actions,)
        allowed = set(np.flatnonzero(mask).tolist())
        legal = state.legal_moves()
        assert len(set(legal)) == len(legal) == len(allowed)
        assert {layout.move(a) for a in allowed} == set(legal)  # sound and complete
        assert sorted(E.legal_actions(state)) == sorted(allowed)
        for other in range(players):
            if other != state.current:
                assert not E.action_mask(state, for_player=other).any()
        checked += 1
        if checked >= 2500:
            break
    assert checked >= 1500


@pytest.mark.parametrize("game", ["basic", "romi"])
def test_every_allowed_action_applies_and_a_forbidden_one_is_refused(game):
    layout = E.action_layout(game)
    rng = random.Random(5)
    for i, state in enumerate(random_states(game, 2, games=15, seed=9)):
        if state.is_over or i % 3:
            continue
        mask = E.action_mask(state)
        for action in np.flatnonzero(mask)[:20]:
            trial = state.clone()
            trial.apply(layout.move(int(action)))  # raises if the mask let an illegal move through
        forbidden = int(rng.choice(np.flatnonzero(mask == 0)))
        before = state.to_dict()
        trial = state.clone()
        with pytest.raises(IllegalMoveError):
            trial.apply(layout.move(forbidden))
        assert trial.to_dict() == before  # the refused move changed nothing


def test_table_never_outgrows_the_place_block():
    for game in ("basic", "romi"):
        most = max(len(s.table) for s in random_states(game, 2, games=40, seed=1))
        assert 0 < most <= E.MAX_TABLE_MELDS[game]


def test_a_swap_and_the_cut_card_are_reachable():
    # R5: 9d swaps for the joker standing for it in 9s 9h *; R4: the cut card 8h goes out with 6h 7h.
    state = make_state("romi", hands=["9d 6h 7h 2c", "Ks Kh Kd 5c"], discard="Qs", stock="Ac 3c 4d",
                       table=["9s 9h *=9d"], cut_card="8h", opened=[True, True])
    layout = E.action_layout("romi")
    mask = E.action_mask(state)
    assert mask[E.ROMI_TAKE_CUT_ACTION] == ((TAKE_CUT, 0, 0) in state.legal_moves())
    assert mask[E.ROMI_TAKE_CUT_ACTION] == 1
    state.apply((DRAW, 0, 0))
    mask = E.action_mask(state)
    swap = E.ROMI_PLACE_BASE + 53 * 0 + parse_card("9d")
    assert mask[swap] == 1 and layout.move(swap) == (PLACE, parse_card("9d"), 0)


# ----------------------------------------------------------------------------- observation layout


@pytest.mark.parametrize("game, players", SETUPS + [("indian", 6), ("basic", 4), ("romi", 4)])
def test_layout_slices_tile_the_vector(game, players):
    slices = E.observation_layout(game, players)
    size = E.observation_size(game, players)
    covered = sorted((s.start, s.stop) for s in slices.values())
    assert covered[0][0] == 0 and covered[-1][1] == size
    assert all(a[1] == b[0] for a, b in zip(covered, covered[1:]))
    assert slices["known"].stop - slices["known"].start == players * NUM_TYPES
    assert ("table_melds" in slices) == (game != "indian")
    assert ("cut_card" in slices) == (game == "romi") == ("must_place" in slices)
    assert ("wild_card" in slices) == (game == "indian")


def test_documented_observation_sizes():
    assert E.observation_size("indian", 2) == 488
    assert E.observation_size("basic", 2) == 1391
    assert E.observation_size("romi", 2) == 2451


@pytest.mark.parametrize("game, players", SETUPS)
def test_observation_is_float32_and_within_bounds(game, players):
    layout = E.layout_for(GameState.new(game, players).rules)
    for i, state in enumerate(random_states(game, players, games=10, seed=3)):
        if i % 4:
            continue
        for seat in range(players):
            obs = E.encode_observation(state, seat, match_totals=[700] * players)
            assert obs.dtype == np.float32 and obs.shape == (layout.size,)
            assert np.all(obs >= layout.low) and np.all(obs <= layout.high), (
                f"out of bounds at {np.flatnonzero((obs < layout.low) | (obs > layout.high))}")


def test_named_parts_hold_what_the_docs_say():
    # player_0 holds 9d 6h 7h 2c and took 9c from the pile (known to all); player_1 discarded 4c.
    state = make_state("romi", hands=["9d 6h 7h 2c", "Ks Kh Kd 5c 3s"], discard="4c Js 9c", stock="Ac 3c 4d",
                       table=["9s 9h *=9d", "5h * 7h 8h"], cut_card="8h", opened=[True, False])
    state.discarded[1][parse_card("4c")] = 1
    state.apply((TAKE_DISCARD, 0, 0))
    obs = E.encode_observation(state, 0, match_totals=[50, 125])
    parts = E.split_observation(obs, "romi", 2)
    assert np.array_equal(parts["hand"], to_counts(parse_cards("9d 6h 7h 2c 9c")))
    assert parts["discard_top"][parse_card("Js")] == 1 and parts["discard_top"].sum() == 1
    assert np.array_equal(parts["discard_rest"], to_counts(parse_cards("4c")))
    assert parts["just_taken"][parse_card("9c")] == 1 and parts["just_taken"].sum() == 1
    assert parts["must_place"][parse_card("9c")] == 1  # R4: taken after the first turn, it must be placed
    assert parts["must_place"].sum() == 1
    assert parts["cut_card"][parse_card("8h")] == 1 and parts["cut_card"].sum() == 1
    melds = parts["table_melds"]
    assert melds.shape == (E.ROMI_MAX_TABLE_MELDS, NUM_TYPES)
    assert melds[0][parse_card("9s")] == 1 and melds[0][parse_card("9h")] == 1
    assert melds[0][parse_card("9d")] == -1 and melds[0][JOKER] == 1
    assert melds[1][parse_card("6h")] == -1 and melds[1][parse_card("8h")] == 1 and melds[1][JOKER] == 1
    assert not melds[2:].any()
    assert parts["table_cards"][JOKER] == 2 and parts["table_cards"][parse_card("9s")] == 1
    assert parts["known"][0][parse_card("9c")] == 1 and not parts["known"][1].any()
    assert parts["discarded"][1][parse_card("4c")] == 1 and not parts["discarded"][0].any()
    assert list(parts["phase"]) == [0, 1]
    assert list(parts["to_act"]) == [1, 0]
    assert parts["stock_size"][0] == pytest.approx(3 / 106)
    assert list(parts["hand_sizes"]) == pytest.approx([5 / 13, 5 / 13])
    assert list(parts["opened"]) == [1, 0]
    assert list(parts["match_scores"]) == pytest.approx([50 / 250, 125 / 250])
    # Seen from player_1, the per-player rows and scalars rotate: player_1 first.
    other = E.split_observation(E.encode_observation(state, 1), "romi", 2)
    assert other["known"][1][parse_card("9c")] == 1 and list(other["opened"]) == [0, 1]
    assert list(other["to_act"]) == [0, 1]
    assert np.array_equal(other["hand"], to_counts(parse_cards("Ks Kh Kd 5c 3s")))
    # what player_0 took, and so owes to the table, is public (G7, R4)
    assert other["just_taken"][parse_card("9c")] == 1 and other["just_taken"].sum() == 1
    assert other["must_place"][parse_card("9c")] == 1 and other["must_place"].sum() == 1


def test_wild_joker_plane():
    state = GameState.new("indian", 2, seed=4, wild_joker=True)
    parts = E.split_observation(E.encode_observation(state, 0), "indian", 2)
    assert parts["wild_card"][state.wild_card] == 1 and parts["wild_card"].sum() == 1
    plain = E.split_observation(E.encode_observation(GameState.new("indian", 2, seed=4), 0), "indian", 2)
    assert not plain["wild_card"].any()


def test_discard_counts_are_capped_at_the_copies():
    state = GameState.new("basic", 2, seed=0)
    state.discarded[1][5] = 300  # far past one deck's single copy (and past a byte)
    parts = E.split_observation(E.encode_observation(state, 0), "basic", 2)
    assert parts["discarded"][1][5] == 1


# ----------------------------------------------------------------------------- no hidden information


def redistribute_hidden(state: GameState, observer: int, rng: random.Random) -> GameState:
    """A copy where every card ``observer`` cannot see is dealt again: other hands (keeping
    their size and their publicly known cards) and the stock (keeping its size)."""
    other = state.clone()
    pool = list(other.stock)
    unknown_sizes = {}
    for p in range(state.rules.num_players):
        if p == observer:
            continue
        hidden = [h - k for h, k in zip(other.hands[p], other.known[p])]
        assert min(hidden) >= 0
        pool += [c for c in range(NUM_TYPES) for _ in range(hidden[c])]
        unknown_sizes[p] = sum(hidden)
    rng.shuffle(pool)
    for p, size in unknown_sizes.items():
        dealt, pool = pool[:size], pool[size:]
        other.hands[p] = [k + n for k, n in zip(other.known[p], to_counts(dealt))]
    other.stock = pool
    other.changed()
    return other


@pytest.mark.parametrize("game, players", SETUPS)
def test_hidden_cards_do_not_move_the_observation(game, players):
    rng = random.Random(11)
    changed_hidden = 0
    for i, state in enumerate(random_states(game, players, games=12, seed=21)):
        if i % 3 or state.is_over:
            continue
        for observer in range(players):
            before = E.encode_observation(state, observer, match_totals=[10 * p for p in range(players)])
            twin = redistribute_hidden(state, observer, rng)
            changed_hidden += twin.hands != state.hands or twin.stock != state.stock
            after = E.encode_observation(twin, observer, match_totals=[10 * p for p in range(players)])
            assert np.array_equal(before, after), f"hidden cards leaked into player {observer}'s observation"
    assert changed_hidden > 50  # the test really moved hidden cards


@pytest.mark.parametrize("game", ["indian", "basic", "romi"])
def test_public_facts_reach_the_observation(game):
    """A card an opponent took from the pile shows in their known row; their discards too."""
    rng = random.Random(2)
    seen_known = seen_discard = 0
    for state in random_states(game, 2, games=20, seed=8):
        if state.is_over:
            continue
        observer = 1 - state.current
        parts = E.split_observation(E.encode_observation(state, observer), game, 2)
        opponent = state.current
        assert np.array_equal(parts["known"][1], state.known[opponent])
        cap = E.discard_cap(state.rules.decks, state.rules.printed_jokers)
        assert np.array_equal(parts["discarded"][1], np.minimum(state.discarded[opponent], cap))
        assert parts["hand_sizes"][1] * state.rules.hand_size == pytest.approx(sum(state.hands[opponent]))
        seen_known += any(state.known[opponent])
        seen_discard += any(state.discarded[opponent])
        if rng.random() < 0.01:
            break
    assert seen_known > 0 and seen_discard > 0


def test_an_observation_differs_when_a_public_fact_differs():
    state = GameState.new("indian", 2, seed=1)
    base = E.encode_observation(state, 0)
    twin = state.clone()
    twin.known[1][5] += 1
    assert not np.array_equal(base, E.encode_observation(twin, 0))
    twin = state.clone()
    twin.discarded[1][5] += 1
    assert not np.array_equal(base, E.encode_observation(twin, 0))
    twin = state.clone()
    twin.hands[0][5] += 1
    assert not np.array_equal(base, E.encode_observation(twin, 0))


def test_describe_action_names_the_move():
    state = GameState.new("basic", 2, seed=0)
    assert E.describe_action(state, 0) == "action 0 (draw)"
    assert "discard" in E.describe_action(state, E.DISCARD_BASE + 3)
    assert state.phase == PHASE_DRAW


def test_docs_tables_agree_with_the_encoding():
    """docs/env.md repeats the observation offsets and the action sizes: they must match the code."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "env.md").read_text(encoding="utf-8")
    layouts = {game: E.observation_layout(game, 2) for game in ("indian", "basic", "romi")}
    rows = 0
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 7 or not cells[0].startswith("`") or cells[1] == "size":
            continue
        name = cells[0].strip("`")
        if name not in set().union(*layouts.values()):
            continue
        rows += 1
        for game, cell in zip(("indian", "basic", "romi"), cells[2:5]):
            part = layouts[game].get(name)
            if part is None:
                assert cell == "–", f"{name} for {game}"
                continue
            low, _, high = cell.partition("–")
            assert (int(low), int(high or low)) == (part.start, part.stop - 1), f"docs: {name} for {game}"
    assert rows == 19
    for game, size in (("Indian Rummy", 108), ("Basic Rummy", 1285), ("Indiai römi", 2319)):
        assert any(line.startswith(f"| {game}") and f"| {size} " in line for line in text.splitlines())


def test_romi_owed_jokers_and_the_low_end_joker_have_their_cells_and_ids():
    # römi, player 0 has opened.   table: [0] 9s 9h 9d *=9c   [1] Ks Kh Kd *=Kc   [2] 5h 6h 7h
    #   hand: 9c Kc 5d Jh     stock top: 2s
    # Two swaps owe two jokers (R5): the must_place plane counts them at entry 52. The run is
    # open at both ends, so a joker may go below it (id ROMI_PLACE_JOKER_LOW_BASE + 2) or above.
    state = make_state("romi", hands=["9c Kc 5d Jh", "2d 3d"], stock="2s",
                       table=["9s 9h 9d *=9c", "Ks Kh Kd *=Kc", "5h 6h 7h"], opened=[True, False])
    layout = E.action_layout("romi")
    state.apply((DRAW, 0, 0))
    state.apply((PLACE, parse_card("9c"), 0))
    state.apply((PLACE, parse_card("Kc"), 1))
    for seat in (0, 1):  # public: both swaps were seen
        parts = E.split_observation(E.encode_observation(state, seat), "romi", 2)
        assert parts["must_place"][JOKER] == 2 and parts["must_place"].sum() == 2
    low = E.ROMI_PLACE_JOKER_LOW_BASE + 2
    assert layout.move(low) == (PLACE_JOKER_LOW, 2, 0) and E.move_to_action("romi", (PLACE_JOKER_LOW, 2, 0)) == low
    mask = E.action_mask(state)
    high = E.ROMI_PLACE_BASE + 53 * 2 + JOKER
    assert mask[low] == 1 and mask[high] == 1
    assert layout.blocks["place_joker_low"] == range(E.ROMI_PLACE_JOKER_LOW_BASE, E.ROMI_NUM_ACTIONS)
    assert "place_joker_low" not in E.action_layout("basic").blocks  # Basic has no jokers (B1)
