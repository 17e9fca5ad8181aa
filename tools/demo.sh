#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the tier demo network
# (deploy/tiers-demo.sh; the single-hub demo is deploy/local-demo.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh
exec bash deploy/tiers-demo.sh build
