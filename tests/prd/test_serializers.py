"""The hand-built representations of events, decisions and learnings equal DRF's own output
of the declared fields (they exist for speed; the declared fields are the documented shape)."""

from rest_framework import serializers

from governance.access import SYSTEM
from prd.api import serializers as s
from prd.learnings import learnings_of
from prd.models import PRDDecision, PRDEvent
from tests.prd.conftest import EXECUTIONS, appended, started


def drf_output(serializer: serializers.Serializer, instance) -> dict:
    return serializers.Serializer.to_representation(serializer, instance)


def test_fast_representations_match_the_declared_fields(api, space):
    eid = started(api)["id"]
    appended(api, eid, "requirement_started", "R1", detail={"files": ["a.py"], "n": 2})
    appended(api, eid, "test_failed", "R1", summary="fails")
    appended(api, eid, "test_passed", "R1", summary="passes")
    api.post(f"{EXECUTIONS}{eid}/decisions/", {"decision": "d", "alternatives": ["x", "y"]}, format="json")

    for event in PRDEvent.objects.all():
        for serializer in (s.PRDEventOutputSerializer(), s.PRDEventRefOutputSerializer()):
            assert serializer.to_representation(event) == drf_output(serializer, event)
    decision = PRDDecision.objects.get()
    serializer = s.PRDDecisionOutputSerializer()
    assert serializer.to_representation(decision) == drf_output(serializer, decision)
    [learning] = learnings_of(PRDEvent.objects.filter(resolves__isnull=False).select_related("resolves"))
    fast = s.PRDLearningOutputSerializer().to_representation(learning)
    assert fast["problem"] == drf_output(s.PRDEventRefOutputSerializer(), learning.problem)
    assert set(fast) == set(s.PRDLearningOutputSerializer().fields)


def test_the_fast_context_matches_the_declared_fields(api, space):
    from prd import selectors

    eid = started(api)["id"]
    appended(api, eid, "requirement_started", "R1")
    appended(api, eid, "blocker_hit", "R1", summary="blocked")
    appended(api, eid, "test_failed", "R2", summary="fails")
    api.post(f"{EXECUTIONS}{eid}/decisions/", {"decision": "d", "reason": "r"}, format="json")
    appended(api, eid, "blocker_resolved", "R1", summary="unblocked")
    started(api, prd_hash="changed")

    for include_decisions in (True, False):
        context = selectors.execution_context(actor=SYSTEM, execution_id=eid,
                                              include_decisions=include_decisions)
        serializer = s.PRDContextOutputSerializer()
        assert serializer.to_representation(context) == drf_output(serializer, context)
