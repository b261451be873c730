"""Facts and contracts every other layer uses; imports nothing from toklab.

- `checks`: argument checks for the public entry points (what was expected, what came,
  the fix), and the warning a trainer gives when a corpus cannot fill its vocabulary;
- `unicode`: UTF-8 facts, GPT-2's byte-to-character table, graphemes, coordinates;
- `special`: the special-token contract (allowed / disallowed, longest match wins) and
  chat templates (`special.chatml`);
- `pieces`: how sentencepiece-style vocabularies spell what is not text: ``▁`` for a
  space, ``<0xXX>`` byte pieces, piece kinds, the unknown piece's surface;
- `files`: writing a file all or nothing (`atomic_write`), and reading only what ends
  (regular files, streams up to a bound);
- `limits`: a time limit for regular expressions that come from a file or a user.
"""
