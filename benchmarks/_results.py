"""What the benchmark scripts share: child-process measurements and result files."""

import json
from pathlib import Path
import subprocess
import sys

RESULTS = Path(__file__).parent / "results"
"""Where every benchmark writes its ``.json`` and ``.md`` files."""


def run_child(module_args):
    """Run ``python -m benchmarks.<module_args>`` from the repository root, in a fresh
    interpreter (its own peak memory); return the JSON object on its last output line,
    or ``{"error": <end of its stderr>}`` if it failed."""
    done = subprocess.run([sys.executable, "-m", *module_args], capture_output=True,
                          text=True, cwd=Path(__file__).resolve().parents[1])
    if done.returncode != 0:
        return {"error": done.stderr.strip()[-500:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def save(stem, results, table):
    """Write ``results/<stem>.json`` and the Markdown ``table`` to ``results/<stem>.md``;
    print the table."""
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{stem}.json").write_text(json.dumps(results, indent=1) + "\n")
    (RESULTS / f"{stem}.md").write_text(table)
    print(table)
