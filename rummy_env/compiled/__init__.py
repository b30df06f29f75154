"""Compiled (numba) hot paths behind the Python reference engine.

The Python engine (``rummy_env.game``, ``rummy_env.solver``) stays the reference: every compiled
function here is tested against it in lockstep, and callers choose with a switch
(``VectorGame(backend=...)``). Compilation is cached on disk (``cache=True``), so only the first
process after an install pays for it.
"""
