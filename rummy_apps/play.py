"""Play a hand or a match of any of the three games in the terminal, against agents.

    python -m rummy_apps.play --game indian --opponents rule
    python -m rummy_apps.play --game romi --opponents pretrained:romi --match --seed 7
    python -m rummy_apps.play --game basic --opponents onnx:basic.onnx --players 3
    python -m rummy_apps.play --game indian --players 6 --opponents rule rule random rule search --seat 2

You sit in seat 0 (``--seat``) at a table of ``--players`` (within the game's range, I1, B1,
R1); ``--opponents`` names one agent spec per other seat, in seat order
after yours (one spec fills them all): ``random``, ``rule``, ``search``, ``ppo:PATH``,
``onnx:PATH``, ``sb3:PATH.zip``, ``pretrained:GAME`` (the policy shipped for the table's player
count; ``agents.registry``), ``PATH.py:NAME`` (an agent of your own, docs/agents.md). A spec
that cannot play at this table (a checkpoint or policy for
another game or player count, a count with no shipped policy) stops the program before any hand,
naming the seat, the file and what the table needs. The screen shows your hand sorted with the melds of its
best arrangement in brackets, the discard top, the table melds with their slot numbers (B3, R5),
the cut card (R2) or wild joker (I2), the other hands' sizes and known cards (taken from the
discard pile, G7), the stock, the scores and each other player's last move.

Commands (cards in RULES G2 notation: ``Qh``, ``10d``, ``Q♠``, ``*``; a joker in a meld may name
the card it stands for, ``*=6h``):

==========================  ================================================================
``draw``                    take the stock top (I4, B3, R4)
``take``                    take the discard top (G7; römi after the first turn: R4)
``discard Qh``              discard a card, ending the turn (G7, B3, R6)
``declare Kd``              Indian: discard Kd and declare (I5)
``meld 5h 6h 7h``           lay a meld from the hand (B3, R5), e.g. ``meld 9s 9h *``
``lay 8h on 3``             lay off a card on table meld 3 (B3, R5); ``lay * on 3 low``: a
                            joker at the low end of a run (R5)
``swap 9d on 2``            römi: give 9d for the joker standing for it on table meld 2 (R5)
``cut``                     römi: take the cut card and go out (R4)
``moves``                   list every legal command now
``hint``                    the rule agent's choice, and the hand's best arrangement and penalty
``help``, ``quit``          this list; leave (end of input leaves too)
==========================  ================================================================

``--record FILE`` saves each finished hand as a game record (docs/records.md) and says so after
the hand. A command the rules forbid is explained (with the rule that forbids it) and changes nothing; any
other text gets a short explanation. The front-end sits above ``agents`` (``docs/design.md``,
"Layers"): ``ppo:`` imports torch when asked for; the others do not.
"""

from __future__ import annotations

import argparse
import sys
import traceback
import zlib
from collections.abc import Callable, Sequence

from agents.base import AgentError
from agents.registry import make_agent
from agents.rule_agent import RuleAgent
from rummy_env.cards import JOKER, NUM_TYPES, CardError, format_card, parse_card, sort_key, suit_of
from rummy_env.encoding import ObservationEncoder, action_layout, action_mask
from rummy_env.game import (
    DECLARE, DISCARD, DRAW, MELD, PHASE_DRAW, PLACE, PLACE_JOKER_LOW, TAKE_CUT, TAKE_DISCARD, GameState, Move,
)
from rummy_env.match import Match
from rummy_env.melds import table_meld_cards
from rummy_env.records import RecordFile, record_of_state
from rummy_env.render import hand_arrangements
from rummy_env.ruleset import GAMES, RuleSet, make_ruleset, option_argument
from rummy_env.table import template_index

HELP = [
    ("draw", "take the stock top (I4, B3, R4)"),
    ("take", "take the discard top (G7; römi after your first turn only to place it at once, R4)"),
    ("discard Qh", "discard a card, ending your turn (G7, B3, R6)"),
    ("declare Kd", "Indian: discard Kd and declare with the other 13 cards in melds (I5)"),
    ("meld 5h 6h 7h", "lay a meld from your hand (B3, R5); a joker is * or *=6h (the card it stands for)"),
    ("lay 8h on 3", "lay off a card on table meld 3 (B3; römi once you have opened, R5); "
                    "lay * on 3 low puts a joker at a run's low end (R5)"),
    ("swap 9d on 2", "römi: give 9d for the joker standing for it on table meld 2, then place the joker (R5)"),
    ("cut", "römi: take the cut card and go out with it (R4)"),
    ("moves", "list every legal command now"),
    ("hint", "the rule agent's choice, and your hand's best arrangement and penalty"),
    ("help", "this list"),
    ("quit", "leave the game (end of input leaves too)"),
]
VERBS = tuple(command.split()[0] for command, _ in HELP)
MAX_COMMAND = 200


class Quit(Exception):
    """The player left (``quit`` or end of input)."""


# ----------------------------------------------------------------------------- cards and moves as text


def card_markup(card: int, stands_for: int | None = None) -> tuple[str, str]:
    """(text, rich style) of one card in G2 notation: hearts and diamonds red, jokers magenta."""
    text = format_card(card)
    if card == JOKER:
        return (text if stands_for is None else f"*={format_card(stands_for)}"), "magenta"
    return text, "red" if suit_of(card) in (1, 2) else ""


def _joker_stands_for(meld: list, card: int) -> bool:
    return any(physical == JOKER and stands == card for stands, physical in table_meld_cards(meld))


def command_text(state: GameState, move: Move) -> str:
    """The command that plays ``move`` for the player to act (the words ``moves`` lists)."""
    kind, a, b = move
    if kind == DRAW:
        return "draw"
    if kind == TAKE_DISCARD:
        return "take"
    if kind == TAKE_CUT:
        return "cut"
    if kind == DISCARD:
        return f"discard {format_card(a)}"
    if kind == DECLARE:
        return f"declare {format_card(a)}"
    if kind == MELD:
        rules = state.rules
        hand = state.hands[state.current]
        cards = template_index(rules.ace_high, rules.max_jokers).templates[a].cards
        return "meld " + " ".join(format_card(c) if hand[c] else f"*={format_card(c)}" for c in cards)
    if kind == PLACE:
        verb = "swap" if a != JOKER and b < len(state.table) and _joker_stands_for(state.table[b], a) else "lay"
        return f"{verb} {format_card(a)} on {b}"
    if kind == PLACE_JOKER_LOW:
        return f"lay * on {a} low"
    return repr(move)


def owed_cards(state: GameState) -> list[int]:
    """Cards the player to act must put on the table this turn (R4: the discard top taken; R5: jokers swapped)."""
    owed = [] if state.owed_card == -1 else [state.owed_card]
    return owed + [JOKER] * state.owed_jokers


class CommandError(ValueError):
    """Text that is not a command, or a command the rules refuse now; the message says why."""


def _cards(tokens: Sequence[str]) -> list[tuple[int, int | None]]:
    """(physical card, the card a joker stands for or None) per token; bad G2 text names the token."""
    out = []
    for token in tokens:
        if token.startswith("*="):
            stands = parse_card(token[2:])
            if stands == JOKER:
                raise CardError(f"bad card {token!r}: a joker stands for a natural card, like *=6h")
            out.append((JOKER, stands))
        else:
            out.append((parse_card(token), None))
    return out


def _check_held(state: GameState, cards: Sequence[int]) -> None:
    hand = state.hands[state.current]
    for card in set(cards):
        wanted, held = cards.count(card), hand[card]
        if wanted > held:
            name = "joker" if card == JOKER else format_card(card)
            if held == 0:
                raise CommandError(f"you hold no {name}")
            raise CommandError(f"you hold {held} {name}, not {wanted}")


def _meld_move(state: GameState, tokens: Sequence[str]) -> Move:
    rules = state.rules
    if not rules.table_melds:
        raise CommandError("Indian Rummy lays no melds on the table: declare when your hand is arranged (I5, I9)")
    if len(tokens) < 3:
        raise CommandError("a meld has at least 3 cards, e.g. meld 5h 6h 7h (G3, G4)")
    typed = _cards(tokens)
    _check_held(state, [physical for physical, _ in typed])
    named = [physical if physical != JOKER else stands for physical, stands in typed]
    fixed = [c for c in named if c is not None]
    if len(set(fixed)) != len(fixed):
        raise CommandError(f"{' '.join(tokens)} names a card twice: a meld never holds two identical cards (G3, G4)")
    index = template_index(rules.ace_high, rules.max_jokers)
    candidates = [t for t, template in enumerate(index.templates)
                  if len(template.cards) == len(typed) and set(fixed) <= set(template.cards)]
    if not candidates:
        raise CommandError(f"{' '.join(tokens)} is not a meld: a set is 3 or 4 cards of one rank in different "
                           f"suits (G3), a run 3 or more cards in a row of one suit (G4"
                           f"{', ace low only: B2' if not rules.ace_high else ''})")
    legal = set(state.legal_moves())
    playable = [t for t in candidates if (MELD, t, 0) in legal]
    if len(playable) > 1:  # a run typed low to high with bare jokers: read the jokers' places from the order
        in_order = [t for t in playable
                    if all(c is None or c == want for c, want in zip(named, index.templates[t].cards))]
        playable = in_order or playable
    if len(playable) == 1:
        return (MELD, playable[0], 0)
    if playable:
        options = "; ".join(command_text(state, (MELD, t, 0)) for t in playable)
        raise CommandError(f"which meld? say where the jokers stand: {options}")
    raise CommandError(state.why_illegal((MELD, candidates[0], 0)))


def _place_move(state: GameState, verb: str, tokens: Sequence[str]) -> Move:
    words = [t for t in tokens if t.lower() != "on"]
    end = words.pop().lower() if len(words) == 3 and words[-1].lower() in ("low", "high") else None
    if len(words) != 2:
        raise CommandError(f"{verb} needs a card and a table meld number, e.g. {verb} 8h on 3"
                           + (" (a joker may add low or high: lay * on 3 low)" if verb == "lay" else ""))
    (card, stands), = _cards(words[:1])
    if stands is not None:
        raise CommandError(f"{verb} takes a card, not {words[0]!r}: e.g. {verb} * on 3")
    try:
        slot = int(words[1])
    except ValueError:
        raise CommandError(f"table meld {words[1]!r} is not a number: the table shows each meld's number") from None
    if end is not None and (verb != "lay" or card != JOKER):
        raise CommandError(f"only a joker laid off names a run's end (R5): lay * on {slot} {end}")
    move = (PLACE, card, slot)
    if not state.rules.table_melds:
        raise CommandError(state.why_illegal(move))
    if verb == "swap" and 0 <= slot < len(state.table) and not _joker_stands_for(state.table[slot], card):
        raise CommandError(f"no joker on table meld {slot} stands for {format_card(card)}: a swap gives the card "
                           f"a joker stands for (R5); to add a card to a meld, use lay")
    if card == JOKER:
        low = (PLACE_JOKER_LOW, slot, 0)
        legal = state.legal_moves()
        if end == "low" or (end is None and move not in legal and low in legal):
            return low
    return move


def parse_command(state: GameState, text: str) -> tuple[str, Move | None]:
    """(verb, move) for a line of input; a move only for the playing verbs. Bad text raises ``CommandError``."""
    tokens = text.split()
    if not tokens:
        raise CommandError("type a command, or help")
    verb, rest = tokens[0].lower(), tokens[1:]
    if verb in ("help", "?", "moves", "hint", "quit", "exit"):
        if rest:
            raise CommandError(f"{verb} takes nothing after it")
        return ("quit" if verb == "exit" else "help" if verb == "?" else verb), None
    try:
        if verb in ("draw", "take", "cut"):
            if rest:
                pile = {"draw": "the stock's top", "take": "the discard top", "cut": "the cut card"}[verb]
                raise CommandError(f"{verb} takes nothing after it: the card is {pile}")
            return verb, {"draw": (DRAW, 0, 0), "take": (TAKE_DISCARD, 0, 0), "cut": (TAKE_CUT, 0, 0)}[verb]
        if verb in ("discard", "declare"):
            if len(rest) != 1:
                raise CommandError(f"{verb} needs one card, e.g. {verb} Kd")
            (card, stands), = _cards(rest)
            if stands is not None:
                raise CommandError(f"{verb} takes a card, not {rest[0]!r}")
            return verb, (DISCARD if verb == "discard" else DECLARE, card, 0)
        if verb == "meld":
            return verb, _meld_move(state, rest)
        if verb in ("lay", "swap"):
            return verb, _place_move(state, verb, rest)
    except CardError as error:
        raise CommandError(f"{error} (G2 notation: rank A 2-9 T J Q K, suit s h d c)") from None
    raise CommandError(f"unknown command {tokens[0][:30]!r}: expected one of {', '.join(VERBS)}")


# ----------------------------------------------------------------------------- the session


class PlaySession:
    """One person at a table of agents: reads commands, shows the screen, plays a hand or a match."""

    def __init__(self, rules: RuleSet, opponents: Sequence, console, read_line: Callable[[str], str | None],
                 seat: int = 0, match: bool = False, seed: int | str = 0, names: Sequence[str] | None = None,
                 record: RecordFile | None = None):
        if len(opponents) != rules.num_players - 1:
            raise ValueError(f"{len(opponents)} opponents for {rules.num_players} players")
        self.rules = rules
        self.console = console
        self.read_line = read_line
        self.seat = seat
        self.match = match
        self.seed = seed
        others = [(seat + i) % rules.num_players for i in range(1, rules.num_players)]
        self.agents = dict(zip(others, opponents))
        labels = list(names) if names is not None else [getattr(a, "name", "agent") for a in opponents]
        self.names = {seat: "you"} | {p: f"player_{p} ({label})" for p, label in zip(others, labels)}
        self.record = record
        """Where each finished hand is saved as a game record (docs/records.md), or None."""
        self.players = [labels[others.index(p)] if p != seat else "human" for p in range(rules.num_players)]
        self.encoder = ObservationEncoder(rules)
        self.moves = action_layout(rules.game).moves
        self.last_moves: dict[int, str] = {}
        self._hint_agent = None
        self.state: GameState | None = None
        """The hand being played (for callers that script the input)."""

    # ------------------------------------------------------------- output

    def say(self, text: str = "", style: str = "") -> None:
        from rich.text import Text

        self.console.print(Text(text, style=style))

    def cards(self, cards, brackets: bool = False):
        from rich.text import Text

        out = Text()
        if brackets:
            out.append("[")
        for i, card in enumerate(cards):
            if i:
                out.append(" ")
            out.append(*card_markup(card))
        if brackets:
            out.append("]")
        return out

    def arranged(self, state: GameState, player: int):
        """(rich text of the hand sorted, melds of its best arrangement first, in brackets; penalty)."""
        from rich.text import Text

        arranged = hand_arrangements(state, player)
        if arranged is not None:
            best, shown = arranged
            melds, loose, penalty = shown.melds, sorted(shown.deadwood, key=sort_key), best.penalty
        else:
            melds, loose, penalty = (), sorted(state.hand_cards(player), key=sort_key), None
        text = Text()
        for meld in melds:
            text.append_text(self.cards(meld, brackets=True))
            text.append(" ")
        text.append_text(self.cards(loose))
        return text, penalty

    def penalty_words(self, state: GameState, player: int, penalty: int | None) -> str:
        rules = state.rules
        rule = rules.spec.rule_ids.payment
        if penalty is None:
            return ""
        if rules.spec.lives:
            return f"penalty {penalty} ({rule})"
        if rules.unopened_penalty is not None and not state.opened[player]:
            return (f"cards {penalty}; pays {rules.unopened_penalty} without a meld of one's own "
                    f"on the table ({rule})")
        return f"cards worth {penalty} ({rule})"

    def show(self, state: GameState, totals: Sequence[int] | None, hand_number: int) -> None:
        """The screen for the person's decision."""
        from rich.table import Table
        from rich.text import Text

        rules = state.rules
        phase = "draw" if state.phase == PHASE_DRAW else "play"
        title = f"{rules.spec.title} · hand {hand_number} · turn {state.turn} · your turn to {phase}"
        self.console.rule(title)
        line = Text("discard top ")
        if state.discard:
            line.append(*card_markup(state.discard[-1]))
        else:
            line.append("none")
        line.append(f" ({len(state.discard)} in the pile) · stock {len(state.stock)}")
        if state.cut_card != -1:
            line.append(" · cut card ")
            line.append(*card_markup(state.cut_card))
        if state.wild_card != -1:
            line.append(" · wild joker ")
            line.append(*card_markup(state.wild_card))
            line.append(" (its rank is wild, I2)")
        owed = owed_cards(state)
        if owed:
            line.append(" · you must place ")
            line.append_text(self.cards(owed))
            line.append(" this turn (R4, R5)")
        if state.taken_card != -1:
            line.append(" · just taken ")
            line.append(*card_markup(state.taken_card))
            line.append(" (not to be discarded, G7)")
        self.console.print(line)
        if rules.table_melds:
            if not state.table:
                self.say("table: no melds yet")
            for slot, meld in enumerate(state.table):
                row = Text(f"  table {slot:2d}: ")
                for i, (stands, physical) in enumerate(table_meld_cards(meld)):
                    if i:
                        row.append(" ")
                    row.append(*card_markup(physical, stands if physical == JOKER else None))
                self.console.print(row)
        players = Table(show_edge=False, box=None, pad_edge=False)
        for column in ("player", "cards", "known cards", "last move") + (("total",) if totals is not None else ()):
            players.add_column(column)
        for p in range(rules.num_players):
            if p == self.seat:
                continue
            known = [c for c in range(NUM_TYPES) for _ in range(state.known[p][c])]
            size = f"{sum(state.hands[p])}" + (" (opened)" if rules.table_melds and state.opened[p] else "")
            row = [self.names[p], size, self.cards(sorted(known, key=sort_key)) if known else "-",
                   self.last_moves.get(p, "-")]
            players.add_row(*row, *((str(totals[p]),) if totals is not None else ()))
        self.console.print(players)
        if totals is not None:
            self.say(f"your total {totals[self.seat]} · match to {rules.match_target} "
                     f"({'lowest' if rules.low_total_wins else 'highest'} total wins)")
        hand, _ = self.arranged(state, self.seat)
        line = Text("your hand: ")
        line.append_text(hand)
        self.console.print(line)

    def show_moves(self, state: GameState) -> None:
        self.say("legal commands:")
        for move in state.legal_moves():
            self.say(f"  {command_text(state, move)}")

    def show_help(self) -> None:
        self.say("commands (cards in G2 notation: Qh, 10d, Q♠, *):")
        for command, meaning in HELP:
            self.say(f"  {command:<16} {meaning}")

    def show_hint(self, state: GameState, totals: Sequence[int] | None) -> None:
        hand, penalty = self.arranged(state, self.seat)
        if self._hint_agent is None:
            self._hint_agent = RuleAgent(self.rules)
        observation = self.encoder.encode(state, self.seat, totals)
        action = self._hint_agent.act(observation, action_mask(state))
        self.say(f"the rule agent would: {command_text(state, self.moves[action])}")
        line = self.cards([])
        line.append("best arrangement: ")
        line.append_text(hand)
        line.append(f" · {self.penalty_words(state, self.seat, penalty)}")
        self.console.print(line)

    def show_end(self, state: GameState) -> None:
        from rich.table import Table

        result = state.result
        if result.outcome in ("declare", "out"):
            how = "declared (I5)" if result.outcome == "declare" else "went out"
            self.console.rule(f"hand over: {self.names[result.winner]} {how}")
        elif result.outcome == "stalemate":
            self.console.rule("hand over: stalemate, the stock ran out twice; nobody scores (G8)")
        else:
            self.console.rule(f"hand over: cut off after {state.turn} turns; nobody scores (G9)")
        table = Table(show_edge=False, box=None, pad_edge=False)
        for column in ("player", "hand (melds in brackets)", "pays", "points"):
            table.add_column(column)
        for p in range(self.rules.num_players):
            hand, _ = self.arranged(state, p)
            table.add_row(self.names[p], hand, str(result.payments[p]), f"{result.rewards[p]:+d}")
        self.console.print(table)

    def show_totals(self, match: Match) -> None:
        from rich.table import Table

        table = Table(title=f"match after {match.hands_played} hands (to {self.rules.match_target})")
        table.add_column("player")
        table.add_column("total", justify="right")
        for p, total in enumerate(match.totals):
            table.add_row(self.names[p], str(total))
        self.console.print(table)
        if match.is_over:
            winners = ", ".join(self.names[p] for p in match.winners)
            rule = self.rules.spec.rule_ids.match
            verb = "win" if len(match.winners) > 1 or winners == "you" else "wins"
            self.say(f"match over: {winners} {verb} ({rule})",
                     "bold")

    # ------------------------------------------------------------- playing

    def read(self, prompt: str) -> str:
        line = self.read_line(prompt)
        if line is None:
            raise Quit
        return line

    def opponent_move(self, state: GameState, totals: Sequence[int] | None) -> None:
        player = state.current
        agent = self.agents[player]
        observation = self.encoder.encode(state, player, totals)
        mask = action_mask(state)
        action = agent.act(observation, mask)
        if not (0 <= action < mask.size and mask[action]):
            raise RuntimeError(f"{self.names[player]} chose action {action!r}, which the rules do not allow now")
        move = self.moves[action]
        words = command_text(state, move)
        state.apply(move)
        self.last_moves[player] = words
        self.say(f"{self.names[player]}: {words}", "dim")

    def human_command(self, state: GameState, totals: Sequence[int] | None) -> bool:
        """Read and carry out one command; True when it changed the game."""
        text = self.read("> ")
        if len(text) > MAX_COMMAND:
            self.say(f"that is {len(text)} characters long: a command is a word and a few cards; try help", "yellow")
            return False
        try:
            verb, move = parse_command(state, text)
        except CommandError as error:
            self.say(str(error), "yellow")
            return False
        except Exception:  # noqa: BLE001 - no typed text may end the game with a traceback
            self.say("could not read that command; try help", "yellow")
            return False
        if verb == "quit":
            raise Quit
        if verb == "help":
            self.show_help()
        elif verb == "moves":
            self.show_moves(state)
        elif verb == "hint":
            self.show_hint(state, totals)
        elif move not in state.legal_moves():
            self.say(f"refused: {state.why_illegal(move)}", "yellow")
        else:
            words = command_text(state, move)
            before = state.hands[self.seat][:]
            state.apply(move)
            self.last_moves[self.seat] = words
            if move[0] == DRAW:
                drawn = [c for c in range(NUM_TYPES) if state.hands[self.seat][c] > before[c]]
                self.say(f"you drew {' '.join(map(format_card, drawn))}")
            return True
        return False

    def play_hand(self, state: GameState, totals: Sequence[int] | None, hand_number: int) -> None:
        for player, agent in self.agents.items():
            agent.reset(seed=zlib.crc32(f"play:{self.seed}:{hand_number}:{player}".encode()))
        self.last_moves.clear()
        self.state = state
        shown = None
        while not state.is_over:
            if state.current != self.seat:
                self.opponent_move(state, totals)
                continue
            key = len(state.history)
            if shown != key:
                self.show(state, totals, hand_number)
                shown = key
            self.human_command(state, totals)
        self.show_end(state)
        if self.record is not None:
            line = self.record.write(record_of_state(state, self.players, {"program": "play", "hand": hand_number}))
            self.say(f"hand {hand_number} saved to {self.record.path}, line {line} (docs/records.md)", "dim")

    def run(self) -> int:
        """Play the hand (or the match); 0 when it ends or the person leaves."""
        try:
            if not self.match:
                self.play_hand(GameState(self.rules, self.seed, 0), None, 1)
                return 0
            match = Match(self.rules, self.seed)
            while not match.is_over:
                state = match.deal()
                self.play_hand(state, match.totals, match.hands_played + 1)
                match.record(state.result)
                self.show_totals(match)
                if not match.is_over and self.read("press Enter for the next hand, or type quit ").strip().lower() in (
                        "quit", "exit"):
                    raise Quit
        except Quit:
            self.say("bye")
        except Exception as error:  # noqa: BLE001 - an agent's failure ends the game with a message, not a traceback
            self.say(f"the game stopped: {type(error).__name__}: {error}", "red")
            if error.__cause__ is not None:  # a plug-in agent's own exception: its traceback, to mend it by
                self.say("".join(traceback.format_exception(error.__cause__)).rstrip(), "dim")
            return 1
        return 0


# ----------------------------------------------------------------------------- command line


def _stream_reader(stream, console) -> Callable[[str], str | None]:
    """Lines from ``stream`` (None at its end); ``input()`` with line editing when it is a terminal."""
    interactive = stream is sys.stdin and stream.isatty()

    def read(prompt: str) -> str | None:
        if interactive:
            try:
                return input(prompt)
            except (EOFError, KeyboardInterrupt):
                print()
                return None
        console.print(prompt, end="")
        try:
            line = stream.readline()
        except (UnicodeDecodeError, ValueError):
            return "\ufffd"
        if not line:
            console.print()
            return None
        console.print(line.rstrip("\r\n"), markup=False, highlight=False)
        return line.rstrip("\r\n")

    return read


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m rummy_apps.play",
        description="Play Indian Rummy, Basic Rummy or Indiai römi in the terminal against agents. Commands "
                    "(cards in RULES G2 notation): " + "; ".join(c for c, _ in HELP) + ".",
        epilog="Examples:\n  python -m rummy_apps.play --game indian --opponents rule\n"
               "  python -m rummy_apps.play --game romi --opponents rule random --match --seed 7\n"
               "  python -m rummy_apps.play --game indian --players 6 --opponents rule rule random rule search\n"
               "  python -m rummy_apps.play --game basic --opponents pretrained:basic",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--game", required=True, choices=GAMES, help="the game (RULES I, B, R)")
    parser.add_argument("--opponents", nargs="+", default=["rule"], metavar="SPEC",
                        help="agent specs, one per other seat in seat order after yours, or one for all: random, "
                             "rule, search, ppo:PATH, onnx:PATH, sb3:PATH.zip, pretrained:GAME (the policy shipped "
                             "for the table's player count), PATH.py:NAME (your own agent) (default: rule)")
    parser.add_argument("--players", type=int,
                        help="players at the table (default: 2, or one per opponent given + you)")
    parser.add_argument("--seat", type=int, default=0,
                        help="your seat (default 0: you play first in the first hand, G6)")
    parser.add_argument("--match", action="store_true",
                        help="play a match (I8 400, B6 100, R8 250 points) instead of one hand")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deal (G10) and of the agents (default 0)")
    parser.add_argument("--option", action="append", default=[], type=option_argument, metavar="KEY=VALUE",
                        help="a rule option (RULES), e.g. wild_joker=true; repeatable")
    parser.add_argument("--width", type=int, help="screen width in characters (default: the terminal's)")
    parser.add_argument("--record", metavar="FILE.jsonl",
                        help="save each finished hand to FILE as a game record (JSON Lines, docs/records.md); "
                             "the line is named after each hand")
    return parser


def main(argv: Sequence[str] | None = None, stdin=None, stdout=None) -> int:
    """Run the terminal game; the exit status (0, or 2 for a bad command line)."""
    from rich.console import Console

    parser = build_parser()
    args = parser.parse_args(argv)
    specs = list(args.opponents)
    players = args.players if args.players is not None else (len(specs) + 1 if len(specs) > 1 else 2)
    try:
        rules = make_ruleset(args.game, players, **dict(args.option))
    except ValueError as error:
        parser.exit(2, f"play: error: {error}\n")
    if len(specs) == 1:
        specs *= players - 1
    if len(specs) != players - 1:
        parser.exit(2, f"play: error: {len(args.opponents)} opponents for {players} players: "
                       f"give one spec for every other seat ({players - 1}), or one for all\n")
    if not 0 <= args.seat < players:
        parser.exit(2, f"play: error: --seat {args.seat}: expected 0..{players - 1}\n")
    opponents = []
    for i, spec in enumerate(specs):
        try:
            opponents.append(make_agent(spec, rules, seed=args.seed + i + 1))
        except AgentError as error:  # the seat as the screen names it (PlaySession seats them after yours)
            parser.exit(2, f"play: error: player_{(args.seat + i + 1) % players} ({spec}): {error}\n")
    for given, stream in ((stdin, sys.stdin), (stdout, sys.stdout)):
        if given is None and hasattr(stream, "reconfigure"):  # an undecodable byte typed, or a card symbol
            try:                                               # the terminal cannot show, must not end the game
                stream.reconfigure(errors="replace")
            except (ValueError, OSError):
                pass
    try:
        record = RecordFile(args.record) if args.record else None
    except OSError as error:
        parser.exit(2, f"play: error: --record {args.record}: cannot be written: {error.strerror}\n")
    output = stdout if stdout is not None else sys.stdout
    console = Console(file=output, highlight=False, width=args.width, soft_wrap=False)
    reader = _stream_reader(stdin if stdin is not None else sys.stdin, console)
    session = PlaySession(rules, opponents, console, reader, seat=args.seat, match=args.match, seed=args.seed,
                          names=specs, record=record)
    try:
        return session.run()
    except KeyboardInterrupt:
        console.print("bye")
        return 0
    finally:
        if record is not None:
            record.close()


if __name__ == "__main__":
    sys.exit(main())
