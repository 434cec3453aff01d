"""Files other tools read (GraphML, DOT, NCCL XML, ns-3, ASTRA-sim) and reports (HTML; PDF via Qt)."""
