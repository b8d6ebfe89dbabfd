"""Metrics scored over more than one case: groups of runs, sliding windows and composites (their state, bounds and
export), fed by the pipeline with every scored case (evald/windowed/stage.py)."""
