"""`calibrate`: the configured judge against human labels, and the calibration file it earns."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from ..errors import LoadError
from ..report.styled import Styled
from .answer import EXIT_ERRORED, EXIT_OK, Answer

NO_JUDGE = "calibrate needs a judge: set `evaluation.llm` in the project's eval/conftest.yml (or pass --config)"


def calibrate(
    scenario_path: str, labels_path: str, *, config_path: str | None = None, use_cache: bool = True, cache_dir: str | None = None,
    replay: bool = False,
) -> Answer:
    """Run the configured judge on every labelled pair of `labels_path` (criteria of the scenario at
    `scenario_path`) and write the calibration file it earns; the answer is its figures and where it was written,
    exit code 3 when the judge broke on some pair (its figures leave those out). `LoadError` for bad input, a
    model that cannot be used, or a file that cannot be written."""
    from ..calibration import binding_of, calibration_document, calibration_folder, conversation_of, judge_pairs, read_labels, write_calibration
    from ..checking import load_subject
    from ..config import find_config, load_config
    from ..judge.setup import judge_from_config
    from ..llm.base import LLMError
    from ..scenario.model import Scenario

    try:
        path = Path(config_path) if config_path else find_config(scenario_path)
        config = load_config(path) if path is not None else None
        scenario = load_subject([scenario_path], None, None)
        if not isinstance(scenario, Scenario):
            raise LoadError.one("calibrate takes one scenario file: its criteria are what was labelled", scenario_path)
        labels = read_labels(labels_path, scenario)
        judge = judge_from_config(config, use_cache=use_cache, cache_dir=Path(cache_dir) if cache_dir else None, replay=replay)
        if judge is None or config is None:
            raise LoadError.one(NO_JUDGE, str(path or scenario_path))
        conversations = {label.source: conversation_of(label, labels_path, config.root) for label in labels}
        calibration_folder(config.root)  # a link out of the project is refused before the judge is asked anything
    except LLMError as err:
        raise LoadError.one(str(err), str(config_path or scenario_path)) from None
    pairs = asyncio.run(judge_pairs(judge, scenario, labels, conversations))
    try:  # scikit-learn missing, or the file cannot be written: a LoadError
        document = calibration_document(pairs, binding_of(judge))
        written = write_calibration(config.root, document)
    except OSError as err:
        raise LoadError.of_os("cannot write the calibration", err, str(err.filename or config.root)) from None
    broke = any(pair["judge"] == "error" for pair in document["undecided"])
    return Answer({**document, "calibration_file": str(written)}, render_calibration(document, str(written)), EXIT_ERRORED if broke else EXIT_OK)


def _figure(value: Any, pattern: str) -> str:
    return "-" if value is None else format(value, pattern)


def _summary_line(name: str, figures: dict[str, Any]) -> str:
    c = figures["confusion"]
    return (
        f"{name}: {figures['decided']}/{figures['pairs']} decided, agreement {_figure(figures['agreement'], '.0%')}, "
        f"kappa {_figure(figures['kappa'], '.2f')}, human pass rate {_figure(figures['base_rate'], '.0%')}; "
        f"judge pass/human pass {c['judge_pass_human_pass']}, judge pass/human fail {c['judge_pass_human_fail']}, "
        f"judge fail/human pass {c['judge_fail_human_pass']}, judge fail/human fail {c['judge_fail_human_fail']}\n"
    )


def render_calibration(document: dict[str, Any], written: str) -> Styled:
    """The text of `calibrate`: overall, per criterion, then the pairs left undecided and those in disagreement."""
    from .._shown import shown

    text = Styled(_summary_line("overall", document), "bold")
    for criterion, figures in document["criteria"].items():
        text.append("  " + shown(_summary_line(f"criterion {criterion!r}", figures).rstrip("\n")) + "\n")
    for title, key in (("undecided by the judge", "undecided"), ("judge and human disagree", "disagreements")):
        if document[key]:
            text.append(f"{title}:\n", "bold")
        for pair in document[key]:
            line = f"  {pair['source']} {pair['criterion']!r}: human {pair['human']}, judge {pair['judge']}: {pair['rationale']}"
            text.append(shown(line) + "\n")
    text.append(f"calibration file: {shown(written)}\n", "dim")
    return text
