import pytest

from memory_core.dashboard.limits import session_name
from memory_core.dashboard.playground import converse
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.errors import InputError


def test_recall_happens_before_remembering(atlas: ElasticMemoryAtlas) -> None:
    first = converse(atlas, "I take the train to Munich", session_id="play")
    assert first.hits == [] and first.stored is not None and "Nothing relevant" in first.reply
    second = converse(atlas, "how do I get to Munich by train", session_id="play")
    assert [h.node.id for h in second.hits] == [first.stored.id]
    assert second.stored is not None and len(atlas) == 2
    third = converse(atlas, "and back?", session_id="play", remember=False)
    assert third.stored is None and len(atlas) == 2


@pytest.mark.parametrize(
    "name", ["", " ", "<script>x</script>", "x" * 201, "tab\there", "\u202eevil", "a\nb"]
)
def test_session_names_are_plain(name: str, atlas: ElasticMemoryAtlas) -> None:
    with pytest.raises(InputError, match="session"):
        converse(atlas, "hello", session_id=name)
    assert len(atlas) == 0


def test_top_k_is_checked(atlas: ElasticMemoryAtlas) -> None:
    with pytest.raises(InputError, match="top_k"):
        converse(atlas, "hello", session_id="s", top_k=0)
    assert session_name(" demo 1 ") == "demo 1"


def test_writes_go_through_the_guard_and_say_so(atlas: ElasticMemoryAtlas) -> None:
    from memory_core.conflicts.guard import ConflictGuard
    from memory_core.engine.model import MemoryStatus

    guard = ConflictGuard(atlas)
    old = converse(atlas, "The travel budget is 5000 euros.", session_id="play", guard=guard)
    assert old.reply.endswith("Checked by the conflict guard: no contradiction.")
    new = converse(atlas, "The travel budget is now 6000 euros.", session_id="play", guard=guard)
    assert "Checked by the conflict guard: " in new.reply and "5000 euros" in new.reply
    assert old.stored is not None and new.stored is not None
    queued = guard.queue.count(view_filter())
    assert atlas.get(old.stored.id).status is MemoryStatus.SUPERSEDED or queued == 1
    superseded = atlas.get(old.stored.id).status is MemoryStatus.SUPERSEDED
    assert [d.existing_id for d in new.superseded] == ([old.stored.id] if superseded else [])
    asked = converse(atlas, "what is my travel budget?", session_id="play", remember=False)
    assert asked.hits[0].node.id == new.stored.id  # the stale budget no longer ranks first


def test_without_a_guard_the_reply_says_it_was_not_checked(atlas: ElasticMemoryAtlas) -> None:
    reply = converse(atlas, "The travel budget is 5000 euros.", session_id="play").reply
    assert reply.endswith("Conflict guard off: not checked.")


def view_filter():  # type: ignore[no-untyped-def]
    from memory_core.dashboard.conflict_view import item_filter

    return item_filter("open")


@pytest.mark.parametrize("guarded", [False, True])
def test_the_orchestrator_answers_a_forget_request(
    atlas: ElasticMemoryAtlas, guarded: bool
) -> None:
    from memory_core.agent.rules import Orchestrator
    from memory_core.conflicts.guard import ConflictGuard
    from memory_core.engine.model import MemoryStatus

    guard = ConflictGuard(atlas) if guarded else None
    rules = Orchestrator(atlas)
    said = converse(atlas, "My salary is 85000 euros.", session_id="play", guard=guard, rules=rules)
    assert said.stored is not None
    asked = converse(atlas, "forget that", session_id="play", guard=guard, rules=rules)
    assert asked.stored is None and "Soft-deleted on request: 1 memory." in asked.reply
    assert atlas.get(said.stored.id).status is MemoryStatus.TOMBSTONED
    assert len(atlas) == 1
