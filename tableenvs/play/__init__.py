"""Playing and watching games: game records and replay (``records``), the HTML replay viewer (``viewer``) and the
human seat of ``tableenvs play`` (``terminal_seat``).

Where you are: ``tableenvs/play/``; the browser tables are in ``tableenvs/web/``. This ``__init__`` imports nothing.
"""
