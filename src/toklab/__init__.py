"""toklab: the tested package behind *Tokenization, from bytes to production*.

Modules follow the tokenization pipeline: `unicode` (bytes and characters),
`pretokenize` (regex splitting), `bpe` (training and encoding), `special`
(special-token contract), `vocabs` (real vocabularies), `metrics`
(fertility, compression, bits per byte), `viz` (token boundaries, plots).
"""

__version__ = "0.1.0"
