"""Prompt templates: the rendered prompt is stripped and ends with one newline, however it was written."""

import pytest

from dialogcheck.llm.templates import Templates, _one_final_newline


@pytest.mark.parametrize("text", ["a\n", "a", "a\n\n", "\na\n", " a \n", "a \n", "\t\n", "", "\n", "x\ny\n", "x\r\n"])
def test_one_final_newline_is_strip_plus_a_newline(text):
    assert _one_final_newline(text) == text.strip() + "\n"


def test_a_prompt_already_in_shape_is_not_copied():
    text = "line one\nline two\n" * 1000
    assert _one_final_newline(text) is text


def test_a_project_template_renders_stripped_with_one_final_newline(tmp_path):
    template = tmp_path / "judge.j2"
    template.write_text("\n\n  Judge {{ criterion }}  \n\n\n", encoding="utf-8")
    rendered = Templates({"criteria_judge_prompt": template}).render("criteria_judge_prompt", criterion="this")
    assert rendered == "Judge this\n"
