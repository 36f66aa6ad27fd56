"""PII and secret redaction (docs/redaction.md): what is redacted, what survives, and the engine's promises.

Pure Python: none of these tests touches the database. Credentials are assembled at run time from
pieces, so this file holds no string that a secret scanner would mistake for a live key.
"""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.redaction import KINDS, PLACEHOLDERS, Finding, Redacted, redact_text


def kinds_of(text: str, **policy) -> list[str]:
    return [f.kind for f in redact_text(text, **policy).findings]


def redacted_values(text: str, **policy) -> list[tuple[str, str]]:
    return [(f.kind, text[f.start:f.end]) for f in redact_text(text, **policy).findings]


def token(prefix: str, length: int, alphabet: str = "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0z") -> str:
    return prefix + (alphabet * (length // len(alphabet) + 1))[:length]


# --- documented examples -----------------------------------------------------------------------

def test_documented_email_example_is_replaced_with_its_placeholder():
    result = redact_text("Email me at bob@example.com")

    assert result == Redacted(text="Email me at [email]", findings=(Finding("email", 12, 27, "email"),))
    assert "Email me at bob@example.com"[12:27] == "bob@example.com"


def test_kinds_and_placeholders_follow_the_documented_order():
    assert KINDS == ("email", "phone", "address", "name", "id", "secret")
    assert {kind: f"[{kind}]" for kind in KINDS} == PLACEHOLDERS


def test_text_without_personal_data_is_returned_unchanged():
    text = "Prefer MudSnackbar over MudDialog for alert pop-ups."
    assert redact_text(text) == Redacted(text=text, findings=())


# --- one kind at a time -----------------------------------------------------------------------

@pytest.mark.parametrize(("text", "value"), [
    ("Signed-off-by: someone <priya.raman@fastmail.com>", "priya.raman@fastmail.com"),
    ("mailto:support@helpdesk.example.net?subject=Refund", "support@helpdesk.example.net"),
    ("UPDATE users SET email='R.OKAFOR@EXAMPLE.COM' WHERE id=91;", "R.OKAFOR@EXAMPLE.COM"),
    ("tickets+4821@support.example.co.uk is the reply address", "tickets+4821@support.example.co.uk"),
    ("Kontakt: jürgen.weiß@beispiel.de", "jürgen.weiß@beispiel.de"),
    ("reach tom [at] brightlabs [dot] io", "tom [at] brightlabs [dot] io"),
])
def test_emails_in_many_formats_are_redacted(text, value):
    assert redacted_values(text) == [("email", value)]


@pytest.mark.parametrize(("text", "value"), [
    ("Call me at (415) 555-0132 after 6pm.", "(415) 555-0132"),
    ("Hotline +1-202-555-0173 ext. 12", "+1-202-555-0173 ext. 12"),
    ("Berlin office: 030 901820", "030 901820"),
    ("UK contact number 020 7946 0958.", "020 7946 0958"),
    ("Paris reception: 01 42 68 53 00", "01 42 68 53 00"),
    ("India support line +91 98765 43210", "+91 98765 43210"),
    ('<a href="tel:+4930901820">Anrufen</a>', "+4930901820"),
])
def test_phone_numbers_of_several_countries_are_redacted(text, value):
    assert redacted_values(text) == [("phone", value)]


@pytest.mark.parametrize(("text", "value"), [
    ("Ship to 1600 Amphitheatre Parkway, Mountain View, CA 94043.",
     "1600 Amphitheatre Parkway, Mountain View, CA 94043"),
    ("Invoice address: 221B Baker Street, London NW1 6XE", "221B Baker Street, London NW1 6XE"),
    ("Lieferadresse: Hauptstraße 5, 10115 Berlin", "Hauptstraße 5, 10115 Berlin"),
    ("Adresse : 12 rue de la Paix, 75002 Paris", "12 rue de la Paix, 75002 Paris"),
    ("Remit to P.O. Box 987, Austin, TX 78767", "P.O. Box 987, Austin, TX 78767"),
    ("Spedire a Via Roma 12, 00184 Roma", "Via Roma 12, 00184 Roma"),
])
def test_street_addresses_and_po_boxes_are_redacted(text, value):
    assert redacted_values(text) == [("address", value)]


@pytest.mark.parametrize(("text", "value"), [
    ("My name is Sarah Connor and I maintain billing.", "Sarah Connor"),
    ("Ask Dr. Okonkwo before enabling the export.", "Okonkwo"),
    ("Co-authored-by: Jan de Vries", "Jan de Vries"),
    ("Contract signed by Mr. Robert J. Kowalski", "Robert J. Kowalski"),
    ("Thanks,\nMaria Gonzalez", "Maria Gonzalez"),
    ("Emma Thompson's laptop needs the VPN profile.", "Emma Thompson"),
    ("Meeting with Иван Петров about the data centre.", "Иван Петров"),
])
def test_full_names_are_redacted(text, value):
    assert redacted_values(text) == [("name", value)]


@pytest.mark.parametrize(("text", "value"), [
    ("Ping @jdoe42 on the PR before merging.", "@jdoe42"),
    ("username: mkowalski", "mkowalski"),
    ("user id 48213 keeps getting 403", "48213"),
    ("Refund account #1234-5678 for the duplicate charge.", "1234-5678"),
    ("Slack member U024BE7LH asked for access.", "U024BE7LH"),
    ("role_arn = arn:aws:iam::210987654321:role/deploy", "210987654321"),
    ("The AWS account 123456789012 owns the bucket.", "123456789012"),
    ("Stripe customer cus_NffrFeUfNV2Hib disputed it.", "cus_NffrFeUfNV2Hib"),
    ("login=jvasquez&ts=1712345678 in the access log", "jvasquez"),
])
def test_account_ids_and_usernames_are_redacted(text, value):
    assert redacted_values(text) == [("id", value)]


def secret_samples() -> list[tuple[str, str]]:
    github = token("ghp_", 36)
    slack = "xoxb-" + "1234567890" + "-" + "9876543210987" + "-" + token("", 24)
    stripe = token("sk_" + "live_", 24)
    openai = token("sk-" + "proj-", 48)
    google = token("AI" + "za", 35)
    aws = "AKIA" + "IOSFODNN7" + "EXAMPLE"
    jwt = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0."
           + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")
    pem = ("-----BEGIN RSA " + "PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + token("", 48)
           + "\n-----END RSA " + "PRIVATE KEY-----")
    bearer = token("", 40)
    return [
        (f"export GITHUB_TOKEN={github}", github),
        (f"SLACK_BOT_TOKEN={slack}", slack),
        (f"Stripe live key {stripe} must move to the vault", stripe),
        (f"OPENAI_API_KEY={openai}", openai),
        (f"Maps key {google} is restricted", google),
        (f"AWS key {aws} leaked in the CI log", aws),
        (f"Decoded this JWT: {jwt}", jwt),
        (f"The old deploy key:\n{pem}\nwas revoked.", pem),
        (f"curl -H 'Authorization: Bearer {bearer}' https://api.example.com/v1/me", bearer),
        ("# .env\npassword=hunter2!\n", "hunter2!"),
        ('{"api_key": "' + token("", 32) + '"}', token("", 32)),
        ("DATABASE_URL=postgres://sam:S3cr3t!pw@db.internal:5432/sam", "S3cr3t!pw"),
        ("The password is Tr0ub4dor&3, change it after the demo.", "Tr0ub4dor&3"),
    ]


@pytest.mark.parametrize(("text", "value"), secret_samples())
def test_keys_tokens_and_passwords_are_redacted(text, value):
    assert redacted_values(text) == [("secret", value)]


def test_only_the_value_of_a_credential_assignment_is_redacted():
    assert redact_text("password=hunter2!").text == "password=[secret]"
    assert redact_text("postgres://sam:S3cr3t!pw@db:5432/sam").text == "postgres://sam:[secret]@db:5432/sam"


# --- look-alikes survive ----------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "Upgrade Django from 5.1.4 to 5.2.19; v2.0.0-rc1 broke the build.",
    "git bisect points to 9fceb02d0ae598e95dc970b74767f19372d61af8 (HEAD is now at 4f2a9c1)",
    'space_id = uuid.UUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8")',
    "Deployed at 2024-01-15T14:30:00Z; Termin am 15.01.2024 um 14:30; cron 0 3 * * 1-5",
    "Run the dev server on localhost:8000 and Postgres on port 5432.",
    "Fixes #1234 and refs #1240; PR #88 merged.",
    r"Data in /home/dev/projects/sam/var/pgdata and C:\Users\build\AppData\Local\Temp",
    "Docs: https://docs.djangoproject.com/en/5.2/ref/settings/#databases",
    "Primary colour #1e293b, accent #F59E0B.",
    "Recalled mem_01JD5Z8K3Q4W0S6T2X9B7C1N5M with score 0.81",
    "Image digest sha256:9b2c4e6f8a0b1c3d5e7f9a1b3c5d7e9f0a2b4c6d8e0f1a3b5c7d9e1f3a5b7c9d",
    "p95 89.5 ms at 100,000 memories; pi is 3.14159265358979",
    "The endpoint returns 404 instead of 403; HTTP/1.1 503 Service Unavailable",
    "Call UserAccountService.getById() instead of `MemoryQuerySet.active()`.",
    "@property\ndef display_name(self) -> str:\n    return self.title",
    "import { Component } from '@angular/core'; npm i -D @types/node@20.11.5",
    "Run with --dry-run --max-age 30; pytest -q -k redaction --reuse-db",
    "We use Django with Redis Cluster and Celery on Visual Studio Code devcontainers.",
    "Hugo Static Site builds the docs; Ray Serve hosts the model; tests run on Jasmine Karma.",
    "token = os.environ['GITHUB_TOKEN']; api_key: ${OPENAI_API_KEY}; PASSWORD_MIN_LENGTH=12",
    "Clone with git@github.com:acme/sam.git",
    "Anna from QA confirmed the fix.",
])
def test_look_alikes_survive(text):
    assert redacted_values(text) == []


# --- policy: allowlist and public figures -----------------------------------------------------

def test_an_allowlisted_handle_survives_and_others_do_not():
    text = "@sam-bot and @jdoe both commented on the RFC."

    assert redact_text(text, allowlist=["@sam-bot"]).text == "@sam-bot and [id] both commented on the RFC."
    assert redact_text(text).text == "[id] and [id] both commented on the RFC."


def test_allowlist_matches_case_insensitively_with_or_without_at_sign():
    assert kinds_of("Reassign to @Release-Bot", allowlist=["release-bot"]) == []
    assert kinds_of("username: acct_42 is the shared user", allowlist=["ACCT_42"]) == []


def test_allowlist_applies_to_ids_only():
    assert kinds_of("Email ci-runner@example.com", allowlist=["ci-runner@example.com"]) == ["email"]


def test_a_public_figure_survives_and_a_private_person_does_not():
    # A local figure the shipped list of public names does not know: the caller names it.
    text = "Quote from Margit Oksanen is on the wiki; ask Peter Novak to update it."

    result = redact_text(text, public_figures=["Margit Oksanen"])

    assert result.text == "Quote from Margit Oksanen is on the wiki; ask [name] to update it."
    assert redact_text(text).text == "Quote from [name] is on the wiki; ask [name] to update it."


# --- overlaps, order, idempotence -------------------------------------------------------------

def test_findings_are_sorted_by_start_and_do_not_overlap():
    text = ("Contact sheet:\nName: Oliver Bennett\nEmail: o.bennett@example.co.uk\n"
            "Phone: +44 161 496 0123\nAddress: 14 Deansgate, Manchester M3 2BA")

    findings = redact_text(text).findings

    assert [f.kind for f in findings] == ["name", "email", "phone", "address"]
    assert all(a.end <= b.start for a, b in itertools.pairwise(findings))


def test_a_postcode_inside_an_address_is_not_split_off_as_a_phone():
    assert kinds_of("Avenida Paulista 1578, São Paulo - SP, 01310-200") == ["address"]


def test_a_known_key_format_wins_over_a_weaker_overlapping_rule():
    github = token("ghp_", 36)
    assert [f.rule for f in redact_text(f"export GITHUB_TOKEN={github}").findings] == ["github_token"]


def test_redacting_twice_changes_nothing():
    text = ("Ping @jdoe42: Maria Gonzalez (maria@example.com, +49 151 23456789) "
            "lives at Hauptstraße 5, 10115 Berlin.")

    once = redact_text(text)
    twice = redact_text(once.text)

    assert once.text == "Ping [id]: [name] ([email], [phone]) lives at [address]."
    assert twice == Redacted(text=once.text, findings=())


# --- properties -------------------------------------------------------------------------------

FRAGMENTS = [
    "bob@example.com", "+44 20 7946 0958", "(415) 555-0132", "12 rue de la Paix, 75002 Paris",
    "Maria Gonzalez", "Dr. Okonkwo", "@jdoe42", "user id 48213", "password=hunter2!",
    token("ghp_", 36), "AKIA" + "IOSFODNN7" + "EXAMPLE", "v2.0.0-rc1", "#1234", "localhost:8000",
    "9fceb02d0ae598e95dc970b74767f19372d61af8", "[email]", "[secret]", "[name]", "`code`", "Django",
    "my name is", "contact", "token:", "Authorization: Bearer", "https://example.com/a?b=c", "\n",
]
fragment_lists = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(alphabet="aAzZ09 .,:;@#-_/=\n'\"()[]<>", max_size=12)),
    max_size=12,
)
# Fragments glued together ("" separator) make the hardest cases: an email running into a token.
texts = st.tuples(fragment_lists, st.sampled_from(["", " ", "\n", ", "])).map(lambda p: p[1].join(p[0]))
any_text = st.one_of(texts, st.text(max_size=200))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_text)
def test_offsets_index_the_original_text_and_rebuild_the_output(text):
    result = redact_text(text)

    position, rebuilt = 0, []
    for finding in result.findings:
        assert finding.kind in KINDS
        assert 0 <= position <= finding.start < finding.end <= len(text)
        rebuilt.append(text[position:finding.start] + PLACEHOLDERS[finding.kind])
        position = finding.end
    assert "".join(rebuilt) + text[position:] == result.text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_text)
def test_redacting_the_output_again_finds_nothing(text):
    once = redact_text(text)
    assert redact_text(once.text).findings == ()


@settings(max_examples=100, deadline=None)
@given(any_text)
def test_redaction_is_deterministic(text):
    assert redact_text(text) == redact_text(text)


placeholder_texts = st.lists(st.sampled_from([*PLACEHOLDERS.values(), " ", ", ", "\n", ": "]), max_size=20)


@settings(max_examples=200, deadline=None)
@given(placeholder_texts.map("".join))
def test_placeholders_are_never_detected(text):
    assert redact_text(text).findings == ()


local_parts = st.from_regex(r"[a-z][a-z0-9]{0,8}(?:[._+-][a-z0-9]{1,6}){0,2}", fullmatch=True)
domains = st.from_regex(r"[a-z][a-z0-9-]{0,10}[a-z0-9]\.(?:com|org|io|de|co\.uk)", fullmatch=True)
secrets = st.from_regex(r"[A-Za-z0-9]{36}", fullmatch=True).map(lambda s: "ghp_" + s)
prose = st.sampled_from(["Email me at {}.", "cc: {} please", "({})", "reply to {}, thanks", "{}"])


@settings(max_examples=200, deadline=None)
@given(local_parts, domains, prose, texts)
def test_an_email_never_survives_redaction(local, domain, template, noise):
    email = f"{local}@{domain}"
    text = noise + " " + template.format(email)

    result = redact_text(text)

    assert email not in result.text
    assert any(f.kind == "email" and text[f.start:f.end] == email for f in result.findings)


@settings(max_examples=200, deadline=None)
@given(secrets, prose, texts)
def test_a_known_format_secret_never_survives_redaction(secret, template, noise):
    text = noise + " " + template.format(secret)

    result = redact_text(text)

    assert secret not in result.text
    assert not re.search(r"ghp_[A-Za-z0-9]{36}", result.text)


def test_documented_markdown_link_example_stores_one_placeholder():
    # docs/redaction.md, "Markdown links": the stored content is "Email me at [email]".
    result = redact_text("Email me at [bob@example.com](mailto:bob@example.com)")
    assert result.text == "Email me at [email]"
    assert [(f.kind, f.start, f.end) for f in result.findings] == [("email", 13, 28), ("email", 37, 52)]


ULID_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


@settings(max_examples=300, deadline=None)
@given(prefix=st.sampled_from(["mem", "evt", "imp", "card", "exec"]),
       body=st.text(alphabet=ULID_ALPHABET, min_size=26, max_size=26))
def test_sam_s_own_ids_are_never_taken_for_secrets(prefix, body):
    text = f"linked to {prefix}_{body} yesterday"

    assert redact_text(text).text == text


def test_an_id_shaped_like_an_aws_key_stays_an_id_but_the_key_alone_goes():
    # "A3T" + 16 [A-Z0-9] is an AWS access key id; this ULID happens to hold one.
    text = "fix evt_01M8B7A3TN34VBFCR6CNPNBBZ1 here"
    assert redact_text(text).text == text
    assert redact_text("key A3TN34VBFCR6CNPNBBZ1 here").text == "key [secret] here"
