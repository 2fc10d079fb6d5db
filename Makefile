# dpexplore developer entry points. README's quick start is `make serve` and `make test`.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PORT ?= 8866

.PHONY: setup serve test chromium nginx bench hub-setup axe docs

$(VENV)/.installed: pyproject.toml setup.py dpexplore/_version.py
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,lab,export,docs]'
	# an editable install skips the wheel's data files: enable the Jupyter server extension as the wheel does
	mkdir -p $(VENV)/etc/jupyter/jupyter_server_config.d
	cp jupyter-config/jupyter_server_config.d/dpexplore.json $(VENV)/etc/jupyter/jupyter_server_config.d/
	touch $@

# The two JavaScript assets are built, not committed: the offline widget bundle (require.js +
# anywidget + the widget manager, 3 MB; tools/widgets-offline/vendor.py fetches its pinned npm
# packages) and the plotly.js bundle (only the trace types the apps draw, 1.3 MB;
# tools/plotly-bundle pins plotly.js and esbuild in its package-lock.json, npm ci, ~15 s).
# tools/build_js.py builds whichever is missing or out of date (its record:
# dpexplore/ui/static/built-from.json), the same step the package build runs (setup.py), so
# `pip install -e .` above has usually built them.
WIDGETS_OFFLINE := dpexplore/ui/static/jupyter-widgets-offline.js
PLOTLY_BUNDLE := dpexplore/ui/static/plotly-dpexplore.min.js
.PHONY: assets
assets:
	python3 tools/build_js.py
$(WIDGETS_OFFLINE) $(PLOTLY_BUNDLE): assets

setup: $(VENV)/.installed assets

# Debian's Chromium for the browser tests (Playwright never downloads a browser here).
chromium:
	@command -v /usr/bin/chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq chromium; fi; }

# Debian's nginx for tests/browser/test_hub_proxy.py, which runs deploy/nginx/dpexplore-hub.conf
# in front of a hub (its own prefix, ports and self-signed certificate; the package's own service
# is not used).
nginx:
	@command -v nginx >/dev/null || command -v /usr/sbin/nginx >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq --no-install-recommends nginx-light; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq --no-install-recommends nginx-light; fi; }

serve: setup
	$(VENV)/bin/dpexplore serve --port $(PORT)

# The whole suite: tools/test_suite.sh runs the browser tests, the JupyterHub tests and the
# tests that need no browser in three overlapping processes (CI ≤ 30 min on 2 cores), each part's
# output in turn, then a summary of every part and every rerun. `make test ARGS="..."` runs
# pytest once with those arguments instead.
test: setup chromium nginx hub-setup axe
	PY=$(PY) tools/test_suite.sh $(ARGS)

# The documentation site (Sphinx + MyST, docs/conf.py) into docs/_build/html: built afresh (-E),
# every warning an error; the worked examples are executed. tests/test_docs.py runs the same
# build in `make test` and checks what the pages say.
docs: setup
	rm -rf docs/_build
	$(PY) -m sphinx -b html -E -W --keep-going docs docs/_build/html

bench: setup chromium
	$(PY) benchmarks/bench_core.py
	$(PY) benchmarks/bench_browser.py

# JupyterHub (docs/hosting.md): `make hub-setup` installs what a hub needs and nothing of the test
# suite: the package with its `hub` extra (jupyterhub, the idle culler, JupyterLab for lab mode) and
# its two JavaScript bundles, configurable-http-proxy from npm into deploy/node (gitignored).
# The students' single-user servers run as unprivileged accounts, so their Python must be usable by
# any account: when the hub runs as root and $(PY) is not (a Python under /root, say), a second
# environment for them from Debian's /usr/bin/python3: deploy/singleuser-env (gitignored, an
# editable install) when any account can read this checkout, else $(HUB_OPT)/singleuser-env (a copy
# of the package, reinstalled on every hub-setup, with copies of deploy/singleuser*/): a checkout in
# a folder only root may enter (CI's clone, say) still gives the students a Python they can run.
# deploy/jupyterhub_config.py uses whichever is there (dpexplore.hub.students_env).
SINGLEUSER_ENV := deploy/singleuser-env
HUB_OPT := /opt/dpexplore-hub
$(VENV)/.hub-installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[hub]'
	mkdir -p $(VENV)/etc/jupyter/jupyter_server_config.d
	cp jupyter-config/jupyter_server_config.d/dpexplore.json $(VENV)/etc/jupyter/jupyter_server_config.d/
	touch $@

hub-setup: $(VENV)/.hub-installed $(WIDGETS_OFFLINE) $(PLOTLY_BUNDLE)
	test -x deploy/node/node_modules/.bin/configurable-http-proxy || \
	  npm install --silent --prefix deploy/node configurable-http-proxy
	@if [ "$$(id -u)" = 0 ] && ! runuser -u nobody -- $(PY) -c '' 2>/dev/null; then \
	  if runuser -u nobody -- test -r $(CURDIR)/pyproject.toml; then \
	    echo "$(PY) is not usable by other accounts: students' servers use $(SINGLEUSER_ENV)"; \
	    $(MAKE) --no-print-directory $(SINGLEUSER_ENV)/.installed; \
	    runuser -u nobody -- $(SINGLEUSER_ENV)/bin/python -c 'import dpexplore, voila, jupyterhub'; \
	  else \
	    echo "neither $(PY) nor $(CURDIR) is usable by other accounts: students' servers use $(HUB_OPT)"; \
	    rm -rf $(SINGLEUSER_ENV); \
	    $(MAKE) --no-print-directory hub-opt; \
	  fi; \
	fi

$(SINGLEUSER_ENV)/.installed: pyproject.toml
	test -x $(SINGLEUSER_ENV)/bin/python || /usr/bin/python3 -m venv $(SINGLEUSER_ENV)
	$(SINGLEUSER_ENV)/bin/python -m pip install -q -e '.[lab]' 'jupyterhub>=5'
	mkdir -p $(SINGLEUSER_ENV)/etc/jupyter/jupyter_server_config.d
	cp jupyter-config/jupyter_server_config.d/dpexplore.json $(SINGLEUSER_ENV)/etc/jupyter/jupyter_server_config.d/
	touch $@

# the students' environment and configuration outside the checkout (see hub-setup)
.PHONY: hub-opt
hub-opt:
	mkdir -p -m 755 $(HUB_OPT)
	test -x $(HUB_OPT)/singleuser-env/bin/python || /usr/bin/python3 -m venv $(HUB_OPT)/singleuser-env
	$(HUB_OPT)/singleuser-env/bin/python -m pip install -q '.[lab]' 'jupyterhub>=5'
	$(HUB_OPT)/singleuser-env/bin/python -m pip install -q --no-deps --force-reinstall .
	rm -rf $(HUB_OPT)/singleuser $(HUB_OPT)/singleuser-lab
	cp -r deploy/singleuser deploy/singleuser-lab $(HUB_OPT)/
	chmod -R a+rX $(HUB_OPT)
	runuser -u nobody -- $(HUB_OPT)/singleuser-env/bin/python -c 'import dpexplore, voila, jupyterhub'

# axe-core (the accessibility rules engine) for tests/browser/test_a11y_browser.py, from the npm
# registry at the version its lock file pins, into tests/browser/axe/node_modules (gitignored); the
# test injects it into each page from that file (nothing is fetched while the tests run).
AXE := tests/browser/axe/node_modules/axe-core/axe.min.js
axe: $(AXE)
$(AXE): tests/browser/axe/package.json tests/browser/axe/package-lock.json
	npm ci --silent --prefix tests/browser/axe
	touch $@
