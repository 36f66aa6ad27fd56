"""Length and count limits of PRD executions, events, decisions and thinking chains.

Serializers, services and the database read these numbers, so a limit changes in one place.
"""

PRD_REF = (1, 500)
PRD_HASH_MAX = 128
PRD_CONTENT_MAX = 2_000_000
TITLE_MAX = 300
REQUIREMENT_ID = (1, 200)
REQUIREMENTS_MAX = 2000
REQUIREMENT_TITLE_MAX = 500
AGENT_ID_MAX = 200
IDEMPOTENCY_KEY_MAX = 200

EVENT_SUMMARY = (1, 2000)
# Serialised size of an event's detail JSON.
EVENT_DETAIL_BYTES_MAX = 32_000

DECISION = (1, 4000)
REASON_MAX = 4000
ALTERNATIVES_MAX = 20
ALTERNATIVE_MAX = 1000

CHAIN_QUERY = (1, 2000)
THOUGHT = (1, 8000)
THOUGHTS_MAX = 500
BRANCH_ID = (1, 64)
ABANDON_REASON_MAX = 1000

CONTEXT_EVENT_LIMIT_DEFAULT = 20
CONTEXT_EVENT_LIMIT_MAX = 200
CONTEXT_LEARNING_LIMIT_DEFAULT = 50
CONTEXT_LEARNING_LIMIT_MAX = 500
# How long a served resume context is kept for an unchanged execution (a write changes the key).
CONTEXT_CACHE_SECONDS = 60
RECALL_K_DEFAULT = 5
RECALL_K_MAX = 50
