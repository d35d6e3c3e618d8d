"""The demo player: replays a sample conversation into an atlas, turn by turn.

Playback runs on its own daemon thread so the page's script thread never blocks and
Stop/Pause act at once; pages poll ``status()`` from an ``st.fragment(run_every=...)``.
Every step is a turn of the agent loop (``memory_core.agent.loop.TurnLoop``): recall what
the user's words bring back (reinforcing it, possibly from earlier sessions), store the
turn as said by its speaker (linked to what it recalled; the orchestrator's rules run
around the store), let the clock run and decay weights (evicting what fell too low), and
end each session when its last turn is played (summarizing it with the default config).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from memory_core.agent.loop import TurnLoop
from memory_core.agent.memory import AtlasMemory
from memory_core.agent.rules import Orchestrator
from memory_core.conflicts.detector import played_user, user_metadata
from memory_core.engine.atlas import ElasticMemoryAtlas
from memory_core.engine.config import PRESET_DESCRIPTIONS, PRESETS, AtlasConfig
from memory_core.engine.model import MemoryNode, RetrievalHit
from memory_core.errors import AtlasError, InputError, NotFoundError
from memory_core.harness.session_format import Conversation, Turn, load_conversation

SAMPLE_DIR_ENV = "ATLAS_SAMPLE_DIR"
SESSION_PREFIX = "demo"
DEFAULT_SPEED = 2.0
"""Turns per second while playing."""
MAX_SPEED = 50.0
DEFAULT_TIME_SCALE = 120.0
"""Atlas-clock seconds per conversation second: a 30 s gap between turns becomes one hour."""
MAX_GAP_HOURS = 24.0
"""Longest clock jump per turn, so a week between sessions fades rather than wipes."""
RECALL_TOP_K = 3
DEFAULT_CONVERSATION = "trip-approval"
DEMO_PRESET = "demo"
DEMO_CONFIG = AtlasConfig(decay_strategy="power", decay_rate=0.2, evict_threshold=0.3)
"""Chosen so the demo shows forgetting and keeps what a person would: over trip-approval's
51 turns (about 110 atlas hours at the default clock speed) weights fall visibly and
spread by importance, and a year skipped on the Live graph page leaves the session
summaries and the trip's own turns (the cap, the dates, Munich) while the pleasantries
go. Exponential decay (5 %/h, the demo's earlier preset) forgot everything within that
year, and the ended sessions' working tiers kept exactly their last lines ("Thanks,
that's everything") — issue #25. The shipped defaults (``tuned``) keep nearly everything
over those hours: right for agents, slow to watch."""
LIVE_PRESETS: dict[str, AtlasConfig] = {DEMO_PRESET: DEMO_CONFIG, **PRESETS}
"""Presets the live atlas can switch to; ``tuned`` is the shipped defaults."""


def preset_description(name: str) -> str:
    """What traffic the preset ``name`` suits, in one line ("" for a custom one)."""
    if name == DEMO_PRESET:
        return (
            "For watching: weights fall visibly within a minute of play; a skipped year keeps "
            "the gist and drops the small talk."
        )
    return PRESET_DESCRIPTIONS.get(name, "")


class AdvancingClock(Protocol):
    """A clock the player may move forward (``ManualClock`` or the live fast-forward clock)."""

    def now(self) -> float: ...

    def advance(self, seconds: float) -> float: ...


class PlayerState(StrEnum):
    EMPTY = "empty"
    READY = "ready"
    PLAYING = "playing"
    PAUSED = "paused"
    FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class StepResult:
    """What one turn did to the atlas."""

    turn: Turn
    session_id: str
    node_id: str
    """The memory the turn is stored as; "" when it was not stored (a forget request)."""
    recalled: tuple[tuple[str, float], ...]
    """(memory id, retrieval score) of what the turn brought back."""
    evicted: int
    session_ended: bool
    rules: tuple[str, ...] = ()
    """What the orchestrator's rules did on this turn ("episode created from 50 memories")."""


@dataclass(frozen=True, slots=True)
class PlayerStatus:
    """One consistent read of the player for the page."""

    state: PlayerState
    conversation_id: str | None
    title: str
    position: int
    total: int
    speed: float
    time_scale: float
    last: StepResult | None
    error: str | None

    @property
    def progress(self) -> float:
        return self.position / self.total if self.total else 0.0


def preset_summary(config: AtlasConfig) -> str:
    """The forgetting part of ``config`` in one line, for the page that uses it."""
    curve = {
        "linear": f"linear decay, {config.decay_rate:g} weight/h",
        "exponential": f"exponential decay, {config.decay_rate:.0%}/h",
        "ebbinghaus": f"Ebbinghaus decay, stability {config.stability_hours:g} h",
        "power": f"power-law decay, exponent {config.decay_rate:g}",
    }[config.decay_strategy]
    return (
        f"{curve}; evicted below weight {config.evict_threshold:g}, isolated memories below "
        f"{config.orphan_threshold:g} after {config.orphan_grace_hours:g} h"
    )


def picker_value(status: PlayerStatus, names: list[str]) -> str:
    """What the conversation picker shows: the conversation the shared player holds, else
    the default one (a fresh tab must not show one replay and play another)."""
    if status.conversation_id in names:
        return str(status.conversation_id)
    return DEFAULT_CONVERSATION if DEFAULT_CONVERSATION in names else names[0]


def sample_dir() -> Path:
    """``$ATLAS_SAMPLE_DIR``, else ``./sample_sessions``, else the one next to the package."""
    configured = os.environ.get(SAMPLE_DIR_ENV)
    if configured:
        return Path(configured)
    local = Path("sample_sessions")
    if local.is_dir():
        return local
    return Path(__file__).resolve().parents[2] / "sample_sessions"


def sample_files(folder: Path | None = None) -> dict[str, Path]:
    """Sample conversation files by stem, sorted; empty when the folder is missing."""
    folder = folder or sample_dir()
    if not folder.is_dir():
        return {}
    return {p.stem: p for p in sorted(folder.glob("*.json")) if p.is_file()}


def demo_session_id(conversation: Conversation, session_id: str) -> str:
    return f"{SESSION_PREFIX}:{conversation.id}:{session_id}"


class DemoPlayer:
    """Play, pause, step, change speed and reset a replay into ``atlas``."""

    def __init__(
        self,
        atlas: ElasticMemoryAtlas,
        clock: AdvancingClock,
        *,
        speed: float = DEFAULT_SPEED,
        time_scale: float = DEFAULT_TIME_SCALE,
        on_error: Callable[[BaseException], None] | None = None,
        on_purge: Callable[[frozenset[str]], None] | None = None,
    ) -> None:
        self._atlas = atlas
        self.rules = Orchestrator(atlas)
        """The live atlas's orchestrator, shared with the playground's exchanges."""
        self._loop: TurnLoop[RetrievalHit, MemoryNode] = TurnLoop(
            AtlasMemory(atlas, cross_session=True), rules=self.rules
        )
        self._clock = clock
        self._cond = threading.Condition()
        self._step_lock = threading.Lock()
        self._conversation: Conversation | None = None
        self._turns: list[tuple[Turn, str, bool]] = []
        self._position = 0
        self._state = PlayerState.EMPTY
        self._speed = _check_range("speed", speed, 0.1, MAX_SPEED)
        self._time_scale = _check_range("time_scale", time_scale, 0.0, 100_000.0)
        self._last: StepResult | None = None
        self._error: str | None = None
        self._thread: threading.Thread | None = None
        self._on_error = on_error
        self._on_purge = on_purge
        """Told which sessions a replay starting over removed (the live buffer drops them)."""

    # -- control -------------------------------------------------------------------
    def load(self, conversation: Conversation | str | Path) -> None:
        """Stop, remove the previous demo's memories and cue ``conversation``."""
        if not isinstance(conversation, Conversation):
            conversation = load_conversation(conversation)
        self._stop_thread()
        with self._step_lock:
            self._purge()
            turns: list[tuple[Turn, str, bool]] = []
            for session in conversation.sessions:
                sid = demo_session_id(conversation, session.id)
                for i, turn in enumerate(session.turns):
                    turns.append((turn, sid, i == len(session.turns) - 1))
            with self._cond:
                self._conversation = conversation
                self._turns = turns
                self._position = 0
                self._last = None
                self._error = None
                self._state = PlayerState.READY if turns else PlayerState.FINISHED

    def play(self) -> None:
        """Start (or resume) playback on the background thread; no-op when playing."""
        with self._cond:
            if self._state not in (PlayerState.READY, PlayerState.PAUSED):
                return
            self._state = PlayerState.PLAYING
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="atlas-demo", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def pause(self) -> None:
        with self._cond:
            if self._state is PlayerState.PLAYING:
                self._state = PlayerState.PAUSED
                self._cond.notify_all()

    def step(self) -> StepResult | None:
        """Play exactly one turn now (pauses playback first); None when nothing is left."""
        self.pause()
        return self._advance()

    def reset(self) -> None:
        """Back to the first turn with the demo's memories removed."""
        with self._cond:
            conversation = self._conversation
        if conversation is None:
            self._stop_thread()
            return
        self.load(conversation)

    def set_speed(self, turns_per_second: float) -> None:
        value = _check_range("speed", turns_per_second, 0.1, MAX_SPEED)
        with self._cond:
            self._speed = value
            self._cond.notify_all()

    def set_time_scale(self, scale: float) -> None:
        value = _check_range("time_scale", scale, 0.0, 100_000.0)
        with self._cond:
            self._time_scale = value

    def close(self) -> None:
        """Stop the thread (used at shutdown and by tests)."""
        self._stop_thread()

    def status(self) -> PlayerStatus:
        with self._cond:
            conv = self._conversation
            return PlayerStatus(
                state=self._state,
                conversation_id=conv.id if conv else None,
                title=conv.title if conv else "",
                position=self._position,
                total=len(self._turns),
                speed=self._speed,
                time_scale=self._time_scale,
                last=self._last,
                error=self._error,
            )

    def wait_until_idle(self, timeout: float) -> bool:
        """Block until playback is no longer running (for tests); True if it stopped."""
        with self._cond:
            return self._cond.wait_for(lambda: self._state is not PlayerState.PLAYING, timeout)

    # -- internals -----------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cond:
                if self._state is not PlayerState.PLAYING:
                    return
            self._advance()
            with self._cond:
                if self._state is not PlayerState.PLAYING:
                    return
                self._cond.wait(1.0 / self._speed)

    def _advance(self) -> StepResult | None:
        with self._step_lock:
            with self._cond:
                if self._position >= len(self._turns):
                    return None
                turn, sid, last_of_session = self._turns[self._position]
                previous = self._turns[self._position - 1][0] if self._position else None
                scale = self._time_scale
            try:
                result = self._play_turn(turn, sid, last_of_session, previous, scale)
            except AtlasError as exc:
                with self._cond:
                    self._error = f"turn {turn.id}: {exc}"
                    self._state = PlayerState.PAUSED
                    self._cond.notify_all()
                if self._on_error is not None:
                    self._on_error(exc)
                return None
            with self._cond:
                self._position += 1
                self._last = result
                if self._position >= len(self._turns):
                    self._state = PlayerState.FINISHED
                self._cond.notify_all()
            return result

    def _play_turn(
        self, turn: Turn, sid: str, last_of_session: bool, previous: Turn | None, scale: float
    ) -> StepResult:
        if previous is not None:
            gap = max(0.0, turn.at - previous.at) * scale
            self._clock.advance(min(gap, MAX_GAP_HOURS * 3600.0))
        atlas, loop = self._atlas, self._loop
        metadata: dict[str, str] = {"speaker": turn.speaker, "turn": turn.id}
        if self._conversation is not None:
            metadata |= user_metadata(played_user("demo", self._conversation.id))
        played = loop.turn(
            turn.text,
            session_id=sid,
            top_k=RECALL_TOP_K,
            recall=turn.speaker == "user",
            metadata=metadata,
        )
        done, hits = played.done, played.hits
        evicted = sum(atlas.decay().values())
        if last_of_session and sid in atlas.sessions():
            atlas.end_session(sid)
        messages = [e.message for e in done.rules]
        if done.forget is not None:
            messages.append(done.forget.message)
        return StepResult(
            turn,
            sid,
            done.stored.id if done.stored is not None else "",
            tuple((h.node.id, h.score) for h in hits),
            evicted,
            last_of_session,
            tuple(messages),
        )

    def _purge(self) -> None:
        conv = self._conversation
        if conv is None:
            return
        ids = frozenset(demo_session_id(conv, session.id) for session in conv.sessions)
        for session_id in ids:
            try:
                self._atlas.end_session(session_id, mode="purge")
            except NotFoundError:
                continue
        if self._on_purge is not None:
            self._on_purge(ids)

    def _stop_thread(self) -> None:
        with self._cond:
            if self._state is PlayerState.PLAYING:
                self._state = PlayerState.PAUSED
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=30.0)


def _check_range(name: str, value: float, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(name, f"must be a number in [{low:g}, {high:g}], got {value!r}")
    number = float(value)
    if not low <= number <= high:
        raise InputError(name, f"must be in [{low:g}, {high:g}], got {number:g}")
    return number
