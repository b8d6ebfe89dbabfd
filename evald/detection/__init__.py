"""Detectors of PII and secrets in text, shared by the safety metrics and the judges' redaction (neither owns them)."""
