#!/usr/bin/env bash
# `make test` as a user without root (`make test-nonroot`): the whole suite, where perf restricts
# the user to user mode (perf_event_paranoid >= 2: every event printed with ':u', the scheduler's
# events not counted) and the tests that need root skip with their reason.
#
# Run by a user without root: that user's `make test`. Run as root: as NONROOT_USER (created when
# missing), in a copy of this clone it owns (the clone's commit, then the working tree's tracked
# and new files over it: what a commit of it would hold), with a venv it can read. The clone's
# own venv is of no use there (its Python may live under /root, its editable install points at
# this clone), so one is built by root, from uv's cache, on a Python that user can run, kept
# under NONROOT_CACHE keyed on pyproject.toml's hash (as test-lowest's), perfcast installed
# editable from the copy at each run. The copy is removed at the end.
#
# Arguments: the make targets run (default: test). Environment: NONROOT_USER (default
# perfcast-test), NONROOT_CACHE (default /var/tmp/perfcast-nonroot), UV (uv, default
# .venv/bin/uv), TEST_WORKERS (make test's).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
workers=${TEST_WORKERS:-3}
targets=("${@:-test}")
if [ "$(id -u)" != 0 ]; then
  exec make "${targets[@]}" TEST_WORKERS="$workers"
fi

user=${NONROOT_USER:-perfcast-test}
cache=${NONROOT_CACHE:-/var/tmp/perfcast-nonroot}
uv=${UV:-$repo/.venv/bin/uv}
# a clean environment for the user: root's PATH may name folders it cannot enter (/root/...)
clean_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# the host's OpenBLAS settings kept (set where an older OpenBLAS picks a wrong kernel for the
# processor; results may differ in the last digits without them)
blas_env=()
for v in OPENBLAS_CORETYPE OPENBLAS_L2_SIZE; do
  if [ -n "${!v:-}" ]; then blas_env+=("$v=${!v}"); fi
done
as_user() {
  runuser -u "$user" -- env -i HOME="$home" USER="$user" LOGNAME="$user" PATH="$clean_path" \
    LANG=C.UTF-8 "${blas_env[@]}" "$@"
}

if ! id -u "$user" >/dev/null 2>&1; then
  echo "test-nonroot: creating the user $user"
  useradd --create-home --shell /bin/sh "$user"
fi
home=$(getent passwd "$user" | cut -d: -f6)
[ -d "$home" ] || { echo "test-nonroot: $user's home $home does not exist" >&2; exit 1; }

# a Python within pyproject.toml's requires-python that the user can run
python=$(as_user sh -c 'for c in python3.13 python3.12 python3.11 python3; do
  p=$(command -v "$c") && "$p" -c "import sys; assert (3, 11) <= sys.version_info < (3, 14)" \
    2>/dev/null && { echo "$p"; exit 0; }; done; exit 1') || {
  echo "test-nonroot: no Python 3.11 to 3.13 that $user can run on $clean_path" >&2; exit 1; }

venv=$cache/venv-$(sha256sum pyproject.toml | cut -c1-16)-$(basename "$python")
if [ ! -e "$venv/.complete" ]; then
  echo "test-nonroot: building $venv on $python"
  rm -rf "$cache"/venv-*
  mkdir -p "$cache"
  chmod 755 "$cache"
  "$uv" venv -q --python "$python" "$venv"
  # uv too: the tests that build a wheel or a venv take the venv's own
  "$uv" pip install -q --compile-bytecode --python "$venv/bin/python" -r pyproject.toml \
    --extra dev uv
  touch "$venv/.complete"
fi

top=$(mktemp -d "${TMPDIR:-/tmp}/perfcast-nonroot-XXXXXX")
trap 'rm -rf "$top"' EXIT
chmod 755 "$top"
copy=$top/repo
git clone -q --no-hardlinks "$repo" "$copy"
git ls-files -co --exclude-standard -z | while IFS= read -r -d '' f; do
  if [ -f "$f" ] && [ ! -L "$f" ]; then printf '%s\0' "$f"; fi
done | tar -c --null -T - -f - | tar -x -p -f - -C "$copy"
rm -rf "$copy/.venv"
# the development reference data beside the clone, where there is some (its tests skip
# without it), read in place
if [ -d "$repo/../shared" ]; then ln -s "$(cd "$repo/.." && pwd)/shared" "$top/shared"; fi
"$uv" pip install -q --python "$venv/bin/python" --no-deps -e "$copy"
ln -s "$venv" "$copy/.venv"
# the Makefile's venv targets up to date: nothing rebuilt in a venv the user cannot write
touch "$venv/bin/perfcast" "$venv/.dev"
chown -R "$user": "$top"

echo "test-nonroot: make ${targets[*]} as $user ($(as_user id)) in $copy"
as_user make -C "$copy" "${targets[@]}" TEST_WORKERS="$workers"
