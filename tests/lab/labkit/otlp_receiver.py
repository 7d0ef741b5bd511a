"""A minimal OTLP/HTTP trace receiver that writes what the Collector's `file` exporter writes.

Each `ExportTraceServiceRequest` (protobuf, as the SDK's OTLPSpanExporter sends it) becomes
one line of `{"resourceSpans":[…]}`: lowerCamelCase keys, trace and span ids as lowercase
hex, int64 as decimal strings, enums as integers, default values omitted. Spans keep the
order the exporter sent them in.

    python -m labkit.otlp_receiver --port 4318 --out traces.jsonl
"""

from __future__ import annotations

import argparse
import base64
import gzip
import json
import signal
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

_ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(obj: dict) -> None:
    """Rewrite the base64 ids protobuf's JSON mapping gives into the lowercase hex OTLP uses."""
    for key in _ID_FIELDS:
        if key in obj:
            obj[key] = base64.b64decode(obj[key]).hex()


def to_collector_json(request: ExportTraceServiceRequest) -> dict:
    """The TracesData JSON of one export request, as the Collector's pdata marshaler writes it."""
    data = MessageToDict(request, use_integers_for_enums=True)
    for resource_spans in data.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                _hex_ids(span)
                for link in span.get("links", []):
                    _hex_ids(link)
    return data


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.headers.get("Content-Encoding", "").lower() == "gzip":
            body = gzip.decompress(body)
        if self.path.rstrip("/") != "/v1/traces":
            self._answer(404, b"")
            return
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        line = json.dumps(to_collector_json(request), separators=(",", ":"))
        with self.server.lock:
            self.server.out.write(line + "\n")
            self.server.out.flush()
        self._answer(200, ExportTraceServiceResponse().SerializeToString())

    def _answer(self, status: int, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--out", required=True, help="traces.jsonl to append to")
    args = parser.parse_args()

    server = ThreadingHTTPServer(("127.0.0.1", args.port), _Handler)
    server.lock = threading.Lock()
    with open(args.out, "a", encoding="utf-8") as out:
        server.out = out
        signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()


if __name__ == "__main__":
    main()
