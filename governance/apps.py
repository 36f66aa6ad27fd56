from django.apps import AppConfig


class GovernanceConfig(AppConfig):
    name = "governance"
    verbose_name = "Governance"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_delete
        from guardian.models import GroupObjectPermission, UserObjectPermission

        from core import replica, sealing
        from core.models import Space
        from governance import schema  # noqa: F401  (registers the OpenAPI auth extension)
        from governance.access import forget_rights_on_space_delete
        from governance.crypto import cipher
        from governance.models import ApiToken, RestrictedTag, RightsGeneration

        # Sealed columns (in every app, the Space model's too) seal with governance's cipher.
        sealing.use_cipher(cipher)
        # A revoked token must not live on in a lagging replica (core.replica).
        replica.read_from_primary(ApiToken)
        # Rights are kept across requests by the rights generation the token lookup reads on
        # the primary (governance.access): what they are read from is read there too, so a
        # replica's lag cannot file old rights under a new generation.
        for model in (UserObjectPermission, GroupObjectPermission, RestrictedTag, RightsGeneration,
                      ApiToken.spaces.through):
            replica.read_from_primary(model, bookkeeping=False)

        # Cache invalidation only: a deleted space leaves the request's memoised rights
        # (governance.access.rights), whichever service deleted it.
        post_delete.connect(forget_rights_on_space_delete, sender=Space,
                            dispatch_uid="sam_forget_rights_on_space_delete")
