"""Sphinx extension for the book's HTML pages: notebook downloads and a clean script list.

Enabled in ``_config.yml`` (``sphinx.extra_extensions``). What it does:

* **Offers the executed notebook beside the MyST source.** sphinx-book-theme puts an
  ``.ipynb`` entry in the page's download menu only when a launch service (Binder,
  Colab, …) is configured, which this offline book has none of. ``make book`` renders
  each chapter from its executed notebook (staged by `toklab.teaching.edition.stage_edition`, which
  drops the ``jupytext`` pairing metadata: it names this repository's folders and would
  make Jupyter pair the download with files the reader does not have), so the notebook
  is the page's source; the chapter's ``.md`` is copied beside it and the menu offers
  both. A build that executes the ``.md`` itself (``jupyter-book build .``) gets the
  executed notebook myst-nb wrote to ``_build/jupyter_execute/`` offered instead.
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
* **Adds the tokenizer playground** (`toklab.teaching.playground`): the ``playground`` directive,
  its script on the pages that use it, and the vocabularies it loads, written into
  ``_static/playground/`` of every HTML build.
* **Says, inside each exercise box, how the exercise is checked**: its label (what
  ``check`` and ``grade`` take), its difficulty, and either the call its checker makes, the
  ``python -m toklab check`` line and the chapter's answer template, or that it is answered
  in words (no checker, or a checker meant to fail). All of it comes from
  `toklab.teaching.catalog` (the chapter's text and the checkers' registry), in both
  editions; the templates are written into ``_static/answers/``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

__all__ = ["setup", "executed_notebook", "downloadable_notebook", "caption_alt_text", "exercise_boxes",
           "ANSWERS_DIR"]

#: Where the answer templates go in an HTML build.
ANSWERS_DIR = "_static/answers"
_BOX_CSS = "toklab-exercises.css"
_LABEL = re.compile(r"ch\d\d(?:_\d+)?-ex\d+")


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
    if sourcename.endswith(".ipynb"):
        _offer_markdown(app, pagename, context)
        return
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


def _offer_markdown(app, pagename: str, context: dict) -> None:
    """A page rendered from its executed notebook (a staged edition): offer its ``.md`` too.

    The notebook is the page's source, so Sphinx copies it to ``_sources/`` and the
    theme offers it as the notebook; the chapter's MyST source is copied beside it from
    ``toklab_markdown_root`` (the repository), and `_point_source_at_markdown` makes the
    menu's source entry that ``.md``, as for a page built from the ``.md``. The student
    edition sets no root: its download is the notebook alone.
    """
    root = app.config.toklab_markdown_root
    source = Path(root) / f"{pagename}.md" if root else None
    if source is None or not source.is_file():
        return
    target = Path(app.outdir) / "_sources" / f"{pagename}.md"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes())
    context["ipynb_source"] = context["sourcename"]
    context["toklab_markdown_source"] = f"{pagename}.md"


def _point_source_at_markdown(app, pagename: str, templatename: str, context: dict, doctree) -> None:
    markdown = context.get("toklab_markdown_source")
    if not markdown:
        return
    for group in context.get("header_buttons", []):
        for button in group.get("buttons", []) if group.get("label") == "download-buttons" else []:
            if button.get("label") == "download-source-button":
                button["url"] = f"{context['pathto']('_sources', 1)}/{markdown}"
                button["text"] = ".md"


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


def _chapter_text(path: Path) -> str:
    from .catalog import notebook_markdown

    text = path.read_text(encoding="utf-8")
    return notebook_markdown(text) if path.suffix == ".ipynb" else text


def exercise_boxes(app, doctree) -> None:
    """Put the line that says how an exercise is checked at the top of each exercise box of the page."""
    from docutils import nodes
    from sphinx_exercise.nodes import exercise_enumerable_node, exercise_node

    from .catalog import UNMARKED, box, parse_text

    found = [n for n in doctree.findall(lambda n: isinstance(n, (exercise_node, exercise_enumerable_node)))
             if _LABEL.fullmatch(n.get("label", ""))]
    if not found:
        return
    _, exercises = parse_text(_chapter_text(Path(app.env.doc2path(app.env.docname))))
    stars = {ex["label"]: ex["difficulty"] for ex in exercises}
    up = "../" * app.env.docname.count("/")
    for node in found:
        info = box(node["label"], stars.get(node["label"], UNMARKED))
        line = nodes.paragraph(classes=["toklab-exercise-info"])
        line += nodes.strong(text=info.label)
        line += nodes.Text(f" · {info.difficulty if info.difficulty != UNMARKED else 'difficulty not marked'} · ")
        if info.call is None:
            line += nodes.Text("answer in words (no checker)")
        elif not info.graded:
            line += nodes.Text("meant to fail: run its checker on ")
            line += nodes.literal(text=info.call)
            line += nodes.Text(" and explain in words why it cannot pass (not graded)")
        else:
            line += nodes.Text("the checker calls ")
            line += nodes.literal(text=info.call)
            line += nodes.Text(" · ")
            line += nodes.literal(text=info.command)
            line += nodes.Text(" · ")
            line += nodes.reference(text=f"template {info.template}", refuri=f"{up}{ANSWERS_DIR}/{info.template}")
        body = next((c for c in node.children if isinstance(c, nodes.section)), node)
        body.insert(0, line)


def _write_templates(app, exception) -> None:
    """Write each chapter's answer template, and the boxes' style sheet, into the HTML build."""
    if exception is not None or app.builder.format != "html":
        return
    from .catalog import parse_text, template

    folder = Path(app.outdir) / ANSWERS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    chapters: dict[str, tuple[str, list[dict]]] = {}  # a chapter may have deep-dive pages: one template for all
    for docname in sorted(app.env.found_docs):  # the chapter's main page (ch02_1_bpe) before ch02_1_bpe_fast
        chapter = re.match(r"ch\d\d(?:_\d+)?", docname.rsplit("/", 1)[-1])
        if chapter is None:
            continue
        title, found = parse_text(_chapter_text(Path(app.env.doc2path(docname))))
        first_title, so_far = chapters.get(chapter[0], (title, []))
        chapters[chapter[0]] = (first_title or title, so_far + found)
    for chapter, (title, found) in chapters.items():
        text = template(chapter, title, found)
        if text is not None:
            (folder / f"{chapter}_answers.py").write_text(text, encoding="utf-8")
    (Path(app.outdir) / "_static" / _BOX_CSS).write_text(
        ".toklab-exercise-info { font-size: 0.9em; overflow-wrap: anywhere; }\n"
        ".toklab-exercise-info code { white-space: normal; overflow-wrap: anywhere; }\n", encoding="utf-8")


def setup(app) -> dict[str, Any]:
    from . import playground

    playground.setup(app)
    # Set by `toklab.teaching.edition.stage_edition` for the full edition: the repository root, whose
    # book/*.md each page rendered from a notebook offers beside that notebook.
    app.add_config_value("toklab_markdown_root", "", "html")
    app.connect("doctree-resolved", caption_alt_text)
    app.connect("doctree-read", exercise_boxes)
    app.connect("build-finished", _write_templates)
    app.add_css_file(_BOX_CSS)
    # Before sphinx-book-theme builds the download menu (its handlers run at priority 501).
    app.connect("html-page-context", _offer_notebook, priority=500)
    # After the theme has built the menu.
    app.connect("html-page-context", _point_source_at_markdown, priority=502)
    # After every extension has added its page scripts.
    app.connect("html-page-context", _tidy_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
