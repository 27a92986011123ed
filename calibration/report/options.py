"""What a calibration report is asked for: one frozen value from the command line, a query string or code.

`ReportOptions` holds every choice that changes the report's figures (bootstrap rounds and seed,
the reference system, unsubmitted work, ensembles, the swap and unparsable conventions, the
alt-test's ε and unit, the human reference, the sensitivity fits, the per-category intervals and
the majority-tie convention). It is checked when made: a bad value raises ValueError with the
choices, before anything is read. It gives, once each:

- `from_query` / `query`: the dashboard's, the API's and the downloads' query string, both ways;
- `from_command`: `calibration_report`'s parsed options;
- `chosen`: the options that differ from their defaults. The cache keys are built from it, so a
  report asked for with the defaults keeps the key it always had, and an option added later leaves
  every earlier key as it was.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from urllib.parse import urlencode

from calibration import metrics as M
from calibration.report import alttest as report_alttest
from calibration.report import reference as report_reference
from calibration.report.ensembles import parse_ensembles
from calibration.report.raters import check_category_intervals

# Always in the report's cache key, default or not (they were from the start).
KEYED_ALWAYS = ("rounds", "seed", "reference", "include_unsubmitted", "ensembles")
# Never in a query string: the dashboard computes with the site's rounds and seed 0 on submitted work.
NOT_IN_QUERY = ("rounds", "seed", "reference", "include_unsubmitted", "alt_epsilon", "alt_epsilon_reason", "alt_unit")


@dataclass(frozen=True)
class ReportOptions:
    rounds: int | None = None  # None: the caller's default (1000, or settings.CALIBRATION_ROUNDS where cached)
    seed: int = 0
    reference: str | None = None  # the reference system's key; None: the campaign's
    include_unsubmitted: bool = False
    ensembles: tuple[tuple[str, ...], ...] = ()
    swap_policy: str = M.DEFAULT_SWAP_POLICY
    unparsable: str = M.DEFAULT_UNPARSABLE
    alt_epsilon: float | None = None
    alt_epsilon_reason: str | None = None
    alt_unit: str = report_alttest.DEFAULT_UNIT
    human_reference: str = report_reference.DEFAULT_REFERENCE
    sensitivity: bool = False
    category_intervals: str = "auto"
    majority_ties: str = M.DEFAULT_MAJORITY_TIES

    def __post_init__(self) -> None:
        object.__setattr__(self, "ensembles", tuple(tuple(members) for members in self.ensembles or ()))
        object.__setattr__(self, "human_reference", report_reference.check_reference(self.human_reference))
        if self.rounds is not None and self.rounds < 0:
            raise ValueError("rounds must be 0 or more")
        M.check_convention(self.swap_policy, self.unparsable)
        M.check_majority_ties(self.majority_ties)
        check_category_intervals(self.category_intervals)
        report_alttest.check_unit(self.alt_unit)

    # ------------------------------------------------------------------ made from

    @classmethod
    def from_query(cls, query: Mapping, *, ensemble_values: list[str] | None = None) -> ReportOptions:
        """From a query string (a QueryDict, or a dict of single values); ValueError with the reason
        for a bad value. ``ensemble_values``: the ensembles as `a,b,c` texts, when the caller gathers
        them (the dashboard adds its ticked boxes); else every ``ensemble=``."""
        if ensemble_values is None:
            many = getattr(query, "getlist", None)
            ensemble_values = [v for v in (many("ensemble") if many else [query.get("ensemble") or ""]) if v.strip()]
        return cls(
            ensembles=tuple(parse_ensembles(ensemble_values)),
            swap_policy=query.get("swap_policy") or M.DEFAULT_SWAP_POLICY,
            unparsable=query.get("unparsable") or M.DEFAULT_UNPARSABLE,
            human_reference=query.get("human_reference") or report_reference.DEFAULT_REFERENCE,
            sensitivity=report_reference.check_sensitivity(query.get("sensitivity")),
            category_intervals=query.get("category_intervals") or "auto",
            majority_ties=query.get("majority_ties") or M.DEFAULT_MAJORITY_TIES,
        )

    @classmethod
    def from_command(cls, options: Mapping) -> ReportOptions:
        """From `calibration_report`'s parsed options (argparse's names)."""
        return cls(
            rounds=options["rounds"],
            seed=options["seed"],
            reference=options["reference"],
            include_unsubmitted=options["include_unsubmitted"],
            ensembles=tuple(parse_ensembles(options["ensemble"])),
            swap_policy=options["swap_policy"],
            unparsable=options["unparsable"],
            alt_epsilon=options["epsilon"],
            alt_epsilon_reason=options["epsilon_reason"],
            alt_unit=options["alt_unit"],
            human_reference=options["human_reference"],
            sensitivity=options["sensitivity"],
            category_intervals=options["category_intervals"],
            majority_ties=options["majority_ties"],
        )

    # ------------------------------------------------------------------ given as

    def with_rounds(self, default: int) -> ReportOptions:
        """These options with ``rounds`` set (``default`` where it was left to the caller)."""
        return self if self.rounds is not None else replace(self, rounds=default)

    def chosen(self) -> dict:
        """The options that differ from their defaults, by name (the swap and unparsable conventions
        go together: either differing names both)."""
        out = {}
        for f in fields(self):
            if f.name == "swap_policy" and self.convention != {"swap_policy": M.DEFAULT_SWAP_POLICY, "unparsable": M.DEFAULT_UNPARSABLE}:
                out.update(self.convention)
            elif f.name not in ("swap_policy", "unparsable") and getattr(self, f.name) != f.default:
                out[f.name] = getattr(self, f.name)
        return out

    def cache_key(self, *, epsilon: tuple) -> dict:
        """The report's cache key: the options always keyed, the others when chosen. The alt-test's
        ε is keyed as resolved on the campaign (``epsilon``, `report.alttest.resolve_epsilon`), as it
        may come from there; a reason given without an ε changes nothing and is not keyed."""
        key = {name: getattr(self, name) for name in KEYED_ALWAYS}
        key["ensembles"] = list(self.ensembles)
        chosen = self.chosen()
        key.update(
            {name: chosen[name] for name in ("human_reference", "sensitivity", "category_intervals", "majority_ties") if name in chosen}
        )
        if "swap_policy" in chosen:
            key.update(swap_policy=self.swap_policy, unparsable=self.unparsable)
        if epsilon[0] is not None or "alt_unit" in chosen:
            key.update(alt_epsilon=epsilon, alt_unit=self.alt_unit)
        return key

    def charts_key(self, *, rounds: int) -> dict:
        """The charts' cache key: the report's rounds and ensembles, and the options a query may choose."""
        chosen = {name: value for name, value in self.chosen().items() if name not in NOT_IN_QUERY and name != "ensembles"}
        return {"rounds": rounds, "ensembles": list(self.ensembles), **chosen}

    @property
    def ensemble_values(self) -> list[str]:
        """The ensembles as `a,b,c` texts, as a query string or a form gives them."""
        return [",".join(members) for members in self.ensembles]

    @property
    def convention(self) -> dict:
        return {"swap_policy": self.swap_policy, "unparsable": self.unparsable}

    @property
    def query(self) -> str:
        """The options a query string can carry, the defaults left out (empty for the defaults)."""
        pairs = [("ensemble", value) for value in self.ensemble_values]
        for name, value in self.chosen().items():
            if name in NOT_IN_QUERY or name == "ensembles":
                continue
            pairs.append((name, "1" if value is True else value))
        return urlencode(pairs)


def options_with(options: ReportOptions | None, changes: dict) -> ReportOptions:
    """``options`` (the defaults when None) with ``changes``, options by name: the callers' shorthand,
    `build_report(campaign, rounds=200)`. An unknown name is a TypeError, as for any keyword."""
    if options is None:
        return ReportOptions(**changes)
    return replace(options, **changes) if changes else options
