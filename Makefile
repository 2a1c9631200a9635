# Session Handoff — `make run` serves the demo, `make test` runs every check (see README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: run test lint bench install

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $@

# The demo shows Django's debug pages; the settings' own default is off (production-safe).
run: export DJANGO_DEBUG ?= 1
run: install
	$(BIN)/python manage.py migrate --noinput
	PORT=$(PORT) $(BIN)/python manage.py seed_demo
	$(BIN)/honcho start --port $(PORT) --procfile Procfile

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy .

test: install lint
	sh scripts/ensure-chromium
	$(BIN)/pytest

bench: install
	$(BIN)/python -m bench
