"""How much an environment file, its state and one run may hold: every loop and read driven by input is bounded.

The file itself is bounded by the YAML reader (`_yaml.MAX_FILE_BYTES`, `MAX_VALUES`, `MAX_DEPTH`); a state
file in JSON is bounded here, and so are the things a run accumulates (calls, recorded events).
"""

from __future__ import annotations

#: The most bytes a JSON state file may take (a YAML one is bounded by the YAML reader's own 1 MB).
MAX_STATE_BYTES = 8 * 2**20
#: Entries of the state's tables, counted across tables: a test fixture, not a production database.
MAX_RECORDS = 100_000
#: Nesting of the state's values: records of records, far from Python's recursion limit.
MAX_STATE_DEPTH = 64
MAX_TOOLS = 200
MAX_FAULTS = 500
#: Changes one `write` behaviour may make per call.
MAX_CHANGES = 50
#: The longest delay a `timeout` or `latency` fault may name, in seconds.
MAX_DELAY = 300.0
#: How many writing calls back a `stale` fault may reach (each is kept as a copy of the state).
MAX_BEHIND = 100
#: Calls one run's environment answers; past it every call is an error (an agent in a loop).
MAX_CALLS = 10_000
#: The bytes one call's arguments may take as JSON.
MAX_ARGUMENT_BYTES = 2**20
