"""A scenario or SOP sent to a worker (pickled, as worker processes and Ray receive it) judges as the original."""

from __future__ import annotations

import pickle

import pytest

from dialogcheck.engines.chunks import WholeFile
from dialogcheck.engines.work import CheckJob, check_chunk
from dialogcheck.results.codec import conversation_line
from dialogcheck.scenario.load import load_scenario
from dialogcheck.sop.load import load_sop
from tests.conftest import EXAMPLE, REPO

SUBJECTS = sorted((EXAMPLE / "eval" / "scenarios").glob("*.yml")) + sorted((EXAMPLE / "sops").glob("*.yml")) + sorted(
    (REPO / "benchmarks" / "fixtures").glob("scale_*.yml")
)
CONVERSATIONS = sorted((EXAMPLE / "conversations").glob("*.json*"))


@pytest.mark.parametrize("path", SUBJECTS, ids=lambda p: p.stem)
def test_a_pickled_subject_gives_the_same_results(path):
    subject = load_sop(path) if path.parent.name in ("sops",) or path.stem.endswith("_sop") else load_scenario(path)
    job = CheckJob(subject, no_judge=True, encode=conversation_line)
    sent = pickle.loads(pickle.dumps(job))
    for conversation in CONVERSATIONS:
        chunk = WholeFile(str(conversation), str(conversation))
        here = check_chunk(job, chunk)
        there = check_chunk(sent, chunk)
        assert here.items and [i.encoded for i in there.items] == [i.encoded for i in here.items], conversation.name
