"""The Python-callable connector: sync and async agents, initial slots, errors, and import problems."""

from __future__ import annotations

import asyncio
import sys
import textwrap
import uuid

import pytest

from dialogcheck.connectors import AgentError, AgentMessage, AgentSetupError, AgentTurn, PythonConnector
from tests.connectors.conftest import talk


@pytest.fixture
def project(tmp_path):
    """Writes agent modules (unique names, so sys.modules never hands back another test's) into a project folder."""
    names = []

    def write(source: str, func: str = "respond", name: str | None = None) -> str:
        name = name or f"agent_{uuid.uuid4().hex[:10]}"
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        names.append(name)
        return f"{name}:{func}"

    write.root = tmp_path
    yield write
    for name in names:
        sys.modules.pop(name, None)


SYNC = """
    def respond(conversation_id, text):
        if text is None:
            return {"messages": [{"text": "Hello", "utter_name": "utter_greet"}], "events": []}
        return {"messages": [{"text": f"{conversation_id} said {text}"}],
                "events": [{"event": "memory_set", "key": "last", "value": text}]}
"""


def test_a_sync_function(project):
    target = project(SYNC)

    async def steps(c):
        return await c.open("c1", {}), await c.send("c1", "hi"), await c.recorded_events("c1")

    opened, turn, record = talk(PythonConnector(target, project.root), steps)
    assert opened == AgentTurn((AgentMessage("Hello", "utter_greet"),))
    assert turn == AgentTurn((AgentMessage("c1 said hi"),), ({"event": "memory_set", "key": "last", "value": "hi"},))
    assert record is None


def test_an_async_function_and_a_dotted_name(project):
    target = project(
        """
        import asyncio

        class Bot:
            async def handle(self, conversation_id, text):
                await asyncio.sleep(0)
                return {"messages": [{"text": "async " + (text or "open")}]}

        bot = Bot()
        """,
        func="bot.handle",
    )
    turn = talk(PythonConnector(target, project.root), lambda c: c.send("c1", "hi"))
    assert turn.messages == (AgentMessage("async hi"),)


def test_initial_slots_go_to_a_function_that_takes_them(project):
    target = project(
        """
        def respond(conversation_id, text, initial_slots=None):
            return {"messages": [{"text": repr(initial_slots)}]}
        """
    )

    async def steps(c):
        return await c.open("c1", {"lang": "en"}), await c.send("c1", "hi")

    opened, turn = talk(PythonConnector(target, project.root), steps)
    assert opened.messages == (AgentMessage("{'lang': 'en'}"),)
    assert turn.messages == (AgentMessage("None"),)  # only the opening gets them


def test_initial_slots_go_to_a_function_with_keyword_arguments(project):
    target = project("def respond(cid, text, **extra):\n    return {'messages': [{'text': repr(extra)}]}\n")
    turn = talk(PythonConnector(target, project.root), lambda c: c.open("c1", {}))
    assert turn.messages == (AgentMessage("{'initial_slots': {}}"),)


def test_initial_slots_a_function_cannot_take_are_an_error_not_dropped(project):
    target = project(SYNC)
    assert talk(PythonConnector(target, project.root), lambda c: c.open("c1", {})).has_text
    with pytest.raises(AgentError) as info:
        talk(PythonConnector(target, project.root), lambda c: c.open("c1", {"lang": "en", "tier": 2}))
    assert str(info.value) == f"the scenario sets initial_slots (lang, tier), but `{target}` takes no `initial_slots` keyword to receive them"


def test_an_agent_that_raises(project):
    target = project("def respond(cid, text):\n    raise LookupError('no such card')\n")
    with pytest.raises(AgentError) as info:
        talk(PythonConnector(target, project.root), lambda c: c.send("c1", "hi"))
    assert str(info.value) == f"agent `{target}` raised LookupError: no such card"
    assert isinstance(info.value.__cause__, LookupError)


def test_an_agent_that_is_too_slow(project):
    target = project("import asyncio\nasync def respond(cid, text):\n    await asyncio.sleep(600)\n")  # only the timeout can end it
    with pytest.raises(AgentError) as info:
        talk(PythonConnector(target, project.root, timeout=0.3), lambda c: c.send("c1", "hi"))
    assert str(info.value) == f"agent `{target}` did not answer within 0.3 s (timed out)"


def test_a_slow_sync_agent_does_not_hold_up_other_conversations(project):
    # Each call waits until all 20 are under way: called one after another, the first would wait in vain and raise.
    target = project(
        "import threading\nALL_IN = threading.Barrier(20, timeout=60)\n"
        "def respond(cid, text):\n    ALL_IN.wait()\n    return {'messages': [{'text': cid}]}\n"
    )

    async def steps(c):
        return await asyncio.gather(*(c.send(f"c{i}", "hi") for i in range(20)))

    turns = talk(PythonConnector(target, project.root), steps)
    assert [t.messages[0].text for t in turns] == [f"c{i}" for i in range(20)]


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("'hello'", 'expected an object {"messages": [...], "events": [...]}, got a string'),
        ("None", 'expected an object {"messages": [...], "events": [...]}, got null'),
        ("{'messages': [{'text': 1}]}", "`messages[0].text` must be a string or null, got a number"),
        ("{'messages': [], 'events': [{'event': 'memory_set', 'key': 'k'}]}", "`events[0]`: field `value` is missing"),
    ],
)
def test_a_wrong_answer_shape(project, answer, problem):
    target = project(f"def respond(cid, text):\n    return {answer}\n")
    with pytest.raises(AgentError) as info:
        talk(PythonConnector(target, project.root), lambda c: c.send("c1", "hi"))
    assert str(info.value) == f"the answer of `{target}`: {problem}"


def test_the_module_imports_its_neighbours_and_leaves_sys_path_as_it_was(project):
    helper = project("GREETING = 'from the helper'\n")
    target = project(f"from {helper.split(':')[0]} import GREETING\ndef respond(cid, text):\n    return {{'messages': [{{'text': GREETING}}]}}\n")
    before = list(sys.path)
    connector = PythonConnector(target, project.root)
    assert sys.path == before
    assert talk(connector, lambda c: c.send("c1", "hi")).messages == (AgentMessage("from the helper"),)


def setup_error(target: str, root) -> str:
    with pytest.raises(AgentSetupError) as info:
        PythonConnector(target, root)
    return str(info.value)


def test_a_missing_module(project):
    assert setup_error("no_such_agent_module:respond", project.root) == (
        f"cannot import agent module `no_such_agent_module`: no such module in {project.root.resolve()} or on the Python path"
    )


def test_a_module_that_fails_to_import(project):
    broken = project("import not_an_installed_dependency\n")
    assert setup_error(broken, project.root) == (
        f"importing agent module `{broken.split(':')[0]}` failed: ModuleNotFoundError: No module named 'not_an_installed_dependency'"
    )
    crashing = project("raise RuntimeError('config missing')\n")
    assert setup_error(crashing, project.root) == f"importing agent module `{crashing.split(':')[0]}` failed: RuntimeError: config missing"


def test_a_missing_or_unusable_function(project):
    target = project(SYNC, func="reply")
    module = target.split(":")[0]
    assert setup_error(target, project.root) == f"agent module `{module}` ({project.root / module}.py) has no `reply`"
    not_callable = project("respond = 42\n")
    assert setup_error(not_callable, project.root) == f"agent `{not_callable}` is not callable (it is int)"
    one_argument = project("def respond(text):\n    return {}\n")
    assert setup_error(one_argument, project.root) == f"agent `{one_argument}` must take (conversation_id, text) as its first two arguments"


@pytest.mark.parametrize("target", ["my_agent", "my_agent:", ":respond", "my-agent:respond", "a:b:c"])
def test_a_malformed_target(target, tmp_path):
    assert setup_error(target, tmp_path) == f"a python agent is named MODULE:FUNCTION (like `my_agent:respond`), got {target!r}"


def test_two_projects_with_the_same_module_name_each_get_their_own(tmp_path):
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "same_name_agent.py").write_text(
            f"def respond(conversation_id, text):\n    return {{'messages': [{{'text': '{name}'}}], 'events': []}}\n"
        )
    try:
        first = PythonConnector("same_name_agent:respond", tmp_path / "one")
        second = PythonConnector("same_name_agent:respond", tmp_path / "two")
        assert asyncio.run(first.send("c", "hi")).messages[0].text == "one"
        assert asyncio.run(second.send("c", "hi")).messages[0].text == "two"
    finally:
        sys.modules.pop("same_name_agent", None)


# What an agent raises errors its run and no more: BaseException subclasses too, from sync agents
# (in worker threads) and async ones (in the event loop), and from the module's import.
RAISED = {
    "sys.exit(0)": "SystemExit: 0",
    "sys.exit(3)": "SystemExit: 3",
    "sys.exit()": "SystemExit",
    "raise KeyboardInterrupt": "KeyboardInterrupt",
    "raise GeneratorExit": "GeneratorExit",
    "raise asyncio.CancelledError('by the agent')": "CancelledError: by the agent",
    "raise ValueError('bad \\ud800 text')": "ValueError: bad \\ud800 text",
}


@pytest.mark.parametrize("kind", ["def", "async def"])
@pytest.mark.parametrize("statement", sorted(RAISED))
def test_anything_an_agent_raises_is_an_agent_error(project, kind, statement):
    target = project(f"import asyncio, sys\n{kind} respond(cid, text):\n    {statement}\n")
    with pytest.raises(AgentError) as info:
        talk(PythonConnector(target, project.root), lambda c: c.send("c1", "hi"))
    assert str(info.value) == f"agent `{target}` raised {RAISED[statement]}"
    str(info.value).encode("utf-8")  # a lone surrogate in the message is written as its escape


def test_an_agent_raising_does_not_stop_the_other_conversations(project):
    target = project("import sys\ndef respond(cid, text):\n    if cid == 'c0':\n        sys.exit(0)\n    return {'messages': [{'text': cid}]}\n")

    async def steps(c):
        return await asyncio.gather(*(c.send(f"c{i}", "hi") for i in range(4)), return_exceptions=True)

    first, *others = talk(PythonConnector(target, project.root), steps)
    assert isinstance(first, AgentError)
    assert [turn.messages[0].text for turn in others] == ["c1", "c2", "c3"]


def test_a_time_limit_still_cancels_an_agent_and_is_not_taken_for_its_own_error(project):
    target = project("import asyncio\nasync def respond(cid, text):\n    await asyncio.sleep(600)\n")

    async def steps(c):
        async with asyncio.timeout(0.2):
            await c.send("c1", "hi")

    with pytest.raises(TimeoutError):
        talk(PythonConnector(target, project.root), steps)


def test_a_module_that_exits_on_import_is_a_setup_error(project):
    target = project("import sys\nsys.exit(4)\ndef respond(cid, text):\n    return {}\n")
    assert setup_error(target, project.root) == f"importing agent module `{target.split(':')[0]}` failed: SystemExit: 4"
