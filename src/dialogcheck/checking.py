"""Checking recorded conversations against a scenario, several scenarios or an SOP: the library behind `dialogcheck check`.

`CheckRun` is one check of many conversations, and the one thing the command
line, the Python API, the pytest fixture and the MCP server consume: its
typed results in input order (`results`), handed to a sink as they go by
(`write`), or written as shards to an output folder (`to_shards`), with the
tally (verdicts, errored checks, probable typos, per-check statistics) counted
as the results go by. The input is planned into chunks (`engines.chunks`) and
checked by an engine: in this process, in worker processes, or on Ray.
`check_conversations` is its results.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from .blame import BLAME_MODES
from .engines.chunks import CHUNK_BYTES, RUN_PLAN, STDIN, ReadChunk, held_bytes, input_files, is_stream, plan_local, unfinished_runs
from .engines.local import WorkerLost, encoded_in_order, results_in_order, shards_in_order, usable_cores
from .engines.storage import is_uri
from .engines.work import CheckJob, ChunkResult, Encoding
from .errors import COMMAND_LINE, PYTHON_API, DialogcheckError, LoadError, Problem, Spelling
from .events.model import FRAMEWORK_TOOLS, Conversation
from .events.parse import conversation_from_dicts
from .judge.base import Judge
from .pairing import PairError, ScenarioSet, compile_pair
from .results.model import ConversationResult, Counts, unfinished_text
from .results.stats import CheckStats
from .scenario.model import Scenario
from .subject import Standard

#: Inputs larger than this are judged as they are read instead of being read whole first.
STREAM_ABOVE_BYTES = 64 * 2**20
#: Inputs smaller than this are checked in this process whatever `jobs` says: starting workers costs more.
IN_PROCESS_BELOW_BYTES = 2 * 2**20


def load_subject(
    scenario_paths: Sequence[str | Path] = (),
    sop_path: str | Path | None = None,
    pair: str | None = None,
    framework_tools: frozenset[str] = FRAMEWORK_TOOLS,
    spelling: Spelling = COMMAND_LINE,
) -> Standard:
    """The SOP, the one scenario, or (several scenarios, or a `pair` pattern) a `ScenarioSet`; every problem of every file at once.

    Scenarios take `framework_tools` from their project's config (an SOP file says its own). A bad `pair`
    pattern raises `PairError` (a ValueError). Messages name the pattern as `spelling` spells its option.
    """
    if sop_path is not None:
        from .sop.load import load_sop

        return load_sop(sop_path)
    from .definitions import ProjectSettings
    from .scenario.load import load_scenario as load_one

    settings = ProjectSettings()

    def load_scenario(path: str | Path):
        """One scenario with its project's environments and default environment (`run` loads it alike)."""
        return load_one(path, framework_tools=framework_tools, environments=settings.catalog(Path(path)), default_environment=settings.default_environment(Path(path)))

    if len(scenario_paths) == 1 and pair is None and not Path(scenario_paths[0]).is_dir():
        return load_scenario(scenario_paths[0])  # one scenario: every conversation against it, as it always was
    files = _scenario_files(scenario_paths)
    if len(files) == 1 and pair is None:
        return load_scenario(files[0])  # a folder holding one scenario: the same
    pattern = compile_pair(pair) if pair is not None else None
    scenarios = _each(load_scenario, files)
    if not scenarios:
        raise LoadError.one("no scenario files found (.yml, .yaml)", " ".join(map(str, scenario_paths)))
    return ScenarioSet.of(scenarios, pattern, spelling)


def _scenario_files(paths: Sequence[str | Path]) -> list[Path]:
    """The scenario files of files, folders and projects, each once, in the order given."""
    from .scenario.files import scenario_files

    found = _each(lambda given: scenario_files(Path(given)), paths)
    return list(dict.fromkeys(f for files in found for f in files))


def _each(load, items) -> list:
    """`load` of every item, raising one `LoadError` with the problems of all of them."""
    done: list = []
    problems: list[Problem] = []
    for item in items:
        try:
            done.append(load(item))
        except LoadError as err:
            problems.extend(err.problems)
    if problems:
        raise LoadError(problems)
    return done


def llm_judged_count(standard: Standard) -> int:
    """How many LLM-judged checks the scenario or SOP holds (of all the scenarios, for several)."""
    return sum(len(subject.judge_items()) for subject in standard.subjects)


def wants_judge(standard: Standard, no_judge: bool, metrics: bool) -> bool:
    """Whether a judge is needed: LLM-judged checks to decide, or quality metrics to score."""
    return bool(not no_judge and llm_judged_count(standard)) or metrics


class WarningLog:
    """Probable typos met in the input, each kind once a file: where it was first met, and how often.

    A log that misspells a name does so on every line; one warning a file says it as well, and stays
    small however long the log is.
    """

    #: The `event N: ` (or `row R: event N: `) a warning's message starts with: the same typo in another
    #: event is the same warning.
    _EVENT_INDEX = re.compile(r"^(row \d+: )?event \d+: ")

    def __init__(self) -> None:
        self.first: dict[tuple[str, str], Problem] = {}
        self.count: dict[tuple[str, str], int] = {}

    def add(self, warnings: Iterable[Problem]) -> None:
        for problem in warnings:
            key = (problem.file, self._EVENT_INDEX.sub("", problem.message, count=1))
            if key not in self.first:
                self.first[key] = problem
                self.count[key] = 0
            self.count[key] += 1

    def __bool__(self) -> bool:
        return bool(self.first)

    def as_json(self) -> list[dict[str, object]]:
        return [problem.to_dict() | {"count": self.count[key]} for key, problem in self.first.items()]


@dataclass
class CheckTally:
    """What the exit code and the summary need, counted as results go by (flat however many there are)."""

    counts: Counts = field(default_factory=Counts)
    #: Some single check came out `error` (an optional SOP step too).
    any_error: bool = False
    warnings: WarningLog = field(default_factory=WarningLog)
    shards: list[str] = field(default_factory=list)
    #: Per assertion, SOP step and criterion: how the conversations ended.
    stats: CheckStats = field(default_factory=CheckStats)
    #: The `run` results folders given whose batch did not finish: (folder, its planned runs that never finished as
    #: (slug, number), how many runs it planned) each.
    unfinished_batches: list[tuple[str, tuple[tuple[str, int], ...], int]] = field(default_factory=list)

    @property
    def unfinished(self) -> list[dict[str, object]]:
        """The planned runs that never finished, as summary.json lists them: `{"results", "slug", "run"}` each."""
        return [{"results": folder, "slug": slug, "run": number} for folder, missing, _ in self.unfinished_batches for slug, number in missing]

    @property
    def undecided(self) -> bool:
        """Some check came out `error`, or a batch given was judged in part: nothing failed is then no pass (exit 3)."""
        return self.any_error or bool(self.unfinished_batches)

    def add(self, result: ConversationResult) -> None:
        self.counts.add(result.verdict)
        self.any_error = self.any_error or result.any_error
        if result.warnings:
            self.warnings.add(result.warnings)

    def add_chunk(self, chunk: ChunkResult) -> None:
        """A chunk whose results were not sent back one by one (encoded, or written to a shard)."""
        self.counts.update(chunk.counts)
        self.any_error = self.any_error or chunk.any_error
        if chunk.warnings:
            self.warnings.add(chunk.warnings)
        if chunk.shard:
            self.shards.append(chunk.shard)


class Sink(Protocol):
    """Where a run's typed results go, in input order, as they go by (text, JSON, HTML, JUnit, telemetry)."""

    def add(self, result: ConversationResult) -> None: ...


class EncodedSink(Sink, Protocol):
    """A sink that can also take results encoded where they were checked (the adapter of `engines.work.Encoding`)."""

    #: The encoding to ask worker processes for.
    encoding: Encoding

    def add_encoded(self, chunk: ChunkResult) -> None: ...


def note_unfinished(tally: CheckTally, sources: Iterable[Any]) -> None:
    """A `run` results folder among `sources` whose batch did not finish is judged in part: said (a warning at its
    plan.json) and counted in `tally`, so the check cannot pass on the runs it holds."""
    for source in sources:
        found = unfinished_runs(Path(source)) if isinstance(source, (str, Path)) and str(source) != STDIN and not is_uri(str(source)) else None
        if not found or not found[0]:
            continue
        missing, planned = found
        message = f"{unfinished_text(missing, planned)}: this check judged the batch in part; finish it with dialogcheck run --resume {source}"
        tally.warnings.add([Problem(message, str(Path(source) / RUN_PLAN))])
        tally.unfinished_batches.append((str(source), tuple(missing), planned))


class UnfinishedBatch(DialogcheckError):
    """`check_conversations` was given a `run` results folder whose batch did not finish: judging the runs it holds
    would pass what never ran, so it is refused unless the caller asks for a judgement in part (`partial=True`)."""

    def __init__(self, folder: Any, missing: Sequence[tuple[str, int]], planned: int):
        self.folder, self.missing, self.planned = Path(folder), tuple(missing), planned
        super().__init__(
            f"{self.folder / RUN_PLAN}: {unfinished_text(self.missing, planned)}: judge the batch in part with partial=True,"
            f" or finish it with run_scenarios(..., resume={str(folder)!r})"
        )


@dataclass(frozen=True)
class GivenConversations:
    """Conversations handed over in memory (typed, or as lists of event dicts): one chunk, read in this process."""

    conversations: tuple[Conversation | Sequence[Mapping[str, Any]], ...]

    def read(self) -> Iterator[Conversation]:
        for i, given in enumerate(self.conversations, 1):
            yield given if isinstance(given, Conversation) else conversation_from_dicts(list(given), f"<conversation {i}>")


class CheckRun:
    """One check of many conversations: where they come from, what judges them, and how many processes do it.

    `sources` are paths (files, folders, `-` for standard input, a `run` results folder) or, in memory,
    `Conversation`s or lists of event dicts. Small inputs are read whole before anything is judged, so
    bad input anywhere stops the check before any result; big ones (past `STREAM_ABOVE_BYTES`, or with
    `stream`) are judged as they are read, with flat memory, and bad input stops the check where it is.
    `whole` reads every input before anything is judged, in this process (for a report that needs every
    result at once). `engine="ray"` checks files and object-store URIs as Ray Data tasks: the deterministic
    checks only (no judge, no `review_user`, no `input_format`).
    """

    def __init__(
        self,
        subject: Standard,
        sources: Iterable[Any],
        *,
        jobs: int | None = None,
        engine: str = "local",
        ray_address: str | None = None,
        judge: Judge | None = None,
        no_judge: bool = False,
        metrics: tuple[str, ...] = (),
        input_format: str | None = None,
        strict: bool = False,
        stream: bool = False,
        chunk_bytes: int | None = None,
        whole: bool = False,
        review_user: bool = False,
        transcript: bool = False,
        blame: str = "evidence",
    ):
        self.subject = subject
        if blame not in BLAME_MODES:
            raise ValueError(f"blame {blame!r}: give one of {', '.join(map(repr, BLAME_MODES))}")
        if review_user and any(one.brief is None for one in subject.subjects):
            raise ValueError("review_user reviews the user against a scenario's simulation_context: judge against a scenario, not an SOP")
        if engine not in ("local", "ray"):
            raise ValueError(f"engine {engine!r}: give 'local' (this process and its workers) or 'ray'")
        self.engine, self.jobs, self.ray_address, self.chunk_bytes = engine, jobs, ray_address, chunk_bytes
        self.judge, self.no_judge, self.metrics = judge, no_judge, metrics
        self.job = CheckJob(subject, no_judge=no_judge, strict=strict, review=review_recorded if review_user else None, transcript=transcript,
                            blame=blame)
        self.tally = CheckTally()
        given = list(sources)
        if engine == "ray":
            self._on_ray(given, judge, metrics, review_user, input_format, transcript)
            return
        if given and all(not isinstance(source, (str, Path)) for source in given):
            self._chunks: Iterable[Any] = [GivenConversations(tuple(given))]
            self.streaming, self.workers = False, 1
            return
        note_unfinished(self.tally, given)
        files = input_files([str(source) for source in given], with_parquet=not input_format)
        if not files:
            raise LoadError.one("no conversation files found (.json, .jsonl)", " ".join(map(str, given)))
        size = sum(_size(f) for f in files)
        self.streaming = (stream or size > STREAM_ABOVE_BYTES) and not whole
        chunks = plan_local(files, input_format, chunk_bytes or CHUNK_BYTES)
        size_known = not any(is_stream(f) for f in files)
        if not self.streaming:  # a pipe's size is known once it is read: it is read ahead up to the same bound
            chunks, held, complete = _read_ahead(chunks, None if whole else STREAM_ABOVE_BYTES - size)
            size, self.streaming, size_known = size + held, not complete, True
        if not self.streaming and (judge is not None or whole):
            chunks = [ReadChunk.of(chunk) for chunk in chunks]  # checked in this process: read once, all of it before any LLM call
        self._chunks = chunks
        self.workers = 1 if (size_known and size < IN_PROCESS_BELOW_BYTES) or whole else (jobs or usable_cores())

    def _on_ray(self, given: list[Any], judge, metrics, review_user: bool, input_format: str | None, transcript: bool) -> None:
        if judge is not None or metrics or review_user or input_format or transcript or self.job.blame == "llm":
            raise ValueError("engine='ray' runs the deterministic checks of native files: no judge, metrics, review_user, input_format or blame='llm'")
        if not all(isinstance(source, (str, Path)) for source in given):
            raise ValueError("engine='ray' reads files and object-store URIs, which its tasks open themselves: not conversations in memory")
        self.sources = [str(source) for source in given]
        note_unfinished(self.tally, self.sources)  # what the inputs lack, said before any task
        self.streaming, self.workers = False, 1

    def results(self) -> Iterator[ConversationResult]:
        """Every conversation judged into a typed result, in input order, counted in `tally`. Bad input raises
        `LoadError` where it is met (before any result, unless streaming)."""
        if self.engine == "ray":
            for result in self._ray(None).results:
                self.tally.add(result)
                yield result
            return
        items = results_in_order(self.job, self._chunks, self.workers, judge=self.judge, metrics=self.metrics, stats=self.tally.stats)
        if not self.streaming:
            items = iter(list(items))
        for result in items:
            self.tally.add(result)
            yield result

    def write(self, sink: Sink | EncodedSink) -> None:
        """Every result to `sink`, in input order; from worker processes as their encodings, when the sink takes them."""
        encoding = getattr(sink, "encoding", None)
        if encoding is None or self.workers <= 1 or self.judge is not None:
            for result in self.results():
                sink.add(result)
            return
        chunks = encoded_in_order(replace(self.job, encoding=encoding), self._chunks, self.workers, stats=self.tally.stats)
        if not self.streaming:
            chunks = iter(list(chunks))
        for chunk in chunks:
            self.tally.add_chunk(chunk)
            sink.add_encoded(chunk)  # type: ignore[union-attr]  # a sink with an encoding takes encoded chunks

    def to_shards(self, folder: str, fmt: str, sink: Sink | None = None) -> None:
        """Each chunk's results as a shard in `folder` (the codec's JSON line a conversation), written where it was
        checked, and to `sink` when given; bad input, or a shard that cannot be written, removes every shard and raises."""
        from .engines.shards import remove_shards, write_shard

        if self.engine == "ray":
            for result in self._ray(folder, fmt, keep=sink is not None).results:
                sink.add(result)  # type: ignore[union-attr]  # results come back only for a sink
            return
        job = replace(self.job, counts_only=sink is None)
        chunks = shards_in_order(job, self._chunks, self.workers, functools.partial(write_shard, folder, fmt), judge=self.judge, metrics=self.metrics)
        try:
            for chunk in chunks:
                chunk.raise_problems()
                self.tally.add_chunk(chunk)
                self.tally.stats.merge(chunk.stats)
                for result in chunk.results:
                    sink.add(result)  # type: ignore[union-attr]  # results come back only for a sink
        except (LoadError, OSError, WorkerLost):
            chunks.close()  # type: ignore[attr-defined]  # a generator: the chunks still in flight finish (and write) first
            remove_shards(folder, fmt)
            raise

    def _ray(self, folder: str | None, fmt: str = "jsonl", keep: bool = True):
        """The check on Ray: shards in `folder` and the typed results sent back when kept (always without a
        folder); counts, stats and shards tallied."""
        from .engines.ray_engine import CHUNK_BYTES as RAY_CHUNK_BYTES, run_ray

        job = replace(self.job, counts_only=not keep)
        outcome = run_ray(job, self.sources, folder, fmt, address=self.ray_address, cpus=self.jobs or usable_cores(), chunk_bytes=self.chunk_bytes or RAY_CHUNK_BYTES)
        if folder is not None:
            self.tally.counts.update(outcome.counts)
            self.tally.any_error = self.tally.any_error or outcome.any_error
            self.tally.shards.extend(outcome.shards)
            self.tally.warnings.add(outcome.warnings)
        self.tally.stats.merge(outcome.stats)
        return outcome


def review_recorded(standard: Standard, conversation: Conversation, result: ConversationResult) -> ConversationResult:
    """`check --review-user`: the result with the review of the conversation's `user` messages against the brief of
    the scenario it was judged against (a suspect one is counted as suspect)."""
    from .simulate.review import brief_of, review_conversation

    scenario = standard.own(result.scenario)
    assert isinstance(scenario, Scenario)  # a review is asked for against scenarios only (`CheckRun` refuses an SOP)
    return replace(result, user_review=review_conversation(conversation, brief_of(scenario)))


def _read_ahead(chunks, room: int | None):
    """Plan every chunk (reading piped inputs into memory), unless the pipes fill more than `room` bytes
    first: then the rest is planned as it is checked. (chunks, bytes held, whether every chunk is planned)."""
    taken, held = [], 0
    for chunk in chunks:
        taken.append(chunk)
        held += held_bytes(chunk)
        if room is not None and held > room:
            return itertools.chain(taken, chunks), held, False
    return taken, held, True


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # reported when the file is read


def _subject_of(subject: Any, pair: str | re.Pattern[str] | None = None) -> Standard:
    """What `check_conversations` judges by: a loaded scenario, SOP or set of scenarios as it is, a path loaded as the
    file its top-level key says; with `pair`, the scenarios paired by it as `check --pair` pairs them.

    A bad `pair` raises `PairError`, and `pair` with an SOP ValueError, each naming the argument `pair=`."""
    pattern = None
    if pair is not None:
        try:
            pattern = compile_pair(pair)
        except PairError as err:
            raise PairError(f"{PYTHON_API.option('pair', pair if isinstance(pair, str) else pair.pattern)}: {err}") from None
    subject = _loaded(subject)
    if pattern is None:
        return subject
    if isinstance(subject, ScenarioSet):
        return ScenarioSet.of(list(subject.scenarios.values()), pattern, PYTHON_API)
    if isinstance(subject, Scenario):
        return ScenarioSet.of([subject], pattern, PYTHON_API)
    raise ValueError("pair= pairs conversations with scenarios: it does not go with an SOP")


def _loaded(subject: Any) -> Any:
    if not isinstance(subject, (str, Path)):
        return subject
    path = Path(subject)
    if path.is_dir():
        return load_subject([path], spelling=PYTHON_API)
    from .definitions import load_definition

    definition = load_definition(path)
    if definition.kind not in ("scenario", "sop"):
        raise LoadError.one(f"expected a scenario or SOP file, got {definition.kind}", str(path))
    return definition.value


def check_conversations(
    subject: Standard | str | Path,
    sources: str | Path | Iterable[Any],
    *,
    jobs: int | None = None,
    engine: str = "local",
    no_judge: bool = False,
    judge: Judge | None = None,
    metrics: tuple[str, ...] = (),
    input_format: str | None = None,
    strict: bool = False,
    review_user: bool = False,
    pair: str | re.Pattern[str] | None = None,
    partial: bool = False,
    blame: str = "evidence",
) -> Iterator[ConversationResult]:
    """Judge recorded conversations; one typed result each, in input order.

    `subject` is a scenario or an SOP (loaded, or the path of its file; a folder of scenarios judges each
    conversation against the one it names). `sources` are paths (files, folders, a `run` results folder)
    or conversations in memory (`Conversation`s, or lists of event dicts). `jobs` worker processes share
    the checks of big inputs (results still come in input order). `engine="ray"` checks files and
    object-store URIs as Ray Data tasks (`pip install 'dialogcheck[ray]'`), on the cluster at `RAY_ADDRESS` or
    a local Ray instance: the deterministic checks only, every result held until the last task ends. LLM-judged checks need `judge` (see
    `dialogcheck.judge.setup.judge_from_config`); without it they are `error`, or `skip` with `no_judge`.
    With `review_user` each result carries the review of its `user` messages against the scenario's
    `simulation_context` (`user_review`), and a suspect one is `suspect`. `pair` pairs each conversation with
    its scenario as `dialogcheck check --pair` does: a pattern with one group whose key, taken from the
    conversation's id and from each scenario's slug, must be equal (searched within the checks' bounds, so a
    pattern that backtracks catastrophically is bad input, never a hang). Bad input raises
    `dialogcheck.LoadError` with its file, line and column; a bad `pair` pattern, `dialogcheck.pairing.PairError`.
    A `run` results folder whose batch did not finish raises `dialogcheck.UnfinishedBatch` before anything is
    judged (its missing runs would otherwise pass unseen), unless `partial` asks to judge the runs it holds.
    Each result that did not pass carries its `blame` (whose fault it was, and where: `dialogcheck.blame`),
    decided from the evidence; `blame="llm"` also asks `judge`'s localiser where the evidence placed nothing,
    and `blame="off"` decides none.
    """
    run = CheckRun(
        _subject_of(subject, pair), [sources] if isinstance(sources, (str, Path)) else sources, jobs=jobs, engine=engine, judge=judge, no_judge=no_judge,
        metrics=metrics, input_format=input_format, strict=strict, review_user=review_user, blame=blame,
    )
    if run.tally.unfinished_batches and not partial:  # found while the input was planned, before anything is judged
        raise UnfinishedBatch(*run.tally.unfinished_batches[0])
    yield from run.results()
