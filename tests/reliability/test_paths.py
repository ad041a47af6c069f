"""Paths: nothing a file names, and nothing found in a folder, reaches outside the project; results stay in --results.

The rule (SPEC leaves it open): a file the user names on the command line is read
wherever it is. A file found by walking a folder the user named, every path
written inside a file (prompt templates, the cache folder), and every folder
dialogcheck picks in a project by itself (`eval/results`, `.dialogcheck/cache`,
`eval/calibration`) must resolve inside the project folder once `..` and symbolic
links are resolved. `goals.sop` names no file at all: it holds the steps themselves.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from dialogcheck.checks.base import Outcome
from dialogcheck.config import load_config
from dialogcheck.errors import LoadError
from dialogcheck.results.files import ResultsFolder, slug_folder
from dialogcheck.results.load import finished_runs
from dialogcheck.results.model import RunResult, ScenarioInfo
from tests import inprocess
from tests.llm.conftest import judge_text, openai_body
from tests.reliability.figures import record
from tests.reliability.peers import FaultServer, Seen, clean_env, ok

SCENARIO = "scenario:\n  name: {name}\n  simulation_context: c\n  script: [hello]\n"
AGENT = "def respond(conversation_id, text, initial_slots=None):\n    return {'messages': [{'text': 'hi'}], 'events': []}\n"


def invoke(*args: str):
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def project(root: Path, config: str = "agent: {type: python, callable: 'agent:respond'}\n") -> Path:
    (root / "eval" / "scenarios").mkdir(parents=True)
    (root / "eval" / "conftest.yml").write_text(config)
    (root / "agent.py").write_text(AGENT)
    return root


@pytest.fixture
def outside(tmp_path) -> Path:
    """A file outside every project of the test, holding what a link out would leak."""
    secret = tmp_path / "outside" / "credentials.yml"
    secret.parent.mkdir()
    secret.write_text("scenario:\n  name: aws_secret_access_key=planted\n  simulation_context: c\n")
    return secret


def test_a_link_out_of_a_walked_folder_is_refused_by_validate_and_run(tmp_path, outside):
    root = project(tmp_path / "p")
    (root / "eval" / "scenarios" / "ok.yml").write_text(SCENARIO.format(name="ok"))
    link = root / "eval" / "scenarios" / "leak.yml"
    link.symlink_to(outside)
    expected = (
        f"{link}:1:1: this file is a link to {outside}, outside {{where}}: files found in a folder must stay inside it"
        " (name the file itself on the command line to read it)"
    )
    checked = invoke("validate", str(root))
    assert checked.exit_code == 2
    assert checked.stderr.splitlines() == [expected.format(where=root)]
    ran = invoke("run", str(root), "--results", str(tmp_path / "r"))
    assert ran.exit_code == 2 and ran.stderr.splitlines() == [expected.format(where=root)]
    assert not (tmp_path / "r").exists()
    assert "planted" not in checked.output + ran.output


def test_links_inside_the_folder_and_files_named_on_the_command_line_are_read(tmp_path, outside):
    root = project(tmp_path / "p")
    shared = root / "shared" / "base.yml"
    shared.parent.mkdir()
    shared.write_text(SCENARIO.format(name="shared"))
    (root / "eval" / "scenarios" / "alias.yml").symlink_to(shared)
    assert invoke("validate", str(root)).exit_code == 0
    named = invoke("validate", str(outside))  # the user named it: read wherever it is
    assert named.exit_code == 0 and "ok    " in named.stdout


def test_prompt_templates_cannot_leave_the_project(tmp_path, outside):
    root = project(tmp_path / "p")
    (root / "prompts").mkdir()
    (root / "prompts" / "user.j2").write_text("{{ simulation_context }}")
    (root / "prompts" / "out.j2").symlink_to(outside)
    config = root / "eval" / "conftest.yml"
    config.write_text(
        "simulation:\n  simulated_user_prompt: prompts/user.j2\n"
        "evaluation:\n  criteria_judge_prompt: prompts/out.j2\n  metrics_judge_prompt: prompts/../../outside/credentials.yml\n"
    )
    with pytest.raises(LoadError) as info:
        load_config(config)
    assert str(info.value).splitlines() == [
        f"{config}:4:26: `criteria_judge_prompt` must stay inside the project folder {root}, got 'prompts/out.j2'",
        f"{config}:5:25: `metrics_judge_prompt` must stay inside the project folder {root}, got 'prompts/../../outside/credentials.yml'",
    ]
    config.write_text("simulation:\n  simulated_user_prompt: prompts/user.j2\n")
    assert load_config(config).simulation.prompts["simulated_user_prompt"] == (root / "prompts" / "user.j2").resolve()


def test_the_cache_folder_cannot_leave_the_project(tmp_path):
    root = project(tmp_path / "p")
    (tmp_path / "elsewhere").mkdir()
    (root / "cache-link").symlink_to(tmp_path / "elsewhere")
    config = root / "eval" / "conftest.yml"
    for written in ("cache-link", str(tmp_path / "elsewhere"), "../elsewhere"):
        config.write_text(f"cache: {{dir: '{written}'}}\n")
        with pytest.raises(LoadError) as info:
            load_config(config)
        assert str(info.value) == (
            f"{config}:1:14: `dir` in `cache` must stay inside the project folder {root}, got {written!r} (--cache-dir names a folder elsewhere)"
        )
    config.write_text("cache: {dir: .llm-cache}\n")
    assert load_config(config).cache.dir == root / ".llm-cache"


def linked_out(link: Path, outside: Path) -> str:
    """What a folder dialogcheck picks says when `link` takes it to `outside`: the start of the message, after the path."""
    return f"{link}:1:1: {{what}} leads to {outside} through a symbolic link, outside the project folder {{root}}: it must stay inside the project"


def test_a_link_out_of_the_default_results_folder_is_refused_and_a_named_folder_is_used(tmp_path):
    root = project(tmp_path / "p")
    (root / "eval" / "scenarios" / "ok.yml").write_text(SCENARIO.format(name="ok"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / "eval" / "results").symlink_to(elsewhere)
    ran = invoke("run", str(root))
    assert ran.exit_code == 2
    expected = linked_out(root / "eval" / "results", elsewhere).format(what="the results folder", root=root)
    assert ran.stderr.splitlines() == [expected + " (--results DIR names a folder elsewhere)"]
    assert list(elsewhere.iterdir()) == []
    named = root / "eval" / "results" / "named"  # named on the command line: used wherever it is
    assert invoke("run", str(root), "--results", str(named)).exit_code == 0
    assert (elsewhere / "named" / "summary.json").is_file()
    link = root / "eval" / "results"
    link.unlink()
    link.symlink_to(link)  # a loop: no folder at all
    looped = invoke("run", str(root))
    assert looped.exit_code == 2
    assert looped.stderr.splitlines() == [
        f"{link}:1:1: the results folder is a loop of symbolic links: it must be a folder inside the project folder {root} (--results DIR names a folder elsewhere)"
    ]


def judge_answer(request: Seen):
    return ok(openai_body(judge_text(request.body)))


@pytest.fixture
def judge():
    server = FaultServer(judge_answer)
    yield server
    server.stop()


def dialogcheck(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    command = [str(Path(sys.executable).parent / "dialogcheck"), *args]
    return inprocess.run(command, cwd=cwd, env=clean_env(), text=True, timeout=120)


def test_a_link_out_of_the_default_cache_folder_is_refused_by_run_and_check(tmp_path, judge):
    llm = f"{{provider: openai_compatible, base_url: '{judge.url}/v1', model: judge, max_retries: 0, timeout: 60}}"
    root = project(tmp_path / "p", f"agent: {{type: python, callable: 'agent:respond'}}\nevaluation:\n  llm: {llm}\n")
    scenario = root / "eval" / "scenarios" / "ok.yml"
    scenario.write_text(SCENARIO.format(name="ok") + "  goals:\n    criteria: [The agent greets]\n")
    conversation = tmp_path / "c.jsonl"
    conversation.write_text('{"event": "user", "text": "hello"}\n{"event": "bot", "text": "hi"}\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / ".dialogcheck").symlink_to(elsewhere)
    expected = linked_out(root / ".dialogcheck" / "cache", elsewhere / "cache").format(what="the answer cache folder", root=root)
    expected += " (--cache-dir DIR names a folder elsewhere)"
    for args in (
        ["run", str(root), "--results", str(tmp_path / "r1")],
        ["run", str(root), "--results", str(tmp_path / "r2"), "--replay"],
        ["check", "--scenario", str(scenario), str(conversation)],
    ):
        refused = dialogcheck(tmp_path, *args)
        assert refused.returncode == 2, (args, refused.stderr)
        assert refused.stderr.splitlines() == [expected], args
    assert list(elsewhere.iterdir()) == [] and judge.seen == [] and not (tmp_path / "r1").exists()
    # Without the project's cache folder nothing is refused: --no-cache, or a folder named on the command line.
    assert dialogcheck(tmp_path, "check", "--no-cache", "--scenario", str(scenario), str(conversation)).returncode == 0
    named = dialogcheck(tmp_path, "run", str(root), "--results", str(tmp_path / "r3"), "--cache-dir", str(tmp_path / "named"))
    assert named.returncode == 0, named.stderr
    assert list((tmp_path / "named").rglob("*.json")) and list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("reference", ["../../outside.yml", "/etc/passwd", "sops/refund.yml"])
def test_goals_sop_never_names_a_file(tmp_path, reference):
    path = tmp_path / "s.yml"
    path.write_text(f"scenario:\n  name: n\n  simulation_context: c\n  goals:\n    sop: {reference}\n")
    result = invoke("validate", str(path))
    assert result.exit_code == 2
    assert result.stdout.splitlines()[0] == (
        f"{path}:5:10: `goals.sop` must be a list of steps written here, got the string {reference!r}:"
        " it does not name an SOP file (apply an SOP file with `dialogcheck check --sop FILE`)"
    )


HOSTILE_SLUGS = ["..", ".", "../../escaped", "/abs/olute", "a/../../b", "nul\x00byte", "back\\slash", "x" * 400, "é" * 200, "", " .. "]


@pytest.mark.parametrize("slug", HOSTILE_SLUGS, ids=range(len(HOSTILE_SLUGS)))
def test_no_slug_writes_outside_the_results_folder(tmp_path, slug):
    root = tmp_path / "deep" / "results"
    folder = ResultsFolder(root)
    folder.write_run(RunResult(ScenarioInfo(slug, "../../name", "x.yml"), 1, Outcome.ERROR, error="e"), "text")
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(written) == 3 and all(p.resolve().is_relative_to(root.resolve()) for p in written), written
    assert all(p.parent.parent == root for p in written)  # one folder per slug, right under the results folder
    assert len(slug_folder(slug).encode()) <= 255
    base = folder.run_base(slug, 1)
    assert json.loads(base.with_name("run_1.json").read_text())["scenario"]["slug"] == slug  # found again under the same folder


def test_distinct_hostile_slugs_get_distinct_folders():
    folders = [slug_folder(s) for s in HOSTILE_SLUGS + ["a/b", "a_b", "a:b"]]
    assert len(set(folders)) == len(folders)
    record("hostile slugs written", len(HOSTILE_SLUGS))
    assert slug_folder("card_replace") == "card_replace" and slug_folder("carte bancaire") == "carte bancaire"


def test_a_linked_slug_folder_in_the_results_is_not_followed_out(tmp_path):
    root = tmp_path / "results"
    root.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (root / "card").symlink_to(tmp_path / "elsewhere")
    run = RunResult(ScenarioInfo("card", "c", "c.yml"), 1, Outcome.ERROR, error="e")
    with pytest.raises(OSError, match="outside the results folder"):
        ResultsFolder(root).write_run(run, "text")
    assert list((tmp_path / "elsewhere").iterdir()) == []


def test_a_scenario_file_named_dot_dot_runs_into_a_safe_folder(tmp_path):
    root = project(tmp_path / "p")
    (root / "eval" / "scenarios" / "...yml").write_text(SCENARIO.format(name="'../../../escape'"))
    results = tmp_path / "deep" / "r"
    ran = invoke("run", str(root), "--results", str(results), "--format", "json")
    assert ran.exit_code == 0, ran.output
    slug = json.loads(ran.stdout)["scenarios"][0]["slug"]
    assert slug == ".."
    assert (results / slug_folder("..") / "run_1.json").is_file()
    assert sorted(p.name for p in (tmp_path / "deep").iterdir()) == ["r"]
    assert not any(p.name.startswith("run_") for p in tmp_path.rglob("*") if not p.resolve().is_relative_to(results.resolve()))
    folder = ResultsFolder(results)
    (run,) = finished_runs(folder, folder.read_plan())  # read back from the same safe folder
    assert [e["event"] for e in run.events] == ["bot", "user", "bot"]


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_a_link_loop_in_a_walked_folder_is_not_a_crash(tmp_path):
    root = project(tmp_path / "p")
    (root / "eval" / "scenarios" / "ok.yml").write_text(SCENARIO.format(name="ok"))
    loop = root / "eval" / "scenarios" / "loop.yml"
    loop.symlink_to(loop)
    checked = invoke("validate", str(root))  # a clear error, not a traceback, and not a file left out unsaid
    assert checked.exit_code == 2
    assert checked.stderr == f"{loop}:1:1: this file is a link to {loop}, which leads to no file (it is missing, or the links go round): fix the link or remove it\n"


def test_a_conversation_folder_given_to_check_may_not_link_out(tmp_path):
    """The same rule for recorded conversations: a walked folder's files stay in it; a named file is read."""
    scenario = tmp_path / "s.yml"
    scenario.write_text(SCENARIO.format(name="s"))
    secret = tmp_path / "outside" / "secret.jsonl"
    secret.parent.mkdir()
    secret.write_text('{"event": "bot", "text": "aws_secret_access_key=planted"}\n')
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "ok.jsonl").write_text('{"event": "user", "text": "hi"}\n')
    (logs / "leak.jsonl").symlink_to(secret)
    walked = invoke("check", "--scenario", str(scenario), str(logs))
    assert walked.exit_code == 2
    assert walked.stderr.splitlines() == [
        f"{logs / 'leak.jsonl'}:1:1: this file is a link to {secret}, outside {logs}: files found in a folder must stay inside it"
        " (name the file itself on the command line to read it)"
    ]
    assert "planted" not in walked.output
    assert invoke("check", "--scenario", str(scenario), str(logs / "leak.jsonl")).exit_code == 0


def test_a_link_that_leads_to_no_file_is_refused_not_dropped_from_the_batch(tmp_path):
    """A dangling link or a loop of links in a walked folder is bad input: silently left out, its conversations
    would never be judged and the batch would pass without them."""
    scenario = tmp_path / "s.yml"
    scenario.write_text(SCENARIO.format(name="s"))
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "ok.jsonl").write_text('{"event": "user", "text": "hi"}\n')
    (logs / "gone.jsonl").symlink_to(tmp_path / "rotated" / "gone.jsonl")
    (logs / "a.jsonl").symlink_to("b.jsonl")
    (logs / "b.jsonl").symlink_to("a.jsonl")
    walked = invoke("check", "--scenario", str(scenario), str(logs))
    assert walked.exit_code == 2
    assert walked.stderr.splitlines() == [
        f"{logs / name}:1:1: this file is a link to {target}, which leads to no file (it is missing, or the links go round): fix the link or remove it"
        for name, target in (("a.jsonl", "b.jsonl"), ("b.jsonl", "a.jsonl"), ("gone.jsonl", tmp_path / "rotated" / "gone.jsonl"))
    ]
    assert walked.stdout == ""
    for name in ("a.jsonl", "b.jsonl", "gone.jsonl"):
        (logs / name).unlink()
    (logs / "later.jsonl").symlink_to("ok.jsonl")  # a link to a file inside the folder is read
    assert "2 conversations: 2 passed" in invoke("check", "--scenario", str(scenario), str(logs)).stdout
    root = project(tmp_path / "p")
    (root / "eval" / "scenarios" / "ok.yml").write_text(SCENARIO.format(name="ok"))
    (root / "eval" / "scenarios" / "shared.yml").symlink_to(tmp_path / "gone.yml")
    checked = invoke("validate", str(root))
    assert checked.exit_code == 2 and "shared.yml:1:1: this file is a link to" in checked.stderr


def test_a_walked_folder_takes_its_suffixes_in_any_case(tmp_path):
    scenario = tmp_path / "s.yml"
    scenario.write_text(SCENARIO.format(name="s") + "  goals:\n    assertions:\n      - bot_did_not_utter: {text_matches: refund}\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.jsonl").write_text('{"event": "user", "text": "hi"}\n')
    (logs / "B.JSONL").write_text('{"event": "user", "text": "hi"}\n{"event": "bot", "text": "refund sent"}\n')
    (logs / "notes.txt").write_text("not a conversation")
    walked = invoke("check", "--scenario", str(scenario), str(logs))
    assert walked.exit_code == 1
    assert "2 conversations: 1 passed, 1 failed" in walked.stdout and f"{logs / 'B.JSONL'}" in walked.stdout


@pytest.mark.parametrize("flag", ["--scenario", "--sop"])
def test_a_loop_of_links_named_on_the_command_line_is_a_file_that_cannot_be_read(tmp_path, flag):
    (tmp_path / "a.yml").symlink_to("b.yml")
    (tmp_path / "b.yml").symlink_to("a.yml")
    conversation = tmp_path / "c.jsonl"
    conversation.write_text('{"event": "user", "text": "hi"}\n')
    checked = invoke("check", flag, str(tmp_path / "a.yml"), str(conversation))  # `invoke` fails on a traceback
    assert checked.exit_code == 2
    assert checked.stderr == f"{tmp_path / 'a.yml'}:1:1: cannot read file: Too many levels of symbolic links\n"


def test_a_loop_of_links_in_a_project_s_paths_is_a_clear_error_not_a_traceback(tmp_path):
    from dialogcheck._paths import inside

    root = project(tmp_path / "p", "agent: {type: python, callable: 'agent:respond'}\nsimulation:\n  simulated_user_prompt: round.j2\ncache: {dir: loop/x}\n")
    (root / "eval" / "scenarios" / "ok.yml").write_text(SCENARIO.format(name="ok"))
    (root / "round.j2").symlink_to("round.j2")
    (root / "loop").symlink_to("loop")
    checked = invoke("validate", str(root))  # `invoke` fails on a traceback
    assert checked.exit_code == 2
    config = root / "eval" / "conftest.yml"
    assert f"{config}:3:26: `simulated_user_prompt`: 'round.j2' is a loop of symbolic links, not a template file" in checked.stdout
    assert f"{config}:4:14: `dir` in `cache` must stay inside the project folder {root}, got 'loop/x'" in checked.stdout
    with pytest.raises(LoadError, match="this path is a loop of symbolic links"):
        inside(root, "loop/x")  # what the MCP server asks of a path a client sends
