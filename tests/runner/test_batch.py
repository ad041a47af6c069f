"""The simulation loop and the batch runner, with an in-process agent: stop rules, errored runs, time limits."""

import asyncio

from dialogcheck.checks.base import Outcome
from dialogcheck.config import LLMSettings
from dialogcheck.connectors.base import AgentError, AgentMessage, AgentTurn
from dialogcheck.llm.base import ChatResponse, LLMError, Usage
from dialogcheck.runner.batch import BatchSettings, RunSpec, run_batch
from dialogcheck.scenario.load import load_scenario
from dialogcheck.simulate.loop import ENDED_DONE, ENDED_EMPTY, ENDED_MAX_TURNS, ENDED_SILENT
from dialogcheck.simulate.user import LLMUser, ScriptedUser

SCENARIO = """
scenario:
  name: Greets and orders
  simulation_context: You want a new card.
  max_turns: {max_turns}
  {script}
  goals:
    assertions:
      - tool_executed: {{tool_name: order, source: local}}
      - bot_uttered: {{text_matches: ordered}}
"""


def scenario(tmp_path, script="script: [hello, order please, thanks]", max_turns=5):
    path = tmp_path / "orders.yml"
    path.write_text(SCENARIO.format(script=script, max_turns=max_turns))
    return load_scenario(path)


class Agent:
    """Answers each message; orders on 'order'; can be told to fail, hang or go silent."""

    def __init__(self, fail_on=None, hang_on=None, silent_on=None, tracker=None):
        self.fail_on, self.hang_on, self.silent_on, self.tracker = fail_on, hang_on, silent_on, tracker
        self.sent, self.opened = [], []

    async def open(self, cid, initial_slots):
        self.opened.append((cid, dict(initial_slots)))
        return AgentTurn((AgentMessage("Hi!", "utter_greet"),))

    async def send(self, cid, text):
        self.sent.append(text)
        if text == self.fail_on:
            raise AgentError("HTTP 500 from the agent")
        if text == self.hang_on:
            await asyncio.sleep(3600)  # only the time limit can end it
        if text == self.silent_on:
            return AgentTurn()
        if "order" in text:
            return AgentTurn(
                (AgentMessage("Your card is ordered."),),
                ({"event": "tool_executed", "tool_name": "order", "arguments": {}, "source": "local"},),
            )
        return AgentTurn((AgentMessage(f"You said {text}"),))

    async def recorded_events(self, cid):
        return self.tracker

    async def aclose(self):
        pass


def run(specs, agent, settings=BatchSettings(), make_user=lambda s: ScriptedUser(s.script)):
    finished = []
    records = asyncio.run(run_batch(specs, agent, make_user, None, settings, finished.append))
    return records, finished


def test_a_scripted_run_passes_and_records_every_turn(tmp_path):
    (record,), finished = run([RunSpec(scenario(tmp_path), 1)], Agent())
    assert finished == [record]
    assert record.verdict is Outcome.PASS and record.error is None
    assert record.ended_because == ENDED_DONE
    assert record.conversation_id.startswith("sim-")
    assert [e["event"] for e in record.events] == ["bot", "user", "bot", "user", "tool_executed", "bot", "user", "bot"]
    assert record.events[0]["metadata"] == {"utter_action": "utter_greet"}
    assert [(line.role, line.text) for line in record.transcript[:3]] == [("agent", "Hi!"), ("user", "hello"), ("agent", "You said hello")]
    assert len(record.latencies) == 3 and all(x >= 0 for x in record.latencies)


def test_the_agents_own_record_wins(tmp_path):
    tracker = [{"event": "user", "text": "order"}, {"event": "bot", "text": "nope"}]
    (record,), _ = run([RunSpec(scenario(tmp_path), 1)], Agent(tracker=tracker))
    assert list(record.events) == tracker
    assert record.verdict is Outcome.FAIL


def test_the_agent_going_silent_ends_the_conversation(tmp_path):
    agent = Agent(silent_on="order please")
    (record,), _ = run([RunSpec(scenario(tmp_path), 1)], agent)
    assert record.ended_because == ENDED_SILENT
    assert agent.sent == ["hello", "order please"]
    assert record.verdict is Outcome.FAIL


def test_max_turns_ends_the_conversation(tmp_path):
    agent = Agent()
    (record,), _ = run([RunSpec(scenario(tmp_path, max_turns=2), 1)], agent)
    assert record.ended_because == ENDED_MAX_TURNS and agent.sent == ["hello", "order please"]


def test_an_agent_error_makes_an_errored_run_with_its_partial_record(tmp_path):
    (record,), _ = run([RunSpec(scenario(tmp_path), 1)], Agent(fail_on="order please"))
    assert record.verdict is Outcome.ERROR
    assert record.error == "agent: HTTP 500 from the agent"
    assert record.conversation is None
    assert (record.transcript[-1].role, record.transcript[-1].text) == ("user", "hello") or record.transcript[-1].role == "agent"


def test_the_time_limit_errors_a_hanging_run_and_the_others_finish(tmp_path):
    hanging = Agent(hang_on="order please")
    specs = [RunSpec(scenario(tmp_path), n) for n in (1, 2)]
    records, _ = run(specs, hanging, BatchSettings(parallel=2, time_limit=0.3))
    assert [r.verdict for r in records] == [Outcome.ERROR, Outcome.ERROR]
    assert records[0].error == "time limit of 0.3 s reached"
    ok, _ = run([RunSpec(scenario(tmp_path), 1)], Agent(), BatchSettings(time_limit=300))
    assert ok[0].verdict is Outcome.PASS


def test_parallel_bounds_runs_in_flight(tmp_path):
    in_flight = {"now": 0, "max": 0}
    full = asyncio.Event()

    class Slow(Agent):
        async def send(self, cid, text):
            in_flight["now"] += 1
            in_flight["max"] = max(in_flight["max"], in_flight["now"])
            if in_flight["now"] == 3:
                full.set()
            await asyncio.wait_for(full.wait(), 300)  # the first runs wait until three are in flight, however slowly
            in_flight["now"] -= 1
            return await super().send(cid, text)

    specs = [RunSpec(scenario(tmp_path), n) for n in range(1, 9)]
    records, finished = run(specs, Slow(), BatchSettings(parallel=3))
    assert in_flight["max"] == 3
    assert [r.number for r in records] == list(range(1, 9)) and len(finished) == 8


class ScriptedLLM:
    def __init__(self, *answers):
        self.answers, self.requests = list(answers), []

    async def complete(self, request):
        self.requests.append(request)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return ChatResponse(answer, request.model, Usage(50, 5))


SIM = LLMSettings(provider="openai", model="sim")


def test_the_llm_user_plays_the_brief_and_says_done(tmp_path):
    llm = ScriptedLLM('{"message": "I need a new card, please order", "done": false}', '{"message": "thanks, bye", "done": true}')
    s = scenario(tmp_path, script="")
    (record,), _ = run([RunSpec(s, 1)], Agent(), make_user=lambda sc: LLMUser(llm, SIM, sc.simulation_context))
    assert record.verdict is Outcome.PASS and record.ended_because == ENDED_DONE
    first, second = ([(m.role, m.content) for m in r.messages] for r in llm.requests)
    # The model plays the user: the brief is its system prompt, the agent's messages come as `user` messages.
    assert first[0][0] == "system" and "You want a new card." in first[0][1]
    assert first[1:] == [("user", "Hi!")]
    assert second[1:] == [
        ("user", "Hi!"),
        ("assistant", '{"message":"I need a new card, please order","done":false}'),
        ("user", "Your card is ordered."),
    ]
    assert second[0] == first[0]


def test_an_empty_user_message_ends_without_sending(tmp_path):
    agent = Agent()
    llm = ScriptedLLM('{"message": "  ", "done": false}')
    (record,), _ = run([RunSpec(scenario(tmp_path, script=""), 1)], agent, make_user=lambda sc: LLMUser(llm, SIM, "x"))
    assert record.ended_because == ENDED_EMPTY and agent.sent == []


def test_a_broken_simulator_errors_the_run(tmp_path):
    llm = ScriptedLLM(LLMError("openai model 'sim' failed after 4 attempts: HTTP 500"))
    (record,), _ = run([RunSpec(scenario(tmp_path, script=""), 1)], Agent(), make_user=lambda sc: LLMUser(llm, SIM, "x"))
    assert record.verdict is Outcome.ERROR
    assert record.error == "simulated user: openai model 'sim' failed after 4 attempts: HTTP 500"


def test_invalid_agent_events_error_the_run(tmp_path):
    class Bad(Agent):
        async def send(self, cid, text):
            return AgentTurn((AgentMessage("ok"),), ({"event": "tool_executed", "tool_name": "x", "source": "cloud"},))

    (record,), _ = run([RunSpec(scenario(tmp_path), 1)], Bad())
    assert record.verdict is Outcome.ERROR
    assert record.error.startswith("the agent recorded an invalid event: field `source` must be 'local' or 'mcp'")
