"""Result shards as Parquet (`check --output DIR --output-format parquet`): one row a conversation.

Columns `source`, `conversation_id`, `verdict` and `result`, the last the codec's JSON of the
conversation's result as a string, so a shard reads back as the same typed results a JSONL one does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import LoadError

INSTALL_HINT = "reading or writing Parquet needs pyarrow: pip install 'dialogcheck[parquet]'"
RESULT_COLUMNS = ("source", "conversation_id", "verdict", "result")


def pyarrow_module(file: str = "") -> Any:
    """pyarrow with its Parquet module, or a `LoadError` saying how to install it."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise LoadError.one(INSTALL_HINT, file) from None
    return pyarrow


def results_parquet(rows: list[tuple[str, str | None, str, str]]) -> bytes:
    """A result shard: one row a conversation, its whole result as a JSON string in `result`."""
    pa = pyarrow_module()
    columns: list[tuple[Any, ...]] = list(zip(*rows)) if rows else [() for _ in RESULT_COLUMNS]
    table = pa.table({name: pa.array(list(values), pa.string()) for name, values in zip(RESULT_COLUMNS, columns)})
    out = pa.BufferOutputStream()
    pa.parquet.write_table(table, out)
    return out.getvalue().to_pybytes()


def result_values(path: Path) -> list[str]:
    """The `result` column of a Parquet shard: each conversation's result as JSON text."""
    pa = pyarrow_module(str(path))
    return pa.parquet.read_table(path, columns=["result"], use_threads=False).column("result").to_pylist()  # as `RowGroup.read`
