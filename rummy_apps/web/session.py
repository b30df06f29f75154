"""One browser's match at a web table: the engine's hands, the person's seat, agents at the others.

The server is the authority: every move is checked by ``GameState.apply`` (an illegal one is
refused with the engine's reason, naming the rule, and changes nothing), the agents see only
their seat's observation (``rummy_env.encoding``), and what goes back to the browser is
``rummy_apps.web.view.seat_view`` of the person's seat. Each game has its own lock, so its calls
run one at a time; games share no lock, and one game's slow agent (a search hint) never holds
up another game (the compiled solver's one workspace is safe to share between threads,
``rummy_env.compiled.solver``).

The deal comes from ``seed``, which the browser never sees before the match is over unless the
person asked for a practice deal (``practice``: a seed they chose, shown on the page). The
agents' seeds are a one-way hash of it (``agent_seed``), so their play leads back to no deal.
Each finished hand becomes a game record (``rummy_env.records``, the person's seat ``human``),
kept with the game and served only once the match is over (``records_text``): a record holds
the seed and the deck order, which deal the match's later hands too.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from agents.base import Agent

from rummy_env.cards import JOKER, NUM_TYPES, format_card
from rummy_env.encoding import EncodingError, ObservationEncoder, action_layout, action_mask
from rummy_env.game import DRAW, MELD, MOVE_NAMES, PLACE, PLACE_JOKER_LOW, IllegalMoveError, Move
from rummy_env.match import Match
from rummy_env.records import dumps, record_of_state
from ..play import CommandError, parse_command
from rummy_env.ruleset import RuleSet
from .archive import append_record
from .errors import WebError, shown
from .view import revealed, seat_view
from .words import cards_words, done_words, move_words, plain_reason, refusal_words, turn_words

SEAT = 0
"""The person's seat. The starting seat moves one place each hand (G6), so every seat starts in turn."""

PERSON = "human"
"""The person's seat in a game record's ``players`` (docs/records.md), as the terminal game writes it."""

LOG_SHOWN = 40
"""The hand's last moves a reply carries, each with its number in the hand (``moves_made`` counts them all)."""

_CARD_KINDS = ("discard", "declare", "place")
_SLOT_KINDS = ("place", "place_joker_low")


class WebGame:
    """A match against agents, played one JSON call at a time."""

    def __init__(self, rules: RuleSet, specs: Sequence[str], opponents: Sequence[Agent], seed: int, practice: bool,
                 hint_spec: str, make_hint: Callable[[], Agent], record_file: Path | None = None):
        if len(opponents) != rules.num_players - 1 or len(specs) != len(opponents):
            raise ValueError(f"{len(opponents)} opponents for {rules.num_players} players")
        self.rules = rules
        self.seed = seed
        self.practice = practice
        self.specs = {p: spec for p, spec in zip(self._others(), specs)}
        self.opponents = dict(zip(self._others(), opponents))
        self.names = ["you" if p == SEAT else f"player {p}" for p in range(rules.num_players)]
        self.hint_spec = hint_spec
        self._make_hint = make_hint
        self._hint_agent: Agent | None = None
        self.encoder = ObservationEncoder(rules)
        self.layout = action_layout(rules.game)
        self.match = Match(rules, seed)
        self.finished: list[dict] = []
        """Per finished hand: how it ended, who won, what it added to each total, the totals after it."""
        self.records: list[dict] = []
        """Per finished hand, its game record (docs/records.md)."""
        self.record_file = record_file
        """Where each finished hand's record is also appended (``--record-dir``), or None."""
        self.lock = threading.RLock()
        self._deal()

    def _others(self) -> list[int]:
        n = self.rules.num_players
        return [(SEAT + i) % n for i in range(1, n)]

    def _deal(self) -> None:
        self.state = self.match.deal()
        self.log: list[dict] = []
        self.turns: dict[int, list[tuple[Move, str]]] = {}
        """Per player, the moves of its latest turn with their words."""
        self.fresh_melds: set[int] = set()
        """Table slots the others laid or extended since the person's last turn."""
        self._last_mover: int | None = None
        for player, agent in self.opponents.items():
            agent.reset(seed=agent_seed(self.seed, self.match.hands_played, player))
        if self._hint_agent is not None:
            self._hint_agent.reset(seed=agent_seed(self.seed, self.match.hands_played, SEAT))

    # ------------------------------------------------------------- what the browser receives

    def snapshot(self) -> dict:
        """Everything the person's page shows: the seat's view, the match, the log, the end of the hand.

        ``seed`` is null until the match is over, unless this is a practice deal."""
        rules = self.rules
        match = self.match
        return {
            "game": rules.game, "title": rules.spec.title, "players": rules.num_players,
            "options": rules.options, "practice": self.practice,
            "seed": self.seed if self.practice or match.is_over else None, "seat": SEAT,
            "names": list(self.names),
            "specs": [self.specs.get(p) for p in range(rules.num_players)], "hint_by": self.hint_spec,
            "hand_number": match.hands_played + (0 if self.state.is_over else 1),
            "match": {"totals": list(match.totals), "target": rules.match_target,
                      "lowest_wins": rules.low_total_wins, "over": match.is_over, "winners": match.winners,
                      "rule": rules.spec.rule_ids.match, "payment_rule": rules.spec.rule_ids.payment},
            "finished": self.finished,
            "view": seat_view(self.state, SEAT),
            "last_turns": [turn_words(self.turns[p]) if p in self.turns else None for p in range(rules.num_players)],
            "fresh_melds": sorted(self.fresh_melds),
            "log": self.log[-LOG_SHOWN:],
            "moves_made": len(self.log),
            "result": revealed(self.state),
        }

    def records_text(self) -> str:
        """The match's finished hands as JSON Lines, once the match is over; before, a 409 saying why."""
        with self.lock:
            if not self.match.is_over:
                raise WebError(409, f"the records are served once the match is over "
                                    f"({self.rules.spec.rule_ids.match}): a record holds the deal's seed and "
                                    f"deck order, which would show the cards of the hands still to come")
            return "".join(dumps(record) + "\n" for record in self.records)

    # ------------------------------------------------------------- the person's moves

    def play(self, request: dict) -> dict:
        """The person's move (an action id, or a move by kind and cards); the event it made."""
        with self.lock:
            self._check_playing()
            state = self.state
            if state.current != SEAT:
                raise WebError(409, f"it is not your turn: {self.names[state.current]} is to act "
                                    f"(POST /api/games/ID/opponent plays their move)")
            move = self._requested_move(request)
            before = state.hands[SEAT][:]
            said = done_words(state, move) if move in state.legal_moves() else ""
            try:
                state.apply(move)
            except IllegalMoveError as error:
                raise WebError(409, refusal_words(state, move, str(error), self.names), refused=True) from None
            if move[0] == DRAW:
                drawn = next(c for c in range(NUM_TYPES) if state.hands[SEAT][c] > before[c])
                said = done_words(state, move, drawn)
            return self._record(SEAT, move, said)

    def _requested_move(self, request: dict) -> Move:
        """The engine move a request names; a request that names none is a 400 saying why."""
        if "action" in request:
            if set(request) != {"action"}:
                raise WebError(400, "a move is {\"action\": ID} or {\"kind\": ...}, not both")
            action = request["action"]
            if isinstance(action, bool) or not isinstance(action, int):
                raise WebError(400, f"action {shown(action)} is not an int: expected an action id the view lists")
            try:
                return self.layout.move(action)
            except EncodingError as error:
                raise WebError(400, str(error)) from None
        kind = request.get("kind")
        if kind not in MOVE_NAMES:
            raise WebError(400, f"a move needs \"action\" (an id) or \"kind\", one of {', '.join(MOVE_NAMES)}; "
                                f"got {shown(kind)}")
        wanted = {"kind"} | ({"card"} if kind in _CARD_KINDS else set()) | (
            {"slot"} if kind in _SLOT_KINDS else set()) | ({"cards"} if kind == "meld" else set())
        if set(request) != wanted:
            raise WebError(400, f"a {kind} move has the fields {sorted(wanted)}, not {sorted(request)}")
        if kind == "meld":
            return self._meld_move(request["cards"])
        card = _card(request["card"]) if "card" in request else 0
        slot = request.get("slot", 0)
        if isinstance(slot, bool) or not isinstance(slot, int):
            raise WebError(400, f"slot {shown(slot)} is not an int: expected a table meld's number")
        index = MOVE_NAMES.index(kind)
        move = (index, slot, 0) if index == PLACE_JOKER_LOW else (index, card, slot)
        try:
            self.layout.action(move)
        except EncodingError as error:
            raise WebError(400, str(error)) from None
        return move

    def _meld_move(self, cards) -> Move:
        """The meld template standing for ``cards`` (the terminal game's ``meld`` command reads them)."""
        if not isinstance(cards, list) or not cards:
            raise WebError(400, f"cards {shown(cards)}: expected a list of card types (0..52)")
        cards = [_card(c) for c in cards]
        try:
            _, move = parse_command(self.state, "meld " + " ".join(format_card(c) for c in cards))
        except CommandError as error:
            raise WebError(409, f"you cannot meld {cards_words(cards)}: {plain_reason(str(error), self.names)}",
                           refused=True) from None
        return move

    def hint(self) -> dict:
        """The hint agent's choice for the person now: its action id and words."""
        with self.lock:
            self._check_playing()
            state = self.state
            if state.current != SEAT:
                raise WebError(409, f"a hint is for your turn: {self.names[state.current]} is to act")
            if self._hint_agent is None:
                self._hint_agent = self._make_hint()
                self._hint_agent.reset(seed=agent_seed(self.seed, self.match.hands_played, SEAT))
            mask = action_mask(state)
            action = int(self._hint_agent.act(self.encoder.encode(state, SEAT, self.match.totals), mask))
            move = self.layout.move(action)
            return {"action": action, "text": move_words(state, move), "by": self.hint_spec}

    # ------------------------------------------------------------- the agents' moves

    def opponent_move(self) -> dict:
        """One move of the agent to act; the event it made."""
        with self.lock:
            self._check_playing()
            state = self.state
            player = state.current
            if player == SEAT:
                raise WebError(409, "it is your turn: no opponent is to act")
            mask = action_mask(state)
            action = int(self.opponents[player].act(self.encoder.encode(state, player, self.match.totals), mask))
            if not (0 <= action < mask.size and mask[action]):
                raise RuntimeError(f"{self.names[player]} chose action {action}, which the rules do not allow now")
            move = self.layout.move(action)
            said = done_words(state, move)
            state.apply(move)
            return self._record(player, move, said)

    # ------------------------------------------------------------- hands and the match

    def next_hand(self) -> None:
        """Deal the match's next hand (G6) once this one is over."""
        with self.lock:
            if not self.state.is_over:
                raise WebError(409, "the hand is still being played: the next hand comes when it is over")
            if self.match.is_over:
                raise WebError(409, f"the match is over ({self.rules.spec.rule_ids.match}): start a new match "
                                    f"(POST /api/games)")
            self._deal()

    def _check_playing(self) -> None:
        if not self.state.is_over:
            return
        if self.match.is_over:
            raise WebError(409, f"the hand and the match are over ({self.rules.spec.rule_ids.match}): start a new "
                                f"match (POST /api/games)")
        raise WebError(409, "the hand is over: ask for the next hand (POST /api/games/ID/next)")

    def _record(self, player: int, move: Move, words: str) -> dict:
        """Log ``player``'s move, keep it in its turn, mark the melds it laid or extended, and close a finished hand."""
        event = {"number": len(self.log) + 1, "seat": player, "name": self.names[player], "text": words}
        self.log.append(event)
        if player != self._last_mover:  # a new turn
            if self._last_mover == SEAT:
                self.fresh_melds.clear()
            self.turns[player] = []
            self._last_mover = player
        self.turns[player].append((move, words))
        if player != SEAT and move[0] in (MELD, PLACE, PLACE_JOKER_LOW):
            kind, a, b = move
            self.fresh_melds.add(len(self.state.table) - 1 if kind == MELD else a if kind == PLACE_JOKER_LOW else b)
        if self.state.is_over:
            before = list(self.match.totals)
            result = self.state.result
            self.match.record(result)
            self.finished.append({"hand": self.match.hands_played, "outcome": result.outcome, "winner": result.winner,
                                  "added": [after - was for after, was in zip(self.match.totals, before)],
                                  "totals": list(self.match.totals)})
            self._keep_record()
        return event

    def _keep_record(self) -> None:
        """The finished hand's game record, kept with the game (and appended to ``record_file``)."""
        players = [PERSON if p == SEAT else self.specs[p] for p in range(self.rules.num_players)]
        record = record_of_state(self.state, players, {"program": "web", "hand": self.match.hands_played})
        self.records.append(record)
        if self.record_file is not None:
            append_record(self.record_file, record)


def agent_seed(seed: int, hand: int, player: int) -> int:
    """The seed of ``player``'s agent in hand ``hand`` of the match dealt from ``seed``: a one-way hash,
    so an agent's play (a random agent's draws, say) tells nothing of the deal's seed."""
    digest = hashlib.blake2b(f"web:{seed}:{hand}:{player}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def _card(value) -> int:
    """A card type from the browser (0..52), or a 400 naming the bad value."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= JOKER:
        raise WebError(400, f"card {shown(value)}: expected a card type 0..52 (suit * 13 + rank, 52 the joker)")
    return value

