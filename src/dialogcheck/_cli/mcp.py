"""`dialogcheck mcp`: serve dialogcheck's commands as MCP tools, over stdio or Streamable HTTP on loopback.

The server (`mcp_server`) needs the `mcp` extra; without it this command says
how to install it, exit 2, before anything starts. Over HTTP every request
must carry the token made at the start and printed once on stderr (any user
of the machine can reach loopback; only the one who started it sees stderr).
"""

from __future__ import annotations

import secrets
from pathlib import Path

import click

from .env_options import env_options

LOOPBACK = "127.0.0.1"


@click.command()
@click.option("--http", "port", type=click.IntRange(1, 65535), metavar="PORT", help=f"Serve Streamable HTTP on {LOOPBACK}:PORT (path /mcp) instead of stdio.")
@click.option(
    "--root", type=click.Path(exists=True, file_okay=False), metavar="DIR",
    help="The project folder: paths are relative to it and must stay inside it (default: the current folder).",
)
@env_options
def mcp(port: int | None, root: str | None) -> None:
    """Serve validate, check, run, report, compare and explain as MCP tools for IDE agents (stdio by default).

    Paths the tools take are relative to the folder the server is started in (the project, or --root), and must
    stay inside it; no config above it is looked for. With --http, every request must send the token printed on
    stderr at the start as `Authorization: Bearer TOKEN` (others get 401).
    Every tool loads its files under the server's --safe-env and --allow-env (or DIALOGCHECK_SAFE_ENV and _ALLOW_ENV).
    """
    try:
        from .mcp_server import make_server
    except ModuleNotFoundError as err:
        if not (err.name or "").startswith(("mcp", "pydantic", "anyio")):
            raise
        raise click.UsageError("dialogcheck mcp needs the MCP SDK: pip install 'dialogcheck[mcp]'") from None
    server = make_server(Path(root) if root else Path.cwd())
    if port is None:
        server.run("stdio")
        return
    from .mcp_server import serve_http

    token = secrets.token_urlsafe(32)
    click.echo(f"dialogcheck mcp: serving http://{LOOPBACK}:{port}/mcp; send every request with the header `Authorization: Bearer {token}`", err=True)
    serve_http(server, LOOPBACK, port, token)
