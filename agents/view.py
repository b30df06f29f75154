"""What an agent can read from its observation vector: a small decoder over ``rummy_env.encoding``.

``ObservationReader(rules).read(observation)`` returns a ``View`` with the named
parts of the vector as plain ints and count lists (card types 0..52, see ``rummy_env.cards``).
Per-player rows are relative to the observer: row 0 is the observer, row 1 the next seat to play.
Nothing here looks at a game state: everything comes from the vector.

``View``'s fields, and how each is read, come from the observation spec
(``rummy_env.obs_spec.OBSERVATION_PLANES``: each plane's ``read`` and ``view``); a plane a game
lacks leaves its fields at the spec's value for "absent".
"""

from __future__ import annotations

import copy
from dataclasses import field, make_dataclass

import numpy as np

from rummy_env.encoding import layout_for
from rummy_env.obs_spec import OBSERVATION_PLANES
from rummy_env.ruleset import RuleSet


class _ViewMethods:
    """What ``View`` computes from its fields."""

    @property
    def num_table_melds(self) -> int:
        """How many table meld slots are in use."""
        rows = np.flatnonzero(np.abs(self.table_melds).sum(axis=1))
        return 0 if rows.size == 0 else int(rows[-1]) + 1

    def seen_counts(self) -> list[int]:
        """Copies of each card type the observer can account for: own hand, the pile, the table, cut or wild card."""
        seen = [a + b + c for a, b, c in zip(self.hand, self.discard_rest, self.table_cards)]
        if self.discard_top >= 0:
            seen[self.discard_top] += 1
        if self.cut_card >= 0:
            seen[self.cut_card] += 1
        if self.wild_card >= 0:
            seen[self.wild_card] += 1
        return seen


_VIEW_FIELDS = [(name, kind, field(metadata={"doc": doc}))
                for plane in OBSERVATION_PLANES for name, kind, _, doc in plane.view]
View = make_dataclass("View", _VIEW_FIELDS, bases=(_ViewMethods,))
View.__module__ = __name__
View.__doc__ = "One observation, decoded. Fields (``rummy_env.obs_spec``):\n\n" + "\n".join(
    f"* ``{name}``: {f.metadata['doc']}" for name, _, f in _VIEW_FIELDS)


class ObservationReader:
    """Decodes the observation vectors of one table's rules (game, player count, options: RULES)."""

    def __init__(self, rules: RuleSet):
        self.game = rules.game
        self.num_players = rules.num_players
        self.rules = rules
        layout = layout_for(self.rules)
        self.slices = dict(layout.slices)
        self.max_table_melds = self.rules.spec.max_table_melds
        self.size = layout.size
        self.deck_size = 52 * self.rules.decks + self.rules.printed_jokers
        # per plane with View fields, in View's order: (slice, reader, several fields?), or, for
        # a plane this game lacks, (None, its fields' values, True): a value that is a function
        # of the reader is made by it, any other is copied for each View
        present = layout.slices
        self._program = tuple(
            (present[p.name], p.read, len(p.view) > 1) if p.name in present else (None, [f[2] for f in p.view], True)
            for p in OBSERVATION_PLANES if p.view)

    def read(self, observation: np.ndarray) -> View:
        """The named parts of ``observation`` (a vector of this game's observation size)."""
        obs = np.asarray(observation)
        if obs.shape != (self.size,):
            raise ValueError(f"observation of shape {obs.shape}: {self.game!r} with {self.num_players} players "
                             f"has ({self.size},)")
        counts = obs.astype(np.int64)  # every plane holds small whole counts
        values = []
        for part, read, several in self._program:
            if part is None:
                values += [value(self) if callable(value) else copy.copy(value) for value in read]
            elif several:
                values += read(counts, obs, part, self)
            else:
                values.append(read(counts, obs, part, self))
        return View(*values)

    def hand(self, observation: np.ndarray) -> list[int]:
        """Only the observer's hand counts (cheaper than ``read``)."""
        return observation[self.slices["hand"]].astype(np.int64).tolist()
