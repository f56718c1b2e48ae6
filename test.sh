#!/usr/bin/env bash
# The tests, Rust and Python (what CI runs): the workspace's cargo tests, then the Python
# package built from this checkout into a virtualenv and its pytest suite, which opens the
# HTML report in headless Chromium (Debian's `chromium`) and runs a sweep on a local Ray
# cluster. The virtualenv (target/venv) gets maturin, pytest, pandas and ray from PyPI.
set -euo pipefail
cd "$(dirname "$0")"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

# One profile for everything the tests build: `checked` (Cargo.toml) optimises as release
# and keeps debug assertions on, so the model's vm_bug_on!/vm_warn_on! checks run; the
# cargo tests, the CLI that pytest calls and the wheel share its dependencies.
profile=checked
cargo test --profile "$profile" --workspace --exclude reclaimsim-py

venv="${RECLAIMSIM_VENV:-$CARGO_TARGET_DIR/venv}"
if [ ! -x "$venv/bin/python" ]; then
    # Packages already installed for this python are used as they are.
    python3 -m venv --system-site-packages "$venv"
fi
py="$venv/bin/python"
"$py" -m pip install -q --disable-pip-version-check "maturin>=1.5,<2" "pytest>=7" \
    "pandas>=1.5" "ray>=2.5"
# maturin's script: the venv's, or (already installed for python3) the one on PATH.
maturin="$venv/bin/maturin"
[ -x "$maturin" ] || maturin="$(command -v maturin)"
rm -rf "$CARGO_TARGET_DIR/wheels"
"$maturin" build --profile "$profile" -q -i "$py" -m crates/reclaimsim-py/Cargo.toml \
    -o "$CARGO_TARGET_DIR/wheels"
"$py" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
    "$CARGO_TARGET_DIR"/wheels/reclaimsim-*.whl

# The CLI that cargo test built, for `sweep --ray` (which runs this venv's python); the
# report's screenshot lands in target/report-artifacts.
export RECLAIMSIM_BIN="$CARGO_TARGET_DIR/$profile/reclaimsim"
export RECLAIMSIM_PYTHON="$py"
export RECLAIMSIM_ARTIFACTS="$CARGO_TARGET_DIR/report-artifacts"
export PATH="$venv/bin:$PATH"
"$py" -m pytest crates/reclaimsim-py/tests -q -p no:cacheprovider
