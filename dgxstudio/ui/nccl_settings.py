"""The Collective tab's NCCL settings: the switches `dgxstudio simulate` takes as --no-nvls, --pxn and
--gpus-per-thread, named as NCCL users know them (NCCL's environment variables, nccl-tests' -g).

They go into the run's SimOptions (a single run and a sweep alike) and, where they differ from the
defaults, into its label, so the runs table tells apart runs that differ only by them. A choice the
settings rule out (nvls with NVLink SHARP off) is refused by the simulator, as on the command line.
"""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QSpinBox, QWidget


class NcclSettings(QWidget):
    """NVLink SHARP on or off, PXN on or off, GPUs per thread; defaults as `simulate` without options."""

    def __init__(self):
        super().__init__()
        self.nvls = QCheckBox("NVLS")
        self.nvls.setChecked(True)
        self.nvls.setToolTip(
            "NVLink SHARP: the NVSwitches reduce in the switch (NCCL's nvls and nvls-tree algorithms, NVSwitch "
            "gen3 and later), used where the NVSwitches can. Unticked, as NCCL_NVLS_ENABLE=0 (simulate --no-nvls): "
            "NCCL sets up no NVLink SHARP, auto chooses among the ring and the tree, and asking for nvls or "
            "nvls-tree is refused")
        # NCCL's own default is PXN on (src/graph/paths.cc: NCCL_PARAM(PxnDisable, "PXN_DISABLE", 0));
        # the simulator's is off, as `simulate` without --pxn, and this box follows the simulator
        self.pxn = QCheckBox("PXN")
        self.pxn.setToolTip(
            "PXN: traffic to another system leaves through the NIC on the destination GPU's rail, reached over "
            "NVLink through the GPU beside that NIC (simulate --pxn). Unticked, as NCCL_PXN_DISABLE=1: through "
            "the NIC closest to the sending GPU. NCCL itself has PXN on unless NCCL_PXN_DISABLE=1 is set")
        self.gpus_per_thread = QSpinBox()
        self.gpus_per_thread.setRange(1, 1024)   # as `simulate --gpus-per-thread` takes
        self.gpus_per_thread.setPrefix("-g ")
        self.gpus_per_thread.setToolTip(
            "GPUs one thread drives, as nccl-tests -g N (simulate --gpus-per-thread N): their kernels launch in "
            "turn and each call pays N-1 more launches; 1 (default): a process per GPU, as mpirun or torchrun "
            "run it. At most the GPUs of one system")
        # one row across the form (the dock keeps its width and the window its 1280x768 fit): short names on
        # the boxes, NCCL's variables in their tooltips
        title = QLabel("NCCL")
        title.setToolTip("NCCL's settings for the run, as NCCL_NVLS_ENABLE, NCCL_PXN_DISABLE and nccl-tests' -g set "
                         "them; each box's tooltip says what it does")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        for w in (title, self.nvls, self.pxn, self.gpus_per_thread):
            row.addWidget(w)
        row.addStretch(1)   # side by side in a wide dock too, not spread across it

    def options(self) -> dict:
        """The SimOptions fields these settings set."""
        return {"nvls_enable": self.nvls.isChecked(), "pxn": self.pxn.isChecked(),
                "gpus_per_thread": self.gpus_per_thread.value()}

    def words(self) -> str:
        """What the run's label adds: the settings that differ from the defaults (", NVLS off, PXN on, -g 8")."""
        g = self.gpus_per_thread.value()
        said = (["NVLS off"] if not self.nvls.isChecked() else []) + (["PXN on"] if self.pxn.isChecked() else []) \
            + ([f"-g {g}"] if g > 1 else [])
        return "".join(f", {w}" for w in said)
