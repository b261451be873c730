"""Tests of `toklab.normalizers`: Unicode forms with offsets, BERT's normalizer, sentencepiece's tables."""
