"""Agents (docs/agents.md): the protocol, random, rule-based and policy agents, the registry, checkpoints.

Rule-agent scenarios are hand diagrams in G2 notation (``rummy_env.scenario.make_state``); the
agent is given only the observation and mask of the seat to act, as in play.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from agents.base import Agent, AgentError
from agents.policy import (
    CHECKPOINT_FORMAT, CheckpointError, MaskedActorCritic, PolicyAgent, load_checkpoint, save_checkpoint,
)
from agents.random_agent import RandomAgent
from agents.registry import make_agent
from agents.rule_agent import RuleAgent
from agents.view import ObservationReader
from rummy_env.ruleset import make_ruleset
from rummy_env.cards import parse_card
from rummy_env.encoding import (
    DISCARD_BASE, DRAW_ACTION, INDIAN_DECLARE_BASE, ROMI_TAKE_CUT_ACTION, TAKE_DISCARD_ACTION,
    ObservationEncoder, action_layout, action_mask, num_actions, observation_size,
)
from rummy_env.game import DISCARD, DRAW, MELD, PLACE, TAKE_DISCARD, GameState
from rummy_env.scenario import make_state
from rummy_env.table import template_index
from rummy_env.vector import VectorGame

INDIAN_2P = make_ruleset("indian", 2)

SETUPS = [("indian", 2), ("indian", 4), ("basic", 2), ("basic", 3), ("romi", 2), ("romi", 4)]


def seat_view(state: GameState) -> tuple[np.ndarray, np.ndarray]:
    """The observation and mask of the seat to act."""
    return ObservationEncoder(state.rules).encode(state, state.current), action_mask(state)


def after_draw(state: GameState) -> GameState:
    state.apply((DRAW, 0, 0))
    return state


def move_of(state: GameState, action: int):
    return action_layout(state.rules.game).moves[action]


class CheckedAgent(Agent):
    """Wraps an agent and fails the test if it ever picks an action its mask forbids."""

    def __init__(self, inner: Agent):
        super().__init__(inner.rules)
        self.inner = inner
        self.name = inner.name
        self.decisions = 0

    def reset(self, seed=None):
        self.inner.reset(seed)

    def act(self, observation, action_mask):
        action = self.inner.act(observation, action_mask)
        assert isinstance(action, int)
        assert action_mask[action] == 1, f"{self.inner.name} chose masked-out action {action}"
        self.decisions += 1
        return action


def play_with(game: str, num_players: int, agents: list[Agent], seed: int) -> GameState:
    """One hand through rummy_env.vector, the seat to act's agent asked with act_batch; the finished state."""
    state = GameState.new(game, num_players, seed=seed)
    vector = VectorGame(game, 1, num_players)
    vector.load(0, state)
    for agent in agents:
        agent.reset(seed)
    while not state.is_over:
        agent = agents[int(vector.to_act[0])]
        vector.step_rows([0], agent.act_batch(vector.observations[:1], vector.action_masks[:1]))
    return state


# ----------------------------------------------------------------------------- never masked out


@pytest.mark.parametrize("game,num_players", SETUPS)
def test_random_and_rule_agents_only_choose_allowed_actions(game, num_players):
    rules = make_ruleset(game, num_players)
    agents = [CheckedAgent(RuleAgent(rules) if seat % 2 == 0 else RandomAgent(rules, seat))
              for seat in range(num_players)]
    for seed in range(3):
        state = play_with(game, num_players, agents, seed)
        assert state.result is not None
    assert all(agent.decisions > 0 for agent in agents)


@pytest.mark.parametrize("num_players,options", [(2, {}), (4, {}), (2, {"wild_joker": True})])
def test_lookahead_agent_only_chooses_allowed_actions(num_players, options):
    """Indian hands to the end (I1-I9), with and without the wild joker (I2), the lookahead in every other seat."""
    agents = [CheckedAgent(make_agent("lookahead", make_ruleset("indian", num_players, **options)) if seat % 2 == 0
                           else make_agent("rule", make_ruleset("indian", num_players, **options)))
              for seat in range(num_players)]
    for seed in range(3):
        state = GameState.new("indian", num_players, seed=seed, **options)
        while not state.is_over:
            observation, mask = seat_view(state)
            state.apply(move_of(state, agents[state.current].act(observation, mask)))
        assert state.result is not None
    assert all(agent.decisions > 0 for agent in agents)


@pytest.mark.parametrize("greedy", [True, False])
@pytest.mark.parametrize("game", ["indian", "romi"])
def test_policy_agent_only_chooses_allowed_actions(game, greedy):
    torch.manual_seed(0)
    model = MaskedActorCritic(observation_size(game, 2), num_actions(game), (32,))
    with torch.no_grad():
        model.policy_head.weight.normal_(0, 5.0)  # a sharp random policy: masked actions would often win
    rules = make_ruleset(game, 2)
    agents = [CheckedAgent(PolicyAgent(model, rules, greedy=greedy, seed=1)), CheckedAgent(RandomAgent(rules, 2))]
    state = GameState.new(game, 2, seed=3, max_turns=60)
    encoder = ObservationEncoder(state.rules)
    moves = action_layout(game).moves
    while not state.is_over:
        seat = state.current
        state.apply(moves[agents[seat].act(encoder.encode(state, seat), action_mask(state))])
    assert agents[0].decisions > 20


def test_all_zero_mask_is_an_error_not_a_choice():
    observation = np.zeros(observation_size("basic", 2), np.float32)
    mask = np.zeros(num_actions("basic"), np.int8)
    for agent in (RandomAgent(make_ruleset("basic", 2)), RuleAgent(make_ruleset("basic", 2))):
        with pytest.raises(AgentError, match="all-zero action mask"):
            agent.act(observation, mask)


def test_random_agent_is_uniform_and_seeded():
    mask = np.zeros(num_actions("indian"), np.int8)
    mask[[0, 1, 7]] = 1
    observation = np.zeros(observation_size("indian", 2), np.float32)
    agent = RandomAgent(make_ruleset("indian", 2), seed=5)
    picks = [agent.act(observation, mask) for _ in range(600)]
    assert set(picks) == {0, 1, 7}
    assert all(150 < picks.count(a) < 250 for a in (0, 1, 7))
    agent.reset(seed=9)
    first = [agent.act(observation, mask) for _ in range(20)]
    agent.reset(seed=9)
    assert [agent.act(observation, mask) for _ in range(20)] == first


def test_act_batch_matches_act_row_by_row():
    states = [after_draw(GameState.new("basic", 2, seed=s)) for s in range(4)]
    observations = np.stack([seat_view(s)[0] for s in states])
    masks = np.stack([seat_view(s)[1] for s in states])
    rule = RuleAgent(make_ruleset("basic", 2))
    assert rule.act_batch(observations, masks).tolist() == [rule.act(o, m) for o, m in zip(observations, masks)]
    model = MaskedActorCritic(observation_size("basic", 2), num_actions("basic"), (16,))
    policy = PolicyAgent(model, make_ruleset("basic", 2))
    assert policy.act_batch(observations, masks).tolist() == [policy.act(o, m) for o, m in zip(observations, masks)]


# ----------------------------------------------------------------------------- the observation reader


def test_reader_decodes_what_the_encoder_wrote():
    state = make_state("romi", ["5h 6h 7h 9c Kd", "2s 2d 8c"], discard="Qs 4d", stock="Ac 3c",
                       table=["9s 9h *"], cut_card="Js", opened=[True, False])
    state.known[1][parse_card("2d")] = 1
    view = ObservationReader(make_ruleset("romi", 2)).read(ObservationEncoder(state.rules).encode(state, 0))
    assert view.hand == state.hands[0]
    assert view.discard_top == parse_card("4d") and view.discard_rest[parse_card("Qs")] == 1
    assert view.cut_card == parse_card("Js")
    assert view.table_melds[0][parse_card("9s")] == 1 and view.table_melds[0][52] == 1
    assert view.num_table_melds == 1
    assert view.known[1][parse_card("2d")] == 1
    assert view.opened == [True, False]
    assert view.hand_sizes == [5, 3]
    assert view.phase == 0


# ----------------------------------------------------------------------------- rule agent scenarios


def test_rule_agent_declares_as_soon_as_it_can():
    """I5: after drawing 2d the hand declares (runs A-4h and 5-7c, sets of 9s and kings), discarding 2d."""
    hands = ["Ah 2h 3h 4h 5c 6c 7c 9s 9h 9d Kd Kc Ks", "2s 3s 4s 5s 6s 7s 8s 9c Td Jd Qd Kh 4c"]
    state = after_draw(make_state("indian", hands, discard="8h", stock="Ad 2d"))
    action = RuleAgent(make_ruleset("indian", 2)).act(*seat_view(state))
    assert action == INDIAN_DECLARE_BASE + parse_card("2d")


def test_rule_agent_discards_the_loose_card_that_costs_most():
    """Melds A-3h, 5-7c, 9s 9h 9d, near run 4d 5d; loose Kc, 2s, 8d: the king goes."""
    hands = ["Ah 2h 3h 5c 6c 7c 9s 9h 9d 4d 5d Kc 2s", "2c 3s 4s 5s 6s 7s 8s 9c Td Jd Qd Kh 4c"]
    state = after_draw(make_state("indian", hands, discard="Jh", stock="Ad 8d"))
    assert RuleAgent(make_ruleset("indian", 2)).act(*seat_view(state)) == DISCARD_BASE + parse_card("Kc")


def test_rule_agent_keeps_a_live_near_meld_over_a_slightly_higher_loose_card():
    """Loose 8d 9d (a live near run) and a lone 7s: the agent drops 7s, though 9d is worth more."""
    hands = ["Ah 2h 3h 5c 6c 7c Ks Kh Kc 8d 9d 2s 2d", "2c 3s 4s 5s 6s Js Qs 9s 4c Td Jd Qd 9h"]
    state = after_draw(make_state("indian", hands, discard="Jh", stock="Ad 7s"))
    assert RuleAgent(make_ruleset("indian", 2)).act(*seat_view(state)) == DISCARD_BASE + parse_card("7s")
    assert RuleAgent(make_ruleset("indian", 2), near_weight=0).act(*seat_view(state)) == DISCARD_BASE + parse_card("9d")


@pytest.mark.parametrize("top,wanted", [("7c", TAKE_DISCARD_ACTION), ("Kd", DRAW_ACTION)])
def test_rule_agent_takes_the_discard_top_only_when_it_completes_a_meld(top, wanted):
    state = make_state("indian", ["Ah 2h 3h 5c 6c 9s 9h 9d 4d 5d Qc 2s 8h", "2c 3s 4s 5s 6s 7s 8s 9c Td Jd Qd Kh 4c"],
                       discard=f"Jh {top}", stock="Ad 8d")
    assert RuleAgent(make_ruleset("indian", 2)).act(*seat_view(state)) == wanted


def test_rule_agent_avoids_feeding_the_next_player_what_they_collect():
    """The next player took 8s and 9s from the pile; Ts would feed their run, so Kh goes instead."""
    hands = ["Ah 2h 3h 5c 6c 7c 9d 9h 9c 4d 4c Ts Kh", "8s 9s 2c 3s 4s 5s 6s Jc Td Jd Qd 7h 3c"]
    state = after_draw(make_state("indian", hands, discard="Jh", stock="Ad 4s"))
    state.known[1][parse_card("8s")] = 1
    state.known[1][parse_card("9s")] = 1
    assert RuleAgent(make_ruleset("indian", 2)).act(*seat_view(state)) == DISCARD_BASE + parse_card("Kh")
    assert RuleAgent(INDIAN_2P, danger_weight=0).act(*seat_view(state)) == DISCARD_BASE + parse_card("Ts")


def test_rule_agent_takes_the_cut_card_to_go_out():
    """R4: with 5h 6h 7h 9c 9d 2c and the cut card 9s the hand goes out; the agent takes it."""
    state = make_state("romi", ["5h 6h 7h 9c 9d 2c", "2s 3s 4s 5s 6s 7s 8s 9c Td Jd Qd Kh 4c"],
                       discard="8h", stock="Ad 2d", cut_card="9s", opened=[True, False])
    assert RuleAgent(make_ruleset("romi", 2)).act(*seat_view(state)) == ROMI_TAKE_CUT_ACTION


def template_action(game: str, cards: str) -> int:
    wanted = tuple(parse_card(c) for c in cards.split())
    rules = {"basic": (False, 0), "romi": (True, 2)}[game]
    for tid, template in enumerate(template_index(*rules).templates):
        if template.cards == wanted:
            return action_layout(game).action((MELD, tid, 0))
    raise AssertionError(f"no template {cards}")


def test_rule_agent_lays_its_melds_then_lays_off_then_discards():
    """B3: melds 5-7h and the eights go down, Qs goes on the table run 9s-Js, then Kd is discarded."""
    state = make_state("basic", ["5h 6h 7h 8c 8d 8s Qs Kd 2c 3d", "Ac 2s 3s 4s 5s 6s 7s 9c Td Jd"],
                       discard="4c", stock="Ad Kc", table=["9s Ts Js"])
    after_draw(state)
    agent = RuleAgent(make_ruleset("basic", 2))
    played = []
    while state.current == 0 and not state.is_over:
        action = agent.act(*seat_view(state))
        played.append(move_of(state, action))
        state.apply(move_of(state, action))
    kinds = [m[0] for m in played]
    assert kinds[:2] == [MELD, MELD]
    assert {played[0], played[1]} == {move_of(state, template_action("basic", "5h 6h 7h")),
                                      move_of(state, template_action("basic", "8s 8d 8c"))}
    assert played[2] == (PLACE, parse_card("Qs"), 0)
    assert played[3][1] == parse_card("Kc") or played[3][1] == parse_card("Kd")
    assert len(played) == 4


def test_rule_agent_swaps_a_joker_when_it_pays():
    """R5: 7h takes the joker of 5h 6h *, and the joker makes a set with Kc Kd."""
    state = make_state("romi", ["7h Kc Kd 3s 9d", "2s 3s 4s 5s 6s 7s 8s 9c Td Jd Qd Kh 4c"],
                       discard="8h", stock="Ad 2c", table=["5h 6h *"], opened=[True, True])
    after_draw(state)
    agent = RuleAgent(make_ruleset("romi", 2))
    first = move_of(state, agent.act(*seat_view(state)))
    assert first == (PLACE, parse_card("7h"), 0)
    state.apply(first)
    second = move_of(state, agent.act(*seat_view(state)))
    assert second[0] == MELD
    rules = state.rules
    laid = template_index(rules.ace_high, rules.max_jokers).templates[second[1]].cards
    assert set(laid) >= {parse_card("Kc"), parse_card("Kd")}


HOLDING_HAND = "5h 6h 7h 9c 9d Ks 2d 4c Jc 3s Qd 8s Ac"
"""A römi hand with one meld (5-7h) and ten loose cards (9c 9d is a pair, the rest stray)."""


@pytest.mark.parametrize("other_hand,holds", [
    ("2s 3s 4s 5s 6s 7s 8s 9h Td Jd Qh Kh 4h", True),  # 13 cards: more than hold_until
    ("2c 3c 4d", False),  # 3 cards: at hold_until, the opponent is near out
])
def test_rule_agent_holding_keeps_its_meld_while_the_other_hand_is_big(other_hand, holds):
    """R5 (play step 0): rule:hold_until=3 keeps 5h 6h 7h in hand, giving nothing to lay off on,
    until the other player is down to 3 cards; the default lays it at once."""
    state = make_state("romi", [HOLDING_HAND, other_hand], discard="Kc", stock="Td 2c", opened=[False, True])
    after_draw(state)
    observation, mask = seat_view(state)
    run = template_action("romi", "5h 6h 7h")
    assert move_of(state, RuleAgent(make_ruleset("romi", 2)).act(observation, mask)) == move_of(state, run)
    holding = move_of(state, make_agent("rule:hold_until=3", make_ruleset("romi", 2)).act(observation, mask))
    if holds:
        assert holding[0] == DISCARD
    else:
        assert holding == move_of(state, run)


def test_rule_agent_holding_goes_down_when_at_most_hold_loose_cards_are_stuck():
    """R5: with 9d laid off on the table's nines, only 2d stays stuck: at most hold_loose (2),
    so the holding agent lays its melds although the other hand is big."""
    state = make_state("romi", ["5h 6h 7h Jc Jd Js 9d 2d Qs Qh Qc", "2s 3s 4s 5s 6s 7s 8s 9h Td Jh Qd Kh 4h"],
                       discard="Kc", stock="Td 2c", table=["9s 9h 9c"], opened=[False, True])
    after_draw(state)
    holding = make_agent("rule:hold_until=3", make_ruleset("romi", 2))
    assert move_of(state, holding.act(*seat_view(state)))[0] == MELD
    stricter = make_agent("rule:hold_until=3,hold_loose=1", make_ruleset("romi", 2))
    assert move_of(state, stricter.act(*seat_view(state)))[0] == DISCARD


def test_rule_agent_holding_still_places_what_it_owes():
    """R4: a discard top taken after the first turn must go down this turn, holding or not."""
    state = make_state("romi", [HOLDING_HAND, "2s 3s 4s 5s 6s 7s 8s 9h Td Jd Qh Kh 4h"], discard="8h",
                       stock="Td 2c", opened=[False, True], turns_taken=[2, 2])
    state.apply((TAKE_DISCARD, 0, 0))
    action = make_agent("rule:hold_until=3", make_ruleset("romi", 2)).act(*seat_view(state))
    assert move_of(state, action)[0] in (MELD, PLACE)


# ----------------------------------------------------------------------------- registry


def test_make_agent_builds_each_named_agent():
    assert isinstance(make_agent("random", make_ruleset("indian", 2), seed=1), RandomAgent)
    assert isinstance(make_agent("rule", make_ruleset("romi", 3)), RuleAgent)
    assert make_agent("rule", make_ruleset("basic")).name == "rule"
    tuned = make_agent("rule:near_weight=0,max_outs=6", make_ruleset("indian", 2))
    assert (tuned.near_weight, tuned.max_outs, tuned.lives_boost) == (0, 6, 2.0)
    assert tuned.name == "rule:near_weight=0,max_outs=6"


@pytest.mark.parametrize("spec,message", [
    ("randm", "unknown agent spec 'randm'"),
    ("", "agent spec ''"),
    ("ppo", "expected ppo:PATH"),
    ("rule:extra", "agent spec .rule:extra.: unknown setting .extra."),
    ("rule:near_weight=x", "setting near_weight=.x. is not a number"),
    ("search:speed=2", "unknown setting .speed=2."),
    ("rule:hold_until=3", "unknown setting .hold_until=3.: expected KEY=NUMBER"),  # Indian has no table
])
def test_bad_agent_spec_is_an_error_naming_it(spec, message):
    with pytest.raises(AgentError, match=message):
        make_agent(spec, make_ruleset("indian", 2))


@pytest.mark.parametrize("spec", ["rule:hold_until=-1", "rule:hold_loose=-2"])
def test_negative_hold_weight_is_an_error_naming_it(spec):
    with pytest.raises(AgentError, match=spec.split(":")[1] + ": expected a number >= 0"):
        make_agent(spec, make_ruleset("romi", 2))


def test_rules_that_are_not_a_rule_set_are_an_error():
    with pytest.raises(AgentError, match="rules 'basic': expected a RuleSet"):
        make_agent("random", "basic")


# ----------------------------------------------------------------------------- checkpoints


def small_model(game="basic", players=2) -> MaskedActorCritic:
    torch.manual_seed(0)
    return MaskedActorCritic(observation_size(game, players), num_actions(game), (24, 16), activation="relu")


def test_checkpoint_round_trip(tmp_path):
    model = small_model()
    config = {"learning_rate": 3e-4, "seed": 1, "hidden": [24, 16]}
    path = save_checkpoint(tmp_path / "run" / "best.pt", model, "basic", 2, config)
    assert sorted(os.listdir(tmp_path / "run")) == ["best.pt"]  # the temporary file is gone
    raw = torch.load(path, weights_only=True)
    assert raw["format"] == CHECKPOINT_FORMAT and raw["game"] == "basic" and raw["num_players"] == 2
    loaded, meta = load_checkpoint(path, "basic", 2)
    assert meta["config"]["learning_rate"] == 3e-4
    assert meta["model"] == {"kind": "mlp", "hidden": [24, 16], "activation": "relu"}
    state = after_draw(GameState.new("basic", 2, seed=4))
    observation, mask = seat_view(state)
    obs = torch.as_tensor(observation[None])
    mask_t = torch.as_tensor(mask[None])
    with torch.no_grad():
        assert torch.equal(model(obs, mask_t)[0], loaded(obs, mask_t)[0])
        assert torch.equal(model(obs, mask_t)[1], loaded(obs, mask_t)[1])
    agent = make_agent(f"ppo:{path}", make_ruleset("basic", 2))
    assert agent.act(observation, mask) == PolicyAgent(model, make_ruleset("basic", 2)).act(observation, mask)


def test_checkpoint_overwrite_is_atomic_and_keeps_nothing_else(tmp_path):
    target = tmp_path / "best.pt"
    save_checkpoint(target, small_model(), "basic", 2)
    save_checkpoint(target, small_model(), "basic", 2, {"step": 2})
    assert sorted(os.listdir(tmp_path)) == ["best.pt"]
    assert load_checkpoint(target)[1]["config"] == {"step": 2}


def test_checkpoint_errors_name_the_file(tmp_path):
    missing = tmp_path / "nope.pt"
    with pytest.raises(CheckpointError, match="nope.pt.*no such file"):
        load_checkpoint(missing)
    with pytest.raises(AgentError, match="nope.pt.*no such file"):
        make_agent(f"ppo:{missing}", make_ruleset("basic", 2))
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"this is not a checkpoint")
    with pytest.raises(CheckpointError, match="garbage.pt.*not a rummy-env policy checkpoint"):
        load_checkpoint(garbage)
    tensor = tmp_path / "tensor.pt"
    torch.save(torch.zeros(3), tensor)
    with pytest.raises(CheckpointError, match="tensor.pt.*not a rummy-env policy checkpoint"):
        load_checkpoint(tensor)
    good = save_checkpoint(tmp_path / "basic.pt", small_model(), "basic", 2)
    with pytest.raises(CheckpointError, match="basic.pt' was trained for 'basic' with 2 players, not 'indian'"):
        make_agent(f"ppo:{good}", make_ruleset("indian", 2))
    with pytest.raises(CheckpointError, match="not 'basic' with 3 players"):
        make_agent(f"ppo:{good}", make_ruleset("basic", 3))


def test_checkpoint_refuses_config_that_weights_only_loading_could_not_read(tmp_path):
    with pytest.raises(ValueError, match="plain values"):
        save_checkpoint(tmp_path / "x.pt", small_model(), "basic", 2, {"when": object()})
    with pytest.raises(ValueError, match="observation size"):
        save_checkpoint(tmp_path / "x.pt", small_model("basic"), "romi", 2)
    assert not list(tmp_path.iterdir())


def test_masked_logits_give_masked_actions_zero_probability():
    model = small_model()
    observation = torch.zeros(1, observation_size("basic", 2))
    mask = torch.zeros(1, num_actions("basic"), dtype=torch.int8)
    mask[0, [3, 9]] = 1
    with torch.no_grad():
        probabilities = model.distribution(observation, mask).probs[0]
    assert float(probabilities[[3, 9]].sum()) == pytest.approx(1.0)
    assert float(probabilities.max()) <= 1.0 and int((probabilities > 0).sum()) == 2


def test_sampled_policy_agent_is_reproducible_from_its_reset_seed():
    model = small_model("indian")
    agent = PolicyAgent(model, make_ruleset("indian", 2), greedy=False)
    observation = np.zeros(observation_size("indian", 2), np.float32)
    mask = np.zeros(num_actions("indian"), np.int8)
    mask[2:40] = 1
    agent.reset(seed=11)
    first = [agent.act(observation, mask) for _ in range(30)]
    agent.reset(seed=11)
    assert [agent.act(observation, mask) for _ in range(30)] == first
    assert len(set(first)) > 5


# ----------------------------------------------------------------------------- search agent


@pytest.mark.parametrize("game,num_players", [("indian", 2), ("indian", 3), ("basic", 3), ("romi", 2), ("romi", 4)])
def test_determinised_worlds_agree_with_the_observation(game, num_players):
    """A guess of the hidden cards, rebuilt from the observation alone, shows the same observation and mask."""
    import random as stdlib_random

    from agents.search_agent import determinise

    reader = ObservationReader(make_ruleset(game, num_players))
    rng = stdlib_random.Random(0)
    rules = make_ruleset(game, num_players)
    for seed in range(2):
        state = GameState.new(game, num_players, seed=seed, max_turns=80)
        encoder = ObservationEncoder(state.rules)
        players = [RuleAgent(rules) if s % 2 == 0 else RandomAgent(rules, s)
                   for s in range(num_players)]
        moves = action_layout(game).moves
        turn = reader.slices["turn"]
        while not state.is_over:
            seat = state.current
            observation, mask = encoder.encode(state, seat), action_mask(state)
            world = determinise(reader.read(observation), state.rules, rng)
            assert np.array_equal(action_mask(world), mask)
            seen = ObservationEncoder(state.rules).encode(world, 0)
            seen[turn] = observation[turn]  # the turn count is only known in steps of max_turns / 127
            assert np.array_equal(seen, observation)
            assert sum(map(sum, world.hands)) + len(world.stock) == sum(map(sum, state.hands)) + len(state.stock)
            assert GameState.from_dict(world.to_dict()).to_dict() == world.to_dict()  # every field is set and valid
            state.apply(moves[players[seat].act(observation, mask)])


def test_determinise_fails_loudly_on_a_field_it_does_not_fill(monkeypatch):
    """A field added to GameState's field table that the guess does not set is an error at once."""
    import dataclasses
    import random as stdlib_random

    import agents.search_agent as search_agent
    from rummy_env.game import STATE_FIELDS

    state = GameState.new("indian", 2, seed=1)
    observation = ObservationEncoder(state.rules).encode(state, 0)
    view = ObservationReader(make_ruleset("indian", 2)).read(observation)
    search_agent.determinise(view, state.rules, stdlib_random.Random(0))  # fills every field today
    fields = STATE_FIELDS + (dataclasses.replace(STATE_FIELDS[-1], name="new_field"),)
    monkeypatch.setattr(search_agent, "STATE_FIELDS", fields)
    with pytest.raises(RuntimeError, match="fields not set: new_field"):
        search_agent.determinise(view, state.rules, stdlib_random.Random(0))


def test_search_agent_is_legal_and_reproducible():
    from agents.search_agent import SearchAgent

    def play(seed):
        state = GameState.new("basic", 2, seed=seed, max_turns=12)
        encoder = ObservationEncoder(state.rules)
        search = CheckedAgent(SearchAgent(make_ruleset("basic", 2), seed=0, worlds=2, candidates=2))
        search.reset(seed=5)
        rule = RuleAgent(make_ruleset("basic", 2))
        moves = action_layout("basic").moves
        actions = []
        while not state.is_over:
            seat = state.current
            agent = search if seat == 0 else rule
            action = agent.act(encoder.encode(state, seat), action_mask(state))
            actions.append(action)
            state.apply(moves[action])
        return actions

    assert play(3) == play(3)


# Search decisions recorded when rollouts were played one at a time on the engine (before they
# went through rummy_env.vector): at z = 0 every alternative that does better on average is taken,
# so a change in any rollout's value shows. Per game: (index in tests/data/rule_positions_<game>.npz,
# the action chosen after reset(seed=index)) for the first ten positions searched.
SEARCH_PINS = {
    "indian": [(0, 1), (1, 53), (2, 0), (3, 27), (4, 0), (5, 34), (6, 1), (7, 5), (8, 1), (9, 24)],
    "basic": [(2, 38), (3, 0), (5, 12), (6, 1), (8, 34), (9, 0), (11, 23), (14, 46), (15, 1), (17, 9)],
    "romi": [(0, 1), (3, 27), (4, 0), (5, 12), (6, 41), (7, 12), (8, 41), (9, 39), (10, 5), (11, 1)],
}


@pytest.mark.parametrize("game", sorted(SEARCH_PINS))
def test_search_decisions_are_those_recorded_before_batched_rollouts(game):
    from pathlib import Path

    from agents.search_agent import SearchAgent

    data = np.load(Path(__file__).parent / "data" / f"rule_positions_{game}.npz")
    agent = SearchAgent(make_ruleset(game, 2), seed=0, z=0.0)
    got = []
    for index, _ in SEARCH_PINS[game]:
        agent.reset(seed=index)
        got.append((index, agent.act(data["observations"][index], data["masks"][index])))
    assert got == SEARCH_PINS[game]
    assert agent.searched == 10 and agent.deviated == {"indian": 3, "basic": 2, "romi": 4}[game]


def test_search_hand_is_the_one_recorded_before_batched_rollouts():
    """A whole Basic hand (seed "pin:0"), search (z = 0) in seat 0 against the rule agent: the same moves."""
    import json
    import zlib

    from agents.search_agent import SearchAgent

    vector = VectorGame("basic", 1, 2)
    vector.load(0, GameState.new("basic", 2, seed="pin:0"))
    search, rule = SearchAgent(make_ruleset("basic", 2), seed=3, z=0.0), RuleAgent(make_ruleset("basic", 2))
    search.reset(seed=11)
    line = []
    while vector.results[0] is None:
        agent = search if vector.to_act[0] == 0 else rule
        line.append(int(agent.act_batch(vector.observations, vector.action_masks)[0]))
        vector.step_rows([0], line[-1:])
    assert len(line) == 57 and zlib.crc32(json.dumps(line).encode()) == 0x41db9a9a
    assert search.searched == 20


def test_search_rollouts_play_each_start_as_the_engine_does():
    """rollouts(): our reward after the action, then the rule agent in every seat, as played move by move."""
    from agents.search_agent import SearchAgent

    agent = SearchAgent(make_ruleset("romi", 2), seed=0, max_rollout_turns=200)
    rule = RuleAgent(make_ruleset("romi", 2))
    moves = action_layout("romi").moves
    starts = []
    for seed in range(5):
        state = GameState.new("romi", 2, seed=seed)
        starts.append((state, int(np.flatnonzero(action_mask(state))[seed % 2])))
    want = []
    for state, action in starts:
        state = state.clone()
        encoder = ObservationEncoder(state.rules)
        state.apply(moves[action])
        while not state.is_over:
            state.apply(moves[rule.act(encoder.encode(state, state.current), action_mask(state))])
        want.append(float(state.result.rewards[0]))
    assert agent.rollouts(starts) == want
    assert any(want)
    short = SearchAgent(make_ruleset("romi", 2), seed=0, max_rollout_turns=2)  # cut off: worth 0
    assert short.rollouts(starts) == [0.0] * 5


# ----------------------------------------------------------------------------- lookahead agent


def test_lookahead_keeps_a_live_run_pair_over_a_dead_pair_worth_less():
    """Both lives held (pure runs A-3h and 5-7c, I5; set of kings, G3). Loose: Jd Qd, a run pair
    (G4) with four live outs (Td and Kd, two decks), and 9c 9h, whose other nines (9s 9s 9d 9d)
    all lie in the pile, so no card makes them a set. A discard that only lowers the points
    drops a ten-point card of the run pair; one card ahead, a nine goes."""
    hands = ["Ah 2h 3h 5c 6c 7c Ks Kh Kc Jd Qd 9c 9h", "3s 5s 6s 7s 8s 3c 4c Tc Jc 8c Qs Qc 8h"]
    state = after_draw(make_state("indian", hands, discard="9s 9d 9s 9d 6h", stock="3d 4s"))
    observation, mask = seat_view(state)
    greedy = make_agent("rule:near_weight=0", make_ruleset("indian", 2)).act(observation, mask)
    assert greedy - DISCARD_BASE in (parse_card("Jd"), parse_card("Qd"))
    action = make_agent("lookahead", make_ruleset("indian", 2)).act(observation, mask)
    assert action - DISCARD_BASE in (parse_card("9c"), parse_card("9h"))


@pytest.mark.parametrize("top,wanted", [("7c", TAKE_DISCARD_ACTION), ("Kd", DRAW_ACTION)])
def test_lookahead_takes_the_discard_top_only_when_it_beats_a_stock_card(top, wanted):
    """7c makes 5c 6c 7c a pure run (G4, I5): worth more than any stock card is expected to be;
    Kd joins nothing in the hand."""
    state = make_state("indian", ["Ah 2h 3h 5c 6c 9s 9h 9d 4d 5d Qc 2s 8h", "2c 3s 4s 5s 6s 7s 8s 9c Td Jd Qd Kh 4c"],
                       discard=f"Jh {top}", stock="Ad 8d")
    assert make_agent("lookahead", make_ruleset("indian", 2)).act(*seat_view(state)) == wanted


def test_lookahead_declares_as_soon_as_it_can():
    """I5: the declaring hand of the rule agent's scenario; the lookahead declares it too."""
    hands = ["Ah 2h 3h 4h 5c 6c 7c 9s 9h 9d Kd Kc Ks", "2s 3s 4s 5s 6s 7s 8s 9c Td Jd Qd Kh 4c"]
    state = after_draw(make_state("indian", hands, discard="8h", stock="Ad 2d"))
    assert make_agent("lookahead", INDIAN_2P).act(*seat_view(state)) == INDIAN_DECLARE_BASE + parse_card("2d")


def test_lookahead_expected_worth_matches_a_draw_by_draw_reference():
    """``expected_worth`` against the definition computed one stock card at a time: for each
    unseen card, the best worth over throwing it back or any loose card (I2 wild cards as jokers)."""
    agent = make_agent("lookahead", make_ruleset("indian", 2))
    rng = np.random.default_rng(5)
    for seed in range(6):
        state = after_draw(GameState.new("indian", 2, seed=seed))
        view = agent.reader.read(seat_view(state)[0])
        hand = list(view.hand)
        hand[int(np.flatnonzero(hand)[rng.integers(int(np.count_nonzero(hand)))])] -= 1
        unseen = agent.unseen(view)
        wild = view.wild_rank
        now = agent.worth(np.array([hand]), wild)[0]
        loose = {c for c in agent.arrangement(hand, wild)[2] if not agent.is_jokerlike(c, wild)}
        total = 0.0
        for card in np.flatnonzero(unseen):
            best = now
            if agent.is_jokerlike(card, wild) or agent.could_meld(card, hand, wild):
                for out in loose:
                    row = list(hand)
                    row[card] += 1
                    row[out] -= 1
                    best = min(best, agent.worth(np.array([row]), wild)[0])
            total += unseen[card] * best
        expected = agent.expected_worth([hand], view, unseen)[0]
        assert expected == pytest.approx(total / sum(unseen))


@pytest.mark.parametrize("spec,game,message", [
    ("lookahead", "basic", "plays the declaring game .indian., not 'basic'"),
    ("lookahead:lives_weight=-1", "indian", "lives_weight=-1: expected a number >= 0"),
    ("lookahead:depth=2", "indian", "unknown setting .depth=2."),
])
def test_bad_lookahead_spec_is_an_error_naming_it(spec, game, message):
    with pytest.raises(AgentError, match=message):
        make_agent(spec, make_ruleset(game, 2))
