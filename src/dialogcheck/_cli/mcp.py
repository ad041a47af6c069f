"""`dialogcheck mcp`: serve dialogcheck's commands as MCP tools, over stdio or Streamable HTTP on loopback.

The server (`mcp_server`) needs the `mcp` extra; without it this command says
how to install it, exit 2, before anything starts.
"""

from __future__ import annotations

from pathlib import Path

import click

from .env_options import env_options

LOOPBACK = "127.0.0.1"


@click.command()
@click.option("--http", "port", type=click.IntRange(1, 65535), metavar="PORT", help=f"Serve Streamable HTTP on {LOOPBACK}:PORT (path /mcp) instead of stdio.")
@env_options
def mcp(port: int | None) -> None:
    """Serve validate, check, run, report, compare and explain as MCP tools for IDE agents (stdio by default).

    Paths the tools take are relative to the folder the server is started in (the project), and must stay inside it.
    Every tool loads its files under the server's --safe-env and --allow-env (or DIALOGCHECK_SAFE_ENV and _ALLOW_ENV).
    """
    try:
        from .mcp_server import make_server
    except ModuleNotFoundError as err:
        if not (err.name or "").startswith(("mcp", "pydantic", "anyio")):
            raise
        raise click.UsageError("dialogcheck mcp needs the MCP SDK: pip install 'dialogcheck[mcp]'") from None
    server = make_server(Path.cwd())
    if port is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host=LOOPBACK, port=port)
