#!/bin/sh
# Fails, naming the files and lines, when a C++ source of the project differs from what the one
# .clang-format makes of it. clang-format-14 is Debian 12's (scripts/install-deps.sh installs it);
# other versions format some constructs differently. CTest runs this as test_format.
set -eu
cd "$(dirname "$0")/.."
if ! command -v clang-format-14 >/dev/null 2>&1; then
    echo "clang-format-14 is not installed: run scripts/install-deps.sh" >&2
    exit 1
fi
find engine ui app tests \( -name '*.cpp' -o -name '*.h' \) -print0 |
    xargs -0 clang-format-14 --dry-run -Werror
