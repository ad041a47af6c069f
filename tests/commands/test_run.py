"""`commands.run`: planning refuses every problem of the files, config and agent as bad input; an agent that is
down is a `CommandError`; a finished batch's answer is its summary and folder."""

from __future__ import annotations

import pytest

from dialogcheck.commands.answer import EXIT_ERRORED, EXIT_FAILED, CommandError
from dialogcheck.commands.run import check_agent, plan_run, run_answer
from dialogcheck.connectors.base import AgentSetupError
from dialogcheck.errors import LoadError
from dialogcheck.results.load import load_results
from dialogcheck.runner.scenarios import RunOptions


def _project(folders, tmp_path, conftest: str):
    project = tmp_path / "p"
    (project / "eval" / "scenarios").mkdir(parents=True)
    (project / "eval" / "scenarios" / "s.yml").write_text((folders["project"] / "eval" / "scenarios" / "run_cancel.yml").read_text())
    (project / "eval" / "conftest.yml").write_text(conftest)
    return project


def test_an_agent_the_config_cannot_set_up_is_bad_input_at_the_config(folders, tmp_path):
    project = _project(folders, tmp_path, "agent: {type: python, callable: 'no_such_module:respond'}\n")
    with pytest.raises(LoadError) as raised:
        plan_run([str(project)], RunOptions(no_judge=True))
    problem = raised.value.problems[0]
    assert problem.file == str(project / "eval" / "conftest.yml")
    assert problem.message.startswith("cannot set up the agent: cannot import agent module `no_such_module`")


def test_an_agent_argument_that_cannot_be_set_up_stays_the_caller_s_error(folders, tmp_path):
    project = _project(folders, tmp_path, "agent: {type: http, url: 'http://127.0.0.1:9/chat'}\n")
    with pytest.raises(AgentSetupError):
        plan_run([str(project)], RunOptions(no_judge=True), agent="python:no_such_module:respond")


def test_an_agent_that_is_down_is_a_command_error_before_any_run(folders, tmp_path):
    project = _project(folders, tmp_path, "agent: {type: http, url: 'http://127.0.0.1:9/chat'}\n")
    batch = plan_run([str(project)], RunOptions(no_judge=True))
    with pytest.raises(CommandError) as raised:
        check_agent(batch)
    assert str(raised.value).startswith("the agent is not reachable, so no run was started:")
    assert raised.value.exit_code == EXIT_ERRORED
    assert not (project / "eval" / "results").exists()


def test_a_finished_batch_s_answer(folders):
    batch = load_results(str(folders["batch"]))
    said = run_answer(batch)
    assert said.document["results"] == batch.folder and said.document["failed"] == 1
    assert said.text.plain.endswith(f"results: {batch.folder}\n")
    assert said.exit_code == EXIT_FAILED
