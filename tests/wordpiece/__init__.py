"""Tests of `toklab.wordpiece`: reference, trainer, model, vocab.txt, parity with Hugging Face."""
