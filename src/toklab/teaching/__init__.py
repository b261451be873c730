"""The book's teaching tools, on top of everything else: exercises, drills, invariants, the book's helpers.

- `exercises`: a checker for every coding exercise, and the sandbox that runs a
  student's file against one (``python -m toklab check``/``grade``);
- `catalog`: what each exercise is (label, difficulty, the call its checker makes),
  read from the chapters and the registry: the listing, the exercise boxes, the
  answer templates;
- `drills`: fresh practice problems for interviews, each with a checker that names the
  likely mistake (§8);
- `sanity`: the eight invariants of the from-scratch demos as one check (the appendix);
- `package_map`: the package's map of itself: its layers, where each pipeline stage
  lives, and every reference-fast pair (§7);
- `book`: the chapters' helpers (``setup``, ``glue``, ``md_table``);
- `edition`: the two editions staged from the executed notebooks, the student one with
  every solution removed (``python -m toklab.teaching.edition stage full|student DIR``);
- `sphinxext`: the book's Sphinx extension (notebook downloads, script clean-up, figure
  alt text), with `playground`: the in-browser tokenizer playground's directive, and the
  vocabularies and Unicode classes it loads, written into every HTML build.
"""
