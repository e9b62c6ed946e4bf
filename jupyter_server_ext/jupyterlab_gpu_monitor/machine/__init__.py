"""The machine beside the GPUs: CPU, memory, disk and network of the host or of the container
the server runs in (``cgroup``), and what each kernel uses of them."""
