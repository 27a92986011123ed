"""Cost against agreement: the Pareto frontier of judges and the recommended judge."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from calibration.metrics.agreement import PairedDifference
from calibration.metrics.bootstrap import Estimate

# --------------------------------------------------------------------------
# cost vs agreement
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class JudgePoint:
    name: str
    cost: float
    par: float
    n: int = 0


def _points(points) -> list[JudgePoint]:
    out = []
    for p in points:
        out.append(p if isinstance(p, JudgePoint) else JudgePoint(*p))
    return out


def pareto_frontier(points: Iterable[JudgePoint | tuple]) -> list[JudgePoint]:
    """Judges not dominated by another judge that is cheaper-or-equal and
    higher-or-equal in PAR with at least one strict; sorted by cost."""
    pts = _points(points)
    front = []
    for p in pts:
        dominated = any(
            q.cost <= p.cost and q.par >= p.par and (q.cost < p.cost or q.par > p.par) for q in pts if q is not p
        )
        if not dominated:
            front.append(p)
    return sorted(front, key=lambda p: (p.cost, -p.par, p.name))


@dataclass(frozen=True)
class Recommendation:
    judge: str
    best: str
    sentence: str
    difference: PairedDifference | None


def _fmt_ci(est: Estimate) -> str:
    if est.ci is None:
        return "no CI"
    return f"95% CI {est.ci_low:+.3f} to {est.ci_high:+.3f}"


def recommend(judges: Iterable[JudgePoint | tuple], differences: Iterable[PairedDifference]) -> Recommendation:
    """The cheapest judge whose PAR is not significantly below the best judge's.

    "Not significantly below" = the paired-bootstrap CI of PAR(best) - PAR(judge)
    reaches 0 or below.  Judges without a paired difference against the best
    judge cannot be cleared and are skipped.
    """
    pts = _points(judges)
    if not pts:
        raise ValueError("no judges to recommend from")
    best = max(pts, key=lambda p: (p.par, -p.cost))
    diffs = list(differences)

    def against_best(name: str) -> tuple[Estimate, PairedDifference] | None:
        for d in diffs:
            est = d.difference
            if est.value is None:
                continue
            if d.judge_a == best.name and d.judge_b == name:
                return est, d
            if d.judge_a == name and d.judge_b == best.name:
                flipped = Estimate(
                    -est.value,
                    est.n,
                    None if est.ci_high is None else -est.ci_high,
                    None if est.ci_low is None else -est.ci_low,
                )
                return flipped, d
        return None

    for p in sorted(pts, key=lambda q: (q.cost, -q.par, q.name)):
        if p.name == best.name:
            break
        found = against_best(p.name)
        if found is None:
            continue
        est, d = found
        if est.ci_low is not None and est.ci_low <= 0:
            sentence = (
                f"Use {p.name} (cost {p.cost:g} vs {best.cost:g}): its PAR {p.par:.3f} (n={p.n:,}) is not "
                f"significantly below the best judge {best.name}'s {best.par:.3f} (n={best.n:,}); "
                f"difference {est.value:+.3f}, {_fmt_ci(est)}, paired bootstrap over {d.n_pairs:,} pairs "
                f"(n={est.n:,} human labels)."
            )
            return Recommendation(p.name, best.name, sentence, d)
    sentence = (
        f"Use {best.name} (cost {best.cost:g}): it has the best PAR {best.par:.3f} (n={best.n:,}) and every "
        f"cheaper judge is significantly below it or has no paired comparison."
    )
    return Recommendation(best.name, best.name, sentence, None)
