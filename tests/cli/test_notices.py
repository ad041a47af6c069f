"""The package's logged warnings are the command's own stderr, masked, whatever handlers the process has."""

from __future__ import annotations

import io
import logging
import sys

from dialogcheck._cli.main import StderrNotices


def test_a_warning_is_written_to_the_stderr_of_the_moment_with_its_url_password_masked(monkeypatch):
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    logger, notices = logging.getLogger("dialogcheck"), StderrNotices()
    logger.addHandler(notices)
    try:
        logger.warning("dialogcheck: %s refused response_format json_schema", "http://judge:hunter2@127.0.0.1:9/v1")
        logger.info("not a notice")
    finally:
        logger.removeHandler(notices)
    assert "refused response_format json_schema" in stderr.getvalue()
    assert "hunter2" not in stderr.getvalue()
    assert "not a notice" not in stderr.getvalue()
    assert stderr.getvalue().count("\n") == 1
