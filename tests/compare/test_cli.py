"""`dialogcheck compare` as a user runs it: the command's output and exit codes (run in process, `tests/inprocess.py`;
the installed command in a subprocess where an environment variable acts as the interpreter starts)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import inprocess
from tests.compare.builders import document, simple, write_batch
from tests.conftest import plain_env

DIALOGCHECK = Path(sys.executable).parent / "dialogcheck"


def compare(*args, env_extra=None, cwd=None) -> subprocess.CompletedProcess:
    env = plain_env(**(env_extra or {}))
    run = subprocess.run if "PYTHONPATH" in env else inprocess.run  # an interpreter reads PYTHONPATH as it starts
    done = run([str(DIALOGCHECK), "compare", *map(str, args)], capture_output=True, text=True, env=env, timeout=120, cwd=cwd, check=False)
    assert "Traceback" not in done.stderr, done.stderr
    return done


@pytest.fixture
def regression(tmp_path) -> tuple[Path, Path]:
    """Eight scenarios: seven regress, one judge flip at a key that still fails; keys are task ids, runs are trials."""
    base = [document(f"task-{i}-trial-0", "pass", [("tool_executed lookup", "pass")], criteria=[("polite", "pass")]) for i in range(7)]
    new = [document(f"task-{i}-trial-1", "fail", [("tool_executed lookup", "fail")], criteria=[("polite", "pass")]) for i in range(7)]
    base.append(document("task-7-trial-0", "fail", [("tool_executed lookup", "fail")], criteria=[("polite", "pass")]))
    new.append(document("task-7-trial-1", "fail", [("tool_executed lookup", "fail")], criteria=[("polite", "fail")]))
    return write_batch(tmp_path / "base.json", base), write_batch(tmp_path / "new.json", new)


def test_text_output_leads_with_the_verdict_and_traces_the_flips(regression):
    base, new = regression
    done = compare(base, new, "--match", r"task-(\d+)")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[:10] == [
        f"BASE {base} (check --format json document): 8 conversations, 8 keys",
        f"NEW  {new} (check --format json document): 8 conversations, 8 keys",
        "keys: what --match /task-(\\d+)/ captures",
        "",
        "pass rate 87.5% -> 0.0%: -87.5 points (95% interval -100.0 to -57.9) over 8 keys",
        "exact McNemar test (one judged run a side at every key): p = 0.0156",
        "verdict: regressed (alpha 0.05)",
        "driven by the 7 keys whose pass rate fell (7 regressed), listed below",
        "",
        "keys: 7 regressed, 0 fixed, 0 flaky, 1 still failing, 0 still passing",
    ]
    assert "  0 1/1 -> 0/1  -100.0 points (-100.0 to +12.2)  broke: assertion 1 tool_executed lookup" in done.stdout
    assert "     7     0  assertion 1 tool_executed lookup\n" in done.stdout
    assert "     1     0  criterion 1 'polite' (judge flip)\n" in done.stdout
    assert "1 flip of LLM-judged checks (criteria, llm_judge steps): judge flips" in done.stdout


def test_fail_on_regression_exits_1_only_on_a_significant_regression(regression):
    base, new = regression
    assert compare(base, new, "--match", r"task-(\d+)", "--fail-on", "regression").returncode == 1
    assert compare(new, base, "--match", r"task-(\d+)", "--fail-on", "regression").returncode == 0  # improved
    assert compare(base, new, "--match", r"task-(\d+)", "--fail-on", "regression", "--alpha", "0.01").returncode == 0
    assert compare(base, base, "--fail-on", "regression").returncode == 0


def test_fail_on_regression_exits_3_when_new_errored_everywhere(tmp_path):
    base = write_batch(tmp_path / "base.json", [document(f"task-{i}", "pass", [("tool_executed lookup", "pass")]) for i in range(3)])
    new = write_batch(tmp_path / "new.json", [document(f"task-{i}", "error", [("tool_executed lookup", "error")]) for i in range(3)])
    gated = compare(base, new, "--fail-on", "regression")
    assert gated.returncode == 3, gated.stderr
    assert "nothing compared: every key both sides have errored on a side (task-0, task-1, task-2)" in gated.stderr
    assert compare(base, new).returncode == 0  # without the gate, compare only reports


def test_json_has_the_verdict_and_p_value_at_the_top(regression):
    base, new = regression
    done = compare(base, new, "--match", r"task-(\d+)", "--format", "json")
    assert done.returncode == 0
    result = json.loads(done.stdout)
    assert list(result)[:2] == ["verdict", "p_value"]
    assert (result["verdict"], result["p_value"], result["test"], result["match"]) == ("regressed", 0.015625, "mcnemar", "task-(\\d+)")
    assert result["change"] == -0.875 and result["interval"][1] < 0
    assert result["statuses"]["regressed"] == 7 and result["judge_flips"] == 1
    first = result["keys"][0]
    assert first == {
        "key": "0", "status": "regressed",
        "base": {"passed": 1, "judged": 1, "errored": 0, "pass_rate": 1.0},
        "new": {"passed": 0, "judged": 1, "errored": 0, "pass_rate": 0.0},
        "change": -1.0, "interval": first["interval"], "noisy": False,
        "broke": ["assertion 1 tool_executed lookup"], "mended": [],
    }
    check = result["checks"][0]
    assert {k: check[k] for k in ("kind", "index", "label", "judge", "pass_to_fail", "fail_to_pass")} == {
        "kind": "assertion", "index": 1, "label": "tool_executed lookup", "judge": False, "pass_to_fail": 7, "fail_to_pass": 0,
    }
    assert check["examples"]["pass_to_fail"] == ["0", "1", "2", "3", "4"]
    assert result["checks"][1]["kind"] == "criterion" and result["checks"][1]["judge"] is True


def test_max_rows_cuts_each_list_and_says_how_many_more(regression):
    base, new = regression
    done = compare(base, new, "--match", r"task-(\d+)", "--max-rows", "2")
    assert done.stdout.count(" 1/1 -> 0/1 ") == 2
    assert "  5 more: see --format json or --html" in done.stdout


def test_the_html_page_is_written(regression, tmp_path):
    base, new = regression
    page = tmp_path / "reports" / "compare.html"
    done = compare(base, new, "--match", r"task-(\d+)", "--html", page)
    assert done.returncode == 0
    assert '<span class="verdict">regressed</span>' in page.read_text()


def test_bad_input_exits_2_naming_file_line_and_column(tmp_path, regression):
    base, _ = regression
    broken = tmp_path / "broken.json"
    broken.write_text('{"conversations": [\n{"verdict": "pass", "conversation_id": 7}\n], "summary": {}}\n')
    done = compare(base, broken)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == f"{broken}:2:40: not a conversation's result of `check`: expected `str | null`, got `int` at `conversation_id`\n"
    done = compare(base, broken, "--format", "json")
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert (error["file"], error["line"], error["column"]) == (str(broken), 2, 40)


def test_nothing_in_common_exits_2(regression):
    base, new = regression
    done = compare(base, new)
    assert done.returncode == 2
    assert "nothing to compare" in done.stderr and "--match REGEX" in done.stderr


def test_a_match_that_backtracks_catastrophically_exits_2_naming_the_side_and_the_name(tmp_path):
    slow = "a" * 5000 + "!"
    base, new = write_batch(tmp_path / "base.json", [simple(slow, "pass")]), write_batch(tmp_path / "new.json", [simple(slow, "fail")])
    done = compare(base, new, "--match", "(a+)+$", "--fail-on", "regression")
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"{base}:2:1: --match /(a+)+$/ ran out of its 1 s for searching `{slow[:79]}…` (5,001 characters):"
        " it backtracks catastrophically: simplify it\n"
    )
    done = compare(base, new, "--match", "(a|aa)+$", "--format", "json")
    assert done.returncode == 2
    assert json.loads(done.stdout)["error"]["message"].startswith("--match /(a|aa)+$/ ran out of its 1 s for searching")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--match", "task-\\d+"], "needs exactly one capturing group"),
        (["--match", "(x{5000})"], "Invalid value for '--match': too large a regular expression: a repeat count of 5,000"),
        (["--match", "task-("], "Invalid value for '--match': not a valid regular expression: missing ) at position 6"),
        (["--alpha", "1.5"], "Invalid value for '--alpha'"),
        (["--fail-on", "anything"], "Invalid value for '--fail-on'"),
    ],
)
def test_bad_options_are_usage_errors(regression, args, message):
    base, new = regression
    done = compare(base, new, *args)
    assert done.returncode == 2 and message in done.stderr
    done = compare(base, new, *args, "--format", "json")
    assert done.returncode == 2 and message in json.loads(done.stdout)["error"]["message"]


def test_a_report_that_cannot_be_written_is_bad_input(regression, tmp_path):
    base, new = regression
    (tmp_path / "a-file").write_text("")
    done = compare(base, new, "--match", r"task-(\d+)", "--html", tmp_path / "a-file" / "compare.html")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"{tmp_path / 'a-file'}:1:1: cannot write the report: ")


def test_without_scipy_it_says_which_extra_to_install(tmp_path, regression):
    """scipy hidden behind a package of that name that cannot be imported, as when it is not installed."""
    hidden = tmp_path / "hidden"
    (hidden / "scipy").mkdir(parents=True)
    (hidden / "scipy" / "__init__.py").write_text("raise ImportError('scipy is not installed here')\n")
    base, new = regression
    env = {"PYTHONPATH": str(hidden)}
    done = compare(base, new, "--match", r"task-(\d+)", env_extra=env)
    assert done.returncode == 2 and done.stdout == ""
    assert "`dialogcheck compare` needs scipy for its statistics: pip install 'dialogcheck[stats]'" in done.stderr
    done = compare(base, new, "--format", "json", env_extra=env)
    assert done.returncode == 2 and "dialogcheck[stats]" in json.loads(done.stdout)["error"]["message"]


def test_compare_is_listed_in_the_help():
    done = inprocess.run([DIALOGCHECK, "--help"], text=True)
    assert re.search(r"\n  compare +What changed between two batches BASE and NEW", done.stdout), done.stdout


def test_keys_and_labels_from_files_cannot_forge_lines(tmp_path):
    forged = "x\nverdict: improved"
    base = write_batch(tmp_path / "b.json", [simple(forged, "pass")] * 1 + [document(forged, "pass", [("a\rPASS", "pass")])])
    new = write_batch(tmp_path / "n.json", [simple(forged, "fail"), document(forged, "fail", [("a\rPASS", "fail")])])
    done = compare(base, new)
    assert "verdict: improved" not in done.stdout.splitlines()
    assert "x\\nverdict: improved" in done.stdout and "a\\rPASS" in done.stdout
