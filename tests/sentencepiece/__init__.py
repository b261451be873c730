"""Tests of `toklab.sentencepiece` and `toklab.sentencepiece.model_file` against the real library."""
