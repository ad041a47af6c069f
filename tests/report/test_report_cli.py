"""`dialogcheck report` and the reports `run` writes: summary in the terminal, rendered files, bad folders are exit 2."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from dialogcheck._cli.main import cli
from tests.report.conftest import load


def report(*args):
    return CliRunner().invoke(cli, ["report", *map(str, args)])


def test_run_writes_junit_and_html_into_the_results_folder(example_batch):
    assert (example_batch / "junit.xml").is_file() and (example_batch / "report.html").is_file()


def test_run_writes_extra_copies_where_asked(hostile_project, tmp_path):
    result = CliRunner().invoke(cli, ["run", str(hostile_project / "eval" / "scenarios" / "alpha.yml"), "--results", str(tmp_path / "r"),
                                      "--junit", str(tmp_path / "ci" / "dialogcheck.xml"), "--html", str(tmp_path / "pages" / "index.html")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "ci" / "dialogcheck.xml").read_bytes() == (tmp_path / "r" / "junit.xml").read_bytes()
    assert (tmp_path / "pages" / "index.html").read_bytes() == (tmp_path / "r" / "report.html").read_bytes()


def test_report_prints_the_summary_as_text_and_exits_as_the_batch(example_batch):
    result = report(example_batch)
    assert result.exit_code == 1  # run_stolen_card fails on purpose
    assert result.output == (example_batch / "summary.txt").read_text()


def test_report_prints_the_summary_as_json(hostile_batch):
    result = report(hostile_batch, "--format", "json")
    assert result.exit_code == 1
    assert json.loads(result.output) == load(hostile_batch / "summary.json")


def test_report_renders_the_same_files_run_wrote(hostile_batch, tmp_path):
    result = report(hostile_batch, "--html", tmp_path / "r.html", "--junit", tmp_path / "r.xml")
    assert result.exit_code == 1, result.output
    assert result.output == f"wrote {tmp_path / 'r.xml'}\nwrote {tmp_path / 'r.html'}\n"
    assert (tmp_path / "r.html").read_bytes() == (hostile_batch / "report.html").read_bytes()
    assert (tmp_path / "r.xml").read_bytes() == (hostile_batch / "junit.xml").read_bytes()


def test_a_missing_folder_is_exit_2(tmp_path):
    result = report(tmp_path / "nope")
    assert result.exit_code == 2
    assert result.output == f"{tmp_path / 'nope'}:1:1: no results folder here (give the folder `dialogcheck run` wrote)\n"
    result = report(tmp_path)
    assert result.exit_code == 2
    assert result.output == f"{tmp_path / 'plan.json'}:1:1: not a dialogcheck results folder: plan.json is missing\n"


def _copy(batch, tmp_path):
    return shutil.copytree(batch, tmp_path / "copy")


def test_a_broken_run_file_names_file_line_and_column(hostile_batch, tmp_path):
    folder = _copy(hostile_batch, tmp_path)
    path = folder / "beta" / "run_2.json"
    path.write_text(path.read_text().replace('"verdict": "fail"', '"verdict": fail', 1))
    result = report(folder, "--html", tmp_path / "out.html")
    assert result.exit_code == 2
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if '"verdict": fail' in text)
    assert result.output.startswith(f"{path}:{line}:14: not valid JSON: ")
    assert not (tmp_path / "out.html").exists()


def test_a_broken_events_line_names_its_line(hostile_batch, tmp_path):
    folder = _copy(hostile_batch, tmp_path)
    path = folder / "alpha" / "run_1.events.jsonl"
    lines = path.read_text().splitlines()
    lines[2] = lines[2][:-1]  # drop the closing brace
    path.write_text("\n".join(lines) + "\n")
    result = report(folder, "--format", "json")
    assert result.exit_code == 2
    error = json.loads(result.output)["error"]
    assert (error["file"], error["line"]) == (str(path), 3)
    assert error["message"].startswith("not valid JSON: ")


def test_a_file_that_is_not_a_results_document(hostile_batch, tmp_path):
    folder = _copy(hostile_batch, tmp_path)
    (folder / "summary.json").write_text("[1, 2]\n")
    result = report(folder)
    assert result.exit_code == 2
    assert result.output == f"{folder / 'summary.json'}:1:1: expected a JSON object\n"
    (folder / "summary.json").write_text('{"scenarios": []}\n')
    assert report(folder).output == f"{folder / 'summary.json'}:1:1: not a dialogcheck results file: field `passed` is missing\n"
