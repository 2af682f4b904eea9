"""telemetry: what the server measures and reports.

Latency stages (`latency.py`), request statistics (`stats.py`), OpenTelemetry export
(`otel.py`) and the usage and cost report read from the governance audit log (`usage.py`).
"""
