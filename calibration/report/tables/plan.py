"""Display table of the report's `plan` section: the frozen study plan and every deviation from it.

Pure: no Django.
"""

from __future__ import annotations

from calibration.plan.check import deviation_text
from calibration.report.table_format import DASH, Table

NO_PLAN = (
    "No plan frozen: nothing in this report was pre-registered (`manage.py freeze_plan`, or the campaign page, before the first label)."
)


def plan_note(section: dict | None) -> str:
    """The plan in one sentence: its hash, when and by whom it was frozen, and how many deviations."""
    if not section or not section.get("frozen"):
        return NO_PLAN
    n = len(section["deviations"])
    altered = "Plan altered: the stored record no longer matches the hash frozen with it. " if section.get("altered") else ""
    return altered + (
        f"Study plan frozen {section['frozen_at']} by {section['frozen_by']}, SHA-256 {section['sha256']}; "
        f"planned n = {section['planned_pairs']:,} pairs; statistics planned: {', '.join(section['statistics']) or DASH}. "
        f"{'No deviation from the plan.' if not n else f'{n} deviation{"s" if n != 1 else ""} from the plan.'}"
    )


def plan_tables(report: dict) -> dict[str, Table]:
    section = report.get("plan")
    rows = []
    for d in (section or {}).get("deviations", []):
        shown = [DASH if d[k] is None or d[k] == "" else str(d[k]) for k in ("planned", "now")]
        rows.append([d["kind"].replace("_", " "), deviation_text(d), *shown])
    if not rows:  # a row all the same, so that every rendering says it (a table without rows shows only "nothing to show")
        frozen = bool(section and section.get("frozen"))
        rows.append(["none" if frozen else "no plan", "No deviation from the plan." if frozen else NO_PLAN, DASH, DASH])
    return {
        "plan": Table(
            "plan",
            "Deviations from the study plan",
            ["Kind", "Deviation", "Planned", "Now"],
            rows,
            [False, False, False, False],
            plan_note(section),
        )
    }
