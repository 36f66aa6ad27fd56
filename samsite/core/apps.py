from django.apps import AppConfig


class CoreConfig(AppConfig):
    """The bottom layer: spaces, domain errors, the actor type, jobs on commit, the
    cross-app change signal. It imports nothing of the project (docs/architecture.md)."""

    name = "samsite.core"
    label = "core"
    verbose_name = "Spaces"
    default_auto_field = "django.db.models.BigAutoField"
