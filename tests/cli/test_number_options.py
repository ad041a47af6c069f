"""Every option that takes a real number refuses NaN as a usage error (exit 2), before anything runs or is written.

click's ranges let NaN through, since every comparison with it is false: `--timeout nan` made each run time out
at once (exit 3, a failing run reported as errored) and `--alpha nan` broke inside the statistics (a traceback).
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.conftest import EXAMPLE

SCENARIO = EXAMPLE / "eval" / "scenarios" / "card_replace_damaged.yml"
CONVERSATION = EXAMPLE / "conversations" / "damaged_card_ok.jsonl"


def commands(tmp_path):
    document = tmp_path / "batch.json"
    document.write_text('{"conversations": []}\n')
    check = ["check", "--no-judge", "--scenario", str(SCENARIO), str(CONVERSATION)]
    return {
        "--timeout": ["run", "--no-judge", str(EXAMPLE), "--results", str(tmp_path / "results")],
        "--alpha": ["compare", str(document), str(document)],
        "--require-calibration": check,
        "--chunk-mb": check,
    }


@pytest.mark.parametrize("option", ["--timeout", "--alpha", "--require-calibration", "--chunk-mb"])
@pytest.mark.parametrize("value", ["nan", "NaN", "-nan"])
def test_nan_is_not_a_number(tmp_path, option, value):
    result = CliRunner().invoke(cli, [*commands(tmp_path)[option], option, value])
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{option}': '{value}' is not a number" in result.stderr
    assert result.stdout == "" and not (tmp_path / "results").exists()


@pytest.mark.parametrize(("option", "value"), [("--require-calibration", "0.2"), ("--chunk-mb", "0.5")])
def test_a_number_in_range_is_taken(tmp_path, option, value):
    result = CliRunner().invoke(cli, [*commands(tmp_path)[option], option, value])
    assert result.exit_code == 0, result.output
    assert "PASS" in result.stdout
