"""Reading one side of `compare`: a `run` results folder, a `check --output` folder, or `check --format json`.

Each conversation or run becomes a `Run` keyed by what it pairs by: a run by
its scenario's slug, a conversation by its id (its source when it has none),
or either by the key `--match REGEX` captures from that name. A run keeps,
for robustness, whether its environment's fault schedule was on and the kinds
of fault it met (recorded conversations have no environment). Folders are read
through `results.load` into the typed results and reduced from there.

`check --format json` documents can be big (100,000 conversations make half a
gigabyte), so dialogcheck's own layout, `{"conversations": [` then one
conversation a line, or one conversation's document a line (a shard), is read
a line at a time, each line decoded by msgspec into just the fields compared
(key, verdict, each check's identity and outcome): memory holds the reduced
runs, never the document. Any other JSON (one conversation's indented
document, a batch reformatted by hand) is read whole.

Check identities and outcome pairs are interned across both sides, so a
hundred thousand runs of one SOP share one tuple of checks per outcome pattern.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import msgspec
import orjson

from ..checks.base import Outcome
from ..errors import LoadError
from ..pairing import PairError, pair_key
from ..results.files import slug_folder
from ..results.load import load_check_output, load_results
from ..results.model import CheckKind, CheckLine, step_name
from ..results.plan import value_offset
from .model import CHECK_FOLDER, JSON_DOCUMENT, RUN_FOLDER, CheckId, Run, Side

#: The first line of `check --format json` for several conversations.
_BATCH_START = b'{"conversations": ['


# -- the fields compared, as msgspec decodes them from a conversation's document -------------------


class _Assertion(msgspec.Struct, gc=False):
    index: int
    key: str = ""
    label: str | None = None
    outcome: Outcome | None = None
    passed: bool | None = None


class _Step(msgspec.Struct, gc=False):
    id: str
    outcome: Outcome
    type: str = ""
    label: str | None = None


class _Criterion(msgspec.Struct, gc=False):
    outcome: Outcome
    criterion: str = ""


class _Conversation(msgspec.Struct, gc=False):
    verdict: Outcome
    subject: str = ""
    source: str | None = None
    conversation_id: str | None = None
    assertions: list[_Assertion] = []
    sop: list[_Step] = []
    criteria: list[_Criterion] = []


_DECODER = msgspec.json.Decoder(_Conversation)


#: A check's identity and outcome as plain values: kind, subject, label, index, step id, judged, outcome.
Raw = tuple[CheckKind, str, str, int | None, str | None, bool, Outcome]


class Interner:
    """One shared copy of each check, (check, outcome) pair, tuple of pairs and run, for both sides.

    Pairs are found by their plain values and tuples by the identity of their pairs, so a run costs
    a dict lookup a check: no check is built or hashed twice.
    """

    def __init__(self) -> None:
        self._checks: dict[tuple[Any, ...], CheckId] = {}
        self._pairs: dict[Raw, tuple[CheckId, Outcome]] = {}
        self._tuples: dict[tuple[int, ...], tuple[tuple[CheckId, Outcome], ...]] = {}
        self._runs: dict[tuple[Outcome, int, bool | None, tuple[str, ...]], Run] = {}

    def run(self, verdict: Outcome, raws: Iterable[Raw], faults_on: bool | None = None, fault_kinds: tuple[str, ...] = ()) -> Run:
        """The run of this verdict and these checks (and environment): one object for every run that ended the same."""
        pairs = self._pairs
        found = [pairs.get(raw) or self._pair(raw) for raw in raws]
        key = tuple(map(id, found))
        checks = self._tuples.get(key)
        if checks is None:
            checks = self._tuples[key] = tuple(found)
        run_key = (verdict, id(checks), faults_on, fault_kinds)
        run = self._runs.get(run_key)
        if run is None:
            run = self._runs[run_key] = Run(verdict, checks, faults_on, fault_kinds)
        return run

    def _pair(self, raw: Raw) -> tuple[CheckId, Outcome]:
        identity = raw[:-1]
        check = self._checks.get(identity)
        if check is None:
            check = self._checks[identity] = CheckId(*identity)
        pair = self._pairs[raw] = (check, raw[-1])
        return pair


class _Collector:
    """Runs gathered by key, in the order keys first appear; a name `--match` finds no key in is bad input."""

    def __init__(self, source: str, form: str, pattern: re.Pattern[str] | None):
        self.source, self.form, self.pattern = source, form, pattern
        self.runs: dict[str, list[Run]] = {}

    def add(self, name: str, run: Run, file: str, line: int = 1) -> None:
        """File `run` under its key; `file` and `line` are where `name` was read, which an error names."""
        key = name
        if self.pattern is not None:
            try:
                found = pair_key(self.pattern, name)
            except PairError as err:  # ran out of its time on this name
                raise LoadError.one(f"--match {err}", file, line) from None
            if found is None:
                raise LoadError.one(f"--match /{self.pattern.pattern}/ finds no key in `{name}`", file, line)
            key = found
        self.runs.setdefault(key, []).append(run)

    def side(self) -> Side:
        return Side(self.source, self.form, self.runs)


def read_side(path: str | Path, pattern: re.Pattern[str] | None = None, interner: Interner | None = None) -> Side:
    """One side of a comparison, from a results folder or a `check --format json` file; `LoadError` on bad input."""
    path = Path(path)
    interner = interner or Interner()
    if path.is_dir():
        return _folder(path, pattern, interner)
    if not path.exists():
        raise LoadError.one("no such file or folder: give a `run` results folder, a `check --output` folder, or `check --format json` output", str(path))
    collector = _Collector(str(path), JSON_DOCUMENT, pattern)
    for line, document in _documents(path):
        collector.add(_name(document, path, line), interner.run(document.verdict, _document_checks(document)), str(path), line)
    if not collector.runs:
        raise LoadError.one("no conversation's result in this file: expected the output of `dialogcheck check --format json`", str(path))
    return collector.side()


# -- typed results (folders) -----------------------------------------------------------------------


def _folder(path: Path, pattern: re.Pattern[str] | None, interner: Interner) -> Side:
    """A `check --output` folder (conversations by id), else a `run` results folder (runs by scenario slug)."""
    found = load_check_output(path)
    if found is not None:
        collector = _Collector(str(path), CHECK_FOLDER, pattern)
        for shard, line, result in found.placed_results():
            run = interner.run(result.verdict, _typed_checks(result.checks(), result.subject))
            collector.add(result.conversation_id or result.source, run, shard, line)
        return collector.side()
    collector = _Collector(str(path), RUN_FOLDER, pattern)
    batch = load_results(path)
    for recorded in batch.runs:
        subject = recorded.conversation.subject if recorded.conversation is not None else recorded.scenario.name
        environment = recorded.environment
        reduced = interner.run(
            recorded.verdict,
            _typed_checks(recorded.checks(), subject),
            environment.faults_on if environment is not None else None,
            environment.fault_kinds if environment is not None else (),
        )
        collector.add(recorded.slug, reduced, str(path / slug_folder(recorded.slug) / f"run_{recorded.number}.json"))
    return replace(collector.side(), unfinished=batch.unfinished, planned=batch.planned)


def _typed_checks(lines: Iterable[CheckLine], subject: str) -> Iterator[Raw]:
    """Each check of a typed result with its identity: what `_document_checks` gives from its document."""
    for line in lines:
        kind, index, step_id = line.id
        yield kind, subject, line.name, index, step_id, line.judged, line.outcome


# -- documents of `check --format json` ------------------------------------------------------------


def _document_checks(document: _Conversation) -> Iterator[Raw]:
    subject = document.subject
    for a in document.assertions:
        outcome = a.outcome if a.outcome is not None else Outcome.PASS if a.passed else Outcome.FAIL
        yield CheckKind.ASSERTION, subject, a.label or a.key, a.index, None, False, outcome
    for s in document.sop:
        yield CheckKind.SOP, subject, step_name(s.label, s.type), None, s.id, s.type == "llm_judge", s.outcome
    for number, c in enumerate(document.criteria, 1):
        yield CheckKind.CRITERION, subject, c.criterion, number, None, True, c.outcome


def _name(document: _Conversation, path: Path, line: int) -> str:
    """What a conversation pairs by: its id, else its source, else its place in the file."""
    return document.conversation_id or document.source or f"{path}:{line}"


def _documents(path: Path) -> Iterator[tuple[int, _Conversation]]:
    """(line, conversation) for every conversation of a `check --format json` file, a line at a time when it can."""
    file = str(path)
    try:
        handle = path.open("rb")
    except OSError as err:
        raise LoadError.of_os("cannot read", err, file) from None
    with handle:
        first = handle.readline()
        if first.strip() == _BATCH_START:
            yield from _batch_lines(handle, file)
            return
        single = _first_line(first, file) if first.strip() else None
        if single is not None:  # one conversation a line (a shard, or shards put together)
            yield 1, single
            yield from _document_lines(handle, file)
            return
        rest = handle.read()
    yield from _whole(first + rest, file)


def _first_line(first: bytes, file: str) -> _Conversation | None:
    """The first line's conversation when the file holds one a line; None when the file is one JSON document."""
    try:
        return _DECODER.decode(first)
    except msgspec.ValidationError as err:  # msgspec may say so before it has read the whole line
        try:
            whole = orjson.loads(first)
        except orjson.JSONDecodeError:
            return None  # the first line of a document that spans several
        if isinstance(whole, dict) and "conversations" in whole:
            return None  # a batch document on one line
        raise _problem(err, first, file, 1) from None
    except msgspec.DecodeError:
        return None


def _batch_lines(lines: Iterable[bytes], file: str) -> Iterator[tuple[int, _Conversation]]:
    """The lines after `{"conversations": [`: a conversation each, then `], "summary": ...}`."""
    number = 1
    for number, raw in enumerate(lines, 2):
        text = raw.rstrip()
        if text.startswith(b"]"):
            _batch_tail(text, file, number)
            return
        if not text:
            continue
        yield number, _line_document(text.removesuffix(b","), file, number)
    raise LoadError.one("the document ends before its closing `], \"summary\": ...}`: was `check` cut short?", file, number)


def _batch_tail(text: bytes, file: str, number: int) -> None:
    """The document's last line; a batch that `check` stopped with an error is incomplete, so bad input."""
    try:
        tail = orjson.loads(_BATCH_START + text)
    except orjson.JSONDecodeError as err:
        raise LoadError.one(f"not valid JSON: {err.msg}", file, number, max(err.colno - len(_BATCH_START), 1)) from None
    error = tail.get("error") if isinstance(tail, dict) else None
    if isinstance(error, dict):
        where = ":".join(str(error.get(k)) for k in ("file", "line", "column"))
        raise LoadError.one(f"`check` stopped at bad input ({where}: {error.get('message')}), so this batch is incomplete", file, number)


def _document_lines(lines: Iterable[bytes], file: str) -> Iterator[tuple[int, _Conversation]]:
    for number, raw in enumerate(lines, 2):
        if raw.strip():
            yield number, _line_document(raw, file, number)


def _line_document(raw: bytes, file: str, line: int) -> _Conversation:
    """One conversation's document on one line."""
    try:
        return _DECODER.decode(raw)
    except msgspec.DecodeError as err:  # ValidationError too
        raise _problem(err, raw, file, line) from None


def _whole(data: bytes, file: str) -> Iterator[tuple[int, _Conversation]]:
    """A document not in dialogcheck's line layout: one conversation's result, or `{"conversations": [...]}`."""
    if not data.strip():
        raise LoadError.one("the file is empty: expected the output of `dialogcheck check --format json`", file)
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as err:
        raise LoadError.one(f"not valid JSON: {err.msg}", file, err.lineno, err.colno) from None
    if isinstance(document, dict) and isinstance(document.get("conversations"), list):
        if isinstance(document.get("error"), dict):
            raise LoadError.one("`check` stopped at bad input (its `error`), so this batch is incomplete", file)
        items, prefix = document["conversations"], ["conversations"]
    elif isinstance(document, dict) and "verdict" in document:
        items, prefix = [document], []
    else:
        raise LoadError.one("not the output of `dialogcheck check --format json`: expected an object with `verdict` or `conversations`", file)
    for number, item in enumerate(items):
        try:
            yield 1, msgspec.convert(item, _Conversation)
        except msgspec.ValidationError as err:
            raise _problem(err, data, file, 1, [*prefix, number] if prefix else []) from None


def _problem(err: Exception, data: bytes, file: str, line: int, prefix: list[str | int] | None = None) -> LoadError:
    """msgspec's complaint about a conversation's document, at the line and column of what it is about."""
    text = data.decode("utf-8", "replace")
    if not isinstance(err, msgspec.ValidationError):
        try:
            orjson.loads(data)
        except orjson.JSONDecodeError as bad:
            return LoadError.one(f"not valid JSON: {bad.msg}", file, line + bad.lineno - 1, bad.colno)
    what, _, where = str(err).partition(" - at `$")
    path: list[str | int] = [*(prefix or []), *_path(where.rstrip("`"))]
    offset = value_offset(text, path)
    line += text.count("\n", 0, offset)
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    place = "".join(f"[{step}]" if isinstance(step, int) else f".{step}" for step in path).lstrip(".")
    message = what[:1].lower() + what[1:]
    return LoadError.one(f"not a conversation's result of `check`: {message}" + (f" at `{place}`" if place else ""), file, line, column)


def _path(text: str) -> list[str | int]:
    """msgspec's `.assertions[0].outcome` as ["assertions", 0, "outcome"]."""
    return [int(index) if index else name for name, index in re.findall(r"\.([^.\[]+)|\[(\d+)\]", text)]
