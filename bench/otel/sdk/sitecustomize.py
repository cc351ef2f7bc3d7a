"""OpenTelemetry state "SDK providers, a no-op exporter": on PYTHONPATH, every span and metric is
recorded by the SDK and handed to exporters that drop it (the cost of instrumentation, not of
shipping the data anywhere)."""

from collections.abc import Sequence

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExporter,
    MetricExportResult,
    MetricsData,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult


class _DropSpans(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


class _DropMetrics(MetricExporter):
    def export(
        self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: object
    ) -> MetricExportResult:
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: object) -> None:
        return None


_tracer_provider = TracerProvider()
_tracer_provider.add_span_processor(BatchSpanProcessor(_DropSpans()))
trace.set_tracer_provider(_tracer_provider)
metrics.set_meter_provider(
    MeterProvider(metric_readers=[PeriodicExportingMetricReader(_DropMetrics(), 60_000)])
)
