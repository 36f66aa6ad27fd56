"""`--space me` for an import run at the server's shell: the importing person's personal space.

On a fresh install there is no space `me`, yet "import my history into my space" is the
first thing a person tries. `sam_chat_import … --space me` makes it work as written: the
first import creates `me` as the person's personal space (kind `user`, owned by them), and
an import into their own `me` of a source it does not accept yet adds that source. Whoever
runs a management command at the server already holds every right there; naming their own
space and the source is the owner's explicit consent, which is what `capture_sources`
records (docs/capture.md, "Three commands"). A space `me` that is someone else's, or not a
personal space, is left alone: the import then meets the usual checks (404, 403).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User

from core.errors import InvalidInput
from core.models import Space, SpaceKind
from governance import spaces
from governance.models import SpaceMembership
from governance.roles import Role

PERSONAL_SLUG = "me"


@dataclass(frozen=True)
class PersonalSpace:
    """What was done to `me`: created (accepting the source), or made to accept the source."""

    space: Space
    owner: str
    created: bool = False

    def describe(self, source: str) -> str:
        if self.created:
            return (f"Created space '{self.space.slug}': {self.owner}'s personal space, "
                    f"accepting {source} imports.")
        return f"Space '{self.space.slug}' ({self.owner}'s) accepts {source} imports from now on."


def person_at_the_server(username: str | None) -> User:
    """Whose `me` it is: the user named, or else the install's only superuser (the `admin`
    that `make run` creates). Raises InvalidInput when that says no one."""
    users = User.objects.filter(is_active=True)
    if username:
        person = users.filter(username=username).first()
        if person is None:
            raise InvalidInput(f"No user '{username}'.", fields={"user": ["No such active user."]})
        return person
    superusers = list(users.filter(is_superuser=True)[:2])
    if len(superusers) != 1:
        raise InvalidInput("Whose personal space is 'me'? Name the person with --user NAME.",
                           fields={"user": ["Required with --space me on this install."]})
    return superusers[0]


def personal_space_for_import(*, username: str | None, source: str) -> PersonalSpace | None:
    """Make `me` ready to import `source`: created for the person at the server when missing
    (person_at_the_server), accepting `source` when it is theirs. None when there was
    nothing to do (it accepts `source` already) or it is not theirs to change."""
    space = Space.objects.filter(slug=PERSONAL_SLUG).first()
    if space is not None and source in (space.capture_sources or []):
        return None
    if space is None:
        person = person_at_the_server(username)
        space = spaces.space_create(actor=person, slug=PERSONAL_SLUG, kind=SpaceKind.USER,
                                    name=f"{person.get_username()} (personal)", capture_sources=[source])
        return PersonalSpace(space, owner=person.get_username(), created=True)
    try:
        person = person_at_the_server(username)
    except InvalidInput:  # no one to ask for: the import's own checks say what is wrong
        return None
    theirs = space.kind == SpaceKind.USER and SpaceMembership.objects.filter(
        space=space, user=person, role=Role.OWNER).exists()
    if not theirs:
        return None
    space = spaces.space_update(actor=person, slug=PERSONAL_SLUG,
                                changes={"capture_sources": [*space.capture_sources, source]})
    return PersonalSpace(space, owner=person.get_username())
