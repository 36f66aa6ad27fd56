"""`manage.py sam_audit_verify` passes an intact chain and names the first broken link."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from governance.audit.chain import GENESIS_HASH
from governance.audit.models import PAYLOAD_CONTEXT
from governance.audit.verify import audit_chain_verify
from governance.crypto import cipher


def verify(*args: str) -> str:
    out = StringIO()
    call_command("sam_audit_verify", *args, stdout=out)
    return out.getvalue().strip()


def broken(*args: str) -> str:
    with pytest.raises(CommandError) as failure:
        verify(*args)
    assert failure.value.returncode == 1
    return str(failure.value)


def test_an_intact_chain_passes_and_prints_its_head(chain):
    assert verify() == f"audit chain intact: 5 events, head {chain[-1].hash}"


def test_an_empty_chain_passes_with_the_genesis_head(db):
    assert verify() == f"audit chain intact: 0 events, head {GENESIS_HASH}"


def reseal(payload: dict) -> bytes:
    return cipher.seal_json(None, payload, context=PAYLOAD_CONTEXT)


def test_a_changed_payload_is_named(chain, tamper):
    tamper("UPDATE audit_auditevent SET payload = %s WHERE id = %s",
           [reseal({"after": {"n": 99}}), chain[2].pk])

    message = broken()
    assert f"event {chain[2].pk} was changed" in message
    assert "after 2 good events" in message
    report = audit_chain_verify()
    assert (report.broken.kind, report.broken.event_id) == ("changed", chain[2].pk)
    assert report.broken.found == chain[2].hash


def test_a_changed_and_rehashed_row_breaks_the_next_link(chain, tamper):
    # An owner who knows the format can recompute the changed row's hash; the next row
    # still links to the old one.
    forged = chain[2]
    forged.payload = reseal({"after": {"n": 99}})
    new_hash = forged.computed_hash()
    tamper("UPDATE audit_auditevent SET payload = %s, hash = %s WHERE id = %s",
           [forged.payload, new_hash, forged.pk])

    report = audit_chain_verify()
    assert (report.broken.kind, report.broken.event_id) == ("missing", chain[3].pk)
    assert (report.broken.expected, report.broken.found) == (new_hash, chain[2].hash)
    assert f"event {chain[2].pk} was rewritten" in report.broken.message


def test_a_deleted_middle_row_is_named(chain, tamper):
    tamper("DELETE FROM audit_auditevent WHERE id = %s", [chain[2].pk])

    message = broken()
    assert f"event {chain[3].pk} links to {chain[2].hash}, which no stored event has" in message
    assert f"between event {chain[1].pk} and event {chain[3].pk} were deleted" in message
    report = audit_chain_verify()
    assert (report.broken.expected, report.broken.found) == (chain[1].hash, chain[2].hash)


def test_a_deleted_first_row_is_named(chain, tamper):
    tamper("DELETE FROM audit_auditevent WHERE id = %s", [chain[0].pk])

    report = audit_chain_verify()
    assert (report.broken.kind, report.broken.event_id) == ("missing", chain[1].pk)
    assert report.broken.expected == GENESIS_HASH
    assert "the start of the chain" in report.broken.message


def test_reordered_rows_are_named(chain, tamper):
    second, third = chain[1].pk, chain[2].pk
    tamper("UPDATE audit_auditevent SET id = -id WHERE id = %s", [second])
    tamper("UPDATE audit_auditevent SET id = %s WHERE id = %s", [second, third])
    tamper("UPDATE audit_auditevent SET id = %s WHERE id = %s", [third, -second])

    message = broken()
    assert f"event {second} links to event {third}, not to event {chain[0].pk}" in message
    assert "reordered" in message


def test_a_truncated_tail_passes_alone_but_fails_against_the_published_head(chain, tamper):
    published = verify().rsplit(" ", 1)[1]
    tamper("DELETE FROM audit_auditevent WHERE id >= %s", [chain[3].pk])

    # What remains is a valid, shorter chain: only the published head shows the loss.
    assert verify() == f"audit chain intact: 3 events, head {chain[2].hash}"
    message = broken("--expect-head", published)
    assert f"the expected head {published} is not in the chain" in message
    assert f"now ends at {chain[2].hash} after 3 events" in message


def test_an_older_published_head_still_passes(chain):
    assert verify("--expect-head", chain[1].hash).startswith("audit chain intact: 5 events")


def test_a_malformed_head_is_refused(chain):
    assert "64-character" in broken("--expect-head", "not-a-hash")


def test_the_walk_reads_in_chunks_and_still_finds_the_break(chain, tamper, django_assert_num_queries):
    with django_assert_num_queries(3):  # chunks of 2 over 5 events: 2 + 2 + 1
        assert audit_chain_verify(chunk_size=2).head == chain[-1].hash
    tamper("DELETE FROM audit_auditevent WHERE id = %s", [chain[2].pk])
    assert audit_chain_verify(chunk_size=2).broken.event_id == chain[3].pk
