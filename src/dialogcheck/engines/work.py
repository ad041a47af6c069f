"""The work of one chunk, the same wherever it runs: read it, judge each conversation into a typed result.

`judged` is the one path: the in-process engine iterates it, worker processes
and Ray tasks run `check_chunk`, which collects it into a `ChunkResult` (the
typed results in order, the counts, the first bad record). One adapter
(`Encoding`, see BENCHMARKS.md "check --jobs: results encoded in the
workers") lets a worker send its results' encodings back instead, for a sink
that writes bytes; this layer moves data and never decides how it looks.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial

from .._shown import cut
from ..blame import localised, with_blame
from ..errors import LoadError, Problem
from ..events.model import BotMessage, Conversation, UserMessage
from ..judging import iter_results
from ..results.model import ConversationResult, Counts, TranscriptLine
from ..results.stats import CheckStats
from ..subject import Standard, Subject

#: Turns one result into the bytes a sink writes of it (a JSON line, a text block); a top-level function.
Encoder = Callable[[ConversationResult], bytes]


@dataclass(frozen=True)
class Encoding:
    """The one encoding shortcut: results encoded in the worker process that checked them, so that only their
    bytes travel back and the main process only writes them (the figure is in BENCHMARKS.md). A chunk then sends
    back each result's encoding (or, with `join`, all of them joined in one block, written with one call) and
    its first result typed, for a batch that turns out to hold only it."""

    encode: Encoder
    join: bytes | None = None

    def encoded(self, results: list[ConversationResult]) -> list[bytes]:
        pieces = [self.encode(result) for result in results]
        return [self.join.join(pieces)] if self.join is not None and pieces else pieces


@dataclass(frozen=True)
class CheckJob:
    """What every worker needs: the standard, and what to send back of each result. Small and picklable."""

    #: A Scenario, an Sop, or a ScenarioSet (each conversation against its own scenario).
    subject: Standard
    no_judge: bool = False
    #: Probable typos in a record's names are bad input (`--strict`), not warnings.
    strict: bool = False
    #: `review(standard, conversation, result)`: the result with its user's review (`check --review-user`);
    #: a top-level function, so it travels to workers by name.
    review: Callable[[Standard, Conversation, ConversationResult], ConversationResult] | None = None
    #: Each result carries what the user and the agent said (`ConversationResult.transcript`), for `check --html`.
    transcript: bool = False
    #: From worker processes, the results come back encoded (the adapter above), not typed.
    encoding: Encoding | None = None
    #: With an output folder, only the counts come back: no one takes the typed results.
    counts_only: bool = False
    #: Whose fault each result that did not pass was (`--blame`): `evidence` (the default), `llm` (the evidence, then the
    #: judge's localiser where it placed nothing), or `off`.
    blame: str = "evidence"


@dataclass
class ChunkResult:
    """Everything a chunk gives back: its results in input order, then the bad record it stopped at.

    `counts` always; `results` (typed), or with `CheckJob.encoding` their `encoded` pieces and the first
    result, or with an output folder only the `shard` written.
    """

    results: list[ConversationResult] = field(default_factory=list)
    problems: tuple[Problem, ...] | None = None
    encoded: list[bytes] = field(default_factory=list)
    counts: Counts = field(default_factory=Counts)
    any_error: bool = False
    shard: str | None = None  # the shard written, with an output folder
    warnings: list[Problem] = field(default_factory=list)  # of its conversations, in order
    #: Its per-check statistics, counted where it was checked.
    stats: CheckStats = field(default_factory=CheckStats)

    def raise_problems(self) -> None:
        if self.problems:
            raise LoadError(self.problems)


def checked_in_order(
    job: CheckJob, conversations: Iterable[Conversation], *, judge=None, metrics: tuple[str, ...] = (), stats: CheckStats | None = None
) -> Iterator[ConversationResult]:
    """Each conversation judged, in order, its checks counted in `stats`; a bad record raises `LoadError` where it is."""
    if job.strict:
        conversations = _strictly(conversations)
    slug = subject_slug(job.subject)
    for result in _finished(job, conversations, judge, metrics):
        if stats is not None:
            stats.add(result, result.source, slug=slug)
        yield result


def _finished(job: CheckJob, conversations: Iterable[Conversation], judge, metrics: tuple[str, ...]) -> Iterator[ConversationResult]:
    """Each result judged, then reviewed, blamed and given its transcript as `job` asks; with `--blame llm`, the
    localiser asked beside the judge's calls, on their event loop."""
    judged = partial(iter_results, job.subject, judge=judge, no_judge=job.no_judge, metrics=metrics)
    if job.review is None and not job.transcript and job.blame == "off":
        yield from judged(conversations)
    elif job.blame == "llm" and judge is not None and not job.no_judge:

        async def finish(subject: Subject, conversation: Conversation, result: ConversationResult) -> ConversationResult:
            result = _completed(job, conversation, result)
            asked = await localised(conversation, result.blame, result, judge, subject.framework_tools)
            return asked.counted(result if asked.blame is result.blame else replace(result, blame=asked.blame))

        yield from judged(conversations, finish=finish)
    else:
        taken: deque[Conversation] = deque()
        for result in judged(_taken(conversations, taken)):
            yield _completed(job, taken.popleft(), result)  # one result per conversation, in order: the oldest taken is its


def _completed(job: CheckJob, conversation: Conversation, result: ConversationResult) -> ConversationResult:
    """`result` reviewed, blamed and given its transcript, as `job` asks."""
    if job.review is not None:
        result = job.review(job.subject, conversation, result)
    if job.blame != "off":
        result = with_blame(job.subject, conversation, result)
    if job.transcript:
        result = replace(result, transcript=transcript_of(conversation))
    return result


def subject_slug(standard: Standard) -> str | None:
    """What a lone subject's row of per-scenario verdicts is keyed by: a scenario's slug, an SOP's id; None for a
    set of scenarios, whose results each name their own."""
    return None if standard.several else standard.subjects[0].key


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


ShardWriter = Callable[[int, list[ConversationResult]], "str | None"]


def check_chunk(job: CheckJob, chunk, *, index: int = 0, write_shard: ShardWriter | None = None, judge=None, metrics: tuple[str, ...] = ()) -> ChunkResult:
    """`judged` collected for a worker: a bad record becomes data, so a worker never raises for user input.

    With `write_shard`, the chunk's results go to its own shard (`part-INDEX`), written here; with
    `job.encoding`, they come back encoded.
    """
    out = ChunkResult()
    try:
        for result in checked_in_order(job, chunk.read(), judge=judge, metrics=metrics, stats=out.stats):
            out.results.append(result)
    except LoadError as err:
        out.problems = err.problems
    for result in out.results:
        out.counts.add(result.verdict)
        out.warnings.extend(result.warnings)
    out.any_error = any(result.any_error for result in out.results)
    if write_shard is not None and not out.problems:
        out.shard = write_shard(index, out.results)
    if job.counts_only:
        out.results = []
    elif job.encoding is not None:
        out.encoded = job.encoding.encoded(out.results)
        out.results = out.results[:1]
    return out
