#!/usr/bin/env bash
# Build the virtualenv in which benchmarks/google_runners.py runs Google's dpsynth
# (AIM-GDP, SWIFT, MST; github google/dpsynth) as a reference peer.
#
# Google's dpsynth needs Python >= 3.12 and its pyproject pins two dependencies to
# git repositories, which pip cannot reach here. Obtain both repositories first (a
# clone, or a bare/mirror git directory: its HEAD is exported):
#   - google/dpsynth
#   - google/differential-privacy (for python/dp_accounting: the package index's
#     dp-accounting 0.6.0 makes dpsynth's `calibrate` fail with a division by zero)
# Then:
#
#   bash benchmarks/setup_peer_env.sh VENV DPSYNTH_REPO DIFFERENTIAL_PRIVACY_REPO [PYTHON]
#
# e.g. bash benchmarks/setup_peer_env.sh /work/peer-venv \
#        /work/.mirror/google+dpsynth/repo /work/.mirror/google+differential-privacy/repo \
#        /root/.pyenv/versions/3.12.1/bin/python
#
# PYTHON defaults to `python3.12` on PATH. Everything else comes from the package
# index with the pins of benchmarks/requirements-google.txt. The benchmark then runs
# with DPSYNTH_GOOGLE_PYTHON=VENV/bin/python (see benchmarks/README.md).
#
# As root, the script also raises the kernel's per-process memory-map limit
# (vm.max_map_count): every AIM-GDP round compiles new JAX/XLA code, each
# executable holds its own mappings, and at the default 65530 a run dies after
# about 30 rounds ("LLVM ERROR: out of memory" / "Cannot allocate memory"). Without
# root, run `sysctl -w vm.max_map_count=1048576` yourself (or the runner's
# max-rounds cap keeps a run short of the limit; see google_runners.py).
set -euo pipefail

if [[ $# -lt 3 ]]; then
    sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
venv=$1
dpsynth_repo=$2
dp_repo=$3
python=${4:-python3.12}
here=$(cd "$(dirname "$0")" && pwd)
requirements=$here/requirements-google.txt

"$python" -c 'import sys; assert sys.version_info >= (3, 12), "Google dpsynth needs Python >= 3.12"'

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# export_repo REPO DEST [PATH]: copy PATH (default: everything) of a git repository's
# HEAD (a clone or a bare/mirror git directory), or of a plain directory.
export_repo() {
    local repo=$1 dest=$2 path=${3:-.}
    mkdir -p "$dest"
    if git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
        git -C "$repo" archive HEAD "$path" | tar -x -C "$dest"
        echo "$repo: commit $(git -C "$repo" rev-parse HEAD)"
    else
        mkdir -p "$dest/$path"
        cp -a "$repo/$path"/. "$dest/$path"/
        echo "$repo: not a git repository, copied as is"
    fi
}
export_repo "$dpsynth_repo" "$work/dpsynth"
export_repo "$dp_repo" "$work/differential-privacy" python/dp_accounting
[[ -f $work/dpsynth/pyproject.toml && -d $work/dpsynth/dpsynth ]] ||
    { echo "$dpsynth_repo is not google/dpsynth" >&2; exit 1; }
[[ -f $work/differential-privacy/python/dp_accounting/setup.py ]] ||
    { echo "$dp_repo has no python/dp_accounting" >&2; exit 1; }

"$python" -m venv "$venv"
pip=("$venv/bin/python" -m pip install --disable-pip-version-check)
"${pip[@]}" --upgrade pip
"${pip[@]}" -r "$requirements"
# dp_accounting from source, with its own (compatible) dependencies
"${pip[@]}" "$work/differential-privacy/python/dp_accounting"
# dpsynth itself: its git-URL dependencies are installed above
"${pip[@]}" --no-deps "$work/dpsynth"

"$venv/bin/python" - <<'EOF'
import sys
sys.path = [p for p in sys.path if p not in ("", ".")]
import dpsynth, dp_accounting, jax, mbi
from importlib import metadata
print("google dpsynth", dpsynth.__version__, "| jax", jax.__version__,
      "| mbi", metadata.version("mbi"), "| dp_accounting", metadata.version("dp-accounting"))
EOF

if [[ $(id -u) == 0 ]]; then
    current=$(cat /proc/sys/vm/max_map_count)
    if (( current < 1048576 )); then
        sysctl -w vm.max_map_count=1048576 || echo "could not raise vm.max_map_count ($current)" >&2
    fi
else
    echo "not root: vm.max_map_count is $(cat /proc/sys/vm/max_map_count); raise it to 1048576 for long AIM-GDP runs" >&2
fi
echo "done: export DPSYNTH_GOOGLE_PYTHON=$venv/bin/python"
