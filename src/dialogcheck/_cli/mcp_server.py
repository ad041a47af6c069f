"""The MCP server of `dialogcheck mcp`: validate, check, run, report, compare and explain as tools for IDE agents.

Built on the official `mcp` SDK (the `mcp` extra). Each tool calls the same
library function as its command (`dialogcheck.commands`, or `check`'s batch)
and answers with the JSON document that command's `--format json` prints (as
structured content) and its text output (as text). Arguments are validated
against each tool's JSON schema before any work; every path must stay inside
the project folder the server was started in. Bad input, an agent that is
down, a missing folder: each comes back as a tool error carrying the
command's message and error document (`errors.error_document`), and the
server goes on serving. Blocking work runs in a worker thread, so a long run
reports its progress.
"""

from __future__ import annotations

import functools
import hmac
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from .. import __version__
from .._paths import inside
from .._redact import mask
from .._shown import counted
from .._yaml import allowed_env, env_policy
from ..commands.answer import EXIT_BAD_INPUT, CommandError, error_text
from ..config import search_within
from ..connectors.base import describe
from ..errors import DialogcheckError, LoadError, Problem, error_document
from ..llm.base import LLMError
from ..report.json import dumps
from ..report.styled import Styled
from ..results.plan import MAX_RUNS

if TYPE_CHECKING:
    from ..results.model import ConversationResult

Paths = Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1, description="Files or folders, relative to the project folder.")]
OnePath = Annotated[str, Field(min_length=1, description="A file or folder, relative to the project folder.")]
NoJudge = Annotated[bool, Field(description="Skip LLM-judged checks instead of reporting them as errors.")]

INSTRUCTIONS = (
    "dialogcheck tests conversational agents. Paths are relative to the project folder this server was started in "
    "(it holds eval/conftest.yml and eval/scenarios/). validate finds problems in scenario, SOP and config files; "
    "check judges recorded conversations; run simulates and judges scenarios and writes a results folder; "
    "report and explain read a results folder; compare says what changed between two."
)


def answer(document: Any, text: str | Styled) -> CallToolResult:
    """A tool's result: the JSON document as structured content, the text for people; credentials masked in both."""
    plain = text.plain if isinstance(text, Styled) else text
    masked = _masked(document)
    return CallToolResult(content=[TextContent(type="text", text=mask(plain))], structured_content=masked)


def _masked(document: Any) -> Any:
    """The document as its JSON text is masked (the CLI masks what it prints), read back."""
    import orjson

    return orjson.loads(mask(dumps(document)))


def _failure(err: DialogcheckError) -> CallToolResult:
    """The error's answer: its document (`errors.error_document`) and its text, as the commands give them."""
    text = error_text(err).plain.rstrip("\n")
    return CallToolResult(content=[TextContent(type="text", text=mask(text))], structured_content=_masked(error_document(err)), is_error=True)


def tool_body(work: Callable[..., CallToolResult]) -> Callable[..., Any]:
    """Run `work` in a worker thread, under the project's `--safe-env` policy, with no config above the project
    searched or loaded; whatever goes wrong comes back as a tool error, never an end of the server."""

    @functools.wraps(work)
    async def body(project: Project, *args: Any) -> CallToolResult:
        def under_policy() -> CallToolResult:
            with env_policy(project.allowed_env), search_within(project.root):
                return work(project, *args)

        try:
            return await anyio.to_thread.run_sync(under_policy)
        except DialogcheckError as err:  # bad input, an agent down, a run never finished: in the command's words
            return _failure(err)
        except Exception as err:  # noqa: BLE001 - a bug of ours is still an answer, never a dead server
            return _failure(CommandError(f"dialogcheck failed: {describe(err)}"))

    return body


class Project:
    """The folder the server was started in (or its `--root`): where every path must stay, and above which no config
    is looked for; and the `--safe-env` policy it was started under (`allowed_env` when it is made), which every
    tool's files load under."""

    def __init__(self, root: Path):
        self.root = root.resolve()
        self.allowed_env = allowed_env()

    def path(self, name: str) -> str:
        """`name` as the library takes it, once it is known to stay inside the project (a `LoadError` otherwise):
        as given when the server runs in the project (so answers name files as the command would), else resolved."""
        target = inside(self.root, name)
        return name if Path.cwd().resolve() == self.root else str(target)

    def paths(self, names: list[str]) -> list[str]:
        problems: list[Problem] = []
        found = []
        for name in names:
            try:
                found.append(self.path(name))
            except LoadError as err:
                problems.extend(err.problems)
        if problems:
            raise LoadError(problems)
        return found


def _validate(project: Project, paths: list[str]) -> CallToolResult:
    from ..commands.validate import validate

    said = validate(project.paths(paths))
    return answer(said.document, said.text)


def _check(project: Project, subject: str, conversations: list[str], no_judge: bool) -> CallToolResult:
    from ..checking import CheckRun, wants_judge
    from ..config import find_config, load_config
    from ..definitions import load_definition
    from ..report.check_text import check_counts_text, render_conversation
    from ..results.codec import check_summary_document, conversation_document

    subject_path = project.path(subject)
    files = project.paths(conversations)
    definition = load_definition(subject_path)  # a scenario with its project's settings, or an SOP: by its top-level key
    if definition.kind not in ("scenario", "sop"):
        raise LoadError.one("not a scenario or SOP file: `subject` names the file to judge the conversations against", subject)
    config_file = find_config(subject_path)
    config = load_config(config_file) if config_file is not None else None
    judge = _judge(config, subject_path) if wants_judge(definition.value, no_judge, False) else None
    batch = CheckRun(definition.value, files, judge=judge, no_judge=no_judge, metrics=config.evaluation.metrics if config else ())
    results: list[ConversationResult] = list(batch.results())
    if not results:
        raise LoadError.one("no conversation files found (.json, .jsonl)", " ".join(conversations))
    if len(results) == 1:
        document = conversation_document(results[0], with_source=True)
    else:
        document = {"conversations": [conversation_document(r, with_source=True) for r in results], "summary": check_summary_document(batch.tally.counts, batch.tally.stats)}
    if batch.tally.warnings:
        document["warnings"] = batch.tally.warnings.as_json()
    text = Styled()
    for result in results:
        text.extend(render_conversation(result, failing_only=len(results) > 1))
    counts = batch.tally.counts
    text.append(f"{counted(counts.total, 'conversation')}: {check_counts_text(counts)}\n")
    return answer(document, text)


def _judge(config: Any, where: str) -> Any:
    if config is None:
        return None
    from ..judge.setup import judge_from_config

    try:
        return judge_from_config(config)
    except LLMError as err:
        raise LoadError.one(str(err), str(config.path or where)) from None


def _run(project: Project, paths: list[str], runs: int, no_judge: bool, progress: Callable[[int, int, str], None]) -> CallToolResult:
    from ..commands.run import check_agent, plan_run, run_answer
    from ..report.batch_files import BATCH_FILES
    from ..runner.scenarios import RunOptions

    batch = plan_run(project.paths(paths), RunOptions(runs=runs, no_judge=no_judge))
    check_agent(batch)
    total, done = len(batch.plan.run_keys()), 0

    def finished(one) -> None:
        nonlocal done
        done += 1
        progress(done, total, f"{one.slug} run {one.number}: {one.verdict.value}")

    said = run_answer(batch.run(BATCH_FILES, finished))
    return answer(said.document, said.text)


def _report(project: Project, results: str) -> CallToolResult:
    from ..commands.report import report

    said = report(project.path(results), named=results)
    return answer(said.document, said.text)


def _compare(project: Project, base: str, new: str, match: str | None) -> CallToolResult:
    from ..commands.compare import compare
    from ..compare import MissingStats

    try:
        said = compare(project.path(base), project.path(new), match=match)
    except (MissingStats, ValueError) as err:
        raise CommandError(str(err), EXIT_BAD_INPUT) from None
    return answer(said.document, said.text)


def _explain(project: Project, results: str, run: str) -> CallToolResult:
    from ..commands.explain import explain

    said = explain(project.path(results), run, named=results)
    return answer(said.document, said.text)


def make_server(root: Path) -> MCPServer:
    """The server of the project at `root`, its six tools registered with their schemas."""
    project = Project(root)
    server = MCPServer("dialogcheck", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")

    @server.tool(name="validate", description="Load and check scenario, SOP and config files (files or folders): each file's problems with file, line and column.")
    async def validate(paths: Paths) -> CallToolResult:
        return await tool_body(_validate)(project, paths)

    @server.tool(name="check", description="Judge recorded conversations (files or folders) against a scenario or SOP file: each check with its detail.")
    async def check(
        subject: Annotated[str, Field(min_length=1, description="A scenario or SOP file, relative to the project folder.")],
        conversations: Paths,
        no_judge: NoJudge = False,
    ) -> CallToolResult:
        return await tool_body(_check)(project, subject, conversations, no_judge)

    @server.tool(name="run", description="Simulate and judge scenarios (a project, scenario files or folders): a results folder and its summary.")
    async def run(
        paths: Paths,
        ctx: Context,
        runs: Annotated[int, Field(ge=1, le=MAX_RUNS, description="Runs of each scenario.")] = 1,
        no_judge: NoJudge = False,
    ) -> CallToolResult:
        def progress(done: int, total: int, message: str) -> None:
            anyio.from_thread.run(functools.partial(ctx.report_progress, done, total, message))

        return await tool_body(_run)(project, paths, runs, no_judge, progress)

    @server.tool(name="report", description="The summary of a results folder (of `run` or `check --output`): counts, pass rates, failed checks.")
    async def report(results: OnePath) -> CallToolResult:
        return await tool_body(_report)(project, results)

    @server.tool(name="compare", description="What changed between two batches (results folders or `check --format json` files): flips, a paired test, a verdict.")
    async def compare(
        base: OnePath,
        new: OnePath,
        match: Annotated[str | None, Field(description="A pattern with one group: pair runs and conversations by what it captures.")] = None,
    ) -> CallToolResult:
        return await tool_body(_compare)(project, base, new, match)

    @server.tool(name="explain", description="Each failed or errored check of one run of a results folder, with its evidence events.")
    async def explain(
        results: OnePath,
        run: Annotated[str, Field(min_length=1, description="The run: SLUG/run_N, SLUG[run-N], or SLUG for run 1.")],
    ) -> CallToolResult:
        return await tool_body(_explain)(project, results, run)

    return server


class BearerToken:
    """ASGI middleware: a request without `Authorization: Bearer TOKEN` gets 401, before the MCP app sees it.

    Loopback is not private: any process of any user of the machine can connect to it, and the tools run the
    project's agent and read its transcripts. The token is made anew at each start and shown only to its user.
    """

    def __init__(self, app: Any, token: str):
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not self._allowed(scope):
            body = b'{"error": "unauthorized: send the token dialogcheck mcp printed at its start as Authorization: Bearer TOKEN"}'
            await send({
                "type": "http.response.start", "status": 401,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), (b"www-authenticate", b"Bearer")],
            })
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    def _allowed(self, scope: dict[str, Any]) -> bool:
        sent = [value for name, value in scope.get("headers", ()) if name.lower() == b"authorization"]
        return len(sent) == 1 and hmac.compare_digest(sent[0], self.expected)


def serve_http(server: MCPServer, host: str, port: int, token: str) -> None:
    """Serve `server` over Streamable HTTP at http://HOST:PORT/mcp, to clients that send `token` as a bearer token."""
    import uvicorn

    app = BearerToken(server.streamable_http_app(host=host), token)
    uvicorn.run(app, host=host, port=port, log_level="warning")
