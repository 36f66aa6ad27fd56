"""Categories (seed 002, Phase 5): the topics of a space, the memories in each, and an
evolving summary of each.

- A project space starts with seed 002's ten categories (authentication, database, api…);
  any space may add its own (a name, a description and keywords) through the API or the
  admin.
- A memory is placed when it is settled (memories.settle), by keywords: stems of its title,
  tags and text against each category's keywords (its tags count twice). It goes into its
  two best categories that it matches with at least one keyword; relevance is
  min(1, hits / 2). A memory no keyword places goes where its close neighbours are (the
  categories of its nearest placed memories, by vector), at a lower relevance.
- Each category's summary is extractive and deterministic: its strongest memories (placed
  best, then confident, then important, then recent), one line each. It is made when read,
  from the memories that reader may see, so it always follows edits, archiving and deletion
  and never shows a restricted memory; the same goes for its count.

Recall's `tiered` option answers broad questions with these summaries first (docs/recall.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import Count, F, QuerySet
from pgvector.django import CosineDistance

from core.actor import Actor
from core.errors import Conflict, InvalidInput, NotFound
from core.jobs import enqueue_on_commit
from core.models import Space, SpaceKind
from core.text import title_with_gist
from governance import access
from governance.audit.services import audit_record
from memories.lifecycle.dedupe import stem, words
from memories.models import Category, Memory, MemoryCategory
from memories.normalize import clean_line

# seed 002, Task 5.1: DEFAULT_CATEGORIES.
DEFAULTS = (
    ("authentication", "Authentication", "Login, sessions, JWT, OAuth, security",
     ["auth", "security", "login", "jwt", "oauth", "session", "password", "token"]),
    ("database", "Database", "Queries, migrations, models, relationships",
     ["sql", "database", "query", "migration", "model", "postgres", "index", "table"]),
    ("api", "API", "REST, GraphQL, endpoints, requests, responses",
     ["api", "rest", "graphql", "endpoint", "http", "request", "response"]),
    ("testing", "Testing", "Unit tests, integration tests, mocking, fixtures",
     ["test", "testing", "mock", "fixture", "assertion", "pytest"]),
    ("frontend", "Frontend", "UI components, styling, state management",
     ["ui", "component", "style", "css", "state", "react", "blazor"]),
    ("devops", "DevOps", "Deployment, CI/CD, Docker, infrastructure",
     ["deploy", "docker", "ci", "cd", "infrastructure", "kubernetes", "pipeline"]),
    ("architecture", "Architecture", "Design patterns, system design, decisions",
     ["pattern", "architecture", "design", "structure", "decision"]),
    ("performance", "Performance", "Optimisation, caching, profiling",
     ["performance", "optimisation", "optimization", "cache", "speed", "latency", "slow"]),
    ("debugging", "Debugging", "Error resolution, troubleshooting, fixes",
     ["bug", "error", "fix", "debug", "issue", "crash", "exception"]),
    ("standards", "Standards", "Coding standards, conventions, best practices",
     ["standard", "convention", "practice", "guideline", "lint", "style"]),
)
SUMMARY_ITEMS = 8
PER_MEMORY = 2
# Placement by neighbours, for memories no keyword places (_by_neighbours).
NEIGHBOURS = 10
NEIGHBOUR_COSINE = 0.5
NEIGHBOUR_VOTES = 0.3


def ensure_defaults(space: Space) -> None:
    """Seed 002's categories in a project space (not in personal spaces: a person's topics
    are their own, and seed 003's fact/preference/style already sort what SAM knows of them)."""
    if space.kind != SpaceKind.PROJECT:
        return
    # Dismissed ones count as existing: a built-in a curator removed stays removed.
    existing = set(Category.everything.filter(space=space).values_list("name", flat=True))
    Category.objects.bulk_create([
        Category(space=space, name=name, display_name=display, description=description, keywords=keywords,
                 builtin=True)
        for name, display, description, keywords in DEFAULTS if name not in existing
    ], ignore_conflicts=True)


def _stems(text: str) -> set[str]:
    return {stem(word) for word in words(text)}


def _fit(memory: Memory, categories: list[Category]) -> list[tuple[Category, float]]:
    body = _stems(f"{memory.title} {memory.summary} {memory.content}")
    tagged = _stems(" ".join(memory.tags))
    scored = []
    for category in categories:
        keys = {stem(k) for k in category.keywords}
        hits = len(keys & body) + 2 * len(keys & tagged)
        if hits:
            scored.append((category, min(1.0, hits / 2)))
    scored.sort(key=lambda pair: (-pair[1], pair[0].name))
    return scored[:PER_MEMORY]


def _by_neighbours(memory: Memory, categories: list[Category]) -> list[tuple[Category, float]]:
    """A memory no keyword places goes where its close neighbours are: each of its nearest
    placed memories (cosine at least NEIGHBOUR_COSINE) votes for its categories with
    cosine × relevance; the best category is taken when its votes reach NEIGHBOUR_VOTES,
    at a relevance of at most .5 (a keyword match says more)."""
    if memory.embedding is None or not categories:
        return []
    with transaction.atomic():
        # The space filter is selective in a store of many spaces: let the index scan on
        # until it has found enough of this space's (as memories.lifecycle.write_checks does).
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config('hnsw.iterative_scan', 'strict_order', true)")
        near = list(Memory.objects.filter(space_id=memory.space_id, archived=False, embedding__isnull=False)
                    .exclude(pk=memory.pk).annotate(distance=CosineDistance("embedding", memory.embedding))
                    .order_by("distance").values_list("pk", "distance")[:NEIGHBOURS])
    closeness = {pk: 1 - distance for pk, distance in near if 1 - distance >= NEIGHBOUR_COSINE}
    votes: dict[int, float] = {}
    for memory_id, category_id, relevance in MemoryCategory.objects.filter(
            memory_id__in=list(closeness), category__in=categories).values_list(
            "memory_id", "category_id", "relevance"):
        votes[category_id] = votes.get(category_id, 0.0) + closeness[memory_id] * relevance
    if not votes:
        return []
    best = min(votes, key=lambda pk: (-round(votes[pk], 6), pk))
    if votes[best] < NEIGHBOUR_VOTES:
        return []
    return [(next(c for c in categories if c.pk == best), round(min(0.5, votes[best]), 4))]


def place(memory_ids: Iterable[str]) -> int:
    """Place (again) the given memories in their space's categories; returns the links made."""
    memories = list(Memory.objects.with_vectors().filter(pk__in=list(memory_ids), archived=False)
                    .select_related("space"))
    by_space: dict[int, list[Category]] = {}
    links = []
    for memory in memories:
        if memory.space_id not in by_space:
            ensure_defaults(memory.space)
            by_space[memory.space_id] = list(Category.objects.filter(space_id=memory.space_id))
        fitting = _fit(memory, by_space[memory.space_id]) or _by_neighbours(memory, by_space[memory.space_id])
        links += [MemoryCategory(memory=memory, category=category, relevance=relevance)
                  for category, relevance in fitting]
    with transaction.atomic():
        MemoryCategory.objects.filter(memory__in=memories).delete()
        # Two placements of one memory at once (a settle and a re-placement job) write the
        # same links: the second keeps the first's.
        MemoryCategory.objects.bulk_create(links, ignore_conflicts=True)
    return len(links)


def _readable_links(actor: Actor, category_ids: list[int]) -> QuerySet[MemoryCategory]:
    visible = access.restrict(Memory.objects.filter(archived=False), actor).values("pk")
    return MemoryCategory.objects.filter(category_id__in=category_ids, memory_id__in=visible)


def counts_for(actor: Actor, category_ids: list[int]) -> dict[int, int]:
    """How many memories of each category `actor` may read."""
    return dict(_readable_links(actor, category_ids).values_list("category_id").annotate(n=Count("id")))


def summary_lines(actor: Actor, category: Category) -> list[tuple[str, str]]:
    """The category's strongest memories `actor` may read: (memory id, "- Title: summary"),
    the title left out where the summary starts with it (core.text.title_with_gist)."""
    links = (_readable_links(actor, [category.pk]).select_related("memory", "memory__stats")
             .order_by(F("relevance").desc(), F("memory__stats__confidence").desc(),
                       F("memory__importance").desc(), F("memory__updated_at").desc(), "memory_id")
             [:SUMMARY_ITEMS])
    lines = []
    for link in links:
        memory = link.memory
        gist = clean_line(memory.summary or memory.content)
        gist = gist if len(gist) <= 160 else gist[:159].rsplit(" ", 1)[0] + "…"
        lines.append((memory.pk, f"- {title_with_gist(memory.title, gist)}"))
    return lines


def summary_for(actor: Actor, category: Category) -> str:
    """The summary as one text, a line per memory (summary_lines)."""
    return "\n".join(line for _, line in summary_lines(actor, category))


@dataclass(frozen=True)
class CategoryView:
    """A category as one reader sees it: how many active memories placed in it they may
    read, and its summary over those."""

    category: Category
    item_count: int
    summary: str


def _as_seen_by(actor: Actor, categories: list[Category]) -> list[CategoryView]:
    counts = counts_for(actor, [category.pk for category in categories])
    return [CategoryView(category, counts.get(category.pk, 0), summary_for(actor, category))
            for category in categories]


# --- what curators do -------------------------------------------------------------------

def category_list(*, actor: Actor, space_slug: str) -> list[CategoryView]:
    """The space's categories by name, as `actor` sees them."""
    space = access.access_space(actor, slug=space_slug)
    ensure_defaults(space)
    return _as_seen_by(actor, list(Category.objects.filter(space=space).order_by("name")))


def category_create(*, actor: Actor, space_slug: str, name: str, display_name: str, description: str,
                    keywords: list[str]) -> CategoryView:
    """Add a category (curators) and place the space's memories again; the new category as
    `actor` sees it."""
    space = access.access_space(actor, slug=space_slug, action="curate")
    ensure_defaults(space)
    if Category.objects.filter(space=space, name=name).exists():
        raise Conflict(f"Space '{space.slug}' has a category '{name}' already.",
                       fields={"name": ["Taken in this space."]})
    # A dismissed built-in of that name comes back as the curator now describes it.
    category, _ = Category.everything.update_or_create(
        space=space, name=name, defaults={"display_name": display_name or name, "description": description,
                                          "keywords": _keywords(keywords), "dismissed": False})
    audit_record("create", actor=actor, space=space, target=space, after={"category": name},
                 note=f"category {name}")
    _replace_all(space)
    return _as_seen_by(actor, [category])[0]


def category_update(*, actor: Actor, space_slug: str, name: str, changes: dict) -> CategoryView:
    """Change a category (curators); new keywords place the space's memories again. The
    category as `actor` sees it."""
    space = access.access_space(actor, slug=space_slug, action="curate")
    category = Category.objects.filter(space=space, name=name).first()
    if category is None:
        raise NotFound(f"No category '{name}' in space '{space.slug}'.")
    for field in ("display_name", "description"):
        if field in changes:
            setattr(category, field, changes[field])
    if "keywords" in changes:
        category.keywords = _keywords(changes["keywords"])
    category.save()
    audit_record("edit", actor=actor, space=space, target=space, after={"category": name},
                 note=f"category {name}")
    if "keywords" in changes:
        _replace_all(space)
    return _as_seen_by(actor, [category])[0]


def category_delete(*, actor: Actor, space_slug: str, name: str) -> None:
    space = access.access_space(actor, slug=space_slug, action="curate")
    category = Category.objects.filter(space=space, name=name).first()
    if category is None:
        raise NotFound(f"No category '{name}' in space '{space.slug}'.")
    if category.builtin:
        # Dismissed, not deleted: seed 002's defaults would make it again.
        MemoryCategory.objects.filter(category=category).delete()
        Category.everything.filter(pk=category.pk).update(dismissed=True)
    else:
        category.delete()
    audit_record("delete", actor=actor, space=space, target=space, before={"category": name},
                 note=f"category {name}")


def _keywords(values: list[str]) -> list[str]:
    cleaned = sorted({clean_line(v).lower() for v in values if clean_line(v)})
    if not cleaned:
        raise InvalidInput("A category needs keywords.", fields={"keywords": ["At least one word."]})
    return cleaned


def _replace_all(space: Space) -> None:
    """New keywords: every memory of the space is placed again (after commit, by a job)."""
    enqueue_on_commit("memories.tasks.categories_place", space_id=space.pk,
                      task_name=f"categories of {space.slug}", group="categories")
