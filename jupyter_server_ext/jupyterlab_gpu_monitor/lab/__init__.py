"""The lab: every GPU server of a lab in one view, through the Prometheus that scrapes them all
(``GpuMonitor.lab_prometheus_url``)."""
