"""The kernel side: this server's kernels (``listing``), the GPU processes joined to them
(``processes``, ``join``), what each uses of the machine (``usage``), their figures for the
cells (``cells``), their environment (``env``, ``probe``, ``inspector``), and what the server
does to them (``ready``, ``cache_release``); ``service`` is how the routes reach it."""
