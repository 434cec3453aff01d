"""A minimal observer so the UI can follow model changes without the model knowing about Qt."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ModelEvent:
    """What changed: ``kind`` such as ``device_added``; ``ids`` the objects concerned."""

    kind: str
    ids: tuple[str, ...] = ()
    detail: dict = field(default_factory=dict)


class EventEmitter:
    def __init__(self) -> None:
        self._listeners: list[Callable[[ModelEvent], None]] = []
        self._blocked = 0
        self._pending: list[ModelEvent] = []
        self.revision = 0  # counts every event, held ones included: a cached copy is stale once it moves

    def connect(self, callback: Callable[[ModelEvent], None]) -> None:
        if callback not in self._listeners:
            self._listeners.append(callback)

    def disconnect(self, callback: Callable[[ModelEvent], None]) -> None:
        if callback in self._listeners:
            self._listeners.remove(callback)

    def emit(self, event: ModelEvent) -> None:
        self.revision += 1
        if self._blocked:
            self._pending.append(event)
            return
        for cb in list(self._listeners):
            cb(event)

    def batch(self) -> "_Batch":
        """Hold events while a compound edit runs, then send one ``batch`` event listing them."""
        return _Batch(self)


class _Batch:
    def __init__(self, emitter: EventEmitter):
        self.emitter = emitter

    def __enter__(self):
        self.emitter._blocked += 1
        return self

    def __exit__(self, *exc):
        self.emitter._blocked -= 1
        if not self.emitter._blocked and self.emitter._pending:
            events, self.emitter._pending = self.emitter._pending, []
            self.emitter.emit(ModelEvent("batch", detail={"events": events}))
        return False
