"""The library API: `check_conversations` and `run_scenarios` give what the CLI gives, as typed results."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import dialogcheck
from dialogcheck import BatchResult, ConversationResult, LoadError, Outcome, check_conversations, run_scenarios
from dialogcheck._cli.main import cli
from dialogcheck.connectors.base import AgentError, AgentMessage, AgentTurn
from dialogcheck.results.model import CheckKind
from tests.conftest import EXAMPLE, bot, user
from tests.engines.batches import SCENARIO as BATCH_SCENARIO, write_batch

SCENARIO = EXAMPLE / "eval" / "scenarios" / "card_replace_damaged.yml"
SOP = EXAMPLE / "sops" / "replace_card.yml"
CONVERSATIONS = EXAMPLE / "conversations"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return Path(shutil.copytree(EXAMPLE, tmp_path / "card_replace", ignore=shutil.ignore_patterns("results", "__pycache__")))


def test_run_scenarios_on_the_example_gives_11_passed_1_failed(project, tmp_path):
    batch = run_scenarios(str(project), no_judge=True, results=tmp_path / "results")
    assert isinstance(batch, BatchResult)
    assert (batch.passed, batch.failed, batch.errored) == (11, 1, 0)
    (failed,) = batch.failed_runs()
    assert failed.slug == "run_stolen_card" and failed.verdict is Outcome.FAIL
    assert {line.title for line in failed.checks() if line.outcome is Outcome.FAIL} == {
        "sequencing bot_uttered utter_confirm_replacement → tool_executed order_replacement (local)",
        "SOP confirm_before_ordering Ask the customer to confirm before ordering",
    }
    assert batch.interrupted is False and (tmp_path / "results" / "summary.json").is_file()
    assert json.loads((tmp_path / "results" / "summary.json").read_text())["failed"] == 1


def test_run_scenarios_takes_an_agent_object_of_its_own(project, tmp_path):
    class Silent:
        """An agent that greets and then says nothing: every scenario that needs an answer fails."""

        async def check_reachable(self):
            return None

        async def open(self, conversation_id, initial_slots):
            return AgentTurn((AgentMessage("Hello"),))

        async def send(self, conversation_id, text):
            return AgentTurn()

        async def recorded_events(self, conversation_id):
            return None

        async def aclose(self):
            return None

    scenario = project / "eval" / "scenarios" / "run_out_of_scope.yml"
    batch = run_scenarios([scenario], agent=Silent(), no_judge=True, results=tmp_path / "r", runs=2)
    assert [(run.slug, run.number, run.ended_because) for run in batch.runs] == [
        ("run_out_of_scope", 1, "the agent sent no text"), ("run_out_of_scope", 2, "the agent sent no text"),
    ]
    assert batch.failed == 2


def test_run_scenarios_says_an_agent_is_down_and_bad_input_is_a_load_error(project, tmp_path):
    from tests.conftest import closed_port

    with pytest.raises(AgentError):
        run_scenarios(project, agent=f"http://127.0.0.1:{closed_port()}/chat", no_judge=True, results=tmp_path / "r")
    assert not (tmp_path / "r").exists()
    with pytest.raises(LoadError) as info:
        run_scenarios(tmp_path / "missing", no_judge=True)
    assert info.value.problems[0].message == "no such file or folder"


def _cli_verdicts(subject_option: str, subject: Path) -> list[tuple[str, str]]:
    result = CliRunner().invoke(cli, ["check", "--no-judge", "--format", "json", subject_option, str(subject), str(CONVERSATIONS)])
    return [(c["source"], c["verdict"]) for c in json.loads(result.stdout)["conversations"]]


@pytest.mark.parametrize("option, subject", [("--scenario", SCENARIO), ("--sop", SOP)])
def test_check_conversations_gives_the_verdicts_the_cli_gives(option, subject):
    results = list(check_conversations(subject, CONVERSATIONS, no_judge=True))
    assert all(isinstance(r, ConversationResult) for r in results)
    assert [(r.source, r.verdict.value) for r in results] == _cli_verdicts(option, subject)
    loaded = dialogcheck.load_sop(subject) if option == "--sop" else dialogcheck.load_scenario(subject)
    assert [r.verdict for r in check_conversations(loaded, [CONVERSATIONS], no_judge=True)] == [r.verdict for r in results]


def test_check_conversations_takes_conversations_in_memory():
    scenario = dialogcheck.load_scenario(SCENARIO)
    recorded = dialogcheck.load_conversation(CONVERSATIONS / "damaged_card_ok.jsonl")
    events = [user("hi"), bot("I cannot help with that")]
    first, second = check_conversations(scenario, [recorded, events], no_judge=True)
    assert (first.verdict, second.verdict) == (Outcome.PASS, Outcome.FAIL)
    assert second.source == "<conversation 2>"
    kinds = {line.kind for line in second.checks()}
    assert kinds == {CheckKind.ASSERTION, CheckKind.CRITERION}  # the criterion is skipped, not judged
    assert second.check_counts().skipped == 1


def test_check_conversations_in_worker_processes_gives_the_same_results_in_order(tmp_path):
    log = write_batch(tmp_path / "batch.jsonl", 1_000)  # past the size below which one process does everything
    scenario = dialogcheck.load_scenario(BATCH_SCENARIO)
    alone = [(r.source, r.verdict) for r in check_conversations(scenario, [log], no_judge=True, jobs=1)]
    shared = [(r.source, r.verdict) for r in check_conversations(scenario, [log], no_judge=True, jobs=2)]
    assert len(alone) == 1_000 and shared == alone


def test_check_conversations_raises_load_error_for_bad_input(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"event": "user", "text": "hi"}\n{"event": \n')
    with pytest.raises(LoadError) as info:
        list(check_conversations(SCENARIO, [bad], no_judge=True))
    assert (info.value.problems[0].file, info.value.problems[0].line) == (str(bad), 2)
    with pytest.raises(ValueError, match="engine 'ray'"):
        list(check_conversations(SCENARIO, [bad], engine="ray"))
