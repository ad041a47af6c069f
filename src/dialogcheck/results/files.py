"""What goes in a results folder, and reading it back (for `--resume` and `dialogcheck report`).

```
<results>/plan.json  summary.txt  summary.json  .dialogcheck.lock
<results>/<slug>/run_N.json  run_N.txt  run_N.events.jsonl
```
Every file is written atomically; a run's files are written the moment it
finishes, the summary after every run, so a batch killed midway leaves a
readable folder that `--resume` completes. A folder holds one batch: a new
batch takes only a new or empty folder, and holds its lock while it runs.
"""

from __future__ import annotations

import os
from pathlib import Path

from .._paths import safe_file_name
from .._shown import listed
from ..errors import COMMAND_LINE, LoadError, Spelling
from ..events.native import event_lines
from .atomic import write_atomic
from .codec import encode_run, encode_summary
from .lock import LOCK_FILE, BatchLock
from .model import BatchResult, RunResult
from .plan import Plan, read_plan

PLAN = "plan.json"
SUMMARY_JSON = "summary.json"
SUMMARY_TXT = "summary.txt"


def slug_folder(slug: str) -> str:
    """The folder a scenario's runs go in: the slug itself when it is a plain name, else a safe name made from it.

    A slug comes from a file name or from library code, so it may be `..`, hold a `/`, a NUL or be
    very long; none of these may place a file outside the results folder (`safe_file_name`).
    """
    return safe_file_name(slug)


def new_folder(parent: Path, name: str) -> Path:
    """A folder made now under `parent`: `name`, else `name-2`, `name-3`, ... (two batches started in one second)."""
    number = 1
    while True:
        folder = parent / (name if number == 1 else f"{name}-{number}")
        try:
            folder.mkdir(parents=True)
            return folder
        except FileExistsError:
            number += 1
        except OSError as err:
            raise LoadError.of_os("cannot make the results folder", err, str(folder)) from None


class ResultsFolder:
    """One batch's folder: the plan, the run files, the summary."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def claim(self, spelling: Spelling = COMMAND_LINE) -> BatchLock:
        """Lock a new or empty folder for a new batch (made if missing); nothing is written when it is not empty.

        The refusal's advice names the options as `spelling` spells them (`--resume DIR`, `resume='DIR'`)."""
        try:
            return BatchLock.claim(self.root, lambda root: self._refuse_unless_empty(spelling), command="run")
        except OSError as err:
            raise LoadError.of_os("cannot make the results folder", err, str(self.root)) from None

    def lock(self) -> BatchLock:
        """Lock the folder of a batch being resumed."""
        return BatchLock.take(self.root)

    def _refuse_unless_empty(self, spelling: Spelling) -> None:
        try:
            entries = sorted(name for name in os.listdir(self.root) if name != LOCK_FILE)
        except FileNotFoundError:
            return
        except OSError as err:
            raise LoadError.of_os("cannot use this as the results folder", err, str(self.root)) from None
        if not entries:
            return
        if PLAN in entries:
            advice = f"it holds a batch already: finish that one with {spelling.option('resume', str(self.root))}, or give another folder"
        else:
            advice = f"it holds {listed(entries, 3)}: give another folder"
        raise LoadError.one(f"{spelling.option('results')} must name a new or empty folder, and this one is not empty ({advice})", str(self.root))

    def run_base(self, slug: str, number: int) -> Path:
        """Where a run's files go (their names add `.json`, `.txt`, `.events.jsonl`); always inside the folder."""
        folder = self.root / slug_folder(slug)
        if folder.is_symlink() and not folder.resolve().is_relative_to(self.root.resolve()):
            raise OSError(f"{folder} is a link to {folder.resolve()}, outside the results folder: results are written only inside it")
        return folder / f"run_{int(number)}"

    @property
    def plan_path(self) -> Path:
        return self.root / PLAN

    def write_plan(self, plan: Plan) -> None:
        write_atomic(self.plan_path, plan.to_json())

    def read_plan(self) -> Plan:
        """The batch's plan, or a `LoadError` at what is wrong with it."""
        return read_plan(self.plan_path)

    def write_run(self, run: RunResult, text: str) -> None:
        """The run's three files; all are encoded before any is written, and `run_N.json`, its mark of a finished run, last."""
        base = self.run_base(run.slug, run.number)
        events = event_lines(run.events)
        encoded = encode_run(run)
        write_atomic(base.with_name(base.name + ".events.jsonl"), events)
        write_atomic(base.with_name(base.name + ".txt"), text)
        write_atomic(base.with_name(base.name + ".json"), encoded)

    def write_summary(self, batch: BatchResult, text: str) -> None:
        write_atomic(self.root / SUMMARY_JSON, encode_summary(batch))
        write_atomic(self.root / SUMMARY_TXT, text)
