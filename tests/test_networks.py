"""The card-aware network: every game's action space, masking, and logits read from the card they name."""

from __future__ import annotations

import pytest
import torch

from agents.networks import CardActorCritic
from agents.policy import build_network
from rummy_env.encoding import DISCARD_BASE, action_layout, observation_layout, observation_size
from rummy_env.vector import VectorGame


@pytest.mark.parametrize(("game", "players"), [("indian", 2), ("indian", 6), ("basic", 2), ("basic", 4),
                                                ("romi", 2), ("romi", 3)])
def test_logits_cover_the_action_space_and_respect_the_mask(game, players):
    vector = VectorGame(game, 5, players, seed=2)
    observations, masks, _ = vector.reset(2)
    model = CardActorCritic(game, players, channels=8, global_size=16, rank=4)
    logits, values = model(torch.from_numpy(observations), torch.from_numpy(masks))
    assert logits.shape == (5, action_layout(game).num_actions) and values.shape == (5,)
    assert model.observation_size == observation_size(game, players)
    lowest = torch.finfo(logits.dtype).min
    assert bool((logits[torch.from_numpy(masks) == 0] == lowest).all())
    assert bool(torch.isfinite(logits[torch.from_numpy(masks) == 1]).all())


def test_discard_logit_is_read_from_that_cards_features():
    """The logit of "discard c" changes with card c's hand entry far more than with a card that is
    neither its run nor its set neighbour (the per-card sharing of the card network)."""
    torch.manual_seed(0)
    model = build_network("indian", 2, {"kind": "card", "channels": 16, "global_size": 32, "layout": 2})
    with torch.no_grad():  # a fresh card embedding is zero: give the cards features of their own, as training does
        model.card_embedding.normal_()
    hand = observation_layout("indian", 2)["hand"]
    observation = torch.zeros(1, observation_size("indian", 2), requires_grad=True)
    mask = torch.ones(1, action_layout("indian").num_actions, dtype=torch.int8)
    king_of_hearts = 1 * 13 + 12
    logits, _ = model(observation, mask)
    logits[0, action_layout("indian").blocks["discard"].start + king_of_hearts].backward()
    gradient = observation.grad[0, hand].abs()
    six_of_clubs = 3 * 13 + 5  # another suit, a rank 6 away: no run or set relation
    assert gradient[king_of_hearts] > 0
    assert gradient[six_of_clubs] < gradient[king_of_hearts]


def test_a_layout_1_checkpoint_is_refused_saying_so():
    """A checkpoint's model config names layout 2 (and its rank); one without a layout was written
    by layout 1, which no shipped policy uses: it is refused with an error that says so."""
    new = build_network("indian", 2, {"kind": "card", "channels": 8, "global_size": 16, "layout": 2, "rank": 4})
    assert new.model_config == {"kind": "card", "channels": 8, "global_size": 16, "layout": 2, "rank": 4}
    with pytest.raises(ValueError, match="layout 1 .* was removed"):
        build_network("indian", 2, {"kind": "card", "channels": 8, "global_size": 16})
    with pytest.raises(ValueError, match="layout 3"):
        build_network("indian", 2, {"kind": "card", "layout": 3})


def test_two_mixing_layers_reach_four_ranks_along_a_suit():
    """A discard logit reads cards up to 4 ranks away along its suit through the mixing layers,
    and beyond that only through the global summary."""
    torch.manual_seed(0)
    net = CardActorCritic("indian", 2, channels=8, global_size=16)
    with torch.no_grad():
        net.global_to_cards.weight.zero_()  # only the card-to-card reads carry information
        net.card_embedding.normal_()
    observations = torch.zeros(1, net.observation_size, requires_grad=True)
    masks = torch.ones(1, net.num_actions, dtype=torch.int8)
    logits, _ = net(observations, masks)
    logits[0, DISCARD_BASE + 0].backward()  # discard the ace of spades
    gradient = observations.grad[0, observation_layout("indian", 2)["hand"]].abs()
    assert gradient[4] > 0.0 and gradient[6] == 0.0  # the 5 of spades is read, the 7 is not


@pytest.mark.parametrize("kind", [{"kind": "card", "channels": 8, "global_size": 16, "layout": 2, "rank": 4},
                                  {"kind": "mlp", "hidden": [16]}])
def test_value_parameters_are_the_value_heads_alone(kind):
    """What a value warm-up trains: changing them moves the value and no logit."""
    model = build_network("basic", 2, kind)
    vector = VectorGame("basic", 3, 2, seed=1)
    observations, masks, _ = vector.reset(1)
    obs, msk = torch.from_numpy(observations), torch.from_numpy(masks)
    with torch.no_grad():
        logits, values = model(obs, msk)
        for p in model.value_parameters():
            p.add_(0.1)
        logits_after, values_after = model(obs, msk)
    assert torch.equal(logits, logits_after) and not torch.equal(values, values_after)
