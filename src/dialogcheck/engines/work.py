"""The work of one chunk, the same wherever it runs: read it, judge each conversation, encode each result.

`judged` is the one path: the in-process engine iterates it, worker processes
and Ray tasks run `check_chunk`, which collects it into a compact `ChunkResult`
(the results encoded as the caller asked, the counts, the first bad record),
so only small plain data travels back. How a result is encoded (the codec's
JSON line, a text block) is the caller's function, run where the check runs:
this layer moves data and never decides how it looks.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from .._shown import cut
from ..checks.base import Outcome
from ..errors import LoadError, Problem
from ..events.model import BotMessage, Conversation, UserMessage
from ..judging import iter_results
from ..results.model import ConversationResult, Counts, TranscriptLine
from ..results.stats import CheckStats
from ..scenario.model import Scenario
from ..sop.model import Sop

#: Turns one result into the bytes the caller wants of it (a JSON line, a text block).
Encoder = Callable[[ConversationResult], bytes]


@dataclass(frozen=True)
class CheckJob:
    """What every worker needs: the subject, and what to send back of each result. Small and picklable."""

    #: A Scenario, an Sop, or a ScenarioSet (each conversation against its own scenario).
    subject: Any
    no_judge: bool = False
    #: Probable typos in a record's names are bad input (`--strict`), not warnings.
    strict: bool = False
    #: Run on each result where it was checked; a top-level function, so it travels to workers by name.
    encode: Encoder | None = None
    #: Send the typed results back too (for reports, or a library caller).
    keep_results: bool = False
    #: When set, a chunk sends its encodings back as one block joined by these bytes, not one item each:
    #: the main process then writes a chunk with one call, which keeps it from competing with workers.
    join: bytes | None = None
    #: How a conversation is written when it turns out to be the only one of the batch (a batch may write
    #: less of each): run on the first conversation of each chunk, which only then is known to be first.
    encode_alone: Encoder | None = None
    #: `review(subject, conversation, result)`: the result with its user's review (`check --review-user`);
    #: a top-level function, like `encode`.
    review: Callable[[Any, Conversation, ConversationResult], ConversationResult] | None = None
    #: Each result carries what the user and the agent said (`ConversationResult.transcript`), for `check --html`.
    transcript: bool = False


@dataclass(frozen=True)
class Judged:
    """One judged conversation, as the writers and the tally need it."""

    verdict: Outcome
    #: Some single check came out `error` (an optional step too), whatever the verdict.
    any_error: bool
    source: str
    conversation_id: str | None
    warnings: tuple[Problem, ...] = ()
    result: ConversationResult | None = None
    encoded: bytes | None = None
    #: Its `CheckJob.encode_alone` encoding, for the first conversation of a chunk.
    alone: bytes | None = None


@dataclass
class ChunkResult:
    """Everything a chunk gives back: its judged conversations in order, then the bad record it stopped at.

    `counts` always; then `items`, or (with `CheckJob.join`) `block`, or (with an output folder) `shard`.
    """

    items: list[Judged] = field(default_factory=list)
    problems: tuple[Problem, ...] | None = None
    block: bytes = b""
    counts: Counts = field(default_factory=Counts)
    any_error: bool = False
    shard: str | None = None  # the shard written, with an output folder
    warnings: list[Problem] = field(default_factory=list)  # of its conversations, in order
    #: Its per-check statistics, counted where it was checked.
    stats: CheckStats = field(default_factory=CheckStats)

    def raise_problems(self) -> None:
        if self.problems:
            raise LoadError(self.problems)


def judged(
    job: CheckJob, conversations: Iterable[Conversation], *, judge=None, metrics: tuple[str, ...] = (), stats: CheckStats | None = None
) -> Iterator[Judged]:
    """Each conversation judged (and encoded), in order, its checks counted in `stats`; a bad record raises
    `LoadError` where it is."""
    if job.strict:
        conversations = _strictly(conversations)
    slug = subject_slug(job.subject)
    first = True
    taken: deque[Conversation] = deque()
    if job.review is not None or job.transcript:
        conversations = _taken(conversations, taken)
    for result in iter_results(job.subject, conversations, judge=judge, no_judge=job.no_judge, metrics=metrics):
        if job.review is not None or job.transcript:  # one result per conversation, in order: the oldest taken is this result's
            conversation = taken.popleft()
            if job.review is not None:
                result = job.review(job.subject, conversation, result)
            if job.transcript:
                result = replace(result, transcript=transcript_of(conversation))
        if stats is not None:
            stats.add(result, result.source, slug=slug)
        yield Judged(
            result.verdict,
            result.any_error,
            result.source,
            result.conversation_id,
            result.warnings,
            result if job.keep_results else None,
            job.encode(result) if job.encode is not None else None,
            job.encode_alone(result) if first and job.encode_alone is not None else None,
        )
        first = False


def subject_slug(subject: Any) -> str | None:
    """What a lone subject's row of per-scenario verdicts is keyed by: a scenario's slug, an SOP's id; None for a
    set of scenarios, whose results each name their own."""
    if isinstance(subject, Scenario):
        return subject.slug
    return subject.id if isinstance(subject, Sop) else None


def transcript_of(conversation: Conversation) -> tuple[TranscriptLine, ...]:
    """What the user and the agent said, in order, each text cut as reports cut it (a bot message without text is left out)."""
    return tuple(
        TranscriptLine("user" if isinstance(event, UserMessage) else "agent", cut(event.text))
        for event in conversation.events
        if isinstance(event, (UserMessage, BotMessage)) and event.text
    )


def _taken(conversations: Iterable[Conversation], taken: deque[Conversation]) -> Iterator[Conversation]:
    """The conversations, each also put in `taken` as it is read, for the result that comes of it."""
    for conversation in conversations:
        taken.append(conversation)
        yield conversation


def _strictly(conversations: Iterable[Conversation]) -> Iterator[Conversation]:
    """`--strict`: the first record with a probable typo in its names stops the check there, as bad input."""
    for conversation in conversations:
        if conversation.warnings:
            raise LoadError(conversation.warnings)
        yield conversation


ShardWriter = Callable[[int, list[Judged]], "str | None"]


def check_chunk(job: CheckJob, chunk, *, index: int = 0, write_shard: ShardWriter | None = None, judge=None, metrics: tuple[str, ...] = ()) -> ChunkResult:
    """`judged` collected for a worker: a bad record becomes data, so a worker never raises for user input.

    With `write_shard`, the chunk's results go to its own shard (`part-INDEX`) and only counts come back
    (and the full results, when kept); with `job.join`, the encodings come back as one block.
    """
    out = ChunkResult()
    try:
        for item in judged(job, chunk.read(), judge=judge, metrics=metrics, stats=out.stats):
            out.items.append(item)
    except LoadError as err:
        out.problems = err.problems
    for item in out.items:
        out.counts.add(item.verdict)
        out.warnings.extend(item.warnings)
    out.any_error = any(item.any_error for item in out.items)
    if write_shard is not None:
        if not out.problems:
            out.shard = write_shard(index, out.items)
        out.items = [Judged(i.verdict, i.any_error, i.source, i.conversation_id, i.warnings, i.result) for i in out.items] if job.keep_results else []
    elif job.join is not None and out.items:
        out.block = job.join.join(item.encoded or b"" for item in out.items)
        out.items = []
    return out
