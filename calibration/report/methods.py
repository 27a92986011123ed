"""`calibration_report --format methods`: a methods paragraph and a table, from the report's own figures.

Nothing is computed here: every figure is read from the report's sections (`plan`, `humans`,
`judges`, `alt_test`, `selective` when present) and written with its n, and its 95% CI where it is
an estimate. Plain Markdown text. Pure: no Django.
"""

from __future__ import annotations

from calibration.plan.check import deviation_text

DASH = "—"


def _ci(ci) -> str:
    if not ci or ci[0] is None or ci[1] is None:
        return "no CI"
    return f"95% CI {ci[0]:.3f}–{ci[1]:.3f}"


def _flat(section: dict, name: str, n_key: str | None = None) -> str:
    """A flat figure (`<name>`, `<name>_ci`, n, pairs) in words: `0.712 (95% CI 0.650–0.770; n = 120 labels, 12 pairs)`."""
    value = section.get(name)
    if value is None:
        return "not estimable"
    n = section.get(n_key or f"{name}_n")
    pairs = section.get(f"{name}_n_pairs")
    ci = section.get(f"{name}_ci_note") or _ci(section.get(f"{name}_ci"))
    return f"{value:.3f} ({ci}; n = {n:,}{'' if pairs is None else f', {pairs:,} pairs'})"


def _nested(entry: dict | None) -> str:
    if not entry or entry.get("value") is None:
        return "not estimable"
    ci = entry.get("ci_note") or _ci(entry.get("ci"))
    pairs = entry.get("n_pairs")
    return f"{entry['value']:.3f} ({ci}; n = {entry['n']:,}{'' if pairs is None else f', {pairs:,} pairs'})"


def _design_sentence(report: dict) -> str:
    c, plan, humans = report["campaign"], report.get("plan") or {}, report["humans"]
    design, rubric = plan.get("design") or {}, plan.get("rubric") or {}
    protocol = design.get("protocol", "pairwise")
    criteria = rubric.get("n_criteria")
    parts = [
        f"Campaign “{c['name']}” used the {protocol} protocol: annotators saw two articles on one topic and chose the better on each "
        f"criterion of the rubric {c['criterion_set']}" + (f" ({criteria} criteria)" if criteria is not None else "") + ".",
        f"The campaign holds {design['pairs']:,} pairs" if design.get("pairs") is not None else "The campaign's pairs",
    ]
    if design.get("overlap") is not None:
        parts[-1] += f", each to be labelled by {design['overlap']} annotator{'s' if design['overlap'] != 1 else ''}"
    parts[-1] += (
        f"; the analysis rests on {report['n_pairs']:,} pairs, with {humans['n_labels']:,} human labels from "
        f"{humans['n_annotators']} annotators on {humans['n_items']:,} items (pair × criterion)."
    )
    if humans.get("n_cannot_judge"):
        n = humans["n_cannot_judge"]
        parts[-1] += f" {n:,} answer{'s were' if n != 1 else ' was'} “cannot judge”: left out of every figure, and never counted as a tie."
    if design:
        parts.append(
            f"Ties were {'allowed' if design.get('allow_tie') else 'not allowed'}; a rationale was "
            f"{'required' if design.get('rationale_required') else 'optional'}"
            + (f" (at least {design['rationale_min_length']} characters)" if design.get("rationale_required") else "")
            + f"; bold and italic were {'neutralised' if design.get('neutral_emphasis') else 'shown as written'}"
            + ("; headings were shown in sentence case without numbering" if design.get("neutral_headings") else "")
            + (
                f"; after each pair, annotators were asked which article they thought was the {design.get('reference_name') or 'reference'} article"
                if design.get("guess_question")
                else ""
            )
            + "."
        )
    return " ".join(parts)


def _humans_sentence(humans: dict) -> str:
    return (
        "Agreement among the annotators: leave-one-out pairwise agreement (each annotator against the strict majority of the others, "
        "ties dropped) "
        f"{_flat(humans, 'par_leave_one_out')}; Fleiss' κ {_nested(humans.get('fleiss_kappa'))}; "
        f"Krippendorff's α {_flat(humans, 'krippendorff_alpha')}. Intervals are pair-bootstrap percentiles."
    )


def _judges_sentence(report: dict) -> str:
    judges = report["judges"]
    if not judges:
        return "No judge was evaluated."
    each = [f"{j['name']} {_flat(j, 'par', 'n_labels')}" for j in judges]
    p = report.get("parameters", {})
    majority = [f"{j['name']} {_flat(j, 'par_majority')}" for j in judges]
    rule = p.get("majority_rule") or "the strict majority of each item, items without one left out"
    return (
        f"Pairwise agreement of each judge with the humans (PAR, the mean single-label accuracy: every human label counts once): "
        f"{'; '.join(each)}. Majority-vote accuracy ({rule}): {'; '.join(majority)}."
    )


def _alt_sentence(report: dict) -> str:
    alt = report.get("alt_test")
    if not alt:
        return ""
    if alt.get("epsilon") is None:
        return "The alternative annotator test was not run: no ε was chosen."
    words = []
    for name, figures in (alt.get("judges") or {}).items():
        pooled = figures["pooled"]
        if not pooled.get("ran"):
            words.append(f"{name}: not run ({pooled.get('reason')})")
            continue
        items = pooled.get("items_per_annotator") or {}
        spread = f"{min(items.values())}–{max(items.values())}" if items else DASH
        words.append(
            f"{name}: ω = {pooled['omega']:.3f} ({pooled['n_rejected']} of {pooled['n_annotators']} annotators beaten), "
            f"ρ = {_nested(pooled['rho'])}, {spread} {alt['unit']}s per annotator, {'passes' if pooled['passes'] else 'does not pass'}"
        )
    return (
        f"The alternative annotator test (ε = {alt['epsilon']:g}: {alt.get('epsilon_reason') or 'no reason recorded'}; "
        f"unit: {alt['unit']}; Benjamini–Yekutieli at q = {alt['q']:g}) gives " + ("; ".join(words) or "no judge") + "."
    )


def _interval(entry: dict | None) -> str:
    """A `selective` estimate ({value, n, ci_low, ci_high}) in words."""
    if not entry or entry.get("value") is None:
        return "not estimable"
    ci = "no CI" if entry.get("ci_low") is None else f"95% CI {entry['ci_low']:.3f}–{entry['ci_high']:.3f}"
    return f"{entry['value']:.3f} ({ci}; n = {entry['n']:,})"


def _selective_sentence(report: dict) -> str:
    sel = report.get("selective")
    if not sel or not sel.get("requested"):
        return ""
    if "error" in sel:
        return f"Selective judging was planned (α = {sel['alpha']:g}, δ = {sel['delta']:g}) but could not be calibrated: {sel['error']}."
    stages = [
        f"{s['judge']} (λ̂ = {'none' if s['threshold'] is None else format(s['threshold'], '.4g')}) accepts {s['n_accepted']:,} of "
        f"{s['n_reaching']:,} items, agreement {_interval(s['agreement'])}"
        for s in sel.get("stages", [])
    ]
    hold = sel.get("holdout")
    check = (
        ""
        if hold is None
        else f" On {hold['n']:,} held-out items the cascade accepts {hold['n_accepted']:,}, with agreement {_interval(hold['agreement'])} "
        f"beside 1 − α = {hold['target']:g}."
    )
    cost = "" if sel.get("cost") is None else f" Cost {sel['cost']:.4f} USD against {sel['all_human_cost']:.4f} USD all-human."
    return (
        f"Selective judging with a guarantee (α = {sel['alpha']:g}, δ = {sel['delta']:g}; thresholds by fixed-sequence testing with "
        f"Clopper–Pearson bounds on {sel['n_calibration']:,} calibration items): {sel['guarantee_words']}. Cascade: "
        + ("; ".join(stages) or "no judge")
        + f"; {sel['n_to_humans']:,} items ({sel['human_share']:.1%}) go to humans. {sel['cascade_guarantee']}"
        + check
        + cost
    )


def _plan_sentence(plan: dict | None) -> str:
    if not plan or not plan.get("frozen"):
        return "The analysis was not pre-registered (no study plan was frozen)."
    head = "The stored plan was altered after it was frozen (its record no longer matches its hash). " if plan.get("altered") else ""
    head += f"The analysis plan was frozen on {plan['frozen_at']} (SHA-256 {plan['sha256']}), with {plan['planned_pairs']:,} planned pairs."
    deviations = plan.get("deviations") or []
    if not deviations:
        return head + " There was no deviation from it."
    return head + f" Deviations ({len(deviations)}): " + "; ".join(deviation_text(d) for d in deviations) + "."


def _blinding_sentence(report: dict) -> str:
    """Bang's index per arm and James' index (`blinding`), when annotators (or judges) answered the guess question."""
    section = report.get("blinding")
    if not section:
        return ""

    def figure(entry: dict) -> str:
        if entry["value"] is None:
            return DASH
        return f"{entry['value']:.3f} ({_ci(entry['ci'])})"

    def arms(overall: dict) -> str:
        return "; ".join(
            f"reference shown {arm}, {figure(overall['bang'][arm])} ({overall['bang'][arm]['guesses']} guesses, "
            f"{overall['bang'][arm]['dont_know']} don't know)"
            for arm in ("first", "second")
        )

    sentences = []
    overall = section.get("overall")
    if overall:
        sentences.append(
            f"Blinding: Bang's index per arm (the two randomised display orders): {arms(overall)}; James' index over both arms "
            f"{figure(overall['james'])}; {overall['james']['missing']} question(s) left unanswered, counted as missing."
        )
    judges = {name: judge["overall"] for name, judge in (section.get("judges") or {}).items() if judge["overall"]}
    if judges:
        each = "; ".join(f"{name}: {arms(o)}, James' index {figure(o['james'])}" for name, o in judges.items())
        sentences.append(
            "The judges were asked the same question in a call of its own about each pair and order shown, "
            f"apart from their verdicts. Bang's index per arm and James' index: {each}."
        )
    return " ".join(sentences)


def _likeness_sentence(report: dict) -> str:
    """Each judge's kappa with the annotators as a z-score against theirs with each other (`human_likeness`)."""
    h = report.get("human_likeness")
    if not h or not h.get("judges"):
        return ""
    spread = (
        f"mean {h['human_kappa_mean']:.3f}, SD {h['human_kappa_sd']:.3f}"
        if h.get("human_kappa_mean") is not None and h.get("human_kappa_sd") is not None
        else "no spread"
    )
    judges = "; ".join(f"{j['judge']} z = {_nested(j['z'])}, {j['class'] or j['note']}" for j in h["judges"])
    return (
        f"Human-likeness: each judge's mean Cohen's κ with the annotators as a z-score against the annotators' κ with each other "
        f"({spread} over {h['n_annotator_pairs']:,} annotator pairs of {h['n_annotators']:,} annotators; |z| < 1 human-like): {judges}."
    )


def _consensus_sentence(report: dict) -> str:
    """Agreement on unanimous, split and single-annotator items (`consensus`)."""
    c = report.get("consensus")
    if not c:
        return ""
    n = c["n_items"]
    shares = "; ".join(f"{criterion} {_nested(e)}" for criterion, e in c["split_share"].items()) or "no item with two annotators"
    humans = f"the annotators' own PAR (every two on an item) on split items {_nested(c['humans']['split']['par'])}"
    judges = "; ".join(
        f"{j['judge']}: PAR unanimous {_nested(j['strata']['unanimous']['par'])}, split {_nested(j['strata']['split']['par'])}"
        + (f" ({j['note']})" if j["note"] else "")
        for j in c["judges"]
    )
    return (
        f"Agreement by consensus: of the items, {n['unanimous']:,} were unanimous (two or more annotators, one verdict), "
        f"{n['split']:,} split and {n['single']:,} had one annotator; the share of split items per criterion: {shares}; {humans}"
        + (f"; {judges}." if judges else ".")
    )


def _ties_sentence(report: dict) -> str:
    """The calibrated tie threshold (`tie_accuracy`) and Davidson's tie parameter (`davidson`)."""
    parts = []
    t = report.get("tie_accuracy") or {}
    judged = [j for j in t.get("judges", []) if j["epsilon"] is not None]
    if judged:
        figures = "; ".join(
            f"{j['judge']}: ε = {j['epsilon']:.3f} ({j['n_candidates']:,} candidates), held-out accuracy with ties "
            f"{_nested(j['held_out'])}, its own verdicts {_nested(j['held_out_own_verdicts'])}"
            for j in judged
        )
        parts.append(
            f"Ties: for judges with confidences, a tie was predicted when |p(first) − p(second)| ≤ ε, ε chosen on a calibration "
            f"split to maximise the accuracy with ties (tie calibration, {t['citation']}; {t['split_rule']}; {t['distribution_rule']}) "
            f"and the accuracy reported on the held-out split: {figures}."
        )
    d = (report.get("davidson") or {}).get("raters") or {}
    fitted = {name: f for name, f in d.items() if f["nu"] is not None}
    if fitted:
        figures = "; ".join(
            (
                f"{name}: no ties (ν = 0)"
                if f["tie_share"] == 0
                else f"{name}: ν = {f['nu']:.3f} ({_ci(f['nu_ci'])}; n = {f['n']:,}, {f['n_pairs']:,} pairs)"
            )
            + (", ranking changed" if (report["davidson"]["rankings"].get(name) or {}).get("changed") else "")
            for name, f in fitted.items()
        )
        parts.append(
            f"Systems were also ranked by Bradley–Terry with Davidson's tie parameter ν (maximum likelihood, pair-bootstrap CIs), "
            f"beside the ranking that counts a tie as half a win: {figures}."
        )
    return " ".join(parts)


def _soft_sentence(report: dict) -> str:
    s = report.get("soft_labels") or {}
    if not s.get("judges"):
        return ""
    figures = "; ".join(f"{j['judge']} {_nested(j['tv'])} (verdicts taken whole {_nested(j['tv_whole_verdicts'])})" for j in s["judges"])
    return (
        f"Soft labels: per item, the annotators' distribution over the answers; judges with confidences were scored by the mean "
        f"total-variation distance of their answer distribution ({s['distribution_rule']}) to it: {figures}."
    )


def _sets_sentence(report: dict) -> str:
    """Judge selection under single choices and under every acceptable verdict (issue 40), when asked."""
    found = report.get("acceptable_sets")
    if not found or found["best_single"] is None:
        return ""
    figures = "; ".join(
        f"{j['judge']} {_nested(j['par_single'])} on single choices, {_nested(j['par_set'])} on sets" for j in found["judges"]
    )
    verdict = (
        f"the best judge changes with the reading, from {found['best_single']} to {found['best_set']}"
        if found["best_changes"]
        else f"the best judge, {found['best_single']}, is the same under both readings"
    )
    return (
        "Annotators also marked every verdict they found acceptable; a judge's verdict counted as agreeing with the set when it "
        f"was any of them: {figures}; {verdict}."
    )


def render_methods(report: dict) -> str:
    paragraph = " ".join(
        s
        for s in (
            _design_sentence(report),
            _humans_sentence(report["humans"]),
            _judges_sentence(report),
            _alt_sentence(report),
            _selective_sentence(report),
            _blinding_sentence(report),
            _likeness_sentence(report),
            _consensus_sentence(report),
            _ties_sentence(report),
            _soft_sentence(report),
            _sets_sentence(report),
            _plan_sentence(report.get("plan")),
        )
        if s
    )
    lines = [
        "## Methods",
        "",
        paragraph,
        "",
        "| Rater | PAR (95% CI) | n labels | n pairs | Cohen's κ (95% CI) | ω | ρ |",
        "|---|---|---:|---:|---|---:|---:|",
    ]
    humans = report["humans"]
    lines.append(
        f"| Humans (leave-one-out) | {_value_ci(humans, 'par_leave_one_out')} | {humans.get('par_leave_one_out_n') or 0:,} | "
        f"{humans.get('par_leave_one_out_n_pairs') or 0:,} | {DASH} | {DASH} | {DASH} |"
    )
    alt_judges = (report.get("alt_test") or {}).get("judges") or {}
    for j in report["judges"]:
        pooled = (alt_judges.get(j["name"]) or {}).get("pooled") or {}
        omega = DASH if pooled.get("omega") is None else f"{pooled['omega']:.3f}"
        rho_entry = pooled.get("rho") or {}
        rho = (
            DASH
            if rho_entry.get("value") is None
            else f"{rho_entry['value']:.3f}" + (f" [{rho_entry['ci'][0]:.3f}, {rho_entry['ci'][1]:.3f}]" if rho_entry.get("ci") else "")
        )
        lines.append(
            f"| {j['name']} | {_value_ci(j, 'par')} | {j['n_labels']:,} | {j.get('par_n_pairs') or 0:,} | {_value_ci(j, 'cohen_kappa')} | {omega} | {rho} |"
        )
    return "\n".join(lines) + "\n"


def _value_ci(section: dict, name: str) -> str:
    value = section.get(name)
    if value is None:
        return DASH
    ci = section.get(f"{name}_ci")
    return f"{value:.3f}" + ("" if not ci or ci[0] is None else f" [{ci[0]:.3f}, {ci[1]:.3f}]")
