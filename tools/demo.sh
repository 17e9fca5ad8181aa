#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the local demo network.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh
exec bash deploy/local-demo.sh build
