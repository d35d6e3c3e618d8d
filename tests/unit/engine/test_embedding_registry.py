import numpy as np
import pytest

from memory_core.embedding import EMBEDDERS, HashingEmbedder, make_embedder
from memory_core.errors import InputError


def test_one_instance_per_name_with_the_named_models_vectors() -> None:
    embedder = make_embedder("hashing")
    assert make_embedder("hashing") is embedder
    texts = ["the cat sat", "on the mat"]
    np.testing.assert_allclose(embedder.embed(texts), HashingEmbedder().embed(texts), atol=1e-6)


def test_unknown_name_lists_the_known_ones_under_the_given_field() -> None:
    with pytest.raises(InputError, match=r"embedder.*minilm, hashing.*'word2vec'"):
        make_embedder("word2vec")
    with pytest.raises(InputError, match="ATLAS_X"):
        make_embedder("word2vec", field="ATLAS_X")
    assert list(EMBEDDERS) == ["minilm", "hashing"]
