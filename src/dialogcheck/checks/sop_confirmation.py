"""SOP `confirmation_requested`: the agent asked before it ran a mutating tool.

The window is counted in turns: the call's own turn and the
`withinLastNTurns - 1` turns before it, and only bot messages recorded
before the call count (docs/sop-reference.md). A tool never called needs no
confirmation, so the step is `skip`, not a pass.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from operator import attrgetter

from .._shown import counted
from ..events.model import BotMessage, Conversation, ToolRun
from ..events.values import show
from .base import Check, CheckResult, Outcome, at, framework_tools_field
from .patterns import one_budget, search
from .schema import spec
from .sop_tools import SHOWN_CALLS, calls_of, slug_name

DEFAULT_CONFIRMATION_TURNS = 4


@dataclass(frozen=True)
class ConfirmationRequested(Check):
    """Every call of the tool follows a bot message matching `pattern` within the window."""

    key = "confirmation_requested"

    before_tool_slug: str = spec(name="beforeToolSlug", tool_slug=True)
    catalog_slug: str | None = spec(None, name="catalogSlug")
    #: Read after `catalogSlug`, so keyword-only.
    pattern: str = spec(kw_only=True, regex=True)
    within_last_n_turns: int = spec(DEFAULT_CONFIRMATION_TURNS, kw_only=True, name="withinLastNTurns", minimum=1)
    framework_tools: frozenset[str] = framework_tools_field()

    @cached_property
    def label(self) -> str:
        return f"confirmation_requested before {self.before_tool_slug}"

    def window(self, bots: Sequence[BotMessage], call: ToolRun) -> Sequence[BotMessage]:
        """Bot messages before `call`, in its turn or the N-1 turns before it: two bisections of the conversation's
        bot messages, whose indexes and turns both ascend, not a scan."""
        end = bisect_left(bots, call.index, key=attrgetter("index"))
        start = bisect_left(bots, call.turn - (self.within_last_n_turns - 1), 0, end, key=attrgetter("turn"))
        return bots[start:end]

    def _turns(self, call: ToolRun) -> str:
        first = max(0, call.turn - (self.within_last_n_turns - 1))
        return f"turn {call.turn}" if first == call.turn else f"turns {first}-{call.turn}"

    @one_budget
    def evaluate(self, conversation: Conversation) -> CheckResult:
        name = slug_name(self.before_tool_slug, self.catalog_slug)
        calls = calls_of(conversation.tool_log(self.framework_tools), self.before_tool_slug, self.catalog_slug)
        if not calls:
            return CheckResult(self, Outcome.SKIP, f"{name} was never called, so no confirmation was needed")
        confirmed: list[tuple[ToolRun, BotMessage]] = []
        missing: list[str] = []
        evidence: list[int] = []
        bots = conversation.bot_messages
        for call in calls:
            window = self.window(bots, call)
            asked = next((m for m in reversed(window) if search(self.pattern, m.text)), None)  # type: ignore[arg-type]  # settled: a null text reads as "" (`parse.settle`)
            if asked is not None:
                confirmed.append((call, asked))
                continue
            evidence.append(call.index)
            missing.append(self._miss(call, window))
        if missing:
            shown = "; ".join(missing[:SHOWN_CALLS])
            more = f"; and {len(missing) - SHOWN_CALLS:,} more" if len(missing) > SHOWN_CALLS else ""
            return self.result(False, f"{shown}{more}", evidence)
        proofs = "; ".join(
            f"{call.tool_name} at {at(call)} after the bot asked at {at(asked)}: {show(asked.text)}"
            for call, asked in confirmed[:SHOWN_CALLS]
        )
        more = f"; and {len(confirmed) - SHOWN_CALLS:,} more" if len(confirmed) > SHOWN_CALLS else ""
        return self.result(True, proofs + more, [i for call, asked in confirmed for i in (asked.index, call.index)])

    def _miss(self, call: ToolRun, window: Sequence[BotMessage]) -> str:
        where = f"{call.tool_name} at {at(call)}: no bot message before it in {self._turns(call)} matched /{self.pattern}/"
        if not window:
            return f"{where} (there was no bot message in that window)"
        last = window[-1]
        count = f"{counted(len(window), 'bot message')} looked at"
        return f"{where} ({count}; the last, at {at(last)}, said {show(last.text)})"


__all__ = ["DEFAULT_CONFIRMATION_TURNS", "ConfirmationRequested"]
