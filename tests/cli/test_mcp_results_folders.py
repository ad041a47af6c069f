"""The MCP tools that read a results folder (`report`, `explain`, `compare`) read it as the commands do: a
`check --output` folder is reported as `report` prints it, a batch that never finished says so, and a folder
whose files link outside it, or whose shards disagree with their summary, is a tool error.

The installed `dialogcheck mcp` in a real subprocess, driven by the MCP SDK's own client over stdio, on
folders the commands themselves wrote in the project.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from tests.cli.test_mcp import DIALOGCHECK, cli_json, project, session  # noqa: F401 - `project` is a fixture

SLUG = "card_replace_confirms_first"


def command(project: Path, *args: str) -> subprocess.CompletedProcess:  # noqa: F811 - `project` is the fixture imported above
    return subprocess.run([str(DIALOGCHECK), *args], cwd=project, capture_output=True, text=True, check=False, timeout=300)


def test_report_of_a_check_output_folder_answers_what_report_prints(project):  # noqa: F811 - `project` is the fixture imported above
    assert command(project, "check", "--no-judge", "--output", "out", "--sop", "sops/replace_card.yml", "conversations").returncode == 1
    printed = command(project, "report", "out")

    async def script(client):
        reported = await client.call_tool("report", {"results": "out"})
        assert not reported.is_error, reported.content[0].text
        assert reported.structured_content == cli_json(project, "report", "out")
        assert reported.content[0].text == printed.stdout

    session(project, script)


def test_report_and_explain_of_an_unfinished_batch_say_so(project):  # noqa: F811 - `project` is the fixture imported above
    assert command(project, "run", "--no-judge", "--runs", "2", "--results", "batch", f"eval/scenarios/{SLUG}.yml").returncode == 0
    for path in (project / "batch" / SLUG).glob("run_2.*"):
        path.unlink()

    async def script(client):
        reported = await client.call_tool("report", {"results": "batch"})
        assert reported.structured_content["unfinished_runs"] == [{"slug": SLUG, "run": 2}]
        assert reported.structured_content == cli_json(project, "report", "batch")
        assert f"unfinished: 1 of 2 planned runs never finished ({SLUG} run 2)" in reported.content[0].text
        never = await client.call_tool("explain", {"results": "batch", "run": f"{SLUG}/run_2"})
        assert never.is_error and never.content[0].text == (
            f"run '{SLUG}/run_2' of batch was planned but never finished: finish the batch with dialogcheck run --resume batch"
        )
        compared = await client.call_tool("compare", {"base": "batch", "new": "batch"})
        assert compared.structured_content["new"]["unfinished_runs"] == [{"slug": SLUG, "run": 2}]

    session(project, script)


def test_a_results_folder_that_links_outside_or_disagrees_with_its_summary_is_a_tool_error(project, tmp_path):  # noqa: F811 - `project` is the fixture imported above
    assert command(project, "run", "--no-judge", "--results", "batch", f"eval/scenarios/{SLUG}.yml").returncode == 0
    events = project / "batch" / SLUG / "run_1.events.jsonl"
    secret = tmp_path / "secret.jsonl"
    secret.write_text(json.dumps({"event": "user", "text": "the secret outside the folder"}) + "\n")
    events.unlink()
    events.symlink_to(secret)
    assert command(project, "check", "--no-judge", "--output", "out", "--sop", "sops/replace_card.yml", "conversations").returncode == 1
    damaged = project / "damaged"
    shutil.copytree(project / "out", damaged)
    (damaged / "part-00000.jsonl").write_text("")

    async def script(client):
        for name, arguments in (
            ("explain", {"results": "batch", "run": f"{SLUG}/run_1"}),
            ("report", {"results": "batch"}),
            ("compare", {"base": "batch", "new": "batch"}),
        ):
            refused = await client.call_tool(name, arguments)
            assert refused.is_error, name
            text = refused.content[0].text
            assert f"batch/{SLUG}/run_1.events.jsonl:1:1: this is a link to {secret.resolve()}, outside the results folder" in text, (name, text)
            assert "the secret" not in json.dumps(refused.structured_content)
        for name, arguments in (("report", {"results": "damaged"}), ("compare", {"base": "out", "new": "damaged"})):
            refused = await client.call_tool(name, arguments)
            assert refused.is_error, name
            assert "summary.json counts 8 conversations" in refused.content[0].text and "the shards hold 7" in refused.content[0].text

    session(project, script)
