"""Thought rules: numbering, revisions on the thought's own line, branches from earlier thoughts."""

import pytest

from prd.thoughts import ThoughtInput, ThoughtRefused, next_thought, revisions, visible_numbers


def chain(*specs: ThoughtInput) -> list[dict]:
    thoughts: list[dict] = []
    for spec in specs:
        thoughts.append(next_thought(thoughts, spec))
    return thoughts


def thought(content: str = "a thought", **fields) -> ThoughtInput:
    return ThoughtInput(content=content, **fields)


def test_thoughts_are_numbered_in_order_and_a_stale_number_is_a_conflict():
    thoughts = chain(thought(), thought(number=2))
    assert [t["number"] for t in thoughts] == [1, 2]
    with pytest.raises(ThoughtRefused) as caught:
        next_thought(thoughts, thought(number=2))
    assert caught.value.conflict
    assert caught.value.field == "number"


def test_a_revision_names_an_earlier_thought():
    thoughts = chain(thought("use a cron job"), thought("cron cannot see the queue", revises=1))
    assert thoughts[1]["is_revision"] is True
    assert revisions(thoughts) == [(thoughts[0], thoughts[1])]


@pytest.mark.parametrize(("spec", "field"), [
    (thought(revises=3), "revises"),
    (thought(revises=0), "revises"),
    (thought(is_revision=True), "revises"),
    (thought(is_revision=False, revises=1), "is_revision"),
    (thought(branch_from=1), "branch_from"),
    (thought(branch_id="alt"), "branch_from"),
    (thought(branch_id="alt", branch_from=5), "branch_from"),
    (thought(branch_id="no spaces", branch_from=1), "branch_id"),
])
def test_bad_revision_and_branch_fields_are_refused(spec, field):
    thoughts = chain(thought(), thought())
    with pytest.raises(ThoughtRefused) as caught:
        next_thought(thoughts, spec)
    assert caught.value.field == field
    assert not caught.value.conflict


def test_a_branch_grows_from_an_earlier_thought_and_keeps_its_origin():
    thoughts = chain(thought("main 1"), thought("main 2"), thought("alt 3", branch_id="alt", branch_from=1),
                     thought("alt 4", branch_id="alt"))
    assert thoughts[3]["branch_from"] == 1
    with pytest.raises(ThoughtRefused, match="grew from thought 1"):
        next_thought(thoughts, thought(branch_id="alt", branch_from=2))


def test_a_branch_sees_its_ancestry_up_to_the_fork_only():
    thoughts = chain(thought("main 1"), thought("main 2"), thought("alt 3", branch_id="alt", branch_from=1))
    assert visible_numbers(thoughts, "alt") == {1, 3}
    assert visible_numbers(thoughts, None) == {1, 2}


def test_a_revision_may_not_reach_into_a_sibling_branch():
    thoughts = chain(thought("main 1"), thought("main 2"), thought("alt 3", branch_id="alt", branch_from=1))
    with pytest.raises(ThoughtRefused, match="another branch"):
        next_thought(thoughts, thought(revises=3))
    with pytest.raises(ThoughtRefused, match="another branch"):
        next_thought(thoughts, thought(branch_id="alt", revises=2))
    revised = next_thought(thoughts, thought(branch_id="alt", revises=1))
    assert revised["revises"] == 1
    fork = next_thought(thoughts, thought(branch_id="other", branch_from=3, revises=1))
    assert fork["branch_from"] == 3
