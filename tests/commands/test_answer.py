"""The one error document (`errors.error_document`) and an error's text (`commands.answer.error_text`)."""

from __future__ import annotations

from dialogcheck.commands.answer import CommandError, error_text
from dialogcheck.errors import LoadError, Problem, error_document


def test_a_load_error_s_document_has_its_first_problem_and_every_problem():
    err = LoadError([Problem("bad", "a.yml", 3, 4), Problem("worse", "a.yml", 5, 1)])
    assert error_document(err) == {
        "error": {
            "message": "bad", "file": "a.yml", "line": 3, "column": 4,
            "problems": [
                {"message": "bad", "file": "a.yml", "line": 3, "column": 4},
                {"message": "worse", "file": "a.yml", "line": 5, "column": 1},
            ],
        }
    }
    assert error_text(err).plain == "a.yml:3:4: bad\na.yml:5:1: worse\n"


def test_an_error_that_is_not_the_input_s_has_no_place():
    err = CommandError("the agent is not reachable")
    assert error_document(err) == error_document("the agent is not reachable") == {
        "error": {"message": "the agent is not reachable", "file": None, "line": None, "column": None}
    }
    assert error_text(err).plain == "the agent is not reachable\n"
    assert err.exit_code == 3
