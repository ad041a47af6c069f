"""The library API: `check_conversations` and `run_scenarios` give what the CLI gives, as typed results."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import dialogcheck
from dialogcheck import BatchResult, ConversationResult, LoadError, Outcome, check_conversations, run_scenarios
from dialogcheck._cli.main import cli
from dialogcheck.connectors.base import AgentError, AgentMessage, AgentTurn
from dialogcheck.pairing import PairError
from dialogcheck.results.model import CheckKind
from tests.conftest import EXAMPLE, bot, user
from tests.engines.batches import SCENARIO as BATCH_SCENARIO, write_batch

SCENARIO = EXAMPLE / "eval" / "scenarios" / "card_replace_damaged.yml"
SOP = EXAMPLE / "sops" / "replace_card.yml"
CONVERSATIONS = EXAMPLE / "conversations"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return Path(shutil.copytree(EXAMPLE, tmp_path / "card_replace", ignore=shutil.ignore_patterns("results", "__pycache__")))


def test_run_scenarios_on_the_example_gives_12_passed_2_failed(project, tmp_path):
    batch = run_scenarios(str(project), no_judge=True, results=tmp_path / "results")
    assert isinstance(batch, BatchResult)
    assert (batch.passed, batch.failed, batch.errored) == (12, 2, 0)
    timed_out, failed = batch.failed_runs()
    assert timed_out.slug == "run_order_timeout" and [line.check.key for line in timed_out.checks() if line.outcome is Outcome.FAIL] == ["state_equals"]
    assert failed.slug == "run_stolen_card" and failed.verdict is Outcome.FAIL
    assert {line.title for line in failed.checks() if line.outcome is Outcome.FAIL} == {
        "sequencing bot_uttered utter_confirm_replacement → tool_executed order_replacement (local)",
        "SOP confirm_before_ordering Ask the customer to confirm before ordering",
    }
    assert batch.interrupted is False and (tmp_path / "results" / "summary.json").is_file()
    assert json.loads((tmp_path / "results" / "summary.json").read_text())["failed"] == 2


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
    with pytest.raises(ValueError, match="engine 'spark'"):  # engine="ray" is tested in tests/engines/test_ray.py
        list(check_conversations(SCENARIO, [bad], engine="spark"))


def _paired_runs(tmp_path: Path) -> tuple[Path, Path]:
    """A folder of scenarios `tau-bench-task-7` and `-17`, and two conversations whose ids pair with them by `task-(\\d+)`."""
    from tests.cli.test_check_scenarios import OK, line, scenario_file

    folder = tmp_path / "scenarios"
    folder.mkdir()
    scenario_file(folder, "tau-bench-task-7", "order_replacement")
    scenario_file(folder, "tau-bench-task-17", "never_called")
    runs = tmp_path / "runs.jsonl"
    runs.write_text(line("task-7-trial-2", OK) + "\n" + line("task-17-trial-0", OK) + "\n")
    return folder, runs


def test_check_conversations_pairs_by_a_pattern_as_check_pair_does(tmp_path):
    folder, runs = _paired_runs(tmp_path)
    results = list(check_conversations(folder, runs, pair=r"task-(\d+)", no_judge=True))
    assert [(r.scenario, r.verdict.value) for r in results] == [("tau-bench-task-7", "pass"), ("tau-bench-task-17", "fail")]
    cli_run = CliRunner().invoke(cli, ["check", "--no-judge", "--format", "json", "--scenario", str(folder), "--pair", r"task-(\d+)", str(runs)])
    assert [(c["scenario"], c["verdict"]) for c in json.loads(cli_run.stdout)["conversations"]] == [(r.scenario, r.verdict.value) for r in results]
    one = dialogcheck.load_scenario(folder / "tau-bench-task-7.yml")  # a loaded scenario pairs too: the other id is bad input
    with pytest.raises(LoadError) as info:
        list(check_conversations(one, runs, pair=re.compile(r"task-(\d+)"), no_judge=True))
    assert info.value.problems[0].message == (
        "no scenario for conversation task-17-trial-0: its id `task-17-trial-0` gives the key `17` (pair=/task-(\\d+)/), and no scenario's slug does"
    )


def test_check_conversations_errors_name_the_pair_argument_never_the_flag(tmp_path):
    folder, runs = _paired_runs(tmp_path)
    with pytest.raises(LoadError) as unpaired:
        list(check_conversations(folder, runs, no_judge=True))
    assert unpaired.value.problems[0].message == (
        "no scenario for conversation task-7-trial-2: its record names none (a `scenario` key holding a scenario's slug)"
        " and no pair= pattern pairs by id"
    )
    with pytest.raises(LoadError) as no_key:
        list(check_conversations(folder, runs, pair="^(zzz)", no_judge=True))
    assert no_key.value.problems[0].message == "no scenario for conversation task-7-trial-2: pair=/^(zzz)/ finds no key in its id `task-7-trial-2`"
    for pattern, why in (
        ("task-(", "not a valid regular expression: missing ) at position 6"),
        ("task-\\d+", "needs exactly one capturing group, the key to pair by (it has 0), e.g. 'task-(\\d+)'"),
        ("task-(\\d{5000})", "too large a regular expression: a repeat count of 5,000 is more than the limit of 1,000"),
    ):
        with pytest.raises(PairError) as bad:
            list(check_conversations(folder, runs, pair=pattern, no_judge=True))
        assert str(bad.value) == f"pair={pattern!r}: {why}"
    with pytest.raises(ValueError, match=r"^pair= pairs conversations with scenarios: it does not go with an SOP"):
        list(check_conversations(SOP, runs, pair=r"task-(\d+)", no_judge=True))


def test_check_conversations_pair_is_searched_within_the_bounded_engine_s_budget(tmp_path):
    from tests.cli.test_check_scenarios import OK, line

    folder, _ = _paired_runs(tmp_path)
    slow = "a" * 5000 + "!"
    runs = tmp_path / "slow.jsonl"
    runs.write_text(line(slow, OK) + "\n")
    with pytest.raises(LoadError) as info:
        list(check_conversations(folder, runs, pair="(a+)+$", no_judge=True))
    assert "pair=/(a+)+$/ ran out of its" in info.value.problems[0].message
    assert "it backtracks catastrophically" in info.value.problems[0].message


def test_checks_is_a_list_each_time_a_new_one(project, tmp_path):
    scenario = dialogcheck.load_scenario(SCENARIO)
    (result,) = check_conversations(scenario, [CONVERSATIONS / "damaged_card_ok.jsonl"], no_judge=True)
    lines = result.checks()
    assert isinstance(lines, list) and len(lines) == len(result.outcomes) > 1
    lines.clear()  # the caller's own list: the result keeps its checks
    assert len(result.checks()) == len(result.outcomes)
    batch = run_scenarios([project / "eval" / "scenarios" / "run_stolen_card.yml"], no_judge=True, results=tmp_path / "r")
    assert isinstance(batch.runs[0].checks(), list) and batch.runs[0].checks()


def test_a_second_run_into_the_same_results_folder_names_the_api_arguments(project, tmp_path):
    scenario = project / "eval" / "scenarios" / "run_stolen_card.yml"
    run_scenarios([scenario], no_judge=True, results=tmp_path / "r")
    with pytest.raises(LoadError) as info:
        run_scenarios([scenario], no_judge=True, results=tmp_path / "r")
    assert str(info.value) == (
        f"{tmp_path / 'r'}:1:1: results= must name a new or empty folder, and this one is not empty"
        f" (it holds a batch already: finish that one with resume={str(tmp_path / 'r')!r}, or give another folder)"
    )
    assert "--" not in str(info.value)
    finished = run_scenarios([scenario], no_judge=True, resume=tmp_path / "r")  # the advice works as given
    assert finished.failed == 1


def test_the_package_says_it_is_typed():
    from importlib.resources import files

    assert files("dialogcheck").joinpath("py.typed").is_file()


@pytest.mark.parametrize(
    "options, problem",
    [
        ({"personas": ["nonsense"]}, ("personas=", "unknown persona trait 'nonsense'")),
        ({"seed": -1}, ("seed=", "the seed must be an integer from 0 to 2147483647, got -1")),
        ({"personas": ["impatient"]}, ("personas=", "personas= is played by an LLM user, and every scenario here follows its `script` (add simulate='llm')")),
    ],
)
def test_run_scenarios_errors_name_its_arguments(project, tmp_path, options, problem):
    with pytest.raises(LoadError) as info:
        run_scenarios(project, no_judge=True, results=tmp_path / "r", **options)
    found = info.value.problems[0]
    assert found.file == problem[0] and found.message.startswith(problem[1])
    assert "--" not in str(info.value) and not (tmp_path / "r").exists()


def test_check_conversations_of_an_unfinished_batch_raises_unless_asked_to_judge_it_in_part(project, tmp_path):
    from dialogcheck import UnfinishedBatch

    scenario = project / "eval" / "scenarios" / "card_replace_confirms_first.yml"
    folder = tmp_path / "r"
    assert run_scenarios([scenario], no_judge=True, results=folder, runs=2).passed == 2
    slug = scenario.stem
    for path in (folder / slug).glob("run_2.*"):  # a batch killed after its first run
        path.unlink()
    with pytest.raises(UnfinishedBatch) as info:
        list(check_conversations(scenario, folder, no_judge=True))
    assert info.value.missing == ((slug, 2),) and info.value.planned == 2
    assert str(info.value) == (
        f"{folder / 'plan.json'}: 1 of 2 planned runs never finished ({slug} run 2): judge the batch in part with"
        f" partial=True, or finish it with run_scenarios(..., resume={str(folder)!r})"
    )
    in_part = list(check_conversations(scenario, folder, no_judge=True, partial=True))
    assert [result.verdict for result in in_part] == [Outcome.PASS]
    # A finished batch needs no leave.
    for path in (folder / slug).glob("run_1.*"):
        shutil.copy(path, folder / slug / path.name.replace("run_1", "run_2"))
    assert len(list(check_conversations(scenario, folder, no_judge=True))) == 2


def test_check_conversations_of_sources_streamed_refuses_an_unfinished_batch_when_it_reaches_it(project, tmp_path):
    from dialogcheck import UnfinishedBatch

    scenario = project / "eval" / "scenarios" / "card_replace_confirms_first.yml"
    run_scenarios([scenario], no_judge=True, results=tmp_path / "r", runs=2)
    for path in (tmp_path / "r" / scenario.stem).glob("run_2.*"):
        path.unlink()
    with pytest.raises(UnfinishedBatch):
        list(check_conversations(scenario, (source for source in [tmp_path / "r"]), no_judge=True))
