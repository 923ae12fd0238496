#!/usr/bin/env bash
# CI's first stage: the README's test command, read from README.md and run verbatim, inside a
# pristine Debian 12 root (debootstrap --variant=minbase), so that nothing installed by hand on the
# CI machine can hide a missing install step. Then, in that same root, the run command's binaries
# headless: sinkscope-cli on needle-nano with a preset's tools, and sinkscope --screenshot offscreen
# and under xvfb-run with the xcb platform.
#
# Usage: .ci/fresh-root.sh [ROOT_DIR]   (default: build-fresh-root beside the checkout's build)
# The checkout is cloned into the root (its committed HEAD), ../shared copied beside it.
set -euo pipefail

checkout="$(cd "$(dirname "$0")/.." && pwd)"
shared="$(cd "$checkout/../shared" && pwd -P)"
root="${1:-$checkout/build-fresh-root}"
suite=bookworm

step() { printf '\n== fresh root (%d s): %s\n' "$SECONDS" "$*"; }

# The Debian archive this machine's apt already uses for $suite: the first matching entry of a
# one-line .list or a deb822 .sources file under /etc/apt.
debian_mirror() {
    local file
    for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$file" ] || continue
        awk -v suite="$suite" '$1 == "deb" {
                uri = ""; for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) { uri = $i; break }
                for (j = i + 1; j <= NF; j++) if ($j == suite) { print uri; exit }
            }' "$file"
    done
    for file in /etc/apt/sources.list.d/*.sources; do
        [ -f "$file" ] || continue
        awk -v suite="$suite" '
            function flush() { if (uri != "" && hasSuite && isDeb) { print uri; found = 1; exit } }
            /^[[:space:]]*$/ { flush(); uri = ""; hasSuite = 0; isDeb = 0; next }
            /^URIs:/ { uri = $2 }
            /^Types:/ { for (i = 2; i <= NF; i++) if ($i == "deb") isDeb = 1 }
            /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == suite) hasSuite = 1 }
            END { if (!found) flush() }' "$file"
    done
}

# The fenced block that follows the README's "run every test" sentence.
readme_test_command() {
    awk '/^Install everything, build, and run every test/ { want = 1; next }
         want && /^```/ { if (inside) exit; inside = 1; next }
         inside { print }' "$checkout/README.md"
}

cleanup() {
    local status=$?
    for mount in "$root/dev/pts" "$root/dev" "$root/proc"; do
        if mountpoint -q "$mount" 2>/dev/null; then umount -l "$mount" || true; fi
    done
    rm -rf --one-file-system "$root"
    exit "$status"
}

mirror="$(debian_mirror | head -n 1)"
if [ -z "$mirror" ]; then
    echo "fresh root: no Debian archive for '$suite' in /etc/apt" >&2
    exit 1
fi
test_command="$(readme_test_command)"
if [ -z "$test_command" ]; then
    echo "fresh root: README.md has no test command after 'Install everything, build, and run every test'" >&2
    exit 1
fi

step "debootstrap (host packages: debootstrap)"
if ! command -v debootstrap >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap
fi
rm -rf --one-file-system "$root"
trap cleanup EXIT
debootstrap --variant=minbase "$suite" "$root" "$mirror"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
cp /etc/resolv.conf "$root/etc/resolv.conf"

step "clone the checkout and copy ../shared beside it"
mkdir -p "$root/work"
git clone --quiet "$checkout" "$root/work/sinkscope"
cp -a "$shared" "$root/work/shared"

in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 /bin/bash -c "cd /work/sinkscope && $1"; }

step "the README's test command: $test_command"
in_root "$test_command"

step "sinkscope-cli run on needle-nano with the smart-home preset"
in_root "build/app/cli/sinkscope-cli run --model resources/models/needle-nano.gguf \
    --tools resources/presets/smart_home.json --prompt 'Turn on the kitchen lights' --json > /tmp/run.json \
    && grep -q '\"sink_tokens\"' /tmp/run.json && cat /tmp/run.json"

step "sinkscope --screenshot, offscreen"
in_root "QT_QPA_PLATFORM=offscreen build/app/gui/sinkscope --screenshot /tmp/offscreen.png \
    --prompt 'Turn on the kitchen lights' --n-predict 16 && test -s /tmp/offscreen.png"

step "sinkscope --screenshot under xvfb-run, xcb platform"
in_root "QT_QPA_PLATFORM=xcb xvfb-run -a build/app/gui/sinkscope --screenshot /tmp/xcb.png \
    --prompt 'Turn on the kitchen lights' --n-predict 16 && test -s /tmp/xcb.png"

step "passed"
