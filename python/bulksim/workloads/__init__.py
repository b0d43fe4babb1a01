"""Workloads made or changed by the front end: capture of real programs under the bulkcap
Valgrind tool (``capture``), conversion between workload and trace formats (``convert``), and
the copy-engine study's generators (``copy_workloads``). The engine's own generators
(forkbench, synthetic traces, CMMP stand-ins) are reached through ``bulksim.api``."""
