"""Measuring tokenizers and looking at their output.

- `metrics`: fertility with a declared denominator, UNK rate, bits per byte;
- `viz`: token-boundary views (plain text and HTML) and small plotting helpers;
- `vocab_facts`: facts computed from real vocabulary files: the five sizes of a
  vocabulary, ID holes, overlaps, token classes (§4).
"""
