"""Result shards under an output folder (`--output DIR`), and the summary written beside them last.

A shard holds the results of consecutive conversations, in input order:
`part-00000.jsonl` one result a line (the JSON of one conversation in a
`check --format json` document), or `part-00000.parquet` with columns
`source`, `conversation_id`, `verdict` and `result` (that JSON as a string).
Shard names sort in input order. `summary.json` is written only when every
shard is, so a folder with a summary is complete; on bad input the shards
already written are removed and no summary is written.
"""

from __future__ import annotations

from collections.abc import Sequence

from .storage import delete, write_bytes
from .work import Checked

FORMATS = ("jsonl", "parquet")
SUMMARY_NAME = "summary.json"
#: Conversations per shard of the local engine (a Ray task writes one shard per chunk).
LOCAL_SHARD_CONVERSATIONS = 10_000


def shard_name(index: int, fmt: str) -> str:
    return f"part-{index:05d}.{fmt}"


def shard_bytes(items: Sequence[Checked], fmt: str) -> bytes:
    if fmt == "jsonl":
        return "".join(item.rendered + "\n" for item in items).encode("utf-8")
    from .parquet import results_parquet

    return results_parquet([(i.source, i.conversation_id, i.verdict.value, i.rendered) for i in items])


def write_shard(folder: str, index: int, items: Sequence[Checked], fmt: str) -> str | None:
    """Write one shard; nothing for no conversations. Returns its path."""
    if not items:
        return None
    return write_bytes(folder, shard_name(index, fmt), shard_bytes(items, fmt))


class ShardWriter:
    """Shards of the local engine, written as results arrive, a shard every `per_shard` conversations."""

    def __init__(self, folder: str, fmt: str, per_shard: int = LOCAL_SHARD_CONVERSATIONS):
        self.folder, self.fmt, self.per_shard = folder, fmt, per_shard
        self.pending: list[Checked] = []
        self.written: list[str] = []

    def add(self, item: Checked) -> None:
        self.pending.append(item)
        if len(self.pending) >= self.per_shard:
            self.flush()

    def flush(self) -> None:
        path = write_shard(self.folder, len(self.written), self.pending, self.fmt)
        if path:
            self.written.append(path)
        self.pending = []

    def remove_all(self) -> None:
        remove(self.written)
        self.pending, self.written = [], []


def remove(paths: Sequence[str]) -> None:
    for path in paths:
        delete(path)


def write_summary(folder: str, document: str) -> str:
    return write_bytes(folder, SUMMARY_NAME, document.encode("utf-8"))
