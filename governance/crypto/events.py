"""What the key store reports as it creates, rotates and destroys data keys.

Crypto does not audit itself: the audit log seals its payloads with crypto, so crypto
importing the audit would be a cycle. It sends `key_changed` instead, and the audit app
records each as an audit event (governance.audit.receivers), with SAM as the actor.
"""

from django.dispatch import Signal

# kwargs: action (an AuditAction value) and audit_record's own: space, target,
# target_type, target_id, before, after, note.
key_changed = Signal()
