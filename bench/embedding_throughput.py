"""Throughput benchmark for the in-process MiniLM embedding encoder.

Run from the repository root:

    python bench/embedding_throughput.py

Measures cold model-load time, sentences per second at batch sizes 1, 8, 32
and 64 over 512 deterministic memory-like sentences (15-40 words, built from
templates, no network), and peak RSS. Writes
bench/results/embedding_throughput.json and prints a Markdown table.
"""

from __future__ import annotations

import json
import os
import pathlib
import platform
import random
import resource
import sys
import time

# Make `memories` importable when the script is run by path from anywhere.
REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

RESULTS_PATH = REPO_ROOT / "bench" / "results" / "embedding_throughput.json"
BATCH_SIZES = (1, 8, 32, 64)
N_SENTENCES = 512
MIN_WORDS, MAX_WORDS = 15, 40
SEED = 20240601

_PROJECTS = ["billing", "checkout", "search", "auth", "mobile", "analytics", "notifications", "admin"]
_TOOLS = [
    "pytest",
    "Django",
    "Postgres",
    "Redis",
    "Celery",
    "Blazor",
    "MudBlazor",
    "Terraform",
    "Docker",
    "GitHub Actions",
    "ruff",
    "mypy",
    "Kubernetes",
    "nginx",
    "React",
    "TypeScript",
]
_SUBJECTS = [
    "the nightly import job",
    "the users table migration",
    "the staging deploy",
    "the login form",
    "the payment webhook",
    "the search indexer",
    "the CSV export",
    "the feature flag service",
    "the cache warmer",
    "the release pipeline",
    "the dashboard query",
    "the email worker",
]
_ACTIONS = [
    "run the migrations with CONCURRENTLY",
    "pin the dependency versions in the lock file",
    "use fixtures instead of setUp methods",
    "prefer snackbars over modal dialogs for alerts",
    "add an index on the foreign key",
    "retry the request with exponential backoff",
    "keep secrets out of the repository",
    "log the correlation id on every request",
    "write the test before fixing the bug",
    "split the change into smaller pull requests",
    "check the timezone of every stored timestamp",
    "batch the writes to avoid lock contention",
]
_REASONS = [
    "the table was locked for several minutes last time",
    "the team agreed on it during the last retrospective",
    "otherwise the build breaks on a clean checkout",
    "users reported confusing popups that blocked their work",
    "the query planner ignored the old index on large accounts",
    "the upstream API rate-limits bursts of requests",
    "a flaky test hid a real regression for a week",
    "the reviewer could not follow one huge diff",
]
_EXTRAS = [
    "Ask the on-call engineer before changing it on a Friday.",
    "This was confirmed again after the incident in March.",
    "The same rule applies to the {project} service.",
    "See the runbook entry for {tool} for the exact commands.",
    "It saves about ten minutes per release.",
    "Remember to update the changelog when you do this.",
]
_TEMPLATES = [
    "Team rule: {action} for {subject} in the {project} service.",
    "Prefer to {action} when touching {subject}; {tool} makes it easy.",
    "In the {project} project, always {action} when working on {subject}, because {reason}.",
    "For {subject} in {tool}, we {action}; {reason}.",
    "Lesson learned: {subject} failed until we decided to {action}, since {reason}.",
    "Convention for {project}: {action} whenever {subject} is touched with {tool}.",
    "When {subject} misbehaves, first {action}; the {tool} logs usually show why, and {reason}.",
]


def make_sentences(n: int = N_SENTENCES, seed: int = SEED) -> list[str]:
    """Deterministic, varied memory-like sentences of MIN_WORDS..MAX_WORDS words."""
    rng = random.Random(seed)
    sentences: list[str] = []
    while len(sentences) < n:
        fields = {
            "project": rng.choice(_PROJECTS),
            "tool": rng.choice(_TOOLS),
            "subject": rng.choice(_SUBJECTS),
            "action": rng.choice(_ACTIONS),
            "reason": rng.choice(_REASONS),
        }
        # A random target length, a template that fits under it, then
        # follow-up sentences up to it: lengths spread roughly evenly over
        # the range instead of clustering around the template lengths.
        target = rng.randint(MIN_WORDS, MAX_WORDS)
        bases = [t.format(**fields) for t in _TEMPLATES]
        fitting = [b for b in bases if len(b.split()) <= target]
        text = rng.choice(fitting) if fitting else min(bases, key=lambda b: len(b.split()))
        text = text[0].upper() + text[1:]
        extras = rng.sample(_EXTRAS, len(_EXTRAS))
        while extras and len(text.split()) < target:
            candidate = f"{text} {extras.pop().format(**fields)}"
            if len(candidate.split()) <= MAX_WORDS:
                text = candidate
        if MIN_WORDS <= len(text.split()) <= MAX_WORDS:
            sentences.append(text)
    return sentences


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def main() -> int:
    sentences = make_sentences()
    word_counts = [len(s.split()) for s in sentences]

    rss_before_load = peak_rss_mib()
    start = time.perf_counter()
    from memories.embeddings.minilm import MiniLMEncoder

    encoder = MiniLMEncoder()
    load_seconds = time.perf_counter() - start

    # Token counts as the model sees them (after truncation, with [CLS]/[SEP]).
    token_counts = [len(e.ids) for e in encoder._tokenizer.encode_batch(sentences)]

    encoder.encode(sentences[:64], batch_size=32)  # warm-up: first-touch allocations, BLAS threads

    runs = []
    for batch_size in BATCH_SIZES:
        start = time.perf_counter()
        vectors = encoder.encode(sentences, batch_size=batch_size)
        seconds = time.perf_counter() - start
        assert vectors.shape == (len(sentences), encoder.dims)
        runs.append(
            {
                "batch_size": batch_size,
                "seconds": round(seconds, 4),
                "sentences_per_second": round(len(sentences) / seconds, 1),
                "tokens_per_second": round(sum(token_counts) / seconds, 1),
            }
        )

    result = {
        "model": encoder.name,
        "implementation": "numpy (memories.embeddings.minilm.MiniLMEncoder)",
        "sentences": len(sentences),
        "words_per_sentence": {
            "min": min(word_counts),
            "max": max(word_counts),
            "mean": round(sum(word_counts) / len(word_counts), 1),
        },
        "tokens_per_sentence": {
            "min": min(token_counts),
            "max": max(token_counts),
            "mean": round(sum(token_counts) / len(token_counts), 1),
        },
        "cold_load_seconds": round(load_seconds, 3),
        "peak_rss_mib": round(peak_rss_mib(), 1),
        "peak_rss_mib_before_load": round(rss_before_load, 1),
        "throughput": runs,
        "environment": {
            "python": platform.python_version(),
            "numpy": __import__("numpy").__version__,
            "cpu_count": os.cpu_count(),
            "machine": platform.machine(),
            "processor": platform.processor() or None,
        },
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }

    RESULTS_PATH.parent.mkdir(parents=True, exist_ok=True)
    tmp_path = RESULTS_PATH.with_suffix(".json.tmp")  # write-then-rename: never a half-written file
    tmp_path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    tmp_path.replace(RESULTS_PATH)

    print(
        f"Model: {result['model']}  |  {len(sentences)} sentences, "
        f"{result['words_per_sentence']['mean']} words / "
        f"{result['tokens_per_sentence']['mean']} tokens on average"
    )
    print(f"Cold load: {result['cold_load_seconds']:.3f} s  |  peak RSS: {result['peak_rss_mib']:.1f} MiB\n")
    print("| batch size | seconds | sentences/s | tokens/s |")
    print("|---:|---:|---:|---:|")
    for run in runs:
        print(
            f"| {run['batch_size']} | {run['seconds']:.3f} | {run['sentences_per_second']:.1f} "
            f"| {run['tokens_per_second']:.0f} |"
        )
    print(f"\nWrote {RESULTS_PATH.relative_to(REPO_ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
