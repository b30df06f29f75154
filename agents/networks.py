"""The card-aware actor-critic: per-card features shared across the 53 card types.

The observation's card planes (hand, discard top and rest, the just-taken card, cut or wild card,
table cards, each player's known and discarded cards: ``rummy_env.encoding``) become channels
over a 4 × 13 grid of natural cards plus the joker. Layers mix each card with its neighbours
along its suit (runs, G4) and with the cards of its rank (sets, G3), and with a global summary of
the scalars (phase, stock, hand sizes, turn …): a per-card linear read of the planes plus a
learned embedding of the card itself, then two mixing layers in which each card keeps its own
features and reads its eight neighbours through a narrow projection (``rank`` features each), so
the gathered tensor is ``rank`` wide rather than ``channels`` wide. This is ``layout`` 2 in the
model config, the one every shipped policy uses; checkpoints of the earlier layout 1 (no
``layout`` in their model config) no longer load (experiments/LOG.md, 2026-12-08).

Every action's logit comes from the features of the cards it uses, so what is learned about one
card carries over to the others:

* discard c, declare discarding c (I5): a linear read of card c's features;
* draw, take the discard top, take the cut card (R4): the global summary and the top card's features;
* lay meld template t (B3, R5): the mean of a per-card score over the template's cards, plus a
  bias per template;
* place c on table meld s (B3, R5): a bilinear score of card c's features and slot s's plane
  (römi's joker at a run's low end: the joker's score for that slot plus a learned offset);
* any other block: a linear read of the global summary.

``forward(observations, masks) -> (masked logits, values)`` is the same as the MLP's
(``agents.policy.MaskedActorCritic``), so the trainer, the agents and export treat both alike.
Everything in it exports to ONNX (gathers, 2-D convolutions, matrix products).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from rummy_env.cards import NUM_RANKS, NUM_SUITS, NUM_TYPES
from rummy_env.encoding import action_layout, observation_layout, observation_size
from rummy_env.games import game_spec
from rummy_env.table import template_index

CARD_PLANES = ("hand", "discard_top", "discard_rest", "just_taken", "must_place", "wild_card", "cut_card",
               "table_cards", "known", "discarded")
"""Observation parts made of 53-entry card planes that become channels of the card grid."""


def _plane_indices(game: str, num_players: int) -> tuple[list[int], list[int], int | None, int]:
    """(flat indices of the card channels, indices of the scalars, table melds start, slots)."""
    layout = observation_layout(game, num_players)
    cards: list[int] = []
    scalars: list[int] = []
    table_start, slots = None, 0
    for name, part in layout.items():
        indices = list(range(part.start, part.stop))
        if name in CARD_PLANES:
            cards += indices
        elif name == "table_melds":
            table_start, slots = part.start, (part.stop - part.start) // NUM_TYPES
        else:
            scalars += indices
    return cards, scalars, table_start, slots


def _neighbours() -> list[list[int]]:
    """Per natural card: itself, its suit's cards ±1 and ±2 ranks away (wrapping: the ace sits
    beside the king, I3, R3) and the cards of its rank in the three other suits."""
    rows = []
    for card in range(NUM_SUITS * NUM_RANKS):
        suit, rank = divmod(card, NUM_RANKS)
        run = [suit * NUM_RANKS + (rank + d) % NUM_RANKS for d in (0, -2, -1, 1, 2)]
        rows.append(run + [((suit + k) % NUM_SUITS) * NUM_RANKS + rank for k in (1, 2, 3)])
    return rows


class _NarrowCardLayer(nn.Module):
    """A mixing layer over all 53 cards: each card's own features, plus what it reads from
    its eight neighbours through a ``rank``-wide projection (the joker's neighbours are itself)."""

    def __init__(self, width: int, rank: int):
        super().__init__()
        self.down = nn.Linear(width, rank, bias=False)
        self.own = nn.Linear(width, width)
        self.read = nn.Linear(len(_neighbours()[0]) * rank, width, bias=False)

    def forward(self, cards: torch.Tensor, neighbours: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
        batch = cards.shape[0]
        gathered = self.down(cards).index_select(1, neighbours).reshape(batch, NUM_TYPES, -1)
        out = self.own(cards) + self.read(gathered)
        return F.relu(out if bias is None else out + bias[:, None, :])


def _neighbours_with_joker() -> list[list[int]]:
    """``_neighbours`` for the 52 natural cards, and the joker standing for all eight of its own."""
    rows = _neighbours()
    return rows + [[NUM_TYPES - 1] * len(rows[0])]


LAYOUT = 2
"""The card network's layout, recorded in its model config; layout 1 checkpoints no longer load."""


class CardActorCritic(nn.Module):
    """Actor-critic whose action logits are read from per-card features; see the module docstring."""

    kind = "card"

    def __init__(self, game: str, num_players: int, channels: int = 32, global_size: int = 128,
                 layout: int = LAYOUT, rank: int = 8):
        super().__init__()
        if layout != LAYOUT:
            raise ValueError(f"card network layout {layout!r}: only layout {LAYOUT} loads; layout 1 (a checkpoint "
                             "whose model config has no layout) was removed, see experiments/LOG.md")
        self.game = game
        self.num_players = int(num_players)
        self.channels = int(channels)
        self.global_size = int(global_size)
        self.rank = int(rank)
        layout = action_layout(game)
        self.num_actions = layout.num_actions
        cards, scalars, table_start, slots = _plane_indices(game, num_players)
        self.observation_size = observation_size(game, num_players)
        self.num_planes = len(cards) // NUM_TYPES
        self.slots = slots
        self.register_buffer("card_index", torch.tensor(cards, dtype=torch.long), persistent=False)
        self.register_buffer("scalar_index", torch.tensor(scalars, dtype=torch.long), persistent=False)
        self.table_start = table_start
        planes = list(observation_layout(game, num_players))
        self.top_plane = [n for n in planes if n in CARD_PLANES].index("discard_top")

        c, g = self.channels, self.global_size
        self.register_buffer("neighbours", torch.tensor(_neighbours_with_joker(), dtype=torch.long).flatten(),
                             persistent=False)
        # the planes are read card-major, (B, 53, planes) without a transpose
        self.register_buffer("card_major_index", torch.tensor(cards, dtype=torch.long).view(
            self.num_planes, NUM_TYPES).t().flatten(), persistent=False)
        self.read_planes = nn.Linear(self.num_planes, c)
        self.card_embedding = nn.Parameter(torch.zeros(NUM_TYPES, c))
        self.layer1 = _NarrowCardLayer(c, self.rank)
        self.layer2 = _NarrowCardLayer(c, self.rank)
        self.global_in = nn.Linear(len(scalars) + 2 * c, g)
        self.global_to_cards = nn.Linear(g, c)
        self.value = nn.Sequential(nn.Linear(g + 2 * c, g), nn.ReLU(), nn.Linear(g, 1))

        self.blocks: list[tuple[str, int]] = []
        heads = {}
        for name, ids in sorted(layout.blocks.items(), key=lambda item: item[1].start):
            self.blocks.append((name, len(ids)))
            if name in ("discard", "declare"):
                heads[name] = nn.Linear(c, 1)
            elif name == "meld":
                rules = game_spec(game).melds
                templates = template_index(rules.ace_high, rules.max_jokers).templates
                incidence = torch.zeros(len(templates), NUM_TYPES)
                for t, template in enumerate(templates):
                    for card in template.cards:
                        incidence[t, card] += 1.0 / len(template.cards)
                self.register_buffer("template_cards", incidence, persistent=False)
                heads["meld"] = nn.Linear(c, 1)
                self.template_bias = nn.Parameter(torch.zeros(len(templates)))
            elif name == "place_joker_low":  # römi: a joker laid off at a run's low end (R5)
                self.joker_low_bias = nn.Parameter(torch.zeros(1))
            elif name == "place":
                heads["place_card"] = nn.Linear(c, 16)
                heads["place_slot"] = nn.Linear(NUM_TYPES, 16)
                heads["place"] = nn.Linear(c, 1)
        self.heads = nn.ModuleDict(heads)
        special = ("discard", "declare", "meld", "place", "place_joker_low")
        small = sum(size for name, size in self.blocks if name not in special)
        self.small_head = nn.Linear(g + c, small)
        with torch.no_grad():  # start near uniform over the legal actions
            for head in self.heads.values():
                head.weight.mul_(0.01)
            self.small_head.weight.mul_(0.01)

    @property
    def model_config(self) -> dict:
        """What rebuilds this network (stored in checkpoints)."""
        return {"kind": self.kind, "channels": self.channels, "global_size": self.global_size, "layout": LAYOUT,
                "rank": self.rank}

    def value_parameters(self) -> list[nn.Parameter]:
        """The value head's own parameters (what a value warm-up trains, leaving the policy as it is)."""
        return list(self.value.parameters())

    def features(self, observations: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(per-card features (B, 53, C), global summary (B, G))."""
        batch = observations.shape[0]
        planes = observations.index_select(1, self.card_major_index).view(batch, NUM_TYPES, self.num_planes)
        h = self.layer1(F.relu(self.read_planes(planes) + self.card_embedding), self.neighbours, None)
        pooled = torch.cat([h[:, :-1].mean(dim=1), h[:, -1]], dim=1)
        scalars = observations.index_select(1, self.scalar_index)
        summary = F.relu(self.global_in(torch.cat([scalars, pooled], dim=1)))
        bias = self.global_to_cards(summary)
        h = self.layer2(h, self.neighbours, bias)
        return h, summary

    def forward(self, observations: torch.Tensor, masks: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(masked logits, values) for a batch of observations and their action masks."""
        cards, summary = self.features(observations)
        batch = observations.shape[0]
        top_plane = observations.index_select(1, self.card_index[self.top_plane * NUM_TYPES:
                                                                 (self.top_plane + 1) * NUM_TYPES])
        top = torch.bmm(top_plane[:, None, :], cards).squeeze(1)  # the discard top's features
        small = self.small_head(torch.cat([summary, top], dim=1))
        parts = []
        small_at = 0
        for name, size in self.blocks:
            if name in ("discard", "declare"):
                parts.append(self.heads[name](cards).squeeze(-1))
            elif name == "meld":
                scores = self.heads["meld"](cards).squeeze(-1)
                parts.append(scores @ self.template_cards.t() + self.template_bias)
            elif name == "place":
                table = observations[:, self.table_start:self.table_start + self.slots * NUM_TYPES]
                slot_keys = self.heads["place_slot"](table.reshape(batch, self.slots, NUM_TYPES))
                card_keys = self.heads["place_card"](cards)
                pair = torch.bmm(slot_keys, card_keys.transpose(1, 2))  # (B, slots, 53)
                place = pair + self.heads["place"](cards).transpose(1, 2)
                parts.append(place.reshape(batch, -1))
            elif name == "place_joker_low":
                parts.append(place[:, :, -1] + self.joker_low_bias)  # the joker's placement score per slot
            else:
                parts.append(small[:, small_at:small_at + size])
                small_at += size
        logits = torch.cat(parts, dim=1)
        logits = logits.masked_fill(masks == 0, torch.finfo(logits.dtype).min)
        pooled = torch.cat([summary, cards.mean(dim=1), cards.amax(dim=1)], dim=1)
        return logits, self.value(pooled).squeeze(-1)
