"""The page's forms: they check shape only, as the API's serializers do; the services judge."""

from __future__ import annotations

from django import forms

from core.choices import Mode
from memories import limits
from memories.capture import ingest


class MemoryEditForm(forms.Form):
    version = forms.IntegerField(widget=forms.HiddenInput)
    title = forms.CharField(max_length=limits.TITLE[1],
                            widget=forms.TextInput(attrs={"class": "vTextField"}))
    content = forms.CharField(widget=forms.Textarea(attrs={"rows": 6, "class": "vLargeTextField"}))
    summary = forms.CharField(required=False,
                              widget=forms.Textarea(attrs={"rows": 2, "class": "vLargeTextField"}))
    tags = forms.CharField(required=False, help_text="Separated by commas.",
                           widget=forms.TextInput(attrs={"class": "vTextField"}))
    reason = forms.CharField(required=False, max_length=500, label="Why (kept in the history)",
                             widget=forms.TextInput(attrs={"class": "vTextField"}))

    def changes(self) -> dict[str, object]:
        """The edit as memory_update takes it (the version and reason go separately)."""
        data = self.cleaned_data
        return {"title": data["title"], "content": data["content"], "summary": data["summary"],
                "tags": [tag.strip().lower() for tag in data["tags"].split(",") if tag.strip()]}


MODE_CHOICES = [(mode.value, mode.label) for mode in Mode]


class ModeForm(forms.Form):
    mode = forms.ChoiceField(choices=MODE_CHOICES)


class ForgetForm(forms.Form):
    confirm = forms.BooleanField(
        label="I understand: what is listed above is deleted for good, and cannot be restored.")
    written_elsewhere = forms.BooleanField(
        required=False, label="Also delete the memories I wrote in shared spaces (those I may delete).")


class UploadForm(forms.Form):
    space = forms.ChoiceField(help_text="A space you may write to.")
    source = forms.ChoiceField(choices=[(name, name) for name in ingest.SOURCES],
                               help_text="Where the history comes from: claude_code, chatgpt, cursor, "
                                         "or jsonl (SAM's generic format).")
    file = forms.FileField(help_text="One history file, or a .zip of a folder.")
    allow_source = forms.BooleanField(
        required=False, label="Let this space accept imports from this source (owners only)",
        help_text="A space imports only the sources its owner allows.")

    def __init__(self, *args: object, spaces: list[tuple[str, str]], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["space"].choices = spaces  # type: ignore[attr-defined]
