"""The bases of judged metrics (``common``: ask a judge for a case; ``banded``: one integer band mapped to [0, 1])
and the check that each metric's judge is configured (``references``). Not a metric family: it registers no kind.
Judges (``evald/judges/``) know prompts, providers and governance; this package is where metrics meet them.
"""
