"""OpenTelemetry state "imported, no provider": on PYTHONPATH, the API is imported and nothing set up."""

import opentelemetry.metrics
import opentelemetry.trace  # noqa: F401
