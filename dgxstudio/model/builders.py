"""Builders of systems and of clusters of them: one import for both halves.

``systems`` builds one system (DGX-1 to GB200 NVL72); ``fabrics`` puts many on a fat tree.
"""

from .fabrics import (FatTreePlan, _fabric_nics, _network_port, _switch_for, build_fat_tree,  # noqa: F401
                      negotiated_type, plan_fat_tree, set_compute_nics)
from .systems import (DGX1_NVLINK_PAIRS, DGX1_PARTS, DGX1_V100_DOUBLED, SYSTEM_BUILDERS,  # noqa: F401
                      SYSTEM_LABELS, add_dgx1, add_dgx_a100, add_dgx_b200, add_dgx_h100, add_gb200_nvl72,
                      add_hgx_a800, add_pcie_server, build_system, system_facts, system_power_W)
