"""Self-consistency (`evaluation.samples: N`): each criterion asked N times, each with its own seed; the majority
decides, and samples that disagree mark the criterion `unstable` with the split."""

from __future__ import annotations

import json

from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.llm.conftest import Answer, asked_criterion, openai_body
from tests.llm.test_check_with_judge import project


def by_seed(verdicts: dict):
    """A judge whose verdict depends on the seed it is asked with (None: no seed, the first sample)."""

    def body(request: dict) -> dict:
        verdict = verdicts[request.get("seed")]
        answer = {"criterion": asked_criterion(request), "verdict": verdict, "rationale": f"seed {request.get('seed')} says {verdict}", "evidence": {}}
        return openai_body(json.dumps(answer))

    return body


def check(tmp_path, server, samples: int):
    scenario, conversation = project(tmp_path, server, f"  samples: {samples}\n")
    result = CliRunner().invoke(cli, ["check", "--format", "json", "--scenario", scenario, conversation])
    return result, json.loads(result.stdout) if result.stdout.startswith("{") else None


def test_the_majority_decides_and_a_split_is_marked_unstable(tmp_path, openai_server):
    openai_server.answer(Answer(body=by_seed({None: "PASS", 1: "FAIL", 2: "PASS"})))
    result, document = check(tmp_path, openai_server, 3)
    assert result.exit_code == 0
    criterion = document["criteria"][0]
    assert (criterion["outcome"], criterion["unstable"]) == ("pass", {"pass": 2, "fail": 1})
    assert criterion["detail"] == "seed None says PASS (unstable: 2 pass, 1 fail)"
    assert criterion["usage"]["input_tokens"] == 3 * 11  # every sample's tokens
    assert sorted(str(b.get("seed")) for b in openai_server.bodies) == ["1", "1", "2", "2", "None", "None"]  # two items
    text = CliRunner().invoke(cli, ["check", "--scenario", *project(tmp_path / "again", openai_server, "  samples: 3\n")]).stdout
    assert "(unstable: 2 pass, 1 fail)" in text


def test_samples_that_agree_are_not_unstable(tmp_path, openai_server):
    openai_server.answer(Answer(body=by_seed({None: "FAIL", 1: "FAIL", 2: "FAIL"})))
    result, document = check(tmp_path, openai_server, 3)
    assert result.exit_code == 1
    assert document["criteria"][0]["outcome"] == "fail" and "unstable" not in document["criteria"][0]


def test_samples_without_a_majority_are_an_error(tmp_path, openai_server):
    openai_server.answer(Answer(body=by_seed({None: "PASS", 1: "FAIL", 2: "INCONCLUSIVE"})))
    result, document = check(tmp_path, openai_server, 3)
    assert result.exit_code == 3
    criterion = document["criteria"][0]
    assert criterion["outcome"] == "error" and criterion["unstable"] == {"fail": 1, "inconclusive": 1, "pass": 1}
    assert criterion["detail"] == "the judge's samples have no majority (1 fail, 1 inconclusive, 1 pass): unstable"


def test_an_even_number_of_samples_is_a_load_error(tmp_path, openai_server):
    project(tmp_path, openai_server, "  samples: 2\n")
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "eval" / "conftest.yml")])
    assert result.exit_code == 2
    assert f"{tmp_path / 'eval' / 'conftest.yml'}:3:12: `samples` in `evaluation` must be odd, so that a majority decides, got 2" in result.output
