"""Runs one tutorial notebook of examples/ as a script, at a small budget (used by test_notebooks.py).

Where you are: a test helper, run as ``python tests/notebook_runner.py NOTEBOOK.ipynb OUT_JSON NAME=VALUE ...`` in a
scratch directory. The notebook's code cells run in order in one namespace, as a kernel would run them; the cell
tagged ``parameters`` runs first as written, then each ``NAME=VALUE`` (a Python literal) replaces its value, as
papermill does. Matplotlib draws off screen. Written to OUT_JSON: per code cell its printed lines, and the error
(traceback) that stopped the notebook, if any, with the CPU seconds the process used.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import sys
import time
import traceback


def main() -> None:
    path, out, *pairs = sys.argv[1:]
    overrides = {name: ast.literal_eval(value) for name, value in (pair.split("=", 1) for pair in pairs)}
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.show = lambda *args, **kwargs: plt.close("all")  # a kernel would draw the figure inline
    cells = [cell for cell in json.load(open(path))["cells"] if cell["cell_type"] == "code"]
    namespace: dict = {"__name__": "__main__"}
    printed: list[list[str]] = []
    error = None
    started = time.process_time()
    for index, cell in enumerate(cells):
        source = "".join(cell["source"])
        buffer = io.StringIO()
        try:
            with contextlib.redirect_stdout(buffer):
                exec(compile(source, f"{path}[cell {index}]", "exec"), namespace)
                if "parameters" in cell.get("metadata", {}).get("tags", []):
                    unknown = sorted(set(overrides) - set(namespace))
                    if unknown:
                        raise NameError(f"the parameters cell defines no {', '.join(unknown)}")
                    namespace.update(overrides)
        except BaseException:  # noqa: BLE001 - reported to the test, which fails with it
            error = traceback.format_exc(limit=-8)
        printed.append(buffer.getvalue().splitlines())
        if error is not None:
            break
    with open(out, "w") as handle:
        json.dump({"printed": printed, "error": error, "cpu_seconds": time.process_time() - started}, handle)


if __name__ == "__main__":
    main()
