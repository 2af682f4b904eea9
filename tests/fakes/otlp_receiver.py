"""A loopback OTLP/HTTP receiver: decodes the protobuf payloads with opentelemetry-proto.

POST /v1/traces and /v1/metrics (``application/x-protobuf``, optionally gzip) are parsed
into `ExportTraceServiceRequest` / `ExportMetricsServiceRequest` and kept; tests read the
span names, metric names and every attribute value.
"""

from __future__ import annotations

import gzip
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import ExportMetricsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


def _value(v: Any) -> object:
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


class OtlpReceiver:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.traces: list[ExportTraceServiceRequest] = []
        self.metrics: list[ExportMetricsServiceRequest] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path == "/v1/traces":
                    msg: Any = ExportTraceServiceRequest.FromString(body)
                    with receiver.lock:
                        receiver.traces.append(msg)
                elif self.path == "/v1/metrics":
                    msg = ExportMetricsServiceRequest.FromString(body)
                    with receiver.lock:
                        receiver.metrics.append(msg)
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self) -> OtlpReceiver:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def spans(self) -> list[Any]:
        with self.lock:
            return [
                s for t in self.traces for rs in t.resource_spans for ss in rs.scope_spans for s in ss.spans
            ]

    def metric_points(self) -> dict[str, list[Any]]:
        """Metric name -> its data points (histogram or sum), across every export."""
        out: dict[str, list[Any]] = {}
        with self.lock:
            for m in self.metrics:
                for rm in m.resource_metrics:
                    for sm in rm.scope_metrics:
                        for metric in sm.metrics:
                            kind = metric.WhichOneof("data")
                            points = list(getattr(metric, kind).data_points) if kind else []
                            out.setdefault(metric.name, []).extend(points)
        return out

    def all_attribute_values(self) -> list[object]:
        values: list[object] = []
        for s in self.spans():
            values += [_value(a.value) for a in s.attributes]
            values.append(s.name)
        for points in self.metric_points().values():
            for p in points:
                values += [_value(a.value) for a in p.attributes]
        with self.lock:
            for t in self.traces:
                for rs in t.resource_spans:
                    values += [_value(a.value) for a in rs.resource.attributes]
        return values


def attrs(obj: Any) -> dict[str, object]:
    return {a.key: _value(a.value) for a in obj.attributes}
