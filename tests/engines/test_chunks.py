"""Chunks read together give exactly what reading the whole file gives: the same conversations, names and errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialogcheck.engines.chunks import LineRange, ReadChunk, WholeFile, plan_local
from dialogcheck.errors import LoadError
from dialogcheck.events.load import iter_conversation_file
from tests.engines.batches import tracker_lines, write_batch


def read_all(chunks) -> list:
    return [conversation for chunk in chunks for conversation in chunk.read()]


def shape(conversations) -> list:
    return [(c.source, c.conversation_id, tuple(c.events)) for c in conversations]


def first_error(path, chunks) -> tuple[str, ...]:
    with pytest.raises(LoadError) as whole:
        list(iter_conversation_file(path))
    with pytest.raises(LoadError) as chunked:
        read_all(chunks)
    assert [str(p) for p in chunked.value.problems] == [str(p) for p in whole.value.problems]
    return tuple(str(p) for p in chunked.value.problems)


@pytest.mark.parametrize("chunk_bytes", [61, 2_000, 3_001, 65_536])
def test_any_chunk_size_reads_what_the_whole_file_reads(tmp_path, chunk_bytes):
    path = write_batch(tmp_path / "batch.jsonl", 40, blank_every=3)
    chunks = list(plan_local([path], None, chunk_bytes))
    assert all(isinstance(c, LineRange) for c in chunks) and len(chunks) > 1
    expected = list(iter_conversation_file(path))
    assert len(expected) == 40
    assert shape(read_all(chunks)) == shape(expected)
    # the ones without an id are named by their line, counted across chunks
    unnamed = [c.source for c in expected if c.conversation_id is None]
    assert unnamed[1] == f"{path}#{8 + 2}"  # the 8th conversation, after two blank lines


def test_a_range_boundary_on_a_newline_and_a_line_longer_than_a_chunk(tmp_path):
    lines = tracker_lines(6)
    path = tmp_path / "batch.jsonl"
    path.write_text("\n".join(lines) + "\n")
    first = len(lines[0]) + 1  # a range starts exactly at the second line
    for chunk_bytes in (first, first - 1, first + 1, 10):
        assert shape(read_all(plan_local([path], None, chunk_bytes))) == shape(iter_conversation_file(path))


def test_no_final_newline_and_crlf_line_ends(tmp_path):
    lines = tracker_lines(5)
    for name, text in (("plain.jsonl", "\n".join(lines)), ("crlf.jsonl", "\r\n".join(lines) + "\r\n")):
        path = tmp_path / name
        path.write_text(text, newline="")
        assert shape(read_all(plan_local([path], None, 500))) == shape(iter_conversation_file(path))


@pytest.mark.parametrize("bad_line", [1, 2, 17, 30])
def test_bad_json_is_reported_where_the_whole_file_reports_it(tmp_path, bad_line):
    lines = tracker_lines(30)
    lines[bad_line - 1] = lines[bad_line - 1][:-40]  # cut short
    path = tmp_path / "batch.jsonl"
    path.write_text("\n".join(lines) + "\n")
    (problem,) = first_error(path, list(plan_local([path], None, 4_000)))
    assert problem.startswith(f"{path}:{bad_line}:")


def test_a_bad_field_and_a_mixed_container_deep_in_the_file(tmp_path):
    lines = tracker_lines(30)
    tracker = json.loads(lines[21])
    tracker["events"][1]["text"] = 7
    lines[21] = json.dumps(tracker)
    path = tmp_path / "field.jsonl"
    path.write_text("\n".join(lines) + "\n")
    (problem,) = first_error(path, list(plan_local([path], None, 3_000)))
    assert problem.startswith(f"{path}:22:") and "event 1: field `text` must be a string or null, got a number" in problem

    lines = tracker_lines(30)
    lines[25] = json.dumps({"event": "user", "text": "an event among conversations"})
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    (problem,) = first_error(path, list(plan_local([path], None, 3_000)))
    assert problem == f"{path}:26:1: this line mixes containers: expected a conversation object with `events` as on the first line"


def test_bad_utf8_in_a_later_chunk(tmp_path):
    lines = [line.encode() for line in tracker_lines(20)]
    lines[14] = lines[14].replace(b"card", b"c\xffrd", 1)
    path = tmp_path / "batch.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    (problem,) = first_error(path, list(plan_local([path], None, 3_000)))
    assert problem.startswith(f"{path}:15:") and "invalid UTF-8 byte 0xff" in problem


def test_files_that_are_not_conversation_lines_are_one_chunk(tmp_path):
    events = tmp_path / "events.jsonl"  # one conversation, one event a line
    events.write_text("\n".join(json.dumps({"event": "user", "text": f"hi {i}"}) for i in range(2_000)) + "\n")
    document = tmp_path / "doc.json"
    document.write_text(json.dumps([{"event": "user", "text": "hi"}] * 2_000, indent=2))
    broken = tmp_path / "broken.jsonl"  # a bad first line: read whole, so the native reader reports it
    broken.write_text("{not json\n" + "\n".join(tracker_lines(30)) + "\n")
    chunks = list(plan_local([events, document, broken], None, 1_000))
    assert chunks == [WholeFile(str(events), str(events)), WholeFile(str(document), str(document)), WholeFile(str(broken), str(broken))]
    assert shape(read_all(chunks[:2])) == shape(list(iter_conversation_file(events)) + list(iter_conversation_file(document)))
    first_error(broken, chunks[2:])


def test_an_unreadable_file_fails_in_its_place(tmp_path):
    good = write_batch(tmp_path / "a.jsonl", 3)
    missing = tmp_path / "gone.jsonl"
    chunks = list(plan_local([good, missing], None))
    assert len(read_all(chunks[:1])) == 3
    with pytest.raises(LoadError) as err:
        read_all(chunks[1:])
    assert str(err.value).startswith(f"{missing}:1:1: cannot read file")


def test_a_read_chunk_parses_its_chunk_once_and_gives_the_same_conversations_each_time(tmp_path):
    batch = write_batch(tmp_path / "batch.jsonl", 5)

    class Counted:
        reads = 0

        def read(self):
            Counted.reads += 1
            yield from iter_conversation_file(batch)

    chunk = ReadChunk.of(Counted())
    first, second = list(chunk.read()), list(chunk.read())
    assert Counted.reads == 1
    assert len(first) == 5 and all(a is b for a, b in zip(first, second, strict=True))


def test_only_inputs_that_read_once_are_streams(tmp_path):
    """A pipe, standard input or a device is read once; a file or a folder (walked for files) is not."""
    import os

    from dialogcheck.engines.chunks import is_stream

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "log.jsonl").write_text("{}\n")
    assert [is_stream(p) for p in (Path("-"), Path("/dev/stdin"), fifo)] == [True, True, True]
    assert [is_stream(p) for p in (tmp_path / "log.jsonl", tmp_path, tmp_path / "missing")] == [False, False, False]
