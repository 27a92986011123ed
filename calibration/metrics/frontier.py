"""Cost against agreement: the Pareto frontier of judges and the recommended judge."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable

from calibration.metrics._common import MIN_PAIRS_FOR_CI
from calibration.metrics.agreement import PairedDifference
from calibration.metrics.bootstrap import Estimate

# --------------------------------------------------------------------------
# cost vs agreement
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgePoint:
    name: str
    cost: float | None  # None: unknown (a judge without prices)
    par: float
    n: int = 0


def _points(points) -> list[JudgePoint]:
    out = []
    for p in points:
        out.append(p if isinstance(p, JudgePoint) else JudgePoint(*p))
    return out


def pareto_frontier(points: Iterable[JudgePoint | tuple]) -> list[JudgePoint]:
    """Judges not dominated by another judge that is cheaper-or-equal and
    higher-or-equal in PAR with at least one strict; sorted by cost. A judge whose
    cost is unknown can be placed nowhere on the cost axis: it is left out."""
    pts = [p for p in _points(points) if p.cost is not None]
    front = []
    for p in pts:
        dominated = any(q.cost <= p.cost and q.par >= p.par and (q.cost < p.cost or q.par > p.par) for q in pts if q is not p)
        if not dominated:
            front.append(p)
    return sorted(front, key=lambda p: (p.cost, -p.par, p.name))


@dataclass(frozen=True)
class Recommendation:
    judge: str | None  # None when the judges tied for the best PAR cannot be told apart by cost
    best: str
    sentence: str
    difference: PairedDifference | None
    tied: tuple[str, ...] = ()  # the best judge and every judge not significantly below it, best PAR first


DETAILED = 5  # tied judges whose figures the sentence spells out; the rest are named only


def _fmt_ci(est: Estimate) -> str:
    if est.ci is None:
        return "no CI"
    return f"95% CI {est.ci_low:+.3f} to {est.ci_high:+.3f}"


def money(usd: float | None) -> str:
    """US dollars as money: cents from $0.01 up, three significant figures below (a judged pair often
    costs a fraction of a cent); None is "cost unknown", never $0."""
    if usd is None:
        return "cost unknown"
    if usd == 0:
        return "$0.00"
    if abs(usd) >= 0.01:
        return f"${usd:,.2f}"
    return f"${usd:.3g}" if "e" not in f"{usd:.3g}" else f"${usd:.10f}".rstrip("0")


def _cost(p: JudgePoint) -> str:
    return "cost unknown" if p.cost is None else f"cost {money(p.cost)}"


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def recommend(judges: Iterable[JudgePoint | tuple], differences: Iterable[PairedDifference]) -> Recommendation:
    """Every judge statistically tied for the best PAR, and the cheapest of them when costs tell.

    Tied for the best: the best judge, and every judge whose PAR is not significantly below it,
    i.e. the paired-bootstrap CI of PAR(best) - PAR(judge) reaches 0 or below. A judge without a
    paired difference against the best judge, or whose difference rests on fewer than
    ``MIN_PAIRS_FOR_CI`` pairs, cannot be cleared and is not tied. Among the tied judges, the
    recommended one is the cheapest, when every tied judge's cost is known and one is cheaper
    than the others; otherwise none is singled out and the sentence says why.
    """
    pts = _points(judges)
    if not pts:
        raise ValueError("no judges to recommend from")
    best = max(pts, key=lambda p: (p.par, -(math.inf if p.cost is None else p.cost)))
    diffs = list(differences)

    def against_best(name: str) -> tuple[Estimate, PairedDifference] | None:
        for d in diffs:
            est = d.difference
            if est.value is None or d.n_pairs < MIN_PAIRS_FOR_CI:
                continue
            if d.judge_a == best.name and d.judge_b == name:
                return est, d
            if d.judge_a == name and d.judge_b == best.name:
                flipped = Estimate(
                    -est.value,
                    est.n,
                    None if est.ci_high is None else -est.ci_high,
                    None if est.ci_low is None else -est.ci_low,
                    est.n_pairs,
                )
                return flipped, d
        return None

    tied: list[tuple[JudgePoint, Estimate, PairedDifference]] = []
    uncleared = []
    for p in sorted(pts, key=lambda q: (-q.par, q.name)):
        if p.name == best.name:
            continue
        found = against_best(p.name)
        if found is None or found[0].ci_low is None:
            uncleared.append(p.name)
        elif found[0].ci_low <= 0:
            tied.append((p, *found))
    lead = f"{best.name} has the best PAR {best.par:.3f} (n={best.n:,}, {_cost(best)})"
    unknown = [p.name for p in [best] + [t[0] for t in tied] if p.cost is None]
    if not tied:
        rest = "every other judge is significantly below it" + (
            f" or could not be compared with it ({_names(uncleared)}: no paired comparison on {MIN_PAIRS_FOR_CI} pairs or more)"
            if uncleared
            else ""
        )
        sentence = f"Use {best.name} ({_cost(best)}): it has the best PAR {best.par:.3f} (n={best.n:,}) and {rest}."
        return Recommendation(best.name, best.name, sentence, None, (best.name,))
    names = [best.name] + [t[0].name for t in tied]
    details = "; ".join(
        f"{p.name} {p.par:.3f} (n={p.n:,}, {_cost(p)}), difference {est.value:+.3f}, {_fmt_ci(est)} over {d.n_pairs:,} pairs"
        for p, est, d in tied[:DETAILED]
    ) + (f"; {len(tied) - DETAILED} more in the paired comparisons" if len(tied) > DETAILED else "")
    sentence = (
        f"{_names(names)} are statistically tied for the best PAR: {lead}, and the paired-bootstrap CI of its "
        f"difference from each of the others includes 0 ({details})."
    )
    if unknown:
        sentence += f" Cost unknown for {_names(unknown)}: no single judge is recommended on cost."
        return Recommendation(None, best.name, sentence, None, tuple(names))
    cheapest = min(p.cost for p in [best] + [t[0] for t in tied])
    at_cheapest = [n for n, p in zip(names, [best] + [t[0] for t in tied]) if p.cost == cheapest]
    if len(at_cheapest) > 1:
        sentence += f" {_names(at_cheapest)} cost the same ({money(cheapest)}): no single judge is recommended on cost."
        return Recommendation(None, best.name, sentence, None, tuple(names))
    choice = at_cheapest[0]
    difference = next((d for p, _, d in tied if p.name == choice), None)
    sentence += f" The cheapest of them: use {choice} (cost {money(cheapest)})."
    return Recommendation(choice, best.name, sentence, difference, tuple(names))


# --------------------------------------------------------------------------
# the verdict against the humans' own agreement
# --------------------------------------------------------------------------

CEILING_RULE = (
    "a judge is recommended only when its PAR's 95% CI reaches the humans' leave-one-out ceiling's 95% CI "
    "(or comes within the margin asked for); baselines are floors, never recommended; a judge whose Cohen's "
    "kappa CI lies below 0 agrees less than chance"
)


def _with_ci(est: Estimate) -> str:
    """`0.828, 95% CI 0.753–0.875, n=268` (", no CI" when the interval was not computed)."""
    ci = f", 95% CI {est.ci_low:.3f}–{est.ci_high:.3f}" if est.ci_low is not None and est.ci_high is not None else ", no CI"
    return f"{est.value:.3f}{ci}, n={est.n:,}"


@dataclass(frozen=True)
class JudgeStanding:
    name: str
    par: Estimate
    kappa: Estimate
    baseline: bool = False


@dataclass(frozen=True)
class Verdict:
    sentence: str
    judge: str | None
    closest: str | None
    within_ceiling: tuple[str, ...]
    below_chance: tuple[str, ...]


def _reaches(par: Estimate, ceiling: Estimate, margin: float) -> bool:
    """At or above the ceiling (less the margin), or its CI reaching the ceiling's CI."""
    if par.value is None or ceiling.value is None:
        return False
    if par.value >= ceiling.value - margin:
        return True
    return par.ci_high is not None and ceiling.ci_low is not None and par.ci_high >= ceiling.ci_low


def verdict_against_ceiling(
    standings: Iterable[JudgeStanding], ranked: Recommendation | None, ceiling: Estimate | None, *, margin: float = 0.0
) -> Verdict:
    """Holds `ranked` (the judges compared with each other, `recommend`, run on the judges that are not
    baselines) against the humans' own agreement: the recommended judge must reach the ceiling
    (`CEILING_RULE`); otherwise nobody is recommended and the best judge is named only as the closest.
    Judges below chance are named as such; baselines are floors. Without a ceiling (no item with two
    human labels) the ranking stands, said to be relative to the other judges only."""
    rows = list(standings)
    judges = [r for r in rows if not r.baseline and r.par.value is not None]
    baselines = [r for r in rows if r.baseline and r.par.value is not None]
    below = tuple(r.name for r in judges if r.kappa.ci_high is not None and r.kappa.ci_high < 0)
    parts: list[str] = []
    if not judges:
        floor = max(baselines, key=lambda r: r.par.value, default=None)
        text = "No recommendation: only baselines have verdicts here, and baselines are floors, not judges to use"
        text += f" (the best, {floor.name}: PAR {_with_ci(floor.par)})." if floor else "."
        return Verdict(text, None, None, (), ())
    assert ranked is not None, "the judges that are not baselines were ranked"
    within = tuple(r.name for r in judges if ceiling is not None and _reaches(r.par, ceiling, margin))
    judge, closest = ranked.judge, ranked.best
    if ceiling is None or ceiling.value is None:
        parts.append(ranked.sentence)
        parts.append(
            "There is no human ceiling to hold it against (no item has two human labels): this choice is relative to the other judges only."
        )
    elif judge is not None and judge in within:
        parts.append(ranked.sentence)
        parts.append(f"Its PAR reaches the humans' own agreement (leave-one-out ceiling {_with_ci(ceiling)}).")
    elif ranked.judge is None and any(n in within for n in ranked.tied):
        parts.append(ranked.sentence)
        parts.append(f"{_names([n for n in ranked.tied if n in within])} reach the humans' ceiling ({_with_ci(ceiling)}).")
    else:
        best = next(r for r in judges if r.name == ranked.best)
        how = f"within {margin:.3f} of" if margin > 0 else "to"
        judge = None
        parts.append(
            f"No judge is recommended: no judge's PAR comes {how} the humans' agreement (leave-one-out ceiling "
            f"{_with_ci(ceiling)}). The closest is {best.name}, PAR {_with_ci(best.par)}."
        )
    if below:
        parts.append(f"Below chance (Cohen's kappa CI under 0): {_names(list(below))}.")
    if baselines:
        floor = max(baselines, key=lambda r: r.par.value)
        parts.append(f"Baselines are floors, never recommended: the best, {floor.name}, has PAR {_with_ci(floor.par)}.")
    return Verdict(" ".join(parts), judge, closest, within, below)
