"""Whose fault a failed, errored or suspect conversation was, and where it went wrong: decided from evidence.

Every failing check already names events, the review of the simulated user names its faults by turn, an
environment marks the calls it faulted, and the judge says when it could not decide. `blame` puts them
together into one answer per conversation, by the first rule of this order that applies:

1. `agent_error`: the run ended because the agent could not be reached or answered with an error: the
   `environment`'s (the agent's world failed, not its judgement).
2. `run_error`: the run ended for another reason of the harness (the simulated user's model, a time
   limit): `unknown`.
3. `suspect_user`: the review found a fault of the simulated user at or before the agent's decisive point
   (or the agent has none): the `user`'s, at the turn of the review's first reason.
4. `unexpected_fault`: the agent received a fault it was not being tested on (one of the environment's own
   schedule, not of the scenario's `environment.faults`) at or before its decisive point: the
   `environment`'s, at that call. A fault the scenario does inject is one the agent must handle: the agent's
   first move after it becomes its decisive point (`fault_mishandled`).
5. `judge_undecided`: the conversation failed or errored only by LLM-judged checks, and the judge was
   inconclusive, errored or uncalibrated on one of them: the `judge`'s.
6. `check_errored`: only checks that could not be decided (a check that crashed, a state check with no
   state recorded): `unknown`.
7. The agent's decisive point (see `AgentPoint`): the earliest event a failing check cites (a wrong call, a
   forbidden event, a judge's citation), or, when none cites one, the earliest place a check that failed by
   absence gives, those placed by what they waited on or needed before the fallbacks.
8. `unknown`: nothing above placed it.

A failing check places the agent's decisive point by how it fails:

* `wrong_call`: a tool check whose closest miss is a call of the same tool with other arguments: that call;
* `forbidden_event`: a check that forbids something (a tool never to call, a reply never to give, a value
  never to write, a call made without the confirmation before it, a call made more often than allowed):
  the first offending event;
* `missing`: a check that fails because something never happened places it at the turn where it could
  first have been met: the agent's first move (a message or a counted tool call) after the later of the
  event the check was waiting on (the step before, for a sequence) and the event at which the last of the
  values the expected call needs (its argument values, as text) first appeared in the conversation; when
  the check names neither, after the user's first message, the first turn the agent could act on what it
  was asked (`missing_from_start`); its last move when it made none after that point (`missing_at_end`);
* `judged_fail`: a criterion or `llm_judge` step the judge failed, at the first event it cited.

The rule that decided is `Blame.rule`; `checks` names the checks the blame explains.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import islice
from typing import Any, Literal, NamedTuple

import orjson

from .checks.base import CheckResult, Outcome
from .checks.judged import JudgedResult
from .events.model import FRAMEWORK_TOOLS, BotMessage, Conversation, Event, ToolRun, UserMessage
from .llm.base import Usage
from .results.model import ACTORS, Blame, ConversationResult, UserReview

Actor = Literal["agent", "user", "environment", "judge", "unknown"]

#: `--blame`: from the evidence (the default), the evidence then the LLM localiser where it placed nothing, or no blame.
BLAME_MODES = ("evidence", "llm", "off")



@dataclass(frozen=True)
class Failure:
    """One check that made the verdict what it is, by the id the outputs name it with."""

    id: str
    result: CheckResult
    judged: bool


@dataclass(frozen=True)
class AgentPoint:
    """Where the agent went wrong by one failing check: the event, and the rule that placed it there."""

    event: Event
    rule: str
    failure: Failure
    reason: str


# --------------------------------------------------------------------------- what failed

def failures(result: ConversationResult) -> list[Failure]:
    """The checks that made the verdict: failed or errored assertions and criteria, and the SOP steps of a set
    that did not pass (its required ones that did not pass, or every one that did not, when all required passed)."""
    found = [Failure(f"assertion {i}", r, False) for i, r in enumerate(result.assertions, 1) if _bad(r)]
    if result.sop is not None and result.sop.outcome is not Outcome.PASS:
        steps = [s for s in result.sop.results if _bad(s.result)]
        required = [s for s in steps if s.step.required]
        found += [Failure(f"sop {s.step.id}", s.result, isinstance(s.result, JudgedResult)) for s in required or steps]
    found += [Failure(f"criterion {i}", c, True) for i, c in enumerate(result.criteria, 1) if _bad(c)]
    return found


def _bad(result: CheckResult) -> bool:
    return result.outcome is Outcome.FAIL or result.outcome is Outcome.ERROR


# --------------------------------------------------------------------------- how a check fails

#: Checks whose failing evidence is what they forbid: the first event cited offended.
_FORBIDS = frozenset({"no_tool_called", "bot_did_not_utter", "memory_was_not_set", "confirmation_requested",
                      "tool_input_contains", "tool_output_contains"})
#: Checks that cite the step they were waiting on, then fail because the next never came.
_WAITS = frozenset({"tool_sequence", "sequencing"})
#: Checks whose closest miss is an event of the same tool: a call made with other arguments.
_CALLS = frozenset({"tool_executed", "tool_called"})
#: Checks whose closest miss is a write of the same key with another value.
_WRITES = frozenset({"memory_was_set"})
#: Shortest text, and fewest digits of a number, worth looking for in the conversation.
_MIN_TEXT, _MIN_DIGITS = 3, 3
#: At most this many expected values are looked for per check (each is one scan of the conversation).
_MAX_VALUES = 32


def agent_point(conversation: Conversation, failure: Failure, framework_tools: frozenset[str]) -> AgentPoint | None:
    """Where `failure` places the agent's decisive point, or None when it places nothing (a crash, an error)."""
    result, events = failure.result, conversation.events
    if result.outcome is not Outcome.FAIL or result.exception is not None:
        return None
    cited = [events[i] for i in sorted(set(result.evidence)) if 0 <= i < len(events)]
    key = getattr(result.check, "key", "")
    if failure.judged:
        if cited:
            return AgentPoint(cited[0], "judged_fail", failure, f"the judge failed {failure.id} at event {cited[0].index}")
        return _missing(conversation, failure, None, framework_tools)
    if key in _CALLS and cited and isinstance(cited[0], ToolRun) and result.differences \
            and all(d.field != "tool_name" for d in result.differences):
        return AgentPoint(cited[0], "wrong_call", failure,
                          f"`{cited[0].tool_name}` called with {_fields(result)} other than expected")
    times = getattr(result.check, "times", None)
    if key in _CALLS and isinstance(times, int) and len(cited) > times:
        extra = cited[times]
        tool = getattr(extra, "tool_name", extra.type)
        allowed = "which the scenario forbids" if times == 0 else f"more often than the {times} time{'s' if times > 1 else ''} expected"
        return AgentPoint(extra, "forbidden_event", failure, f"`{tool}` called, {allowed}")
    if key in _WRITES and cited and result.differences == () and "written as" in result.detail:
        return AgentPoint(cited[-1], "forbidden_event", failure, f"{failure.id}: written with another value")
    if key in _FORBIDS and cited:
        offending = next((e for e in cited if isinstance(e, ToolRun)), cited[0]) if key == "confirmation_requested" else cited[0]
        return AgentPoint(offending, "forbidden_event", failure, f"{failure.id}: {_clip(result.detail.split(';')[0], 120)}")
    anchor = cited[-1] if key in _WAITS and cited else None
    return _missing(conversation, failure, anchor, framework_tools)


def _fields(result: CheckResult) -> str:
    names = list(dict.fromkeys(d.path or d.field for d in result.differences))
    return ", ".join(f"`{n}`" for n in names[:3]) + (" and more" if len(names) > 3 else "")


def _clip(text: str, width: int = 160) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _missing(conversation: Conversation, failure: Failure, anchor: Event | None, framework_tools: frozenset[str]) -> AgentPoint | None:
    """The agent's first move once the expectation could first have been met: after the step it waited on, after
    the values it needs had all been said, or else after the user's first message; its last move when none is left."""
    values = list(_expected_values(failure.result.check))
    appeared = _last_appearance(conversation, values)
    start = max((e.index for e in (anchor, appeared) if e is not None), default=None)
    since, rule = ("the step before it" if anchor is not None and start == anchor.index else "what it needs had been said"), "missing"
    if start is None:
        asked = next((e for e in conversation.events if isinstance(e, UserMessage)), None)
        start = asked.index if asked is not None else -1
        since, rule = ("the user's first message" if asked is not None else "the start"), "missing_from_start"
    events = conversation.events
    what = f"{failure.id}: {_clip(failure.result.detail.split(';')[0], 100)}"
    after = next((e for e in islice(events, start + 1, None) if _agent_move(e, framework_tools)), None)
    if after is not None:
        return AgentPoint(after, rule, failure, f"{what}; the agent's first move after {since} (event {start})")
    last = next((e for e in reversed(events) if _agent_move(e, framework_tools)), None)
    if last is None:
        return None
    return AgentPoint(last, "missing_at_end", failure, f"{what}; the conversation ended without it")


def _agent_move(event: Event, framework_tools: frozenset[str]) -> bool:
    return isinstance(event, BotMessage) or (isinstance(event, ToolRun) and event.tool_name not in framework_tools)


def _expected_values(check: Any) -> Iterator[str]:
    """The texts worth looking for of what a call check expects: its argument values, as JSON would spell them."""
    arguments = getattr(check, "arguments", None)
    if not isinstance(arguments, Mapping):
        return
    seen = 0
    for value in _leaves(arguments):
        if seen >= _MAX_VALUES:
            return
        if isinstance(value, str) and len(value) >= _MIN_TEXT:
            seen += 1
            yield value
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and len(re.sub(r"\D", "", repr(value))) >= _MIN_DIGITS:
            seen += 1
            yield repr(value) if isinstance(value, float) else str(value)


def _leaves(value: Any, depth: int = 0) -> Iterator[Any]:
    if depth > 8:
        return
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _leaves(item, depth + 1)
    else:
        yield value


def _last_appearance(conversation: Conversation, values: Sequence[str]) -> Event | None:
    """The event at which the last of `values` that the conversation holds first appeared (said by the user,
    returned by a tool, or written by the agent); None when it holds none of them."""
    if not values:
        return None
    wanted = {v.casefold() for v in values}
    latest: Event | None = None
    for event in conversation.events:
        if not wanted:
            break
        text = _text_of(event)
        if not text:
            continue
        found = {v for v in wanted if v in text}
        if found:
            wanted -= found
            latest = event
    return latest


def _text_of(event: Event) -> str:
    if isinstance(event, (UserMessage, BotMessage)):
        return (event.text or "").casefold()
    if isinstance(event, ToolRun):
        result = event.result if isinstance(event.result, str) else orjson.dumps(event.result, default=repr).decode()
        return result.casefold()
    return ""


# --------------------------------------------------------------------------- the order

#: How firmly each rule places the agent's decisive point, firmest first: an event the evidence cites, then
#: the point an absence was placed at by what the check waited on or needed, then the fallbacks.
_PLACED_BY = {"wrong_call": 0, "forbidden_event": 0, "judged_fail": 0, "missing": 1, "missing_from_start": 2, "missing_at_end": 3}

@dataclass(frozen=True)
class RunError:
    """Why a run ended before it was judged: `agent` when the agent failed, else the harness's."""

    by: Literal["agent", "harness"]
    message: str


def tested_faults(subject: Any) -> frozenset[str]:
    """The tools whose faults a scenario injects itself (its `environment.faults`); none for an SOP."""
    environment = getattr(subject, "environment", None)
    return environment.tested_fault_tools if environment is not None else frozenset()


def blame(
    conversation: Conversation,
    result: ConversationResult | None,
    *,
    review: UserReview | None = None,
    error: RunError | None = None,
    expected_faults: Iterable[str] = (),
    framework_tools: frozenset[str] = FRAMEWORK_TOOLS,
) -> Blame | None:
    """The blame of a conversation that did not pass (None for one that did), by the module's order.

    `review` is its simulated user's review, `error` why its run ended early, `expected_faults` the tools whose
    faults the scenario itself injects (faults it tests the agent on), `framework_tools` the tools not counted.
    """
    review = review if review is not None else (result.user_review if result is not None else None)
    suspect = review is not None and review.suspect
    if error is not None:
        event = conversation.events[-1] if conversation.events else None
        if error.by == "agent":
            return _made(conversation, "environment", event, (), f"the agent failed: {_clip(error.message)}", "agent_error")
        return _made(conversation, "unknown", event, (), f"the run ended early: {_clip(error.message)}", "run_error")
    if result is None or (result.verdict is Outcome.PASS and not suspect):
        return None
    failed = failures(result)
    points = [p for p in (agent_point(conversation, f, framework_tools) for f in failed) if p is not None]
    first = min(points, key=lambda p: (_PLACED_BY[p.rule], p.event.index), default=None)
    ids = tuple(f.id for f in failed)
    if suspect:
        reason = _first_reason(review)  # type: ignore[arg-type]  # suspect, so a review
        user_turn = reason.turn
        if first is None or user_turn is None or user_turn <= first.event.turn:
            event = _user_event(conversation, user_turn)
            turn = user_turn if user_turn is not None else (event.turn if event is not None else None)
            return _made(conversation, "user", event, ids, f"the simulated user: {reason.text} ({reason.rule})", "suspect_user", turn)
    fault = _unexpected_fault(conversation, set(expected_faults), first.event.index if first is not None else None)
    if fault is not None:
        kind = fault.metadata.get("fault", {}).get("kind", "fault") if isinstance(fault.metadata.get("fault"), Mapping) else "fault"
        return _made(conversation, "environment", fault, ids, f"`{fault.tool_name}` was answered with an injected {kind} the scenario does not test",
                     "unexpected_fault")
    if first is not None:
        first = _after_expected_fault(conversation, first, set(expected_faults), framework_tools)
    undecided = [f for f in failed if f.judged and _undecided(f.result)]
    if undecided and all(f.judged for f in failed) and not any(f.result.outcome is Outcome.FAIL and not _undecided(f.result) for f in failed):
        cited = sorted(i for f in undecided for i in f.result.evidence if 0 <= i < len(conversation.events))
        event = conversation.events[cited[0]] if cited else None
        return _made(conversation, "judge", event, tuple(f.id for f in undecided), _judge_reason(undecided[0]), "judge_undecided")
    if first is not None:
        return _made(conversation, "agent", first.event, ids, first.reason, first.rule)
    if failed and all(f.result.outcome is Outcome.ERROR for f in failed):
        return _made(conversation, "unknown", None, ids, f"{failed[0].id} could not be decided: {_clip(failed[0].result.detail, 120)}", "check_errored")
    return _made(conversation, "unknown", None, ids, "no failing check places the failure", "unknown")


def _undecided(result: CheckResult) -> bool:
    return isinstance(result, JudgedResult) and (result.inconclusive or result.uncalibrated or result.outcome is Outcome.ERROR)


def _judge_reason(failure: Failure) -> str:
    result = failure.result
    how = "was inconclusive" if getattr(result, "inconclusive", False) else "is uncalibrated" if getattr(result, "uncalibrated", False) else "errored"
    return f"the judge {how} on {failure.id}: {_clip(result.detail, 120)}"


def _first_reason(review: UserReview) -> Any:
    """The review's earliest reason; one about the whole conversation (no turn) counts as the earliest."""
    return min(review.reasons, key=lambda r: -1 if r.turn is None else r.turn)


def _user_event(conversation: Conversation, turn: int | None) -> Event | None:
    users = [e for e in conversation.events if isinstance(e, UserMessage)]
    if turn is None:
        return users[0] if users else None
    return next((e for e in users if e.turn == turn), None)


def _unexpected_fault(conversation: Conversation, expected: set[str], before: int | None) -> ToolRun | None:
    """The first call the environment faulted that the scenario does not inject itself, at or before `before` (a
    call whose fault is the failure itself counts)."""
    for run in conversation.tool_runs:
        if before is not None and run.index > before:
            return None
        if "fault" in run.metadata and run.tool_name not in expected:
            return run
    return None


def _after_expected_fault(conversation: Conversation, point: AgentPoint, expected: set[str], framework_tools: frozenset[str]) -> AgentPoint:
    """A fault the scenario injects, received at or before the agent's decisive point, is what the agent was
    tested on: its first move after that call is where it mishandled it."""
    absent = point.rule.startswith("missing")  # what never happened may be the fault's doing wherever it came
    fault = next((r for r in conversation.tool_runs
                  if (absent or r.index <= point.event.index) and "fault" in r.metadata and r.tool_name in expected), None)
    if fault is None:
        return point
    after = next((e for e in conversation.events[fault.index + 1:] if _agent_move(e, framework_tools)), None)
    if after is None:
        return point
    return AgentPoint(after, "fault_mishandled", point.failure,
                      f"{point.failure.id}: after the injected fault of `{fault.tool_name}` at event {fault.index}, the agent went on as if it had not happened")


def _made(conversation: Conversation, actor: Actor, event: Event | None, checks: tuple[str, ...], reason: str, rule: str,
          turn: int | None = None) -> Blame:
    index = event.index if event is not None else None
    return Blame(actor, turn if turn is not None else (event.turn if event is not None else None), index,
                 source_index(conversation, index), checks, reason, rule)


def source_index(conversation: Conversation, index: int | None) -> int | str | None:
    """Where event `index` came from in its source file: `metadata.source_index` (a message of a tau-bench or
    tau2 trajectory), else `metadata.span_id` (an OTLP span); None when it has neither."""
    if index is None:
        return None
    events = conversation.events
    if not 0 <= index < len(events):
        return None
    metadata = events[index].metadata
    if not isinstance(metadata, Mapping):
        return None
    place = metadata.get("source_index")
    if isinstance(place, int) and not isinstance(place, bool):
        return place
    span = metadata.get("span_id")
    return span if isinstance(span, str) else None


def tally(blames: Iterable[Blame | None]) -> dict[str, int]:
    """How many blames name each actor (`summary.blame`), every actor listed."""
    counts: dict[str, int] = dict.fromkeys(ACTORS, 0)
    for found in blames:
        if found is not None:
            counts[found.actor] += 1
    return counts


# --------------------------------------------------------------------------- the LLM localiser (`--blame llm`)

#: The rules whose placement the localiser may replace: nothing placed it, or only a fallback of `missing`.
#: Every other rule is evidence, which the localiser never overrides.
LOCALISED_RULES = frozenset({"unknown", "missing_from_start", "missing_at_end"})


def failures_text(result: ConversationResult) -> str:
    """The checks that made the verdict, one line each, as the localiser is told them."""
    return "\n".join(f"- {f.id} ({getattr(f.result.check, 'key', 'check')}): {_clip(f.result.detail, 300)}" for f in failures(result)) or "- (none)"


class Localisation(NamedTuple):
    """What `localised` decided: the blame, and the tokens the localiser spent on it (None when it was not asked)."""

    blame: Blame | None
    usage: Usage | None = None

    def counted(self, result: ConversationResult) -> ConversationResult:
        """`result` with its usage counting the localiser's tokens beside the judge's."""
        return result if self.usage is None else replace(result, usage=(result.usage or Usage()) + self.usage)


async def localised(conversation: Conversation, found: Blame | None, result: ConversationResult | None, judge: Any,
                    framework_tools: frozenset[str] = FRAMEWORK_TOOLS) -> Localisation:
    """`found`, or the localiser's answer where the evidence could not place the failure (`LOCALISED_RULES`).

    `judge` is the evaluation model's `ChatJudge`. The answer's turn and event are checked against the
    conversation as the judge's citations are; a localiser that fails leaves `found` as it was, saying why."""
    from .judge.base import JudgeError  # here: `blame` without the localiser never imports the judge

    if found is None or result is None or found.rule not in LOCALISED_RULES or not hasattr(judge, "localise"):
        return Localisation(found)
    try:
        answer = await judge.localise(conversation, failures_text(result), framework_tools)
    except JudgeError as err:
        return Localisation(Blame(found.actor, found.turn, found.event, found.source_index, found.checks,
                                  f"{found.reason} (the LLM localiser gave no answer: {_clip(str(err), 120)})", found.rule))
    placed = Blame(answer.actor, answer.turn, answer.event, source_index(conversation, answer.event), found.checks, answer.reason, "llm")
    return Localisation(placed, answer.usage if isinstance(answer.usage, Usage) else None)


def with_blame(standard: Any, conversation: Conversation, result: ConversationResult) -> ConversationResult:
    """`result` with its blame, decided against the scenario or SOP of `standard` it was judged against."""
    subject = standard.own(result.scenario)
    found = blame(conversation, result, expected_faults=tested_faults(subject), framework_tools=subject.framework_tools)
    return result if found is None else replace(result, blame=found)
