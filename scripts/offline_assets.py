"""Sphinx extension: keep the vendored browser assets in ``_static/vendor/`` out of every page's <head>.

Jupyter Book adds every ``*.js`` and ``*.css`` found under ``_static/`` to ``html_js_files`` /
``html_css_files`` (jupyter_book/config.py). That is what loads ``_static/live.js`` on every page, but it
would also load all of MathJax, thebe's webpack chunks and the widget manager as separate script tags. The
vendored files are instead loaded by the settings that ask for them (``mathjax_path``, ``nb_ipywidgets_js``)
and by ``live.js``. This extension removes the ``vendor/`` entries and stops the build with a clear message
when ``_static/vendor/`` has not been filled by ``scripts/vendor.sh`` (``make vendor``). It also loads
``_static/offline-widgets.js`` early (before require.js), which that script needs.

sphinx-thebe 0.3 also writes ``const THEBE_JS_URL = "https://unpkg.com/thebe@0.8.2/..."`` into every page; it
is rewritten to the vendored thebe so that no page names a CDN (``live.js`` replaces sphinx-thebe's loader),
and the second copy Jupyter Book's double registration adds (a console SyntaxError) is dropped.

Static explorers: for the duration of the build it sets ``THEORYBOOK_STATIC_PANELS=1`` (unless already set, e.g.
to ``0`` to turn them off), which the kernels that execute the chapters inherit, so that
``theorybook.widgets.live_panel`` precomputes every panel for the static HTML; ``_static/static-panels.js`` (loaded
on every page, like every non-vendor ``_static/*.js``) makes them explorable. Other headless kernels (nbmake,
``tests/test_chapters.py``, which share the execution cache) precompute by default too; a kernel of a Jupyter
server (JupyterLab, ``make live``) builds the live panel only (``theorybook.widgets._static_enabled``).
"""

from __future__ import annotations

import os
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ConfigError

VENDOR_PREFIX = "vendor/"
REQUIRED = (
    "mathjax/tex-mml-chtml.js",
    "requirejs/require.js",
    "html-manager/embed-amd.js",
    "thebe/index.js",
)


STATIC_ENV = "THEORYBOOK_STATIC_PANELS"  # read by theorybook.widgets.live_panel
STATIC_JS = "static-panels.js"
_saved_env: list[str | None] = []

# _static scripts that must run before require.js and the widget manager (Sphinx's default priority is 500).
EARLY = {"offline-widgets.js": 200}


def _name(entry) -> str:
    return entry[0] if isinstance(entry, (tuple, list)) else entry


def _drop_vendor(entries):
    return [e for e in entries if not str(_name(e)).replace("\\", "/").startswith(VENDOR_PREFIX)]


def _config_inited(app: Sphinx, config: Config) -> None:
    config.html_js_files = [
        (e, {"priority": EARLY[e]}) if isinstance(e, str) and e in EARLY else e
        for e in _drop_vendor(config.html_js_files)
    ]
    config.html_css_files = _drop_vendor(config.html_css_files)
    if (Path(app.confdir) / "_static" / STATIC_JS).is_file() and STATIC_JS not in map(_name, config.html_js_files):
        config.html_js_files.append(STATIC_JS)  # Jupyter Book adds it; a plain Sphinx build must too
    _saved_env.append(os.environ.get(STATIC_ENV))
    os.environ.setdefault(STATIC_ENV, "1")
    vendor = Path(app.confdir) / "_static" / "vendor"
    missing = [p for p in REQUIRED if not (vendor / p).is_file()]
    if missing:
        raise ConfigError(
            f"offline assets missing from {vendor}: {', '.join(missing)}. "
            "Run `make vendor` (scripts/vendor.sh: npm ci + copy) before building the book."
        )


def _page_context(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts or "pathto" not in context:
        return
    from sphinx.builders.html._assets import _JavaScript

    local = context["pathto"]("_static/vendor/thebe/index.js", 1)
    rewritten, seen = [], False
    for js in scripts:  # a new list: the builder shares script_files between pages
        body = getattr(js, "attributes", {}).get("body", "")
        if "const THEBE_JS_URL" in body:
            if seen:  # sphinx-thebe registers it twice under Jupyter Book: a `const` redeclaration error
                continue
            seen = True
            rest = body.split(";", 1)[1] if ";" in body else ""
            js = _JavaScript(None, priority=js.priority, body=f'const THEBE_JS_URL = "{local}";{rest}')
        rewritten.append(js)
    context["script_files"] = rewritten


def _build_finished(app: Sphinx, exception) -> None:
    if not _saved_env:
        return
    old = _saved_env.pop()
    if old is None:
        os.environ.pop(STATIC_ENV, None)
    else:
        os.environ[STATIC_ENV] = old


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", _config_inited)
    app.connect("build-finished", _build_finished)
    app.connect("html-page-context", _page_context)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
