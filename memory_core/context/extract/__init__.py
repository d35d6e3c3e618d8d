"""Extraction: typed values by regular expressions, then the parse and the embedder."""
