"""Tests of the conversation metrics."""
