"""All stages together: `Pipeline` composes any model with any stages, and what follows a token through them.

- `compose`: the `Model` protocol every model offers, `Stage`, `Pipeline` (normalizer,
  pre-tokenizer, model, post-processor, decoder, special tokens, chat template) and
  `trace`, every stage's output for one string, for every tokenizer toklab offers;
- `offsets`: which span of the original text each token came from
  (``encode_with_offsets``, tiktoken's ``decode_with_offsets``);
- `versioning`: one fingerprint for everything that decides a tokenizer's IDs, and the
  manifest saved beside it.

The layer sits above the stages and below the algorithms: the algorithm packages build
their presets (`toklab.ByteBPE`, `toklab.WordPiece`) as pipelines.
"""

from .compose import STAGES, Model, Pipeline, Stage, trace

__all__ = ["STAGES", "Model", "Pipeline", "Stage", "trace"]
