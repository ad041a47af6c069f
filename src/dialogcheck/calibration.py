"""How far to trust the judge: its agreement with human labels, and the calibration file that records it.

`dialogcheck calibrate` runs the configured judge on every labelled pair
(a conversation and one of its scenario's criteria) and compares its verdicts
with the humans': agreement, Cohen's kappa (scikit-learn's), the confusion
matrix over the pairs the judge decided, the base rate, the pairs it left
undecided and the pairs where it disagrees. The calibration file is bound to
what decides a verdict (provider, model, options, the prompt template's
hash); `--require-calibration MIN_KAPPA` finds the file of the judge in use,
and a judge without one, or below the floor, decides nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ._paths import project_folder, resolved
from .checks.base import Outcome
from .checks.judged import Judgement, JudgeRequest
from .errors import LoadError, Problem, did_you_mean, os_reason
from .events.load import load_conversation
from .events.model import Conversation
from .judge.base import Judge, judge_one
from .results.atomic import write_atomic
from .scenario.model import Scenario

LABELS = ("pass", "fail")
MISSING_SKLEARN = "dialogcheck calibrate needs scikit-learn for Cohen's kappa: pip install 'dialogcheck[calibrate]'"
#: Where a project keeps its calibration files, one per judge binding.
CALIBRATION_FOLDER = Path("eval") / "calibration"


@dataclass(frozen=True)
class Label:
    """One human label: a conversation, one criterion of the scenario, pass or fail."""

    source: str
    criterion: str
    label: str
    line: int
    #: Where `source`'s value starts on its line (1 when it cannot be told).
    column: int = 1


@dataclass(frozen=True)
class Pair:
    """A labelled pair and what the judge decided about it."""

    label: Label
    judgement: Judgement

    @property
    def judged(self) -> str | None:
        """pass or fail when the judge decided, None when it left the pair undecided (error, inconclusive)."""
        outcome = self.judgement.outcome
        return outcome.value if outcome in (Outcome.PASS, Outcome.FAIL) else None


def read_labels(path: str | Path, scenario: Scenario) -> list[Label]:
    """Every label of a JSONL labels file; `LoadError` with each bad line's position (criteria are the scenario's)."""
    problems: list[Problem] = []
    labels = []
    where = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise LoadError.of_os("cannot read the labels", err, where) from None
    except UnicodeDecodeError as err:
        raise LoadError.one(f"the labels are not UTF-8 ({err.reason})", where) from None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        label, problem = _label(line, number, scenario)
        if problem is not None:
            problems.append(Problem(problem, where, number, 1))
        else:
            labels.append(label)
    if not problems and not labels:
        problems.append(Problem("the labels file holds no label", where, 1, 1))
    if problems:
        raise LoadError(problems)
    return labels


def _label(line: str, number: int, scenario: Scenario) -> tuple[Any, str | None]:
    expected = 'expected {"source": "<conversation>", "criterion": "<text>", "label": "pass"|"fail"}'
    try:
        item = orjson.loads(line)
    except orjson.JSONDecodeError as err:
        return None, f"not JSON ({err}): {expected}"
    if not isinstance(item, dict) or set(item) != {"source", "criterion", "label"} or not all(isinstance(v, str) for v in item.values()):
        return None, expected
    if item["label"] not in LABELS:
        return None, f"`label` must be pass or fail, got {item['label']!r}"
    criteria = scenario.goals.criteria
    if item["criterion"] not in criteria:
        return None, f"{item['criterion']!r} is not a criterion of scenario {scenario.name!r}{did_you_mean(item['criterion'], criteria)}"
    return Label(item["source"], item["criterion"], item["label"], number, _value_column(line, "source")), None


def _value_column(line: str, key: str) -> int:
    """The column where the string value of `key` opens on a JSON line, or 1 (a key written with escapes)."""
    at = line.find(f'"{key}"')
    colon = line.find(":", at + len(key) + 2) if at >= 0 else -1
    opening = line.find('"', colon) if colon >= 0 else -1
    return opening + 1 if opening >= 0 else 1


def conversation_of(label: Label, labels_path: str, root: Path) -> Conversation:
    """The labelled conversation: a file as `check` names it, or a results folder's `<slug>/run_N`.

    Only inside the project at `root`, once `..` and links are resolved: a labels file is input (a branch nobody
    reviewed may hold it), and what it names is sent to the judge, so `/home/ci/.aws/credentials` or
    `../../secrets.jsonl` is a load error at its line and column, never read.
    """
    path = Path(label.source)
    if not path.is_file() and Path(f"{label.source}.events.jsonl").is_file():
        path = Path(f"{label.source}.events.jsonl")
    target = resolved(path.absolute())
    if target is None or not target.is_relative_to(root.resolve()):
        raise LoadError.one(
            f"the conversation {label.source!r} is outside the project folder {root.resolve()}: calibrate reads and sends to the "
            "judge only conversations inside the project (copy it into the project)",
            labels_path, label.line, label.column,
        )
    try:
        return load_conversation(path)
    except OSError as err:
        raise LoadError.one(f"cannot read the conversation {label.source!r}: {os_reason(err)}", labels_path, label.line) from None


async def judge_pairs(judge: Judge, scenario: Scenario, labels: Sequence[Label], conversations: Mapping[str, Conversation]) -> list[Pair]:
    """The judge's decision on every labelled pair, asked as `check` asks it (so the answer cache is shared)."""
    index = {text: i for i, text in enumerate(scenario.goals.criteria)}

    async def one(label: Label) -> Pair:
        request = JudgeRequest(label.criterion, framework_tools=scenario.framework_tools, id=f"criterion:{index[label.criterion]}")
        return Pair(label, await judge_one(judge, conversations[label.source], request))

    return list(await asyncio.gather(*(one(label) for label in labels)))


def cohen_kappa(judge: Sequence[str], human: Sequence[str]) -> float | None:
    """scikit-learn's Cohen's kappa of two label lists; None when there is nothing to agree on (no pair, or one
    label throughout on both sides, where kappa is undefined)."""
    if not judge:
        return None
    try:
        from sklearn.metrics import cohen_kappa_score
    except ImportError:
        raise LoadError.one(MISSING_SKLEARN) from None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the undefined case warns, and comes back as nan
        kappa = float(cohen_kappa_score(list(judge), list(human), labels=list(LABELS)))
    return None if math.isnan(kappa) else kappa


def agreement(pairs: Sequence[Pair]) -> dict[str, Any]:
    """What the judge's verdicts and the humans' say together, over `pairs` (one criterion's, or all)."""
    decided = [p for p in pairs if p.judged is not None]
    judge, human = [p.judged for p in decided], [p.label.label for p in decided]
    confusion = {
        f"judge_{j}_human_{h}": sum(1 for p in decided if (p.judged, p.label.label) == (j, h)) for j in LABELS for h in LABELS
    }
    return {
        "pairs": len(pairs),
        "decided": len(decided),
        "agreement": sum(1 for j, h in zip(judge, human) if j == h) / len(decided) if decided else None,
        "kappa": cohen_kappa(judge, human),  # type: ignore[arg-type]  # the decided pairs: no verdict of theirs is None
        "confusion": confusion,
        "base_rate": sum(1 for p in pairs if p.label.label == "pass") / len(pairs) if pairs else None,
    }


def calibration_document(pairs: Sequence[Pair], binding: Mapping[str, Any]) -> dict[str, Any]:
    """`calibrate --format json`, and the calibration file: overall, then under `criteria` per criterion."""
    criteria: dict[str, list[Pair]] = {}
    for pair in pairs:
        criteria.setdefault(pair.label.criterion, []).append(pair)
    return {
        **agreement(pairs),
        "criteria": {text: agreement(group) for text, group in criteria.items()},
        "undecided": [_pair_document(p) for p in pairs if p.judged is None],
        "disagreements": [_pair_document(p) for p in pairs if p.judged is not None and p.judged != p.label.label],
        "binding": dict(binding),
    }


def _pair_document(pair: Pair) -> dict[str, Any]:
    judged = "inconclusive" if pair.judgement.inconclusive else pair.judgement.outcome.value
    return {"source": pair.label.source, "criterion": pair.label.criterion, "human": pair.label.label, "judge": judged, "rationale": pair.judgement.detail}


def binding_of(judge: Any) -> dict[str, Any]:
    """What decides the verdicts of `judge` (a `ChatJudge`): provider, model, options, the prompt template's hash."""
    settings = judge.settings
    template = judge.templates.source("criteria_judge_prompt")
    return {
        "provider": settings.provider,
        "model": settings.model,
        "options": dict(settings.options),
        "prompt_template_sha256": hashlib.sha256(template.encode("utf-8")).hexdigest(),
    }


def calibration_path(root: Path, binding: Mapping[str, Any]) -> Path:
    """The calibration file of a binding in the project at `root`: named by the binding's hash."""
    digest = hashlib.sha256(orjson.dumps(dict(binding), option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]
    return root / CALIBRATION_FOLDER / f"{digest}.json"


def calibration_folder(root: Path) -> Path:
    """`eval/calibration` of the project at `root`; `LoadError` when a link takes it out of the project."""
    return project_folder(root, root / CALIBRATION_FOLDER, "the calibration folder", "make it a folder of the project")


def write_calibration(root: Path, document: Mapping[str, Any]) -> Path:
    calibration_folder(root)
    path = calibration_path(root, document["binding"])
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, orjson.dumps(dict(document), option=orjson.OPT_INDENT_2).decode() + "\n")
    return path


def uncalibrated_reason(root: Path, judge: Any, min_kappa: float) -> str | None:
    """Why `judge` may not decide under `--require-calibration MIN_KAPPA`, or None when its calibration holds."""
    path = calibration_path(root, binding_of(judge))
    try:
        document = orjson.loads(path.read_bytes())
    except (OSError, ValueError):
        return f"no calibration file of this judge (provider, model, options, prompt template) in {root / CALIBRATION_FOLDER}: run dialogcheck calibrate"
    kappa = document.get("kappa") if isinstance(document, dict) else None
    if not isinstance(kappa, (int, float)) or kappa < min_kappa:
        shown = "undefined" if not isinstance(kappa, (int, float)) else f"{kappa:.2f}"
        return f"the judge's kappa against human labels is {shown}, below the required {min_kappa:g} ({path})"
    return None


def label_sources(labels: Iterable[Label]) -> list[str]:
    return list(dict.fromkeys(label.source for label in labels))
