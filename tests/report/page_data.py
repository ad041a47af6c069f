"""The HTML report's data read back in Python, as the page's script reads it: the tests' view of what the page lists."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

OUTCOME = {"p": "pass", "f": "fail", "e": "error", "s": "skip"}
_BLOCK = re.compile(r'<script type="application/json" class="dc-entries">(.*?)</script>', re.S)
_META = re.compile(r'<script type="application/json" id="dc-meta">(.*?)</script>', re.S)


@dataclass
class Entry:
    title: str
    verdict: str
    group: str
    #: (label, outcome, detail) of each check, in the order the page draws them.
    checks: list[tuple[str, str, str]]
    more: dict


def meta(page: str) -> dict:
    (found,) = _META.findall(page)
    return json.loads(found)


def entries(page: str) -> list[Entry]:
    """Every entry of the page, in input order, its titles and check values resolved as the script resolves them."""
    info = meta(page)
    values: list[list[str]] = [[] for _ in info["checks"]]
    found, title = [], ""
    for block in _BLOCK.findall(page):
        for record in json.loads(block):
            title = record[0] if isinstance(record[0], str) else title[: record[0][0]] + record[0][1]
            shape = info["shapes"][record[3]]
            checks = []
            for check, token in zip(shape, record[4]):
                if isinstance(token, str):
                    values[check].append(token)
                    token = len(values[check]) - 1
                value = values[check][token]
                checks.append((info["checks"][check][1], OUTCOME[value[0]], value[1:]))
            group = info["groups"][record[2]][1]
            found.append(Entry(title, OUTCOME[record[1]], group, checks, record[5] if len(record) > 5 else {}))
    return found
