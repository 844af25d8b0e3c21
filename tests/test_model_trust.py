"""The trust boundary for model files: an SB3 ``.zip`` holds pickles that can run code, so it loads only
with ``trust_models=True`` / ``--trust-models``; a ``.npz`` numpy policy is plain arrays, and every malformed one
is refused with a one-line error; a numpy policy plays a whole game where torch cannot even be imported.

Each crafted pickle here would create a marker file if it ran; the tests check that it never does (and, once, that
it would with trust, so the payload is real).
"""

import base64
import json
import os
import pickle
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest
from load_bounds import HANG

import tableenvs
from tableenvs.policies import UntrustedModelError, make_policy
from tableenvs.policies.numpy_policy import NumpyPolicy, load_numpy_policy, random_numpy_policy, save_numpy_policy

ROOT = Path(__file__).resolve().parent.parent


class Payload:
    """Unpickling this creates ``marker`` (what a hostile model file could do with any code)."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def hostile_zip(path: Path, marker: Path) -> Path:
    """A file shaped like an SB3 save whose ``data`` carries a pickle that creates ``marker`` when SB3 loads it."""
    serialized = base64.b64encode(pickle.dumps(Payload(marker))).decode()
    data = {
        "policy_class": {":type:": "<class 'abc.ABCMeta'>", ":serialized:": serialized},
        "observation_space": {":type:": "<class 'gymnasium.spaces.box.Box'>", ":serialized:": serialized},
    }
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data", json.dumps(data))
        archive.writestr("policy.pth", b"")
        archive.writestr("_stable_baselines3_version", "2.9.2")
    return path


def run_python(code: str, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], env=env, text=True, capture_output=True, timeout=HANG, **kwargs
    )


# ---------------------------------------------------------------------------------------------- SB3 .zip files


def test_a_hostile_zip_is_refused_by_make_policy_and_its_pickle_never_runs(tmp_path):
    marker = tmp_path / "pwned"
    model = hostile_zip(tmp_path / "hostile.zip", marker)
    raw = tableenvs.make_raw("pilipili_v0", num_players=3)
    for spec in (str(model), model):
        with pytest.raises(UntrustedModelError) as raised:
            make_policy(spec, raw)
        message = str(raised.value)
        assert "\n" not in message and "holds pickles that can run code" in message
        assert f"tableenvs export {model} {tmp_path / 'hostile.npz'}" in message and "--trust-models" in message
    from tableenvs.training.single_agent import SingleAgentEnv

    with pytest.raises(UntrustedModelError):
        SingleAgentEnv("pilipili_v0", num_players=3, opponents=str(model))
    from tableenvs.evaluation import evaluate

    with pytest.raises(UntrustedModelError, match=r"policy #2 \(hostile\): .*holds pickles"):
        evaluate("pilipili_v0", ["random", str(model)], games=3, num_players=3)
    assert not marker.exists()


def test_export_reads_a_zip_without_running_its_pickles(tmp_path):
    pytest.importorskip("torch")
    from tableenvs.policies.sb3_policy import export_sb3

    marker = tmp_path / "pwned"
    model = hostile_zip(tmp_path / "hostile.zip", marker)
    with pytest.raises(ValueError, match="only SB3's and sb3-contrib's MlpPolicy can be read"):
        export_sb3(model, tmp_path / "model.npz", "pilipili_v0", options={"num_players": 3})
    assert not marker.exists() and not (tmp_path / "model.npz").exists()


def test_with_trust_the_same_file_would_run_its_payload(tmp_path):
    """What the refusal protects against: SB3 unpickles ``data`` when it loads the file."""
    pytest.importorskip("sb3_contrib", reason="needs the train extra")
    marker = tmp_path / "pwned"
    model = hostile_zip(tmp_path / "hostile.zip", marker)
    with pytest.raises(Exception):  # noqa: B017 - the load then fails; what matters is that the pickle ran
        make_policy(str(model), tableenvs.make_raw("pilipili_v0", num_players=3), trust_models=True)
    assert marker.exists()


def test_tableenvs_eval_refuses_a_hostile_zip_in_one_line(tmp_path):
    marker = tmp_path / "pwned"
    model = hostile_zip(tmp_path / "hostile.zip", marker)
    argv = ["eval", "pilipili_v0", "--policies", f"random,{model}", "--players", "3", "--games", "3"]
    argv += ["--no-progress", "--no-plot", "--out", str(tmp_path / "eval")]
    result = run_python(f"import sys; from tableenvs.cli import main; sys.exit(main({argv!r}))")
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert (
        lines[0].startswith("tableenvs: error: policy #2 (hostile): ") and "holds pickles that can run code" in lines[0]
    )
    assert "--trust-models" in lines[0] and "tableenvs export" in lines[0]
    assert not marker.exists() and not (tmp_path / "eval" / "results.json").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["play", "pilipili_v0", "--players", "3", "--policies", "random,MODEL,random"],
        ["train", "pilipili_v0", "--players", "3", "--opponents", "MODEL", "--out", "OUT"],
        ["serve", "--model", "best=MODEL"],
    ],
    ids=["play", "train", "serve"],
)
def test_every_subcommand_that_loads_models_refuses_a_zip_without_trust(tmp_path, cli, argv):
    if argv[0] == "train":
        pytest.importorskip("sb3_contrib", reason="train checks its extra first")
    if argv[0] == "serve":
        pytest.importorskip("starlette", reason="serve checks its extra first")
    marker = tmp_path / "pwned"
    model = hostile_zip(tmp_path / "hostile.zip", marker)
    argv = [str(model) if a == "MODEL" else a.replace("MODEL", str(model)) for a in argv]
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    code, _, err = cli(argv)
    assert code == 2 and "holds pickles that can run code" in err and len(err.strip().splitlines()) == 1, err
    assert not marker.exists()


# ---------------------------------------------------------------------------------------------- malformed .npz files


def good_arrays(raw) -> tuple[dict, dict]:
    """``(header, arrays)`` of a valid file for ``raw`` (hidden layer of 8)."""
    agent = raw.possible_agents[0]
    size, actions = raw.observation_space(agent)["observation"].shape[0], raw.action_space(agent).n
    from tableenvs.core.layout import layout_version
    from tableenvs.policies.numpy_policy import model_options

    header = {
        "format": "tableenvs-numpy-policy",
        "version": 1,
        "game": raw.metadata["name"],
        "options": model_options(raw),
        "layout_version": layout_version(raw),
        "observation_size": int(size),
        "num_actions": int(actions),
        "hidden": [8],
        "activation": "relu",
    }
    rng = np.random.default_rng(0)
    arrays = {
        "layer0.weight": rng.normal(size=(size, 8)).astype(np.float32),
        "layer0.bias": np.zeros(8, np.float32),
        "layer1.weight": rng.normal(size=(8, actions)).astype(np.float32),
        "layer1.bias": np.zeros(actions, np.float32),
    }
    return header, arrays


def write_npz(path: Path, header: dict | None, arrays: dict, **extra) -> Path:
    members = dict(arrays)
    if header is not None:
        members["header"] = np.frombuffer(json.dumps(header).encode(), np.uint8)
    members.update(extra)
    with open(path, "wb") as handle:
        np.savez(handle, **members)  # np.savez pickles object arrays: what a hostile file could hold
    return path


def broken(header: dict, arrays: dict, marker: Path, case: str) -> tuple[dict | None, dict, dict]:
    header, arrays, extra = json.loads(json.dumps(header)), dict(arrays), {}
    if case == "pickled object array":
        arrays["layer0.bias"] = np.array([Payload(marker)] * 8, dtype=object)
    elif case == "extra pickled member":
        extra["evil"] = np.array([Payload(marker)], dtype=object)
    elif case == "wrong shape":
        arrays["layer1.weight"] = arrays["layer1.weight"][:, :-1]
    elif case == "shapes do not chain":
        header["hidden"] = [9]
    elif case == "float64 weights":
        arrays["layer0.weight"] = arrays["layer0.weight"].astype(np.float64)
    elif case == "non-finite weights":
        arrays["layer1.weight"][0, 0] = np.nan
    elif case == "infinite bias":
        arrays["layer0.bias"][3] = np.inf
    elif case == "missing header":
        header = None
    elif case == "missing layer":
        del arrays["layer1.bias"]
    elif case == "other format":
        header["format"] = "something-else"
    elif case == "newer version":
        header["version"] = 2
    elif case == "unknown header key":
        header["surprise"] = 1
    elif case == "bad activation":
        header["activation"] = "gelu"
    return header, arrays, extra


MALFORMED = {
    "pickled object array": "holds Python objects (a pickle)",
    "extra pickled member": "unexpected archive member(s) 'evil'",
    "wrong shape": "'layer1.weight' has shape",
    "shapes do not chain": "'layer0.weight' has shape",
    "float64 weights": "'layer0.weight' has dtype float64, not float32",
    "non-finite weights": "'layer1.weight' holds 1 non-finite value(s)",
    "infinite bias": "'layer0.bias' holds 1 non-finite value(s)",
    "missing header": "has no 'header' array",
    "missing layer": "missing layer1.bias",
    "other format": "is not a tableenvs numpy policy",
    "newer version": "has format version 2; this tableenvs reads version 1",
    "unknown header key": "unknown surprise",
    "bad activation": "activation must be one of relu, tanh, got 'gelu'",
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_npz_is_refused_in_one_line_naming_the_file(tmp_path, case):
    raw = tableenvs.make_raw("pilipili_v0", num_players=3)
    marker = tmp_path / "pwned"
    header, arrays, extra = broken(*good_arrays(raw), marker, case)
    path = write_npz(tmp_path / "bad.npz", header, arrays, **extra)
    for load in (lambda: load_numpy_policy(path), lambda: make_policy(str(path), raw)):
        with pytest.raises(ValueError) as raised:
            load()
        message = str(raised.value)
        assert message.startswith(f"numpy policy {str(path)!r}") and MALFORMED[case] in message, message
        assert "\n" not in message
    assert not marker.exists()


def test_the_good_file_of_those_cases_loads(tmp_path):
    raw = tableenvs.make_raw("pilipili_v0", num_players=3)
    path = write_npz(tmp_path / "good.npz", *good_arrays(raw))
    assert isinstance(make_policy(str(path), raw), NumpyPolicy)


def test_files_that_are_not_npz_archives_are_refused(tmp_path):
    raw = tableenvs.make_raw("pilipili_v0", num_players=3)
    marker = tmp_path / "pwned"
    pickled = tmp_path / "pickle.npz"
    pickled.write_bytes(pickle.dumps(Payload(marker)))  # a plain pickle named .npz
    single = tmp_path / "single.npz"
    with open(single, "wb") as handle:
        np.save(handle, np.zeros(3, np.float32))
    text = tmp_path / "text.npz"
    text.write_text("hello")
    for path, words in ((pickled, "is not a readable .npz archive"), (single, "single .npy array"), (text, "is not a")):
        with pytest.raises(ValueError, match=words):
            make_policy(str(path), raw)
    with pytest.raises(FileNotFoundError, match="no numpy policy file"):
        load_numpy_policy(tmp_path / "none.npz")
    assert not marker.exists()


def test_a_wrong_game_layout_version_or_size_is_refused_by_the_policy(tmp_path):
    raw = tableenvs.make_raw("pilipili_v0", num_players=3)
    header, arrays = good_arrays(raw)
    for change, words in (
        ({"game": "llama_party_v0"}, "wrong game: it was made for llama_party_v0, not pilipili_v0"),
        ({"layout_version": 2}, "observation layout version 2 but this tableenvs encodes version 1"),
    ):
        path = write_npz(tmp_path / "m.npz", {**header, **change}, arrays)
        with pytest.raises(ValueError, match=words):
            make_policy(str(path), raw)
    with pytest.raises(ValueError, match="weights must list at least one"):
        save_numpy_policy(tmp_path / "e.npz", game="g", options={}, layout_version=1, weights=[], activation="relu")
    with pytest.raises(ValueError, match="non-finite"):
        save_numpy_policy(
            tmp_path / "e.npz",
            game="g",
            options={},
            layout_version=1,
            weights=[(np.full((2, 2), np.nan), np.zeros(2))],
            activation="relu",
        )
    assert not (tmp_path / "e.npz").exists()


# ---------------------------------------------------------------------------------------------- no torch


def test_a_numpy_policy_plays_a_whole_game_and_an_eval_where_torch_cannot_be_imported(tmp_path):
    model = random_numpy_policy(tmp_path / "model.npz", tableenvs.make_raw("llama_party_v0", num_players=3))
    out = tmp_path / "eval"
    result = run_python(
        f"""
        import sys
        sys.modules["torch"] = None  # import torch now raises ImportError
        import numpy as np
        import tableenvs
        from tableenvs.cli import main
        from tableenvs.policies import make_policy, play_game
        try:
            import torch
        except ImportError:
            pass
        else:
            raise SystemExit("torch imported")
        raw = tableenvs.make_raw("llama_party_v0", num_players=3)
        seats = [make_policy({str(model)!r}, raw), make_policy("heuristic", raw), make_policy({str(model)!r}, raw)]
        totals, decisions = play_game(raw, seats, seed=1, rng=np.random.default_rng(1))
        assert decisions > 0 and raw.outcome() is not None
        code = main(["eval", "llama_party_v0", "--policies", "{model},heuristic,random", "--games", "6",
                     "--no-progress", "--no-plot", "--out", {str(out)!r}])
        assert code == 0, code
        assert sys.modules["torch"] is None, "torch was imported"
        assert not any(name.split(".")[0] in ("stable_baselines3", "sb3_contrib") for name in sys.modules)
        print("ok", decisions)
        """
    )
    assert result.returncode == 0, result.stderr + result.stdout
    assert result.stdout.strip().splitlines()[-1].startswith("ok ")
    assert (out / "results.json").is_file()


def test_evaluation_workers_get_the_flag_with_their_games(tmp_path, monkeypatch):
    import tableenvs.evaluation as evaluation
    from tableenvs.evaluation.playing import Batch, play_batch

    batches = []

    class Captured(Exception):
        pass

    def capture(fn, todo, **kwargs):
        batches.extend(todo)
        raise Captured

    monkeypatch.setattr(evaluation, "run_batches", capture)
    with pytest.raises(Captured):
        evaluation.evaluate(
            "pilipili_v0", ["random", "heuristic"], games=4, num_players=2, workers=2, trust_models=True
        )
    assert batches and all(batch.trust_models for batch in batches)
    # the worker's entry point rebuilds the policies under the batch's flag
    marker = tmp_path / "pwned"
    model = str(hostile_zip(tmp_path / "hostile.zip", marker))
    untrusted = Batch(*[getattr(batches[0], name) for name in ("env", "options")], ("random", model), True, 1, 0, True,
                      batches[0].plan, (0,))  # fmt: skip
    with pytest.raises(UntrustedModelError):
        play_batch(untrusted)
    assert not marker.exists()
