"""Governance rows: API tokens (only a hash of each is stored), memberships, restricted tags,
per-memory grants, memory modes and data keys."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.contrib.auth.models import Group
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.db.models import Q
from django.utils import timezone

from core.models import Space
from governance.modes import Mode
from governance.roles import RESTRICTABLE_TO, Role
from governance.scopes import ALL_SCOPES, Scope, default_scopes

TOKEN_PREFIX = "sam_"


def hash_token(raw: str) -> str:
    """SHA-256 of the token. Tokens carry 256 random bits, so a fast hash is enough:
    there is nothing to brute-force, and lookups stay a single indexed equality."""
    return hashlib.sha256(raw.encode()).hexdigest()


def generate_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


class ApiTokenQuerySet(models.QuerySet["ApiToken"]):
    def usable(self) -> ApiTokenQuerySet:
        now = timezone.now()
        return self.filter(revoked_at__isnull=True).filter(
            models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=now)
        )


class ApiToken(models.Model):
    """A bearer token for the REST API. The plaintext is shown once, at issue time."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="api_tokens")
    name = models.CharField(max_length=100)
    # The first characters, kept so people can tell tokens apart in lists.
    prefix = models.CharField(max_length=12)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    # A token can narrow its user's rights: to named spaces and to a role (empty = the
    # user's own role in each space). `all_spaces` says which: the M2M alone cannot, since
    # deleting the only space a token was scoped to leaves it empty, and an empty scope
    # must mean "no spaces", never "every space".
    all_spaces = models.BooleanField(
        default=False, help_text="Works in every space of its user; else only in `spaces`.")
    spaces = models.ManyToManyField(Space, blank=True, related_name="+")
    role = models.CharField(max_length=16, choices=Role.choices, blank=True, default="")
    # What kinds of request it may make (governance.scopes): read, and write unless left out.
    scopes = ArrayField(models.CharField(max_length=8, choices=Scope.choices), default=default_scopes,
                        help_text="read: look and recall; write: also change.")

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API token"
        permissions = [("revoke_any_token", "Can see and revoke any user's API tokens")]
        constraints = [
            models.CheckConstraint(
                condition=Q(scopes__contained_by=list(ALL_SCOPES)) & Q(scopes__contains=[Scope.READ.value]),
                name="apitoken_scopes_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_usable(self) -> bool:
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > timezone.now()


class SpaceMembership(models.Model):
    """A role held in a space by a user or a group; its permissions live in django-guardian.

    Rows are written only by governance.services.membership_grant/revoke, which keep
    the guardian permissions in step and audit every change.
    """

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                             on_delete=models.CASCADE, related_name="space_memberships")
    group = models.ForeignKey(Group, null=True, blank=True, on_delete=models.CASCADE,
                              related_name="space_memberships")
    role = models.CharField(max_length=16, choices=Role.choices)
    granted_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["space", "role", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(user__isnull=False) & Q(group__isnull=True))
                | (Q(user__isnull=True) & Q(group__isnull=False)),
                name="membership_user_xor_group",
            ),
            models.UniqueConstraint(fields=["space", "user"], condition=Q(user__isnull=False),
                                    name="membership_unique_user"),
            models.UniqueConstraint(fields=["space", "group"], condition=Q(group__isnull=False),
                                    name="membership_unique_group"),
            models.CheckConstraint(condition=Q(role__in=Role.values), name="membership_role_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.principal} is {self.role} of {self.space_id}"

    @property
    def principal(self) -> str:
        return f"user:{self.user}" if self.user_id else f"group:{self.group}"


class RestrictedTag(models.Model):
    """Memories carrying `tag` in `space` are hidden from roles below `min_role`."""

    space = models.ForeignKey(Space, on_delete=models.CASCADE,
                              related_name="restricted_tags")
    tag = models.CharField(max_length=64)
    min_role = models.CharField(max_length=16, choices=[(r.value, r.label) for r in RESTRICTABLE_TO])
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["space", "tag"]
        constraints = [
            models.UniqueConstraint(fields=["space", "tag"], name="restrictedtag_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.tag} ≥ {self.min_role}"


class UserMemorySettings(models.Model):
    """A person's own memory mode, applied on top of each space's mode."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, primary_key=True,
                                on_delete=models.CASCADE, related_name="memory_settings")
    mode = models.CharField(max_length=16, choices=Mode.choices, default=Mode.ASSIST)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "user memory settings"

    def __str__(self) -> str:
        return f"{self.user_id}: {self.mode}"


class DataKeyState(models.TextChoices):
    ACTIVE = "active"      # seals new values
    RETIRED = "retired"    # still opens old values until `sam_keys reencrypt` moves them


class DataKey(models.Model):
    """A space's data key, stored only wrapped (AES-GCM) by a master key.

    Deleting a space deletes its data keys, which leaves every value sealed with them
    unreadable wherever a copy survives: crypto-shredding. Space-less keys (space NULL)
    seal records that span spaces, such as recall events.
    """

    space = models.ForeignKey(Space, null=True, blank=True, on_delete=models.CASCADE,
                              related_name="data_keys")
    state = models.CharField(max_length=8, choices=DataKeyState.choices, default=DataKeyState.ACTIVE)
    master_key_id = models.CharField(max_length=64)
    wrapped = models.BinaryField()
    created_at = models.DateTimeField(auto_now_add=True)
    retired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["space"], condition=Q(state="active", space__isnull=False),
                                    name="datakey_one_active_per_space"),
            models.UniqueConstraint(fields=["state"], condition=Q(state="active", space__isnull=True),
                                    name="datakey_one_active_system"),
            models.CheckConstraint(condition=Q(state__in=DataKeyState.values), name="datakey_state_valid"),
        ]

    def __str__(self) -> str:
        return f"data key {self.pk} ({self.state}, space {self.space_id or 'system'})"


class IdempotencyKey(models.Model):
    """The first answer to a create sent with an `Idempotency-Key` header, kept for a day so a
    retry with the same key replays it instead of writing again.

    Keys are scoped to the user who sent them. `request_digest` is a keyed digest of the
    endpoint and body (a different body under the same key is refused); `answer` holds ids,
    counts and redaction positions only, never memory text: a replay re-reads the memories.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    endpoint = models.CharField(max_length=64)
    request_digest = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField()
    answer = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="idempotency_key_per_user"),
        ]

    def __str__(self) -> str:
        return f"{self.endpoint} {self.key}"


class RightsGeneration(models.Model):
    """One row whose value moves whenever anything rights are read from changes.

    Triggers in Postgres move it (governance migration 0008, memories migration 0020) on
    every write to guardian's object permissions, group membership, a token's spaces,
    restricted tags, memory grants, memberships and spaces, whoever writes: a service, the
    admin, another web process, plain SQL. The new value is drawn from a sequence, so a value
    is never given twice, even after a rolled-back change. access.rights() keeps its answers
    per value (see "the memo of rights() across requests" there).
    """

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    value = models.BigIntegerField()

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(id=1), name="rightsgeneration_one_row")]

    def __str__(self) -> str:
        return f"rights generation {self.value}"
