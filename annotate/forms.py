from django import forms
from django.contrib.auth import get_user_model

from annotate.models import Campaign, CriterionSet, System


class CampaignForm(forms.Form):
    name = forms.CharField(max_length=200)
    criterion_set = forms.ModelChoiceField(queryset=CriterionSet.objects.order_by("key", "-version"), label="Criteria")
    systems = forms.ModelMultipleChoiceField(queryset=System.objects.all(), widget=forms.CheckboxSelectMultiple)
    topics = forms.IntegerField(min_value=1, required=False, help_text="Leave empty for every topic.")
    overlap = forms.IntegerField(min_value=1, max_value=50, initial=1, help_text="Distinct annotators per pair.")
    pair_mode = forms.ChoiceField(choices=Campaign.PairMode.choices, initial=Campaign.PairMode.REFERENCE, label="Pairs")
    allow_tie = forms.BooleanField(required=False, label="Allow ties")
    rationale_required = forms.BooleanField(required=False, initial=True, label="Require a rationale per criterion")
    rationale_min_length = forms.IntegerField(min_value=0, max_value=2000, initial=10)
    ask_overall = forms.BooleanField(required=False, label="Also ask which article is better overall")
    instructions = forms.CharField(widget=forms.Textarea(attrs={"rows": 6}), required=False, help_text="Markdown, shown to annotators.")
    annotators = forms.ModelMultipleChoiceField(
        queryset=get_user_model().objects.filter(is_active=True, is_staff=False).order_by("username"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="None ticked: every non-staff user may annotate.",
    )
    claim_timeout_minutes = forms.IntegerField(min_value=1, initial=120, label="Claim timeout (minutes)")

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
            "ask_overall": data["ask_overall"],
            "instructions": data["instructions"],
            "annotators": list(data["annotators"]),
            "claim_timeout_minutes": data["claim_timeout_minutes"],
        }
