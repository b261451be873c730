"""Former home of the regex pre-tokenizer, kept so old imports work: see `toklab.pre_tokenizers.patterns`."""

from .pre_tokenizers.patterns import *  # noqa: F401,F403
from .pre_tokenizers.patterns import __all__  # noqa: F401
