"""Sphinx extension for the book's HTML pages: notebook downloads and a clean script list.

Enabled in ``_config.yml`` (``sphinx.extra_extensions``). It does two things on every page:

* **Offers the executed notebook.** A chapter is a MyST text notebook (``book/*.md``);
  the build executes it and myst-nb writes the executed ``.ipynb`` to
  ``_build/jupyter_execute/``. sphinx-book-theme puts an ``.ipynb`` entry in the page's
  download menu only when a launch service (Binder, Colab, …) is configured, which this
  offline book has none of. Here the executed notebook is copied next to the page's
  source under ``_sources/`` and the menu offers it beside the ``.md``. The copy drops
  the ``jupytext`` pairing metadata, which names this repository's folders and would
  make Jupyter try to pair the download with files the reader does not have.
* **Drops scripts the book cannot use and duplicate inline scripts.** Jupyter Book always
  loads sphinx-thebe; with thebe switched off (``launch_buttons.thebe: false``) its
  scripts only name a CDN bundle, and its inline configuration is emitted twice per
  page, so the second ``const THEBE_JS_URL`` throws "Identifier has already been
  declared" on every page. The same happens to sphinx-togglebutton's inline selector.
  Duplicated inline scripts are kept once.
* **Gives a figure's image its caption as alt text when it has none.** A figure placed
  with ``{glue:figure}`` and no ``:alt:`` otherwise gets its file name as alt text (a
  hash such as ``../_images/5a54….png``), which is what a screen reader would read out.
  An explicit ``:alt:`` always wins; a chapter should give one that says what the plot
  shows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["setup", "executed_notebook", "downloadable_notebook", "caption_alt_text"]


def executed_notebook(outdir: str | Path, pagename: str) -> Path:
    """Where myst-nb wrote the executed notebook of ``pagename`` for a build into ``outdir``."""
    return Path(outdir).parent / "jupyter_execute" / f"{pagename}.ipynb"


def downloadable_notebook(nb: dict[str, Any]) -> dict[str, Any]:
    """The notebook as a reader downloads it: without the jupytext pairing metadata."""
    nb = dict(nb)
    nb["metadata"] = {k: v for k, v in nb.get("metadata", {}).items() if k != "jupytext"}
    return nb


def _offer_notebook(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    sourcename = context.get("sourcename") or ""
    if not (sourcename.endswith(".md") or sourcename.endswith(".md.txt")):
        return
    executed = executed_notebook(app.outdir, pagename)
    if not executed.is_file():  # a plain Markdown page (index, references): nothing to offer
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.ipynb"
    target.parent.mkdir(parents=True, exist_ok=True)
    nb = downloadable_notebook(json.loads(executed.read_text(encoding="utf-8")))
    target.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    # sphinx-book-theme's download menu (html-page-context, priority 501) reads this key.
    context["ipynb_source"] = f"{pagename}.ipynb"


def _thebe_enabled(app) -> bool:
    launch = (app.config.html_theme_options or {}).get("launch_buttons") or {}
    return bool(launch.get("thebe")) or bool((app.config["thebe_config"] or {}).get("always_load"))


def _tidy_scripts(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    drop_thebe = "thebe_config" in app.config and not _thebe_enabled(app)
    seen: set[tuple] = set()
    kept = []
    for js in scripts:
        filename = str(getattr(js, "filename", js) or "")
        attributes = dict(getattr(js, "attributes", {}) or {})
        body = attributes.get("body", "")
        if drop_thebe and (filename.endswith("sphinx-thebe.js") or "THEBE_JS_URL" in body):
            continue
        key = (filename, tuple(sorted(attributes.items())))
        if key in seen:
            continue
        seen.add(key)
        kept.append(js)
    scripts[:] = kept


def caption_alt_text(app, doctree, docname: str) -> None:
    """Set each captioned figure's images' alt text to the caption where none was given."""
    from docutils import nodes

    for figure in doctree.findall(nodes.figure):
        captions = list(figure.findall(nodes.caption))
        if not captions:
            continue
        text = " ".join(captions[0].astext().split())
        for image in figure.findall(nodes.image):
            if not image.get("alt"):
                image["alt"] = text


def setup(app) -> dict[str, Any]:
    app.connect("doctree-resolved", caption_alt_text)
    # Before sphinx-book-theme builds the download menu (its handlers run at priority 501).
    app.connect("html-page-context", _offer_notebook, priority=500)
    # After every extension has added its page scripts.
    app.connect("html-page-context", _tidy_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
