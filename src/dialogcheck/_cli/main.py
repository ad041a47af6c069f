"""`dialogcheck`: the command group, and the one place exceptions become exit codes.

Each command's module is imported only when that command runs (or shows its
help), so `dialogcheck --help` and `dialogcheck validate` start quickly
instead of importing connectors, LLM clients and the batch runner.
"""

from __future__ import annotations

import logging
import sys
from importlib import import_module

import click

from .. import __version__

EXIT_BAD_INPUT = 2  # output.EXIT_BAD_INPUT, without importing output for a usage error

#: name -> (the command's module under `_cli` and object, the first paragraph of its help).
#: `dialogcheck --help` shortens the paragraphs as click would; a test keeps them equal to the commands' own.
COMMANDS = {
    "calibrate": ("calibrate:calibrate", "The judge's agreement with human labels: Cohen's kappa, the confusion matrix, where they disagree."),
    "check": ("check:check", "Judge recorded CONVERSATIONS (files or folders) against --scenario or --sop."),
    "compare": ("compare:compare", "What changed between two batches BASE and NEW: flips per key and check, a paired test, a verdict."),
    "environment": ("environment_cmd:environment", "Serve an environment file (eval/environments/NAME.yml) by hand, for developing an agent against it."),
    "import": ("import_cmd:import_cmd", "Convert FILE from another tool's format into native events (JSONL, one conversation a line)."),
    "mcp": ("mcp:mcp", "Serve validate, check, run, report, compare and explain as MCP tools for IDE agents (stdio by default)."),
    "report": ("report:report", "Print the summary of RESULTS_DIR (a folder `dialogcheck run` or `check --output` wrote), or render it with --html / --junit."),
    "run": ("run:run", "Simulate and judge scenarios: a PROJECT folder, scenario files, or folders of them (default: .)."),
    "validate": ("validate:validate", "Load and check scenario, SOP and config files (files or folders)."),
}


class LazyGroup(click.Group):
    """A group whose commands are imported by name on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attr = COMMANDS[cmd_name][0].split(":")
            command = getattr(import_module(f".{module}", __package__), attr)
            self.add_command(_paths_checked(command), cmd_name)
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in self.commands and args[0] not in COMMANDS:
            for name in COMMANDS:  # a mistyped name: click suggests the closest of the loaded commands
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Click's command list, from the table above for commands not imported yet."""
        names = self.list_commands(ctx)
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        for name in names:
            command = self.commands.get(name)
            if command is None:
                rows.append((name, click.Command(name, help=COMMANDS[name][1]).get_short_help_str(limit)))
            elif not command.hidden:
                rows.append((name, command.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


class CheckedPath(click.Path):
    """`click.Path`, refusing first a path no system call takes (a NUL, a name over 255 bytes): a usage error naming
    it, where the OS would answer with a `ValueError` or an `OSError` from deep inside a command."""

    def convert(self, value, param, ctx):
        if isinstance(value, str):
            from .._paths import path_problem
            from .._shown import clip, visible

            problem = path_problem(value)
            if problem is not None:
                self.fail(f"{problem}: {clip(visible(value), 120)}", param, ctx)
        return super().convert(value, param, ctx)


def _paths_checked(command: click.Command) -> click.Command:
    """`command` with every path it takes (an argument or option of type `click.Path`) checked as `CheckedPath`,
    and so every subcommand of a group."""
    for param in command.params:
        if type(param.type) is click.Path:
            param.type.__class__ = CheckedPath
    if isinstance(command, click.Group):
        for subcommand in command.commands.values():
            _paths_checked(subcommand)
    return command


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, prog_name="dialogcheck")
def cli() -> None:
    """Test conversational agents: deterministic checks over recorded events, plus LLM-judged criteria."""


def _wants_json(args: list[str]) -> bool:
    return any(a == "--format=json" for a in args) or any(
        a == "--format" and b == "json" for a, b in zip(args, args[1:])
    )


class StderrNotices(logging.Handler):
    """The package's warnings (a server that refused a format) on the stderr of the moment, masked: a command's
    notices are its own output, whatever handlers the embedding process has or lacks."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        from .._redact import redact

        try:
            sys.stderr.write(redact(record.getMessage()) + "\n")
            sys.stderr.flush()
        except (OSError, ValueError):  # a closed or broken stderr
            self.handleError(record)


def main(args: list[str] | None = None) -> None:
    """Run the CLI; a usage error is exit 2, as JSON too when `--format json` was asked for."""
    args = sys.argv[1:] if args is None else args
    notices, package = StderrNotices(), logging.getLogger("dialogcheck")
    package.addHandler(notices)
    try:
        _main(args)
    finally:
        package.removeHandler(notices)


def _main(args: list[str]) -> None:
    try:
        cli.main(args, prog_name="dialogcheck", standalone_mode=False)
    except click.UsageError as err:
        if _wants_json(args):
            from ..errors import error_document
            from ..report.json import dumps
            from .output import print_json

            print_json(dumps(error_document(err.format_message())))
        else:
            err.show()
        raise SystemExit(EXIT_BAD_INPUT) from None
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        raise SystemExit(130) from None
    except click.ClickException as err:
        err.show()
        raise SystemExit(err.exit_code) from None
