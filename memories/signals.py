"""Cross-app events sent explicitly by memories.services (never from post_save).

memories_changed(space_ids=[...]) fires after a write to those spaces commits; receivers
only invalidate caches.
"""

from django.dispatch import Signal

memories_changed = Signal()
