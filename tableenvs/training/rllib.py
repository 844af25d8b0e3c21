"""Ray RLlib (new API stack): a multi-agent env over any tableenvs game, a masked module, and the training job.

Where you are: the scale-out training path, for users who outgrow one machine (SB3's path is
:mod:`tableenvs.training.job`). Needs ``ray[rllib]`` and torch, best in a virtual environment of its own since RLlib
pins its own gymnasium (``docs/training.md#rllib``); ``import tableenvs`` never imports this module or Ray.

* :class:`TableMultiAgentEnv` — RLlib's ``MultiAgentEnv`` over a raw tableenvs game (``config``: ``env``, the game
  name; ``options``, the game options; ``learners``, the seats RLlib plays, default all; ``opponents``, a policy
  spec as :func:`tableenvs.policies.make_policy` takes it, played inside ``step()`` in every other seat; ``seed``
  for those opponents). The game is turn-based, so each step returns the observation of the one learner to act
  next, as ``{"observations": float32 vector, "action_mask": float32 0/1 vector}``, the layout RLlib's
  action-masking example module reads. Rewards go to every learner each step (what the game gave it since the
  last step, opponents' moves included); at the end every learner gets its final observation and
  ``terminated`` (``truncated`` when the game was cut short).
* :class:`MaskedRLModule` — a PPO-ready torch RLModule around :func:`tableenvs.policies.torch_policy.build_network`:
  illegal actions get the float32 minimum as logit, so they are never sampled. The same network is exported to a
  torch-only ``.pt`` file that ``tableenvs eval`` plays without Ray.
* :func:`ppo_config` — RLlib's ``PPOConfig`` for a game: ``policies="shared"`` (one module for every seat: the
  network plays against itself, self-play) or ``"per_seat"`` (module ``player_k`` for seat k).
* :func:`train_rllib` — the job behind ``tableenvs train --backend rllib``: ``ray.init(address=...)`` (a cluster) or a
  local Ray, PPO iterations until a budget of env steps (one env step = one learner decision), one progress line
  per iteration, then ``policy.pt`` (shared) or ``player_k.pt`` (per seat) and ``results.json`` under ``out``.
"""

from __future__ import annotations

import inspect
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
from gymnasium import spaces

try:
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.core.rl_module.torch import TorchRLModule
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
except ImportError as error:  # ray, or its rllib dependencies, or torch
    raise ImportError(
        f"tableenvs.training.rllib needs Ray RLlib and torch ({error.name or error} is missing): in a virtual "
        'environment of its own: pip install "tableenvs[rllib]" (from a source checkout: pip install -e ".[rllib]"; '
        "see docs/training.md#rllib)"
    ) from None

from tableenvs.core.registry import make_raw
from tableenvs.paths import check_output_dir, write_text_atomic
from tableenvs.policies import make_policy
from tableenvs.policies.torch_policy import DEFAULT_HIDDEN, build_network, masked_logits, save_policy

#: The ``policies`` modes of :func:`ppo_config`.
POLICY_MODES = ("shared", "per_seat")
#: Seconds RLlib waits for an env runner's samples in one iteration (RLlib's default, 60, returns empty iterations
#: on a loaded 2-core machine while the runner is still starting).
SAMPLE_TIMEOUT_S = 600.0
#: Iterations in a row without samples before :func:`train_rllib` gives up with an error.
EMPTY_ITERATIONS_ALLOWED = 3


class TableMultiAgentEnv(MultiAgentEnv):
    """A tableenvs game as an RLlib multi-agent env (see the module docstring for ``config``)."""

    def __init__(self, config: Mapping[str, Any] | None = None):
        super().__init__()
        config = dict(config or {})
        unknown = sorted(set(config) - {"env", "options", "learners", "opponents", "seed", "trust_models"})
        if unknown or "env" not in config:
            raise ValueError(
                "TableMultiAgentEnv config needs 'env' (a game name) and takes only 'options', 'learners', "
                f"'opponents' and 'seed' (and 'trust_models', to load a .zip opponent); got {sorted(config)}"
            )
        self.raw = make_raw(config["env"], **dict(config.get("options") or {}))
        seats = range(self.raw.num_players)
        learners = list(seats) if config.get("learners") is None else list(config["learners"])
        if not learners or any(seat not in seats for seat in learners) or len(set(learners)) != len(learners):
            raise ValueError(f"learners must list distinct seats among {list(seats)}, got {config.get('learners')!r}")
        names = self.raw.possible_agents
        self.possible_agents = [names[seat] for seat in sorted(learners)]
        self.agents = list(self.possible_agents)
        opponents = config.get("opponents", "random")
        self._opponents = {
            names[seat]: make_policy(opponents, self.raw, trust_models=bool(config.get("trust_models")))
            for seat in seats
            if names[seat] not in self.agents
        }
        agent = names[0]
        mask_size = int(self.raw.action_space(agent).n)
        space = spaces.Dict(
            {
                "observations": self.raw.observation_space(agent)["observation"],
                "action_mask": spaces.Box(0.0, 1.0, (mask_size,), np.float32),
            }
        )
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = {name: self.raw.action_space(name) for name in self.possible_agents}
        self._rng = np.random.default_rng(config.get("seed"))

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self.raw.reset(seed=seed, options=options)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.agents = list(self.possible_agents)
        # Rewards of opponents' moves before the first learner's turn are not passed on: none of these games scores
        # anything before every seat has acted.
        self._play_opponents(dict.fromkeys(self._learner_agents, 0.0))
        return {self.raw.agent_selection: self._observe(self.raw.agent_selection)}, {}

    def step(self, action_dict: Mapping[Any, Any]):  # keyed by our agent names (RLlib's AgentID: any hashable)
        agent = self.raw.agent_selection
        if set(action_dict) != {agent}:
            raise ValueError(f"it is {agent}'s turn alone; got actions for {sorted(action_dict)}")
        rewards = dict.fromkeys(self._learner_agents, 0.0)
        self.raw.step(int(action_dict[agent]))
        self._add_rewards(rewards)
        self._play_opponents(rewards)
        if not self._game_over():
            nobody = {"__all__": False}
            return {self.raw.agent_selection: self._observe(self.raw.agent_selection)}, rewards, nobody, nobody, {}
        truncated = bool(self.raw.truncations[self.raw.agent_selection])
        done = dict.fromkeys(self.possible_agents, True) | {"__all__": True}
        not_done = dict.fromkeys(self.possible_agents, False) | {"__all__": False}
        self.agents = []
        observations = {name: self._observe(name) for name in self._learner_agents}
        return observations, rewards, not_done if truncated else done, done if truncated else not_done, {}

    @property
    def _learner_agents(self) -> list[str]:
        """``possible_agents`` (the learners' agent names) as the strings they are: RLlib types an AgentID as any
        hashable."""
        return cast("list[str]", self.possible_agents)

    def _observe(self, agent: str) -> dict[str, np.ndarray]:
        observation = self.raw.observe(agent)
        return {
            "observations": observation["observation"],
            "action_mask": observation["action_mask"].astype(np.float32),
        }

    def _game_over(self) -> bool:
        agent = self.raw.agent_selection
        return bool(self.raw.terminations[agent] or self.raw.truncations[agent])

    def _add_rewards(self, rewards: dict[str, float]) -> None:
        for name in rewards:
            rewards[name] += float(self.raw.rewards[name])

    def _play_opponents(self, rewards: dict[str, float]) -> None:
        """Play the opponents' moves until a learner is to act or the game is over."""
        while not self._game_over() and self.raw.agent_selection in self._opponents:
            agent = self.raw.agent_selection
            observation = self.raw.observe(agent)
            action = self._opponents[agent].act(observation["observation"], observation["action_mask"], self._rng)
            self.raw.step(action)
            self._add_rewards(rewards)


class MaskedRLModule(TorchRLModule, ValueFunctionAPI):
    """The network of :func:`tableenvs.policies.torch_policy.build_network` as an RLlib module for PPO.

    ``model_config``: ``{"hidden": [sizes]}`` (default :data:`tableenvs.policies.torch_policy.DEFAULT_HIDDEN`). The
    observation space is the env's Dict of ``"observations"`` and ``"action_mask"``.
    """

    def setup(self):
        hidden = (self.model_config or {}).get("hidden", DEFAULT_HIDDEN)
        size = int(self.observation_space["observations"].shape[0])
        self.network = build_network(size, int(self.action_space.n), hidden)

    def _forward(self, batch, **kwargs):
        observations = batch[Columns.OBS]
        logits = masked_logits(self.network, observations["observations"], observations["action_mask"])
        return {Columns.ACTION_DIST_INPUTS: logits}

    def compute_values(self, batch, embeddings=None):
        return self.network.vf(batch[Columns.OBS]["observations"]).squeeze(-1)


def _policy_mapping(mode: str, agents: Sequence[str]) -> tuple[list[str], Callable[..., str]]:
    """The module ids and RLlib's ``policy_mapping_fn`` for a ``policies`` mode."""
    if mode == "shared":
        return ["shared"], lambda agent_id, episode, **kwargs: "shared"
    return list(agents), lambda agent_id, episode, **kwargs: agent_id


def ppo_config(
    env: str,
    *,
    options: Mapping[str, Any] | None = None,
    policies: str = "shared",
    learners: Sequence[int] | None = None,
    opponents: Any = "random",
    trust_models: bool = False,
    env_runners: int = 1,
    hidden: Sequence[int] = DEFAULT_HIDDEN,
    train_batch_size: int = 2000,
    minibatch_size: int = 256,
    num_epochs: int = 4,
    lr: float = 3e-4,
    seed: int = 0,
) -> PPOConfig:
    """RLlib's PPO (new API stack) on ``env`` with :class:`MaskedRLModule` (the arguments: :func:`train_rllib`)."""
    if policies not in POLICY_MODES:
        raise ValueError(f"policies must be one of {', '.join(POLICY_MODES)}, got {policies!r}")
    env_config = {
        "env": env,
        "options": dict(options or {}),
        "learners": learners,
        "opponents": opponents,
        "trust_models": bool(trust_models),
    }
    probe = TableMultiAgentEnv(env_config)  # bad names, options and seats fail here, not in a remote worker
    module_ids, mapping = _policy_mapping(policies, probe._learner_agents)
    spec = RLModuleSpec(module_class=MaskedRLModule, model_config={"hidden": [int(size) for size in hidden]})
    return (
        PPOConfig()
        # RLlib's env pre-check steps unmasked random actions, which the game refuses as illegal; the env's own
        # checks are in tests_rllib/.
        .environment(TableMultiAgentEnv, env_config=env_config, disable_env_checking=True)
        .multi_agent(policies=set(module_ids), policy_mapping_fn=mapping)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=dict.fromkeys(module_ids, spec)))
        # A slow or loaded machine (a runner's first sample can take minutes) waits instead of returning nothing.
        .env_runners(num_env_runners=env_runners, sample_timeout_s=SAMPLE_TIMEOUT_S)
        .training(train_batch_size=train_batch_size, minibatch_size=minibatch_size, num_epochs=num_epochs, lr=lr)
        .debugging(seed=seed)
    )


def init_ray(address: str | None = None) -> None:
    """``ray.init`` as tableenvs starts it: no dashboard, workers' logs not forwarded, and a **local** instance
    (``address`` None with no ``RAY_ADDRESS`` set, or ``"local"``) listening on 127.0.0.1 only.

    Left alone, Ray binds its servers (GCS, raylet, object manager, workers) to the machine's network address, where
    other hosts can reach them. Ray takes the loopback address as the node's only where it does not support clusters
    (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER`` false), so for a local start that switch is turned off in this process and
    in the environment its Ray processes inherit, and both are restored once Ray is up. An ``address`` of a cluster
    (``"auto"``, ``"ray://HEAD:10001"``, or ``RAY_ADDRESS``) is joined as given."""
    local = address == "local" or (address is None and not os.environ.get("RAY_ADDRESS"))
    if not local:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
        return
    from ray._private import ray_constants

    variable = ray_constants.ENABLE_RAY_CLUSTERS_ENV_VAR
    saved = ray_constants.ENABLE_RAY_CLUSTER, os.environ.get(variable)
    ray_constants.ENABLE_RAY_CLUSTER = False
    os.environ[variable] = "0"
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    finally:
        ray_constants.ENABLE_RAY_CLUSTER = saved[0]
        if saved[1] is None:
            del os.environ[variable]
        else:
            os.environ[variable] = saved[1]


def train_rllib(
    env: str,
    *,
    out: str | Path,
    timesteps: int = 50_000,
    ray_address: str | None = None,
    final_games: int = 0,
    progress: Callable[[str], None] | None = print,
    **settings: Any,
) -> dict[str, Any]:
    """Train PPO with RLlib until ``timesteps`` env steps are sampled; export the policies; return the record.

    ``settings`` are :func:`ppo_config`'s keyword arguments: ``options`` (game options), ``policies``,
    ``learners`` (the seats RLlib plays, default all; the others play ``opponents`` inside the env: a built-in
    name or a saved ``.npz``/``.pt``, or a ``.zip`` with ``trust_models=True``, e.g. an earlier export, self-play
    against a frozen copy), ``env_runners``
    (sampling workers; 0: sample in this process), ``hidden``, ``train_batch_size`` (env steps per iteration),
    ``minibatch_size``, ``num_epochs``, ``lr``, ``seed``. ``ray_address`` goes to ``ray.init`` when Ray is not
    initialised yet (None: ``RAY_ADDRESS`` or a local Ray; ``"auto"`` or ``"ray://HEAD:10001"`` a cluster).
    ``progress`` gets one line per iteration (None: quiet): env steps so far, games finished, and each learner's
    mean return per game as RLlib reports it (over its last 100 games, ``metrics_num_episodes_for_smoothing``).
    ``final_games`` > 0 then plays the (first) exported policy against random play with
    :func:`tableenvs.evaluation.evaluate` and adds the table to the record. Writes under ``out``: one ``.pt``
    per module (``policy.pt`` when shared, else ``player_k.pt``) and ``results.json``, whose ``config`` lets
    ``tableenvs eval`` know the game and player count.
    """
    out = check_output_dir(out, "out")
    if isinstance(timesteps, bool) or not isinstance(timesteps, int) or timesteps < 1:
        raise ValueError(f"timesteps must be an integer >= 1, got {timesteps!r}")
    bound = inspect.signature(ppo_config).bind(env, **settings)  # a TypeError names an unknown setting
    bound.apply_defaults()
    settings = {name: value for name, value in bound.arguments.items() if name != "env"}
    options = settings["options"] = dict(settings["options"] or {})
    config = ppo_config(env, **settings)
    options.setdefault("num_players", make_raw(env, **options).num_players)
    if not ray.is_initialized():
        init_ray(ray_address)
    say = progress or (lambda line: None)
    say(
        f"RLlib PPO on {env}, {options['num_players']} players, {settings['policies']} policies, "
        f"{settings['env_runners']} env runner(s), budget {timesteps} env steps, seed {settings['seed']}"
    )
    start = time.process_time(), time.perf_counter()
    algo = config.build_algo()
    setup_seconds = time.perf_counter() - start[1]
    iterations: list[dict[str, Any]] = []
    steps, empty = 0, 0
    try:
        while steps < timesteps:
            result = algo.train()
            runners = result.get("env_runners")
            if not runners or "num_env_steps_sampled_lifetime" not in runners:
                empty += 1  # RLlib returns an iteration without samples when its runners time out
                if empty == EMPTY_ITERATIONS_ALLOWED:
                    raise RuntimeError(
                        f"RLlib returned {empty} iterations in a row without samples (env runners slower than "
                        f"{SAMPLE_TIMEOUT_S:.0f} s per sample, or dead); try fewer --env-runners or a less loaded "
                        "machine"
                    )
                say(f"iteration {len(iterations) + 1}: no samples came back in time; trying again")
                continue
            empty = 0
            steps = int(runners["num_env_steps_sampled_lifetime"])
            returns = runners.get("agent_episode_returns_mean", {})
            row: dict[str, Any] = {
                "iteration": len(iterations) + 1,
                "env_steps": steps,
                "games": int(runners.get("num_episodes_lifetime", 0)),
                "mean_return": {agent: round(float(value), 3) for agent, value in sorted(returns.items())},
                "seconds": round(time.perf_counter() - start[1], 2),
            }
            iterations.append(row)
            shown = ", ".join(f"{agent} {value:.2f}" for agent, value in row["mean_return"].items())
            say(
                f"iteration {row['iteration']}: {steps}/{timesteps} env steps, {row['games']} games, "
                f"{row['seconds']:.0f} s; mean return per game (last <=100 games): {shown or 'none finished yet'}"
            )
        out.mkdir(parents=True, exist_ok=True)
        files = _export(algo, out, env, options, settings["hidden"])
    finally:
        algo.stop()
    seconds = time.perf_counter() - start[1]
    record: dict[str, Any] = {
        "config": {
            "env": env,
            "backend": "rllib",
            "timesteps": timesteps,
            **settings,
            "learners": None if settings["learners"] is None else list(settings["learners"]),
            "opponents": str(settings["opponents"]),  # a name or path; other specs by their text
            "hidden": [int(size) for size in settings["hidden"]],
        },
        "ray_version": ray.__version__,
        "env_steps": steps,
        "seconds": round(seconds, 2),
        "setup_seconds": round(setup_seconds, 2),
        "driver_cpu_seconds": round(time.process_time() - start[0], 2),
        "iterations": iterations,
        "policies": {module: path.name for module, path in files.items()},
    }
    write_text_atomic(out / "results.json", json.dumps(record, indent=2))
    say(
        f"{steps} env steps in {len(iterations)} iterations, {seconds:.1f} s ({setup_seconds:.1f} s of it RLlib's "
        f"set-up); wrote {', '.join(str(path) for path in files.values())} and {out / 'results.json'}"
    )
    if final_games:
        from tableenvs.evaluation import evaluate

        first = next(iter(files.values()))
        result = evaluate(env, [str(first), "random"], final_games, options=options, seed=settings["seed"])
        record["final_table"] = result.format_table()
        write_text_atomic(out / "results.json", json.dumps(record, indent=2))
        say(record["final_table"])
    return record


def _export(algo: Any, out: Path, env: str, options: Mapping[str, Any], hidden: Sequence[int]) -> dict[str, Path]:
    """Each trained module's network (the learner's weights) as a torch-only policy file: ``policy.pt`` (shared)
    or ``<module>.pt``."""
    import torch

    files = {}
    for module_id in sorted(algo.config.policies):
        state = algo.learner_group.get_weights([module_id])[module_id]
        module = algo.get_module(module_id)  # the same architecture, built from the env's spaces
        network = build_network(module.network.pi[0].in_features, module.network.pi[-1].out_features, hidden)
        network.load_state_dict(
            {key.removeprefix("network."): torch.as_tensor(np.asarray(value)) for key, value in state.items()}
        )
        name = "policy.pt" if module_id == "shared" else f"{module_id}.pt"
        files[module_id] = save_policy(network, out / name, env=env, options=options, hidden=hidden)
    return files
