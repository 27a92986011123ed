"""The largest modules of the project, printed by `make lint` (issue 38): size is a signal for a person to
read a module again, not a fence to cut files to. Migrations are left out.

    .venv/bin/python bench/module_sizes.py [--top 15]
"""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("config", "calibration", "judges", "annotate", "protocols", "common", "tests", "bench")


def sizes() -> list[tuple[int, str]]:
    out = []
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            out.append((len(path.read_text(encoding="utf-8").splitlines()), str(path.relative_to(ROOT))))
    return sorted(out, reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    rows = sizes()
    print(f"The {min(args.top, len(rows))} largest of {len(rows)} modules (lines; does each still hold one concept?):")
    for lines, path in rows[: args.top]:
        print(f"  {lines:>5}  {path}")


if __name__ == "__main__":
    main()
