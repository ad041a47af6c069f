"""`--otlp-out`, `--openinference-out` and `--otlp-endpoint` of `check` and `run`: verdicts sent back as telemetry.

Files are written as the results go by (one OTLP/JSON line a conversation) to
a temporary file that becomes the output only when the batch is done, as
`--html` is. The endpoint gets the same events through the OpenTelemetry SDK
and its OTLP/HTTP exporter (the `otlp` extra), flushed at the end; a
collector that cannot be reached, or answers with a redirect (which the
exporter does not follow, and counts as delivered), is reported, never a
silent loss. The address is shown with its password masked.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from .._redact import hold_url, redact_url
from .._shown import clip, visible
from ..errors import LoadError
from ..report.telemetry import emit_sdk, openinference_spans_line, otlp_logs_line
from ..results.atomic import AtomicFile
from ..results.model import ConversationResult

OTLP_OUT_HELP = "Also write every verdict as a `gen_ai.evaluation.result` event to this file (OTLP/JSON logs, one line a conversation)."
OPENINFERENCE_OUT_HELP = "Also write the verdicts as OpenInference session evaluations to this file (OTLP/JSON traces Phoenix loads)."
OTLP_ENDPOINT_HELP = (
    "Also send every verdict as a `gen_ai.evaluation.result` event to this OTLP/HTTP collector URL "
    "(for example http://localhost:4318; /v1/logs is added when the URL has no path). Needs pip install 'dialogcheck[otlp]'."
)


def telemetry_options(command: Callable) -> Callable:
    """The three options, as `check` and `run` both take them."""
    command = click.option("--otlp-endpoint", "otlp_endpoint", metavar="URL", help=OTLP_ENDPOINT_HELP)(command)
    command = click.option("--openinference-out", "openinference_out", type=click.Path(dir_okay=False), help=OPENINFERENCE_OUT_HELP)(command)
    return click.option("--otlp-out", "otlp_out", type=click.Path(dir_okay=False), help=OTLP_OUT_HELP)(command)


def require_sdk(endpoint: str | None) -> None:
    """With --otlp-endpoint, the SDK and its exporter must be installed: a usage error before anything runs."""
    if endpoint is None:
        return
    try:
        import opentelemetry.exporter.otlp.proto.http._log_exporter
        import opentelemetry.sdk._logs  # noqa: F401 - imported only to learn that the SDK is installed
    except ImportError:
        raise click.UsageError("--otlp-endpoint needs the OpenTelemetry SDK and its OTLP/HTTP exporter: pip install 'dialogcheck[otlp]'") from None


class _Sdk:
    """An SDK logger provider exporting to one collector over OTLP/HTTP."""

    def __init__(self, endpoint: str):
        require_sdk(endpoint)
        import requests
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
        from opentelemetry.sdk.resources import Resource

        hold_url(endpoint)
        url = endpoint.rstrip("/") + "/v1/logs" if endpoint.count("/") <= 2 else endpoint
        self.endpoint = redact_url(url) or url
        session = requests.Session()
        self.exporter = _Counting(OTLPLogExporter(endpoint=url, session=session))
        session.hooks["response"].append(self.exporter.seen)
        self.provider = LoggerProvider(resource=Resource.create({"service.name": "dialogcheck"}))
        self.provider.add_log_record_processor(BatchLogRecordProcessor(self.exporter))  # type: ignore[arg-type]  # _Counting wraps the SDK's exporter
        self.logger = self.provider.get_logger("dialogcheck")

    def finish(self) -> None:
        self.provider.force_flush()
        self.provider.shutdown()
        if self.exporter.failed:
            raise LoadError.one(f"the collector did not take {self.exporter.failed:,} of the verdicts sent{self.exporter.redirect}", self.endpoint)


class _Counting:
    """The SDK exporter, counting what it could not deliver (the SDK only logs it). The exporter takes any status
    below 400 for delivered, a redirect too, which it does not follow: a batch answered with a 3xx is counted lost."""

    def __init__(self, exporter: Any):
        self.exporter = exporter
        self.failed = 0
        self.redirect = ""  # how the last redirect is said in the message: its status and where it led
        self._redirected = False

    def seen(self, response: Any, *args: Any, **kwargs: Any) -> Any:
        """The session's response hook: note a redirect (the exporter runs each batch's request in its own thread)."""
        if 300 <= response.status_code < 400:
            self._redirected = True
            target = redact_url(clip(visible(response.headers.get("Location", "")), 200)) or "no address"
            self.redirect = (
                f": it answered {response.status_code} {clip(visible(response.reason or ''), 80)} (a redirect, to {target}),"
                " which is not followed: give the collector's own address"
            )
        return response

    def export(self, batch):
        from opentelemetry.sdk._logs.export import LogRecordExportResult

        self._redirected = False
        outcome = self.exporter.export(batch)
        if outcome != LogRecordExportResult.SUCCESS or self._redirected:
            self.failed += len(batch)
            return LogRecordExportResult.FAILURE
        return outcome

    def shutdown(self):
        self.exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.exporter.force_flush(timeout_millis)


class TelemetryOut:
    """Where the verdicts of a batch go as telemetry; `add` each result, then `commit` (or `discard`)."""

    def __init__(self, otlp_out: str | None, openinference_out: str | None, endpoint: str | None):
        self.files: list[tuple[AtomicFile, Callable[[ConversationResult, int], bytes], str]] = []
        self.sdk = _Sdk(endpoint) if endpoint else None
        for path, render in ((otlp_out, otlp_logs_line), (openinference_out, openinference_spans_line)):
            if path:
                with _writing(path):
                    self.files.append((AtomicFile(path), render, path))

    @classmethod
    def of(cls, otlp_out: str | None, openinference_out: str | None, endpoint: str | None) -> TelemetryOut | None:
        return cls(otlp_out, openinference_out, endpoint) if otlp_out or openinference_out or endpoint else None

    def add(self, result: ConversationResult) -> None:
        now = time.time_ns()
        for file, render, path in self.files:
            with _writing(path):
                file.write(render(result, now))
        if self.sdk is not None:
            emit_sdk(self.sdk.logger, result)

    def add_all(self, results: Iterable[ConversationResult]) -> None:
        for result in results:
            self.add(result)

    def commit(self) -> None:
        for file, _, path in self.files:
            with _writing(path):
                file.commit()
        if self.sdk is not None:
            self.sdk.finish()

    def discard(self) -> None:
        for file, _, _ in self.files:
            file.discard()


@contextmanager
def _writing(path: str) -> Iterator[None]:
    try:
        yield
    except OSError as err:
        raise LoadError.of_os("cannot write the telemetry file", err, str(err.filename or path)) from None
