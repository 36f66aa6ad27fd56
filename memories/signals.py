"""Cross-app events sent explicitly by memories.services (never from post_save).

memories_changed(space_ids=[...]) fires after a write to those spaces commits; receivers
only invalidate caches. It reaches the receivers of this process only: what other web
processes cached is kept out by the recall generation the database raises in the
writing transaction itself (retrieval.RecallGeneration).
"""

from django.dispatch import Signal

memories_changed = Signal()
