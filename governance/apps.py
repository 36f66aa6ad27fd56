from django.apps import AppConfig


class GovernanceConfig(AppConfig):
    name = "governance"
    verbose_name = "Governance"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from governance import schema  # noqa: F401  (registers the OpenAPI auth extension)
