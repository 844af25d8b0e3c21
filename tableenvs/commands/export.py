"""``tableenvs export``: a saved Stable-Baselines3 model (.zip) written as a numpy policy file (.npz).

Where you are: the export sub-command's implementation, called by :mod:`tableenvs.cli` with the parsed flags. It checks
MODEL and OUT, finds the game and options (the flags, else the ``results.json`` that ``tableenvs train`` wrote beside
the model: :func:`tableenvs.evaluation.models.training_config`), then calls
:func:`tableenvs.policies.sb3_policy.export_sb3` (which reads the .zip without running its pickles unless
``--trust-models``) and prints what it wrote. It needs torch to read the weights. User errors are ``ValueError`` (the
CLI prints them, exit 2).
"""

from __future__ import annotations

import argparse

from tableenvs.commands.extras import missing_module
from tableenvs.commands.flags import parse_option
from tableenvs.paths import check_model_files, check_output_dir
from tableenvs.play.text import printable


def run(args: argparse.Namespace) -> int:
    """``tableenvs export``: :func:`tableenvs.policies.sb3_policy.export_sb3`, the game from the flags or the training
    record."""
    from pathlib import Path

    from tableenvs.evaluation.models import training_config
    from tableenvs.policies.numpy_policy import load_numpy_policy

    if not args.model.endswith(".zip"):
        raise ValueError(f"MODEL must be a saved SB3 model (.zip), got {args.model!r}")
    check_model_files([args.model], "MODEL")
    out = Path(args.out).expanduser()
    if out.suffix != ".npz":
        raise ValueError(f"OUT must be a .npz file, got {args.out!r}")
    if out.is_dir():
        raise ValueError(f"OUT {args.out!r} is a directory")
    if not out.parent.is_dir():
        raise ValueError(f"OUT {args.out!r}: the directory {str(out.parent)!r} does not exist")
    check_output_dir(out.parent, "OUT's directory")
    options = dict(parse_option(text) for text in args.option)
    if args.players is not None:
        options["num_players"] = args.players
    game, source = args.game, "as given"
    if game is None:
        found = training_config(args.model)
        if found is None:
            raise ValueError(
                f"no results.json beside {args.model!r} names its game: give --game (and --players, --option as "
                "trained)"
            )
        record, config = found
        game, options = config["env"], {**dict(config.get("options") or {}), **options}
        source = f"from {record}"
    missing = missing_module(("torch",))
    if missing is not None:
        raise ValueError(f'export reads the weights with torch ({missing} is missing): pip install "tableenvs[train]"')
    from tableenvs.policies.sb3_policy import export_sb3

    path = export_sb3(args.model, out, game, options=options, trust=args.trust_models)
    model = load_numpy_policy(path)
    print(
        printable(
            f"wrote {path}: {game} {model.options} ({source}), layers {model.observation_size}-"
            f"{'-'.join(map(str, model.hidden))}{'-' if model.hidden else ''}{model.num_actions}, {model.activation}; "
            f"play it with: tableenvs eval {game} --policies {path},heuristic"
        )
    )
    return 0
