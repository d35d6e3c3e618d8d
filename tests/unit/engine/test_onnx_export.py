"""Where the derived ONNX graph is kept (``embedding.onnx_export.ensure_graph``): built once
per key, with a note, never left half-written, older keys' files removed. The export itself
is faked here; the real one is in ``tests/integration/engine/test_minilm_onnx.py``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from memory_core.embedding import onnx_export
from memory_core.errors import EmbeddingError


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Each (fake) build's target; the key is ``key-1`` until a test changes it."""
    built: list[Path] = []

    def write(path: Path) -> None:
        built.append(path)
        path.write_bytes(b"graph")

    monkeypatch.setattr(onnx_export, "_write_checked", write)
    monkeypatch.setattr(onnx_export, "build_key", lambda: "key-1")
    return built


def test_built_once_with_a_note_then_reused(
    builds: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = onnx_export.ensure_graph(tmp_path / "models")
    assert path == tmp_path / "models" / "all-MiniLM-L6-v2-key-1.onnx"
    assert "deriving all-MiniLM-L6-v2's ONNX graph" in capsys.readouterr().err
    assert onnx_export.ensure_graph(tmp_path / "models") == path
    assert builds == [path]
    assert capsys.readouterr().err == ""


def test_a_new_key_builds_a_new_file_and_removes_the_old_one(
    builds: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = onnx_export.ensure_graph(tmp_path)
    unrelated = tmp_path / "other-model.onnx"
    unrelated.write_bytes(b"x")
    monkeypatch.setattr(onnx_export, "build_key", lambda: "key-2")
    new = onnx_export.ensure_graph(tmp_path)
    assert new.name.endswith("key-2.onnx")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([new.name, unrelated.name])
    assert builds == [old, new]


def test_a_graph_that_differs_from_the_model_is_refused(tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    # a graph that returns its input ids as token states: nothing like MiniLM's
    ids = helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["n", "t"])
    mask_input = helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["n", "t"])
    hidden = helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["n", "t", 1])
    nodes = [
        helper.make_node("Cast", ["input_ids"], ["ids"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["ids", "axis"], ["hidden"]),
    ]
    axis = helper.make_tensor("axis", TensorProto.INT64, [1], [2])
    graph = helper.make_graph(nodes, "ids", [ids, mask_input], [hidden], initializer=[axis])
    path = tmp_path / "wrong.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    feed = {"input_ids": np.array([[101, 7, 102]], dtype=np.int64)}
    mask = np.ones((1, 3), dtype=np.int64)
    expected = np.zeros((1, 1), dtype=np.float32)
    with pytest.raises(EmbeddingError, match="differs from the model"):
        onnx_export._check(path, {**feed, "attention_mask": mask}, expected)
