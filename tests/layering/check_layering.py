#!/usr/bin/env python3
"""The folders keep to the dependencies their CMake targets declare.

Every library folder's CMakeLists.txt names, in target_link_libraries, the Tessera
libraries it may use. A source file of that folder may include the headers of its own
folder and of those libraries only (direct dependencies: what a folder uses it names).
Nothing in common/ includes the daemons' or the commands' headers, and the commands'
folder links no LMDB. Prints every violation and exits 1 when there is one.

usage: check_layering.py SOURCE_DIR
"""
import os
import re
import sys

# Each library target and the folder whose sources it builds.
FOLDERS = {
    'tessera-util': 'common/util', 'tessera-text': 'common/text',
    'tessera-net': 'common/net', 'tessera-auth': 'common/auth',
    'tessera-conf': 'common/conf', 'tessera-rpc': 'common/rpc',
    'tessera-job': 'common/job', 'tessera-jobopt': 'common/jobopt',
    'tessera-format': 'common/format', 'tessera-sched': 'common/sched',
    'tessera-gres': 'common/gres',
    'tessera-ctld': 'ctld', 'tessera-noded-lib': 'noded', 'tessera-cmdutil': 'cmds',
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"((?:common/[a-z_]+|ctld|noded|cmds)/)[^"]+"', re.M)


def declared(src, folder, target):
    """The folders target may include from: its own and those of its linked libraries."""
    text = open(os.path.join(src, folder, 'CMakeLists.txt')).read()
    allowed = {folder}
    for m in re.finditer(r'target_link_libraries\(\s*' + re.escape(target) + r'\s+([^)]*)\)',
                         text):
        for lib in m.group(1).split():
            if lib in FOLDERS:
                allowed.add(FOLDERS[lib])
    return allowed, text


def check_folder(src, target, folder):
    allowed, cmake = declared(src, folder, target)
    problems = []
    if folder == 'cmds' and 'PkgConfig::LMDB' in cmake:
        problems.append('cmds/CMakeLists.txt: the commands must not link LMDB')
    for name in sorted(os.listdir(os.path.join(src, folder))):
        if not name.endswith(('.c', '.h')):
            continue
        path = os.path.join(folder, name)
        for m in INCLUDE.finditer(open(os.path.join(src, path)).read()):
            used = m.group(1).rstrip('/')
            if used not in allowed:
                problems.append(f'{path}: includes {used}/ but {target} does not link it')
    return problems


def main():
    src = sys.argv[1]
    problems = []
    for target, folder in FOLDERS.items():
        problems += check_folder(src, target, folder)
    for p in problems:
        print(p)
    print(f'{len(FOLDERS)} folders checked, {len(problems)} violations')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
