"""Regular expressions from users: bounded when compiled, and one time budget per check.

Patterns in `text_matches`, `matches` and `pattern` come from files a
pipeline did not write; those of `--pair` and `--match` from flags and MCP
tool arguments (`pairing`, where each name's search has a budget of its own).
They are compiled and run by the `regex` engine (with
the syntax and meaning of Python's `re`, its default V0 mode), with two bounds:

- compiling: the engine copies a repeated part once per repeat
  (`a{1000000000}` asks for gigabytes) and parses nesting by recursion, so a
  pattern's length, its repeat counts, its nesting and its size once repeats
  are copied are checked first, on the engine's own parse of it (which copies
  nothing): past a limit it is a load error naming the limit;
- searching: all the searches one check makes on one conversation share one
  budget of CPU time, `CHECK_BUDGET`; a catastrophic pattern (`(a|aa)+$`) makes
  that check an `error` naming the pattern, never a hang, never a silent pass
  or fail, however many messages the conversation holds.

The budget is CPU time of the process, the measure the engine's own time
limit uses, so a loaded machine, which stretches wall-clock time, never turns
a check into an error: each search is given what is left of the check's
budget, a search never starts after the deadline, and the searches of one
check together use at most the budget. A pattern of plain characters is found by a
string search that cannot backtrack: it still never starts after the
deadline, but runs without the engine's limit (`is_plain`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from functools import lru_cache, wraps
from itertools import accumulate
from time import process_time
from typing import TYPE_CHECKING, Any, TypeVar

from .._shown import counted

if TYPE_CHECKING:
    import regex

#: Characters a pattern may hold: a long alternation of phrases fits; a generated monster does not.
MAX_PATTERN_CHARS = 1_000
#: Largest count in `{m}`, `{m,}`, `{m,n}` (Python's `re` takes up to 4,294,967,295).
MAX_REPEAT = 1_000
#: Groups, repeats and lookarounds inside one another.
MAX_NESTING = 50
#: Parts of the parsed pattern once each repeated part is copied as many times as it must match at least: what
#: compiling costs in memory (up to about 300 bytes a part: `x{10000}` takes 3 MB, `x{1000000}` 270 MB).
MAX_PARTS = 10_000
#: Seconds of CPU time all the searches of one check on one conversation may take together.
CHECK_BUDGET = 1.0

F = TypeVar("F", bound=Callable[..., Any])


class PatternTimeout(Exception):
    """The searches of one check ran past its time budget."""


class PatternError(ValueError):
    """The pattern does not compile; the message says why."""


class PatternTooLarge(PatternError):
    """The pattern compiles to more than a limit allows; the message names the limit."""


# --- compiling, bounded ------------------------------------------------------------------------


def _parse(pattern: str) -> Any:
    """The `regex` engine's own parse tree of `pattern`, as `regex.compile` builds it before compiling (it copies nothing).

    Its own parser, so flags, verbose mode, sets and comments mean exactly what they will mean when compiled.
    A global flag written mid-pattern makes the engine parse again with it from the start; so does this.
    """
    from regex import _regex_core as core

    global_flags = 0
    while True:
        source = core.Source(pattern)
        info = core.Info(global_flags, source.char_type, {})
        info.guess_encoding = core.UNICODE
        source.ignore_space = bool(info.flags & core.VERBOSE)
        try:
            return core._parse_pattern(source, info)
        except core._UnscopedFlagSet:
            global_flags = info.global_flags


def _children(node: Any) -> list[Any]:
    """The parts a parsed node holds, whatever the attribute the engine keeps them in."""
    from regex._regex_core import RegexBase

    found = []
    for value in vars(node).values():
        if isinstance(value, RegexBase):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found.extend(item for item in value if isinstance(item, RegexBase))
    return found


def _measure(node: Any, depth: int) -> int:
    """The node's size once repeats are copied; raises `PatternTooLarge` past a count or the nesting limit."""
    from regex._regex_core import Branch, Sequence

    children = _children(node)
    if children and not isinstance(node, (Sequence, Branch)):  # the parser's glue is no nesting the user wrote
        depth += 1
        if depth > MAX_NESTING:
            raise PatternTooLarge(f"groups, repeats and lookarounds nest more than {MAX_NESTING} levels deep (the limit)")
    inner = sum(_measure(child, depth) for child in children)
    if hasattr(node, "min_count"):  # a repeat: `*`, `+`, `?`, `{m,n}`
        for count in (node.min_count, node.max_count):
            if count is not None and count > MAX_REPEAT:
                raise PatternTooLarge(f"a repeat count of {count:,} is more than the limit of {MAX_REPEAT:,}")
        inner *= max(node.min_count, 1)
    return 1 + inner


def check_bounds(pattern: str) -> None:
    """Raise `PatternTooLarge` when compiling `pattern` would pass a limit; invalid patterns are left to the compiler."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternTooLarge(f"the pattern is {len(pattern):,} characters long, more than the limit of {MAX_PATTERN_CHARS:,}")
    import regex

    try:
        tree = _parse(pattern)
    except (regex.error, ValueError):  # ValueError: flags that exclude each other, `(?a)(?u)`
        return  # `regex.compile` reports it in its own words
    except RecursionError:
        raise PatternTooLarge(f"groups nest more than {MAX_NESTING} levels deep (the limit)") from None
    parts = _measure(tree, 0)
    if parts > MAX_PARTS:
        raise PatternTooLarge(
            f"its repeats copy it to {parts:,} parts, more than the limit of {MAX_PARTS:,} (counts of nested repeats multiply)"
        )


@lru_cache(maxsize=128)
def compile_pattern(pattern: str) -> regex.Pattern:
    """The compiled pattern, within the limits above; raises `PatternError` (a `PatternTooLarge` past a limit)."""
    import regex  # here, not at the top: a file without patterns never pays for the engine

    check_bounds(pattern)
    try:
        return regex.compile(pattern)
    except (regex.error, ValueError) as err:  # ValueError: flags that exclude each other, `(?V0V1)`
        raise PatternError(str(err)) from None


# --- searching, within one budget per check -------------------------------------------------------


class _Budget:
    """The deadline the searches of one check share; set by the first search."""

    __slots__ = ("deadline", "searches")

    def __init__(self) -> None:
        self.deadline: float | None = None
        self.searches = 0


_BUDGET: ContextVar[_Budget | None] = ContextVar("dialogcheck_search_budget", default=None)


def one_budget(evaluate: F) -> F:
    """Decorate a check's `evaluate`: every search it makes, however many messages it reads, shares one `CHECK_BUDGET`.

    The budget is scoped to the call, not kept on the check (checks are frozen and shared by every conversation).
    """

    @wraps(evaluate)
    def evaluate_within_budget(self: Any, conversation: Any) -> Any:
        if _BUDGET.get() is not None:  # called from inside another check's evaluation: its budget holds
            return evaluate(self, conversation)
        token = _BUDGET.set(_Budget())
        try:
            return evaluate(self, conversation)
        finally:
            _BUDGET.reset(token)

    return evaluate_within_budget  # type: ignore[return-value]  # the wrapper keeps the wrapped function's signature


def _characters(pattern: str) -> list[Any] | None:
    """The characters `pattern` is made of, in a row, from the engine's parse of it; None when it holds anything
    else (a repeat, an alternative, a group, a set, an anchor)."""
    from regex._regex_core import Character, Sequence

    tree = _parse(pattern)
    if isinstance(tree, Character):
        return [tree]
    if not isinstance(tree, Sequence):
        return None
    nodes = _children(tree)
    return nodes if all(isinstance(node, Character) for node in nodes) else None


@lru_cache(maxsize=128)
def is_plain(pattern: str) -> bool:
    """Whether `pattern` is characters in a row and nothing else (`(?i)user id`): no repeat, alternative, group, set
    or anchor. The engine finds such a pattern by a plain string search, which never backtracks, so no search of it
    can run away: it needs no time limit, and is spared the engine's bookkeeping of one."""
    return _characters(pattern) is not None


def _time_left(pattern: str, text: str) -> tuple[float, _Budget]:
    """Count one search against the current check's budget (a direct call has a budget of its own): the seconds
    left, and the budget; raises `PatternTimeout` when none are left, so no search starts after the deadline."""
    budget = _BUDGET.get() or _Budget()
    now = process_time()
    if budget.deadline is None:
        budget.deadline = now + CHECK_BUDGET
    budget.searches += 1
    left = budget.deadline - now
    if left <= 0:
        raise _out_of_time(pattern, text, budget)
    return left, budget


#: What texts searched as one are joined by (`Pattern.found_in`).
_SEPARATOR = "\x00"


class Pattern:
    """A pattern of a check, compiled once and searched within the check's budget (`search`, without the lookups).

    A check keeps its patterns this way, so a search of a message is the engine's search and the budget's
    bookkeeping, and nothing more. Pickled as its text: a worker process compiles it again.
    """

    __slots__ = ("compiled", "joinable", "plain", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self.compiled = compile_pattern(source)
        characters = _characters(source)
        self.plain = characters is not None  # as `is_plain` says
        #: Several texts may be searched as one, joined by `_SEPARATOR`: a plain pattern of at least one character,
        #: none of which is the separator or a negated one (`[^a]`), has no match that reaches into two texts.
        self.joinable = bool(characters and all(node.positive and chr(node.value) != _SEPARATOR for node in characters))

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return Pattern, (self.source,)

    def found(self, text: str) -> bool:
        """`re.search(pattern, text) is not None`, within what is left of the current check's budget; the engine's
        own time limit is set only where a search could backtrack (`is_plain`)."""
        if self.plain:
            _time_left(self.source, text)
            return self.compiled.search(text) is not None
        return first_match(self.compiled, text) is not None

    def found_in(self, texts: Sequence[str]) -> list[bool]:
        """Whether the pattern is found in each of `texts`: one search over all of them where the pattern allows
        (`joinable`), which costs about half of searching each, else a search of each."""
        if not self.joinable or len(texts) < 2:
            return [self.found(text) for text in texts]
        joined = _SEPARATOR.join(texts)
        _time_left(self.source, joined)
        found = [False] * len(texts)
        ends: list[int] = []  # where each text's separator ends: needed only once a match is found
        for match in self.compiled.finditer(joined):
            ends = ends or list(accumulate(len(text) + 1 for text in texts))
            found[bisect_right(ends, match.start())] = True
        return found


@lru_cache(maxsize=128)
def prepared(source: str) -> Pattern:
    """The `Pattern` of `source`, compiled once for the few patterns a process searches."""
    return Pattern(source)


def first_match(compiled: regex.Pattern, text: str) -> regex.Match | None:
    """`compiled.search(text)`, the match itself (for its groups), within what is left of the current check's budget
    (a direct call has a budget of its own); `PatternTimeout` past it. `compiled` comes from `compile_pattern`."""
    left, budget = _time_left(compiled.pattern, text)
    try:
        return compiled.search(text, timeout=left)
    except TimeoutError:
        raise _out_of_time(compiled.pattern, text, budget) from None


def search(source: str, text: str) -> bool:
    """`re.search(source, text) is not None`, within what is left of the current check's budget.

    Outside a check's evaluation (a direct call) the search has a budget of its own. Every search counts against
    the budget and none starts after its deadline.
    """
    return prepared(source).found(text)


def _out_of_time(pattern: str, text: str, budget: _Budget) -> PatternTimeout:
    searches = counted(budget.searches, "search", "searches")
    return PatternTimeout(
        f"the pattern /{pattern}/ ran out of the check's {CHECK_BUDGET:g} s for searching ({searches},"
        f" the last on a {len(text):,}-character text): it backtracks catastrophically: simplify it"
    )
