"""Tests of `toklab.bpe`: reference, trainer, engine, the ByteBPE object, files, tiktoken parity."""
