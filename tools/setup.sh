#!/usr/bin/env bash
# Installs what cascade needs to build and test on Debian 12, idempotently:
# packages already present are not reinstalled and apt is not touched at all
# when nothing is missing. Run as root (or with sudo available).
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libzmq3-dev cppzmq-dev libmsgpack-cxx-dev libsqlite3-dev libspdlog-dev
  libgtest-dev libgmock-dev libcli11-dev nlohmann-json3-dev libbenchmark-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
