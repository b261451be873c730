"""Tests of `toklab.sentencepiece` and `toklab.sentencepiece_model` against the real library."""
