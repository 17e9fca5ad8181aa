#!/usr/bin/python3
"""The set-up check: fails when the build, a test or a script uses something
that tools/setup.sh does not install.

cascade promises that `bash tools/setup.sh` on a fresh Debian 12 machine is all
the build, the tests, the packaging and the demo need. A developer machine
cannot show that promise breaking: it has far more packages than a fresh one,
so a new find_package(), an `import yaml` or a `jq` in a script works there and
fails on the next fresh machine. This check collects what the project really
uses - the CMake cache of a configured build, the imports of its Python files,
the commands its shell scripts call, the program paths its C++ and CMake
sources name - maps every used file to its Debian package with dpkg, and fails
for each package outside what the list in tools/setup.sh pulls in.

Run it with Debian's interpreter (standard library only):
    /usr/bin/python3 tools/check_setup.py [--build-dir DIR] [-v]
Exit status: 0 every use is installed by tools/setup.sh, 1 a use is not (one
line each), 2 the check could not run (bad arguments, no cache, no dpkg).
"""

import argparse
import ast
import bisect
import json
import os
import re
import shutil
import subprocess
import sys
from collections import namedtuple
from dataclasses import dataclass, field

PROG = 'check_setup'
# Debian's interpreter: the project's Python must run with it, not with
# whatever python3 comes first on a developer's PATH.
PYTHON = '/usr/bin/python3'
INSTALLER = 'tools/setup.sh'
# Where a missing package goes: the packages=( ... ) list of the set-up script.
DEFAULT_LIST = 'the packages list of tools/setup.sh'


class CheckError(Exception):
    """The check could not run: exit 2, no verdict on the set-up."""


@dataclass(frozen=True)
class Use:
    """One thing from the system that the project uses."""
    origin: str  # where: "build/CMakeCache.txt", "tools/demo.sh:7", "tools/x.py:3"
    what: str    # what, for messages: "toml11_DIR=/usr/share/cmake/toml11"
    path: str    # the absolute path whose Debian package decides


@dataclass
class Findings:
    uses: dict = field(default_factory=dict)      # an ordered set of Use (keys)
    failures: list = field(default_factory=list)  # (package or '', message)
    notes: list = field(default_factory=list)     # shown with --verbose only

    def use(self, origin, what, path):
        self.uses[Use(origin, what, path)] = None  # once: `sed a | sed b` is one use of sed

    def fail(self, message, package=''):
        self.failures.append((package, message))


# --- files of the source tree --------------------------------------------------------------------

def source_files(source_dir, areas=('',)):
    """Relative paths of the files under AREAS of the source tree, sorted; build trees
    (build*), .git and other hidden directories are not the project's sources."""
    found = []
    for area in areas:
        for top, dirs, files in os.walk(os.path.join(source_dir, area)):
            dirs[:] = [d for d in dirs if not d.startswith(('.', 'build'))]
            found += [os.path.relpath(os.path.join(top, f), source_dir) for f in files]
    return sorted(found)


def read_text(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        return f.read()


def display_path(path):
    """PATH as the user would type it: relative to the working directory when below it."""
    relative = os.path.relpath(path)
    return path if relative.startswith('..') else relative


def is_within(path, directory):
    path, directory = os.path.realpath(path), os.path.realpath(directory)
    return os.path.commonpath([path, directory]) == directory


# --- uses: the CMake cache -----------------------------------------------------------------------

CACHE_ENTRY = re.compile(r'^(?:"(?P<quoted>[^"]*)"|(?P<name>[^:="]+)):(?P<type>[A-Z]+)=(?P<value>.*)$')
TOOL_PREFIX = 'CASCADE_TOOL_'
# A cache entry names something CMake *found* when a find_* command stored it:
# find_program/find_library/find_file/find_path write PATH or FILEPATH entries,
# find_package writes <Package>_DIR. Some PATH entries are *settings* though:
# the install destinations (CMAKE_INSTALL_PREFIX=/usr/local, CMAKE_INSTALL_*DIR)
# and CPack's say where things will go, not what the build uses.
SETTING_PREFIXES = ('CMAKE_INSTALL_', 'CPACK_', 'CMAKE_STAGING_PREFIX')
# The cmake that configured the build and the ctest that runs the tests are
# recorded as INTERNAL entries, but they are uses like any other program.
CMAKE_PROGRAMS = ('CMAKE_COMMAND', 'CMAKE_CTEST_COMMAND')


def read_cache(path):
    """(name, type, value) of each entry of a CMakeCache.txt."""
    try:
        lines = read_text(path).splitlines()
    except OSError as error:
        raise CheckError(f'cannot read the CMake cache {path}: {error.strerror} '
                         '(configure a build first, or pass --build-dir or --cache)') from error
    matches = (CACHE_ENTRY.match(line) for line in lines if not line.startswith(('#', '//')))
    return [(m['quoted'] or m['name'], m['type'], m['value']) for m in matches if m]


def names_something_found(name, kind):
    if name.startswith(SETTING_PREFIXES):
        return False
    return kind in ('PATH', 'FILEPATH') or name.endswith('_DIR') or name in CMAKE_PROGRAMS


def collect_cache_uses(cache_path, project_dirs, findings):
    origin = display_path(cache_path)
    for name, kind, value in read_cache(cache_path):
        # CASCADE_TOOL_* entries are programs the tests need (find_program): not
        # finding one is a failure, unlike the optional probes of find modules.
        is_tool = name.startswith(TOOL_PREFIX)
        if is_tool and (value.endswith('-NOTFOUND') or not os.path.exists(value)):
            findings.fail(f'{origin}: CMake did not find the program for {name} ({value}): '
                          f'install the package that provides it from {DEFAULT_LIST}')
        elif is_tool or names_something_found(name, kind):
            add_found_paths(origin, name, value, project_dirs, findings)


def add_found_paths(origin, name, value, project_dirs, findings):
    if value.endswith('-NOTFOUND'):
        findings.notes.append(f'{origin}: {name} not found: an optional probe of a find module')
        return
    # PATH entries may hold lists (CMAKE_PREFIX_PATH=/a;/b).
    for path in filter(os.path.isabs, value.split(';')):
        if not os.path.exists(path):
            findings.notes.append(f'{origin}: {name}={path} no longer exists (stale cache entry)')
        elif not any(is_within(path, d) for d in project_dirs):
            findings.use(origin, f'{name}={path}', path)


# --- uses: Python imports ------------------------------------------------------------------------

# Run by Debian's interpreter: where each module named on the command line comes
# from. -I keeps the user's site-packages and PYTHON* variables out of it.
MODULE_ORIGINS = r'''
import importlib.util, json, sys
def origin(name):
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.origin in ("built-in", "frozen"):
        return sys.argv[1]  # compiled into the interpreter: its own package
    if spec.origin:
        return spec.origin
    return next(iter(spec.submodule_search_locations or []), None)  # namespace package
print(json.dumps({name: origin(name) for name in sys.argv[2:]}))
'''


def python_imports(text, filename):
    """(line, top-level module) of each absolute import of a Python file."""
    imports = []
    for node in ast.walk(ast.parse(text, filename)):
        if isinstance(node, ast.Import):
            imports += [(node.lineno, alias.name.split('.')[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imports.append((node.lineno, node.module.split('.')[0]))
    return sorted(imports)


def local_module_names(py_files):
    """Modules the project's own files provide: x.py is module x, pkg/__init__.py package pkg."""
    names = set()
    for path in py_files:
        directory, name = os.path.split(path[:-len('.py')])
        names.add(os.path.basename(directory) if name == '__init__' else name)
    return names


def module_origins(names):
    """Module name -> the file Debian's interpreter would import it from (None: cannot)."""
    if not names:
        return {}
    done = subprocess.run([PYTHON, '-I', '-c', MODULE_ORIGINS, PYTHON, *names],
                          capture_output=True, text=True, cwd='/')
    if done.returncode != 0:
        raise CheckError(f'{PYTHON} could not resolve the imports: {done.stderr.strip()}')
    return json.loads(done.stdout)


def imports_by_file(source_dir, py_files, findings):
    """('file:line', module) of each import of a module from outside the project, once per file."""
    local = local_module_names(py_files)
    imports = []
    for path in py_files:
        try:
            found = python_imports(read_text(os.path.join(source_dir, path)), path)
        except SyntaxError as error:
            findings.fail(f'{path}:{error.lineno}: {PYTHON} cannot parse it: {error.msg}')
            continue
        first_line = {}
        for line, module in found:
            first_line.setdefault(module, line)
        imports += [(f'{path}:{line}', module) for module, line in first_line.items()
                    if module not in local]
    return imports


def collect_python_uses(source_dir, findings):
    py_files = [p for p in source_files(source_dir) if p.endswith('.py')]
    if not py_files:
        return
    more = len(py_files) - 1
    origin = py_files[0] + (f' and {more} more .py file{"s" * (more > 1)}' if more else '')
    if not os.path.exists(PYTHON):
        findings.fail(f'{origin}: the Python files need {PYTHON}, which is not installed: '
                      f'run {INSTALLER}')
        return
    findings.use(origin, f'interpreter {PYTHON}', PYTHON)
    imports = imports_by_file(source_dir, py_files, findings)
    origins = module_origins(sorted({module for _, module in imports}))
    for where, module in imports:
        if origins.get(module):
            findings.use(where, f"module '{module}' ({origins[module]})", origins[module])
        else:
            findings.fail(f"{where} imports '{module}', which {PYTHON} cannot import: add the "
                          f'Debian package that provides it (python3-...) to {DEFAULT_LIST}')


# --- uses: commands of shell scripts -------------------------------------------------------------
#
# Not a shell parser: a tokenizer that knows quoting, expansions, comments,
# here-documents and redirections well enough to find the first word of every
# simple command, which is the program the shell runs.

Token = namedtuple('Token', 'kind text line')  # kind: word, op, redirection, newline

OPERATORS = (';;&', '<<<', '<<-', '&>>', ';;', ';&', '&&', '||', '|&', '<<', '>>', '<&', '>&',
             '<>', '>|', '&>', ';', '&', '|', '(', ')', '<', '>')
CASE_END_OPERATORS = (';;', ';&', ';;&')
WORD_END = frozenset(' \t\r\n;&|()<>')
ASSIGNMENT = re.compile(r'[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=')
FD_VARIABLE = re.compile(r'\{[A-Za-z_][A-Za-z0-9_]*\}')


class ShellLexer:
    """Splits a script into token lists: the script's own, and one per command
    substitution ($(...), `...`) and process substitution (<(...)), whose
    commands run as well. Here-document bodies and comments are skipped."""

    def __init__(self, text, first_line=1):
        self.text = text
        self.pos = 0
        self.first_line = first_line
        self.newlines = [i for i, c in enumerate(text) if c == '\n']
        self.heredocs = []  # (delimiter, strip tabs) of here-documents whose body comes next
        self.lists = []

    def token_lists(self):
        self.lists.insert(0, self._tokens(closer=None))
        return self.lists

    def _line(self):
        return self.first_line + bisect.bisect_left(self.newlines, self.pos)

    def _at(self, *prefixes):
        return self.text.startswith(prefixes, self.pos)

    def _tokens(self, closer):
        """Tokens up to the unmatched CLOSER (')' of a substitution) or the end."""
        tokens, depth = [], 0
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if self._at('\\\n') or c in ' \t\r':
                self.pos += 2 if c == '\\' else 1
            elif c == '\n':
                tokens.append(Token('newline', c, self._line()))
                self.pos += 1
                self._skip_heredoc_bodies()
            elif c == '#':  # at the start of a word: a comment
                end = self.text.find('\n', self.pos)
                self.pos = len(self.text) if end < 0 else end
            elif c == ')' and closer and depth == 0:
                self.pos += 1
                return tokens
            else:
                depth += self._add_token(tokens)
        return tokens

    def _add_token(self, tokens):
        """Reads one operator or word into TOKENS; returns the change of parenthesis depth."""
        line = self._line()
        if self._at('(('):  # arithmetic command: (( i++ )), for (( ... ))
            tokens.append(Token('word', self._read_arithmetic(), line))
            return 0
        if self._at('<(', '>('):
            tokens.append(Token('word', self._read_substitution(), line))
            return 0
        operator = next((op for op in OPERATORS if self._at(op)), None)
        if operator:
            self.pos += len(operator)
            kind = 'redirection' if '<' in operator or '>' in operator else 'op'
            tokens.append(Token(kind, operator, line))
            return (operator == '(') - (operator == ')')
        word = self._read_word()
        if (word.isdigit() or FD_VARIABLE.fullmatch(word)) and self._at('<', '>'):
            return 0  # the file descriptor of a redirection: 2>/dev/null
        if tokens and tokens[-1].text in ('<<', '<<-'):
            self.heredocs.append((re.sub(r'[\'"\\]', '', word), tokens[-1].text == '<<-'))
        tokens.append(Token('word', word, line))
        return 0

    def _skip_heredoc_bodies(self):
        for delimiter, strip_tabs in self.heredocs:
            while self.pos < len(self.text):
                end = self.text.find('\n', self.pos)
                end = len(self.text) if end < 0 else end
                line = self.text[self.pos:end]
                self.pos = end + 1
                if (line.lstrip('\t') if strip_tabs else line) == delimiter:
                    break
        self.heredocs = []

    def _read_word(self):
        parts = []
        while self.pos < len(self.text) and self.text[self.pos] not in WORD_END:
            parts.append(self._read_unit())
            if self._at('(') and ASSIGNMENT.fullmatch(''.join(parts)):
                parts.append(self._read_array_literal())
        return ''.join(parts)

    def _read_unit(self):
        """One quoted string, escape, expansion or plain character of a word."""
        start = self.pos
        if self._at('\\\n'):
            self.pos += 2
            return ''
        if self._at('\\'):
            self.pos += 2
        elif self._at("'"):
            end = self.text.find("'", start + 1)
            self.pos = len(self.text) if end < 0 else end + 1
        elif self._at("$'"):
            self.pos += 1
            self._skip_ansi_c_string()
        elif self._at('"'):
            return self._read_double_quoted()
        elif self._at('`'):
            return self._read_backticks()
        elif self._at('$(('):
            self.pos += 1
            return '$' + self._read_arithmetic()
        elif self._at('$('):
            return self._read_substitution()
        elif self._at('${'):
            return self._read_parameter()
        else:
            self.pos += 1
        return self.text[start:self.pos]

    def _skip_ansi_c_string(self):
        self.pos += 1
        while self.pos < len(self.text) and not self._at("'"):
            self.pos += 2 if self._at('\\') else 1
        self.pos += 1

    def _read_double_quoted(self):
        parts = ['"']
        self.pos += 1
        while self.pos < len(self.text) and not self._at('"'):
            if self._at('\\', '$', '`'):  # the only characters special inside "..."
                parts.append(self._read_unit())
            else:
                parts.append(self.text[self.pos])
                self.pos += 1
        self.pos += 1
        return ''.join(parts) + '"'

    def _read_parameter(self):
        """${...}: may nest quotes, substitutions and other ${...}; '#' there is no comment."""
        parts = ['${']
        self.pos += 2
        depth = 1
        while self.pos < len(self.text):
            depth += self._at('{') - self._at('}')
            if depth == 0:
                self.pos += 1
                break
            parts.append(self._read_unit())
        return ''.join(parts) + '}'

    def _read_arithmetic(self):
        """((...)) and $((...)): variables and numbers, but $(...) inside still runs."""
        start = self.pos
        self.pos += 2
        depth = 2
        while self.pos < len(self.text) and depth:
            depth += self._at('(') - self._at(')')
            self._read_unit()
        return self.text[start:self.pos]

    def _read_substitution(self):
        """$(...), <(...), >(...): its commands become a token list of their own."""
        opener = self.text[self.pos]
        self.pos += 2
        self.lists.append(self._tokens(closer=')'))
        return opener + '(...)'

    def _read_backticks(self):
        start = self.pos + 1
        end = start
        while end < len(self.text) and self.text[end] != '`':
            end += 2 if self.text[end] == '\\' else 1
        inner = re.sub(r'\\([\\`$])', r'\1', self.text[start:end])
        self.lists += ShellLexer(inner, self._line()).token_lists()
        self.pos = end + 1
        return '`...`'

    def _read_array_literal(self):
        """name=(a b "c") is one assignment, not a subshell."""
        parts = ['(']
        self.pos += 1
        while self.pos < len(self.text) and not self._at(')'):
            if self.text[self.pos] in ' \t\r\n':
                self.pos += 1
                parts.append(' ')
            elif self._at('#') and parts[-1] in ('(', ' '):
                end = self.text.find('\n', self.pos)
                self.pos = len(self.text) if end < 0 else end
            else:
                parts.append(self._read_unit())
        self.pos += 1
        return ''.join(parts) + ')'


@dataclass(frozen=True)
class Wrapper:
    """A command word that runs the command after it (sudo make, timeout 5 curl)."""
    external: bool  # a program of its own (then a use too), or part of the shell
    options_with_argument: frozenset = frozenset()
    durations: int = 0  # positional words before the command: timeout's DURATION
    takes_assignments: bool = False  # env NAME=value cmd
    query_options: frozenset = frozenset()  # command -v NAME runs nothing


WRAPPERS = {
    'exec': Wrapper(False, frozenset({'-a'})),
    'command': Wrapper(False, query_options=frozenset({'-v', '-V'})),
    'time': Wrapper(False),
    'nohup': Wrapper(True),
    'setsid': Wrapper(True),
    'sudo': Wrapper(True, frozenset({'-u', '-g', '-C', '-D', '-p', '-r', '-t', '-U', '-T',
                                     '--user'})),
    'env': Wrapper(True, frozenset({'-u', '-C', '-S', '--unset', '--chdir'}),
                   takes_assignments=True),
    'timeout': Wrapper(True, frozenset({'-s', '-k', '--signal', '--kill-after'}), durations=1),
    'xargs': Wrapper(True, frozenset({'-a', '-d', '-E', '-I', '-L', '-n', '-P', '-s', '--arg-file',
                                      '--delimiter', '--max-args', '--max-procs'})),
    'nice': Wrapper(True, frozenset({'-n'})),
    'stdbuf': Wrapper(True, frozenset({'-i', '-o', '-e'})),
}
# Words that may precede the command word of a simple command.
LEADING_KEYWORDS = frozenset({'if', 'then', 'elif', 'else', 'while', 'until', 'do', '!', '{'})
# Shell keywords and builtins: the shell runs them itself, no package provides them.
SHELL_BUILTINS = frozenset('''
    fi done esac } in for select function case coproc [[ ]] :
    alias bg bind break builtin caller cd compgen complete compopt continue declare dirs disown
    echo enable eval exit export false fc fg getopts hash help history jobs kill let local logout
    mapfile popd printf pushd pwd read readarray readonly return set shift shopt source . suspend
    test [ times trap true type typeset ulimit umask unalias unset wait
'''.split())


# Compound commands whose next words are no command: [[ EXPRESSION ]], case WORD in,
# function NAME, . FILE / source FILE (the state CommandFinder goes into).
WORD_STATES = {'[[': 'dbracket', 'case': 'case-subject', 'function': 'function-name',
               '.': 'sourced-file', 'source': 'sourced-file'}


class CommandFinder:
    """Follows one token list and collects (line, name) of the commands it runs: the first
    word of each simple command, after assignments, keywords and wrappers, outside
    [[ ... ]] and case patterns. Also the files it sources (their functions are known)."""

    def __init__(self):
        self.found = []
        self.sourced = []
        self.case_parts = []  # per open `case`: 'pattern' or 'body'
        self._start_command()

    def _start_command(self):
        # command: the next word is the command word; arguments: it was seen;
        # wrapper: after sudo/env/...; or one of WORD_STATES.
        self.state = 'command'
        self.wrapper = None
        self.pending = 0  # option arguments the wrapper still consumes
        self.durations = 0  # positional words the wrapper still consumes
        self.redirection_target = False

    def feed(self, token):
        if self.case_parts and self.case_parts[-1] == 'pattern':
            self._feed_case_pattern(token)
        elif self.state == 'dbracket':
            if token.kind == 'word' and token.text == ']]':
                self.state = 'arguments'
        elif token.kind == 'redirection':
            self.redirection_target = True
        elif token.kind == 'word':
            self._feed_word(token)
        else:
            if token.text in CASE_END_OPERATORS and self.case_parts:
                self.case_parts[-1] = 'pattern'
            self._start_command()

    def _feed_case_pattern(self, token):
        if token.kind == 'word' and token.text == 'esac':
            self.case_parts.pop()
            self.state = 'arguments'
        elif token.kind == 'op' and token.text == ')':
            self.case_parts[-1] = 'body'
            self._start_command()

    def _feed_word(self, token):
        if self.redirection_target:
            self.redirection_target = False
        elif self.state == 'case-subject':
            if token.text == 'in':
                self.case_parts.append('pattern')
        elif self.state == 'function-name':
            self.state = 'command'  # function NAME { BODY }: the body's commands follow
        elif self.state == 'sourced-file':
            self.sourced.append(token.text)
            self.state = 'arguments'
        elif self.state == 'wrapper':
            if not self._wrapper_takes(token.text):
                self._command_word(token)
        elif self.state == 'command':
            self._command_word(token)

    def _wrapper_takes(self, word):
        """Whether WORD belongs to the wrapper (an option, its argument, a duration)."""
        if self.pending:
            self.pending -= 1
        elif word.startswith('-'):
            if word in self.wrapper.query_options:
                self.state = 'arguments'
            self.pending = int(word in self.wrapper.options_with_argument)
        elif self.wrapper.takes_assignments and ASSIGNMENT.match(word):
            pass
        elif self.durations:
            self.durations -= 1
        else:
            return False
        return True

    def _command_word(self, token):
        word = token.text
        if word in LEADING_KEYWORDS or ASSIGNMENT.match(word):
            return
        self.state = WORD_STATES.get(word, 'arguments')
        wrapper = WRAPPERS.get(os.path.basename(word))  # also /usr/bin/env python3
        if word == 'esac' and self.case_parts:
            self.case_parts.pop()
        elif wrapper:
            self._start_wrapper(wrapper, token)
        elif self._is_program(word):
            self.found.append((token.line, unquote(word)))

    def _start_wrapper(self, wrapper, token):
        self.wrapper = wrapper
        self.state = 'wrapper'
        self.pending = 0
        self.durations = wrapper.durations
        if wrapper.external and self._is_program(token.text):
            self.found.append((token.line, unquote(token.text)))

    @staticmethod
    def _is_program(word):
        if '$' in word or '`' in word or word.startswith(('-', '((', '<(', '>(')):
            return False  # an expansion, an option, arithmetic: nothing to look up
        name = unquote(word)
        if name in SHELL_BUILTINS or not name:
            return False
        return name.startswith('/') or '/' not in name  # a relative path is a project file


def unquote(word):
    return re.sub(r'\\(.)|[\'"]', r'\1', word)


def defined_functions(token_lists):
    """Names of the functions a script defines: `name() {` and `function name`."""
    names = set()
    for tokens in token_lists:
        for i, token in enumerate(tokens):
            after = tokens[i + 1:i + 3]
            if token.kind == 'word' and [t.text for t in after] == ['(', ')']:
                names.add(token.text)
            elif token.text == 'function' and after and after[0].kind == 'word':
                names.add(after[0].text)
    return names


@dataclass
class ShellScript:
    calls: list       # (line, name) of the first word of each simple command, by line
    functions: set    # functions it defines
    sourced: list     # the words naming the files it sources: "$source/tests/lib.sh"

    def commands(self, functions):
        """(line, name) of the calls that are no function of FUNCTIONS: programs."""
        return [(line, name) for line, name in self.calls if name not in functions]


def scan_shell_script(text):
    token_lists = ShellLexer(text).token_lists()
    calls, sourced = [], []
    for tokens in token_lists:
        finder = CommandFinder()
        for token in tokens:
            finder.feed(token)
        calls += finder.found
        sourced += finder.sourced
    return ShellScript(sorted(calls), defined_functions(token_lists), sourced)


def shell_commands(text):
    """(line, command) of each external command a shell script calls, by line."""
    script = scan_shell_script(text)
    return script.commands(script.functions)


def shell_scripts(source_dir):
    scripts = [p for p in source_files(source_dir) if p.endswith('.sh')]
    # CI's entry point: no .sh suffix, in a hidden directory the walk skips.
    if os.path.isfile(os.path.join(source_dir, '.ci', 'run')):
        scripts.append(os.path.join('.ci', 'run'))
    return scripts


EXPANSION = re.compile(r'\$\{[^}]*\}|\$\w+|\$\(\.\.\.\)|`\.\.\.`')


def sourced_scripts(script, word, scripts):
    """The project scripts that `. WORD` in SCRIPT may name. WORD usually starts
    with an expansion (. "$source/tests/install/lib.sh", . "$(dirname "$0")/lib.sh"):
    what follows the last one is matched against the end of the project's script
    paths; a name without expansions is also looked up beside SCRIPT."""
    parts = EXPANSION.split(unquote(word))
    tail = os.path.normpath(parts[-1].lstrip('/') if len(parts) > 1 else parts[-1])
    beside = os.path.normpath(os.path.join(os.path.dirname(script), tail))
    return [s for s in scripts if s in (beside, tail) or s.endswith('/' + tail)]


def functions_in_reach(script, scans, seen=None):
    """Functions SCRIPT defines or gets from the project scripts it sources (transitively)."""
    seen = seen if seen is not None else {script}
    functions = set(scans[script].functions)
    for word in scans[script].sourced:
        for other in sourced_scripts(script, word, scans):
            if other not in seen:
                seen.add(other)
                functions |= functions_in_reach(other, scans, seen)
    return functions


def collect_shell_uses(source_dir, findings):
    scans = {s: scan_shell_script(read_text(os.path.join(source_dir, s)))
             for s in shell_scripts(source_dir)}
    for script, scan in scans.items():
        for line, command in scan.commands(functions_in_reach(script, scans)):
            add_command_use(f'{script}:{line}', command, findings)


def add_command_use(where, command, findings):
    """A command as the script will run it: an absolute path, or the first on PATH."""
    path = command if command.startswith('/') else shutil.which(command)
    if path and os.path.exists(path):
        shown = f' ({path})' if path != command else ''
        findings.use(where, f"command '{command}'{shown}", path)
    else:
        findings.fail(f"{where} calls '{command}', which is not installed: add the "
                      f'Debian package that provides it to {DEFAULT_LIST}')


# --- uses: program paths in C++ and CMake sources ------------------------------------------------

PROGRAM_LITERAL = re.compile(r'"(/(?:usr/)?s?bin/[A-Za-z0-9_.+-]+)"')
# Where tests, benchmarks, tools and packaging run programs by absolute path.
PROGRAM_AREAS = ('tests', 'bench', 'tools', 'deploy')


def is_cxx_or_cmake(path):
    return path.endswith(('.cpp', '.hpp', '.cmake')) or os.path.basename(path) == 'CMakeLists.txt'


def collect_program_literal_uses(source_dir, findings):
    areas = [a for a in PROGRAM_AREAS if os.path.isdir(os.path.join(source_dir, a))]
    for path in filter(is_cxx_or_cmake, source_files(source_dir, areas)):
        lines = read_text(os.path.join(source_dir, path)).splitlines()
        for number, line in enumerate(lines, 1):
            for program in PROGRAM_LITERAL.findall(line):
                where = f'{path}:{number}'
                if os.path.exists(program):
                    findings.use(where, f'program {program}', program)
                else:
                    findings.fail(f'{where} names {program}, which does not exist: add the '
                                  f'Debian package that provides it to {DEFAULT_LIST}')


# --- which package owns a path -------------------------------------------------------------------

# Debian 12 merged /bin into /usr/bin (and so on), but dpkg still records many
# files under their old names: /bin/sh, not /usr/bin/sh.
USR_MERGED = ('/bin/', '/sbin/', '/lib/', '/lib32/', '/lib64/', '/libx32/')
DPKG_BATCH = 200  # paths per dpkg-query call, far below any argument-length limit


def usr_merge_twin(path):
    if path.startswith(USR_MERGED):
        return '/usr' + path
    if path.startswith(tuple('/usr' + top for top in USR_MERGED)):
        return path[len('/usr'):]
    return None


def other_names(path):
    """Names dpkg may know PATH by: alternatives symlinks (/usr/bin/c++) belong to no
    package while their targets do; and the usr-merge twins."""
    real = os.path.realpath(path)
    return {real, usr_merge_twin(path), usr_merge_twin(real)} - {path, None}


def glob_escaped(path):
    # dpkg-query --search takes glob patterns; an absolute path without *?[\ is looked up as is.
    return re.sub(r'([*?\[\]\\])', r'\\\1', path)


def query_owners(paths):
    """Path -> set of packages for the paths dpkg knows (one call per batch: dpkg-query
    exits non-zero when any path is unknown, so its output is read line by line)."""
    owners = {}
    paths = sorted(paths)
    for start in range(0, len(paths), DPKG_BATCH):
        batch = [glob_escaped(p) for p in paths[start:start + DPKG_BATCH]]
        done = subprocess.run(['dpkg-query', '--search', *batch], capture_output=True, text=True)
        if done.returncode > 1:  # 1 only says that some path is not found
            raise CheckError(f'dpkg-query --search failed: {done.stderr.strip()}')
        for line in done.stdout.splitlines():
            packages, separator, path = line.partition(': ')
            if separator and not packages.startswith(('diversion by', 'local diversion')):
                owners.setdefault(path, set()).update(p.split(':')[0] for p in packages.split(', '))
    return owners


def find_owners(paths):
    """Path -> Debian packages owning it; paths no package owns are left out."""
    names = {os.path.normpath(p): other_names(os.path.normpath(p)) for p in paths}
    # One query for the paths and their other names: each dpkg-query call reads
    # the whole file database, which is most of the check's time.
    found = query_owners(set(names).union(*names.values()))
    owners = {}
    for path, others in names.items():
        packages = found.get(path) or set().union(*(found.get(n, set()) for n in others))
        if packages:
            owners[path] = packages
    return owners


# --- which packages tools/setup.sh installs ------------------------------------------------------

INSTALLED_FORMAT = ('${Package}\t${Essential}\t${Priority}\t${Depends}\t${Pre-Depends}\t'
                    '${Provides}\t${db:Status-Abbrev}\n')
PACKAGE_NAME = re.compile(r'[A-Za-z0-9][A-Za-z0-9+.~-]*')


def package_names(field_text):
    """'libc6 (>= 2.34), a | b:any' -> [['libc6'], ['a', 'b']]: versions and :arch dropped."""
    groups = []
    for group in field_text.split(','):
        names = [PACKAGE_NAME.match(alt.strip()) for alt in group.split('|')]
        if any(names):
            groups.append([m[0] for m in names if m])
    return groups


@dataclass
class Package:
    base: bool = False  # Essential: yes or Priority: required: on every Debian system
    depends: list = field(default_factory=list)  # alternative groups of Depends and Pre-Depends
    provides: list = field(default_factory=list)


class InstalledPackages:
    """The installed packages, from one dpkg-query call."""

    def __init__(self, packages):
        self.packages = packages
        self.providers = {}
        for name, package in packages.items():
            for virtual in package.provides:
                self.providers.setdefault(virtual, []).append(name)

    @classmethod
    def query(cls):
        done = subprocess.run(['dpkg-query', '--show', f'--showformat={INSTALLED_FORMAT}'],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise CheckError(f'dpkg-query --show failed: {done.stderr.strip()}')
        packages = {}
        for line in done.stdout.splitlines():
            name, essential, priority, depends, pre_depends, provides, status = line.split('\t')
            # Installed: i(nstalled), or installed with triggers W(aiting) or t (pending).
            if status[1:2] in ('i', 'W', 't'):
                package = packages.setdefault(name, Package())  # one entry per architecture
                package.base |= essential == 'yes' or priority == 'required'
                package.depends += package_names(depends) + package_names(pre_depends)
                package.provides += [group[0] for group in package_names(provides)]
        return cls(packages)

    def resolve(self, name):
        """The installed packages NAME stands for: itself, or those that provide it."""
        return [name] if name in self.packages else self.providers.get(name, [])

    def closure(self, roots):
        """ROOTS, the base system and everything they depend on (not Recommends:
        setup.sh installs with --no-install-recommends). Of alternatives (a | b) each
        installed one counts."""
        todo = [n for n, p in self.packages.items() if p.base]
        todo += [n for root in roots for n in self.resolve(root)]
        allowed = set()
        while todo:
            name = todo.pop()
            if name not in allowed:
                allowed.add(name)
                todo += [n for group in self.packages[name].depends for alt in group
                         for n in self.resolve(alt)]
        return allowed


def parse_package_list(text):
    """One package a line, '#' comments (the output of setup.sh --list, or a --packages file)."""
    names = (line.split('#', 1)[0].strip() for line in text.splitlines())
    return [name for name in names if name]


def read_package_list(source_dir, packages_file):
    """The listed packages and the file to name in messages."""
    if packages_file:
        try:
            return parse_package_list(read_text(packages_file)), packages_file
        except OSError as error:
            raise CheckError(f'cannot read the package list {packages_file}: '
                             f'{error.strerror}') from error
    setup = os.path.join(source_dir, INSTALLER)
    done = subprocess.run(['bash', setup, '--list'], capture_output=True, text=True)
    if done.returncode != 0:
        raise CheckError(f'bash {setup} --list failed: {done.stderr.strip()}')
    return parse_package_list(done.stdout), DEFAULT_LIST


def check_listed_installed(listed, installed, list_file, findings):
    for name in listed:
        if not installed.resolve(name):
            findings.fail(f"{list_file} lists '{name}', which is not installed: "
                          f'run {INSTALLER}', name)


# --- verdict and report --------------------------------------------------------------------------

def judge_uses(uses, owners, allowed, list_file, findings):
    """Use -> the allowed package it is credited to; a failure for every other use."""
    credited = {}
    for use in uses:
        packages = owners.get(os.path.normpath(use.path), set())
        if packages & allowed:
            credited[use] = min(packages & allowed)
        elif packages:
            findings.fail(not_installed_message(use, sorted(packages), list_file), min(packages))
        else:
            findings.fail(f'{use.origin}: {use.what} is not from a Debian package (installed by '
                          'hand?): cascade uses only Debian packages')
    return credited


def not_installed_message(use, packages, list_file):
    if len(packages) == 1:
        return (f"{use.origin}: {use.what} is from Debian package '{packages[0]}', which "
                f'{INSTALLER} does not install: add it to {list_file}')
    names = ', '.join(f"'{p}'" for p in packages)
    return (f'{use.origin}: {use.what} is from Debian packages {names}, none of which '
            f'{INSTALLER} installs: add one to {list_file}')


def print_report(findings, credited, verbose):
    if verbose:
        for use in findings.uses:
            print(f'{PROG}: use: {use.origin}: {use.what} -> {credited.get(use, "NOT ALLOWED")}')
        for note in findings.notes:
            print(f'{PROG}: note: {note}')
    # Grouped by package (stable sort: within a package, in the order found); the
    # failures that name no package last.
    for _, message in sorted(findings.failures, key=lambda f: (not f[0], f[0])):
        print(f'{PROG}: {message}')
    if findings.failures:
        problems = len(findings.failures)
        print(f'{PROG}: FAILED: {problems} problem{"s" * (problems > 1)}; {len(credited)} of '
              f'{len(findings.uses)} uses are installed by {INSTALLER}')
    else:
        packages = len(set(credited.values()))
        print(f'{PROG}: {len(findings.uses)} uses from {packages} packages, '
              f'all installed by {INSTALLER}')


# --- main ----------------------------------------------------------------------------------------

def parse_arguments(argv):
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser(
        prog='check_setup.py',
        description='Fail when the build, a test or a script uses something that '
                    'tools/setup.sh does not install.')
    parser.add_argument('--build-dir', help='configured build tree (default: SOURCE_DIR/build)')
    parser.add_argument('--cache', help='CMake cache to read (default: BUILD_DIR/CMakeCache.txt)')
    parser.add_argument('--source-dir', default=repo, help=f'source tree (default: {repo})')
    parser.add_argument('--packages', metavar='FILE',
                        help='package list, one package a line, # comments (default: the output of '
                             f'`bash SOURCE_DIR/{INSTALLER} --list`)')
    parser.add_argument('-v', '--verbose', action='store_true',
                        help='print every use and its package')
    return parser.parse_args(argv)


def collect_uses(source_dir, build_dir, cache_path):
    findings = Findings()
    project_dirs = (source_dir, build_dir, os.path.dirname(cache_path))
    collect_cache_uses(cache_path, project_dirs, findings)
    collect_python_uses(source_dir, findings)
    collect_shell_uses(source_dir, findings)
    collect_program_literal_uses(source_dir, findings)
    return findings


def run_check(args):
    if not shutil.which('dpkg-query'):
        raise CheckError('dpkg-query not found: the check runs on Debian, where dpkg tells '
                         'which package a file comes from')
    source_dir = os.path.abspath(args.source_dir)
    if not os.path.isdir(source_dir):
        raise CheckError(f'no source directory {args.source_dir}')
    build_dir = os.path.abspath(args.build_dir or os.path.join(source_dir, 'build'))
    cache_path = os.path.abspath(args.cache or os.path.join(build_dir, 'CMakeCache.txt'))
    listed, list_file = read_package_list(source_dir, args.packages)
    findings = collect_uses(source_dir, build_dir, cache_path)
    installed = InstalledPackages.query()
    check_listed_installed(listed, installed, list_file, findings)
    owners = find_owners({use.path for use in findings.uses})
    credited = judge_uses(findings.uses, owners, installed.closure(listed), list_file, findings)
    print_report(findings, credited, args.verbose)
    return 1 if findings.failures else 0


def main(argv=None):
    args = parse_arguments(argv)
    try:
        return run_check(args)
    except CheckError as error:
        print(f'{PROG}: error: {error}', file=sys.stderr)
        return 2


if __name__ == '__main__':
    sys.exit(main())
