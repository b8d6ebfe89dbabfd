"""Configuration: YAML with ${env:VAR} interpolation, validated by pydantic models beside each component."""
