from django import forms
from django.conf import settings

from common.names import NAME_MAX_LENGTH, NAME_RULE, name_problem
from judges.models import Judge


class JudgeForm(forms.Form):
    name = forms.CharField(max_length=NAME_MAX_LENGTH, help_text=f"e.g. gpt-4.1 or gpt-3.5-turbo: {NAME_RULE}.")
    kind = forms.ChoiceField(choices=[c for c in Judge.Kind.choices if c[0] != Judge.Kind.IMPORTED], initial=Judge.Kind.LLM)
    model = forms.CharField(max_length=200, required=False, help_text="e.g. gpt-4.1-mini")
    endpoint = forms.ChoiceField(
        required=False,
        label="Endpoint",
        help_text="One of the endpoints configured on the server (JUDGE_ENDPOINTS): its base URL and the variable its key is read from.",
    )
    base_url = forms.URLField(max_length=500, required=False, label="Base URL", help_text="e.g. https://api.openai.com/v1")
    api_key_env = forms.CharField(
        max_length=100,
        required=False,
        label="API key variable",
        help_text="The NAME of the environment variable holding the key, never the key: ending in _API_KEY (e.g. OPENAI_API_KEY) or listed in JUDGE_API_KEY_ENVS.",
    )
    input_price = forms.DecimalField(
        min_value=0,
        max_digits=12,
        decimal_places=6,
        required=False,
        help_text="USD per million prompt tokens. Empty: unknown, and so are the judge's costs.",
    )
    cached_input_price = forms.DecimalField(
        min_value=0, max_digits=12, decimal_places=6, required=False, help_text="Empty: the input price."
    )
    output_price = forms.DecimalField(
        min_value=0, max_digits=12, decimal_places=6, required=False, help_text="USD per million completion tokens. Empty: unknown."
    )
    temperature = forms.FloatField(min_value=0, max_value=2, initial=0.0)
    max_tokens = forms.IntegerField(min_value=1, max_value=10_000_000, initial=4096)
    rpm = forms.IntegerField(
        min_value=1,
        required=False,
        label="Requests per minute",
        help_text="The provider's limit (rpm): runs space their requests out under it instead of meeting 429s. Empty: no limit.",
    )
    tpm = forms.IntegerField(
        min_value=1,
        required=False,
        label="Tokens per minute",
        help_text="The provider's limit on prompt + completion tokens (tpm), paced on estimated tokens. Empty: no limit.",
    )
    batch_input_price = forms.DecimalField(
        min_value=0,
        max_digits=12,
        decimal_places=6,
        required=False,
        help_text="USD per million prompt tokens in batch runs. Empty: half the input price.",
    )
    batch_output_price = forms.DecimalField(
        min_value=0,
        max_digits=12,
        decimal_places=6,
        required=False,
        help_text="USD per million completion tokens in batch runs. Empty: half the output price.",
    )
    confidence = forms.CharField(
        max_length=20,
        required=False,
        initial="none",
        label="Confidence",
        help_text="Each verdict's confidence: none, logprobs (token probabilities, where the endpoint gives them) or samples:N "
        "(N billed calls per unit and order, the share agreeing; give a temperature above 0). Checked like add_judge --confidence.",
    )
    per_criterion = forms.BooleanField(required=False, label="One call per criterion (default: one per category)")
    structured_output = forms.BooleanField(required=False, initial=True, label="Send a JSON schema (structured output)")
    update = forms.BooleanField(required=False, label="Update the judge if the name exists")

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        choices = [(e["name"], f"{e['name']}: {e['base_url']}, key from ${e['api_key_env']}") for e in settings.JUDGE_ENDPOINTS]
        self.fields["endpoint"].choices = [("", "—")] + choices
        if not user.is_superuser:
            # The server sends the key to the base URL: only a superuser types them (judges/endpoints.py).
            del self.fields["base_url"], self.fields["api_key_env"]
        else:
            self.fields["endpoint"].help_text += " Or, as a superuser, leave it empty and give a base URL and a key variable."

    def clean_name(self) -> str:
        name = self.cleaned_data["name"]
        if problem := name_problem(name, what="judge name"):
            raise forms.ValidationError(f"The {problem}.")
        return name

    def clean_confidence(self) -> str:
        # Empty is the default; judge_build checks the rest (`judges.confidence.confidence_mode`), as for add_judge.
        return self.cleaned_data["confidence"].strip() or "none"

    def service_arguments(self) -> dict:
        return {**self.cleaned_data, "by": self.user}


class RunForm(forms.Form):
    judge = forms.ModelChoiceField(queryset=Judge.objects.exclude(kind=Judge.Kind.IMPORTED).order_by("name"))
    swap = forms.BooleanField(required=False, label="Both orders of every pair")
    concurrency = forms.IntegerField(min_value=1, max_value=64, initial=4)
    budget_usd = forms.DecimalField(min_value=0, max_digits=12, decimal_places=6, required=False, label="Budget (USD)")
    limit = forms.IntegerField(min_value=1, max_value=1_000_000_000, required=False, label="At most this many pairs")
    seed = forms.IntegerField(min_value=-(2**63), max_value=2**63 - 1, initial=0, required=False)
    batch = forms.BooleanField(
        required=False,
        label="Batch API (cheaper, slower)",
        help_text="Submit the units as batch files (OpenAI, Azure and compatible endpoints): billed at the judge's batch prices, answered within 24 h.",
    )

    guess = forms.BooleanField(
        required=False,
        label="Ask the guess question too",
        help_text="One more call per pair and order shown, billed and budgeted like the others: which article does the judge "
        "think is the reference? In a conversation of its own, so the verdicts never see it.",
    )
    steps = forms.BooleanField(
        required=False,
        label="Vote on the agents' steps too",
        help_text="One more call per step of every article (campaigns that show steps), billed and budgeted like the others: "
        "is the step helpful, up or down, with a reason?",
    )

    def service_arguments(self) -> dict:
        data = dict(self.cleaned_data)
        data["seed"] = data["seed"] or 0
        return data
