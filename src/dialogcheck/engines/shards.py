"""Result shards under an output folder (`--output DIR`), and the summary written beside them last.

A shard holds the results of one chunk of the input (a worker writes it), in input order:
`part-00000.jsonl` one result a line (the JSON of one conversation in a
`check --format json` document), or `part-00000.parquet` with columns
`source`, `conversation_id`, `verdict` and `result` (that JSON as a string).
Shard names sort in input order. `summary.json` is written only when every
shard is, so a folder with a summary is complete; on bad input the shards
already written are removed and no summary is written.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..results.codec import conversation_line
from ..results.model import ConversationResult
from .storage import delete, write_bytes

SUMMARY_NAME = "summary.json"


def shard_name(index: int, fmt: str) -> str:
    return f"part-{index:05d}.{fmt}"


def shard_bytes(results: Sequence[ConversationResult], fmt: str) -> bytes:
    """The shard of judged conversations, each as its JSON line (the codec's)."""
    if fmt == "jsonl":
        return b"".join(conversation_line(result) + b"\n" for result in results)
    from ..results.parquet import results_parquet

    return results_parquet([(r.source, r.conversation_id, r.verdict.value, conversation_line(r).decode("utf-8")) for r in results])


def write_shard(folder: str, fmt: str, index: int, results: Sequence[ConversationResult]) -> str | None:
    """Write one shard; nothing for no conversations. Returns its path."""
    if not results:
        return None
    return write_bytes(folder, shard_name(index, fmt), shard_bytes(results, fmt))


def remove(paths: Sequence[str]) -> None:
    for path in paths:
        delete(path)


def remove_shards(folder: str, fmt: str) -> None:
    """Remove every shard in `folder` (checked empty before the run, so every shard there is this run's)."""
    from .storage import is_uri, list_files

    if is_uri(folder):
        paths = list_files(folder, (f".{fmt}",)) or []
    else:
        import os

        paths = [os.path.join(folder, n) for n in os.listdir(folder)] if os.path.isdir(folder) else []
    remove([p for p in paths if p.rsplit("/", 1)[-1].startswith("part-") and p.endswith(f".{fmt}")])


def write_summary(folder: str, document: bytes) -> str:
    return write_bytes(folder, SUMMARY_NAME, document)
