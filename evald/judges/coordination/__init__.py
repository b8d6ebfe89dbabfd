"""Judge governance shared across replicas through Redis (optional): budgets, rate limits, verdict cache and
circuit state. Without ``judges.<name>.coordination`` nothing here is imported and every limit is per process."""
