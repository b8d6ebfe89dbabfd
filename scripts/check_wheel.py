"""Check an installed evald: every module of evald.native.COMPILED_MODULES runs from a C extension, and the `evald`
command works. Exit 1 with the reason otherwise.

Run it with the Python of the environment that installed evald, from outside the source tree (so ``import evald``
finds the installed package, not the sources):

    python scripts/check_wheel.py                # after `pip install evald-*.whl`

The release's cibuildwheel test-command (pyproject [tool.cibuildwheel]) and the sdist job run it on every wheel.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path


def main() -> int:
    import evald
    from evald.native import COMPILED_MODULES, compiled

    package_dir = Path(evald.__file__).resolve().parent
    if (package_dir.parent / "setup.py").exists():
        print(f"check_wheel: evald is imported from a source tree ({package_dir}), not an installed wheel",
              file=sys.stderr)
        return 1
    missing = sorted(set(COMPILED_MODULES) - set(compiled()))
    if missing:
        print(f"check_wheel: {len(missing)} module(s) run as plain Python: {', '.join(missing)}", file=sys.stderr)
        return 1
    command = shutil.which("evald", path=str(Path(sys.executable).parent)) or shutil.which("evald")
    if command is None:
        print("check_wheel: no `evald` command on PATH", file=sys.stderr)
        return 1
    result = subprocess.run([command, "version"], capture_output=True, text=True, timeout=60)
    line = result.stdout.strip()
    counted = re.search(r"\((\d+)/(\d+) hot modules compiled", line)
    if result.returncode != 0 or counted is None or counted.group(1) != counted.group(2):
        print(f"check_wheel: `evald version` said {line!r} (exit {result.returncode}) {result.stderr.strip()}",
              file=sys.stderr)
        return 1
    print(f"check_wheel: {line}; all {len(COMPILED_MODULES)} compiled modules load from {package_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
