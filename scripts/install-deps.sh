#!/usr/bin/env bash
# Installs what Sinkscope needs to build, test and run on Debian 12 (see README "Dependencies").
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends \
    build-essential cmake ninja-build \
    qt6-base-dev qt6-charts-dev libgl-dev \
    nlohmann-json3-dev libicu-dev \
    fonts-dejavu-core xvfb xauth \
    clang-14 libclang-rt-14-dev # the libFuzzer targets in tests/fuzz (SINKSCOPE_FUZZ=ON)
