# ruff: noqa: E501 (a table of hand-written conversations: one per line reads best)
"""Writes bench/data/extraction_conversations.jsonl: hand-written conversations, each with the
memories a careful person would keep from it (rule and the value that must be in it).

U = the user, A = the assistant. Nothing here is real personal data.
"""

import json
from pathlib import Path

U, A = "user", "assistant"

PERSONAL = [
    ([(U, "Hi! My name is Tomasz. I live in Gdansk and work as a nurse."), (A, "Nice to meet you, Tomasz.")],
     [("name", "Tomasz"), ("location", "Gdansk")]),
    ([(U, "Can you recommend a hiking trail near Innsbruck? I'm a beginner."), (A, "Try the Zirbenweg.")], []),
    ([(U, "I'm a data scientist at a bank, mostly time series."), (A, "Great, what do you need?")],
     [("role", "data scientist")]),
    ([(U, "I speak French and Arabic, and I'm learning Japanese."), (A, "Impressive.")],
     [("languages", "French and Arabic")]),
    ([(U, "Please keep answers brief, bullet points if possible."), (A, "Will do.")],
     [("style", "brief")]),
    ([(U, "Would I be happier if I moved to Lisbon?"), (A, "That depends on many things.")], []),
    ([(U, "My sister lives in Toronto and she loves it."), (A, "Toronto is lovely.")], []),
    ([(U, "I moved to Valencia in March. Where can I learn Spanish fast?"), (A, "Try an intensive course.")],
     [("location", "Valencia")]),
    ([(U, "I prefer metric units in every answer."), (A, "Understood.")], [("preference", "metric units")]),
    ([(U, "I used to live in Oslo but that was years ago."), (A, "Oslo is beautiful.")], []),
    ([(U, "I work at Northwind Traders as a buyer."), (A, "How can I help?")], [("employer", "Northwind Traders")]),
    ([(U, "Am I a good writer? Here is my draft."), (A, "It reads well.")], []),
    ([(U, "I avoid caffeine after noon, any tea suggestions?"), (A, "Rooibos is caffeine-free.")],
     [("dislike", "caffeine")]),
    ([(U, "Answer in German from now on, please."), (A, "Gerne.")], [("style", "German")]),
    ([(U, "My boss said: I'm a terrible planner. Is that fair?"), (A, "Feedback stings.")], []),
    ([(U, "I'm a high school teacher and I need quiz ideas about volcanoes."), (A, "Here are five.")],
     [("role", "high school teacher")]),
    ([(U, "I live in Nairobi. What's a good weekend trip?"), (A, "Lake Naivasha.")], [("location", "Nairobi")]),
    ([(U, "What's the capital of Mongolia?"), (A, "Ulaanbaatar.")], []),
    ([(U, "I really prefer vegetarian recipes. Something with lentils?"), (A, "Try a dal.")],
     [("preference", "vegetarian recipes")]),
    ([(U, "If I spoke Italian I would move to Rome."), (A, "Rome is lovely.")], []),
    ([(U, "I speak Dutch. Translate this into English please: goedemorgen."), (A, "Good morning.")],
     [("languages", "Dutch")]),
    ([(U, "Call me Ines. I'm a product manager."), (A, "Hello Ines.")], [("name", "Ines"), ("role", "product manager")]),
    ([(U, "I hate long emails, help me shorten this one."), (A, "Here is a shorter version.")],
     [("dislike", "long emails")]),
    ([(U, "Maybe I prefer dark themes, I'm not sure yet."), (A, "Try both.")], []),
    ([(U, "My friend works at Contoso and hates it."), (A, "That's tough.")], []),
    ([(U, "I work for Fabrikam and we're hiring designers."), (A, "Good luck with the hiring.")],
     [("employer", "Fabrikam")]),
    ([(U, "Keep your replies friendly and informal."), (A, "Sure thing!")], [("style", "friendly and informal")]),
    ([(U, "I'm an architect, the buildings kind, not software."), (A, "Noted.")], [("role", "architect")]),
    ([(U, "Where do you think I should live, Porto or Braga?"), (A, "Porto for city life.")], []),
    ([(U, "I relocated to Dublin for work last year."), (A, "How do you like Dublin?")], [("location", "Dublin")]),
    ([(U, "I always use a paper notebook for planning."), (A, "Classic.")], [("preference", "a paper notebook")]),
    ([(U, "The assistant before you said my name is Bob. It isn't."), (A, "Sorry about that.")], []),
]

CODING = [
    ([(U, "CI fails with ModuleNotFoundError: No module named 'app'"),
      (A, "Install the package in editable mode:\n```bash\npip install -e .\n```"),
      (U, "That worked, thanks.")], [("solution", "pip install -e .")]),
    ([(U, "We decided to use Postgres instead of MongoDB because we need transactions."), (A, "Good call.")],
     [("decision", "use Postgres instead of MongoDB")]),
    ([(U, "Always run the migrations in a separate deploy step."), (A, "Agreed.")],
     [("standard", "run the migrations in a separate deploy step")]),
    ([(U, "Should we use Redis or Memcached for sessions?"), (A, "Redis, for persistence.")], []),
    ([(U, "I prefer pytest over unittest for new tests."), (A, "pytest it is.")], [("preference", "pytest")]),
    ([(U, "Never log request bodies, they contain tokens."), (A, "Understood.")],
     [("standard", "log request bodies")]),
    ([(U, "TypeError: Cannot read properties of undefined (reading 'map') in ProductList"),
      (A, "Guard the list before mapping:\n```tsx\n{products?.map(p => <Row key={p.id} {...p} />)}\n```"),
      (U, "Still broken, same error.")], []),
    ([(U, "Let's go with Vite for the new frontend."), (A, "Setting it up.")], [("decision", "Vite")]),
    ([(U, "Watch out: the staging database is shared with QA, don't truncate tables."), (A, "Noted.")],
     [("gotcha", "staging database is shared with QA")]),
    ([(U, "What does the --frozen-lockfile flag do?"), (A, "It fails if the lockfile would change.")], []),
    ([(U, "django.db.utils.OperationalError: could not connect to server when running manage.py test"),
      (A, "Start the database first:\n```bash\ndocker compose up -d db\n```"),
      (U, "Fixed it, the container was down.")], [("solution", "docker compose up -d db")]),
    ([(U, "We finally decided on trunk-based development."), (A, "Nice.")], [("decision", "trunk-based development")]),
    ([(U, "If we used Kubernetes we would need a platform team."), (A, "Probably.")], []),
    ([(U, "I'm a backend developer, mostly Go."), (A, "Got it.")], [("role", "backend developer")]),
    ([(U, "We always squash commits when merging to main."), (A, "Clean history.")],
     [("standard", "squash commits when merging to main")]),
    ([(U, "My teammate prefers tabs, I don't care."), (A, "Use an editorconfig.")], []),
    ([(U, "cargo build gives error[E0502]: cannot borrow `v` as mutable because it is also borrowed as immutable"),
      (A, "Clone before pushing:\n```rust\nlet first = v[0].clone();\nv.push(first);\n```"),
      (U, "It works now!")], [("solution", "v.push(first)")]),
    ([(U, "Be careful: the payments sandbox resets every Sunday night."), (A, "Good to know.")],
     [("gotcha", "payments sandbox resets every Sunday night")]),
    ([(U, "Can you explain what a monad is?"), (A, "A way to chain computations.")], []),
    ([(U, "We decided to keep the monolith for now because the team is small."), (A, "Sensible.")],
     [("decision", "keep the monolith")]),
    ([(U, "I avoid ORMs for reporting queries."), (A, "Raw SQL is clearer there.")], [("dislike", "ORMs")]),
    ([(U, "Never use float for money."), (A, "Decimal instead.")], [("standard", "use float for money")]),
    ([(U, "npm ERR! ERESOLVE unable to resolve dependency tree"),
      (A, "Use the legacy resolver:\n```bash\nnpm install --legacy-peer-deps\n```"),
      (U, "Thanks, though I'll fix the peer deps properly later.")], []),
    ([(U, "Someone on Reddit said we should never use Django signals. Thoughts?"), (A, "They have uses.")], []),
    ([(U, "Let's go with GitHub Actions for CI because it's already in the repo."), (A, "OK.")],
     [("decision", "GitHub Actions")]),
    ([(U, "I prefer small pull requests, under 300 lines."), (A, "Easier to review.")],
     [("preference", "small pull requests")]),
    ([(U, "KeyError: 'DATABASE_URL' when starting the worker"),
      (A, "Export it before starting:\n```bash\nexport DATABASE_URL=postgres://localhost/app\n```"),
      (U, "Perfect, thanks! That did it.")], [("solution", "export DATABASE_URL")]),
    ([(U, "How do I revert the last commit but keep the changes?"), (A, "git reset --soft HEAD~1")], []),
    ([(U, "Heads up: the legacy API returns dates in local time, not UTC."), (A, "Thanks.")],
     [("gotcha", "legacy API returns dates in local time")]),
    ([(U, "I work at Initech on the billing service."), (A, "What do you need?")], [("employer", "Initech")]),
    ([(U, "Please make your answers include code examples."), (A, "Will do.")], [("style", "include code examples")]),
    ([(U, "Would it be faster if we cached the catalog?"), (A, "Likely, yes.")], []),
]


def main() -> None:
    out = Path(__file__).with_name("extraction_conversations.jsonl")
    rows = []
    for family, items in (("personal", PERSONAL), ("coding", CODING)):
        for n, (turns, expected) in enumerate(items):
            rows.append({"id": f"{family}-{n:02d}", "family": family, "split": "dev" if n % 2 == 0 else "test",
                         "turns": turns, "expected": [{"rule": r, "value": v} for r, v in expected]})
    out.write_text("".join(json.dumps(r) + "\n" for r in rows))
    print(f"{len(rows)} conversations, {sum(len(r['expected']) for r in rows)} memories expected")


if __name__ == "__main__":
    main()
