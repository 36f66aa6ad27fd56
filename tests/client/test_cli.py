"""The `sam` command against a live SAM, run as a user runs it (a subprocess): each command's
output, human and --json, and its exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.client.conftest import World, run_sam

EXIT_OK, EXIT_REFUSED, EXIT_USAGE, EXIT_AUTH, EXIT_NOT_FOUND, EXIT_INVALID, EXIT_UNAVAILABLE = range(7)


@pytest.fixture
def sam(world: World, tmp_path: Path):
    """`sam ARGS` as the space's owner, SAM_URL and SAM_TOKEN in the environment."""
    def run(*args: str, token: str | None = None, stdin: str | None = None):
        return run_sam(*args, url=world.url, token=token or world.owner_token, home=tmp_path, stdin=stdin)
    return run


def test_remember_recall_and_pack_from_the_shell(world: World, sam):
    # when a memory is remembered from an argument, and another from stdin with --json
    stored = sam("remember", "Services log one JSON object per line to stdout.", "--space", "webshop",
                 "--kind", "decision", "--tag", "logging")
    assert stored.returncode == EXIT_OK, stored.stderr
    assert stored.stdout.startswith("Stored mem_")
    assert "in webshop: Services log one JSON object per line to stdout." in stored.stdout
    piped = sam("remember", "-", "--space", "webshop", "--title", "Deploys run on Tuesdays", "--json",
                stdin="Production deploys run on Tuesday mornings, never on Fridays.")
    assert piped.returncode == EXIT_OK, piped.stderr
    answer = json.loads(piped.stdout)
    assert answer["memory"]["title"] == "Deploys run on Tuesdays"
    assert answer["memory"]["space"] == "webshop"

    # then recall finds it, in human form and as JSON
    recalled = sam("recall", "how do services log?", "--space", "webshop", "-k", "2")
    assert recalled.returncode == EXIT_OK, recalled.stderr
    assert recalled.stdout.splitlines()[0].startswith("1. Services log one JSON object per line")
    as_json = json.loads(sam("recall", "which day do we deploy?", "--space", "webshop", "--json").stdout)
    assert as_json["data"]["ranked_memory_list"][0]["id"] == answer["memory"]["id"]

    # and a pack is its Markdown within the budget
    pack = sam("pack", "store money amounts", "--space", "webshop", "--budget", "300")
    assert pack.returncode == EXIT_OK, pack.stderr
    assert "Money is stored as Decimal" in pack.stdout
    boot = sam("pack", "--space", "webshop", "--boot", "--json")
    assert json.loads(boot.stdout)["markdown"]


def test_handoff_import_and_export_from_the_shell(world: World, sam, tmp_path: Path):
    # given a session with a handoff event, logged through the API
    headers = {"Authorization": f"Bearer {world.owner_token}"}
    api = f"{world.url}/api/v1"
    session = httpx.post(f"{api}/sessions/", headers=headers, timeout=60,
                         json={"space": "webshop", "key": "cli-handoff", "agent_id": "cli-test"}).json()
    session_id = session["session"]["id"]
    logged = httpx.post(f"{api}/sessions/{session_id}/events/", headers=headers, timeout=60, json={"events": [
        {"event_id": "e1", "event_type": "decision", "text": "Refunds go through the payments service",
         "data": {"reason": "one place talks to Stripe"}},
        {"event_id": "e2", "event_type": "handoff", "text": "Refunds work; the webhook is next",
         "data": {"next_steps": ["Handle refund.updated"]}},
    ]})
    assert logged.status_code == 201, logged.text

    # when the next session asks for the handoff, by space and by session
    latest = sam("handoff", "--space", "webshop")
    assert latest.returncode == EXIT_OK, latest.stderr
    assert "Handle refund.updated" in latest.stdout
    by_session = sam("handoff", "--session", session_id, "--json")
    assert "Handle refund.updated" in json.dumps(json.loads(by_session.stdout)["json"])

    # and a chat history is imported, waiting until its memories are final
    history = tmp_path / "history.jsonl"
    history.write_text("\n".join(json.dumps(line) for line in [
        {"conversation_id": "c1", "role": "user", "time": "2026-02-01T10:00:00Z",
         "content": "I'm a backend engineer and I always write my tests with pytest."},
        {"conversation_id": "c1", "role": "assistant", "content": "Noted.", "time": "2026-02-01T10:00:03Z"},
    ]) + "\n")
    imported = sam("import", str(history), "--space", "webshop", "--source", "jsonl", "--json",
                   "--timeout", "120")
    assert imported.returncode == EXIT_OK, imported.stderr
    report = json.loads(imported.stdout)
    assert report["status"] == "done"
    assert report["final"] is True
    human = sam("import", str(history), "--space", "webshop", "--source", "jsonl", "--timeout", "120")
    assert human.returncode == EXIT_OK, human.stderr
    assert human.stdout.startswith("Import ")
    assert ": done" in human.stdout.splitlines()[0]

    # and what SAM knows about me (what I wrote) is exported as JSONL, to stdout or a file
    sam("remember", "I prefer short commit messages in the imperative.", "--space", "webshop")
    to_stdout = sam("export")
    assert to_stdout.returncode == EXIT_OK, to_stdout.stderr
    entries = [json.loads(line) for line in to_stdout.stdout.splitlines()]
    assert "I prefer short commit messages in the imperative." in [entry["content"] for entry in entries]
    bundle = tmp_path / "about-me.jsonl"
    to_file = sam("export", "-o", str(bundle))
    assert to_file.returncode == EXIT_OK, to_file.stderr
    assert len(bundle.read_text().splitlines()) == len(entries)
    assert to_file.stdout.strip() == f"Exported {len(entries)} memories to {bundle}"


def test_exit_codes_say_what_went_wrong(world: World, sam, tmp_path: Path):
    # usage: a missing option (argparse) and a file that is not there
    assert sam("remember", "no space given").returncode == EXIT_USAGE
    assert sam("import", str(tmp_path / "missing.jsonl"), "--space", "webshop",
               "--source", "jsonl").returncode == EXIT_USAGE
    # authentication: no token anywhere, a token SAM does not know, a viewer writing
    nothing = run_sam("recall", "x", url=world.url, token=None, home=tmp_path)
    assert nothing.returncode == EXIT_AUTH
    assert "SAM_TOKEN" in nothing.stderr
    assert sam("recall", "x", token="sam_unknown").returncode == EXIT_AUTH
    viewer = sam("remember", "Viewers may read the space but never write to it.", "--space", "webshop",
                 token=world.viewer_token)
    assert viewer.returncode == EXIT_AUTH
    assert "403 forbidden" in viewer.stderr
    # not found: a session nobody has, a space the stranger cannot see (not told it exists)
    assert sam("handoff", "--session", "ses_nope").returncode == EXIT_NOT_FOUND
    hidden = sam("handoff", "--space", "webshop", token=world.stranger_token)
    assert hidden.returncode == EXIT_NOT_FOUND
    # validation: the field SAM refused, with its message, on stderr and in --json
    invalid = sam("remember", "Too short a title for SAM.", "--space", "webshop", "--title", "x", "--json")
    assert invalid.returncode == EXIT_INVALID
    assert "title:" in invalid.stderr
    error = json.loads(invalid.stdout)["error"]
    assert (error["code"], error["status"]) == ("invalid", 400)
    assert error["fields"]["title"]
    # server or network: nothing listens there
    down = run_sam("recall", "x", url="http://127.0.0.1:9", token=world.owner_token, home=tmp_path)
    assert down.returncode == EXIT_UNAVAILABLE


def test_the_config_file_and_the_installed_command(world: World, tmp_path: Path):
    # given no SAM_URL or SAM_TOKEN, only a config file named by SAM_CONFIG
    config = tmp_path / "sam.toml"
    config.write_text(f'url = "{world.url}"\ntoken = "{world.owner_token}"\n')
    recalled = run_sam("recall", "store money", "--space", "webshop", url=None, token=None, home=tmp_path,
                       config=config)
    assert recalled.returncode == EXIT_OK, recalled.stderr
    assert "Money is stored as Decimal" in recalled.stdout
    # and the one under ~/.config/sam/ when SAM_CONFIG is not set
    default = tmp_path / ".config" / "sam" / "config.toml"
    default.parent.mkdir(parents=True)
    default.write_text(config.read_text())
    assert run_sam("recall", "store money", url=None, token=None, home=tmp_path).returncode == EXIT_OK
    # a broken config file is a usage error
    config.write_text("url = \n")
    assert run_sam("recall", "x", url=None, token=None, home=tmp_path, config=config).returncode == EXIT_USAGE
    # the console script `sam` is installed beside this Python
    installed = Path(sys.executable).with_name("sam")
    helped = subprocess.run([str(installed), "--help"], capture_output=True, text=True, check=False)
    assert helped.returncode == EXIT_OK
    assert "Exit codes:" in helped.stdout
