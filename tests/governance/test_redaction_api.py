"""Redaction on the write path, through the HTTP API: what a memory create stores and reports."""

from __future__ import annotations

from memories.models import Memory

ZWSP, NBSP = "\u200b", "\u00a0"


def create(api, **fields):
    return api.post("/api/v1/memories/", {"space": "webshop", "title": "Contacts for the venue", **fields},
                    format="json")


def test_a_metadata_key_holding_an_email_or_phone_is_stored_redacted(api, space):
    response = create(api, content="Venue contacts, see metadata.", metadata={
        "bob@example.com": "primary contact",
        "+1 (375) 555-0142": "front desk",
        "floor": "3",
    })

    assert response.status_code == 201
    body = response.json()
    assert body["memory"]["metadata"] == {"[email]": "primary contact", "[phone]": "front desk", "floor": "3"}
    stored = Memory.objects.get(pk=body["memory"]["id"])
    assert stored.metadata == {"[email]": "primary contact", "[phone]": "front desk", "floor": "3"}
    report = {(r["path"], r["kind"], r.get("part")) for r in body["redaction_report"]}
    assert report == {("metadata.[email]", "email", "key"), ("metadata.[phone]", "phone", "key")}


def test_content_with_disguised_contacts_is_stored_redacted(api, space):
    content = (f"Front desk (375) 555-0142, mobile 415{NBSP}555{NBSP}0199, "
               f"mail ｂｏｂ＠ｅｘａｍｐｌｅ．ｃｏｍ or ana{ZWSP}@example.org; "
               "my username on staging is theamara6904.")

    response = create(api, content=content)

    assert response.status_code == 201
    stored = Memory.objects.get(pk=response.json()["memory"]["id"]).content
    assert stored == ("Front desk [phone], mobile [phone], mail [email] or [email]; "
                      "my username on staging is [id].")
    report = response.json()["redaction_report"]
    assert [content[r["start"]:r["end"]] for r in report if r["path"] == "content"] == [
        "(375) 555-0142", f"415{NBSP}555{NBSP}0199", "ｂｏｂ＠ｅｘａｍｐｌｅ．ｃｏｍ",
        f"ana{ZWSP}@example.org", "theamara6904"]


def test_public_names_in_content_are_stored_as_written(api, space):
    content = ("Team outing: Ed Sheeran concert, then Iron Man on the big screen. "
               "Yeah, Caroline. Totally agree.")

    response = create(api, content=content)

    assert response.status_code == 201
    assert Memory.objects.get(pk=response.json()["memory"]["id"]).content == content
