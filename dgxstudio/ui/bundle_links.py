"""The single links a collapsed system's bundle stands for, reached one by one.

A bundle (the dashed line from a collapsed system's box) is one item for all its links: they could be
deleted together from its menu, but not selected, inspected or edited one at a time. As a system's
box opens on a double-click, a double-click on a bundle opens the collapsed systems at its ends, its
links drawn one by one; its menu lists its links, and choosing one opens the systems around its two
ends and selects it (in the Inspector, ready to edit or delete). Opening is one undo step.
"""

from __future__ import annotations

from PySide6.QtWidgets import QMenu

from ..model.layout import hidden_by_collapsed
from ..model.names import ends_words

MENU_MOST = 24   # links listed in a bundle's menu; beyond, it says how to see the rest


def open_around(scene, link_ids: list[str]) -> list[str]:
    """Open every collapsed group that hides an end of these links (outer ones first; one undo step)
    and return the groups opened, in order."""
    topo = scene.topology
    opened: list[str] = []
    stack = scene.document.undo_stack
    began = False
    for _ in range(64):   # (each round opens the outermost groups still closed; nesting is shallow)
        hidden = hidden_by_collapsed(topo)
        closed = list(dict.fromkeys(hidden[e] for lid in link_ids if lid in topo.links
                                    for e in (topo.links[lid].a, topo.links[lid].b) if e in hidden))
        if not closed:
            break
        if not began:
            names = ", ".join(topo.groups[g].name for g in closed)
            stack.beginMacro(f"open {names}")
            began = True
        for gid in closed:
            scene.toggle_group(gid)
            opened.append(gid)
    if began:
        stack.endMacro()
    return opened


def select_link(scene, view, link_id: str) -> None:
    """Open the systems around a link's ends, select it and zoom to it (at most to actual size)."""
    opened = open_around(scene, [link_id])
    scene.select_ids([link_id])
    # the status bar says what the choice did (it stayed blank while systems opened out of sight)
    where = f"; opened {', '.join(scene.topology.groups[g].name for g in opened)}" if opened else ""
    scene.statusMessage.emit(f"Selected link {link_id} ({link_words(scene.topology, link_id)}){where}")
    item = scene.items_by_link.get(link_id)
    if item is not None and view is not None:
        view.fit_rect(item.sceneBoundingRect().adjusted(-120, -120, 120, 120), at_most=1.0)


def link_words(topo, link_id: str) -> str:
    lk = topo.links[link_id]
    lt = topo.link_type_of(lk)
    return f"{ends_words(topo, lk.a, lk.b, '—')}: {lt.label if lt else lk.type} x{lk.count}"


def links_menu(parent: QMenu, scene, view, link_ids: list[str]) -> QMenu:
    """The bundle's 'Its links' submenu: one entry per link (selecting it), the first MENU_MOST."""
    n = len(link_ids)
    menu = parent.addMenu(f"Its {n:,} link{'s' if n > 1 else ''}")
    topo = scene.topology
    for lid in link_ids[:MENU_MOST]:
        menu.addAction(link_words(topo, lid), lambda lid=lid: select_link(scene, view, lid))
    if n > MENU_MOST:
        menu.addAction(f"… {n - MENU_MOST:,} more: double-click the bundle to open its ends").setEnabled(False)
    return menu
