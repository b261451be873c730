"""formats."""

from .detect import FORMATS, READS, SP_FORMAT, SP_VERSION, detect, load, load_sentencepiece, save_sentencepiece

__all__ = ["FORMATS", "READS", "SP_FORMAT", "SP_VERSION", "detect", "load", "load_sentencepiece", "save_sentencepiece"]
