"""The engine's shuffles (G10) in numba: CPython's Mersenne Twister, seeded from text.

``rummy_env.game.shuffle_rng(seed, salt)`` is ``random.Random(f"{seed}:{salt}")``, and a deal is
its ``shuffle`` of the deck. Both are reproduced here bit for bit, so a compiled core deals the
same cards as the Python engine for the same seed:

* ``seed_key(text)`` is the key CPython derives from a text seed (version 2 seeding: the text's
  bytes followed by their SHA-512, read as one big-endian integer, cut into 32-bit words, least
  significant first). It runs in Python (``hashlib``), once per shuffle.
* ``seed_state`` is MT19937's ``init_by_array`` on that key; ``shuffle`` is ``random.shuffle``:
  from the last position down, swap with ``_randbelow(i + 1)``, which draws ``k = bit_length``
  bits (the top ``k`` bits of one 32-bit output) until the number is below the bound.

``tests/test_vector_compiled.py`` checks the shuffles against ``random.Random`` itself.
"""

from __future__ import annotations

import hashlib

import numpy as np
from numba import njit

STATE_WORDS = 624
"""MT19937's state: 624 words, then the position of the next word to temper (in slot 624)."""
KEY_WORDS = 40
"""Room for a key: a seed text of up to 96 bytes (64-bit seeds with salts need under 30)."""

_M = 397
_MATRIX_A = 0x9908B0DF
_UPPER = 0x80000000
_LOWER = 0x7FFFFFFF
_MASK32 = 0xFFFFFFFF


def seed_key(text: str) -> np.ndarray:
    """The 32-bit words CPython's ``random.seed(text)`` feeds ``init_by_array`` (int64, least
    significant first)."""
    data = text.encode()
    number = int.from_bytes(data + hashlib.sha512(data).digest(), "big")
    words = max(1, (number.bit_length() + 31) // 32)
    if words > KEY_WORDS:
        raise ValueError(f"seed text {text!r} is too long for a compiled shuffle: at most {KEY_WORDS * 4 - 64} bytes")
    return np.frombuffer(number.to_bytes(4 * words, "little"), "<u4").astype(np.int64)


@njit(cache=True)
def seed_state(state, key, length):
    """``init_by_array(key[:length])`` into ``state`` (625 int64: 624 words and the position)."""
    state[0] = 19650218
    for i in range(1, STATE_WORDS):
        prev = state[i - 1]
        state[i] = (1812433253 * (prev ^ (prev >> 30)) + i) & _MASK32
    i, j = 1, 0
    for _ in range(max(STATE_WORDS, length)):
        prev = state[i - 1]
        state[i] = ((state[i] ^ (((prev ^ (prev >> 30)) * 1664525) & _MASK32)) + key[j] + j) & _MASK32
        i += 1
        j += 1
        if i >= STATE_WORDS:
            state[0] = state[STATE_WORDS - 1]
            i = 1
        if j >= length:
            j = 0
    for _ in range(STATE_WORDS - 1):
        prev = state[i - 1]
        state[i] = ((state[i] ^ (((prev ^ (prev >> 30)) * 1566083941) & _MASK32)) - i) & _MASK32
        i += 1
        if i >= STATE_WORDS:
            state[0] = state[STATE_WORDS - 1]
            i = 1
    state[0] = 0x80000000
    state[STATE_WORDS] = STATE_WORDS


@njit(cache=True)
def _twist(state):
    n, m = STATE_WORDS, _M
    for k in range(n):
        y = (state[k] & _UPPER) | (state[(k + 1) % n] & _LOWER)
        value = state[(k + m) % n] ^ (y >> 1)
        if y & 1:
            value ^= _MATRIX_A
        state[k] = value
    state[n] = 0


@njit(cache=True)
def next_word(state):
    """The next 32-bit output (``genrand_uint32``)."""
    if state[STATE_WORDS] >= STATE_WORDS:
        _twist(state)
    y = state[state[STATE_WORDS]]
    state[STATE_WORDS] += 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y & _MASK32


@njit(cache=True)
def below(state, bound):
    """``random._randbelow(bound)`` for 2 <= bound < 2**32."""
    k = 0
    while (bound >> k) > 0:
        k += 1
    r = next_word(state) >> (32 - k)
    while r >= bound:
        r = next_word(state) >> (32 - k)
    return r


@njit(cache=True)
def shuffle(state, cards, length):
    """``random.shuffle(cards[:length])`` in place."""
    for i in range(length - 1, 0, -1):
        j = below(state, i + 1)
        cards[i], cards[j] = cards[j], cards[i]
