"""Prefix instability and token healing.

The tokens of a prefix are not always a prefix of the tokens of the whole text:
``encode("The qu")`` ends in a token ``" qu"`` that ``encode("The quick")`` never
contains. A model that is handed the first sequence and asked to continue it sees
a token boundary it has rarely or never seen in training. This module holds the
two tools that deal with that:

`encode_with_unstable`
    tiktoken's answer for streaming and completion APIs: split the encoding of a
    text into *stable* tokens (a byte prefix of the text that tiktoken treats
    as final; in rare cases a continuation still changes them) and the set of
    token sequences that may come next and cover the unstable rest. Checked
    against ``tiktoken.Encoding.encode_with_unstable`` (same stable tokens, same
    set of completions) on the real r50k/cl100k/o200k vocabularies.
`heal`
    token healing for generation: back off the trailing tokens that a
    continuation could still change, and return the kept IDs and the bytes the
    next generated token(s) must reproduce. `TokenTrie` lists the tokens allowed
    at each step; `advance` updates what is left to reproduce.

Both work on a `toklab.ByteBPE` through its public interface only (``encode``,
``encode_ordinary``, ``segment``, ``pattern``, ``vocab``, ``special_tokens``,
``merges``) and `toklab.pre_tokenizers`.

Files: `trie` (`TokenTrie`, `advance`), `unstable` (`encode_with_unstable`,
`stable_tokens`, `merge_bytes`, `utf8_text`), `heal` (`heal`,
`constrained_choices`, `generate`, `canonical_after`).
"""

from .heal import Generation, Healing, canonical_after, constrained_choices, generate, heal
from .trie import TokenTrie, advance
from .unstable import encode_with_unstable, merge_bytes, stable_tokens, utf8_text

__all__ = [
    "TokenTrie",
    "advance",
    "encode_with_unstable",
    "stable_tokens",
    "merge_bytes",
    "utf8_text",
    "Healing",
    "heal",
    "canonical_after",
    "constrained_choices",
    "Generation",
    "generate",
]
