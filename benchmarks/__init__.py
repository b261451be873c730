"""toklab's benchmarks against the real tokenizer libraries (``make bench``).

`harness` measures and reports; `run` (BPE training and encoding) and `models`
(WordPiece and Unigram training) are the suites. Run them from the repository
root as modules: ``python -m benchmarks.run``, ``python -m benchmarks.models``.
"""
