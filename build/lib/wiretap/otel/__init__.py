"""OpenTelemetry: recordings as traces (mapping, OTLP/JSON, OTLP/HTTP push, live follower)."""
