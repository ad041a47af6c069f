"""Several scenarios in one batch: each recorded conversation judged against its own.

A conversation names its scenario by slug (`"scenario"` in its tracker object), or a pattern pairs
them: `--pair 'task-(\\d+)'` takes a key from the conversation's id and one from each scenario's slug,
and a conversation goes with the scenario whose key equals its own. Keys are compared whole, so
`task-7-trial-2` (key `7`) pairs with `tau-bench-task-7`, never with `tau-bench-task-17` (key `17`).
A conversation that pairs with no scenario is bad input, named by its file and line; so are two
scenarios with one key, which would make the pairing a guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from .errors import LoadError, Problem, did_you_mean
from .events.model import Conversation
from .scenario.model import Scenario


def compile_pair(pattern: str) -> re.Pattern[str]:
    """`--pair REGEX`: a pattern with exactly one capturing group, the key. Raises ValueError saying what is wrong."""
    try:
        compiled = re.compile(pattern)
    except re.error as err:
        raise ValueError(f"not a valid regular expression: {err}") from None
    if compiled.groups != 1:
        raise ValueError(f"needs exactly one capturing group, the key to pair by (it has {compiled.groups}), e.g. 'task-(\\d+)'")
    return compiled


def pair_key(pattern: re.Pattern[str], name: str) -> str | None:
    """The key `pattern` captures from `name` (its first match), or None when it does not match."""
    found = pattern.search(name)
    return found.group(1) if found is not None and found.group(1) is not None else None


@dataclass(frozen=True)
class ScenarioSet:
    """The scenarios of a batch by slug, and how a conversation finds its own. Built by `of`."""

    scenarios: dict[str, Scenario]
    pattern: re.Pattern[str] | None = None
    by_key: dict[str, Scenario] = field(default_factory=dict)

    @classmethod
    def of(cls, scenarios: Sequence[Scenario], pattern: re.Pattern[str] | None = None) -> ScenarioSet:
        """Raises `LoadError` for two scenarios with one slug, or (with a pattern) with one key."""
        problems: list[Problem] = []
        by_slug: dict[str, Scenario] = {}
        for scenario in scenarios:
            if scenario.slug in by_slug:
                problems.append(Problem(f"two scenarios have the slug `{scenario.slug}` (the other is {by_slug[scenario.slug].path}): a conversation could not tell them apart", scenario.path))
            by_slug.setdefault(scenario.slug, scenario)
        by_key: dict[str, Scenario] = {}
        for scenario in by_slug.values() if pattern is not None else ():
            key = pair_key(pattern, scenario.slug)
            if key is None:
                continue
            if key in by_key:
                other = by_key[key]
                problems.append(Problem(f"--pair takes the key `{key}` from both `{other.slug}` ({other.path}) and `{scenario.slug}`: make the pattern tell them apart", scenario.path))
            by_key.setdefault(key, scenario)
        if problems:
            raise LoadError(problems)
        return cls(by_slug, pattern, by_key)

    @property
    def name(self) -> str:
        return f"{len(self.scenarios)} scenarios"

    def scenario_of(self, conversation: Conversation) -> Scenario:
        """The conversation's own scenario; `LoadError` at its record when it has none."""
        if conversation.scenario is not None:
            found = self.scenarios.get(conversation.scenario)
            if found is None:
                raise self._unpaired(conversation, f"it names `{conversation.scenario}`, which is not one of the scenarios given{did_you_mean(conversation.scenario, self.scenarios)}")
            return found
        if self.pattern is None:
            raise self._unpaired(conversation, "its record names none (a `scenario` key holding a scenario's slug) and no --pair REGEX pairs by id")
        name = conversation.conversation_id or conversation.source
        key = pair_key(self.pattern, name)
        if key is None:
            raise self._unpaired(conversation, f"--pair /{self.pattern.pattern}/ finds no key in its id `{name}`")
        found = self.by_key.get(key)
        if found is None:
            raise self._unpaired(conversation, f"its id `{name}` gives the key `{key}` (--pair /{self.pattern.pattern}/), and no scenario's slug does")
        return found

    def pairs(self, conversations: Iterable[Conversation]) -> Iterator[tuple[Scenario, Conversation]]:
        """Each conversation with its scenario, in order; the first one without stops there."""
        for conversation in conversations:
            yield self.scenario_of(conversation), conversation

    @staticmethod
    def _unpaired(conversation: Conversation, why: str) -> LoadError:
        file, line = conversation.place or (conversation.source, 1)
        return LoadError.one(f"no scenario for conversation {conversation.conversation_id or conversation.source}: {why}", file, line)
