"""``python -m tableenvs``: the ``tableenvs`` command (:mod:`tableenvs.cli`)."""

import sys

from tableenvs.cli import main

sys.exit(main())
