#!/usr/bin/python3
"""Tests of tools/check_setup.py, the set-up check.

Every TestCase is one ctest test (tests/setup/CMakeLists.txt). By hand:
    /usr/bin/python3 tests/setup/test_check_setup.py [-v] [TestCaseName ...]
CASCADE_BINARY_DIR names the configured build tree that RealTreePasses checks
(default: the repository's build/).

The scenarios run the check as CI does, in a subprocess, on small source trees,
caches and package lists made in a temporary directory outside the repository;
only RealTreePasses looks at the repository itself.
"""

import os
import re
import subprocess
import sys
import tempfile
import unittest

PYTHON = '/usr/bin/python3'
SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(SOURCE_DIR, 'tools', 'check_setup.py')
sys.path.insert(0, os.path.dirname(CHECK))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import check_setup  # noqa: E402  (found through the path above)

# A script full of what must not be taken for a command: functions, builtins,
# keywords, case patterns, here-documents, assignments, arrays, expansions. It
# calls only tools of every Debian system (priority required), so it passes
# with an empty package list. <TAB> is a tab (for <<-).
TRICKY_SCRIPT = r'''#!/usr/bin/env bash
# Usage: tricky.sh [start|stop|N]
set -euo pipefail
cd "$(dirname "$0")/.."
readonly LIST=(alpha beta "gamma delta")  # an array, not a subshell
declare -A PID=() ; ORDER=()
PID[main]=$$ ORDER+=("main")
TOTAL=${#ORDER[@]} EMPTY= HOME_DIR=${HOME:-/root}
COUNT=$(( ${#LIST[@]} + $(wc -l </etc/hostname) ))

usage() { sed -n '2s/^# //p' "$0"; }
log() {
  local level=$1; shift
  printf '%s: %s\n' "$level" "$*" >&2
}
function cleanup {
  rm -f "$WORK"/*.tmp 2>/dev/null || true
}
function die() { log error "$@"; exit 1; }
trap cleanup EXIT
trap 'exit 130' INT TERM

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tricky.XXXXXX")
case ${1:-} in
  -h|--help) usage; exit 0 ;;
  start | stop) log info "would $1" ;;
  [0-9]*) COUNT=$1 ;&
  *)
    : nothing ;;
esac

for (( i = 0; i < COUNT; i++ )); do (( i % 2 )) && continue; done
for name in "${LIST[@]}"; do echo "$name"; done | sort | uniq -c
while IFS= read -r line || [ -n "$line" ]; do
  [[ $line == *"#"* && ( -n $line || $line < z ) ]] && continue
  tr -d '\n' <<<"$line"
done < <(grep -v '^#' /etc/hostname)

cat <<EOF >"$WORK/notes.tmp"
not-a-command here; neither | is this-one
EOF
cat <<-'END' | head -n 1
<TAB>quoted delimiter: $(no-such-command) is not expanded
<TAB>END

if ! cmp -s "$WORK/notes.tmp" /dev/null; then
  find "$WORK" -name '*.tmp' -print0 | xargs -0 -n 1 basename
elif [ -d "$WORK" ]; then
  env LC_ALL=C timeout 5 awk 'BEGIN { print "x; y" }'
else
  die "no work dir"
fi
{ echo one; echo two; } | tail -n 1
( cd / && exec cut -c1-3 /etc/hostname ) 2>/dev/null
echo "${HOME_DIR##*/} $'\n' `echo backticks | tr a-z A-Z`" "$EMPTY$TOTAL" # a comment; rm
command -v not-installed-anywhere >/dev/null || log warn "optional tool missing"
exec 3>&-
'''.replace('<TAB>', '\t')
TRICKY_SCRIPT_COMMANDS = ['awk', 'basename', 'cat', 'cmp', 'cut', 'dirname', 'env', 'find',
                          'grep', 'head', 'mktemp', 'rm', 'sed', 'sort', 'tail', 'timeout', 'tr',
                          'uniq', 'wc', 'xargs']


def commands(script):
    return sorted({name for _, name in check_setup.shell_commands(script)})


class ShellTokenizer(unittest.TestCase):
    """The first word of every simple command, and nothing else."""

    CASES = [
        # comments
        ('grep x  # sed y', ['grep']),
        ('echo "# no comment"; cut -f1', ['cut']),
        ('echo ${#arr[@]} $# a#b; wc -l', ['wc']),
        # quoting
        ('''echo 'a; rm -rf /' "b | sed" \\; x''', []),
        ("echo $'it\\'s; rm'; wc", ['wc']),
        # operators
        ('a1 && b1 || c1; d1 & e1 | f1 |& g1', ['a1', 'b1', 'c1', 'd1', 'e1', 'f1', 'g1']),
        ('( cd d && make ) ; { head; } >x', ['head', 'make']),
        # assignments and arrays
        ('FOO=1 BAR="x y" baz --flag', ['baz']),
        ('x=$(qux) y=`quux`', ['quux', 'qux']),
        ('arr=(one two "$(three)")\narr+=(x)\nPID[$n]=$!', ['three']),
        ('a=(\n  x # a comment with a \' quote\n  y\n)\nfoo', ['foo']),
        # substitutions
        ('echo "$(dirname "$0")/.."', ['dirname']),
        ('echo "`uname -r`"', ['uname']),
        ('echo $(a1 $(b1) "$(c1)")', ['a1', 'b1', 'c1']),
        ('diff <(sort a) >(tee b)', ['diff', 'sort', 'tee']),
        ('echo $(( $(now) + x )) ${x:-$(fallback)} "${h##*$\'\\n\'}"', ['fallback', 'now']),
        ('(( i++ )); for (( i=${#a[@]}-1; i>=0; i-- )); do step; done', ['step']),
        # here-documents and here-strings
        ('cat <<EOF | sed q\nrm -rf x; (y)\nEOF\nwc', ['cat', 'sed', 'wc']),
        ("cat <<-'END'\n\trm x\n\tEND\nwc", ['cat', 'wc']),
        ('x=$(cat <<EOF\nbody $(nope)\nEOF\n); after', ['after', 'cat']),
        ('grep x <<<"$(printf y)"; grep y <<< word', ['grep']),
        # redirections
        ('2>/dev/null foo; exec 3<>"/dev/tcp/h/1"; cmd >&2; exec >log 2>&1', ['cmd', 'foo']),
        ('bar {fd}>out &>/dev/null', ['bar']),
        # keywords
        ('if grep -q x f; then sed 1d; elif true; then :; else awk 1; fi', ['awk', 'grep', 'sed']),
        ('while read -r l; do tr a b; done < f; until pgrep x; do sleep 1; done',
         ['pgrep', 'sleep', 'tr']),
        ('! cmp a b', ['cmp']),
        ('[[ $a == b && ( $c < d || -n "$e" ) ]] && wc', ['wc']),
        ('[[ $v =~ ^(a|b)+$ ]] && ok1', ['ok1']),
        ('[ -x x ] || { echo no; exit 1; }; test -f y', []),
        # case
        ('case $1 in\n  -h|--help) usage ;;\n  start|stop) systemctl "$1" x ;;\n'
         '  *) echo bad; exit 2 ;;\nesac\nusage() { sed -n 1p; }', ['sed', 'systemctl']),
        ('case $x in a) foo;; (b|c) bar;& *) ;; esac; baz', ['bar', 'baz', 'foo']),
        ('case $x in\n  a)\n    case $y in b) inner;; esac\n    outer ;;\nesac',
         ['inner', 'outer']),
        # functions
        ('f() { g; }\nfunction h { i; }\nfunction j() { k; }\nf; h; j', ['g', 'i', 'k']),
        # wrappers
        ('sudo -u root env A=1 timeout -s KILL 5 nice -n 3 make',
         ['env', 'make', 'nice', 'sudo', 'timeout']),
        ('exec bash x.sh; command grep; command -v jq; time -p ls', ['bash', 'grep', 'ls']),
        ('find . | xargs -I{} -n 1 rm {}; nohup srv &', ['find', 'nohup', 'rm', 'srv', 'xargs']),
        ('/usr/bin/env python3 x.py; timeout --kill-after=5 10 "$@"',
         ['/usr/bin/env', 'python3', 'timeout']),
        # paths and expansions
        ('tools/build.sh; ./configure; ../x; /usr/bin/lintian x', ['/usr/bin/lintian']),
        ('"$CTL" --hub x; "${as_root[@]}" apt-get; $CMD; ${X}y', []),
        # builtins
        ('local x; declare -A m; read -r y; printf z; cd /; kill -9 1; wait; set -e; shift\n'
         'export X=1; source ./lib.sh; . lib.sh; mapfile -t a < <(ls); eval "$s"', ['ls']),
    ]

    def test_finds_the_commands_and_nothing_else(self):
        for script, expected in self.CASES:
            with self.subTest(script=script):
                self.assertEqual(commands(script), expected)

    def test_reports_the_line_of_each_command(self):
        script = 'cat <<EOF\nbody\nEOF\n\nfoo \\\n  --flag\necho "a\nb" $(bar)\n`baz`'
        self.assertEqual(check_setup.shell_commands(script),
                         [(1, 'cat'), (5, 'foo'), (8, 'bar'), (9, 'baz')])

    def test_tricky_script_calls_only_what_it_calls(self):
        self.assertEqual(commands(TRICKY_SCRIPT), TRICKY_SCRIPT_COMMANDS)

    def test_functions_of_sourced_scripts_are_no_commands(self):
        scripts = {'tests/lib.sh': 'helper() { :; }',
                   'tests/a_test.sh': '. "$source/tests/lib.sh"; helper',
                   'tests/b_test.sh': 'source lib.sh; helper',
                   'tests/c_test.sh': '. "$(dirname "$0")/lib.sh"'}
        scans = {path: check_setup.scan_shell_script(text) for path, text in scripts.items()}
        for script in ('tests/a_test.sh', 'tests/b_test.sh', 'tests/c_test.sh'):
            with self.subTest(script=script):
                self.assertIn('helper', check_setup.functions_in_reach(script, scans))


class DebianPackageQueries(unittest.TestCase):
    """dpkg's answers as the check reads them, on this Debian system."""

    def test_dependency_fields_lose_versions_and_architectures(self):
        self.assertEqual(check_setup.package_names('libc6 (>= 2.34), a | b:any (<< 2), perl:any'),
                         [['libc6'], ['a', 'b'], ['perl']])

    def test_owners_are_found_through_alternatives_and_merged_usr(self):
        owners = check_setup.find_owners(['/usr/bin/c++', '/usr/bin/sed', '/usr/include'])
        # /usr/bin/c++ -> /etc/alternatives/c++ -> x86_64-linux-gnu-g++-12, from g++-12
        self.assertTrue(any(re.fullmatch(r'g\+\+-\d+', p) for p in owners['/usr/bin/c++']))
        self.assertEqual(owners['/usr/bin/sed'], {'sed'})  # dpkg knows it as /bin/sed
        self.assertIn('libc6-dev', owners['/usr/include'])  # a directory of many packages

    def test_closure_follows_depends_and_provides(self):
        installed = check_setup.InstalledPackages.query()
        base = installed.closure([])
        self.assertIn('coreutils', base)
        self.assertNotIn('lintian', base)
        self.assertLessEqual({'lintian', 'perl', 'man-db'}, installed.closure(['lintian']))
        self.assertEqual(installed.resolve('awk'), ['mawk'])  # a virtual package


class CheckRun(unittest.TestCase):
    """A temporary directory with a source tree (src/), a build tree (build/) and
    package lists, in which the check runs as a subprocess."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix='check-setup-test.')
        self.addCleanup(tmp.cleanup)
        self.tmp = tmp.name
        self.source = os.path.dirname(self.write('src/.keep', ''))
        self.cache = self.write('build/CMakeCache.txt', '# an empty cache\n')

    def write(self, relative, text):
        path = os.path.join(self.tmp, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, 'w', encoding='utf-8') as f:
            f.write(text)
        return path

    def write_source(self, relative, text):
        return self.write(os.path.join('src', relative), text)

    def write_cache(self, *entries):
        return self.write('build/CMakeCache.txt', ''.join(f'{e}\n' for e in entries))

    def package_list(self, names):
        return self.write('packages.txt', '# a test list\n' + ''.join(f'{n}\n' for n in names))

    def run_check(self, *arguments, packages=(), env=None):
        """Exit status and output (stdout and stderr) of the check."""
        done = subprocess.run(
            [PYTHON, CHECK, '--source-dir', self.source, '--cache', self.cache,
             '--packages', self.package_list(packages), *arguments],
            capture_output=True, text=True, env=env)
        return done.returncode, done.stdout + done.stderr

    def assertCheckPasses(self, packages=()):
        status, output = self.run_check(packages=packages)
        self.assertEqual(status, 0, output)

    def assertCheckFails(self, *expected, packages=()):
        """The check exits 1 and its output has each EXPECTED text or regex."""
        status, output = self.run_check(packages=packages)
        self.assertEqual(status, 1, output)
        for text in expected:
            self.assertRegex(output, text)


def real_package_list():
    setup = os.path.join(SOURCE_DIR, 'tools', 'setup.sh')
    return subprocess.run(['bash', setup, '--list'], capture_output=True, text=True,
                          check=True).stdout.split()


class RealTreePasses(unittest.TestCase):
    """The repository, its configured build and tools/setup.sh's list: nothing missing."""

    def test_configured_build_and_real_list_pass(self):
        build_dir = os.environ.get('CASCADE_BINARY_DIR', os.path.join(SOURCE_DIR, 'build'))
        done = subprocess.run([PYTHON, CHECK, '--build-dir', build_dir],
                              capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertRegex(done.stdout,
                         r'\d+ uses from \d+ packages, all installed by tools/setup.sh')


def toml11_cmake_dir():
    """The directory of toml11Config.cmake, as Debian's libtoml11-dev installs it."""
    files = subprocess.run(['dpkg', '-L', 'libtoml11-dev'], capture_output=True, text=True,
                           check=True).stdout.split()
    return next(os.path.dirname(f) for f in files if f.endswith('/toml11Config.cmake'))


class PackageListDecidesCMakePackages(CheckRun):
    """A find_package() result (toml11_DIR) passes exactly when its package is listed."""

    def setUp(self):
        super().setUp()
        self.write_cache(f'toml11_DIR:PATH={toml11_cmake_dir()}')
        self.listed = real_package_list()

    def test_fails_without_libtoml11_dev(self):
        without = [p for p in self.listed if p != 'libtoml11-dev']
        self.assertCheckFails(r"toml11_DIR=\S+ is from Debian package 'libtoml11-dev', which "
                              r'tools/setup.sh does not install: add it to \S+/packages.txt',
                              packages=without)

    def test_passes_with_libtoml11_dev(self):
        self.assertCheckPasses(packages=self.listed)


class MissingTestProgramFails(CheckRun):
    """A CASCADE_TOOL_* entry CMake did not find fails; other find results are optional."""

    def test_tool_not_found_fails(self):
        self.write_cache('CASCADE_TOOL_FROB:FILEPATH=CASCADE_TOOL_FROB-NOTFOUND')
        self.assertCheckFails('CMake did not find the program for CASCADE_TOOL_FROB')

    def test_optional_probe_not_found_passes(self):
        self.write_cache('ZeroMQ_DIR:PATH=ZeroMQ_DIR-NOTFOUND',
                         'CMAKE_DLLTOOL:FILEPATH=CMAKE_DLLTOOL-NOTFOUND')
        self.assertCheckPasses()

    def test_found_tool_of_the_base_system_passes(self):
        self.write_cache('CASCADE_TOOL_SH:FILEPATH=/bin/sh')
        self.assertCheckPasses()


class HandInstalledFileFails(CheckRun):
    """A found path no Debian package owns fails; settings and project paths are no uses."""

    def test_file_outside_any_package_fails(self):
        tool = self.write('opt/bin/frob', '#!/bin/sh\n')
        self.write_cache(f'FROB_EXECUTABLE:FILEPATH={tool}')
        self.assertCheckFails(f'FROB_EXECUTABLE={re.escape(tool)} is not from a Debian package '
                              r'\(installed by hand\?\): cascade uses only Debian packages')

    def test_settings_and_build_tree_paths_are_no_uses(self):
        opt = os.path.dirname(self.write('opt/x', ''))
        built = self.write('build/bin/helper', '')
        self.write_cache(f'CMAKE_INSTALL_PREFIX:PATH={opt}',
                         f'HELPER:FILEPATH={built}',
                         f'cascade_SOURCE_DIR:STATIC={self.source}')
        self.assertCheckPasses()


class PythonImportsAreChecked(CheckRun):
    """Imports resolve with Debian's python3 and their packages must be listed."""

    def test_module_that_does_not_exist_fails(self):
        self.write_source('tools/gen.py', '"""x"""\nimport no_such_module_for_cascade.sub\n')
        self.assertCheckFails(r"tools/gen.py:2 imports 'no_such_module_for_cascade', which "
                              r'/usr/bin/python3 cannot import', packages=real_package_list())

    def test_standard_library_passes_with_the_real_list(self):
        self.write_source('tools/gen.py', 'import json\n')
        self.assertCheckPasses(packages=real_package_list())

    def test_standard_library_fails_with_an_empty_list(self):
        self.write_source('tools/gen.py', 'import json\n')
        self.assertCheckFails(r"tools/gen.py:1: module 'json' \(\S+\) is from Debian package "
                              r"'libpython3\.\d+-stdlib'",
                              r"tools/gen.py: interpreter /usr/bin/python3 is from Debian package")

    def test_project_modules_and_relative_imports_are_no_uses(self):
        self.write_source('tools/helper.py', 'VALUE = 1\n')
        self.write_source('tools/pkg/__init__.py', '')
        self.write_source('tools/gen.py',
                          'from helper import VALUE\nimport pkg.sub\nfrom . import x\n')
        self.assertCheckPasses(packages=['python3'])


class ShellCommandsAreChecked(CheckRun):
    """Commands of *.sh and .ci/run must be installed, from listed packages."""

    def test_command_that_does_not_exist_fails(self):
        self.write_source('tools/run.sh', '#!/bin/sh\nset -e\nno-such-command-for-cascade --x\n')
        self.assertCheckFails(r"tools/run.sh:3 calls 'no-such-command-for-cascade', which is "
                              'not installed')

    def test_ci_entry_point_is_checked(self):
        self.write_source('.ci/run', '#!/bin/sh\nno-such-command-for-cascade\n')
        self.assertCheckFails(r"\.ci/run:2 calls 'no-such-command-for-cascade'")

    def test_command_of_an_unlisted_package_fails(self):
        self.write_source('tests/lint.sh', 'lintian --version\n')
        self.assertCheckFails(r"tests/lint.sh:1: command 'lintian' \(/usr/bin/lintian\) is from "
                              r"Debian package 'lintian', which tools/setup.sh does not install",
                              packages=['python3'])

    def test_command_of_a_listed_package_passes(self):
        self.write_source('tests/lint.sh', 'lintian --version\n')
        self.assertCheckPasses(packages=['lintian'])

    def test_tricky_script_passes_with_an_empty_list(self):
        self.write_source('tools/tricky.sh', TRICKY_SCRIPT)
        self.write_source('tools/lib.sh', 'helper() { :; }\n')
        self.write_source('tools/uses_lib.sh', '. "$(dirname "$0")/lib.sh"\nhelper\n')
        self.assertCheckPasses()


class ProgramPathsInSourcesAreChecked(CheckRun):
    """"/usr/bin/NAME" literals in C++ and CMake sources of tests, bench, tools, deploy."""

    def test_program_that_does_not_exist_fails(self):
        self.write_source('tests/x/run_test.cpp',
                          '// run\nconst char* p = "/usr/bin/no-such-program";\n')
        self.assertCheckFails(r'tests/x/run_test.cpp:2 names /usr/bin/no-such-program, which '
                              'does not exist')

    def test_program_of_an_unlisted_package_fails(self):
        self.write_source('tests/CMakeLists.txt',
                          'add_test(NAME lint COMMAND "/usr/bin/lintian")\n')
        self.assertCheckFails(r"tests/CMakeLists.txt:1: program /usr/bin/lintian is from Debian "
                              r"package 'lintian'")

    def test_program_of_the_base_system_passes(self):
        self.write_source('bench/run.hpp', 'auto shell = "/bin/sh";\n')
        self.write_source('hub/elsewhere.cpp', 'auto p = "/usr/bin/not-in-a-checked-area";\n')
        self.assertCheckPasses()


class ListedPackageMustBeInstalled(CheckRun):
    def test_listed_package_that_is_not_installed_fails(self):
        self.assertCheckFails(r"lists 'no-such-package-for-cascade', which is not installed: "
                              'run tools/setup.sh', packages=['no-such-package-for-cascade'])


class BadInvocationExitsTwo(CheckRun):
    """The check could not run: exit status 2 and a message saying why."""

    def assertExitsTwo(self, expected, *arguments, env=None):
        status, output = self.run_check(*arguments, env=env)
        self.assertEqual(status, 2, output)
        self.assertRegex(output, expected)

    def test_missing_cache(self):
        os.remove(self.cache)
        self.assertExitsTwo(r'cannot read the CMake cache \S+CMakeCache.txt')

    def test_missing_package_list(self):
        self.assertExitsTwo('cannot read the package list /nonexistent',
                            '--packages', '/nonexistent')

    def test_unknown_option(self):
        self.assertExitsTwo('unrecognized arguments: --frobnicate', '--frobnicate')

    def test_no_dpkg(self):
        empty_path = os.path.dirname(self.write('empty/.keep', ''))
        self.assertExitsTwo('dpkg-query not found', env=dict(os.environ, PATH=empty_path))


if __name__ == '__main__':
    unittest.main()
