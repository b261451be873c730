"""Tests of `toklab.unigram`: reference, lattice engine, model, trainer, parity with sentencepiece."""
