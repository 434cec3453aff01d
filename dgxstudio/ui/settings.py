"""Where the window keeps its layout and recent files."""

from __future__ import annotations

from PySide6.QtCore import QSettings

from ..model.catalog import user_config_dir

MAX_RECENT = 8
# Bump when the docks change: a dock layout saved by another version of the window is ignored
# rather than restored into a mangled layout.
WINDOW_STATE_VERSION = 2


def settings() -> QSettings:
    """Window layout and recent files, kept beside the user's catalog (tests point that elsewhere)."""
    folder = user_config_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat)

