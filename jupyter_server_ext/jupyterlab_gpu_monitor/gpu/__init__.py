"""GPU readings: sources (NVML, nvidia-smi), the snapshot model, and the Sampler."""
