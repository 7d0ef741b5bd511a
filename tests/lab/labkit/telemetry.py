"""OpenTelemetry set-up for the lab's clients and servers, as a real deployment does it.

A global TracerProvider with a BatchSpanProcessor and the SDK's OTLPSpanExporter
(HTTP/protobuf) pointed at the lab's receiver. The caller must `shutdown()` the provider
at exit so that no span is lost.
"""

from __future__ import annotations


def start_tracing(service_name: str, otlp_base_url: str, openllmetry: bool = False, exception_logger=None):
    """Install and return the global TracerProvider; with `openllmetry`, instrument MCP too.

    `exception_logger` receives the exceptions OpenLLMetry's wrappers swallow.
    """
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=otlp_base_url.rstrip("/") + "/v1/traces")))
    trace.set_tracer_provider(provider)
    if openllmetry:
        from opentelemetry.instrumentation.mcp import McpInstrumentor

        McpInstrumentor(exception_logger=exception_logger).instrument(tracer_provider=provider)
    return provider
