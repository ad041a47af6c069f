"""Engines move conversation data to where it is checked and the results back; they never check anything.

The input is cut into chunks a worker can read on its own (`chunks`): a
range of lines of a JSONL of conversations, a whole file, or a Parquet row
group. Every engine hands chunks to the same function (`work.check_chunk`),
which reads a chunk and judges each conversation with the library's one check
path (`judging.iter_results`) into typed results, sent back in input order.
`local` runs chunks in this process or in worker processes; `ray_engine` runs
them as Ray Data tasks.
"""

from ..errors import DialogcheckError


class RayUnavailable(DialogcheckError):
    """Ray is not installed, or no cluster could be reached: a usage problem, reported with exit code 2."""


class EngineError(DialogcheckError):
    """Ray failed for a reason that is not the input (a task or a node died)."""
