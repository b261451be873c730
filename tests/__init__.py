"""toklab's tests, one folder per package (bpe/, wordpiece/, unigram/, ...), one file per concern."""
