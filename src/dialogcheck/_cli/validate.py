"""`dialogcheck validate PATH...`: load and check scenario, SOP and config files (`commands.validate`).

Kept quick to start: the JSON and error renderers are imported only when
used, and text is printed without rich unless it goes to a terminal.
"""

from __future__ import annotations

import click

from ..commands.validate import validate as validation
from ..errors import LoadError
from .env_options import env_options
from .output import FORMAT_OPTION, fail_with_load_error, print_json, print_text


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@FORMAT_OPTION
@env_options
def validate(paths: tuple[str, ...], output_format: str) -> None:
    """Load and check scenario, SOP and config files (files or folders).

    A folder is searched for dialogcheck's files: a project's eval/conftest.yml, eval/scenarios/ and sops/;
    in another folder, the YAML files whose top-level key is `scenario` or `sop` (the others are skipped).
    """
    try:
        said = validation(paths)
    except LoadError as err:
        fail_with_load_error(err, output_format)
    if output_format == "json":
        from ..report.json import dumps

        print_json(dumps(said.document))
    else:
        print_text(said.text, stderr=False)
        if said.notes.pieces:
            print_text(said.notes, stderr=True)
    raise SystemExit(said.exit_code)
