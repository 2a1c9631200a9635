# Session Handoff — `make run` serves the demo, `make test` runs every check (see README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: run test lint bench install messages

install: $(VENV)/.installed

# axe-core for the browser tests' accessibility walk (package.json; node_modules is not committed).
node_modules/.installed: package-lock.json
	npm ci --no-audit --no-fund
	touch $@

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

test: install lint node_modules/.installed
	sh scripts/ensure-chromium
	$(BIN)/pytest
# The handoff on a second chat host (tests/plain_host): its own settings and test database,
# with UUID keys, with integer keys, and the engine without the settings card.
	$(BIN)/pytest tests/plain_host --ds=tests.plain_host.settings
	$(BIN)/pytest tests/plain_host --ds=tests.plain_host.int_settings
	$(BIN)/pytest tests/plain_host/test_engine_alone.py --ds=tests.plain_host.engine_settings

bench: install
	$(BIN)/python -m bench

# After changing a translated string: refresh locale/*.po, translate the new entries, then build
# the .mo files (both are committed; needs gettext's msgfmt).
messages: install
	$(BIN)/python manage.py makemessages -l zh_Hans --no-location --no-obsolete --ignore=.venv --ignore=tests --ignore=bench --ignore=samples --ignore='*.egg-info'
	$(BIN)/python manage.py makemessages -d djangojs -l zh_Hans --no-location --no-obsolete --ignore=.venv --ignore=tests --ignore='static/vendor/*' --ignore='*.egg-info'
	$(BIN)/python manage.py compilemessages --ignore=.venv
