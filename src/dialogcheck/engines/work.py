"""The work of one chunk, the same wherever it runs: read it, judge each conversation, render each result.

`checked` is the one path: the in-process engine iterates it, worker
processes and Ray tasks run `check_chunk`, which collects it into a compact
`ChunkResult` (rendered text or JSON, verdicts, the first bad record), so
only small plain data travels back.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ..batch import iter_results
from ..checks.base import Outcome
from ..errors import LoadError, Problem
from ..evaluate import ConversationResult
from ..events.model import Conversation

@dataclass(frozen=True)
class CheckJob:
    """What every worker needs: the scenario or SOP, and how to render results. Small and picklable."""

    subject: Any
    no_judge: bool = False
    render: str = "json"  # "text" (plain), "rich" (styled, for a terminal) or "json" (one line a conversation)
    keep_results: bool = False  # send the full results back too (for --junit)
    #: When set, a chunk sends back its renderings as one UTF-8 block joined by this separator, not one item
    #: each: the main process then writes a chunk with one call, which keeps it from competing with workers.
    join: str | None = None
    #: Probable typos in a record's names are bad input (`--strict`), not warnings.
    strict: bool = False


@dataclass(frozen=True)
class Checked:
    """One judged conversation as the writer needs it."""

    rendered: Any  # str, or rich Text for `rich`
    verdict: Outcome
    errored: bool  # some single check came out `error`
    source: str
    conversation_id: str | None
    result: ConversationResult | None = None
    warnings: tuple[Problem, ...] = ()


@dataclass
class ChunkResult:
    """Everything a chunk gives back: its judged conversations in order, then the bad record it stopped at.

    `counts` always; then `items`, or (with `CheckJob.join`) `block`, or (with an output folder) `shard`.
    """

    items: list[Checked] = field(default_factory=list)
    problems: tuple[Problem, ...] | None = None
    block: bytes = b""
    counts: dict[Outcome, int] = field(default_factory=dict)
    errored: bool = False
    shard: str | None = None  # the shard written, with an output folder
    warnings: list[Problem] = field(default_factory=list)  # of its conversations, in order

    @property
    def count(self) -> int:
        return sum(self.counts.values())

    def raise_problems(self) -> None:
        if self.problems:
            raise LoadError(self.problems)


def render(result: ConversationResult, how: str) -> Any:
    if how == "json":
        from ..report.json import conversation_json

        return conversation_json(result)
    from ..report.text import render_conversation

    text = render_conversation(result)
    return text if how == "rich" else text.plain


def checked(job: CheckJob, chunk, *, judge=None, metrics: tuple[str, ...] = ()) -> Iterator[Checked]:
    """Each conversation of `chunk`, judged and rendered, in order; a bad record raises `LoadError` where it is."""
    conversations = _strictly(chunk.read()) if job.strict else chunk.read()
    results = iter_results(job.subject, conversations, judge=judge, no_judge=job.no_judge, metrics=metrics)
    for result in results:
        yield Checked(
            render(result, job.render),
            result.verdict,
            Outcome.ERROR in result.check_outcomes,
            result.source,
            result.conversation_id,
            result if job.keep_results else None,
            result.warnings,
        )


def _strictly(conversations: Iterable[Conversation]) -> Iterator[Conversation]:
    """`--strict`: the first record with a probable typo in its names stops the check there, as bad input."""
    for conversation in conversations:
        if conversation.warnings:
            raise LoadError(conversation.warnings)
        yield conversation


def check_chunk(
    job: CheckJob, chunk, *, index: int = 0, folder: str | None = None, fmt: str = "jsonl", judge=None, metrics: tuple[str, ...] = ()
) -> ChunkResult:
    """`checked` collected for a worker: a bad record becomes data, so a worker never raises for user input.

    With `folder`, the chunk's results go to its own shard there (`part-INDEX`) and only counts come back
    (and the full results, for --junit); with `job.join`, they come back as one block.
    """
    out = ChunkResult()
    try:
        for item in checked(job, chunk, judge=judge, metrics=metrics):
            out.items.append(item)
    except LoadError as err:
        out.problems = err.problems
    for item in out.items:
        out.counts[item.verdict] = out.counts.get(item.verdict, 0) + 1
        out.warnings.extend(item.warnings)
    out.errored = any(item.errored for item in out.items)
    if folder is not None:
        from .shards import write_shard

        if not out.problems:
            out.shard = write_shard(folder, index, out.items, fmt)
        out.items = [replace(item, rendered="") for item in out.items] if job.keep_results else []
    elif job.join is not None and out.items:
        out.block = job.join.join(item.rendered for item in out.items).encode("utf-8")
        out.items = []
    return out
