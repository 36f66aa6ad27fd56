"""The learned extractor: the shipped model is the one its training script builds from the
corpus in the repository, training is deterministic, and the model reads wording no rule
foresaw while leaving questions, hypotheticals and chit-chat alone."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from django.core.management import call_command

from memories.capture import classifier_training, exchanges, learned, pipeline
from memories.capture.conversation import Conversation, Message
from memories.models import Memory


def test_the_shipped_model_was_trained_on_the_corpus_in_the_repository():
    model = learned.model()
    assert model is not None
    pairs, _ = classifier_training.labelled(classifier_training.load_rows())

    assert model.card["data_sha256"] == classifier_training.data_digest(pairs)
    assert model.card["seed"] == classifier_training.SEED
    assert set(model.thresholds) == set(model.classes) - {learned.NONE}
    assert model.weights.shape == (model.mean.shape[0], len(model.classes))


def test_training_twice_on_the_same_data_gives_the_same_weights():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(120, 12))
    y = (x[:, 0] > 0).astype(int) + (x[:, 1] > 1).astype(int)

    first, second = classifier_training.fit(x, y, 3), classifier_training.fit(x.copy(), y.copy(), 3)

    assert np.array_equal(first[0], second[0])
    assert np.array_equal(first[1], second[1])
    # It learnt something: the training rows are mostly told apart.
    assert ((x @ first[0] + first[1]).argmax(axis=1) == y).mean() > 0.8


def said(*turns: tuple[str, str], source: str = "chat") -> list:
    conversation = Conversation(source=source, key="c", origin="test",
                                messages=[Message(role, text) for role, text in turns])
    return learned.extract_learned(exchanges.split(conversation), source=source)


def test_the_model_keeps_a_labelled_team_rule_and_a_warning_no_rule_reads():
    found = said(("user", "Team rule: no raw SQL in views, everything goes through the repository layer."),
                 ("assistant", "Understood."),
                 ("user", "heads up, the staging db is shared with QA so never truncate tables there"))

    assert [(c.kind, c.rule) for c in found] == [("standard", "learned:standard"),
                                                 ("gotcha", "learned:gotcha")]
    assert found[0].content == ("Standard: Team rule: no raw SQL in views, everything goes through the "
                                "repository layer.")
    assert found[1].exchange == 1
    assert all(0.3 < c.confidence <= learned.MAX_CONFIDENCE for c in found)


@pytest.mark.parametrize("text", [
    "can you check why the build is red?",
    "what's the difference between a mutex and a semaphore?",
    "lol that's hilarious",
    "I used to work at IBM back in the day",
    "my sister lives in Oslo",
    "if I moved to Paris I'd have to learn French",
])
def test_questions_chit_chat_the_past_and_others_facts_are_not_kept(text):
    assert said(("user", text)) == []


def test_a_conditional_sentence_is_not_even_read():
    conversation = Conversation(source="chat", key="c", origin="test",
                                messages=[Message("user", "when the build is green, tag the release")])

    assert list(learned.sentences(exchanges.split(conversation), source="chat")) == []


def candidates(text: str) -> list:
    conversation = Conversation(source="chat", key="c", origin="test", messages=[Message("user", text)])
    return pipeline.candidates(exchanges.split(conversation), source="chat")


def test_a_sentence_the_rules_said_whole_is_one_memory():
    assert [c.content for c in candidates("I speak German.")] == ["The user speaks German."]


def test_a_sentence_a_rule_took_one_fact_from_keeps_its_own_memory_too():
    found = candidates("I speak Portuguese (native obviously) and my Spanish is pretty fluent, "
                       "I lived in Buenos Aires for a while")

    assert [c.rule for c in found] == ["languages", "learned:fact"]
    assert "Spanish is pretty fluent" in found[1].content


def test_an_imported_sentence_memory_is_kept_redacted_and_one_redaction_empties_is_not(space, tmp_path):
    space.capture_sources = ["jsonl"]
    space.save()
    history = tmp_path / "history.jsonl"
    history.write_text("".join(json.dumps({"conversation_id": "c1", "role": "user", "content": text}) + "\n"
                               for text in (
        "Team rule from Tomasz Nowak: no raw SQL in views, everything goes through the repository layer.",
        "My name is Tomasz Nowak.")))
    out = io.StringIO()
    call_command("sam_chat_import", "jsonl", str(history), "--space", "webshop", "--json", stdout=out)

    [rule] = [m for m in Memory.objects.all() if m.metadata["capture"]["rule"] == "learned:standard"]
    assert rule.content == ("Standard: Team rule from [name]: no raw SQL in views, everything goes through "
                            "the repository layer.")
    assert not any("Tomasz" in m.content for m in Memory.objects.all())
    assert {r["rule"] for r in json.loads(out.getvalue())["rejected"]} == {"name"}


def test_a_learned_memory_keeps_the_turn_it_was_said_in():
    conversation = Conversation(source="claude_code", key="c", origin="test", messages=[
        Message("user", "morning", id="u-1"), Message("assistant", "Morning!", id="a-1"),
        Message("user", "Team rule: no raw SQL in views, everything goes through the repository layer.",
                id="u-2")])

    [rule] = learned.extract_learned(exchanges.split(conversation), source="claude_code")

    assert (rule.exchange, rule.turn) == (1, "u-2")
