#!/usr/bin/env bash
# Installs the Debian 12 packages that cascade's build, tests, demo, benchmarks
# and packaging use, idempotently: packages already present are not
# reinstalled and apt is not touched at all when nothing is missing. Run as
# root (or with sudo available).
#   --list   print the package names and exit (tools/check_setup.py reads them)
# The list below is the only one: tools/check_setup.py fails the test run when
# the build, a test or a script uses a package that is neither here nor pulled
# in by one that is (nor part of every Debian system).
set -euo pipefail

packages=(
  # Toolchain
  build-essential cmake pkg-config clang-format
  # Libraries the code builds with (CMake packages named in CMakeLists.txt),
  # and those their CMake packages bring: Boost's headers (Boost.Beast's HTTP
  # parser for the agent's HTTP API; msgpack-cxx's target links them too) and
  # fmt (spdlog's)
  libzmq3-dev cppzmq-dev libmsgpack-cxx-dev libboost1.74-dev libsqlite3-dev
  libspdlog-dev libfmt-dev libcli11-dev libtoml11-dev nlohmann-json3-dev
  # The agent's DNS interface (the DNS wire format)
  libldns-dev
  # Tests and benchmarks; a Curve client no one here wrote (tests/security)
  libgtest-dev libgmock-dev libbenchmark-dev python3 python3-zmq python3-msgpack
  # SQLite's shell, for the store-key benchmark (bench/sqlite_keys.sh)
  sqlite3
  # Clients no one here wrote, for the agent's HTTP API and DNS: libcurl (tests
  # and the watcher benchmark), Debian's Consul client, dig
  libcurl4-openssl-dev python3-consul dnsutils
  # Prometheus: promtool lints the metrics text (tests/metrics: `promtool
  # check metrics`); later a real Prometheus server scrapes hub and agent
  prometheus
  # A real browser for the hub's web console (tests/console): headless
  # Chromium, its WebDriver and Debian's Selenium client
  chromium chromium-driver python3-selenium libjpeg62-turbo-dev
  # Sanitizer and fuzz builds (tools/test-sanitized.sh, docs/fuzzing.md): clang,
  # libFuzzer and the ASan/UBSan runtimes (libclang-rt-14-dev, only recommended
  # by clang), llvm-symbolizer for reports with file and line (llvm)
  clang libclang-rt-14-dev llvm
  # Packaging: Debian packages, their checks and the unit checks; adduser runs
  # in the packages' postinst (tests/install), iproute2 brings up the package
  # test's loopback and builds the network namespaces of tests/netns
  dpkg-dev help2man file lintian systemd adduser iproute2
  # tools/fresh-machine-check.sh: a throw-away Debian root
  mmdebstrap git
)

if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

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

# Debian's prometheus package enables and starts a Prometheus server (port
# 9090) where systemd runs; cascade wants only its programs (promtool, and the
# servers its tests start on ports of their own). Stopped when this script
# installed it, never one the machine already had.
if [[ " ${missing[*]} " == *" prometheus "* ]] && [ -d /run/systemd/system ]; then
  "${as_root[@]}" systemctl disable --now prometheus.service >/dev/null 2>&1 || true
fi
