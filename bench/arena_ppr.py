"""Calibrate three LLM judges against Chatbot Arena crowd votes (../shared/realdata/arena-ppr).

    .venv/bin/python bench/arena_ppr.py convert [--data ../shared/realdata/arena-ppr] --out DIR
    .venv/bin/python bench/arena_ppr.py run [--data ...] [--rounds 1000] [--keep DIR]

`convert` writes what the platform imports, from the folder's four JSON Lines files:

* `DIR/arena-preference.json`: a criterion set with one criterion (which answer is better);
* `DIR/arena-labels.csv`: the long label format of `export_labels`, one row per battle for the
  crowd (rater `crowd`, a single pseudo-annotator: each battle has one anonymous vote) and one
  per battle for each judge (rater = the judge file's name, e.g. `gpt-3.5-turbo`).

Each battle becomes its own topic (`battle-00042`), so that a pair is a battle and the report's
pair bootstrap resamples battles. `model_a` is shown first (left), `model_b` second. Both tie
kinds (`tie`, `tie (bothbad)`) become a tie: the folder's README merges them too. The data has
no times; every row gets the same `saved_at` (the folder's release year), so the report times
no annotator. Costs are unknown and left empty.

`run` converts into a temporary folder, imports into a fresh SQLite database through the real
commands (`import_criteria`, `create_campaign --labels-only`, `import_labels`), writes the
calibration report with `calibration_report` (JSON and Markdown) and prints the agreement
figures beside those of the folder's README. Nothing here is part of the test suite.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "realdata" / "arena-ppr"
JUDGES = ("gpt-4-0125-preview", "claude-3-opus-20240229", "gpt-3.5-turbo")
CAMPAIGN = "arena-ppr"
CRITERIA_KEY = "arena-preference"
SAVED_AT = "2024-01-01T00:00:00Z"
TIES = {"tie", "tie (bothbad)"}
# The folder's README: 3-way agreement with the crowd (ties merged), kappa, and agreement where neither says tie.
README = {
    "gpt-4-0125-preview": (0.555, 0.33, 0.833),
    "claude-3-opus-20240229": (0.475, 0.21, 0.723),
    "gpt-3.5-turbo": (0.400, 0.07, 0.570),
}
COLUMNS = (
    "campaign", "topic", "criterion", "rater_kind", "rater", "left_system", "right_system", "winner_system",
    "rationale", "started_at", "saved_at", "model", "prompt_tokens", "completion_tokens", "cost_usd",
    "latency_ms", "position", "call_id", "error",
)  # fmt: skip


def read_votes(path: Path) -> dict[int, dict]:
    votes = {}
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                votes[int(row["num"])] = row
    return votes


def winner_system(row: dict) -> str:
    if row["winner"] in TIES:
        return "tie"
    if row["winner"] not in ("model_a", "model_b"):
        raise ValueError(f"battle {row['num']}: unknown winner {row['winner']!r}")
    return row[row["winner"]]


def position(row: dict) -> str:
    return {"model_a": "1", "model_b": "2"}.get(row["winner"], "")


def convert(data: Path, out: Path) -> dict[str, int]:
    """Writes the criteria and labels files; returns rows written per rater."""
    out.mkdir(parents=True, exist_ok=True)
    criteria = {
        "name": "Arena preference",
        "description": "One question per battle: which of the two answers is better.",
        "categories": [
            {"id": "preference", "name": "Preference", "criteria": [{"id": "better", "text": "Which answer is better overall?"}]}
        ],
    }
    (out / f"{CRITERIA_KEY}.json").write_text(json.dumps(criteria, indent=2), encoding="utf-8")
    humans = read_votes(data / "human.json")
    judges = {name: read_votes(data / f"{name}.json") for name in JUDGES}
    counts = {"crowd": 0, **{name: 0 for name in JUDGES}}
    with (out / "arena-labels.csv").open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        for num in sorted(humans):
            row = humans[num]
            base = {
                "campaign": CAMPAIGN, "topic": f"battle-{num:05d}", "criterion": "better",
                "left_system": row["model_a"], "right_system": row["model_b"], "saved_at": SAVED_AT,
            }  # fmt: skip
            writer.writerow({**base, "rater_kind": "human", "rater": "crowd", "winner_system": winner_system(row)})
            counts["crowd"] += 1
            for name, votes in judges.items():
                verdict = votes.get(num)
                if verdict is None:
                    continue
                if (verdict["model_a"], verdict["model_b"]) != (row["model_a"], row["model_b"]):
                    raise ValueError(f"battle {num}: {name} judged other models than the crowd")
                writer.writerow({
                    **base, "rater_kind": "judge", "rater": name, "model": name,
                    "winner_system": winner_system(verdict), "position": position(verdict),
                })  # fmt: skip
                counts[name] += 1
    return counts


def show(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def manage(*args: str, env: dict) -> float:
    started = time.perf_counter()
    result = subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return time.perf_counter() - started


def run(data: Path, rounds: int, keep: Path | None) -> None:
    work = keep or Path(tempfile.mkdtemp(prefix="arena-ppr-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "arena.sqlite3"
    if db.exists():
        db.unlink()
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{db}",
        "SECRET_KEY": os.environ.get("SECRET_KEY", "bench-only-not-secret"),
        "DEBUG": "0",
    }
    counts = convert(data, work)
    print(f"converted: {', '.join(f'{k} {v:,}' for k, v in counts.items())} rows -> {work}")
    manage("migrate", "--verbosity", "0", env=env)
    manage("import_criteria", str(work / f"{CRITERIA_KEY}.json"), env=env)
    manage("create_campaign", "--name", CAMPAIGN, "--criteria", CRITERIA_KEY, "--labels-only", "--allow-tie", env=env)
    seconds = manage("import_labels", "--campaign", CAMPAIGN, str(work / "arena-labels.csv"), env=env)
    print(f"import_labels: {sum(counts.values()):,} rows in {seconds:.1f} s")
    seconds = manage("calibration_report", "--campaign", CAMPAIGN, "--rounds", str(rounds), "--out", str(work / "report.json"), env=env)
    print(f"calibration_report (json, {rounds} rounds): {seconds:.1f} s")
    manage(
        "calibration_report", "--campaign", CAMPAIGN, "--rounds", str(rounds), "--format", "md", "--out", str(work / "report.md"), env=env
    )
    report = json.loads((work / "report.json").read_text(encoding="utf-8"))
    print(f"\nscores: {report['parameters']['anchor']['text']}")
    print(f"{'judge':<24} {'PAR (n)':>22} {'README':>7} {'kappa':>7} {'README':>7} {'PAR, no ties (n)':>24} {'README':>7}")
    for j in report["judges"]:
        want = README.get(j["name"], (None, None, None))
        par = f"{show(j['par'])} ({j['n_labels']:,})"
        no_ties = f"{show(j['par_no_ties'])} ({j['par_no_ties_n']:,})"
        print(
            f"{j['name']:<24} {par:>22} {show(want[0]):>7} {show(j['cohen_kappa']):>7} {show(want[1]):>7} {no_ties:>24} {show(want[2]):>7}"
        )
    print("\nBradley-Terry (crowd), best first:")
    for s in report["bradley_terry"]["humans"] or []:
        ci = s["ci"]
        ends = "" if ci is None else f" [{'-inf' if ci[0] is None else round(ci[0])}, {'+inf' if ci[1] is None else round(ci[1])}]"
        print(f"  {s['system']:<28} {s['score'] if s['estimable'] else s['reason']}{ends}  (n={s['n']:,})")
    print(f"\nreport: {work / 'report.md'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("convert")
    c.add_argument("--data", type=Path, default=DATA)
    c.add_argument("--out", type=Path, required=True)
    r = sub.add_parser("run")
    r.add_argument("--data", type=Path, default=DATA)
    r.add_argument("--rounds", type=int, default=1000)
    r.add_argument("--keep", type=Path, help="folder for the converted files, the database and the report (default: a temporary one)")
    args = parser.parse_args()
    if not (args.data / "human.json").is_file():
        raise SystemExit(f"{args.data}: no human.json (the arena-ppr folder is not here)")
    if args.command == "convert":
        counts = convert(args.data, args.out)
        print(f"converted: {', '.join(f'{k} {v:,}' for k, v in counts.items())} rows -> {args.out}")
    else:
        run(args.data, args.rounds, args.keep)


if __name__ == "__main__":
    main()
