"""Pasting or duplicating the same thing again lands beside the last copy, not on top of it.

Ctrl+V twice (the mouse off the canvas, or not moved) or Ctrl+D twice on the same original put the
second copy exactly over the first: the user saw one copy where there were two, and the hidden one
went into the file, the findings and every run. As draw.io and Visio do, a copy that would land on the
very spot of an earlier one still standing there is shifted by one step more, as often as needed.
With the mouse off the canvas a paste starts from the copied places: a cut goes back where it was
(it went 60 units away), a copy lands one step beside its original.
"""

from __future__ import annotations

STEP = 60.0        # each further copy, right and down (scene units), as far as the first paste's offset
REMEMBERED = 4096  # pasted devices whose spots are kept (the oldest forgotten first)


def _spot(xy) -> tuple[float, float]:
    return (round(float(xy[0]), 1), round(float(xy[1]), 1))


class PasteSpots:
    """Where the copies of this window's pastes and duplicates were placed (devices, group boxes)."""

    def __init__(self) -> None:
        self._spots: dict[tuple[float, float], str] = {}

    def _taken(self, topo, spot: tuple[float, float]) -> bool:
        item = self._spots.get(spot)   # a pasted device or collapsed group, if it still stands there
        return item is not None and item in topo.layout.positions and _spot(topo.layout.positions[item]) == spot

    def offset(self, topo, clip: dict, offset: tuple[float, float]) -> tuple[float, float]:
        """``offset``, or that shifted by steps until no copy lands on an earlier copy's spot or on its
        original still standing where it was copied from (so a cut pasted with ``(0, 0)`` goes back in
        place, and a copy beside its original)."""
        places = []
        for original, xy in clip.get("layout", {}).get("positions", {}).items():
            try:
                places.append((original, float(xy[0]), float(xy[1])))
            except (TypeError, ValueError, IndexError, KeyError):   # the paste itself names what is wrong
                continue

        def taken(original: str, spot: tuple[float, float]) -> bool:
            return self._taken(topo, spot) or (original in topo.layout.positions
                                               and _spot(topo.layout.positions[original]) == spot)
        for _ in range(1000):
            if not any(taken(o, _spot((x + offset[0], y + offset[1]))) for o, x, y in places):
                break
            offset = (offset[0] + STEP, offset[1] + STEP)
        return offset

    def remember(self, topo, ids) -> None:
        for d in ids:
            xy = topo.layout.positions.get(d)
            if xy is not None:
                self._spots[_spot(xy)] = d
        while len(self._spots) > REMEMBERED:
            del self._spots[next(iter(self._spots))]
