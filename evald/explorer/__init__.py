"""The evaluation explorer: recent evaluations and not-evaluable traces on the admin port (docs/explorer.md)."""
