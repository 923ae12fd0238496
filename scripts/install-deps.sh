#!/usr/bin/env bash
# Installs what Sinkscope needs on Debian 12 (see README "Dependencies"): the build, every test,
# the playground (also headless), the fuzzers and the documentation plots. `--train` adds what the
# needle-nano training recipe in scripts/train needs (PyTorch; large, and never needed to build,
# test or run the app).
set -euo pipefail

train=0
for arg in "$@"; do
    case "$arg" in
    --train) train=1 ;;
    *)
        echo "usage: $0 [--train]" >&2
        exit 2
        ;;
    esac
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

# Recommends stay off so that the list below is complete by itself: a package that is only
# recommended by another (libqt6opengl6-dev by qt6-base-dev, needed by Qt6Charts) is named here.
packages=(
    build-essential cmake ninja-build
    qt6-base-dev libqt6opengl6-dev qt6-charts-dev libgl-dev
    nlohmann-json3-dev
    libicu-dev
    fonts-dejavu-core xvfb xauth
    clang-14 libclang-rt-14-dev clang-format-14
    python3-matplotlib
    librsvg2-bin
)
if [ "$train" -eq 1 ]; then packages+=(python3-torch python3-numpy libopenblas0-pthread); fi

$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${packages[@]}"
