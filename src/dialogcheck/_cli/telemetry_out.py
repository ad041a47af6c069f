"""`--otlp-out`, `--openinference-out` and `--otlp-endpoint` of `check` and `run`: verdicts sent back as telemetry.

Files are written as the results go by (one OTLP/JSON line a conversation) to
a temporary file that becomes the output only when the batch is done, as
`--html` is. The endpoint gets the same events through the OpenTelemetry SDK
and its OTLP/HTTP exporter (the `otlp` extra), flushed at the end; a
collector that cannot be reached is reported, never a silent loss.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import click

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
        import opentelemetry.exporter.otlp.proto.http._log_exporter  # noqa: F401
        import opentelemetry.sdk._logs  # noqa: F401
    except ImportError:
        raise click.UsageError("--otlp-endpoint needs the OpenTelemetry SDK and its OTLP/HTTP exporter: pip install 'dialogcheck[otlp]'") from None


class _Sdk:
    """An SDK logger provider exporting to one collector over OTLP/HTTP."""

    def __init__(self, endpoint: str):
        require_sdk(endpoint)
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
        from opentelemetry.sdk.resources import Resource

        url = endpoint.rstrip("/") + "/v1/logs" if endpoint.count("/") <= 2 else endpoint
        self.endpoint = url
        self.exporter = _Counting(OTLPLogExporter(endpoint=url))
        self.provider = LoggerProvider(resource=Resource.create({"service.name": "dialogcheck"}))
        self.provider.add_log_record_processor(BatchLogRecordProcessor(self.exporter))
        self.logger = self.provider.get_logger("dialogcheck")

    def finish(self) -> None:
        self.provider.force_flush()
        self.provider.shutdown()
        if self.exporter.failed:
            raise LoadError.one(f"the collector did not take {self.exporter.failed} of the verdicts sent", self.endpoint)


class _Counting:
    """The SDK exporter, counting what it could not deliver (the SDK only logs it)."""

    def __init__(self, exporter: Any):
        self.exporter = exporter
        self.failed = 0

    def export(self, batch):
        from opentelemetry.sdk._logs.export import LogRecordExportResult

        outcome = self.exporter.export(batch)
        if outcome != LogRecordExportResult.SUCCESS:
            self.failed += len(batch)
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
        raise LoadError.one(f"cannot write the telemetry file: {err.strerror or err}", str(err.filename or path)) from None
