"""Benchmark of calibration.metrics on seeded synthetic data.

    .venv/bin/python bench/calibration.py [--pairs 1282] [--rounds 1000] [--naive-rounds 2] [--no-naive]
    .venv/bin/python bench/calibration.py --realistic [--topics 86] [--runs 3] [--keep DIR | --reuse DIR] [--profile]

The default is the synthetic metrics benchmark below. ``--realistic`` runs the
end-to-end path instead (bench/calibration_realistic.py, options there): a
seeded benchmark and ~200,000 labels and verdicts imported through the real
commands into SQLite, then ``calibration_report`` timed in a subprocess, database
read included, against the 18.2 s / 430 MB baseline (targets 10 s, 1 GB).

Data (seeded): 1,282 pairs x 39 criteria = 49,998 items.  Humans: 1, 2 or 3
annotators per item (probabilities 1/4, 1/2, 1/4; ~100,000 labels).  Four
judges, each run in both orders on every item (99,996 verdicts each), built
with known rates of copying the latent true verdict plus position and length
preferences.  Total ~500,000 labels.

Fast path (timed): the full set of figures for the humans and all 4 judges,
every confidence interval from a 1,000-round pair bootstrap: position
consistency / first-position rate, merged swapped runs, PAR / majority PAR /
no-tie PAR with per-category and per-criterion breakdowns, Cohen's kappa,
length bias, human ceiling (leave-one-out PAR, all-pairs PAR, Krippendorff's
alpha), Bradley-Terry (overall and per category) for the humans and each
judge, win rates vs wikipedia, Kendall's tau of each judge's ranking vs the
humans', paired differences between all 6 judge pairs, Pareto frontier and
recommendation.

Naive baseline (for the ratio): a straightforward per-row pure-Python version
on a list of ``LabelRow`` objects (dicts of lists, one pass per figure; BT from
choix.ilsr_pairwise on one (winner, loser) tuple per row, wins doubled and a
tie counted as one win each way).  It computes the same point figures once,
then runs a few bootstrap rounds the naive way (resample pairs, copy their
rows, recompute every figure); the cost of 1,000 rounds is EXTRAPOLATED
linearly from those few rounds — the naive 1,000 rounds are never run.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import time
from collections import Counter, defaultdict
from dataclasses import replace
from itertools import combinations

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import choix  # noqa: E402

from calibration import metrics as M  # noqa: E402
from calibration.metrics import bootstrap  # noqa: E402

REFERENCE = "wikipedia"
SYSTEMS = ("co-storm", "direct-llm", "rag-outline", "storm", "wikipedia")  # name-sorted = code order
BASE_ELO = {"wikipedia": 0.0, "co-storm": -20.0, "storm": -45.0, "rag-outline": -95.0, "direct-llm": -160.0}
CATEGORIES = ("coverage", "structure", "verifiability", "neutrality", "style", "readability")
# name, P(copies the latent verdict), P(first shown | not copying), P(longer | not copying), cost per 1k verdicts
JUDGES = (
    ("judge-xl", 0.80, 0.25, 0.25, 15.0),
    ("judge-l", 0.795, 0.27, 0.25, 3.0),
    ("judge-m", 0.72, 0.45, 0.30, 0.6),
    ("judge-s", 0.55, 0.55, 0.30, 0.15),
)
N_CRIT = 39
N_ANNOTATORS = 60


# --------------------------------------------------------------------------
# synthetic data
# --------------------------------------------------------------------------


def generate(n_pairs: int, seed: int = 0):
    """Integer-coded columns for humans + judges (numpy only)."""
    rng = np.random.default_rng(seed)
    s_n = len(SYSTEMS)
    ref = SYSTEMS.index(REFERENCE)
    ai = [i for i in range(s_n) if i != ref]
    # pair systems: 60% wikipedia vs an AI system, 40% two AI systems
    with_ref = rng.random(n_pairs) < 0.6
    x = np.where(with_ref, ref, rng.choice(ai, n_pairs))
    y = rng.choice(ai, n_pairs)
    clash = x == y
    while clash.any():
        y[clash] = rng.choice(ai, int(clash.sum()))
        clash = x == y
    pa, pb = np.minimum(x, y), np.maximum(x, y)
    p_longer = rng.integers(0, 2, n_pairs)

    crit_cat = (np.arange(N_CRIT) * len(CATEGORIES)) // N_CRIT
    elo = np.array([BASE_ELO[s] for s in SYSTEMS])[:, None] + rng.normal(0, 40, (s_n, N_CRIT))

    n_items = n_pairs * N_CRIT
    it_pair = np.repeat(np.arange(n_pairs), N_CRIT)
    it_crit = np.tile(np.arange(N_CRIT), n_pairs)
    ia, ib = pa[it_pair], pb[it_pair]
    p_a = 1.0 / (1.0 + 10 ** ((elo[ib, it_crit] - elo[ia, it_crit]) / 400.0))
    u = rng.random(n_items)
    p_tie = 0.12
    truth = np.where(u < p_tie, 2, np.where(rng.random(n_items) < p_a, 0, 1))

    # humans: 1-3 per item, 78% report the latent verdict, else uniform
    k = rng.choice([1, 2, 3], n_items, p=[0.25, 0.5, 0.25])
    h_item = np.repeat(np.arange(n_items), k)
    slot = np.arange(len(h_item)) - np.repeat(np.cumsum(k) - k, k)
    start = rng.integers(0, N_ANNOTATORS, n_items)
    h_rater = (start[h_item] + 17 * slot) % N_ANNOTATORS
    h_out = np.where(rng.random(len(h_item)) < 0.78, truth[h_item], rng.integers(0, 3, len(h_item)))
    cols = {
        "item": [h_item],
        "rater": [h_rater],
        "outcome": [h_out],
        "first": [np.full(len(h_item), -1)],
    }
    # judges: both orders on every item
    for j, (_, q, pos, lng, _) in enumerate(JUDGES):
        item2 = np.repeat(np.arange(n_items), 2)
        first = np.tile([0, 1], n_items)
        v = rng.random(len(item2))
        w = rng.random(len(item2))
        noise = np.where(
            w < pos,
            first,
            np.where(w < pos + lng, p_longer[it_pair[item2]], rng.integers(0, 3, len(item2))),
        )
        out = np.where(v < q, truth[item2], noise)
        cols["item"].append(item2)
        cols["rater"].append(np.full(len(item2), N_ANNOTATORS + j))
        cols["outcome"].append(out)
        cols["first"].append(first)
    item = np.concatenate(cols["item"])
    raw = dict(
        pair=it_pair[item],
        criterion=it_crit[item],
        category=crit_cat[it_crit[item]],
        rater=np.concatenate(cols["rater"]),
        sys_lo=ia[item],
        sys_hi=ib[item],
        outcome=np.concatenate(cols["outcome"]),
        first=np.concatenate(cols["first"]),
        longer=p_longer[it_pair[item]],
    )
    vocab = M.Vocab(
        pairs=tuple(f"topic-{i:05d}" for i in range(n_pairs)),
        criteria=tuple(f"crit-{c:02d}" for c in range(N_CRIT)),
        categories=CATEGORIES,
        raters=tuple(f"annotator-{i:02d}" for i in range(N_ANNOTATORS)) + tuple(j[0] for j in JUDGES),
        rater_kinds=("human",) * N_ANNOTATORS + ("judge",) * len(JUDGES),
        systems=SYSTEMS,
    )
    return vocab, raw


# --------------------------------------------------------------------------
# fast path
# --------------------------------------------------------------------------


def run_fast(vocab, raw, rounds: int):
    table = M.LabelTable(vocab, **raw)
    humans = table.humans()
    out = {"table": table}
    out["ceiling"] = M.human_ceiling(humans, rounds=rounds)
    out["bt:humans"] = M.bradley_terry(humans, reference=REFERENCE, rounds=rounds)
    out["btcat:humans"] = M.bradley_terry_by_category(humans, reference=REFERENCE, rounds=rounds)
    out["wr:humans"] = M.win_rate_vs_reference(humans, REFERENCE, rounds=rounds)
    merged = {}
    for name, *_ in JUDGES:
        jt = table.for_rater(name)
        out[f"pos:{name}"] = (M.position_consistency(jt, rounds=rounds), M.first_position_rate(jt, rounds=rounds))
        merged[name] = m = M.merge_swapped(jt)
        out[f"agr:{name}"] = M.agreement(m, humans, rounds=rounds)
        out[f"len:{name}"] = M.prefers_longer(m, rounds=rounds)
        out[f"bt:{name}"] = M.bradley_terry(m, reference=REFERENCE, rounds=rounds)
        out[f"btcat:{name}"] = M.bradley_terry_by_category(m, reference=REFERENCE, rounds=rounds)
        out[f"wr:{name}"] = M.win_rate_vs_reference(m, REFERENCE, rounds=rounds)
        out[f"tau:{name}"] = M.kendall_tau(out["bt:humans"], out[f"bt:{name}"])
    diffs = []
    for (a, *_), (b, *_) in combinations(JUDGES, 2):
        d = M.paired_difference(merged[a], merged[b], humans, rounds=rounds)
        out[f"diff:{a}:{b}"] = d
        diffs.append(d)
    points = [M.JudgePoint(name, cost, out[f"agr:{name}"].par.value, out[f"agr:{name}"].par.n) for name, *_, cost in JUDGES]
    out["pareto"] = M.pareto_frontier(points)
    out["recommend"] = M.recommend(points, diffs)
    return out


def fast_points(out) -> dict[str, float]:
    """Point figures of the fast path, keyed like the naive ones."""
    p: dict[str, float] = {}
    c = out["ceiling"]
    p["loo"], p["allpairs"], p["alpha"] = c.loo_par.value, c.all_pairs_par.value, c.alpha.value
    for who in ["humans"] + [j[0] for j in JUDGES]:
        for s, sc in out[f"bt:{who}"].scores.items():
            p[f"bt:{who}:{s}"] = sc.score
        for cat, res in out[f"btcat:{who}"].items():
            for s, sc in res.scores.items():
                p[f"btcat:{who}:{cat}:{s}"] = sc.score
        for s, e in out[f"wr:{who}"].overall.items():
            p[f"wr:{who}:{s}"] = e.value
    for name, *_ in JUDGES:
        a = out[f"agr:{name}"]
        p[f"par:{name}"], p[f"parmaj:{name}"] = a.par.value, a.par_majority.value
        p[f"parnt:{name}"], p[f"kappa:{name}"] = a.par_no_ties.value, a.kappa.value
        for cat, e in a.by_category.items():
            p[f"parcat:{name}:{cat}"] = e.value
        for crit, e in a.by_criterion.items():
            p[f"parcrit:{name}:{crit}"] = e.value
        consistency, first = out[f"pos:{name}"]
        p[f"cons:{name}"], p[f"first:{name}"] = consistency.value, first.value
        p[f"longer:{name}"] = out[f"len:{name}"].value
    for (a, *_), (b, *_) in combinations(JUDGES, 2):
        p[f"diff:{a}:{b}"] = out[f"diff:{a}:{b}"].difference.value
    return p


# --------------------------------------------------------------------------
# naive per-row pure-Python baseline
# --------------------------------------------------------------------------


def naive_bt(rows, systems):
    idx = {s: i for i, s in enumerate(systems)}
    data = []
    for r in rows:
        a, b = idx[r.system_a], idx[r.system_b]
        if r.winner == r.system_a:
            data += [(a, b), (a, b)]
        elif r.winner == r.system_b:
            data += [(b, a), (b, a)]
        else:
            data += [(a, b), (b, a)]
    present = sorted({i for d in data for i in d})
    remap = {s: k for k, s in enumerate(present)}
    theta = choix.ilsr_pairwise(len(present), [(remap[x], remap[y]) for x, y in data])
    ref = theta[remap[idx[REFERENCE]]]
    return {systems[s]: 1000 + 400 / math.log(10) * (theta[remap[s]] - ref) for s in present}


def naive_winrate(rows):
    score, n = defaultdict(float), defaultdict(int)
    for r in rows:
        if REFERENCE not in (r.system_a, r.system_b):
            continue
        other = r.system_b if r.system_a == REFERENCE else r.system_a
        score[other] += 1.0 if r.winner == other else 0.5 if r.winner == M.TIE else 0.0
        n[other] += 1
    return {s: score[s] / n[s] for s in n}


def majority(labels):
    c = Counter(labels)
    top, cnt = c.most_common(1)[0]
    return top if cnt * 2 > len(labels) else None


def naive_point(rows):
    p = {}
    humans = [r for r in rows if r.rater_kind == "human"]
    by_judge = defaultdict(list)
    for r in rows:
        if r.rater_kind == "judge":
            by_judge[r.rater].append(r)
    votes = defaultdict(list)
    for r in humans:
        votes[(r.pair, r.criterion)].append(r)

    # human ceiling
    loo_a = loo_n = ap_a = ap_n = 0
    coinc = defaultdict(float)
    for labs in votes.values():
        ws = [r.winner for r in labs]
        for i, w in enumerate(ws):
            others = ws[:i] + ws[i + 1 :]
            if others:
                maj = majority(others)
                if maj is not None:
                    loo_n += 1
                    loo_a += maj == w
        for x, y in combinations(ws, 2):
            ap_n += 1
            ap_a += x == y
        if len(ws) >= 2:
            for i, x in enumerate(ws):
                for j, y in enumerate(ws):
                    if i != j:
                        coinc[(x, y)] += 1.0 / (len(ws) - 1)
    p["loo"], p["allpairs"] = loo_a / loo_n, ap_a / ap_n
    n_c = defaultdict(float)
    for (x, _), v in coinc.items():
        n_c[x] += v
    n = sum(n_c.values())
    d_o = sum(v for (x, y), v in coinc.items() if x != y)
    d_e = sum(n_c[x] * n_c[y] for x in n_c for y in n_c if x != y)
    p["alpha"] = 1 - (n - 1) * d_o / d_e

    def bt_block(who, rs):
        for s, v in naive_bt(rs, SYSTEMS).items():
            p[f"bt:{who}:{s}"] = v
        for cat in CATEGORIES:
            sub = [r for r in rs if r.category == cat]
            for s, v in naive_bt(sub, SYSTEMS).items():
                p[f"btcat:{who}:{cat}:{s}"] = v
        for s, v in naive_winrate(rs).items():
            p[f"wr:{who}:{s}"] = v

    bt_block("humans", humans)
    merged_all = {}
    for name, jrows in by_judge.items():
        orders = defaultdict(dict)
        for r in jrows:
            orders[(r.pair, r.criterion)].setdefault(r.first_system, r)
        cons_a = cons_n = first_a = first_n = 0
        merged = {}
        for key, d in orders.items():
            rs = list(d.values())
            for r in rs:
                if r.winner != M.TIE:
                    first_n += 1
                    first_a += r.winner == r.first_system
            if len(rs) == 2:
                cons_n += 1
                same = rs[0].winner == rs[1].winner
                cons_a += same
                merged[key] = replace(rs[0], winner=rs[0].winner if same else M.TIE, first_system=None)
            else:
                merged[key] = replace(rs[0], first_system=None)
        p[f"cons:{name}"], p[f"first:{name}"] = cons_a / cons_n, first_a / first_n
        merged_all[name] = merged

        agree = n_lab = nt_a = nt_n = maj_a = maj_n = 0
        cat_a, cat_n, crit_a, crit_n = Counter(), Counter(), Counter(), Counter()
        y_j, y_h = [], []
        lj_a = lj_n = 0
        for key, j in merged.items():
            labs = votes.get(key)
            if not labs:
                continue
            if j.winner != M.TIE and j.longer_system:
                lj_n += 1
                lj_a += j.winner == j.longer_system
            for h in labs:
                ok = h.winner == j.winner
                agree += ok
                n_lab += 1
                cat_a[h.category] += ok
                cat_n[h.category] += 1
                crit_a[h.criterion] += ok
                crit_n[h.criterion] += 1
                if h.winner != M.TIE and j.winner != M.TIE:
                    nt_n += 1
                    nt_a += ok
            maj = majority([h.winner for h in labs])
            if maj is not None:
                maj_n += 1
                maj_a += maj == j.winner
                y_j.append(j.winner)
                y_h.append(maj)
        p[f"par:{name}"], p[f"parmaj:{name}"], p[f"parnt:{name}"] = agree / n_lab, maj_a / maj_n, nt_a / nt_n
        for c in cat_n:
            p[f"parcat:{name}:{c}"] = cat_a[c] / cat_n[c]
        for c in crit_n:
            p[f"parcrit:{name}:{c}"] = crit_a[c] / crit_n[c]
        po = sum(a == b for a, b in zip(y_j, y_h)) / len(y_j)
        cj, ch = Counter(y_j), Counter(y_h)
        pe = sum(cj[k] * ch[k] for k in cj) / len(y_j) ** 2
        p[f"kappa:{name}"] = (po - pe) / (1 - pe)
        p[f"longer:{name}"] = lj_a / lj_n
        bt_block(name, list(merged.values()))
    for a, b in combinations(sorted(merged_all, key=[j[0] for j in JUDGES].index), 2):
        da = n_d = 0
        for key, ja in merged_all[a].items():
            jb = merged_all[b].get(key)
            if jb is None or key not in votes:
                continue
            for h in votes[key]:
                da += (h.winner == ja.winner) - (h.winner == jb.winner)
                n_d += 1
        p[f"diff:{a}:{b}"] = da / n_d
    return p


def naive_round(rows_by_pair, seed):
    """One naive bootstrap round: resample pairs, copy their rows, recompute."""
    rng = random.Random(seed)
    keys = list(rows_by_pair)
    rows = []
    for k in range(len(keys)):
        pair = keys[rng.randrange(len(keys))]
        rows.extend(replace(r, pair=f"{pair}#{k}") for r in rows_by_pair[pair])
    return naive_point(rows)


# --------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------


def fmt(e: M.Estimate) -> str:
    if e.value is None:
        return "n/a"
    ci = f" [{e.ci_low:.3f}, {e.ci_high:.3f}]" if e.ci else ""
    return f"{e.value:.3f}{ci} n={e.n:,}"


def report(out):
    c = out["ceiling"]
    print("\nHuman ceiling")
    print(f"  leave-one-out PAR {fmt(c.loo_par)} (excluded {c.n_loo_excluded:,})")
    print(f"  all-pairs PAR     {fmt(c.all_pairs_par)}")
    print(f"  Krippendorff alpha {fmt(c.alpha)}")
    print("\nJudges (merged swapped runs) vs humans")
    for name, q, *_ in JUDGES:
        a, pos, lb = out[f"agr:{name}"], out[f"pos:{name}"], out[f"len:{name}"]
        print(f"  {name:9s} (copies latent verdict {q:.0%})")
        print(f"    PAR {fmt(a.par)} | majority {fmt(a.par_majority)} (no majority {a.n_no_majority:,})")
        print(f"    no-ties {fmt(a.par_no_ties)} kept {a.share_kept:.1%} | kappa {fmt(a.kappa)}")
        print(f"    position consistency {fmt(pos[0])} | first shown {fmt(pos[1])}")
        print(f"    prefers longer {fmt(lb)}")
        print(f"    Kendall tau vs human BT ranking {out[f'tau:{name}'].tau:.3f}")
    print("\nBradley-Terry (humans), wikipedia = 1000")
    for s, sc in out["bt:humans"].scores.items():
        print(f"  {s:12s} {sc.score:7.1f} [{sc.ci_low:7.1f}, {sc.ci_high:7.1f}] n={sc.n:,}")
    print("\nPaired differences PAR(a) - PAR(b)")
    for (a, *_), (b, *_) in combinations(JUDGES, 2):
        d = out[f"diff:{a}:{b}"]
        print(f"  {a:9s} - {b:9s} {fmt(d.difference)} {'significant' if d.significant else 'n.s.'}")
    print("\nPareto frontier:", ", ".join(f"{p.name} ({p.cost:g}, {p.par:.3f})" for p in out["pareto"]))
    print("Recommendation:", out["recommend"].sentence)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--realistic" in argv:
        import calibration_realistic  # bench/ is on sys.path when this file runs as a script

        return calibration_realistic.main([a for a in argv if a != "--realistic"])
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--realistic", action="store_true", help="the end-to-end path (see bench/calibration_realistic.py --help)")
    ap.add_argument("--pairs", type=int, default=1282)
    ap.add_argument("--rounds", type=int, default=1000)
    ap.add_argument("--naive-rounds", type=int, default=2)
    ap.add_argument("--no-naive", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    t = time.perf_counter()
    vocab, raw = generate(args.pairs, args.seed)
    n_rows = len(raw["pair"])
    n_h = int((raw["rater"] < N_ANNOTATORS).sum())
    print(
        f"synthetic data: {n_rows:,} labels ({n_h:,} human, {n_rows - n_h:,} from {len(JUDGES)} judges), "
        f"{args.pairs:,} pairs x {N_CRIT} criteria, generated in {time.perf_counter() - t:.2f} s (not timed)"
    )

    bootstrap.clear_draw_caches()
    t0 = time.perf_counter()
    out = run_fast(vocab, raw, args.rounds)
    fast = time.perf_counter() - t0
    report(out)
    print(f"\nFAST: all figures incl. {args.rounds:,}-round pair bootstraps: {fast:.2f} s ({os.cpu_count()} CPUs, target <= 10 s)")

    if args.no_naive:
        return
    rows = out["table"].to_labels()  # conversion to row objects is not timed
    t1 = time.perf_counter()
    naive = naive_point(rows)
    naive_pt = time.perf_counter() - t1
    fp = fast_points(out)
    common = sorted(set(fp) & set(naive))
    worst = max(abs(fp[k] - naive[k]) for k in common)
    missing = sorted(set(fp) ^ set(naive))
    print(
        f"\nNAIVE per-row pure Python: point figures {naive_pt:.2f} s; {len(common)} figures match the fast "
        f"path to {worst:.1e}" + (f" (unmatched keys: {missing[:5]})" if missing else "")
    )
    by_pair = defaultdict(list)
    for r in rows:
        by_pair[r.pair].append(r)
    per_round = []
    for k in range(args.naive_rounds):
        t2 = time.perf_counter()
        naive_round(by_pair, seed=k)
        per_round.append(time.perf_counter() - t2)
    if per_round:
        avg = sum(per_round) / len(per_round)
        naive_total = naive_pt + args.rounds * avg
        print(
            f"NAIVE bootstrap: {len(per_round)} rounds measured, {avg:.2f} s/round -> EXTRAPOLATED to "
            f"{args.rounds:,} rounds: {naive_total:,.0f} s ({naive_total / 3600:.2f} h) in total"
        )
        print(f"RATIO naive (extrapolated) / fast = {naive_total / fast:,.0f}x")


if __name__ == "__main__":
    main()
