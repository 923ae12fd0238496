#!/usr/bin/env bash
# Renders the icon, resources/icons/sinkscope.svg, to the PNGs the running window uses
# (resources/icons/sinkscope-SIZE.png, compiled in as Qt resources by ui/CMakeLists.txt and
# installed under share/icons/hicolor/). They are committed, so that neither the build nor the
# program needs an SVG renderer (Qt draws SVG only with the qt6-svg plugin). Run it after editing
# the SVG; it needs rsvg-convert (Debian: librsvg2-bin, in scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
for size in 16 32 48 64 128 256; do
    rsvg-convert --width "$size" --height "$size" --format png \
        --output "resources/icons/sinkscope-$size.png" resources/icons/sinkscope.svg
done
