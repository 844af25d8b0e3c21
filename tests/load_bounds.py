"""Time bounds for tests that wait on another process or thread, sized for a machine at load ~20.

Where you are: a helper of the tests (imported as ``from load_bounds import ...``; not a test module). On 2 cores at
load ~20 each process gets about a tenth of a core, so a child that needs X CPU-seconds can take 10X seconds of wall
time. The bounds here only stop a test that hangs; none of them measures speed (a test that checks a cost measures
CPU time, ``time.thread_time`` or ``time.process_time``, which starvation does not inflate), and a test that
waits for something to happen waits for the thing itself (a line of output, a file, a signal) with these as the
outer limit.
"""

#: The longest a test waits for a subprocess (or a condition another process brings about) before calling it hung:
#: an interpreter start and a tableenvs import take 2-5 CPU-s, a whole small game or tournament up to ~30 CPU-s,
#: i.e. up to ~300 s of wall time at load 20; doubled.
HANG = 600.0

#: The same for the heaviest children (a fresh numba compile of the Rummikub solver, ~25 CPU-s on top of an
#: install or an import: ~450 s of wall time at load 20), doubled.
HANG_COMPILE = 1200.0
