"""`sam token` and the client's token calls against a live SAM's self-service token endpoints
(GET/POST /api/v1/me/tokens/, DELETE /api/v1/me/tokens/{id}/)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sam_client import SamClient, errors

from tests.client.conftest import World, run_sam


def test_the_client_creates_lists_and_revokes_its_own_tokens(world: World):
    with SamClient(world.url, world.owner_token) as sam:
        # when a token limited to one space is created
        created = sam.create_token("laptop", spaces=["webshop"], role="viewer",
                                   expires_at=datetime.now(UTC) + timedelta(days=30))
        assert created.secret.startswith("sam_")
        assert created.spaces == ["webshop"]
        assert created.usable
        # then it works, reads only its space, and is listed without its secret
        with SamClient(world.url, created.secret) as laptop:
            assert laptop.recall("money", spaces=["webshop"]).memories
            with pytest.raises(errors.SamError) as outside:
                laptop.recall("money", spaces=["payroll"])
            assert outside.value.status in {403, 404}
        listed = {token.id: token for token in sam.iter_tokens(page_size=1)}
        assert created.id in listed
        assert "secret" not in (listed[created.id].model_extra or {})
        # and once revoked it is refused and listed as not usable
        sam.revoke_token(created.id)
        with SamClient(world.url, created.secret) as laptop, pytest.raises(errors.AuthenticationError):
            laptop.recall("money")
        revoked = next(token for token in sam.iter_tokens() if token.id == created.id)
        assert revoked.revoked_at is not None
        assert not revoked.usable
        # a bad request carries its field messages
        with pytest.raises(errors.ValidationError) as invalid:
            sam.create_token("old", expires_at=datetime.now(UTC) - timedelta(days=1))
        assert invalid.value.fields["expires_at"]


def test_sam_token_create_list_and_revoke(world: World, tmp_path: Path):
    def sam(*args: str):
        return run_sam(*args, url=world.url, token=world.owner_token, home=tmp_path)

    created = sam("token", "create", "ci-runner", "--space", "webshop", "--json")
    assert created.returncode == 0, created.stderr
    token = json.loads(created.stdout)
    assert token["secret"].startswith("sam_")
    human = sam("token", "create", "desktop")
    assert human.returncode == 0, human.stderr
    assert "shown this once" in human.stdout
    assert human.stdout.strip().splitlines()[-1].startswith("sam_")

    listed = sam("token", "list")
    assert listed.returncode == 0, listed.stderr
    assert "ci-runner" in listed.stdout
    assert "desktop" in listed.stdout
    assert token["secret"] not in listed.stdout
    names = [row["name"] for row in json.loads(sam("token", "list", "--json").stdout)]
    assert {"ci-runner", "desktop"} <= set(names)

    revoked = sam("token", "revoke", str(token["id"]))
    assert revoked.returncode == 0, revoked.stderr
    assert run_sam("recall", "x", url=world.url, token=token["secret"], home=tmp_path).returncode == 3
    assert sam("token", "revoke", "999999").returncode == 4
    assert sam("token", "create", "past", "--expires-at", "2001-01-01T00:00:00Z").returncode == 5
    assert sam("token", "create", "naive", "--expires-at", "2031-01-01T00:00:00").returncode == 2
