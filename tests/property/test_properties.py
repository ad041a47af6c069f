"""Property-based tests: random events and random valid assertions never raise, and the invariants hold.

- JSON equality is symmetric and agrees with a plain reference written here;
- `bot_did_not_utter` is always the negation of `bot_uttered`;
- `sequencing` of one step equals that step alone;
- loading never raises anything but `LoadError`, and turns never decrease.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings, strategies as st

from dialogcheck.checks import ASSERTIONS
from dialogcheck.checks.lifecycle import LIFECYCLE_CHECKS
from dialogcheck.checks.memory import MemoryEntry
from dialogcheck.checks.messages import BotDidNotUtter, BotUttered, ButtonSpec, MessageMatch
from dialogcheck.checks.sequencing import Sequencing
from dialogcheck.checks.tools import ToolExecuted, ToolsWithinOneTurn
from dialogcheck.errors import LoadError
from dialogcheck.events.load import iter_conversation_file
from dialogcheck.events.parse import EventFieldError, conversation_from_dicts
from dialogcheck.events.values import json_equal
from tests.conftest import suppressed

NAMES = st.sampled_from(["a", "b", "card_replace", "lookup", "order", "main", "confirm"])
TEXT = st.text(alphabet="abc xyz?!/", max_size=12)
SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-3, 3, allow_nan=False) | TEXT
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(NAMES, inner, max_size=3), max_leaves=8)


def reference_equal(a, b) -> bool:
    """SPEC section 1 equality, written the plain way: compare (type tag, value) trees."""

    def tag(v):
        if isinstance(v, bool):
            return ("bool", v)
        if isinstance(v, (int, float)):
            return ("number", float(v))
        if v is None:
            return ("null",)
        if isinstance(v, str):
            return ("string", v)
        if isinstance(v, (list, tuple)):
            return ("list", tuple(tag(x) for x in v))
        return ("object", tuple(sorted((k, tag(x)) for k, x in v.items())))

    return tag(a) == tag(b)


@given(JSON, JSON)
def test_equality_is_symmetric_and_matches_the_reference(a, b):
    assert json_equal(a, b) == json_equal(b, a) == reference_equal(a, b)


@given(JSON)
def test_equality_is_reflexive_and_survives_a_json_round_trip(a):
    assert json_equal(a, a)
    assert json_equal(a, json.loads(json.dumps(a)))


BUTTONS = st.lists(st.fixed_dictionaries({"title": NAMES}, optional={"payload": NAMES}), max_size=3)
EVENT = st.one_of(
    st.fixed_dictionaries({"event": st.just("user"), "text": TEXT}),
    st.fixed_dictionaries({"event": st.just("bot"), "text": TEXT | st.none()}, optional={"utter_name": NAMES, "buttons": BUTTONS}),
    st.builds(lambda t, s, step: {"event": t, "skill_id": s, "step_id": step}, st.sampled_from([c.key for c in LIFECYCLE_CHECKS if c.key.startswith("skill")]), NAMES, NAMES | st.none()),
    st.builds(
        lambda t, s, b, step: {"event": t, "skill_id": s, "block_id": b, "step_id": step},
        st.sampled_from([c.key for c in LIFECYCLE_CHECKS if c.key.startswith("ordered")]), NAMES, NAMES, NAMES | st.none(),
    ),
    st.builds(lambda k, v: {"event": "memory_set", "key": k, "value": v}, NAMES, JSON),
    st.builds(lambda k: {"event": "memory_cleared", "key": k}, NAMES),
    st.builds(
        lambda n, args, src, err: {"event": "tool_executed", "tool_name": n, "arguments": args, "source": src, "is_error": err, **({"mcp_server": "bank"} if src == "mcp" else {})},
        NAMES | st.sampled_from(["complete_skill", "search_knowledge"]), st.dictionaries(NAMES, JSON, max_size=2), st.sampled_from(["local", "mcp"]), st.booleans(),
    ),
    st.fixed_dictionaries({"event": st.sampled_from(["slot", "action", "session_started"])}),
)
CONVERSATIONS = st.lists(EVENT, max_size=25).map(lambda events: conversation_from_dicts(events))

MATCH = st.builds(
    MessageMatch,
    utter_name=NAMES | st.none(),
    text_matches=st.sampled_from(["a", "^x", "(?i)ABC", "z?$", "[ab]+ c"]) | st.none(),
    buttons=st.lists(st.builds(ButtonSpec, NAMES, NAMES | st.none()), min_size=1, max_size=2).map(tuple) | st.none(),
).filter(lambda m: m.utter_name is not None or m.text_matches is not None or m.buttons is not None)
TOOL = st.builds(
    lambda n, src, args, err, skill: ToolExecuted(n, src, "bank" if src == "mcp" else None, skill, args, err),
    NAMES, st.sampled_from(["local", "mcp"]), st.dictionaries(NAMES, JSON, max_size=2) | st.none(), st.booleans() | st.none(), NAMES | st.none(),
)
LIFECYCLE = st.one_of(
    *[
        st.builds(
            lambda cls=cls, s=None, b=None, step=None: cls(s, b, step) if "block" in cls.key else cls(s, step),
            st.just(cls), NAMES, NAMES, (NAMES | st.none()) if cls.takes_step_id else st.none(),
        )
        for cls in LIFECYCLE_CHECKS
    ]
)
STEP = st.one_of(LIFECYCLE, TOOL, MATCH.map(BotUttered))
ENTRIES = st.lists(st.builds(MemoryEntry, NAMES, JSON.filter(lambda v: v is not None)) | st.builds(MemoryEntry, NAMES), min_size=1, max_size=3).map(tuple)
CHECK = st.one_of(
    STEP,
    MATCH.map(BotDidNotUtter),
    ENTRIES.map(ASSERTIONS["memory_was_set"]),
    ENTRIES.map(ASSERTIONS["memory_was_not_set"]),
    st.lists(st.builds(MemoryEntry, NAMES), min_size=1, max_size=2).map(tuple).map(ASSERTIONS["memory_was_cleared"]),
    st.builds(ToolsWithinOneTurn, st.booleans(), st.booleans(), calls=st.lists(TOOL, min_size=2, max_size=3).map(tuple)),
    st.lists(STEP, min_size=1, max_size=3).map(tuple).map(Sequencing),
    st.builds(lambda t, n: ToolExecuted(t.tool_name, t.source, t.mcp_server, t.skill_id, t.arguments, t.is_error, n), TOOL, st.integers(0, 3)),
)


@settings(max_examples=150)
@given(CONVERSATIONS, CHECK)
def test_every_check_evaluates_without_raising_and_explains_itself(conversation, check):
    result = check.evaluate(conversation)
    assert result.outcome.value in ("pass", "fail")
    assert isinstance(result.detail, str) and result.detail
    assert all(0 <= i < len(conversation) for i in result.evidence)


@settings(max_examples=150)
@given(CONVERSATIONS, MATCH)
def test_bot_did_not_utter_is_the_negation_of_bot_uttered(conversation, match):
    assert BotDidNotUtter(match).evaluate(conversation).passed is not BotUttered(match).evaluate(conversation).passed


@settings(max_examples=150)
@given(CONVERSATIONS, STEP)
def test_sequencing_of_one_step_equals_the_step_alone(conversation, step):
    alone = step.evaluate(conversation)
    sequenced = Sequencing((step,)).evaluate(conversation)
    assert sequenced.passed is alone.passed
    if alone.passed:
        assert sequenced.evidence == alone.evidence


@settings(max_examples=200)
@given(st.lists(EVENT, max_size=25))
def test_turns_never_decrease_and_indexes_are_positions(events):
    conversation = conversation_from_dicts(events)
    assert [e.index for e in conversation.events] == list(range(len(events)))
    turns = [e.turn for e in conversation.events]
    assert turns == sorted(turns)
    assert conversation.counted_tool_runs == [r for r in conversation.tool_runs if r.tool_name != "complete_skill"]


ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["event", "text", "tool_name", "source", "events", "key", "value", "skill_id", "arguments"]) | st.text(max_size=3), inner, max_size=4,
    ),
    max_leaves=10,
)


@settings(max_examples=200)
@given(st.lists(ANY_JSON, max_size=6))
def test_random_event_objects_are_accepted_or_refused_cleanly(objects):
    try:
        conversation_from_dicts(objects)
    except EventFieldError as err:
        assert str(err)


@settings(max_examples=150, suppress_health_check=suppressed(HealthCheck.function_scoped_fixture))
@given(st.binary(max_size=200) | st.lists(ANY_JSON, max_size=4).map(lambda xs: "\n".join(json.dumps(x) for x in xs).encode()))
def test_random_files_load_or_give_a_positioned_load_error(tmp_path, data):
    path = tmp_path / "random.jsonl"
    path.write_bytes(data)
    try:
        list(iter_conversation_file(path))
    except LoadError as err:
        for problem in err.problems:
            assert problem.file == str(path) and problem.line >= 1 and problem.column >= 1 and problem.message


@settings(max_examples=150)
@given(CONVERSATIONS, STEP)
def test_the_fast_match_agrees_with_the_explained_one(conversation, step):
    for event in step.candidates(conversation):
        assert step.matches(event) is (not step.mismatches(event))


def ranked_closest(step, events):
    """The closest miss by the explanations themselves: every candidate of the tier ranked by how many differences
    its explanation lists, the earliest of the fewest."""
    same = [event for event in events if step.same_subject(event)]
    best = None
    for event in same or events:
        count = len(step.mismatches(event))
        if best is None or count < best[0]:
            best = (count, event)
    return None if best is None else (best[1], step.mismatches(best[1]))


def near(value):
    """The value a check asks for, or another: candidates that differ from it in few ways, often in one."""
    return st.sampled_from([value, "other"]) if value is not None else st.sampled_from(["x", "other"])


def candidates_near(step):
    """Events of the type `step` reads whose fields are each what the step asks or not: every count of differences."""
    if isinstance(step, BotUttered):
        match = step.match
        texts = st.sampled_from(["abc xyz", "x", "zz", "a c", ""])
        buttons = st.lists(st.sampled_from([b.title for b in match.buttons or ()] + ["other"]), max_size=3)
        return st.builds(lambda u, t, b: {"event": "bot", "text": t, "utter_name": u, "buttons": [{"title": x} for x in b]},
                         near(match.utter_name) | st.none(), texts, buttons)
    if isinstance(step, ToolExecuted):
        return st.builds(
            lambda n, src, skill, arg, err: {"event": "tool_executed", "tool_name": n, "source": src, "skill_id": skill,
                                             "arguments": arg, "is_error": err, **({"mcp_server": "bank"} if src == "mcp" else {})},
            near(step.tool_name), st.sampled_from(["local", "mcp"]), near(step.skill_id) | st.none(),
            st.sampled_from([dict(step.arguments or {}), {}, {"a": "other"}]), st.booleans())
    fields = {"skill_id": near(step.skill_id), "step_id": near(step.step_id) | st.none()}
    if hasattr(step, "block_id"):
        fields["block_id"] = near(step.block_id)
    return st.fixed_dictionaries({"event": st.just(step.key), **fields})


@settings(max_examples=400)
@given(STEP, st.data())
def test_the_closest_miss_ranked_without_text_is_the_one_the_explanations_rank(step, data):
    """`closest_miss` ranks by `miss_count`, which builds no text: the same candidate as ranking the explanations."""
    conversation = conversation_from_dicts(data.draw(st.lists(candidates_near(step), max_size=8)))
    misses = [event for event in step.candidates(conversation) if not step.matches(event)]
    assert all(step.miss_count(event) == len(step.mismatches(event)) >= 1 for event in misses)
    assert step.closest_miss(misses) == ranked_closest(step, misses)
    if misses:
        assert step.explain_miss(misses)[1] == (ranked_closest(step, misses)[0].index,)


def one_edit(word):
    """`word` with one character added, dropped or changed: a key close enough to be offered as a hint, often."""
    position = st.integers(0, len(word))
    char = st.sampled_from("ab._x")
    return st.one_of(
        st.builds(lambda i, c: word[:i] + c + word[i:], position, char),
        st.builds(lambda i: word[:i] + word[i + 1 :], position),
        st.builds(lambda i, c: word[:i] + c + word[i + 1 :], position, char),
    )


@settings(max_examples=500)
@given(st.text(alphabet="ab._x", min_size=1, max_size=9), st.data())
def test_the_memory_key_hint_is_the_one_difflib_picks(name, data):
    """Scored key by key (and each score remembered), the hint is `get_close_matches`'s on the whole set: the most
    similar key at or above the cutoff, the greatest on a tie."""
    import difflib

    from dialogcheck.checks.memory import HINT_CUTOFF, similar_key

    keys = data.draw(st.lists(one_edit(name) | st.text(alphabet="ab._x", max_size=12), max_size=6))
    expected = difflib.get_close_matches(name, sorted(set(keys)), n=1, cutoff=HINT_CUTOFF)
    assert similar_key(name, keys) == (expected[0] if expected else None)
    assert similar_key(name, reversed(keys)) == similar_key(name, keys)  # remembered scores, the same answer
