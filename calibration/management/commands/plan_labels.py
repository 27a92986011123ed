import json
import textwrap

from django.core.management.base import CommandError

from annotate.models import Campaign
from calibration.planner.labels import plan_labels
from common.commands import UncheckedCommand
from common.lookups import named


def _num(x, digits: int = 3) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _int(x) -> str:
    return "-" if x is None else str(x)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return ["  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [header, *rows]]


def _assumes(text: str) -> list[str]:
    return textwrap.wrap(f"Assumes: {text}", width=110, initial_indent="  ", subsequent_indent="    ")


def _needed(entry: dict, n_pairs: int) -> str:
    if entry["pairs_needed"] is None:
        return "-" if entry["reachable"] is None else f"> {n_pairs}"
    return f"{entry['pairs_needed']}{'' if entry['reachable'] else '*'}"


def alt_test_lines(alt: dict) -> list[str]:
    """The planner's (d) in words: the items needed, the pass chances there, and the model."""
    if alt["items_needed"] is None and alt["equal"] is None:
        return [f"  {alt['note']}"]
    eq, worse = alt["equal"], alt["worse"]
    ci = lambda p: f"{p['value']:.2f} [{p['ci'][0]:.2f}, {p['ci'][1]:.2f}]"  # noqa: E731
    lines = [
        f"  epsilon {alt['epsilon']:g} ({alt['epsilon_reason']}); pilot agreement {alt['pilot_agreement']:.3f} "
        f"({alt['pilot_label_pairs']} label pairs, human kappa {alt['human_kappa']:.2f}), {alt['n_annotators']} annotators per item",
        f"  items per annotator for the alt-test: {alt['items_needed'] if alt['items_needed'] is not None else '> ' + str(alt['at_items'])}"
        f" (a judge as good as the humans passes {ci(eq)} at {alt['at_items']}; one {alt['margin']:g} worse in agreement passes "
        + (ci(worse) if worse else "-")
        + f"; {alt['simulations']} simulated campaigns each)",
    ]
    if alt["note"]:
        lines.append(f"  {alt['note']}")
    return lines + _assumes(f"the simulation model: {alt['model']}.")


def _money(x, pairs, note) -> str:
    if pairs is None:
        return "-"
    return "cost unknown" if note or x is None else f"${x:,.2f}"


def design_lines(plan: dict) -> list[str]:
    """The planner's (e): per judge, each design's pairs and money, the active design's promise and the ceiling."""
    d = plan["designs"]
    lines = [f"  {d['note']}"]
    if d["variance_ratio"] is not None:
        lines.append(
            f"  variance ratio R = {d['variance_ratio']:g} over {d['n_pairs_predicted']} pairs (uniform share {d['uniform_share']:g}): "
            f"each actively drawn label is worth 1/R uniform ones"
        )
    header = ["judge", "uniform pairs", "uniform money", "active pairs", "active money", "promise", "ceiling 1/(1-rho^2)", "rho"]
    rows = [
        [
            r["judge"],
            _int(r["uniform_pairs"]),
            _money(r["uniform_cost_usd"], r["uniform_pairs"], r["cost_note"]),
            _int(r["active_pairs"]),
            _money(r["active_cost_usd"], r["active_pairs"], r["cost_note"]),
            "-" if r["promise"] is None else f"x{r['promise']:g}",
            "-" if r["ceiling"] is None else f"x{r['ceiling']:g}",
            _num(r["rho"]),
        ]
        for r in d["rows"]
    ]
    lines += _table(header, rows) if rows else ["  no judge"]
    lines += [f"  {r['judge']}: {r['cost_note']}." for r in d["rows"] if r["cost_note"]]
    return lines + _assumes(plan["assumptions"]["designs"])


def render_text(plan: dict) -> str:
    n, b = plan["n_pairs"], plan["batch"]
    lines = [
        (
            f"Campaign '{plan['campaign']}': {n} pairs, {plan['n_labelled_pairs']} with human labels. "
            f"Target: 95% CI half-width {plan['target_halfwidth']:g}, power {plan['power']:g}, next batch {b} pairs."
        ),
        "",
        "(a) Each judge's agreement with the humans (PAR)",
    ]
    header = ["judge", "PAR", "labels", "pairs", "half-width", f"after {b}", "pairs needed", "more"]
    rows = [
        [
            e["judge"],
            _num(e["par"]),
            str(e["n_labels"]),
            str(e["n_pairs"]),
            _num(e["halfwidth"]),
            _num(e["halfwidth_after_batch"]),
            _needed(e, n),
            _int(e["more_pairs"]),
        ]
        for e in plan["par"]
    ]
    lines += _table(header, rows) if rows else ["  no judge"]
    for e in plan["par"]:
        if e["reachable"] is False:
            lines.append(
                f"  * {e['judge']}: more than the campaign's {n} pairs; labelling them all gives a half-width of {_num(e['best_halfwidth'])}."
            )
    lines += _assumes(plan["assumptions"]["par"]) + ["", "(b) Telling the two leading judges apart"]
    lead = plan["leading_pair"]
    if lead is None:
        lines.append(f"  {plan['leading_pair_reason']}")
    else:
        lines.append(
            f"  {lead['a']} vs {lead['b']}: PAR difference {_num(lead['difference'])} on {lead['n_pairs']} pairs; "
            f"power {_num(lead['power_now'], 2)} now, {_num(lead['power_after_batch'], 2)} after {b} more pairs; "
            f"{lead['pairs_needed']} pairs for power {plan['power']:g} ({lead['more_pairs']} more"
            + ("" if lead["reachable"] else f", more than the campaign's {n} pairs")
            + ")."
        )
    lines += _assumes(plan["assumptions"]["leading_pair"])
    references = {e["reference"] for e in plan["scores"]}
    against = "the field" if references == {None} or not references else ", ".join(sorted(r for r in references if r))
    lines += ["", f"(c) Prediction-powered system scores (win rates against {against})"]
    header = ["judge", "widest system", "half-width", f"after {b}", "pairs needed", "more"]
    rows = [
        [e["judge"], e["worst_system"] or "-", _num(e["halfwidth"]), _num(e["halfwidth_after_batch"]), _needed(e, n), _int(e["more_pairs"])]
        for e in plan["scores"]
    ]
    lines += _table(header, rows) if rows else ["  no judge"]
    for e in plan["scores"]:
        if e["reachable"] is False:
            lines.append(
                f"  {e['judge']}: not reached within the campaign; every pair labelled gives a half-width of {_num(e['best_halfwidth'])}."
            )
    lines += _assumes(plan["assumptions"]["scores"])
    lines += ["", "(d) Items per annotator for the alt-test (can a judge replace the annotators?)"] + alt_test_lines(plan["alt_test"])
    lines += ["", "(e) Uniform or active sampling for (c)'s target: pairs and money"] + design_lines(plan)
    if plan["notes"]:
        lines += ["", "Notes:"] + [f"- {note}" for note in plan["notes"]]
    return "\n".join(lines) + "\n"


class Command(UncheckedCommand):
    help = (
        "Plan how many more human-labelled pairs a campaign needs: for each judge's PAR CI to reach a half-width, "
        "to tell the two leading judges apart with a given power, and for the prediction-powered system scores "
        "to reach the half-width; with the figures after the next batch and the assumptions behind them."
    )

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="campaign name")
        parser.add_argument("--judge", help="plan (a) and (c) for this judge only (default: every judge of the campaign)")
        parser.add_argument("--target-halfwidth", type=float, default=0.03, help="95%% CI half-width to reach (default 0.03)")
        parser.add_argument("--power", type=float, default=0.8, help="power to tell the two leading judges apart (default 0.8)")
        parser.add_argument("--batch", type=int, default=50, help="pairs in the next batch of labels (default 50)")
        parser.add_argument("--include-unsubmitted", action="store_true", help="also count labels of assignments not submitted yet")
        parser.add_argument("--format", choices=["text", "json"], default="text")
        parser.add_argument("--epsilon", type=float, help="the alt-test's epsilon for (d), with --epsilon-reason (default: the campaign's)")
        parser.add_argument("--epsilon-reason", help="why this epsilon fits these annotators")
        parser.add_argument(
            "--alt-margin",
            type=float,
            default=0.05,
            help="(d): also the chance that a judge this much worse (in agreement with an annotator) passes (default 0.05)",
        )

    def handle(self, *args, **options):
        campaign = named(Campaign.objects, options["campaign"], create_with="create_campaign")
        try:
            plan = plan_labels(
                campaign=campaign,
                judge=options["judge"],
                target_halfwidth=options["target_halfwidth"],
                power=options["power"],
                batch=options["batch"],
                include_unsubmitted=options["include_unsubmitted"],
                epsilon=options["epsilon"],
                epsilon_reason=options["epsilon_reason"],
                alt_margin=options["alt_margin"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if options["format"] == "json":
            self.stdout.write(json.dumps(plan, indent=2, allow_nan=False))
        else:
            self.stdout.write(render_text(plan), ending="")
