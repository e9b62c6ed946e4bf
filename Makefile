# Two entry points: `make lab` (install, then start JupyterLab) and `make test` (every test).
# Everything installs into .venv; the only system packages are Debian's (chromium for Galata,
# prometheus and promtool for the Prometheus tests).

VENV ?= .venv
BIN := $(abspath $(VENV))/bin
export PATH := $(BIN):$(PATH)

.PHONY: lab try install system-deps kernel-envs test lint test-python test-js test-ui check-install dist check-dist gpu-check-wheels gpu-check-dry bench translations screenshots record-payloads docs

# Options for jupyter lab: make lab ARGS="--port 8899 --ServerApp.root_dir=~/work". As root (our
# machines, containers), jupyter refuses to start without --allow-root.
ARGS ?=
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)
lab: install
	jupyter lab $(ALLOW_ROOT) $(ARGS)

# JupyterLab on a machine without a GPU, its GPUs those of a real 8× V100S server (driver 460.73,
# under load) that the tests' fake nvidia-smi replays from testdata/.
TRY_CAPTURE ?= testdata/nvidia-smi/xml/tesla-v100s-pcie-32gb-x8-driver-460.73.01-v11.xml
try: install
	FAKE_SMI_XML=$(abspath $(TRY_CAPTURE)) jupyter lab $(ALLOW_ROOT) --GpuMonitor.source=nvidia-smi \
	    --GpuMonitor.nvidia_smi_path=$(abspath jupyter_server_ext/tests/fake_nvidia_smi.py) $(ARGS)

install: $(VENV)/.installed

# pip builds the labextension (jlpm install + jlpm build, through hatch-jupyter-builder) and
# compiles the translation catalogues (hatch_build.py).
CATALOGUES := $(wildcard jupyter_server_ext/jupyterlab_gpu_monitor/locale/*/LC_MESSAGES/*.po)
$(VENV)/.installed: pyproject.toml package.json yarn.lock hatch_build.py $(CATALOGUES)
	python3 -m venv $(VENV)
	$(BIN)/pip install --upgrade pip
	@echo "Installing the package and its test tools, and building the frontend inside pip"
	@echo "(jlpm install, then jlpm build: a few minutes the first time, ~600 MB of node_modules)"
	@# The last `develop` wrote install.json into the build folder, which the wheel maps whole
	@# beside install.json itself: a second install would add it twice and fail.
	rm -f jupyter_server_ext/jupyterlab_gpu_monitor/labextension/install.json
	$(BIN)/pip install -e ".[test,docs]"
	$(BIN)/jupyter-builder develop --overwrite .
	touch $@

# Kernels in environments of their own, for the probe tests: one without torch, one with
# PyTorch's CPU build (and numpy, for the reproducibility cell's Galata tests). The CPU build
# comes from PyTorch's CPU index (PyPI's Linux torch is the CUDA build, with 3 GB of CUDA
# wheels); an extra index, so that a CPU wheel in pip's find-links (a mirror, a machine without
# network) still serves where that index cannot be reached: `make kernel-envs TORCH_INDEX=URL`.
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu
KERNEL_ENVS := $(abspath .kernel-envs)
kernel-envs: $(KERNEL_ENVS)/plain/.ready $(KERNEL_ENVS)/torch-cpu/.ready $(KERNEL_ENVS)/torch-cpu/.numpy

$(KERNEL_ENVS)/plain/.ready:
	python3 -m venv $(KERNEL_ENVS)/plain
	$(KERNEL_ENVS)/plain/bin/pip install ipykernel
	touch $@

$(KERNEL_ENVS)/torch-cpu/.ready:
	python3 -m venv $(KERNEL_ENVS)/torch-cpu
	$(KERNEL_ENVS)/torch-cpu/bin/pip install ipykernel
	$(KERNEL_ENVS)/torch-cpu/bin/pip install --extra-index-url $(TORCH_INDEX) torch==2.13.0
	touch $@

$(KERNEL_ENVS)/torch-cpu/.numpy: $(KERNEL_ENVS)/torch-cpu/.ready
	$(KERNEL_ENVS)/torch-cpu/bin/pip install numpy
	touch $@

# Debian's Chromium for the Galata tests (never a browser download) with a Chinese font for the
# zh_CN ones, and Debian's Prometheus (with promtool) that the Prometheus tests start on loopback.
system-deps:
	@command -v chromium >/dev/null || { apt-get update && apt-get install -y chromium; }
	@fc-list :lang=zh | grep -q . || { apt-get update && apt-get install -y fonts-wqy-microhei; }
	@command -v prometheus >/dev/null || { apt-get update && apt-get install -y prometheus; }

test: install system-deps lint docs test-python test-js check-install check-dist test-ui

# Every string of the code in every catalogue, translated (scripts/translations.py check).
lint: install
	jlpm lint:check
	jlpm tsc --noEmit
	ruff check jupyter_server_ext bench scripts hatch_build.py
	ruff format --check jupyter_server_ext bench scripts hatch_build.py
	python scripts/translations.py check
	python scripts/references.py --check
	python scripts/readings.py --check

# The documentation site (docs/), as CI builds it: warnings are errors, references nitpicky, and
# nothing is fetched from the network. Its references are written by scripts/references.py.
docs: install
	sphinx-build -W --keep-going -n -q -b html docs docs/_build/html

# After a change to the strings: the .pot, and each .po merged with it (then translate what is
# new, and `make install` compiles them).
translations: install
	python scripts/translations.py update

test-python: install kernel-envs
	GPU_MONITOR_KERNEL_ENVS=$(KERNEL_ENVS) python -m pytest

test-js: install
	jlpm test

# Both halves of the extension enabled and OK in the environment whose bin/ is $(1).
define check_enabled
	$(1)/jupyter server extension list 2>&1 | grep -E "jupyterlab_gpu_monitor .*OK"
	$(1)/jupyter labextension list 2>&1 | grep -E "jupyterlab-gpu-monitor .*enabled.*OK"
endef

# Both halves enabled; and a second `pip install .` after a change in src/ installs the change
# (in a copy of the checkout), while a third without a change does not build again.
check-install: install
	$(call check_enabled,$(BIN))
	python scripts/check_reinstall.py

# Release files in dist/: the sdist, and the wheel built from it, as a release is built. Both
# carry the production frontend (minified, no source maps), built afresh from a clean folder.
dist: install
	rm -rf dist jupyter_server_ext/jupyterlab_gpu_monitor/labextension
	python -m build --outdir dist .

# The release files as a user gets them: no source map in either, and the wheel in a venv of its
# own with only JupyterLab beside it, both halves enabled and OK.
DIST_VENV := $(abspath .dist-venv)
check-dist: dist
	! python -m zipfile -l dist/*.whl | awk '{print $$1}' | grep -E '\.map$$'
	! tar -tzf dist/*.tar.gz | grep -E 'labextension/.*\.map$$'
	rm -rf $(DIST_VENV)
	python3 -m venv $(DIST_VENV)
	$(DIST_VENV)/bin/pip install --quiet dist/*.whl jupyterlab
	$(call check_enabled,$(DIST_VENV)/bin)

test-ui: install system-deps kernel-envs
	cd ui-tests && jlpm install && CI=1 jlpm playwright test

# The README's and the user guide's screenshots (docs/screenshots), from real captures and kernels.
screenshots: install system-deps kernel-envs
	cd ui-tests && jlpm install && README_SCREENSHOTS=1 jlpm playwright test tests/readme.spec.ts

# The kernel payloads the frontend's tests replay (src/__tests__/fixtures), recorded from a real
# server with real kernels reading the fake nvidia-smi: after a change to what the routes answer.
record-payloads: install
	python scripts/record_payloads.py

# scripts/gpu-check: the wheels a GPU machine without network lacks, and every step of the check
# that runs without a GPU (against the fake nvidia-smi).
gpu-check-wheels: install
	python scripts/gpu-check --prepare-wheels .gpu-check-wheels

gpu-check-dry: install kernel-envs
	GPU_MONITOR_KERNEL_ENVS=$(KERNEL_ENVS) python scripts/gpu-check --dry-run build/gpu-check

bench: install
	python bench/startup.py
	python bench/sampler.py
	python bench/join.py
	python bench/kernel_read.py
	python bench/cells.py
	python bench/kernel_history.py
	python bench/machine_read.py
	python bench/envs.py
	python bench/metrics.py
	python bench/lab.py
	python bench/lab_ledger.py
	jlpm build:prod
	node --expose-gc bench/panel.mjs
	python bench/dashboard_tick.py
