# dpexplore developer entry points. README's quick start is `make serve` and `make test`.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8866

.PHONY: setup serve test chromium bench hub-setup axe

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,lab,export]'
	# an editable install skips the wheel's data files: enable the Jupyter server extension as the wheel does
	mkdir -p $(VENV)/etc/jupyter/jupyter_server_config.d
	cp jupyter-config/jupyter_server_config.d/dpexplore.json $(VENV)/etc/jupyter/jupyter_server_config.d/
	touch $@

setup: $(VENV)/.installed

# Debian's Chromium for the browser tests (Playwright never downloads a browser here).
chromium:
	@command -v /usr/bin/chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq chromium; fi; }

serve: setup
	$(VENV)/bin/dpexplore serve --port $(PORT)

test: setup chromium hub-setup axe
	$(PY) -m pytest -q

bench: setup chromium
	$(PY) benchmarks/bench_core.py
	$(PY) benchmarks/bench_browser.py

# JupyterHub for the hub test and docs/hosting.md: jupyterhub + idle culler from PyPI,
# configurable-http-proxy from npm into deploy/node (gitignored).
hub-setup: setup
	$(PY) -m pip install -q 'jupyterhub>=5' 'jupyterhub-idle-culler>=1.3'
	test -x deploy/node/node_modules/.bin/configurable-http-proxy || \
	  npm install --silent --prefix deploy/node configurable-http-proxy

# axe-core (the accessibility rules engine) for tests/browser/test_a11y_browser.py, from the npm
# registry at the version its lock file pins, into tests/browser/axe/node_modules (gitignored); the
# test injects it into each page from that file (nothing is fetched while the tests run).
AXE := tests/browser/axe/node_modules/axe-core/axe.min.js
axe: $(AXE)
$(AXE): tests/browser/axe/package.json tests/browser/axe/package-lock.json
	npm ci --silent --prefix tests/browser/axe
	touch $@
