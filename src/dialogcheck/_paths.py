"""Which files a folder holds, and the safe file name of a name taken from input; a link out of the folder is refused.

The rule: a file the user names on the command line is read wherever it is; a
file found by walking a folder the user named must be inside that folder once
symbolic links are resolved, and so must a folder dialogcheck picks in a
project by itself (`eval/results`, the answer cache, `eval/calibration`). A CI
job walks folders it did not write: a link from `eval/scenarios/x.yml` to
`~/.aws/credentials` must not get that file read, and parts of it quoted in an
error message in a public log.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import sys
from collections.abc import Iterable
from pathlib import Path

from ._shown import clip, visible
from .errors import LoadError, Problem

#: Bytes a file name made from input may take (most file systems allow 255), with room for a suffix.
MAX_NAME_BYTES = 120
#: What no file name made from input may hold: path separators, control characters, and what Windows refuses.
_UNSAFE = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|\ud800-\udfff]')


def safe_file_name(name: str) -> str:
    """`name` itself when it is a plain file name, else a safe name made from it: a file named by input stays in its folder.

    A name taken from input (a scenario slug, a tau-bench `task_id`) may be `..`, hold a `/` or a NUL, or be very
    long. The safe name keeps the readable part and adds a hash of the whole name, so two names never share a file.
    """
    if not _UNSAFE.search(name) and name.strip(". ") and not name.endswith((".", " ")) and len(name.encode()) <= MAX_NAME_BYTES:
        return name
    readable = _UNSAFE.sub("_", name).strip(". ")
    while len(readable.encode()) > MAX_NAME_BYTES - 20:
        readable = readable[:-1]
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{readable.rstrip('. ')}~{digest}" if readable else f"slug~{digest}"


def files_in(folder: Path, suffixes: Iterable[str], *, skip_dirs: Iterable[str] = (), boundary: Path | None = None) -> list[Path]:
    """The files under `folder` with one of `suffixes` (in any case: `.JSONL` too), sorted, outside `skip_dirs`;
    raises `LoadError` for links leaving `boundary` (default: `folder`) and for links that lead to no file, which
    would otherwise drop out of the batch unsaid."""
    suffixes, skip = tuple(suffixes), set(skip_dirs)
    named = sorted(
        p for p in folder.rglob("*")
        if p.suffix.lower() in suffixes and not skip.intersection(p.relative_to(folder).parts[:-1])
    )
    found = [p for p in named if p.is_file()]
    inside = (boundary or folder).resolve()
    problems = [
        Problem(
            f"this file is a link to {os.readlink(p)}, which leads to no file (it is missing, or the links go round):"
            " fix the link or remove it",
            str(p),
        )
        for p in named
        if p.is_symlink() and not p.exists()
    ] + [
        Problem(
            f"this file is a link to {p.resolve()}, outside {boundary or folder}: files found in a folder must stay inside it"
            " (name the file itself on the command line to read it)",
            str(p),
        )
        for p in found
        if not p.resolve().is_relative_to(inside)
    ]
    if problems:
        raise LoadError(sorted(problems, key=lambda problem: problem.file))
    return found


def refuse_link_out(folder: Path, path: Path) -> None:
    """`LoadError` at the first link on the way from `folder` down to `path` (a file dialogcheck reads from a folder it
    wrote, such as a results folder) that leads outside `folder`, or to no file; nothing when every part stays inside.

    A results folder is input too: a `run_1.events.jsonl` linked to `~/.ssh/id_rsa` must not get that file shown in
    a report, or sent to an MCP client.
    """
    base = resolved(folder)
    current = folder
    for part in path.relative_to(folder).parts:
        current = current / part
        if not current.is_symlink():
            continue
        target = resolved(current)
        if target is None or not target.exists():
            raise LoadError.one(f"this is a link to {os.readlink(current)}, which leads to no file: fix the link or remove it", str(current))
        if base is None or not target.is_relative_to(base):
            raise LoadError.one(
                f"this is a link to {target}, outside the results folder {folder}: a results folder is read only inside it"
                " (copy the file in to read it)",
                str(current),
            )


def require_folder(folder: Path, what: str, target: str | Path) -> None:
    """`LoadError` when the nearest part of `folder` that exists is not a folder (a file, a link to nothing), so
    `target` cannot be written in it: said before anything is written, the same way by every command that writes."""
    for part in (folder, *folder.parents):
        if os.path.lexists(part):
            if not part.is_dir():
                raise LoadError.one(f"cannot write {what}: expected a folder here, to hold {target}", str(part))
            return


def resolved(path: Path) -> Path | None:
    """`path` with `..` and links resolved; None for a loop of links (which Python 3.11 raises as `RuntimeError`)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


#: The bytes of one name in a path, and of a whole path, that Linux and macOS take (NAME_MAX, PATH_MAX less its NUL).
NAME_MAX_BYTES, PATH_MAX_BYTES = 255, 4095


def path_problem(name: str) -> str | None:
    """Why no system call can take `name` as a path (a NUL, a name or the whole too long, not encodable), or None.

    Said before the path is used, as the user's mistake it is: the OS would answer with a `ValueError`, or an
    `OSError` deep in some library, which reads as a bug of dialogcheck's.
    """
    if "\x00" in name:
        return "a path cannot hold a NUL character (\\x00)"
    try:
        raw = name.encode(sys.getfilesystemencoding(), "surrogateescape")
    except UnicodeEncodeError:
        return f"this path cannot be written in the file system's encoding ({sys.getfilesystemencoding()})"
    if len(raw) > PATH_MAX_BYTES:
        return f"this path is {len(raw):,} bytes long, and the system takes at most {PATH_MAX_BYTES:,}"
    longest = max(raw.split(b"/"), key=len)
    if len(longest) > NAME_MAX_BYTES:
        return f"a name in this path is {len(longest):,} bytes long, and the system takes at most {NAME_MAX_BYTES} a name"
    return None


def check_path(name: str) -> None:
    """`LoadError` naming `name` (its start, its control characters escaped) when `path_problem` finds one."""
    problem = path_problem(name)
    if problem is not None:
        raise LoadError.one(problem, clip(visible(name), 120))


def inside(root: Path, name: str) -> Path:
    """`name` (relative to `root`, or absolute) once links are resolved, when it stays inside `root`; else `LoadError`.

    A server started in a project folder (`dialogcheck mcp`) reads and writes only there, whatever path a client sends.
    """
    check_path(name)
    base = root.resolve()
    target = resolved(base / name)
    if target is None:
        raise LoadError.one("this path is a loop of symbolic links: only files inside the project folder can be used", name)
    if not target.is_relative_to(base):
        raise LoadError.one(f"this path is outside the project folder {base}: only files inside it can be used", name)
    return target


def project_folder(root: Path, folder: Path, what: str, elsewhere: str) -> Path:
    """`folder`, one dialogcheck picks in the project at `root` by itself, when it stays inside once links are resolved; else `LoadError`.

    A project is input too: a link committed as `eval/results -> ~/.ssh` must not get dialogcheck's files written there.
    `what` names the folder in the message, `elsewhere` says how to name a folder outside the project instead.
    """
    base = root.resolve()
    target = resolved(folder)
    if target is None:
        raise LoadError.one(f"{what} is a loop of symbolic links: it must be a folder inside the project folder {base} ({elsewhere})", str(folder))
    if not target.is_relative_to(base):
        message = f"{what} leads to {target} through a symbolic link, outside the project folder {base}: it must stay inside the project ({elsewhere})"
        raise LoadError.one(message, str(folder))
    return folder


def _kind(mode: int) -> str:
    """What a file that is not a regular one is, in the words of a message."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "a special file"


def open_regular(path: str | Path, *, follow_links: bool = True) -> int:
    """A read-only descriptor of the regular file at `path`; `OSError` for anything else, a named pipe, a device or a folder.

    For a path taken from a file an earlier process wrote (a plan, a cache): opened without waiting, so a named
    pipe never blocks the open, and refused before a byte is read, so /dev/zero is never read without end.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow_links else os.O_NOFOLLOW)
    fd = os.open(path, flags)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise OSError(errno.EINVAL, f"not a regular file ({_kind(mode)})", str(path))
    return fd


def read_regular(path: str | Path, limit: int, *, follow_links: bool = True) -> bytes:
    """The bytes of the regular file at `path` (`open_regular`); `OSError` too for a file past `limit` bytes."""
    with os.fdopen(open_regular(path, follow_links=follow_links), "rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit:,} bytes", str(path))
    return data
