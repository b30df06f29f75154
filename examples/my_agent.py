"""A strategy of your own, played wherever an agent spec goes (docs/agents.md "Write your own agent").

    python -m agents.arena --game basic --agents examples/my_agent.py:GreedyAgent rule --hands 200
    python -m rummy_apps.play --game indian --opponents examples/my_agent.py:GreedyAgent

A plain class that imports nothing of rummy-env: it reads only the action mask, by the action
ids of docs/env.md "Actions" (the same in every game for ids 0..54):

    0         draw the stock top
    1         take the discard top
    2 + c     discard card c (c = suit * 13 + rank, suits s h d c, ranks A..K; 52 the joker)
    55 and up the game's own moves: declare (Indian), take the cut card (römi), lay a meld or
              lay off a card (Basic, römi)

It plays any of the game's own moves first (each one lays cards down or goes out), draws from
the stock rather than take the discard, and discards its highest card, keeping jokers.
"""

JOKER = 52
FIRST_GAME_MOVE = 55


class GreedyAgent:
    """Lay down whatever the rules allow, draw blind, throw the highest card away."""

    def __init__(self, game):
        self.game = game  # the same ids mean the same moves in every game: the name is only kept

    def act(self, observation, action_mask):
        legal = [action for action, allowed in enumerate(action_mask) if allowed]
        own_moves = [action for action in legal if action >= FIRST_GAME_MOVE]
        if own_moves:
            return own_moves[0]
        if 0 in legal:
            return 0
        discards = [action - 2 for action in legal if 2 <= action < 2 + JOKER + 1]
        if discards:
            return 2 + max(discards, key=lambda card: (card != JOKER, card % 13))
        return legal[0]  # only the discard top may be taken
