"""Several scenarios in one batch: each recorded conversation judged against its own.

A conversation names its scenario by slug (`"scenario"` in its tracker object), or a pattern pairs
them: `--pair 'task-(\\d+)'` takes a key from the conversation's id and one from each scenario's slug,
and a conversation goes with the scenario whose key equals its own. Keys are compared whole, so
`task-7-trial-2` (key `7`) pairs with `tau-bench-task-7`, never with `tau-bench-task-17` (key `17`).
A conversation that pairs with no scenario is bad input, named by its file and line; so are two
scenarios with one key, which would make the pairing a guess.

The pattern comes from a flag or a tool argument, so it is compiled and searched as the checks' patterns are
(`checks.patterns`): within bounds when compiled, and each name's search within a time budget of its own. A
pattern that backtracks catastrophically on a name is bad input naming it, never a hang.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ._shown import clip, counted
from .checks import patterns
from .errors import COMMAND_LINE, DialogcheckError, LoadError, Problem, Spelling, did_you_mean
from .events.model import Conversation
from .scenario.model import Scenario

if TYPE_CHECKING:
    import regex

#: Characters of a name a message quotes.
_QUOTED = 80
#: `re` flags a compiled pattern may carry, as the inline flags the engine reads.
_INLINE_FLAGS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"), (re.VERBOSE, "x"), (re.ASCII, "a"))


class PairError(DialogcheckError, ValueError):
    """A pairing pattern that cannot pair: it does not compile, has not one group, or ran out of its time on a name."""


def compile_pair(pattern: str | re.Pattern[str]) -> regex.Pattern:
    """`--pair REGEX`: a pattern with exactly one capturing group, the key, compiled within the bounds of
    `checks.patterns` (a pattern `re` compiled already is compiled again so). Raises `PairError` saying what is wrong."""
    source = pattern if isinstance(pattern, str) else _source(pattern)
    try:
        compiled = patterns.compile_pattern(source)
    except patterns.PatternTooLarge as err:
        raise PairError(f"too large a regular expression: {err}") from None
    except patterns.PatternError as err:
        raise PairError(f"not a valid regular expression: {err}") from None
    if compiled.groups != 1:
        raise PairError(f"needs exactly one capturing group, the key to pair by (it has {compiled.groups}), e.g. 'task-(\\d+)'")
    return compiled


def _source(pattern: re.Pattern[str]) -> str:
    flags = "".join(letter for flag, letter in _INLINE_FLAGS if pattern.flags & flag)
    return f"(?{flags}){pattern.pattern}" if flags else pattern.pattern


def pair_key(pattern: regex.Pattern, name: str) -> str | None:
    """The key `pattern` (from `compile_pair`) captures from `name` (its first match), or None when it does not match.

    The search has `patterns.CHECK_BUDGET` seconds; `PairError` when the pattern runs out of them, naming it and the name."""
    try:
        found = patterns.first_match(pattern, name)
    except patterns.PatternTimeout:
        raise PairError(
            f"/{pattern.pattern}/ ran out of its {patterns.CHECK_BUDGET:g} s for searching `{clip(name, _QUOTED)}` ({len(name):,} characters):"
            " it backtracks catastrophically: simplify it"
        ) from None
    return found.group(1) if found is not None and found.group(1) is not None else None


@dataclass(frozen=True)
class ScenarioSet:
    """The scenarios of a batch by slug, and how a conversation finds its own. Built by `of`."""

    scenarios: dict[str, Scenario]
    pattern: regex.Pattern | None = None
    by_key: dict[str, Scenario] = field(default_factory=dict)
    #: How messages name the pattern: `--pair` on the command line, `pair=` in the Python API.
    spelling: Spelling = COMMAND_LINE

    @classmethod
    def of(cls, scenarios: Sequence[Scenario], pattern: regex.Pattern | None = None, spelling: Spelling = COMMAND_LINE) -> ScenarioSet:
        """Raises `LoadError` for two scenarios with one slug, or (with a pattern) with one key or a slug the
        pattern ran out of its time on."""
        problems: list[Problem] = []
        by_slug: dict[str, Scenario] = {}
        for scenario in scenarios:
            if scenario.slug in by_slug:
                problems.append(Problem(f"two scenarios have the slug `{scenario.slug}` (the other is {by_slug[scenario.slug].path}): a conversation could not tell them apart", scenario.path))
            by_slug.setdefault(scenario.slug, scenario)
        by_key: dict[str, Scenario] = {}
        for scenario in by_slug.values() if pattern is not None else ():
            try:
                key = pair_key(pattern, scenario.slug)
            except PairError as err:
                problems.append(Problem(f"{spelling.about('pair', str(err))} (the slug of this scenario)", scenario.path))
                continue
            if key is None:
                continue
            if key in by_key:
                other = by_key[key]
                said = f"{spelling.option('pair')} takes the key `{key}` from both `{other.slug}` ({other.path}) and `{scenario.slug}`: make the pattern tell them apart"
                problems.append(Problem(said, scenario.path))
            by_key.setdefault(key, scenario)
        if problems:
            raise LoadError(problems)
        return cls(by_slug, pattern, by_key, spelling)

    @property
    def name(self) -> str:
        return counted(len(self.scenarios), "scenario")

    # A standard (`subject.Standard`) of several scenarios.

    @property
    def subjects(self) -> tuple[Scenario, ...]:
        return tuple(self.scenarios.values())

    several = True

    def own(self, scenario: str | None) -> Scenario:
        return self.scenarios[scenario]  # type: ignore[index]  # a set's results name their scenario

    def scenario_of(self, conversation: Conversation) -> Scenario:
        """The conversation's own scenario; `LoadError` at its record when it has none."""
        if conversation.scenario is not None:
            found = self.scenarios.get(conversation.scenario)
            if found is None:
                raise self._unpaired(conversation, f"it names `{conversation.scenario}`, which is not one of the scenarios given{did_you_mean(conversation.scenario, self.scenarios)}")
            return found
        if self.pattern is None:
            raise self._unpaired(conversation, f"its record names none (a `scenario` key holding a scenario's slug) and no {self.spelling.option('pair')} pattern pairs by id")
        name = conversation.conversation_id or conversation.source
        try:
            key = pair_key(self.pattern, name)
        except PairError as err:
            raise self._unpaired(conversation, f"{self.spelling.about('pair', str(err))} (its id)") from None
        shown = self.spelling.about("pair", f"/{self.pattern.pattern}/")
        if key is None:
            raise self._unpaired(conversation, f"{shown} finds no key in its id `{name}`")
        found = self.by_key.get(key)
        if found is None:
            raise self._unpaired(conversation, f"its id `{name}` gives the key `{key}` ({shown}), and no scenario's slug does")
        return found

    def pairs(self, conversations: Iterable[Conversation]) -> Iterator[tuple[Scenario, Conversation]]:
        """Each conversation with its scenario, in order; the first one without stops there."""
        for conversation in conversations:
            yield self.scenario_of(conversation), conversation

    @staticmethod
    def _unpaired(conversation: Conversation, why: str) -> LoadError:
        file, line = conversation.place or (conversation.source, 1)
        return LoadError.one(f"no scenario for conversation {clip(conversation.conversation_id or conversation.source, _QUOTED)}: {why}", file, line)
