#!/usr/bin/env python3
"""docs_run.py - run every command block of the docs, as written.

    docs_run.py [--list] [--only FILE:LINE] [--tree DIR] WORKDIR FILE.md...

Each Markdown file's fenced blocks run in order, in a folder of its own
under WORKDIR (a later block uses what an earlier one wrote, as a reader
who follows the page does), with the environment the caller gives (the
docs runner, tests/docs_run.sh: an installed prefix, PATH and the module
as a user has them after `make install` / `module load hpckit`):

  ```sh / ```bash / ```shell   run by bash -e -o pipefail, as written
  ```console                   the lines "$ COMMAND" run; the rest is output
  ```python                    run by python3 (PYTHON, default python3)
  anything else                not run (output, code fragments, text); an
                               untagged block with a line that looks like
                               a command fails: tag it sh or text

An HTML comment right before the fence (invisible on the rendered page)
says what else to do with the block:

  <!-- docs-run: skip REASON -->   not run; REASON (its first word: gpu,
                                   cluster, slurm, tree, ...) is counted
  <!-- docs-run: file NAME -->     the block is written to NAME in the
                                   page's folder (a C or Python file that
                                   a later block builds or runs)
  <!-- docs-run: exit N -->        the block must fail with status N
                                   (an example of a refused command)
  <!-- docs-run: timeout S -->     seconds the block may take (default 300)

Sizes are scaled down only where the block says so, visibly, in the
line's comment: "# make check: OLD -> NEW" (several: "A -> B; C -> D";
after the comment's own words: "# 8 shards; make check: 8 -> 2") replaces
OLD, which must occur once in the command, with NEW.

Every hpc-* command of every block, run or skipped, and of every inline
`hpc-NAME ...` span of the prose is also checked against the program's
--help: each --option it names must exist; a script of the source tree
(--tree) that a command starts by its path must be executable; and a
command in an indented (unfenced) code block fails: fence it, so that it
runs.  Prints
one line per block and a count (ran / skipped, by reason); exits 1 if a
block failed.
"""
import argparse
import collections
import os
import re
import shlex
import subprocess
import sys
import time

FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([A-Za-z0-9_+-]*)")
MARK = re.compile(r"^\s*<!--\s*docs-run:\s*(.*?)\s*-->\s*$")
SCALE = re.compile(r"(?:^|\s)#.*?\bmake check:\s*(.+?)\s*$")
RUN_SH = {"sh", "bash", "shell"}
RUN_PY = {"python", "py", "python3"}
# an untagged block whose line starts like this holds commands
LOOKS_RUN = re.compile(r"^\s*(\$ |(hpc-[a-z]+|hpc-mpiexec|mpiexec|mpirun|srun|sbatch|salloc|module|make|cc|"
                       r"LD_PRELOAD=\S+)(\s|$))")


class Block:
    def __init__(self, path, line, lang, text, marks):
        self.path, self.line, self.lang, self.text, self.marks = path, line, lang, text, marks

    @property
    def where(self):
        return "%s:%d" % (self.path, self.line)


def prose(path):
    """(line number, text) of the lines outside fenced blocks."""
    inside, fence = False, None
    for n, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
        f = FENCE.match(line)
        if f and (not inside or line.strip().startswith(fence)):
            inside, fence = not inside, f.group(2)
            continue
        if not inside:
            yield n, line


def lint_prose(path):
    """Commands outside fenced blocks: an indented code block that holds
    one (it would not run: fence it), and the options an inline
    `hpc-NAME --option` span names, which must exist."""
    bad, prev = [], ""
    name = os.path.basename(path)
    for n, line in prose(path):
        if line.startswith("    ") and LOOKS_RUN.match(line) and (not prev.strip() or prev.startswith("    ")):
            bad.append("%s:%d: an indented code block holds a command: fence it (```sh) so that it runs"
                       % (name, n))
        prev = line
        for span in re.findall(r"`([^`]+)`", line):
            words = span.split()
            if words and re.match(r"^(hpc-mpiexec|hpc-[a-z]+)$", words[0]):
                for problem in check_options(Block(path, n, "sh", span + "\n", [])):
                    bad.append("%s:%d: `%s`: %s" % (name, n, span, problem))
    return bad


def parse(path):
    """The fenced blocks of a Markdown file, with the docs-run marks that
    precede each (blank lines between allowed)."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, marks, i = [], [], 0
    while i < len(lines):
        m = MARK.match(lines[i])
        if m:
            marks.append(m.group(1))
            i += 1
            continue
        f = FENCE.match(lines[i])
        if not f:
            if lines[i].strip():
                marks = []
            i += 1
            continue
        indent, fence, lang = f.group(1), f.group(2), f.group(3).lower()
        start, body = i + 1, []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        blocks.append(Block(path, start, lang, "\n".join(body) + "\n", marks))
        marks = []
        i += 1
    return blocks


def directives(block):
    d = {"skip": None, "file": None, "exit": 0, "timeout": 300}
    for m in block.marks:
        word, _, rest = m.partition(" ")
        if word == "skip":
            d["skip"] = rest.strip() or "unspecified"
        elif word == "file":
            d["file"] = rest.strip()
        elif word == "exit":
            d["exit"] = int(rest)
        elif word == "timeout":
            d["timeout"] = int(rest)
        else:
            raise SystemExit("%s: unknown docs-run mark '%s'" % (block.where, m))
    return d


def scale(line, where):
    """The line with its "# make check: OLD -> NEW" replacements made."""
    m = SCALE.search(line)
    if not m:
        return line
    cmd = line[:m.start()]
    for pair in m.group(1).split(";"):
        old, sep, new = pair.partition("->")
        old, new = old.strip(), new.strip()
        if not sep or not old:
            raise ValueError("%s: '# make check: %s': expected OLD -> NEW" % (where, m.group(1)))
        if cmd.count(old) != 1:
            raise ValueError("%s: '# make check:' names '%s', which occurs %d times in the command"
                             % (where, old, cmd.count(old)))
        cmd = cmd.replace(old, new)
    return cmd.rstrip()


def script(block):
    """What runs: the block's text with the scaled lines (sh, python), or
    the "$ " lines of a console block."""
    out = []
    for n, line in enumerate(block.text.split("\n")):
        where = "%s:%d" % (block.path, block.line + 1 + n)
        if block.lang == "console":
            if line.startswith("$ "):
                out.append(scale(line[2:], where))
            continue
        out.append(scale(line, where))
    return "\n".join(out) + "\n"


def commands(block):
    """The shell commands of a block (for the option check): its lines
    joined at backslashes, split at ; && || |."""
    if block.lang == "console":
        text = "\n".join(l[2:] for l in block.text.split("\n") if l.startswith("$ "))
    elif block.lang in RUN_SH:
        text = block.text
    else:
        return []
    text = text.replace("\\\n", " ")
    cmds = []
    for line in text.split("\n"):
        line = re.sub(r"(^|\s)#.*$", "", line)
        for part in re.split(r";|&&|\|\||\|", line):
            try:
                words = shlex.split(part)
            except ValueError:
                words = part.split()
            # leading VAR=value assignments, and the launchers before the program
            while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
                words.pop(0)
            if words:
                cmds.append(words)
    return cmds


HELP = {}


def options_of(prog):
    """The long options of a program's option table, as --list-options
    gives them (None: not runnable)."""
    if prog not in HELP:
        try:
            r = subprocess.run([prog, "--list-options"], capture_output=True, text=True, timeout=60)
            HELP[prog] = {l.split("\t")[0] for l in r.stdout.splitlines() if l} if r.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired):
            HELP[prog] = None
    return HELP[prog]


def check_options(block):
    """Every --option given to an hpc-* program exists in its --help."""
    bad = []
    for words in commands(block):
        # the program after a launcher: hpc-mpiexec -n 4 hpc-train ...
        progs = [i for i, w in enumerate(words) if re.match(r"^(.*/)?hpc-[a-z]+$", w) and
                 os.path.basename(w) != "hpc-mpiexec"]
        for i in progs[:1]:
            prog = os.path.basename(words[i])
            opts = options_of(prog)
            if opts is None:
                bad.append("%s is not an installed program" % prog)
                continue
            for w in words[i + 1:]:
                o = w.split("=", 1)[0]
                if re.match(r"^--[a-z][a-z0-9-]*$", o) and o not in opts:
                    bad.append("%s has no option %s" % (prog, o))
    return bad


def check_scripts(block, tree):
    """A script of the source tree a command starts by its path (as
    tests/device-check.sh BUILD) must be there and executable: a user runs
    it as written, from the top of the tree."""
    bad = []
    for words in commands(block):
        w = words[0]
        if tree and re.match(r"^[a-z][\w-]*/[\w./-]+\.sh$", w) and os.path.isdir(os.path.join(tree, w.split("/")[0])):
            f = os.path.join(tree, w)
            if not os.path.isfile(f):
                bad.append("%s is not in the source tree" % w)
            elif not os.access(f, os.X_OK):
                bad.append("%s is not executable (chmod +x, and git add --chmod=+x)" % w)
    return bad


def check_help_examples(prog):
    """A program's --help ends with an Examples section (as h5dump's), whose
    commands name options the program has."""
    r = subprocess.run([prog, "--help"], capture_output=True, text=True, timeout=60)
    m = re.search(r"^Examples:\n((?:  .*\n)+)", r.stdout, re.M)
    if r.returncode != 0 or not m:
        return ["%s --help has no Examples section" % prog]
    cmds = [l.strip() for l in m.group(1).splitlines() if not l.strip().startswith("#")]
    bad = check_options(Block(prog + " --help", 0, "sh", "\n".join(cmds) + "\n", []))
    return ["%s --help, Examples: %s" % (prog, b) for b in bad] if cmds else ["%s --help: no example" % prog]


def run(block, d, folder, log):
    os.makedirs(folder, exist_ok=True)
    if d["file"]:
        with open(os.path.join(folder, d["file"]), "w") as f:
            f.write(block.text)
        return 0, "wrote %s" % d["file"]
    text = script(block)
    if block.lang in RUN_PY:
        argv = [os.environ.get("PYTHON", "python3"), "-c", text]
    else:
        argv = ["bash", "-e", "-o", "pipefail", "-c", text]
    t0 = time.time()
    with open(log, "w") as out:
        out.write("# %s, in %s\n%s\n# output:\n" % (block.where, folder, text))
        out.flush()
        try:
            r = subprocess.run(argv, cwd=folder, stdout=out, stderr=subprocess.STDOUT,
                               stdin=subprocess.DEVNULL, timeout=d["timeout"])
            rc = r.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout after %d s" % d["timeout"]
    return rc, "%.1f s" % (time.time() - t0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workdir")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--list", action="store_true", help="only list the blocks and what would happen")
    ap.add_argument("--only", action="append", default=[], help="run only FILE:LINE (the line of its opening fence)")
    ap.add_argument("--tree", help="the source tree, whose scripts the blocks start by path (tests/X.sh)")
    ap.add_argument("--help-examples", default="", help="programs whose --help Examples are checked too")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    ran, failed, skipped = 0, [], collections.Counter()
    for prog in a.help_examples.split():
        for problem in check_help_examples(prog):
            print("FAIL %s" % problem)
            failed.append(prog + " --help")
    for path in a.files:
        name = os.path.basename(path)
        if not a.list:
            for problem in lint_prose(path):
                print("FAIL %s" % problem)
                failed.append(problem.split(": ")[0])
        folder = os.path.join(os.path.abspath(a.workdir), re.sub(r"\W", "_", name))
        for b in parse(path):
            where = "%s:%d" % (name, b.line)
            try:
                d = directives(b)
                runs = b.lang in RUN_SH or b.lang in RUN_PY or b.lang == "console" or d["file"]
                if not b.lang and not d["file"] and any(LOOKS_RUN.match(l) for l in b.text.split("\n")):
                    raise ValueError("%s: an untagged block holds commands: tag it sh (runs) or text (output)"
                                     % where)
                if runs:
                    script(b)   # the "# make check:" comments parse
                bad = check_options(b) + check_scripts(b, a.tree) if not a.list else []
            except ValueError as e:
                print("FAIL %s" % e)
                failed.append(where)
                continue
            if bad:
                print("FAIL %s: %s" % (where, "; ".join(bad)))
                failed.append(where)
                continue
            if a.only and where not in a.only and "%s:%d" % (path, b.line) not in a.only:
                continue
            if not runs:
                continue
            if d["skip"]:
                print("skip %s (%s)" % (where, d["skip"]))
                skipped[d["skip"].split()[0].rstrip(":,")] += 1
                continue
            if a.list:
                print("run  %s (%s)" % (where, b.lang))
                continue
            log = os.path.join(os.path.abspath(a.workdir), "%s-%d.log" % (re.sub(r"\W", "_", name), b.line))
            rc, took = run(b, d, folder, log)
            if rc == d["exit"]:
                ran += 1
                print("ok   %s (%s, %s)" % (where, b.lang, took), flush=True)
            else:
                failed.append(where)
                print("FAIL %s: exit %s%s (%s); its output:" % (where, rc, ", want %d" % d["exit"] if d["exit"] else "",
                                                              took), flush=True)
                with open(log) as f:
                    sys.stdout.write("".join("    " + l for l in f.readlines()[-40:]))
    why = ", ".join("%s %d" % kv for kv in sorted(skipped.items()))
    print("docs_run: %d block(s) ran, %d skipped%s, %d failed%s" %
          (ran, sum(skipped.values()), " (%s)" % why if why else "", len(failed),
           ": " + " ".join(failed) if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
