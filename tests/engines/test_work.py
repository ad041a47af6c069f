"""A scenario or SOP sent to a worker (pickled, as worker processes and Ray receive it) judges as the original."""

from __future__ import annotations

import pickle
from dataclasses import replace

import pytest

from dialogcheck.engines.chunks import WholeFile
from dialogcheck.engines.work import CheckJob, Encoding, check_chunk
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
    job = CheckJob(subject, no_judge=True)
    sent = pickle.loads(pickle.dumps(job))
    for conversation in CONVERSATIONS:
        chunk = WholeFile(str(conversation), str(conversation))
        here = check_chunk(job, chunk)
        there = check_chunk(sent, chunk)
        assert here.results and [conversation_line(r) for r in there.results] == [conversation_line(r) for r in here.results], conversation.name


def test_with_an_encoding_a_chunk_sends_back_its_encodings_and_its_first_result_typed():
    job = CheckJob(load_sop(EXAMPLE / "sops" / "replace_card.yml"), no_judge=True)
    chunk = WholeFile(str(CONVERSATIONS[0]), str(CONVERSATIONS[0]))
    typed = check_chunk(job, chunk)
    encoded = check_chunk(replace(job, encoding=Encoding(conversation_line)), chunk)
    assert encoded.encoded == [conversation_line(r) for r in typed.results] and encoded.results == typed.results[:1]
    joined = check_chunk(replace(job, encoding=Encoding(conversation_line, b",\n")), chunk)
    assert joined.encoded == [b",\n".join(encoded.encoded)] and joined.counts.total == typed.counts.total
    assert check_chunk(replace(job, counts_only=True), chunk).results == []
