"""A lean masked-PPO trainer that steps many envs in one process as one batch.

Where you are: ``tableenvs/training/``, beside :mod:`tableenvs.training.job` (the SB3 job behind ``tableenvs train``)
and :mod:`tableenvs.training.recipe`. Needs torch (the ``train`` extra); Stable-Baselines3 is not used. What it does:

* ``n_envs`` raw AEC envs (:func:`tableenvs.make_raw`) live in this process. At each step every env's seat to act
  writes its observation and action mask into one preallocated row of the rollout buffer (the env's own hooks
  ``_fill_observation`` and ``_current_mask``, what ``observe`` calls, without its per-call arrays); **one** torch
  forward pass of the actor gives every env's logits, a masked action is sampled for all of them at once (numpy,
  inverse CDF on the masked softmax), and each env plays it (``step_trusted``: the action is legal by construction).
* **Self-play** (``opponents=None``, the default): every seat is the learner, so every decision is a sample and no
  time goes to opponents. With ``opponents="random"`` (or any :func:`tableenvs.policies.make_policy` name) the
  learner sits in ``learner_seats`` seats per game (default 1; consecutive, the first rotating from game to game) and
  the other seats are played inline by that policy; only the learner's decisions are samples.
* **Rewards per seat** (PettingZoo AEC): the reward of a seat's decision is what the env accumulated for that seat
  until its next decision (``_cumulative_rewards``, PettingZoo's ``last()`` reward) or, for its last decision, until
  the game ended. A rollout collects at least ``rollout`` decisions and then lets every game in progress finish, so
  every trajectory is whole: no bootstrapping at a rollout's end, and each env starts the next rollout with a new deal.
* **Update**: GAE along each seat's own trajectory (``gamma``, ``gae_lambda``), then PPO-clip for ``epochs`` passes
  over shuffled minibatches of ``minibatch`` decisions, masked logits (illegal actions at -1e9), an actor and a
  critic of their own (``hidden`` layers each, ReLU), advantages normalised per minibatch, returns scaled by
  ``reward_scale`` for the critic (default: 1 / the standard deviation of the first rollout's returns-to-go), each
  network's gradient clipped on its own. Inputs are scaled per feature to about [-1, 1] (the observation space's
  finite bounds, the rest from a few random warm-up games); the scale goes into the exported model file.
* **Start**: from random weights, or (``start``) from a numpy policy file such as the strong recipe's clone of the
  heuristic: its layers and input scale become the actor's (the critic starts afresh); a start that reads derived
  inputs after the observation (its header's ``input_features``) keeps reading them, and the export names them
  (:mod:`tableenvs.training.trainer_inputs`). ``value_warmup``: for that
  many first samples only the critic learns (the actor is frozen), so a started actor is not pushed around by a
  critic that still knows nothing.
* **Export**: :meth:`BatchedTrainer.export` writes the actor as the project's numpy policy file
  (:func:`tableenvs.policies.model_file.save_for_env`), played by ``make_policy(path, env)`` without torch.

Settings: :class:`BatchedConfig` (:mod:`tableenvs.training.batched_config`, every value checked before anything is
built). Seeding: only ``seed``: one ``numpy.random.Generator`` (deals, actions, shuffles) and ``torch.manual_seed``
(initial weights), torch on one thread: the same seed and settings give the same weights on the same machine.

Units: samples and steps are learner decisions; times are CPU seconds of this process (``time.process_time``).
Throughput against ``tableenvs train``: ``benchmarks/training_throughput.py``; learning per sample:
``benchmarks/batched_learning.py``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tableenvs.core.registry import make_raw
from tableenvs.training.batched_config import BatchedConfig
from tableenvs.training.trainer_inputs import DerivedInputs, observation_scale

__all__ = ["BatchedConfig", "BatchedResult", "BatchedTrainer", "train_batched"]

#: Logit given to an illegal action in the update (a float32-safe minus infinity).
ILLEGAL_LOGIT = -1e9


@dataclass
class BatchedResult:
    """What :func:`train_batched` did: ``samples`` (learner decisions trained on), ``updates``, ``games`` finished,
    ``cpu_seconds`` (this process, setup included), ``history`` (one dict per update) and ``model`` (the exported
    numpy policy file, if ``out`` was given)."""

    samples: int
    updates: int
    games: int
    cpu_seconds: float
    history: list[dict[str, float]]
    model: Path | None


def _mlp(sizes: Sequence[int], output_gain: float) -> Any:
    import torch

    layers: list[Any] = []
    for index, (inputs, outputs) in enumerate(zip(sizes[:-1], sizes[1:], strict=True)):
        linear = torch.nn.Linear(inputs, outputs)
        last = index == len(sizes) - 2
        torch.nn.init.orthogonal_(linear.weight, gain=output_gain if last else 2**0.5)
        torch.nn.init.zeros_(linear.bias)
        layers.append(linear)
        if not last:
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


class BatchedTrainer:
    """Masked PPO over ``config.n_envs`` envs stepped as one batch; see the module docstring.

    Use :meth:`train` (or the function :func:`train_batched`), then :meth:`export`. :meth:`collect` and
    :meth:`update` are the two halves of one iteration (for benchmarks and tests)."""

    def __init__(self, config: BatchedConfig):
        import torch

        self.config = config
        torch.set_num_threads(1)
        self.rng = np.random.default_rng(config.seed)
        torch.manual_seed(config.seed)
        self.envs = self._make_envs()
        env = self.envs[0]
        self.num_players = env.num_players
        self.num_actions = int(env.num_actions)
        self.observation_size = int(env.observation_size)
        self.opponents = None
        if config.opponents is not None:
            from tableenvs.policies import make_policy

            if config.learner_seats >= self.num_players:
                raise ValueError(
                    f"learner_seats must be below the number of players ({self.num_players}) when opponents are "
                    f"given, got {config.learner_seats}; opponents=None is self-play (every seat learns)"
                )
            self.opponents = [make_policy(config.opponents, e) for e in self.envs]
        start = self._start_model()
        #: The start model's derived inputs, read after each observation (None: the observation alone).
        self.derived = None if start is None or not start.input_features else DerivedInputs(start.input_features, env)
        self.input_size = self.observation_size + (0 if self.derived is None else self.derived.size)
        if start is None:
            self.input_scale = observation_scale(env, self.rng, config.warmup_games)
            actor_hidden = config.hidden
        else:
            scale = start.input_scale
            self.input_scale = np.ones(self.input_size, np.float32) if scale is None else scale.copy()
            actor_hidden = start.hidden
        self.actor = _mlp((self.input_size, *actor_hidden, self.num_actions), 0.01)
        self.critic = _mlp((self.input_size, *config.hidden, 1), 1.0)
        if start is not None:
            with torch.no_grad():
                linear = [m for m in self.actor if isinstance(m, torch.nn.Linear)]
                for layer, (weight, bias) in zip(linear, start.weights, strict=True):
                    layer.weight.copy_(torch.from_numpy(weight.T))
                    layer.bias.copy_(torch.from_numpy(bias))
        self._scale_t = torch.from_numpy(self.input_scale)
        self.optimizer = torch.optim.Adam(
            [*self.actor.parameters(), *self.critic.parameters()], lr=config.learning_rate, eps=1e-5
        )
        self.reward_scale = config.reward_scale
        self.samples = 0
        self.games = 0
        self.updates = 0
        self.history: list[dict[str, float]] = []
        self._bounds: list[tuple[int, int]] = []  # the buffer rows of each step of the last rollout
        #: The learner's total reward in each game of the last rollout, per learner seat (self-play: every seat's).
        self.game_returns: list[float] = []
        #: The opponents' totals in the same games, per opponent seat (empty in self-play).
        self.opponent_returns: list[float] = []
        self._allocate(config.rollout + config.n_envs * 64)
        # Per env, the seats the learner plays this game (opponent mode: ``learner_seats`` of them, rotating).
        self._first_seat = [0] * config.n_envs
        self._learns = [[True] * self.num_players for _ in range(config.n_envs)]

    def _make_envs(self) -> list[Any]:
        """The ``n_envs`` raw AEC envs stepped; the first gives the sizes, input bounds and the export's header."""
        return [make_raw(self.config.game, **self.config.options) for _ in range(self.config.n_envs)]

    def _start_model(self) -> Any:
        """The numpy policy ``config.start`` (checked against the game), or None."""
        if self.config.start is None:
            return None
        from tableenvs.policies.model_env import check_model_fits
        from tableenvs.policies.model_file import load_numpy_policy
        from tableenvs.training.model_start import untrainable

        model = load_numpy_policy(self.config.start)
        check_model_fits(model, self.envs[0])
        why = untrainable(model, derived_inputs=True)
        if why is not None:
            raise ValueError(f"{model.name}: the batched trainer starts only from a ReLU model with no input offset "
                             f"and no candidates (this one: {why})")  # fmt: skip
        return model

    # ------------------------------------------------------------------ buffers and inputs

    def _allocate(self, capacity: int) -> None:
        """(Re)size the rollout buffer to ``capacity`` decisions, keeping what it holds."""

        def grow(old: np.ndarray | None, width: tuple[int, ...], dtype: Any) -> np.ndarray:
            new = np.zeros((capacity, *width), dtype)
            if old is not None:
                new[: len(old)] = old
            return new

        self._obs = grow(self.__dict__.get("_obs"), (self.input_size,), np.float32)  # observation, derived inputs
        self._mask = grow(self.__dict__.get("_mask"), (self.num_actions,), np.int8)
        self._action = grow(self.__dict__.get("_action"), (), np.int64)
        self._logp = grow(self.__dict__.get("_logp"), (), np.float32)
        self._reward = grow(self.__dict__.get("_reward"), (), np.float32)
        self._done = grow(self.__dict__.get("_done"), (), np.bool_)
        self._next = grow(self.__dict__.get("_next"), (), np.int64)
        self._capacity = capacity

    # ------------------------------------------------------------------ acting

    def _act(self, obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """One forward pass for a batch of observations; a masked sample per row: (actions, their log-probs)."""
        import torch

        with torch.inference_mode():
            logits = self.actor(torch.from_numpy(obs) * self._scale_t).numpy()
        logits = np.where(masks != 0, logits, -np.inf)
        logits -= logits.max(axis=1, keepdims=True)
        probs = np.exp(logits)
        cdf = np.cumsum(probs, axis=1)
        threshold = (1.0 - self.rng.random(len(obs))) * cdf[:, -1]  # in (0, total]: lands on a legal action
        actions = np.minimum((cdf < threshold[:, None]).sum(axis=1), self.num_actions - 1)
        rows = np.arange(len(obs))
        logp = np.log(probs[rows, actions] / cdf[:, -1])
        return actions, logp.astype(np.float32)

    def _new_game(self, index: int) -> None:
        """Deal env ``index`` a new game (seeded from the trainer's generator); in opponent mode rotate the learner's
        seat and play the opponents up to its first decision (dealing again if the game ended before it)."""
        env = self.envs[index]
        while True:
            env.reset(seed=int(self.rng.integers(2**63)))
            if self.opponents is None:
                return
            first = self._first_seat[index] = (self._first_seat[index] + 1) % self.num_players
            chosen = {(first + k) % self.num_players for k in range(self.config.learner_seats)}
            self._learns[index] = [seat in chosen for seat in range(self.num_players)]
            if not self._play_opponents(index):
                return

    def _play_opponents(self, index: int) -> bool:
        """Opponent mode: play the other seats until one of the learner's turns; True if the game ended meanwhile."""
        env = self.envs[index]
        assert self.opponents is not None
        policy = self.opponents[index]
        learns = self._learns[index]
        while True:
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                return True
            if learns[env.agent_name_mapping[agent]]:
                return False
            seen = env.observe(agent)
            env.step(policy.act(seen["observation"], seen["action_mask"], self.rng))

    def collect(self, target: int | None = None) -> int:
        """Play at least ``target`` learner decisions (default ``config.rollout``), then finish every game in
        progress; returns the number of decisions now in the buffer (rewards, ``done`` and each decision's successor
        of the same seat filled)."""
        config = self.config
        target = config.rollout if target is None else target
        envs = self.envs
        for index in range(config.n_envs):
            self._new_game(index)
        last = [[-1] * self.num_players for _ in envs]  # each seat's previous decision (buffer row) per env
        active = list(range(config.n_envs))
        self._bounds = []
        self.game_returns = []
        self.opponent_returns = []
        count = 0
        while active:
            n = len(active)
            if count + n > self._capacity:
                self._allocate(2 * self._capacity)
            obs = self._obs[count : count + n]
            masks = self._mask[count : count + n]
            obs.fill(0)
            reward, successor = self._reward, self._next
            for row, index in enumerate(active):
                env = envs[index]
                agent = env.agent_selection
                seat = env.agent_name_mapping[agent]
                previous = last[index][seat]
                if previous >= 0:
                    reward[previous] = env._cumulative_rewards[agent]
                    successor[previous] = count + row
                last[index][seat] = count + row
                env._fill_observation(seat, obs[row, : self.observation_size])
                masks[row] = env._current_mask()
            if self.derived is not None:
                obs[:, self.observation_size :] = self.derived(obs[:, : self.observation_size], masks)
            actions, logp = self._act(obs, masks)
            self._action[count : count + n] = actions
            self._logp[count : count + n] = logp
            self._done[count : count + n] = False
            self._next[count : count + n] = -1
            self._bounds.append((count, count + n))
            count += n
            still = []
            for row, index in enumerate(active):
                env = envs[index]
                agent = env.agent_selection
                env.step_trusted(int(actions[row]))
                ended = env.terminations[agent] or env.truncations[agent]
                if not ended and self.opponents is not None:
                    ended = self._play_opponents(index)
                if ended:
                    cumulative = env._cumulative_rewards
                    seats = last[index]
                    for seat, previous in enumerate(seats):
                        if previous >= 0:
                            reward[previous] = cumulative[env.possible_agents[seat]]
                            self._done[previous] = True
                            seats[seat] = -1
                    self.games += 1
                    returns = env.outcome().returns
                    learns = self._learns[index]
                    for seat, value in enumerate(returns):
                        (self.game_returns if learns[seat] else self.opponent_returns).append(value)
                    if count < target:
                        self._new_game(index)
                        still.append(index)
                else:
                    still.append(index)
            active = still
        self.samples += count
        return count

    # ------------------------------------------------------------------ learning

    def _advantages(self, count: int, values: np.ndarray, gamma: float, lam: float) -> np.ndarray:
        """GAE along each seat's trajectory for the ``count`` decisions in the buffer (float32)."""
        advantages = np.zeros(count, np.float32)
        reward, done, successor = self._reward[:count], self._done[:count], self._next[:count]
        if not np.all(done | (successor >= 0)):
            raise RuntimeError("batched trainer: a decision has neither a successor nor a game end (a bug)")
        for start, stop in reversed(self._bounds):
            following = successor[start:stop]
            going = ~done[start:stop]
            next_value = np.where(going, values[following], 0.0)
            next_advantage = np.where(going, advantages[following], 0.0)
            delta = reward[start:stop] * self.reward_scale + gamma * next_value - values[start:stop]
            advantages[start:stop] = delta + gamma * lam * next_advantage
        return advantages

    def update(self, count: int) -> dict[str, float]:
        """PPO on the ``count`` decisions :meth:`collect` left in the buffer; this update's statistics."""
        import torch

        config = self.config
        if self.reward_scale is None:  # 1 / spread of the first rollout's returns-to-go (undiscounted)
            self.reward_scale = 1.0
            to_go = self._advantages(count, np.zeros(count, np.float32), 1.0, 1.0)
            self.reward_scale = float(1.0 / max(float(to_go.std()), 1e-3))
        # Shuffled once per update into ``blocks`` minibatches of about ``minibatch`` rows; each epoch visits the
        # blocks in a new order (one gather of the rollout instead of one per minibatch and epoch).
        order = self.rng.permutation(count)
        blocks = max(1, round(count / config.minibatch))
        obs = torch.from_numpy(np.take(self._obs[:count], order, axis=0)).mul_(self._scale_t)
        with torch.no_grad():
            shuffled = torch.cat([self.critic(obs[s : s + 8192]).squeeze(1) for s in range(0, count, 8192)]).numpy()
        values = np.empty(count, np.float32)
        values[order] = shuffled
        advantages = self._advantages(count, values, config.gamma, config.gae_lambda)
        mask = torch.from_numpy(np.take(self._mask[:count], order, axis=0))
        bias = (mask.to(torch.float32) - 1.0) * -ILLEGAL_LOGIT
        actions = torch.from_numpy(self._action[:count][order]).unsqueeze(1)
        old_logp = torch.from_numpy(self._logp[:count][order])
        returns = torch.from_numpy((advantages + values)[order])
        advantages_t = torch.from_numpy(advantages[order])
        bounds = np.linspace(0, count, blocks + 1).astype(int)
        warming = self.samples - count < config.value_warmup  # this rollout began inside the warm-up
        actor_params = list(self.actor.parameters())
        critic_params = list(self.critic.parameters())
        stats = {"policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0, "clip_fraction": 0.0}
        steps = 0
        for _ in range(config.epochs):
            for block in self.rng.permutation(blocks):
                rows = slice(int(bounds[block]), int(bounds[block + 1]))
                batch = obs[rows]
                log_probs = torch.log_softmax(self.actor(batch) + bias[rows], dim=1)
                logp = log_probs.gather(1, actions[rows]).squeeze(1)
                # clamped: exp of the illegal actions' -1e9 takes a slow path; exp(-60) ~ 1e-26 counts for nothing
                clamped = log_probs.clamp_min(-60.0)
                entropy = -(clamped.exp() * clamped).sum(dim=1).mean()
                advantage = advantages_t[rows]
                advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
                log_ratio = logp - old_logp[rows]
                ratio = log_ratio.exp()
                clipped = ratio.clamp(1.0 - config.clip_range, 1.0 + config.clip_range)
                policy_loss = -torch.min(ratio * advantage, clipped * advantage).mean()
                value_loss = ((self.critic(batch).squeeze(1) - returns[rows]) ** 2).mean()
                loss = config.vf_coef * value_loss
                if not warming:
                    loss = loss + policy_loss - config.ent_coef * entropy
                self.optimizer.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(actor_params, config.max_grad_norm)
                torch.nn.utils.clip_grad_norm_(critic_params, config.max_grad_norm)
                self.optimizer.step()
                with torch.no_grad():
                    stats["policy_loss"] += float(policy_loss)
                    stats["value_loss"] += float(value_loss)
                    stats["entropy"] += float(entropy)
                    stats["approx_kl"] += float(((ratio - 1) - log_ratio).mean())
                    stats["clip_fraction"] += float(((ratio - 1).abs() > config.clip_range).float().mean())
                steps += 1
        self.updates += 1
        return {key: value / max(steps, 1) for key, value in stats.items()}

    def train(
        self,
        say: Callable[[str], None] | None = None,
        after_update: Callable[[dict[str, float]], None] | None = None,
    ) -> list[dict[str, float]]:
        """Collect and update until ``config.samples`` decisions (the last rollout asks only for what is left, plus
        the games in progress); one line per update to ``say`` (if given); ``after_update`` gets each update's row
        (e.g. to export a model every so many samples)."""
        began = time.process_time()
        while self.samples < self.config.samples:
            collect_began = time.process_time()
            count = self.collect(min(self.config.rollout, self.config.samples - self.samples))
            update_began = time.process_time()
            row = {"samples": float(self.samples), "decisions": float(count), **self.update(count)}
            row["mean_return"] = float(np.mean(self.game_returns))
            row["games"] = float(len(self.game_returns))
            if self.opponent_returns:
                row["opponent_return"] = float(np.mean(self.opponent_returns))
            row["collect_seconds"] = update_began - collect_began
            row["update_seconds"] = time.process_time() - update_began
            row["cpu_seconds"] = time.process_time() - began
            self.history.append(row)
            if say is not None:
                say(
                    f"{self.samples:,} samples, {row['cpu_seconds']:.1f} CPU s "
                    f"({self.samples / max(row['cpu_seconds'], 1e-9):,.0f}/s): mean return {row['mean_return']:+.3f}, "
                    f"entropy {row['entropy']:.3f}, "
                    f"kl {row['approx_kl']:.4f}, clipped {row['clip_fraction']:.3f}, value loss {row['value_loss']:.3f}"
                )
            if after_update is not None:
                after_update(row)
        return self.history

    # ------------------------------------------------------------------ export

    def weights(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The actor's layers as ``(W (inputs, outputs), b)`` float32 numpy pairs (the model file's layout)."""
        import torch

        linear = [m for m in self.actor if isinstance(m, torch.nn.Linear)]
        return [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in linear]

    def export(self, path: str | Path, meta: dict[str, Any] | None = None) -> Path:
        """Write the actor as a numpy policy file for this game and options (input scale included); its path."""
        from tableenvs.policies.model_file import save_for_env

        config = asdict(self.config)
        settings = {k: v for k, v in config.items() if k not in ("game", "options")}
        info = {
            "trainer": "tableenvs.training.batched",
            "samples": self.samples,
            "updates": self.updates,
            "reward_scale": self.reward_scale,
            "settings": json.loads(json.dumps(settings, default=list)),
            **(meta or {}),
        }
        return save_for_env(
            path, self.envs[0], weights=self.weights(), activation="relu", input_scale=self.input_scale, meta=info,
            input_features=None if self.derived is None else self.derived.name,
        )  # fmt: skip


def train_batched(
    game: str,
    *,
    samples: int = 200_000,
    out: str | Path | None = None,
    say: Callable[[str], None] | None = None,
    **settings: Any,
) -> BatchedResult:
    """Train ``game`` with :class:`BatchedTrainer` for ``samples`` learner decisions; ``settings`` are the other
    :class:`BatchedConfig` fields (``options``, ``n_envs``, ``seed``, ...). With ``out`` (a directory) the actor is
    written to ``out/model.npz`` and the per-update history to ``out/progress.jsonl``."""
    began = time.process_time()
    trainer = BatchedTrainer(BatchedConfig(game, samples=samples, **settings))
    history = trainer.train(say)
    model = None
    if out is not None:
        directory = Path(out)
        directory.mkdir(parents=True, exist_ok=True)
        model = trainer.export(directory / "model.npz")
        (directory / "progress.jsonl").write_text("".join(json.dumps(row) + "\n" for row in history))
    return BatchedResult(trainer.samples, trainer.updates, trainer.games, time.process_time() - began, history, model)
