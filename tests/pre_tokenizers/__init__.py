"""Tests of `toklab.pre_tokenizers`: the regex catalogue, BERT's split, sentencepiece's ``▁``."""
