"""The chapters' experiments: what happens to tokens in production (§4-§6), built on the library.

- `extension`: adding tokens to a trained byte-level BPE, with its regression test and
  embedding resize (§4.3);
- `toylm`: three tiny numpy language models the chapters train in seconds (§4.3, §5.2,
  §5.3), with one method vocabulary;
- `digits`: how tokenizers cut numbers, and place value (§5.1);
- `indentation`: code whitespace (§5.1);
- `glitch`: glitch-token candidates from a vocabulary file and a model's weights (§5.2);
- `healing`: prefix instability (tiktoken's ``encode_with_unstable``), token healing, a
  token trie (§5.3);
- `batching`: attention and loss masks, padding, packing (§5.4);
- `patching`: tokenizer-free input: a next-byte model, byte patches, hash embeddings (§6).
"""
