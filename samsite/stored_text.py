"""How every stored text is kept: sealed, keyed or plain, column by column.

Every column of every installed model that can hold text (char, text, JSON, arrays, bytes,
pickles, vectors, search vectors: anything that is not a number, a flag, a time or a key to
another row) has one entry here, by `table.column`:

- SEALED: encrypted with the row's space key (core.sealing's fields, or sealed by hand);
- KEYED: a keyed hash or keyed search tokens (governance.crypto.search), never the text;
- PLAIN: stored as it is, with the reason. A plain column a client writes (a label or an
  identifier it chooses) says so (`client=True`): docs/security.md's plaintext table lists
  exactly those, and its table of values SAM writes itself lists the others of SAM's apps.

tests/governance/test_stored_text.py reads the models and fails on a column missing here or
an entry naming a column that is gone, so a new field is classified before it ships. It sits
in the roof because it names the tables of every app.
"""

from __future__ import annotations

from dataclasses import dataclass

SEALED, KEYED, PLAIN = "sealed", "keyed", "plain"

# The apps whose plain columns docs/security.md must list (Django's and libraries' own are
# classified here but documented by their projects).
SAM_APPS = frozenset({"core", "governance", "audit", "memories", "retrieval", "prd", "samsite"})


@dataclass(frozen=True)
class Stored:
    how: str
    why: str = ""
    client: bool = False  # plain and chosen by a client


def sealed(why: str = "") -> Stored:
    return Stored(SEALED, why)


def keyed(why: str) -> Stored:
    return Stored(KEYED, why)


def label(why: str) -> Stored:
    """Plain, and written by a client: a label or an identifier, never prose."""
    return Stored(PLAIN, why, client=True)


def own(why: str) -> Stored:
    """Plain, and written by SAM (or Django) itself: choices, counts, ids it makes, hashes."""
    return Stored(PLAIN, why)


CHOICE = own("one of a fixed set of choices")
SAM_ID = own("an id SAM generates")
RANDOM_HASH = own("a digest of a random secret or a chain hash; reveals nothing written")
VECTOR = own("an embedding, searched by HNSW; the documented leak of 'What still leaks'")
AGENT_ID = label("an agent's identifier; the admin finds rows by exact agent id")

COLUMNS: dict[str, Stored] = {
    # Django's admin, auth, content types, sessions
    "django_admin_log.object_id": own("the primary key of the changed object"),
    "django_admin_log.object_repr": own("the object's str(), which never holds sealed text"),
    "django_admin_log.change_message": own("names of the changed fields, in JSON"),
    "auth_permission.name": own("Django's permission names"),
    "auth_permission.codename": own("Django's permission codes"),
    "auth_group.name": label("group names: Django's groups, unique"),
    "auth_user.password": own("Django's salted password hash"),
    "auth_user.username": label("usernames: Django's login, unique"),
    "auth_user.first_name": label("Django's account fields, set by an admin; SAM's API never writes them"),
    "auth_user.last_name": label("Django's account fields, set by an admin; SAM's API never writes them"),
    "auth_user.email": label("Django's account fields, set by an admin; SAM's API never writes them"),
    "django_content_type.app_label": own("app labels"),
    "django_content_type.model": own("model names"),
    "django_session.session_key": own("a random session key"),
    "django_session.session_data": own("Django's signed session: a user id and an auth hash"),
    # django-q2: jobs take ids (and the path of an upload under var/imports), no user text
    "django_q_task.id": SAM_ID,
    "django_q_task.name": label("a job's name: its kind and the ids or slug of what it works on"),
    "django_q_task.func": own("a dotted path of SAM's code"),
    "django_q_task.hook": own("a dotted path of SAM's code"),
    "django_q_task.args": own("a job's arguments: ids"),
    "django_q_task.kwargs": own("a job's arguments, pickled: ids, and an upload's server path with its base "
                                "name (docs/security.md, 'What still leaks')"),
    "django_q_task.result": own("a job's return value: ids and counts"),
    "django_q_task.group": own("a task group SAM names"),
    "django_q_task.cluster": own("the cluster's name"),
    "django_q_schedule.name": own("a schedule's name, set by sam_schedules"),
    "django_q_schedule.func": own("a dotted path of SAM's code"),
    "django_q_schedule.hook": own("a dotted path of SAM's code"),
    "django_q_schedule.args": own("a job's arguments: ids"),
    "django_q_schedule.kwargs": own("a job's arguments: ids"),
    "django_q_schedule.schedule_type": CHOICE,
    "django_q_schedule.cron": own("a cron expression"),
    "django_q_schedule.task": own("the id of the last task it started"),
    "django_q_schedule.cluster": own("the cluster's name"),
    "django_q_schedule.intended_date_kwarg": own("an argument name"),
    "django_q_ormq.key": own("the cluster's name"),
    "django_q_ormq.payload": own("a queued job, signed: its function and arguments (ids)"),
    # django-guardian
    "guardian_userobjectpermission.object_pk": own("the primary key of a space"),
    "guardian_groupobjectpermission.object_pk": own("the primary key of a space"),
    # core
    "memories_space.slug": label("the space's address in URLs and the lookup key of every request"),
    "memories_space.name": label("a label for lists and the admin, searched there"),
    "memories_space.kind": CHOICE,
    "memories_space.description": sealed(),
    "memories_space.mode": CHOICE,
    "memories_space.duplicate_policy": CHOICE,
    "memories_space.near_duplicate_policy": CHOICE,
    "memories_space.supersession_policy": CHOICE,
    "memories_space.capture_sources": own("chat sources, each one of a fixed set"),
    "memories_space.redaction_allowlist": label("usernames and account ids redaction keeps"),
    # governance
    "governance_apitoken.name": label("a token's name, given by whoever issues it"),
    "governance_apitoken.prefix": own("the token's first characters, to tell tokens apart"),
    "governance_apitoken.key_hash": RANDOM_HASH,
    "governance_apitoken.role": CHOICE,
    "governance_apitoken.scopes": CHOICE,
    "governance_spacemembership.role": CHOICE,
    "governance_restrictedtag.tag": label("compared with memories' tags by the access gateway in SQL"),
    "governance_restrictedtag.min_role": CHOICE,
    "governance_usermemorysettings.mode": CHOICE,
    "governance_datakey.state": CHOICE,
    "governance_datakey.master_key_id": own("the operator's name of a master key"),
    "governance_datakey.wrapped": sealed("a data key, wrapped by a master key"),
    "governance_idempotencykey.key": label("a client's retry key, compared for equality on retries"),
    "governance_idempotencykey.endpoint": own("the route a key was used on"),
    "governance_idempotencykey.request_digest": own("a digest of the request body: a reused key with another "
                                                    "body is refused"),
    "governance_idempotencykey.answer": label("the first answer to replay: ids (a memory's, which a client "
                                              "may choose), counts, redaction reports"),
    "audit_auditevent.action": CHOICE,
    "audit_auditevent.actor_label": label("the audit log must say who acted after the user is gone"),
    "audit_auditevent.space_slug": label("the same, for a space that is gone"),
    "audit_auditevent.target_type": own("a model's name"),
    "audit_auditevent.target_id": label("the id of what was acted on, which a client may choose"),
    "audit_auditevent.request_id": own("the id of the request"),
    "audit_auditevent.payload": sealed("before, after and diff, sealed by the audit app"),
    "audit_auditevent.prev_hash": RANDOM_HASH,
    "audit_auditevent.hash": RANDOM_HASH,
    # memories: chat capture
    "memories_importedconversation.source": CHOICE,
    "memories_importedconversation.key": keyed("a keyed hash of the conversation's id"),
    "memories_importedconversation.fingerprint": keyed("a keyed hash of what was said"),
    "memories_chatimport.id": SAM_ID,
    "memories_chatimport.source": CHOICE,
    "memories_chatimport.status": CHOICE,
    "memories_chatimport.file_name": sealed("the uploaded file's name, without its folders"),
    "memories_chatimport.report": sealed("counts, rules, ids and reasons; paths relative to the upload"),
    "memories_chatimport.error": sealed("why the import failed"),
    "memories_importedmemory.import_id": SAM_ID,
    # memories: entries
    "memories_memory.id": label("a memory's id, which a client may choose on create"),
    "memories_memory.title": sealed(),
    "memories_memory.content": sealed(),
    "memories_memory.summary": sealed(),
    "memories_memory.canonical_phrases": sealed(),
    "memories_memory.phrase_tokens": keyed("keyed tokens of the canonical phrases"),
    "memories_memory.tags": label("compared for equality in SQL: filters, restricted tags, the tag channel"),
    "memories_memory.memory_type": CHOICE,
    "memories_memory.kind": CHOICE,
    "memories_memory.priority": CHOICE,
    "memories_memory.reliability": CHOICE,
    "memories_memory.source_type": CHOICE,
    "memories_memory.source_ref": sealed(),
    "memories_memory.source_uri": sealed(),
    "memories_memory.context_window": sealed(),
    "memories_memory.decay_policy": own("a decay type and two numbers"),
    "memories_memory.metadata": sealed(),
    "memories_memory.training_examples": sealed(),
    "memories_memory.archive_reason": sealed(),
    "memories_memory.content_hash": keyed("a keyed hash of the content"),
    "memories_memory.embedding": VECTOR,
    "memories_memory.embedding_model": own("the embedding model's name"),
    "memories_memory.embedding_status": CHOICE,
    "memories_memory.embedding_input_hash": keyed("a keyed hash of the embedded text"),
    "memories_memory.embedding_error": own("the embedding provider's error message; never given the text"),
    "memories_memory.search_vector": keyed("keyed search tokens, with positions and weights"),
    "memories_memorypassage.embedding": VECTOR,
    "memories_memoryversion.snapshot": sealed(),
    "memories_memoryversion.changes": sealed(),
    "memories_memoryversion.reason": sealed(),
    # memories: categories
    "memories_category.name": label("a category's slug: its address in the API, unique per space in SQL"),
    "memories_category.display_name": sealed(),
    "memories_category.description": sealed(),
    "memories_category.keywords": sealed("read in Python when memories are placed, never in SQL"),
    # memories: entities, lifecycle
    "memories_entity.kind": CHOICE,
    "memories_entity.name": sealed(),
    "memories_entity.key": keyed("a keyed hash of the normalised name"),
    "memories_entity.aliases": sealed(),
    "memories_entity.alias_keys": keyed("keyed hashes of the aliases"),
    "memories_memoryrelation.relation_type": CHOICE,
    "memories_memoryrelation.provenance": own("what linked two memories: SAM's rule and source names"),
    "memories_reviewitem.kind": CHOICE,
    "memories_reviewitem.status": CHOICE,
    "memories_reviewitem.reason": own("written by SAM from numbers and ids only"),
    "memories_reviewitem.evidence": own("written by SAM from numbers and ids only"),
    "memories_reviewitem.resolution": CHOICE,
    # retrieval
    "retrieval_recallevent.spaces": label("retention and forgetting find a space's recall events by slug"),
    "retrieval_recallevent.query_text": sealed(),
    "retrieval_recallevent.active_task": sealed(),
    "retrieval_recallevent.profile": CHOICE,
    "retrieval_recallevent.memory_ids": label("the ids of recalled memories, which a client may choose"),
    "retrieval_recallevent.items": sealed(),
    "retrieval_lexemestat.lexeme": keyed("a keyed search token"),
    "retrieval_trainingrun.results": sealed("ranks, ids and failure reasons, which may quote the memory"),
    # prd: executions and thinking chains
    "prd_prdexecution.id": SAM_ID,
    "prd_prdexecution.prd_ref": label("the key an agent resumes an execution by, compared for equality"),
    "prd_prdexecution.prd_hash": label("compared with the next run's hash to detect a changed PRD"),
    "prd_prdexecution.title": sealed(),
    "prd_prdexecution.status": CHOICE,
    "prd_prdexecution.requirements": sealed(),
    "prd_prdexecution.progress": label("requirement ids by state, counted without opening anything"),
    "prd_prdexecution.state": sealed(),
    "prd_prdexecution.summary": sealed(),
    "prd_prdexecution.summary_source": CHOICE,
    "prd_prdrun.prd_hash": label("as prd_prdexecution.prd_hash"),
    "prd_prdrun.agent_id": AGENT_ID,
    "prd_prdrun.changes": sealed(),
    "prd_thinkingchain.id": SAM_ID,
    "prd_thinkingchain.query": sealed(),
    "prd_thinkingchain.status": CHOICE,
    "prd_thinkingchain.thoughts": sealed(),
    "prd_thinkingchain.agent_id": AGENT_ID,
    "prd_thinkingchain.abandon_reason": sealed(),
    "prd_thinkingchain.summary": sealed(),
    "prd_thinkingchain.summary_source": CHOICE,
    "prd_thinkingchain.embedding": VECTOR,
    "prd_thinkingchain.embedding_model": own("the embedding model's name"),
    "prd_thinkingchain.search_vector": keyed("keyed search tokens"),
    "prd_prdevent.id": SAM_ID,
    "prd_prdevent.type": CHOICE,
    "prd_prdevent.requirement_id": label("events are listed and folded into progress by requirement id"),
    "prd_prdevent.summary": sealed(),
    "prd_prdevent.detail": sealed(),
    "prd_prdevent.agent_id": AGENT_ID,
    "prd_prdevent.idempotency_key": label("a client's retry key, unique per execution"),
    "prd_prddecision.id": SAM_ID,
    "prd_prddecision.requirement_id": label("as prd_prdevent.requirement_id"),
    "prd_prddecision.decision": sealed(),
    "prd_prddecision.reason": sealed(),
    "prd_prddecision.alternatives": sealed(),
    "prd_prddecision.agent_id": AGENT_ID,
    "prd_formedmemory.key": own("SAM's key of what formed a memory: SAM's ids and a rule"),
    "prd_formedmemory.rule": CHOICE,
    "prd_formedmemory.error": own("the memories API's field messages: field names and limits"),
    # prd: coding sessions and memory cards
    "prd_agentsession.id": SAM_ID,
    "prd_agentsession.key": label("a client's session key, unique per space, looked up by equality"),
    "prd_agentsession.title": sealed(),
    "prd_agentsession.agent_id": AGENT_ID,
    "prd_sessionevent.id": SAM_ID,
    "prd_sessionevent.event_id": label("a client's event id, unique per session: a resend replays"),
    "prd_sessionevent.event_type": CHOICE,
    "prd_sessionevent.source": CHOICE,
    "prd_sessionevent.role": CHOICE,
    "prd_sessionevent.text": sealed(),
    "prd_sessionevent.data": sealed(),
    "prd_sessionevent.refs": sealed(),
    "prd_sessionevent.topic_tags": sealed("read in Python (handoffs, packs), never in SQL"),
    "prd_sessionevent.hash": keyed("a keyed hash of the stored envelope"),
    "prd_sessionevent.redactions": own("what redaction removed: paths, kinds and counts"),
    "prd_sessionevent.agent_id": AGENT_ID,
    "prd_memorycard.id": SAM_ID,
    "prd_memorycard.key": own("SAM's key of a card: SAM's session and event ids"),
    "prd_memorycard.card_type": CHOICE,
    "prd_memorycard.references": sealed(),
    "prd_memorycard.scope_path": sealed(),
    "prd_memorycard.scope_branch": sealed(),
    "prd_memorycard.command": sealed(),
    "prd_memorycard.status": CHOICE,
    "prd_memorycard.validator": sealed("who checked: a rule of SAM's, a user, or a client's name"),
    "prd_memorycard.error": own("the memories API's field messages for a card's memory"),
    "prd_cardvalidation.status": CHOICE,
    "prd_cardvalidation.validator": sealed("as prd_memorycard.validator"),
    "prd_cardvalidation.note": sealed(),
}


def plain_columns(*, client: bool) -> set[str]:
    """The plain columns written by a client (`client=True`) or by SAM itself."""
    return {column for column, stored in COLUMNS.items() if stored.how == PLAIN and stored.client == client}
