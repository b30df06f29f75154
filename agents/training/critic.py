"""The oracle critic: a value function that also sees the other seats' hands, for training only.

PPO's advantages are only as good as its value estimates, and in these games a hand's result
depends most on what the other players hold. With ``critic: oracle`` the advantages come from
a critic that reads, beside the seat's own observation, the cards in every other hand (seat
order from the acting seat); this is centralised training with decentralised execution (the
asymmetric actor-critic of Pinto et al. 2018, the centralised critic of MAPPO). The policy
still sees only its observation, so nothing hidden reaches play: the critic is not part of the
exported policy or of any checkpoint's ``state_dict``, only of the training state. The policy
network's own value head keeps learning the same returns from the observation alone, since the
search agent and exported policies use it.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from rummy_env.cards import NUM_TYPES
from rummy_env.encoding import observation_layout, observation_size

CRITICS = ("observation", "oracle")
"""What the advantages' values come from (``critic``): the policy's own value head, or the oracle critic."""


class OracleCritic(nn.Module):
    """Value from the observation and the other seats' hand counts (an MLP)."""

    def __init__(self, game: str, num_players: int, hidden: tuple[int, ...] = (256, 256)):
        super().__init__()
        self.num_players = num_players
        width = observation_size(game, num_players) + (num_players - 1) * NUM_TYPES
        layers: list[nn.Module] = []
        for size in hidden:
            layers += [nn.Linear(width, size), nn.ReLU()]
            width = size
        self.body = nn.Sequential(*layers, nn.Linear(width, 1))

    def forward(self, observations: torch.Tensor, hidden_hands: torch.Tensor) -> torch.Tensor:
        return self.body(torch.cat([observations, hidden_hands], dim=1)).squeeze(-1)


class HiddenHands:
    """Reads the other seats' hands of chosen rows of a ``VectorGame`` (from their own observations)."""

    def __init__(self, game: str, num_players: int):
        self.num_players = num_players
        self.hand = observation_layout(game, num_players)["hand"]
        self.size = (num_players - 1) * NUM_TYPES

    def read(self, venv, rows: np.ndarray, seats: np.ndarray) -> np.ndarray:
        """``(len(rows), (players − 1) · 53)``: for each (row, seat), the hands of the seats after it."""
        out = np.zeros((len(rows), self.size), np.float32)
        for k, (i, seat) in enumerate(zip(rows.tolist(), seats.tolist())):
            for offset in range(1, self.num_players):
                other = (seat + offset) % self.num_players
                out[k, (offset - 1) * NUM_TYPES:offset * NUM_TYPES] = venv.observe(i, other)[self.hand]
        return out
