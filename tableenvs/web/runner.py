"""The agents' turns, off the request path: one asyncio task per game, the thinking in a shared thread pool.

Where you are: part of :mod:`tableenvs.web`. When a game reaches an agent's turn, :meth:`AgentRunner.kick` starts
(at most one) task for that game. The task waits the game's pause when the turn passes to another seat, copies what
the agent may use (its observation and mask; for a search seat a clone of the env) on the event loop, thinks in a
worker thread (:func:`tableenvs.web.seats.think`), and plays the action back on the event loop. Requests never wait
for an agent: a slow search seat holds one worker thread and its own game, nothing else; every search is bounded by
the server's caps (``max_search_sims`` / ``max_search_ms``). An agent that raises stops its game with the error shown
to every seat (the server carries on).
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor

from tableenvs.web.seats import think
from tableenvs.web.tables import ApiError, GameTable

log = logging.getLogger("tableenvs.web")


class AgentRunner:
    """Plays the agent seats of every game; ``threads`` worker threads think for all of them."""

    def __init__(self, threads: int):
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="tableenvs-agent")

    def kick(self, table: GameTable) -> None:
        """Start the game's agent task if an agent is to act and none is running."""
        if table.agent_to_act() is None or (table.agent_task is not None and not table.agent_task.done()):
            return
        table.agent_task = asyncio.get_running_loop().create_task(self._play(table), name=f"agents-{table.id}")

    async def _play(self, table: GameTable) -> None:
        loop = asyncio.get_running_loop()
        while (agent := table.agent_to_act()) is not None:
            if table.pause > 0 and table.last_mover() not in (None, agent):
                await asyncio.sleep(table.pause)  # once per change of turn, not per staged tile or card
                if table.agent_to_act() != agent:
                    return
            seat, env = table.seat(agent), table.env
            seen = env.observe(agent)
            clone = env.clone() if seat.kind == "search" else None
            version = table.version
            try:
                action = await loop.run_in_executor(
                    self.pool,
                    think,
                    seat,
                    table.policies[agent],
                    clone,
                    seen["observation"],
                    seen["action_mask"],
                    table.rng(agent),
                )
            except asyncio.CancelledError:
                raise
            except Exception as error:  # a policy that fails stops its game, not the server
                log.exception("agent %s (%s) of game %s failed", agent, seat.spec, table.id)
                table.fail(f"{agent} ({seat.spec}) failed: {type(error).__name__}: {' '.join(str(error).split())}")
                return
            if table.closed or table.version != version:  # expired while thinking (no one else may move now)
                return
            if action not in env.legal_actions():
                table.fail(f"{agent} ({seat.spec}) chose action {action}, which is not legal")
                return
            try:
                table.apply(agent, action)
            except ApiError as error:  # the move could not be kept (a full disk): the game stops, unplayed
                table.fail(error.message, keep=False)
                return
            await asyncio.sleep(0)  # let requests in between the moves of a long all-agent game

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
