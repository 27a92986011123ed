from decimal import Decimal

from django import forms
from django.contrib.auth import get_user_model

import protocols
from annotate.models import Campaign, CriterionSet, System


class CampaignForm(forms.Form):
    name = forms.CharField(max_length=200)
    protocol = forms.ChoiceField(
        choices=[(name, name) for name in protocols.NAMES],
        initial=protocols.DEFAULT,
        required=False,
        help_text="What an item and an answer are.",
    )
    criterion_set = forms.ModelChoiceField(queryset=CriterionSet.objects.order_by("key", "-version"), label="Criteria")
    systems = forms.ModelMultipleChoiceField(queryset=System.objects.filter(is_gold=False), widget=forms.CheckboxSelectMultiple)
    topics = forms.IntegerField(min_value=1, max_value=1_000_000, required=False, help_text="Leave empty for every topic.")
    overlap = forms.IntegerField(min_value=1, max_value=50, initial=1, help_text="Distinct annotators per pair.")
    pair_mode = forms.ChoiceField(choices=Campaign.PairMode.choices, initial=Campaign.PairMode.REFERENCE, label="Pairs")
    allow_tie = forms.BooleanField(required=False, label="Allow ties")
    rationale_required = forms.BooleanField(required=False, initial=True, label="Require a rationale per criterion")
    rationale_min_length = forms.IntegerField(min_value=0, max_value=2000, initial=10)
    allow_cannot_judge = forms.BooleanField(
        required=False,
        label="Offer “Cannot judge” per criterion",
        help_text="Counted apart from ties and left out of every statistic.",
    )
    accept_sets = forms.BooleanField(
        required=False,
        label="Ask for every acceptable verdict",
        help_text="Annotators may also mark other verdicts they would accept; the report reads single choices and sets.",
    )
    evidence_required = forms.ChoiceField(
        choices=Campaign.Evidence.choices,
        initial=Campaign.Evidence.NONE,
        required=False,
        label="Evidence",
        help_text="A passage marked while a criterion is active is its evidence; ask for one on these answers.",
    )
    ask_overall = forms.BooleanField(required=False, label="Also ask which article is better overall")
    instructions = forms.CharField(widget=forms.Textarea(attrs={"rows": 6}), required=False, help_text="Markdown, shown to annotators.")
    annotators = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.filter(is_active=True, is_staff=False).order_by("username"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: every non-staff user may annotate.",
    )
    claim_timeout_minutes = forms.IntegerField(min_value=1, max_value=525_600, initial=120, label="Claim timeout (minutes)")
    forbid_repeats = forms.BooleanField(
        required=False,
        label="Never show an annotator two pairs of one topic",
        help_text="A second pair of a topic shows the same reference article again. Without this box, repeats happen only when no other topic has a free slot.",
    )
    topic_back_to_back = forms.BooleanField(
        required=False,
        label="Give a topic's one-article view and its pairwise view one after the other",
        help_text="Only for a rubric with both kinds of criteria. Without this box, an annotator never gets the pairwise view "
        "and the one-article view of one topic back to back while other work is left.",
    )
    calibration_pairs = forms.IntegerField(
        min_value=0,
        max_value=32767,
        initial=0,
        required=False,
        label="Calibration set (pairs)",
        help_text="The first N pairs, on different topics, labelled by every member before any other pair: "
        "agreement between annotators can be measured once they are done. 0 or empty: none.",
    )

    neutral_emphasis = forms.BooleanField(
        required=False,
        label="Neutral emphasis: show bold and italic as plain text on both sides",
        help_text="Bold and italic can tell the systems apart. Recorded on the campaign and in every export; "
        "the blindness audit gives guessability with and without it.",
    )

    show_steps = forms.BooleanField(
        required=False,
        label="Show the agents' steps beside their articles",
        help_text="Each side's plans, searches, pages read and notes, in a list under its article. Allowed only when every "
        "article of every pair has steps: one side with steps beside one without would tell them apart.",
    )

    step_votes = forms.ChoiceField(
        choices=Campaign.StepVotes.choices,
        initial=Campaign.StepVotes.OPTIONAL,
        required=False,
        label="Votes on the steps",
        help_text="With the steps shown: annotators may vote on them, or must vote on every step before submitting a pair.",
    )

    gold_rate = forms.FloatField(
        min_value=0,
        max_value=1,
        initial=0,
        required=False,
        label="Gold rate",
        help_text="Share of claims (0 to 1) that silently give a known-answer pair, once make_gold has made some. 0 or empty: none.",
    )
    gold_pause_below = forms.FloatField(
        min_value=0.01,
        max_value=1,
        required=False,
        label="Pause below gold accuracy",
        help_text="Pause an annotator's new claims when their gold accuracy is clearly below this. Empty: never.",
    )
    gold_pause_after = forms.IntegerField(min_value=1, max_value=32767, initial=5, required=False, label="… after this many gold pairs")

    repeat_rate = forms.FloatField(
        min_value=0,
        max_value=1,
        initial=0,
        required=False,
        label="Swapped repeat rate",
        help_text="Share of each annotator's submitted pairs (0 to 1) they meet again later in the other order, "
        "for their position consistency. 0 or empty: none.",
    )
    repeat_gap = forms.IntegerField(min_value=0, max_value=1000, initial=5, required=False, label="… after this many other pairs submitted")

    sampling = forms.ChoiceField(
        choices=[("uniform", "Uniform: every pair"), ("active", "Active: the pairs sample_pairs admits")],
        initial="uniform",
        required=False,
        label="Sampling",
        help_text="Active sampling puts in the human queue the pairs where the judges are most likely wrong, with stored probabilities.",
    )
    sampling_burn_in = forms.IntegerField(min_value=0, initial=0, required=False, label="Burn-in (pairs)")
    sampling_uniform_share = forms.FloatField(min_value=0, max_value=1, initial=0.2, required=False, label="Uniform share (0 to 1)")
    sampling_budget = forms.IntegerField(min_value=1, required=False, label="Budget (expected pairs to label)")
    human_cost_per_pair = forms.DecimalField(
        min_value=Decimal("0.0001"), max_digits=10, decimal_places=4, required=False, label="Human cost per pair"
    )

    def service_arguments(self) -> dict:
        data = self.cleaned_data
        return {
            "name": data["name"],
            "criterion_set": data["criterion_set"],
            "systems": [s.key for s in data["systems"]],
            "topics": data["topics"],
            "overlap": data["overlap"],
            "pair_mode": data["pair_mode"],
            "allow_tie": data["allow_tie"],
            "rationale_required": data["rationale_required"],
            "rationale_min_length": data["rationale_min_length"],
            "evidence_required": data["evidence_required"] or Campaign.Evidence.NONE,
            "allow_cannot_judge": data["allow_cannot_judge"],
            "accept_sets": data["accept_sets"],
            "ask_overall": data["ask_overall"],
            "instructions": data["instructions"],
            "annotators": list(data["annotators"]),
            "claim_timeout_minutes": data["claim_timeout_minutes"],
            "forbid_repeats": data["forbid_repeats"],
            "topic_back_to_back": data["topic_back_to_back"],
            "neutral_emphasis": data["neutral_emphasis"],
            "show_steps": data["show_steps"],
            "step_votes": data["step_votes"] or Campaign.StepVotes.OPTIONAL,
            "calibration_pairs": data["calibration_pairs"] or 0,
            "protocol": data["protocol"] or protocols.DEFAULT,
            "gold_rate": data["gold_rate"] or 0.0,
            "gold_pause_below": data["gold_pause_below"],
            "gold_pause_after": data["gold_pause_after"] or 5,
            "repeat_rate": data["repeat_rate"] or 0.0,
            "repeat_gap": 5 if data["repeat_gap"] is None else data["repeat_gap"],
            "sampling": data["sampling"] or "uniform",
            "sampling_burn_in": data["sampling_burn_in"] or 0,
            "sampling_uniform_share": 0.2 if data["sampling_uniform_share"] is None else data["sampling_uniform_share"],
            "sampling_budget": data["sampling_budget"],
            "human_cost_per_pair": data["human_cost_per_pair"],
        }


class AccountsForm(forms.Form):
    entries = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}),
        label="Accounts",
        help_text="One per line: a username, an e-mail address, or username,email. Blank lines and lines starting with # are skipped.",
    )
    campaign = forms.ModelChoiceField(
        queryset=Campaign.objects.order_by("name"),
        required=False,
        empty_label="(none)",
        help_text="Also add every account to this campaign.",
    )
    reissue = forms.BooleanField(required=False, label="Re-issue links for existing accounts")


class MembersAddForm(forms.Form):
    usernames = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2, "spellcheck": "false"}),
        label="Add annotators",
        help_text="Usernames, separated by commas or new lines.",
    )

    def clean_usernames(self) -> list:
        model = get_user_model()
        # Usernames never hold commas or spaces, so either separates them.
        names = list(dict.fromkeys(model.normalize_username(name) for name in self.cleaned_data["usernames"].replace(",", " ").split()))
        if not names:
            raise forms.ValidationError("Give at least one username.")
        users = {user.username: user for user in model.objects.filter(username__in=names)}
        unknown = [name for name in names if name not in users]
        if unknown:
            raise forms.ValidationError(f"No account with the username(s): {', '.join(unknown)}.")
        return [users[name] for name in names]
