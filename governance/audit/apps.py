from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "governance.audit"
    label = "audit"
    verbose_name = "Audit log"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from governance.audit.models import AuditEvent
        from governance.audit.receivers import record_key_change
        from governance.crypto import rotation
        from governance.crypto.events import key_changed

        key_changed.connect(record_key_change, dispatch_uid="sam_audit_key_changes")
        # The log is append-only: rotation keeps the retired keys its payloads need.
        rotation.register_kept_sealed(AuditEvent, "payload")
