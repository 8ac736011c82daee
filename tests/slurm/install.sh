#!/usr/bin/env bash
# Install a single-node SLURM (controller, node daemon, client tools) and munge from Debian.
# Idempotent: does nothing when every program is already there. Needs root (or sudo).
# Exit 75 (EX_TEMPFAIL) when apt cannot fetch or install the packages (no network, no mirror):
# tests/test_slurm.py skips on that code, and fails on any other error.
set -euo pipefail
export PATH="$PATH:/usr/sbin:/sbin"

need=()
for prog in slurmctld slurmd sbatch munged mungekey; do
    command -v "$prog" >/dev/null 2>&1 || need+=("$prog")
done
if [ ${#need[@]} -eq 0 ]; then
    echo "install.sh: slurm and munge already installed"
    exit 0
fi
echo "install.sh: missing ${need[*]}; installing slurmctld slurmd slurm-client munge"

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "install.sh: need root or sudo" >&2; exit 1; }
    SUDO="sudo -n"
fi
export DEBIAN_FRONTEND=noninteractive
# policy-rc.d: keep the packages' postinst from starting the services (start.sh does it, with
# its own configuration); removed again on exit when this script put it there.
POLICY=/usr/sbin/policy-rc.d
if [ ! -e "$POLICY" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$POLICY" >/dev/null
    $SUDO chmod +x "$POLICY"
    trap '$SUDO rm -f "$POLICY"' EXIT
fi
if ! $SUDO apt-get -o DPkg::Lock::Timeout=300 update -qq; then
    echo "install.sh: apt-get update failed (no network or no package mirror?)" >&2
    exit 75
fi
if ! $SUDO apt-get -o DPkg::Lock::Timeout=300 install -y -qq --no-install-recommends \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
        slurmctld slurmd slurm-client munge; then
    echo "install.sh: apt-get install of slurmctld slurmd slurm-client munge failed" >&2
    exit 75
fi
for prog in slurmctld slurmd sbatch munged mungekey; do
    command -v "$prog" >/dev/null 2>&1 || { echo "install.sh: $prog still missing" >&2; exit 1; }
done
echo "install.sh: installed"
