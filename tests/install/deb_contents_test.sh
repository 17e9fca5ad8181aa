#!/usr/bin/env bash
# The Debian packages hold what an operator expects where Debian puts it,
# declare the libraries they need, pass lintian without errors, and their
# systemd units verify.
# Usage: deb_contents_test.sh SOURCE_DIR DEB_DIR LINTIAN SYSTEMD_ANALYZE
set -euo pipefail
source=$1 debs=$2 lintian=$3 systemd_analyze=$4
. "$source/tests/install/lib.sh"

work=$(mktemp -d /tmp/cascade-debs.XXXXXX)
trap 'rm -rf "$work"' EXIT

deb() { ls "$debs/$1"_*.deb; }
field() { dpkg-deb -f "$(deb "$1")" "$2"; }

# expect_files PACKAGE PATH...: each PATH is in the package.
expect_files() {
  local package=$1 path
  shift
  dpkg-deb -c "$(deb "$package")" | awk '{print $6}' | sed 's|^\./|/|' >"$work/$package.files"
  for path in "$@"; do
    grep -qx "$path" "$work/$package.files" || fail "$package lacks $path"
  done
}

# expect_depends PACKAGE NAME...: a package named NAME (or NAME-something, as
# libspdlog1.10-fmt9) is among the package's Depends.
expect_depends() {
  local package=$1 name depends
  shift
  depends=$(field "$package" Depends)
  for name in "$@"; do
    [[ ", $depends" == *", $name"* ]] || fail "$package Depends: '$depends' lacks $name"
  done
}

echo "== files where Debian puts them"
expect_files cascade-hub /usr/bin/cascade-hub /usr/bin/cascadectl /etc/cascade/hub.toml \
  /lib/systemd/system/cascade-hub.service /lib/systemd/system/cascade-hub@.service \
  /usr/share/doc/cascade-hub/copyright /usr/share/doc/cascade-hub/changelog.Debian.gz
expect_files cascade-agent /usr/bin/cascade-agent /etc/cascade/agent-example.toml \
  /lib/systemd/system/cascade-agent@.service /usr/share/doc/cascade-agent/copyright
expect_files libcascade-dev /usr/include/cascade/agent/client.hpp \
  /usr/include/cascade/common/protocol.hpp /usr/share/doc/libcascade-dev/copyright
grep -Eq '^/usr/lib/([^/]+/)?cmake/cascade/cascadeConfig.cmake$' "$work/libcascade-dev.files" ||
  fail "libcascade-dev lacks the CMake package"
grep -Eq '^/usr/lib/([^/]+/)?libcascade_agent.a$' "$work/libcascade-dev.files" ||
  fail "libcascade-dev lacks libcascade_agent.a"

echo "== Depends computed from the shared libraries (and what the scripts need)"
expect_depends cascade-hub adduser libc6 libzmq5 libsqlite3-0 libspdlog
expect_depends cascade-agent adduser libc6 libzmq5 libsqlite3-0 libldns3
expect_depends libcascade-dev cppzmq-dev libzmq3-dev libsqlite3-dev libspdlog-dev pkg-config
for package in cascade-hub cascade-agent libcascade-dev; do
  echo "$package $(field "$package" Version): Depends: $(field "$package" Depends)"
done

echo "== conffiles and maintainer scripts"
for package in cascade-hub cascade-agent; do
  dpkg-deb -e "$(deb "$package")" "$work/$package.control"
  for script in postinst prerm postrm; do
    [ -x "$work/$package.control/$script" ] || fail "$package has no executable $script"
    sh -n "$work/$package.control/$script" || fail "$package $script: syntax"
  done
done
grep -qx /etc/cascade/hub.toml "$work/cascade-hub.control/conffiles" || fail "hub.toml not a conffile"
grep -qx /etc/cascade/agent-example.toml "$work/cascade-agent.control/conffiles" ||
  fail "agent-example.toml not a conffile"

echo "== lintian: no errors"
"$lintian" --fail-on error --tag-display-limit 0 "$debs"/*.deb | tee "$work/lintian.txt" ||
  fail "lintian reported errors"
echo "lintian: $(grep -c '^W:' "$work/lintian.txt" || true) warnings, no errors"

echo "== systemd-analyze verify on the installed units"
root=$work/root
for package in cascade-hub cascade-agent; do dpkg-deb -x "$(deb "$package")" "$root"; done
# The units depend on systemd's own (sysinit.target...): the root needs them too.
cp -an /lib/systemd/system/. "$root/lib/systemd/system/"
for unit in cascade-hub.service cascade-hub@dc1-a.service cascade-agent@example.service; do
  verify_unit "$unit" "$systemd_analyze" verify --root="$root" --man=no
done
echo "PASS"
