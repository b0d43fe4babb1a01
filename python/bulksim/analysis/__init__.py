"""Metrics computed from runs' stats, shared by the reproductions and the CLI: multi-programmed
performance and service interruptions (``metrics``), CMMP's speedups and hybrid-memory rows
(``cmmp_metrics``), the peak power of refresh (``refresh_power``), and the note on why
RowClone's FPM could not copy a run's pages (``fpm_note``)."""
