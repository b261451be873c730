"""Tokenizer files: recognising a file's format, toklab's own JSON formats, Hugging Face's ``tokenizer.json``.

The command line (``--model FILE``) calls this package; nothing here knows about the
command line (errors are `FormatError`, a ValueError with a one-line message).

- `reader`: `detect` a tokenizer file's format from its content (`FORMATS`), and `load` it;
- `sentencepiece_json`: the ``toklab-sentencepiece`` JSON format ``train unigram`` writes
  (`save_sentencepiece`, `load_sentencepiece`); the ``toklab-bpe`` format is
  `toklab.ByteBPE`'s own (`toklab.bpe.files`);
- `hf_json`: a Hugging Face ``tokenizer.json`` read into the matching toklab tokenizer
  (`from_hf_json`), component by component, anything else refused by name (`Unsupported`).
"""

from .hf_json import SentencePieceSegmenter, Unsupported, from_hf_json, read_document
from .reader import FORMATS, READS, FormatError, detect, load
from .sentencepiece_json import SP_FORMAT, SP_VERSION, load_sentencepiece, save_sentencepiece, sentencepiece_content

__all__ = [
    "FORMATS",
    "READS",
    "SP_FORMAT",
    "SP_VERSION",
    "FormatError",
    "SentencePieceSegmenter",
    "Unsupported",
    "detect",
    "from_hf_json",
    "load",
    "load_sentencepiece",
    "read_document",
    "save_sentencepiece",
    "sentencepiece_content",
]
