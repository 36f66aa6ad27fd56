"""Audit payloads that say what changed without the text: keyed digests instead of values.

A memory's text outlives the memory if the audit log keeps it: retention and hard deletes
remove memories, but the append-only log cannot forget, and its payloads stay readable as
long as the space's data key lives. So memory events record labels (version, kind,
reliability, ...) as they are and every other value as a fingerprint,
`{"digest": <hex>, "length": <n>}`: an HMAC under the index key of the data key that seals
the payload. Fingerprints of equal values are equal within that key, and nobody without
the key can test a guess against them. Once the key is destroyed (forget, space delete),
the payload and the key to its digests go together.

The timeline puts the text back from the memory's own versions while the memory exists
(governance.audit.selectors); once it is deleted, only the fingerprints remain.
"""

from __future__ import annotations

import json
from typing import Any

from governance.crypto import datakeys

# Domain of audit digests, so they never equal the memory's content hash or a search token.
PURPOSE = b"audit"

# Per target type, the top-level fields that label a record rather than say anything: they
# stay readable. Every other field is user text (tags, source and context window included)
# and is recorded as a fingerprint. A target type not listed keeps only its version.
LABELS: dict[str, frozenset[str]] = {
    "memory": frozenset({
        "version", "memory_type", "kind", "priority", "reliability", "importance",
        "confidence_score", "occurred_at", "decay_policy", "superseded_by", "archive_flag",
        "visibility_rank",
    }),
    # PRD records: ids, numbers and types label the record; summaries, decisions, queries
    # and thoughts are text (the log itself keeps them, sealed, for as long as it lives).
    "prdevent": frozenset({"execution", "sequence", "type", "requirement_id"}),
    "prdexecution": frozenset({"prd_ref", "run", "prd_changed", "status"}),
    "thinkingchain": frozenset({"thought", "status"}),
}
DEFAULT_LABELS = frozenset({"version"})


def digest(data_key_id: int, text: str) -> str:
    """The audit digest of `text` under a data key (hex HMAC-SHA256)."""
    return datakeys.digest_under(data_key_id, text, purpose=PURPOSE)


def fingerprint(data_key_id: int, value: Any) -> dict[str, Any] | None:
    """`{"digest", "length"}` of a JSON value; None stays None (nothing to hide).

    Strings are digested as they are, so a stored text can be compared with `matches`;
    other values as canonical JSON. `length` is the characters of a string, the items of
    a list or the keys of an object, and absent for other values.
    """
    if value is None:
        return None
    text = value if isinstance(value, str) else json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    found: dict[str, Any] = {"digest": digest(data_key_id, text)}
    if isinstance(value, str | list | dict):
        found["length"] = len(value)
    return found


def is_fingerprint(value: Any) -> bool:
    return isinstance(value, dict) and set(value) <= {"digest", "length"} and "digest" in value


def matches(value: Any, data_key_id: int, text: str) -> bool:
    """Whether the fingerprint `value` was made of `text` under the data key."""
    return is_fingerprint(value) and value["digest"] == digest(data_key_id, text)


def digest_payload(payload: dict[str, Any], *, data_key_id: int, target_type: str) -> dict[str, Any]:
    """`payload` ({before, after, changes, note}, plain JSON) with its text as fingerprints.

    Top-level fields of `before` and `after` and the `path`s of `changes` that are labels
    of the target type keep their values; change reasons and the note become fingerprints.
    The result carries `"digests": true`, so readers know what they are looking at.
    """
    labels = LABELS.get(target_type, DEFAULT_LABELS)

    def field(name: str, value: Any) -> Any:
        return value if name in labels else fingerprint(data_key_id, value)

    digested: dict[str, Any] = {"digests": True}
    for key in ("before", "after"):
        if key not in payload:
            continue
        value = payload[key]
        digested[key] = ({name: field(name, item) for name, item in value.items()}
                         if isinstance(value, dict) else fingerprint(data_key_id, value))
    if "changes" in payload:
        digested["changes"] = []
        for change in payload["changes"]:
            # "tags[2]" or "metadata.owner" belong to the field "tags" or "metadata".
            name = str(change.get("path", "")).split(".")[0].split("[")[0]
            entry = {"path": change.get("path"), "before": field(name, change.get("before")),
                     "after": field(name, change.get("after"))}
            if change.get("reason"):
                entry["reason"] = fingerprint(data_key_id, change["reason"])
            digested["changes"].append(entry)
    if payload.get("note"):
        digested["note"] = fingerprint(data_key_id, payload["note"])
    return digested
