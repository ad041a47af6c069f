"""The results codec reads back what it writes: every result type, every field set, through the JSON bytes.

Each field of each result type is either written and read back equal, or named in `NOT_WRITTEN` with why,
so a field added to a result type fails here until the codec writes it (or says why it does not): encoding
and decoding cannot drift apart unnoticed.
"""

from dataclasses import fields, is_dataclass, replace

import msgspec
import orjson
import pytest

from dialogcheck.checks.base import CheckResult, Difference, Outcome
from dialogcheck.checks.judged import Criterion, JudgedResult, Judgement
from dialogcheck.llm.base import Usage
from dialogcheck.results.codec import check_stats_of, check_summary_document, conversation_line, decode_conversation, decode_run, encode_run
from dialogcheck.results.model import (
    Blame,
    CheckRef,
    ConversationResult,
    Counts,
    Crash,
    EnvironmentInfo,
    FaultMet,
    MetricScore,
    QualityScores,
    Reason,
    RunResult,
    ScenarioInfo,
    SimulatorInfo,
    TranscriptLine,
    UserReview,
)
from dialogcheck.results.stats import CheckStats
from dialogcheck.sop.model import Step, StepResult, StepSetResult

#: The fields no results file holds, each with where it lives instead.
NOT_WRITTEN = {
    ConversationResult: {
        "warnings": "said on stderr and in the summary's warnings as they are met",
        "crashes": "a run's crashes are the run's (RunResult.crashes); a recorded conversation's are in its check's detail",
        "trace": "the trace a conversation was imported from: exported as telemetry, not written",
        "transcript": "the conversation's own file holds what was said",
    },
    RunResult: {
        "events": "written to run_N.events.jsonl, read back beside the run (results.load.with_events)",
        "record": "the events read as the typed record, made when they are read back",
        "record_note": "made when the events are read back",
    },
    StepSetResult: {"threshold": "not in a conversation's document (its SOP file holds it)"},
    TranscriptLine: {"turn": "a run's transcript holds who said what; its turns are counted from its events where shown"},
    CheckResult: {"exception": "kept for a traceback while the process runs; a crash is written as the run's `crashes`"},
    JudgedResult: {"exception": "as CheckResult's", "raw": "the judge's raw answer is kept in the answer cache"},
}

ASSERTION = CheckResult(
    CheckRef("tool_executed", "tool_executed lookup_card with arguments"), Outcome.FAIL, "closest: lookup_card(card=2)", (3, 4),
    differences=(Difference("arguments", "card", 2, 1),),
)
JUDGED_STEP = JudgedResult(
    CheckRef("llm_judge", "llm_judge"), Outcome.ERROR, "inconclusive: it cannot tell", (5,),
    inconclusive=True, split=(("fail", 2), ("pass", 1)), uncalibrated=True, cached=True,
)
PLAIN_STEP = CheckResult(CheckRef("tool_called", "tool_called"), Outcome.PASS, "lookup_card was called (event 3)", (3,))
CRITERION = Criterion("The agent confirms first").judged(
    Judgement(Outcome.PASS, "it asked", Usage(10, 5, 0.25), evidence=(2,), split=(("pass", 2), ("fail", 1)), cached=True)
)
SOP = StepSetResult(
    (
        StepResult(Step("ask", "Ask before ordering", False, 2.0, CheckRef("llm_judge", "llm_judge")), JUDGED_STEP),
        StepResult(Step("look", None, True, 1.0, CheckRef("tool_called", "tool_called")), PLAIN_STEP),
    ),
    0.5, None, Outcome.FAIL,
)
REVIEW = UserReview("suspect", (Reason(2, "repeats", "said the same twice"), Reason(None, "brief", "never said the card")))
METRICS = QualityScores((MetricScore("helpfulness", "clear", score=4), MetricScore("task_completion", "done", passed=True)), Usage(7, 3, None))


BLAME = Blame("agent", 2, 7, 12, ("assertion 1", "sop confirm"), "`order_replacement` called with `arguments.shipping` other than expected", "wrong_call")


def conversation(**more) -> ConversationResult:
    return ConversationResult(
        **{
            "source": "conversations/a.jsonl", "subject": "Replace a card", "assertions": (ASSERTION,), "sop": SOP,
            "criteria": (CRITERION,), "conversation_id": "conv-1", "notes": ("1 LLM-judged check not judged",),
            "metrics": METRICS, "usage": Usage(20, 9, 0.5), "scenario": "card_replace", "user_review": REVIEW,
            "blame": BLAME, **more,
        }
    )


RUN = RunResult(
    scenario=ScenarioInfo("card_replace", "Replace a card", "eval/scenarios/card_replace.yml", "happy_path", ("smoke", "cards")),
    number=2,
    verdict=Outcome.ERROR,
    # a run's conversation: named by its run and its scenario, its conversation id and review the run's
    conversation=conversation(source="card_replace/run_2", subject="Replace a card", scenario=None, user_review=None, blame=None),
    error="the agent answered 500",
    crashes=(Crash("RuntimeError", "boom", "Traceback ...", "the agent"),),
    conversation_id="conv-1",
    ended_because="the agent sent no text",
    duration=1.25,
    latencies=(0.5, 0.75),
    transcript=(TranscriptLine("user", "my card broke"), TranscriptLine("agent", "let me look")),
    user_review=REVIEW,
    blame=Blame("environment", 3, None, "00f067aa0ba902b7", (), "the agent failed: 500", "agent_error"),
    suspect_attempts=1,
    persona="terse",
    simulator=SimulatorInfo("gpt-test", 0.7, 42, "ab" * 32, Usage(100, 50, 0.01)),
    environment=EnvironmentInfo(
        "bank", 7, False, 3, (FaultMet("timeout", "order_replacement", 1, 6),), (8,), (9,), {"orders": []}, {"orders": [1]}, "cd" * 32
    ),
)


#: Fields written for some checks but not others: an `llm_judge` step's tokens are only in its conversation's `usage`.
NOT_WRITTEN_AT = {
    "StepResult.result/JudgedResult.usage": "a step's document has no `usage`; the conversation's `usage` counts it",
    "StepResult.result/JudgedResult.differences": "only assertions compare fields (steps and criteria have none)",
    "StepResult.result/CheckResult.differences": "only assertions compare fields",
    "ConversationResult.criteria/JudgedResult.differences": "only assertions compare fields",
}


def _fields(kind: type) -> list[str]:
    return [f.name for f in fields(kind)] if is_dataclass(kind) else list(kind.__struct_fields__)


def _defaults(kind: type) -> dict:
    if is_dataclass(kind):
        return {f.name: f.default for f in fields(kind)}
    names, defaults = kind.__struct_fields__, kind.__struct_defaults__
    return dict(zip(names[len(names) - len(defaults):], defaults))


def _set(value, path="", found=None) -> dict[str, bool]:
    """For each field of each result type met in `value` (a type and a field, `Usage.cost`), whether some instance set it
    (not None, not empty, not its default); the fields not written are left out."""
    found = {} if found is None else found
    kind = type(value)
    if not (is_dataclass(value) or isinstance(value, msgspec.Struct)):
        return found
    defaults = _defaults(kind)
    for name in _fields(kind):
        here = f"{path}{kind.__name__}.{name}"
        if name in NOT_WRITTEN.get(kind, {}) or any(here.endswith(at) for at in NOT_WRITTEN_AT):
            continue
        inner = getattr(value, name)
        is_set = not (inner is None or inner == () or (name in defaults and defaults[name] == inner and not isinstance(inner, bool)))
        found[f"{kind.__name__}.{name}"] = found.get(f"{kind.__name__}.{name}", False) or is_set
        for item in inner if isinstance(inner, tuple) else (inner,):
            _set(item, f"{here}/", found)
    return found


#: A conversation whose quality metrics could not be scored (the other form of `QualityScores`).
UNSCORED = conversation(metrics=QualityScores(error="the judge broke"))


def test_the_examples_set_every_field_the_codec_writes():
    found: dict[str, bool] = {}
    for value in (RUN, conversation(), UNSCORED):
        _set(value, found=found)
    assert [name for name, is_set in found.items() if not is_set] == []


def test_a_run_reads_back_as_it_was_written():
    read = decode_run(orjson.loads(encode_run(RUN)), "run_2.json")
    assert read == RUN  # events, record and record_note are not compared (`compare=False`): they live beside it


@pytest.mark.parametrize("result", [conversation(), UNSCORED], ids=["scored", "unscored"])
def test_a_conversation_reads_back_as_it_was_written(result):
    read = decode_conversation(orjson.loads(conversation_line(result)), "part-00000.jsonl", 1)
    assert read == result


def test_what_is_not_written_names_fields_the_types_have():
    for kind, names in NOT_WRITTEN.items():
        assert set(names) <= set(_fields(kind)), kind


def test_the_statistics_of_a_check_summary_read_back_as_they_were_counted():
    stats = CheckStats()
    for number, result in enumerate((conversation(), UNSCORED, conversation(sop=replace(SOP, score=0.25, threshold=0.5)))):
        stats.add(result, f"conversations/{number}.jsonl")
    document = orjson.loads(orjson.dumps(check_summary_document(Counts([Outcome.FAIL] * 3), stats)))
    read = check_stats_of(document)
    assert read is not None
    assert [vars(row) for row in read] == [vars(row) for row in stats]
    assert vars(read.sop_scores) == vars(stats.sop_scores)
    assert read.scenarios() == stats.scenarios()


@pytest.mark.parametrize("usage", [{"input_tokens": "many", "output_tokens": [3], "cost": "free"}, {"input_tokens": {}}, "12 tokens"])
def test_usage_of_another_type_in_a_hand_edited_file_reads_as_none_counted_not_a_crash(usage):
    document = {**orjson.loads(conversation_line(conversation())), "usage": usage}
    read = decode_conversation(document, "results/conversations.jsonl", 1)
    assert read.usage in (Usage(), None)


def test_usage_of_the_written_types_reads_back_its_counts():
    written = {"input_tokens": 12, "output_tokens": 3, "cost": 0.5}
    document = {**orjson.loads(conversation_line(conversation())), "usage": written}
    assert decode_conversation(document, "results/conversations.jsonl", 1).usage == Usage(12, 3, 0.5)
