"""Tests of `toklab.pipeline`: Pipeline, trace for every tokenizer, one API across tokenizers."""
