"""User-facing load errors: every one names a file, a line and a column.

Inner code reports positions; the boundary that knows the file fills it in.
A file's problems are collected and raised together, so a user fixes them in
one pass instead of one rerun per mistake.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from ._shown import counted


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input file, at a 1-based line and column."""

    message: str
    file: str = ""
    line: int = 1
    column: int = 1

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.message}"

    def to_dict(self) -> dict[str, object]:
        return {"message": self.message, "file": self.file, "line": self.line, "column": self.column}


class DialogcheckError(Exception):
    """What dialogcheck raises for anything it cannot do: the one class a caller catches them all by.

    `LoadError` is bad input (exit 2); the others say an agent, a model, a judge or an engine could not be used,
    or that a batch is unfinished.
    """


def os_reason(err: OSError) -> str:
    """What an OSError says to a user: the system's words for it (`No such file or directory`), else the error."""
    return err.strerror or str(err)


class LoadError(DialogcheckError):
    """Bad input: one or more problems found while loading files.

    The only exception type for user mistakes; the CLI maps it to exit code 2.
    """

    def __init__(self, problems: Iterable[Problem]):
        self.problems: tuple[Problem, ...] = tuple(problems)
        if not self.problems:
            raise ValueError("LoadError needs at least one problem")
        super().__init__("\n".join(str(p) for p in self.problems))

    @classmethod
    def one(cls, message: str, file: str = "", line: int = 1, column: int = 1) -> LoadError:
        return cls([Problem(message, file, line, column)])

    @classmethod
    def of_os(cls, doing: str, err: OSError, file: str | None = None, line: int = 1) -> LoadError:
        """`doing: reason` for a file the system would not read or write (`cannot read file: Permission denied`), at
        `file`, else at the file the error names."""
        return cls.one(f"{doing}: {os_reason(err)}", str(file if file is not None else err.filename or ""), line)

    def in_file(self, file: str) -> LoadError:
        """The same problems, attributed to `file` where no file was set yet."""
        return LoadError(replace(p, file=p.file or file) for p in self.problems)


def error_document(error: BaseException | str) -> dict[str, Any]:
    """The one JSON document of an error, which every command's `--format json`, `run` and the MCP server's tool
    errors give: `{"error": {message, file, line, column}}`, with a `LoadError`'s every problem under `problems`; an
    error that is not the input's (an agent that is down, a batch that could not finish) has no place (`None`)."""
    if isinstance(error, LoadError):
        return {"error": {**error.problems[0].to_dict(), "problems": [p.to_dict() for p in error.problems]}}
    return {"error": {"message": str(error), "file": None, "line": None, "column": None}}


@dataclass(frozen=True)
class Spelling:
    """How a message names one of the caller's options, so its advice is what the reader can type where they are:
    a flag of the command line (`--resume DIR`), or a keyword argument of the Python API (`resume='DIR'`)."""

    api: bool = False
    #: Options whose keyword argument is named otherwise than their flag: (flag's name, argument's name).
    renamed: tuple[tuple[str, str], ...] = ()

    def option(self, name: str, value: str | None = None) -> str:
        """The option, and `value` as the reader would type it when one is given."""
        if self.api:
            name = dict(self.renamed).get(name, name)
            return f"{name}=" if value is None else f"{name}={value!r}"
        flag = "--" + name.replace("_", "-")
        return flag if value is None else f"{flag} {value}"

    def about(self, name: str, text: str) -> str:
        """The option with a description of its value (`--pair /task-(\\d+)/`, `pair=/task-(\\d+)/`)."""
        return f"{self.option(name)}{text}" if self.api else f"{self.option(name)} {text}"


#: The command line's spelling: `--results DIR`.
COMMAND_LINE = Spelling()
#: The Python API's: `results='DIR'`.
PYTHON_API = Spelling(api=True, renamed=(("persona", "personas"),))


#: Problems of one file shown at most; past them one more line says how many were left out, and where they start.
MAX_PROBLEMS = 50


@dataclass(frozen=True)
class LeftOut(Problem):
    """The line that stands for the problems left out past the limit, at the first of them."""

    count: int = 0


class ProblemLog:
    """A file's problems as they are found: the first `MAX_PROBLEMS` kept, the rest counted, never dropped unsaid."""

    def __init__(self, limit: int = MAX_PROBLEMS) -> None:
        self.limit = limit
        self.kept: list[Problem] = []
        self.left_out = 0
        self._first_left_out: Problem | None = None

    def __bool__(self) -> bool:
        return bool(self.kept)

    @property
    def full(self) -> bool:
        return len(self.kept) >= self.limit

    @property
    def counting(self) -> bool:
        """Whether a further problem is only counted, its place unused: call `count_one` and spare working it out."""
        return self.full and self._first_left_out is not None

    def count_one(self) -> None:
        self.left_out += 1

    def add(self, problem: Problem) -> None:
        if isinstance(problem, LeftOut):  # another log's count, taken over
            self.left_out += problem.count
        elif not self.full:
            self.kept.append(problem)
            return
        else:
            self.left_out += 1
        self._first_left_out = self._first_left_out or problem

    def extend(self, problems: Iterable[Problem]) -> None:
        for problem in problems:
            self.add(problem)

    def problems(self) -> list[Problem]:
        """The kept problems, then one at the first left out saying how many were (when any were)."""
        first = self._first_left_out
        if not self.left_out or first is None:
            return list(self.kept)
        more = f"... and {counted(self.left_out, 'more error')} from here on (only the first {self.limit:,} are shown)"
        return [*self.kept, LeftOut(more, first.file, first.line, first.column, self.left_out)]

    def error(self) -> LoadError:
        return LoadError(self.problems())


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """A ' (did you mean `x`?)' suffix for a misspelt key, or ''."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


#: Byte order marks of the encodings a Windows editor may save in; UTF-32 first (its LE mark starts like UTF-16's).
_OTHER_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


def decode_utf8(data: bytes, file: str, first_line: int = 1) -> str:
    """Decode UTF-8, or raise a `LoadError` at the line and column of the first bad byte (or naming a UTF-16/32 file)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        if first_line == 1:
            for mark, encoding in _OTHER_BOMS:
                if data.startswith(mark):
                    message = f"the file is {encoding} text (it starts with a {encoding} byte order mark): save it as UTF-8"
                    raise LoadError.one(message, file, 1, 1) from None
        before = data[: err.start]
        line = first_line + before.count(b"\n")
        column = err.start - (before.rfind(b"\n") + 1) + 1
        message = f"invalid UTF-8 byte 0x{data[err.start]:02x}: expected UTF-8 text"
        raise LoadError.one(message, file, line, column) from None
