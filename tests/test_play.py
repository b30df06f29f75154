"""Playing in the terminal (``python -m rummy_apps.play``): whole hands of each game driven by typed
commands, refused commands explained with their rule and changing nothing, end of input.

The scripted player reads the screen like a person: it types ``moves``, reads the legal commands
printed, and types one of them; now and then it types something refused or mangled first.
"""

from __future__ import annotations

import io
import os
import random
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.console import Console

from agents.registry import make_agent
from rummy_env.cards import format_card, parse_card
from rummy_env.game import PHASE_DRAW, GameState
from rummy_apps.play import PlaySession, Quit, command_text, main, parse_command
from rummy_env.ruleset import make_ruleset
from rummy_env.scenario import make_state

ROOT = Path(__file__).resolve().parent.parent

MANGLED = ["", "   ", "frobnicate", "discard Zz", "discard", "discard Ah Kh", "meld", "meld 2s", "lay", "lay Ah",
           "lay Ah on x", "swap 9d", "declare", "draw now", "*=*", "meld *=* 5h 6h", "\x00\x1b[31m]", "🂡 🂢",
           "[bold]discard[/bold]", "x" * 5000, "DISCARD 10x", "meld 5h 5h 5h", "lay * on -1",
           "lay Ah on 99999999999999"]


class Scripted:
    """A person at the keyboard: reads ``moves`` from the screen and types one of them."""

    def __init__(self, rules, opponents, seed: int, mangle: float = 0.15, match: bool = False, seat: int = 0,
                 names=None):
        self.buffer = io.StringIO()
        console = Console(file=self.buffer, width=120, color_system=None, highlight=False)
        self.session = PlaySession(rules, opponents, console, self.read, seed=seed, match=match, seat=seat,
                                   names=names)
        self.rng = random.Random(seed)
        self.mangle = mangle
        self.pending: list[str] = []
        self.asked_moves_at: int | None = None
        self.refusals = 0
        self.commands = 0
        self.snapshot = None
        self.check_from: int | None = None

    def output(self) -> str:
        return self.buffer.getvalue()

    def read(self, prompt: str) -> str | None:
        text = self.output()
        state = self.session.state
        if self.snapshot is not None:  # the last command was one that must change nothing
            after = text[self.check_from:]
            assert state.to_dict() == self.snapshot, f"a refused command changed the game: {after!r}"
            assert after.strip(), "a refused command got no explanation"
            self.snapshot = None
        if prompt.startswith("press Enter"):
            return ""
        if self.asked_moves_at is not None:
            listed = text[self.asked_moves_at:].split("legal commands:\n", 1)[1]
            commands = [line.strip() for line in listed.splitlines() if line.startswith("  ")]
            self.asked_moves_at = None
            assert commands, "moves listed nothing"
            table_plays = [c for c in commands if c.split()[0] in ("meld", "lay", "swap", "declare", "cut")]
            choice = self.rng.choice(table_plays if table_plays and self.rng.random() < 0.7 else commands)
            self.commands += 1
            return choice
        if self.mangle and (self.refusals == 0 or self.rng.random() < self.mangle):
            self.snapshot, self.check_from = state.to_dict(), len(text)
            self.refusals += 1
            return self.rng.choice(MANGLED + self.refused_here(state))
        self.asked_moves_at = len(text)
        return "moves"

    def refused_here(self, state: GameState) -> list[str]:
        """Well-formed commands the rules refuse in this position."""
        if state.phase == PHASE_DRAW:
            out = ["discard As", "meld 5h 6h 7h", "declare Kd"]
        else:
            out = ["draw", "take", "cut"]
        if state.rules.game == "indian":
            out += ["meld 5h 6h 7h", "lay 8h on 0", "cut"]
        return out


def opponents(game: str, players: int, spec: str = "rule") -> list:
    return [make_agent(spec, make_ruleset(game, players), seed=s) for s in range(1, players)]


@pytest.mark.parametrize("game, players, seed", [("indian", 2, 1), ("basic", 2, 2), ("basic", 3, 3), ("romi", 2, 4)])
def test_whole_hand_through_typed_commands(game, players, seed):
    rules = make_ruleset(game, players)
    player = Scripted(rules, opponents(game, players), seed)
    assert player.session.run() == 0
    state = player.session.state
    text = player.output()
    assert state.is_over, text[-2000:]
    assert player.commands > 0 and player.refusals > 0
    assert "hand over" in text and "Traceback" not in text and "could not read" not in text
    assert "the game stopped" not in text
    for p in range(players):  # every hand is shown at the end with what it pays
        assert ("you" if p == 0 else f"player_{p}") in text.rsplit("hand over", 1)[1]
    assert "your hand:" in text and "discard top" in text


@pytest.mark.parametrize("game, players, seat", [("indian", 6, 3), ("basic", 4, 1), ("romi", 4, 2)])
def test_a_person_among_n_minus_1_agents_of_mixed_kinds_plays_a_whole_hand(game, players, seat):
    """A full table (I1, B1, R1): the person in any seat, the other seats a mix of agent specs."""
    specs = (["rule", "random"] * players)[:players - 1]
    agents = [make_agent(spec, make_ruleset(game, players), seed=s) for s, spec in enumerate(specs, 1)]
    player = Scripted(make_ruleset(game, players), agents, seed=players + seat, seat=seat, names=specs)
    assert player.session.run() == 0
    text = player.output()
    assert player.session.state.is_over and "the game stopped" not in text and "Traceback" not in text
    others = [(seat + i) % players for i in range(1, players)]
    for p, spec in zip(others, specs):  # every other seat is listed with its agent, in seat order after yours
        assert f"player_{p} ({spec})" in text
    assert f"player_{seat} (" not in text and player.commands > 0
    moved = {p for p in others if f"player_{p} ({specs[others.index(p)]}): " in text}
    assert moved == set(others), "every agent moved"


def test_a_spec_that_cannot_play_at_this_table_is_refused_naming_its_seat_before_any_hand(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    from agents.policy import build_network, save_checkpoint

    torch.manual_seed(0)
    path = save_checkpoint(tmp_path / "two.pt", build_network("indian", 2, {"kind": "mlp", "hidden": [8]}),
                           "indian", 2)
    out = io.StringIO()
    argv = ["--game", "indian", "--players", "6", "--seat", "1", "--opponents", "rule", "rule", "random",
            f"ppo:{path}", "rule"]
    with pytest.raises(SystemExit) as stop:
        main(argv, stdin=io.StringIO("draw\n"), stdout=out)
    assert stop.value.code == 2 and out.getvalue() == ""
    err = capsys.readouterr().err
    assert (f"play: error: player_5 (ppo:{path}): checkpoint {str(path)!r} was trained for 'indian' with 2 players, "
            "not 'indian' with 6 players") in err
    with pytest.raises(SystemExit):
        main(["--game", "indian", "--players", "6", "--opponents", "rule", "random"], stdin=io.StringIO(""),
             stdout=out)
    assert "2 opponents for 6 players: give one spec for every other seat (5)" in capsys.readouterr().err


def test_screen_shows_table_slots_cut_card_known_cards_and_last_moves():
    state = make_state("romi", hands=["5h 6h 7h 9c Kd Ks 2c 3d 8s 8d Jc Qh 4s",
                                      "2s 2d 8c 9h Th Js Qs Ks Ad 3c 4c 5c 6c"],
                       discard="Qs 4d", stock="Ac 3c 7d", table=["9s 9h *", "2h 3h 4h"], cut_card="Js",
                       opened=[True, True])
    state.known[1][parse_card("6d")] = 1  # player_1 took 6d from the pile earlier (G7: known to everyone)
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, color_system=None)
    session = PlaySession(state.rules, opponents("romi", 2, "random"), console, lambda prompt: None)
    session.last_moves[1] = "discard 4d"
    session.show(state, [30, 12], 2)
    text = buffer.getvalue()
    assert "table  0: 9s 9h *=9d" in text and "table  1: 2h 3h 4h" in text  # slot numbers (R5) and the joker
    assert "cut card Js" in text  # R2
    assert "discard top 4d (2 in the pile) · stock 3" in text
    assert "6d" in text and "discard 4d" in text and "13 (opened)" in text
    assert "[5h 6h 7h]" in text  # the hand's melds grouped
    assert "your total 30" in text


def session_for(state: GameState, lines: list[str]) -> tuple[PlaySession, io.StringIO]:
    buffer = io.StringIO()
    feed = iter(lines)
    session = PlaySession(state.rules, opponents(state.rules.game, state.rules.num_players, "random"),
                          Console(file=buffer, width=160, color_system=None), lambda prompt: next(feed, None))
    session.state = state
    return session, buffer


def typed(state: GameState, line: str) -> str:
    """Type one line at ``state`` and return what the screen said."""
    session, buffer = session_for(state, [line])
    session.human_command(state, None)
    return buffer.getvalue()


def refuse(state: GameState, line: str, why: str) -> None:
    """``line`` is refused with an explanation matching ``why`` and changes nothing."""
    before = state.to_dict()
    said = typed(state, line)
    assert why in said, said
    assert state.to_dict() == before


def test_refused_commands_cite_the_rule_and_change_nothing():
    state = GameState.new("indian", 2, seed=5)
    refuse(state, "discard As", "draw first (I4, B3, R4)")
    refuse(state, "meld 5h 6h 7h", "Indian Rummy lays no melds on the table")
    refuse(state, "cut", "only römi has a cut card (R2)")
    refuse(state, "discard Zz", "bad card 'Zz'")
    refuse(state, "wave", "unknown command 'wave'")
    typed(state, "draw")
    assert state.phase != PHASE_DRAW
    refuse(state, "draw", "already drew this turn")
    missing = next(c for c in range(52) if not state.hands[0][c])
    refuse(state, f"discard {format_card(missing)}", "not in the hand")


def test_R4_take_after_the_first_turn_needs_a_place_for_the_card():
    # player 0 holds no meld for Qs and has no meld of their own on the table
    state = make_state("romi", hands=["5h 9c Kd 2c 3d 8s Jc 4s Ad 7c", "2s 2d 8c 9h Th"], discard="4d Qs",
                       stock="Ac 3c 7d", cut_card="Js")
    refuse(state, "take", "R4")
    refuse(state, "cut", "going out is not possible (R4)")


def test_R5_lay_swap_and_joker_meld_commands():
    state = make_state("romi", hands=["5h 7h * 9d 2c 3d 8s 8d Jc", "2s 2d 8c 9h Th"], discard="4d",
                       stock="Ac 3c 7d Kc", table=["9s 9h *", "2h 3h 4h"], cut_card="Js", opened=[True, True])
    typed(state, "draw")  # Kc
    refuse(state, "swap 8d on 0", "no joker on table meld 0 stands for 8d")
    refuse(state, "lay 8d on 1", "not of the suit of the run on table meld 1 (G4)")
    refuse(state, "lay 8d on 7", "no table meld 7")
    refuse(state, "meld 5h 6h 7h", "you hold no 6h")
    refuse(state, "meld 2c 3d 8s", "is not a meld")
    said = typed(state, "meld 5h * 7h")
    assert "refused" not in said, said
    assert state.table[-1][3] == [17, 52, 19]  # 5h * 7h: the joker stands for 6h (G5)
    said = typed(state, "swap 9d on 0")  # give 9d for the joker of the set of nines (R5)
    assert "refused" not in said, said
    assert state.hands[0][52] == 1 and state.table[0][3][2] == parse_card("9d")  # 9d now stands in the set
    refuse(state, "discard 2c", "R5")  # the joker swapped out goes back on the table this turn


def test_moves_lists_commands_that_parse_back_to_the_same_moves():
    for game, seed in (("basic", 11), ("romi", 12), ("indian", 13)):
        rng = random.Random(seed)
        state = GameState.new(game, 2, seed=seed)
        for _ in range(60):
            if state.is_over:
                break
            for move in state.legal_moves():
                text = command_text(state, move)
                assert parse_command(state, text) == (text.split()[0], move), text
            state.apply(rng.choice(state.legal_moves()))


def test_hint_gives_the_rule_agents_choice_and_the_penalty():
    state = GameState.new("indian", 2, seed=3)
    said = typed(state, "hint")
    assert "the rule agent would: draw" in said or "the rule agent would: take" in said
    assert "best arrangement:" in said and "(I7)" in said
    said = typed(state, "help")
    assert "discard Qh" in said and "(I5)" in said and "(R4)" in said


def test_match_to_a_low_target_shows_the_match_table():
    rules = make_ruleset("basic", 2, match_target=1)
    player = Scripted(rules, opponents("basic", 2), seed=21, mangle=0.0, match=True)
    assert player.session.run() == 0
    text = player.output()
    assert "match after" in text and "match over" in text and "(B6)" in text


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(max_size=60), st.builds(" ".join, st.lists(st.sampled_from(
    ["meld", "lay", "swap", "on", "discard", "declare", "take", "cut", "draw", "*", "*=5h", "*=*", "5h", "6h", "7h",
     "10d", "Q♠", "Zz", "-1", "0", "1", "99", "on on", "\t", "hint", "moves"]), max_size=6))))
@example(text="EXIT")
@example(text="quit now")
def test_any_typed_text_gets_an_answer_and_never_an_exception(text):
    for state in FUZZ_STATES:
        before = state.to_dict()
        try:
            said = typed(state, text)
        except Quit:  # "quit" or "exit" in any case, alone: the player leaves, as asked
            assert text.split()[0].lower() in ("quit", "exit") and len(text.split()) == 1, text
            assert state.to_dict() == before
            continue
        changed = state.to_dict() != before
        assert (said.strip() or changed) and "could not read" not in said
        if changed:  # only a legal command changes the game: put it back for the next text
            state_index = FUZZ_STATES.index(state)
            FUZZ_STATES[state_index] = GameState.from_dict(before)


FUZZ_STATES = [
    make_state("romi", hands=["5h 7h * 9d 2c 3d 8s 8d Jc", "2s 2d 8c 9h Th"], discard="4d", stock="Ac 3c 7d Kc",
               table=["9s 9h *", "2h 3h 4h"], cut_card="Js", opened=[True, True]),
    GameState.new("basic", 2, seed=4),
    GameState.new("indian", 2, seed=4),
]


# ----------------------------------------------------------------------------- the command line


def run_main(argv: list[str], stdin: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(argv, stdin=io.StringIO(stdin), stdout=out)
    return code, out.getvalue()


def test_end_of_input_and_quit_leave_cleanly():
    code, text = run_main(["--game", "indian", "--opponents", "rule", "--seed", "3"], "")
    assert code == 0 and text.rstrip().endswith("bye")
    code, text = run_main(["--game", "romi", "--opponents", "random", "--seed", "3"], "help\nmoves\nquit\n")
    assert code == 0 and "legal commands:" in text and text.rstrip().endswith("bye")
    code, text = run_main(["--game", "basic", "--opponents", "rule", "random", "--match"], "draw\n\x00\xff garbage\n")
    assert code == 0 and "unknown command" in text and "Traceback" not in text


def test_bad_command_lines_fail_before_any_hand(tmp_path, capsys):
    for argv, message in [
        (["--game", "indian", "--opponents", f"onnx:{tmp_path / 'none.onnx'}"], "none.onnx': no such file"),
        (["--game", "basic", "--players", "5"], "num_players=5 is out of range for 'basic'"),
        (["--game", "romi", "--opponents", "rule", "rule", "--players", "2"], "2 opponents for 2 players"),
        (["--game", "indian", "--opponents", "chess"], "unknown agent spec 'chess'"),
        (["--game", "indian", "--opponents", "pretrained:chess"], "expected pretrained:GAME"),
    ]:
        with pytest.raises(SystemExit) as stop:
            main(argv, stdin=io.StringIO(""), stdout=io.StringIO())
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err


def test_help_names_the_commands_and_rules(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--help"])
    assert stop.value.code == 0
    text = capsys.readouterr().out
    assert "--opponents" in text and "discard Qh" in text and "G2" in text


def test_play_with_rule_opponents_imports_no_torch():
    script = textwrap.dedent("""
        import io, sys
        sys.modules["torch"] = None
        from rummy_apps.play import main
        out = io.StringIO()
        code = main(["--game", "romi", "--opponents", "rule"], stdin=io.StringIO("draw\\nhint\\nmoves\\n"), stdout=out)
        assert code == 0 and "bye" in out.getvalue(), out.getvalue()
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_in_a_pseudo_terminal_commands_then_ctrl_d():
    main_fd, child_fd = os.openpty()
    env = dict(os.environ, NO_COLOR="1", COLUMNS="100")
    process = subprocess.Popen([sys.executable, "-m", "rummy_apps.play", "--game", "basic", "--opponents", "random",
                                "--seed", "2"], cwd=ROOT, stdin=child_fd, stdout=child_fd, stderr=child_fd, env=env)
    os.close(child_fd)
    seen = b""

    def read_until(marker: bytes, timeout: float = 60) -> None:
        nonlocal seen
        deadline = time.time() + timeout
        while marker not in seen and time.time() < deadline:
            try:
                seen += os.read(main_fd, 65536)
            except OSError:
                break

    try:
        read_until(b"> ")
        os.write(main_fd, b"discard As\n")
        read_until(b"draw first")
        os.write(main_fd, b"draw\n")
        read_until(b"you drew")
        os.write(main_fd, b"\x04")  # Ctrl-D: end of input
        read_until(b"bye")
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
        os.close(main_fd)
    text = seen.decode(errors="replace")
    assert "draw first (I4, B3, R4)" in text and "bye" in text and "Traceback" not in text


def test_R5_a_joker_laid_off_at_either_end_of_a_run():
    # table 0: Js Qs Ks As (closed at the high end), table 1: 5d 6d 7d (open at both ends)
    state = make_state("romi", hands=["* * 2c 3d 8s 9h", "2s 2d 8c 9h Th"], discard="4d", stock="Ac 3c 7d Kc",
                       table=["Js Qs Ks As", "5d 6d 7d"], cut_card="Js", opened=[True, True])
    typed(state, "draw")
    moves = [command_text(state, m) for m in state.legal_moves()]
    assert "lay * on 0 low" in moves and "lay * on 1" in moves and "lay * on 1 low" in moves
    refuse(state, "lay 8s on 0 low", "only a joker laid off names a run's end (R5)")
    said = typed(state, "lay * on 0")  # the only end with room is the low one
    assert "refused" not in said and len(state.table[0][3]) == 5 and state.table[0][2] == 9  # * Js Qs Ks As
    said = typed(state, "lay * on 1 low")
    assert "refused" not in said and state.table[1][3][0] == 52 and state.table[1][2] == 3  # * 5d 6d 7d


def test_undecodable_bytes_on_stdin_are_answered_and_the_next_line_still_read():
    env = dict(os.environ, PYTHONIOENCODING="utf-8:strict", LC_ALL="C.UTF-8")
    done = subprocess.run([sys.executable, "-m", "rummy_apps.play", "--game", "indian", "--opponents", "random"],
                          cwd=ROOT, input=b"dr\xffaw\n\xfe\xfe\nmoves\n", capture_output=True, timeout=120, env=env)
    out = done.stdout.decode("utf-8", errors="replace")
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    assert "unknown command" in out and "legal commands:" in out and out.rstrip().endswith("bye")
