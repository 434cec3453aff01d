"""Generated preset topologies (see dgxstudio.model.presets)."""
