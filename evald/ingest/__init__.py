"""Ingest role: OTLP receivers produce per-trace records to Kafka (docs/kafka.md, "Ingest role")."""
