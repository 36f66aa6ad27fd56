"""The form a person issues themselves an API token with, in the admin and on "My tokens".

It only shapes the input; the rules (a role no higher than yours, spaces you can see, an
expiry in the future) are governance.tokens', whose refusals come back as field errors.
"""

from __future__ import annotations

from django import forms
from django.contrib.auth.models import User

from core.errors import DomainError
from core.models import Space
from governance import access, tokens
from governance.models import ApiToken
from governance.roles import Role
from governance.scopes import DEFAULT_SCOPES, Scope

ROLE_CHOICES = [("", "My own role in each space"), *Role.choices]


class TokenIssueForm(forms.Form):
    name = forms.CharField(max_length=tokens.NAME_MAX_LENGTH,
                           help_text="To tell it apart: where or by what it is used (e.g. “laptop agent”).")
    spaces: forms.ModelMultipleChoiceField = forms.ModelMultipleChoiceField(
        queryset=Space.objects.none(), to_field_name="slug", required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Leave all unticked for every space of yours, now and later.")
    role = forms.ChoiceField(choices=ROLE_CHOICES, required=False,
                             help_text="A cap on what it may do; never above your own role.")
    scopes = forms.MultipleChoiceField(choices=Scope.choices, initial=DEFAULT_SCOPES,
                                       widget=forms.CheckboxSelectMultiple,
                                       help_text="Read is always on; untick write for one that only looks.")
    expires_at = forms.DateTimeField(
        required=False, label="Expires at",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        help_text="Leave empty for a token that does not expire.")

    def __init__(self, *args, user: User, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        spaces = self.fields["spaces"]
        assert isinstance(spaces, forms.ModelMultipleChoiceField)
        spaces.queryset = access.spaces_visible(user).order_by("slug")

    def issue(self) -> tuple[ApiToken, str] | None:
        """Issue the token (after is_valid()); None, with the refusal on the form, if refused."""
        data = self.cleaned_data
        chosen = [space.slug for space in data.get("spaces") or []]
        try:
            return tokens.own_token_issue(
                actor=self.user, name=data["name"], spaces=chosen or None, role=data.get("role") or "",
                scopes=list(data.get("scopes") or []), expires_at=data.get("expires_at"))
        except DomainError as refused:
            for field, messages in (refused.fields or {"__all__": [refused.message]}).items():
                for message in messages:
                    self.add_error(field if field in self.fields else None, message)
            return None
